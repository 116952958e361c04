/**
 * A real OTLP/HTTP receiver (JSON and protobuf bodies) on 127.0.0.1 for end-to-end tests, built on
 * `node:http` (or `node:https`, with a certificate): it accepts `POST /v1/traces` and `POST /v1/metrics`, keeps
 * every request (headers and raw body, whatever it answered), decodes the
 * bodies it accepted, and can play the collector faults a production
 * observer meets. The mode can change while the receiver runs:
 *
 * - `healthy`: answers 200 `{}` at once;
 * - `refuse`: the port is closed (connection refused); going back to any
 *   other mode listens again on the same port;
 * - `error-500`: answers 500;
 * - `status`: answers the given HTTP status (e.g. 400, a refusal for good);
 * - `throttle-429`: answers 429 with `Retry-After: <retryAfterSeconds>`;
 * - `hang`: reads the request and never answers (the connection stays open
 *   until the exporter gives up or the receiver closes);
 * - `slow`: answers 200 after `delayMs`;
 * - `reset`: destroys the connection once the body arrived (a collector that
 *   crashes mid-request);
 * - `dead-then-recovering`: `reset` for the first `deadRequests` requests,
 *   then `healthy`.
 *
 * Tests wait on requests with `waitFor`, never on time. Owns no assertion.
 *
 * @module subagent-otel/test/helpers/otlp-receiver
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';
import type { OtlpSpan } from './cli.js';
import { decodeMetricsRequest, decodeTraceRequest } from './otlp-protobuf.js';
import type { TlsIdentity } from './tls.js';

/** How the receiver answers. */
export type ReceiverMode =
  | { readonly kind: 'healthy' }
  | { readonly kind: 'refuse' }
  | { readonly kind: 'error-500' }
  | { readonly kind: 'status'; readonly status: number }
  | { readonly kind: 'throttle-429'; readonly retryAfterSeconds: number }
  | { readonly kind: 'hang' }
  | { readonly kind: 'slow'; readonly delayMs: number }
  | { readonly kind: 'reset' }
  | { readonly kind: 'dead-then-recovering'; readonly deadRequests: number };

/** One request as it arrived, with what the receiver did about it. */
export interface ReceivedRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** HTTP status answered; `'none'` for a hung or reset request. */
  readonly answered: number | 'none';
}

/** One OTLP metric data point, flattened with its metric name. */
export interface OtlpMetricPoint {
  readonly name: string;
  readonly attributes: Record<string, unknown>;
  /** `asInt`/`asDouble` of a sum or gauge point, `count` of a histogram point. */
  readonly value: number;
}

interface Waiter {
  readonly match: (request: ReceivedRequest, all: readonly ReceivedRequest[]) => boolean;
  readonly resolve: (request: ReceivedRequest) => void;
}

/** A running receiver. */
export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>` (`https://` with TLS): the value for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly endpoint: string;
  readonly port: number;
  /** Every request received so far, in arrival order (refused connections never arrive). */
  readonly requests: readonly ReceivedRequest[];
  /** Changes how later requests are answered; `refuse` stops listening, anything else listens again. */
  setMode(mode: ReceiverMode): Promise<void>;
  /** Resolves with the first request (already received or future) for which `match` is true. */
  waitFor(match: (request: ReceivedRequest, all: readonly ReceivedRequest[]) => boolean): Promise<ReceivedRequest>;
  /** Spans of every `/v1/traces` request answered 2xx. */
  acceptedSpans(): OtlpSpan[];
  /** Data points of every `/v1/metrics` request answered 2xx. */
  acceptedMetricPoints(): OtlpMetricPoint[];
  /** Stops listening and destroys open connections (hung requests included). Idempotent. */
  close(): Promise<void>;
}

function attributeMap(
  list: ReadonlyArray<{ key: string; value: Record<string, unknown> }> | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) {
    const v = value as { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
    out[key] = v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));
  }
  return out;
}

/** Whether a request carries protobuf (`http/protobuf`), by its content type. */
function isProtobuf(headers: IncomingHttpHeaders): boolean {
  return (headers['content-type'] ?? '').includes('protobuf');
}

/** The request body as sent, gunzipped when the exporter compressed it. */
function plainBody(request: Pick<ReceivedRequest, 'headers' | 'body'>): Buffer {
  return request.headers['content-encoding'] === 'gzip' ? gunzipSync(request.body) : request.body;
}

/** Decodes a `/v1/traces` request, JSON or protobuf, into its spans. */
export function spansOfTraceRequest(request: Pick<ReceivedRequest, 'headers' | 'body'>): OtlpSpan[] {
  const body = plainBody(request);
  return isProtobuf(request.headers)
    ? spansOfTraceBody(JSON.stringify(decodeTraceRequest(body)))
    : spansOfTraceBody(body);
}

/** Decodes a `/v1/metrics` request, JSON or protobuf, into flat data points. */
export function pointsOfMetricRequest(request: Pick<ReceivedRequest, 'headers' | 'body'>): OtlpMetricPoint[] {
  const body = plainBody(request);
  return isProtobuf(request.headers)
    ? pointsOfMetricBody(JSON.stringify(decodeMetricsRequest(body)))
    : pointsOfMetricBody(body);
}

