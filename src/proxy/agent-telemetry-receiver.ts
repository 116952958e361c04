/**
 * The loopback OTLP/HTTP receiver of `proxy --agent-telemetry`: listens on
 * 127.0.0.1 (a port the kernel picks), takes `POST /v1/traces`, `/v1/logs`
 * and `/v1/metrics` with JSON bodies (optionally gzip), validates them
 * (`wire/otlp-json.ts`) and hands each request to `onRequest`.
 *
 * Only the agent it was started for may post: the receiver makes a random
 * token ({@link AgentTelemetryReceiver.otlpHeaders}, given to the agent
 * through `OTEL_EXPORTER_OTLP_HEADERS`) and answers 401 to a request without
 * it, before reading its body, so another local process that finds the port
 * cannot put spans, logs or metrics into the user's trace.
 *
 * Answers 200 `{}` to a request it took; 401 without the token, 415 to
 * protobuf (the agents are configured for JSON), 413 past
 * {@link MAX_BODY_BYTES}, 400 to a body that is no export request, 404
 * elsewhere; each refusal is counted and its first cause kept.
 * Owns the server and its connections (`close()` ends them), and knows
 * when none is open and no request is being handled (`idle()`): after the
 * agent exited, that is when its last records are in.
 *
 * @module subagent-otel/proxy/agent-telemetry-receiver
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzip } from 'node:zlib';
import { parseOtlpJsonRequest, type OtlpJsonRequest, type OtlpSignal } from '../wire/otlp-json.js';
import { errorMessage } from '../wire/error-text.js';

/** The request header that carries the receiver's token. */
export const TOKEN_HEADER = 'x-subagent-otel-token';

/** Largest request body taken (after decompression). */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

const PATHS: Record<string, OtlpSignal> = { '/v1/traces': 'traces', '/v1/logs': 'logs', '/v1/metrics': 'metrics' };

/** A running receiver. */
export interface AgentTelemetryReceiver {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /**
   * The value for the agent's `OTEL_EXPORTER_OTLP_HEADERS`
   * (`x-subagent-otel-token=<64 hex digits>`): a secret of this receiver.
   */
  readonly otlpHeaders: string;
  /**
   * Requests taken, per signal, and refused (with the first refusal's
   * cause); `unauthorized` of the refused came without the token.
   */
  readonly stats: { taken: Record<OtlpSignal, number>; refused: number; unauthorized: number; firstRefusal?: string };
  /**
   * Resolves once no connection is open and no request is being read or
   * handled (at once when that is already so). A process that exited has
   * closed its connections, so after the agent's exit this resolves when
   * everything it sent was handed to `onRequest`. Never rejects.
   */
  idle(): Promise<void>;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) over = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(over ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function gunzipBounded(data: Buffer): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    gunzip(data, { maxOutputLength: MAX_BODY_BYTES }, (error, out) => {
      if (error !== null) {
        if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') resolve(undefined);
        else reject(error);
      } else resolve(out);
    });
  });
}

/**
 * Starts the receiver. `onRequest` is called once per request taken, after
 * the answer was sent; it must not throw (a throw is caught and counted as
 * a refusal of the next kind).
 */
export async function startAgentTelemetryReceiver(
  onRequest: (request: OtlpJsonRequest) => void,
): Promise<AgentTelemetryReceiver> {
  const stats: AgentTelemetryReceiver['stats'] = {
    taken: { traces: 0, logs: 0, metrics: 0 },
    refused: 0,
    unauthorized: 0,
  };
  const token = randomBytes(32).toString('hex');
  const expected = Buffer.from(token, 'utf8');
  const authorized = (req: IncomingMessage): boolean => {
    const given = Buffer.from(String(req.headers[TOKEN_HEADER] ?? ''), 'utf8');
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  const refuse = (res: import('node:http').ServerResponse, status: number, cause: string): void => {
    stats.refused += 1;
    stats.firstRefusal ??= cause;
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ code: status, message: cause }));
  };
  let open = 0;
  let handling = 0;
  let waiting: Array<() => void> = [];
  const settle = (): void => {
    if (open > 0 || handling > 0) return;
    const resolve = waiting;
    waiting = [];
    for (const done of resolve) done();
  };
  const server: Server = createServer((req, res) => {
    handling += 1;
    // Counted from the request's headers to the end of its handling, whatever the answer.
    res.once('close', () => {
      handling -= 1;
      settle();
    });
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (!authorized(req)) {
      stats.unauthorized += 1;
      refuse(
        res,
        401,
        `${req.method ?? '?'} ${path}: no valid ${TOKEN_HEADER} header (only the agent this proxy started may send)`,
      );
      req.resume();
      return;
    }
    const signal = PATHS[path];
    if (req.method !== 'POST' || signal === undefined) {
      refuse(
        res,
        404,
        `${req.method ?? '?'} ${path}: not an OTLP/HTTP export path (POST /v1/traces, /v1/logs, /v1/metrics)`,
      );
      req.resume();
      return;
    }
    const type = String(req.headers['content-type'] ?? '');
    if (!type.includes('json')) {
      refuse(
        res,
        415,
        `${path}: content-type ${type || '(none)'} refused; the agent must send OTLP/HTTP JSON (http/json)`,
      );
      req.resume();
      return;
    }
    readBody(req)
      .then(async (raw) => {
        const body =
          raw !== undefined && /gzip/i.test(String(req.headers['content-encoding'] ?? ''))
            ? await gunzipBounded(raw)
            : raw;
        if (body === undefined) {
          refuse(res, 413, `${path}: body over ${MAX_BODY_BYTES} bytes`);
          return;
        }
        let json: unknown;
        try {
          json = JSON.parse(body.toString('utf8'));
        } catch {
          refuse(res, 400, `${path}: body is not JSON`);
          return;
        }
        const parsed = parseOtlpJsonRequest(signal, json);
        if (!parsed.ok) {
          refuse(res, 400, `${path}: ${parsed.error}`);
          return;
        }
        stats.taken[signal] += 1;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        try {
          onRequest(parsed.value);
        } catch (error) {
          stats.refused += 1;
          stats.firstRefusal ??= `${path}: handling failed: ${errorMessage(error)}`;
        }
      })
      .catch((error: unknown) => refuse(res, 400, `${path}: ${errorMessage(error)}`));
  });
  server.on('connection', (socket) => {
    open += 1;
    socket.once('close', () => {
      open -= 1;
      settle();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  // Never keeps the proxy alive by itself.
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    otlpHeaders: `${TOKEN_HEADER}=${token}`,
    stats,
    idle: () =>
      new Promise<void>((resolve) => {
        waiting.push(resolve);
        settle();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
