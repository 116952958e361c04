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
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
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
  const token = randomBytes(32).toString('hex');
  const context: ReceiverContext = {
    stats: { taken: { traces: 0, logs: 0, metrics: 0 }, refused: 0, unauthorized: 0 },
    expected: Buffer.from(token, 'utf8'),
    activity: new Activity(),
    onRequest,
  };
  const { stats, activity } = context;
  const server: Server = createServer((req, res) => handleRequest(context, req, res));
  server.on('connection', (socket) => {
    activity.connectionOpened();
    socket.once('close', () => activity.connectionClosed());
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
    idle: () => activity.idle(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What a receiver's request handler shares with the receiver. */
interface ReceiverContext {
  /** The receiver's counts, updated in place. */
  readonly stats: AgentTelemetryReceiver['stats'];
  /** The token a request must carry in {@link TOKEN_HEADER}, as UTF-8 bytes. */
  readonly expected: Buffer;
  readonly activity: Activity;
  readonly onRequest: (request: OtlpJsonRequest) => void;
}

/**
 * Counts a receiver's open connections and requests being handled, and
 * resolves the {@link idle} waits whenever both are none.
 */
class Activity {
  #open = 0;
  #handling = 0;
  #waiting: Array<() => void> = [];

  connectionOpened(): void {
    this.#open += 1;
  }

  connectionClosed(): void {
    this.#open -= 1;
    this.#settle();
  }

  requestStarted(): void {
    this.#handling += 1;
  }

  requestEnded(): void {
    this.#handling -= 1;
    this.#settle();
  }

  /** Resolves once no connection is open and no request is handled (at once when so). Never rejects. */
  idle(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#waiting.push(resolve);
      this.#settle();
    });
  }

  #settle(): void {
    if (this.#open > 0 || this.#handling > 0) return;
    const resolve = this.#waiting;
    this.#waiting = [];
    for (const done of resolve) done();
  }
}

/** Whether `req` carries the receiver's token (compared in constant time). */
function isAuthorized(req: IncomingMessage, expected: Buffer): boolean {
  const given = Buffer.from(String(req.headers[TOKEN_HEADER] ?? ''), 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Answers `status` with `cause` as JSON, and counts the refusal (keeping the first cause). */
function refuse(stats: AgentTelemetryReceiver['stats'], res: ServerResponse, status: number, cause: string): void {
  stats.refused += 1;
  stats.firstRefusal ??= cause;
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ code: status, message: cause }));
}

/**
 * Handles one request, counted as handled until its response closes:
 * refuses it (401 without the token, 404 off the export paths, 415 unless
 * JSON) before reading its body, else takes its body ({@link takeBody}).
 */
function handleRequest(context: ReceiverContext, req: IncomingMessage, res: ServerResponse): void {
  const { stats, activity } = context;
  activity.requestStarted();
  // Counted from the request's headers to the end of its handling, whatever the answer.
  res.once('close', () => activity.requestEnded());
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  if (!isAuthorized(req, context.expected)) {
    stats.unauthorized += 1;
    refuse(
      stats,
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
      stats,
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
      stats,
      res,
      415,
      `${path}: content-type ${type || '(none)'} refused; the agent must send OTLP/HTTP JSON (http/json)`,
    );
    req.resume();
    return;
  }
  takeBody(context, req, res, path, signal).catch((error: unknown) =>
    refuse(stats, res, 400, `${path}: ${errorMessage(error)}`),
  );
}

/**
 * Reads a request's body (gunzipped when so encoded) and, when it is an
 * export request of `signal` within {@link MAX_BODY_BYTES}, answers 200 and
 * hands it to `onRequest` (a throw counted as a refusal); else answers 413
 * or 400. Rejects when the body cannot be read or gunzipped.
 */
async function takeBody(
  context: ReceiverContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  signal: OtlpSignal,
): Promise<void> {
  const { stats } = context;
  const raw = await readBody(req);
  const body =
    raw !== undefined && /gzip/i.test(String(req.headers['content-encoding'] ?? '')) ? await gunzipBounded(raw) : raw;
  if (body === undefined) {
    refuse(stats, res, 413, `${path}: body over ${MAX_BODY_BYTES} bytes`);
    return;
  }
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    refuse(stats, res, 400, `${path}: body is not JSON`);
    return;
  }
  const parsed = parseOtlpJsonRequest(signal, json);
  if (!parsed.ok) {
    refuse(stats, res, 400, `${path}: ${parsed.error}`);
    return;
  }
  stats.taken[signal] += 1;
  res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  try {
    context.onRequest(parsed.value);
  } catch (error) {
    stats.refused += 1;
    stats.firstRefusal ??= `${path}: handling failed: ${errorMessage(error)}`;
  }
}