/** Decodes an OTLP JSON `ExportTraceServiceRequest` body into its spans. */
export function spansOfTraceBody(body: Buffer | string): OtlpSpan[] {
  const parsed = JSON.parse(body.toString()) as {
    resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: OtlpSpan[] }> }>;
  };
  return (parsed.resourceSpans ?? []).flatMap((rs) => (rs.scopeSpans ?? []).flatMap((ss) => ss.spans ?? []));
}

type MetricJson = {
  name: string;
  sum?: { dataPoints?: PointJson[] };
  gauge?: { dataPoints?: PointJson[] };
  histogram?: { dataPoints?: PointJson[] };
};
type PointJson = {
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
  asInt?: number | string;
  asDouble?: number;
  count?: number | string;
};

/** Decodes an OTLP JSON `ExportMetricsServiceRequest` body into flat data points. */
export function pointsOfMetricBody(body: Buffer | string): OtlpMetricPoint[] {
  const parsed = JSON.parse(body.toString()) as {
    resourceMetrics?: Array<{ scopeMetrics?: Array<{ metrics?: MetricJson[] }> }>;
  };
  const points: OtlpMetricPoint[] = [];
  for (const rm of parsed.resourceMetrics ?? []) {
    for (const sm of rm.scopeMetrics ?? []) {
      for (const metric of sm.metrics ?? []) {
        const dataPoints = metric.sum?.dataPoints ?? metric.gauge?.dataPoints ?? metric.histogram?.dataPoints ?? [];
        for (const point of dataPoints) {
          const value = point.asInt !== undefined ? Number(point.asInt) : (point.asDouble ?? Number(point.count ?? 0));
          points.push({ name: metric.name, attributes: attributeMap(point.attributes), value });
        }
      }
    }
  }
  return points;
}

/** Options of {@link startOtlpReceiver}. */
export interface OtlpReceiverOptions {
  /** Serve HTTPS with this certificate and key instead of plain HTTP. */
  readonly tls?: Pick<TlsIdentity, 'certPem' | 'keyPem'>;
}

/**
 * Starts a receiver on 127.0.0.1 (an ephemeral port) in `mode` (default
 * `healthy`), plain HTTP unless `options.tls` is given. With `refuse` the
 * port is reserved, then closed.
 */
export async function startOtlpReceiver(
  mode: ReceiverMode = { kind: 'healthy' },
  options: OtlpReceiverOptions = {},
): Promise<OtlpReceiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: Waiter[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let current: ReceiverMode = mode;
  let server: Server | HttpsServer | undefined;
  let port = 0;
  let isClosed = false;

  const record = (request: ReceivedRequest): void => {
    requests.push(request);
    for (const waiter of [...waiters]) {
      if (waiter.match(request, requests)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(request);
      }
    }
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      const base = { path: req.url ?? '', headers: req.headers, body };
      let mode = current;
      if (mode.kind === 'dead-then-recovering') {
        const seen = requests.length;
        mode = seen < mode.deadRequests ? { kind: 'reset' } : { kind: 'healthy' };
      }
      const answer = (status: number, headers: Record<string, string> = {}): void => {
        record({ ...base, answered: status });
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(status < 300 ? '{}' : '{"code":14,"message":"unavailable"}');
      };
      switch (mode.kind) {
        case 'healthy':
        case 'refuse': // a request that slipped in while switching: accept it
          answer(200);
          return;
        case 'error-500':
          answer(500);
          return;
        case 'status':
          answer(mode.status);
          return;
        case 'throttle-429':
          answer(429, { 'retry-after': String(mode.retryAfterSeconds) });
          return;
        case 'hang':
          record({ ...base, answered: 'none' });
          return;
        case 'slow': {
          const timer = setTimeout(() => {
            timers.delete(timer);
            answer(200);
          }, mode.delayMs);
          timers.add(timer);
          return;
        }
        case 'reset':
          record({ ...base, answered: 'none' });
          req.socket.destroy();
          return;
      }
    });
  };

  const listen = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const created =
        options.tls === undefined
          ? createServer(handle)
          : createHttpsServer({ cert: options.tls.certPem, key: options.tls.keyPem }, handle);
      created.keepAliveTimeout = 1000;
      created.on('connection', (socket: Socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      created.once('error', reject);
      created.listen(port, '127.0.0.1', () => {
        port = (created.address() as AddressInfo).port;
        server = created;
        resolve();
      });
    });

  const stopListening = async (): Promise<void> => {
    const running = server;
    server = undefined;
    if (running === undefined) return;
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => running.close(() => resolve()));
  };

  await listen();
  if (current.kind === 'refuse') await stopListening();

  const accepted = (path: string): ReceivedRequest[] =>
    requests.filter((r) => r.path === path && typeof r.answered === 'number' && r.answered < 300);

  return {
    get endpoint() {
      return `${options.tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    requests,
    async setMode(next) {
      current = next;
      if (isClosed) return;
      if (next.kind === 'refuse') await stopListening();
      else if (server === undefined) await listen();
    },
    waitFor(match) {
      const found = requests.find((r) => match(r, requests));
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    acceptedSpans: () => accepted('/v1/traces').flatMap((r) => spansOfTraceRequest(r)),
    acceptedMetricPoints: () => accepted('/v1/metrics').flatMap((r) => pointsOfMetricRequest(r)),
    async close() {
      isClosed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await stopListening();
    },
  };
}
