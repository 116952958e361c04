/**
 * The `view` HTTP server: the page (one HTML document, its bundled script
 * and style sheet) and a read-only JSON API over a {@link RunIndex}
 * (`/api/summary`, `/api/runs`, `/api/charts`, `/api/run`). GET and HEAD
 * only; nothing is ever written. Every response carries a content security
 * policy that allows only this origin's own script and style (no inline
 * script, no other origin), so even a string that reached the DOM as HTML
 * could not run; the page puts transcript strings in as text anyway. On a
 * loopback address, requests naming another host are refused (a web page
 * elsewhere cannot reach the API through DNS rebinding). Responses over
 * 1 KiB are gzip-compressed when the client accepts it.
 *
 * @module subagent-otel/view/server
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { SORT_KEYS, type RunQuery, type SortKey, type Summary } from './api-types.js';
import type { RunIndex } from './run-index.js';
import { errorMessage } from '../wire/error-text.js';

/** The page's static files, read before the server starts. */
export interface PageAssets {
  readonly script: Buffer;
  readonly style: Buffer;
}

/** What the server shows while and after loading. */
export interface ViewState {
  /** Mutable: loading updates it. */
  summary: Omit<Summary, 'runs' | 'agents' | 'stops' | 'first' | 'last'>;
  readonly index: RunIndex;
}

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The HTML document: a shell the script fills; no data in it. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>subagent-otel view</title>
<link rel="stylesheet" href="/assets/page.css">
<script src="/assets/page.js" defer></script>
</head>
<body><noscript>This page needs JavaScript.</noscript><main id="app"></main></body>
</html>
`;

function isLoopback(host: string): boolean {
  return host === '127.0.0.1' || host === '::1' || host === 'localhost' || host.startsWith('127.');
}

/** The host part of a Host header (`[::1]:8080` -> `::1`). */
function hostName(header: string | undefined): string {
  if (header === undefined) return '';
  if (header.startsWith('[')) return header.slice(1, header.indexOf(']'));
  const colon = header.lastIndexOf(':');
  return colon === -1 ? header : header.slice(0, colon);
}

function numberParam(params: URLSearchParams, name: string): number | undefined {
  const raw = params.get(name);
  if (raw === null || raw.trim() === '') return undefined;
  const value = Number(raw);
  return Number.isFinite(value) ? value : undefined;
}

/** The filters, sorting and paging of a request's query string; unknown or malformed values are ignored. */
export function queryOf(params: URLSearchParams): RunQuery {
  const text = (name: string): string | undefined => {
    const v = params.get(name);
    return v === null || v === '' ? undefined : v.slice(0, 1000);
  };
  const sort = text('sort');
  const dir = text('dir');
  const mismatch = text('mismatch');
  const q = text('q');
  const agent = text('agent');
  const stop = text('stop');
  const from = numberParam(params, 'from');
  const to = numberParam(params, 'to');
  const offset = numberParam(params, 'offset');
  const limit = numberParam(params, 'limit');
  return {
    ...(q !== undefined ? { q } : {}),
    ...(agent !== undefined ? { agent } : {}),
    ...(stop !== undefined ? { stop } : {}),
    ...(from !== undefined ? { from } : {}),
    ...(to !== undefined ? { to } : {}),
    ...(mismatch === 'true' || mismatch === 'false' ? { mismatch: mismatch === 'true' } : {}),
    ...(sort !== undefined && (SORT_KEYS as readonly string[]).includes(sort) ? { sort: sort as SortKey } : {}),
    ...(dir === 'asc' || dir === 'desc' ? { dir } : {}),
    ...(offset !== undefined ? { offset: Math.floor(offset) } : {}),
    ...(limit !== undefined ? { limit: Math.floor(limit) } : {}),
  };
}

function send(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  type: string,
  body: Buffer | string,
  cache = 'no-store',
): void {
  let bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const headers: Record<string, string | number> = {
    'content-type': type,
    'cache-control': cache,
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-resource-policy': 'same-origin',
    'x-frame-options': 'DENY',
  };
  if (bytes.length > 1024 && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
    bytes = gzipSync(bytes);
    headers['content-encoding'] = 'gzip';
    headers.vary = 'accept-encoding';
  }
  headers['content-length'] = bytes.length;
  res.writeHead(status, headers);
  res.end(req.method === 'HEAD' ? undefined : bytes);
}

function json(req: IncomingMessage, res: ServerResponse, status: number, value: unknown): void {
  send(req, res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

/**
 * Builds the request handler over `state` (exported for tests that call it
 * without a socket). Never throws: a failing route answers 500 with the
 * message.
 */
export function viewHandler(
  state: ViewState,
  assets: PageAssets,
  loopbackOnly: boolean,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void (async () => {
      if (loopbackOnly && !isLoopback(hostName(req.headers.host))) {
        send(
          req,
          res,
          421,
          'text/plain; charset=utf-8',
          'this server answers requests to 127.0.0.1 or localhost only\n',
        );
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('allow', 'GET, HEAD');
        send(req, res, 405, 'text/plain; charset=utf-8', 'read-only: GET and HEAD only\n');
        return;
      }
      const url = new URL(req.url ?? '/', 'http://view.invalid');
      const ready = state.summary.state === 'ready';
      switch (url.pathname) {
        case '/':
          send(req, res, 200, 'text/html; charset=utf-8', PAGE_HTML);
          return;
        case '/assets/page.js':
          send(req, res, 200, 'text/javascript; charset=utf-8', assets.script, 'max-age=60');
          return;
        case '/assets/page.css':
          send(req, res, 200, 'text/css; charset=utf-8', assets.style, 'max-age=60');
          return;
        case '/api/summary':
          json(req, res, 200, {
            ...state.summary,
            ...(ready ? state.index.summary() : { runs: 0, agents: [], stops: [] }),
          } satisfies Summary);
          return;
        case '/api/runs':
          if (!ready) json(req, res, 503, { error: 'still loading' });
          else json(req, res, 200, state.index.runs(queryOf(url.searchParams)));
          return;
        case '/api/charts':
          if (!ready) json(req, res, 503, { error: 'still loading' });
          else json(req, res, 200, state.index.charts(queryOf(url.searchParams)));
          return;
        case '/api/run': {
          const detail = ready ? await state.index.detail(url.searchParams.get('id') ?? '') : undefined;
          if (detail === undefined) json(req, res, 404, { error: ready ? 'no such run' : 'still loading' });
          else json(req, res, 200, detail);
          return;
        }
        default:
          send(req, res, 404, 'text/plain; charset=utf-8', 'not found\n');
      }
    })().catch((error: unknown) => {
      if (!res.headersSent) json(req, res, 500, { error: errorMessage(error) });
      else res.destroy();
    });
  };
}

/** Thrown when the address cannot be listened on; the message says which and why. */
export class ListenError extends Error {
  override readonly name = 'ListenError';
}

/**
 * Listens on `host:port` (`port` 0: a free one).
 * @returns the server and the URL to print.
 * @throws ListenError for a port in use (naming it and `--port`), a host
 *   that is no local address, or a port that needs privileges.
 */
export async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  host: string,
  port: number,
): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE')
        reject(
          new ListenError(
            `port ${port} on ${host} is in use: give another with --port <port>, or leave --port out for a free one`,
          ),
        );
      else if (error.code === 'EACCES')
        reject(new ListenError(`port ${port} on ${host} needs privileges: give a port above 1023 with --port`));
      else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND')
        reject(
          new ListenError(
            `${host} is not an address of this machine: give --host 127.0.0.1 (the default) or one of its addresses`,
          ),
        );
      else reject(new ListenError(`cannot listen on ${host}:${port}: ${error.message}`));
    });
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actual = typeof address === 'object' && address !== null ? address.port : port;
  const shown = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  return { server, url: `http://${shown}:${actual}/` };
}

export { isLoopback };
