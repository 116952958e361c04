/**
 * The observer's own Prometheus scrape endpoint: a cumulative `MetricReader`
 * for the shared `MeterProvider`, served by a small `node:http` server this
 * module owns, so the listen address is chosen here (loopback by default) and
 * the bound port is known. The text format is written by the
 * `PrometheusSerializer` of `@opentelemetry/exporter-prometheus`, loaded on
 * the first scrape: that CommonJS package (with its own copies of the SDK and
 * the full semantic conventions) is more code than the rest of the telemetry,
 * and a proxy that is never scraped never loads it (decision 0033). `node:http`
 * itself is imported when an endpoint is started, so telemetry without one
 * never loads Node's HTTP modules (decision 0039).
 *
 * Naming is the exporter's: dots and hyphens become underscores, counters get
 * `_total`, units are not appended (`subagent.runs` with
 * `subagent.stop_reason` is `subagent_runs_total{subagent_stop_reason="..."}`).
 * Scope labels (`otel_scope_*`) are switched off to keep series short;
 * `target_info` (the resource: service name and SDK) is kept.
 *
 * @module subagent-otel/telemetry/prometheus-endpoint
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { AggregationTemporality, AggregationType, MetricReader, type IMetricReader } from '@opentelemetry/sdk-metrics';
import { SETTINGS } from './config.js';
import { describeError } from './report-once.js';

/** Port when the endpoint is enabled without one (Prometheus's registered exporter port). */
export const DEFAULT_PROMETHEUS_PORT = 9464;
/** Listen host by default: loopback only. */
export const DEFAULT_PROMETHEUS_HOST = SETTINGS.prometheusHost.default;
/** Scrape path. */
export const PROMETHEUS_PATH = '/metrics';
/** Environment variable enabling the endpoint on a port (CLI: `--prometheus-port`). */
export const ENV_PROMETHEUS_PORT = SETTINGS.prometheusPort.env;

/** Where the endpoint listens. */
export interface PrometheusEndpointOptions {
  /** TCP port; `0` lets the system choose (see `ready`). */
  readonly port: number;
  /** Listen host. Default `127.0.0.1`. */
  readonly host?: string;
  /** Scrape path. Default `/metrics`. */
  readonly path?: string;
}

/** A running (or starting) scrape endpoint. */
export interface PrometheusEndpoint {
  /** Register it with the `MeterProvider` (`readers: [endpoint.reader]`). */
  readonly reader: IMetricReader;
  /** The configured URL (with the configured port, `0` until bound). */
  readonly url: string;
  /**
   * Resolves with the bound URL once listening, or with `undefined` when the
   * server could not listen (the reason goes to `onError`). Never rejects.
   */
  readonly ready: Promise<string | undefined>;
  /** Stops listening and drops open connections. Idempotent; never rejects. */
  close(): Promise<void>;
}

/**
 * The reader a scrape collects from: default aggregation, always cumulative
 * (what Prometheus expects), as `PrometheusExporter` configures its own.
 * Nothing to flush or shut down: it is pulled.
 */
class ScrapeReader extends MetricReader {
  constructor() {
    super({
      aggregationSelector: () => ({ type: AggregationType.DEFAULT }),
      aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE,
    });
  }

  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }

  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

let serializer: Promise<PrometheusSerializer> | undefined;
/** The exporter package's serializer (no prefix, no timestamps, target info kept, scope labels off), loaded once. */
function prometheusSerializer(): Promise<PrometheusSerializer> {
  serializer ??= import('@opentelemetry/exporter-prometheus').then((m) => {
    return new m.PrometheusSerializer('', false, undefined, false, true);
  });
  return serializer;
}

function urlOf(host: string, port: number, path: string): string {
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return `http://${shownHost}:${port}${path}`;
}

/**
 * Starts the endpoint. `GET <path>` answers the current metrics in the
 * Prometheus text format; any other path is 404.
 *
 * @param onError told (once per failure) when listening or serving fails;
 *   never thrown.
 * @returns the endpoint at once; listening completes in the background. The
 *   server does not keep the process alive by itself.
 */
export function startPrometheusEndpoint(
  options: PrometheusEndpointOptions,
  onError: (message: string) => void = () => undefined,
): PrometheusEndpoint {
  const host = options.host ?? DEFAULT_PROMETHEUS_HOST;
  const path = options.path ?? PROMETHEUS_PATH;
  const reader = new ScrapeReader();
  const failed = (response: ServerResponse, error: unknown): void => {
    onError(`Prometheus endpoint failed to answer a scrape: ${describeError(error)}`);
    if (!response.headersSent) response.statusCode = 500;
    response.end();
  };
  const answer = (request: IncomingMessage, response: ServerResponse): void => {
    try {
      const requested = new URL(request.url ?? '/', 'http://localhost').pathname;
      if (request.method === 'GET' && requested === path) {
        Promise.all([reader.collect(), prometheusSerializer()]).then(
          ([collected, text]) => {
            if (collected.errors.length > 0)
              onError(
                `Prometheus endpoint: metrics collection failed: ${collected.errors.map(describeError).join('; ')}`,
              );
            response.statusCode = 200;
            response.setHeader('content-type', 'text/plain');
            response.end(text.serialize(collected.resourceMetrics));
          },
          (error: unknown) => failed(response, error),
        );
        return;
      }
      response.statusCode = 404;
      response.end('not found\n');
    } catch (error) {
      failed(response, error);
    }
  };
  let isClosed = false;
  // node:http is loaded here, not with the module: a pipeline without the endpoint (the proxy's usual case) never loads it.
  const server: Promise<Server | undefined> = import('node:http').then(
    ({ createServer }) => {
      if (isClosed) return undefined;
      const created = createServer(answer);
      created.unref();
      return created;
    },
    (error: unknown) => {
      onError(`Prometheus endpoint could not start: ${describeError(error)}`);
      return undefined;
    },
  );

  const ready = server.then(
    (listening) =>
      new Promise<string | undefined>((resolve) => {
        if (listening === undefined) {
          resolve(undefined);
          return;
        }
        listening.once('error', (error) => {
          onError(
            `Prometheus endpoint could not listen on ${urlOf(host, options.port, path)}: ${describeError(error)}`,
          );
          resolve(undefined);
        });
        listening.listen(options.port, host, () => {
          const address = listening.address() as AddressInfo;
          resolve(urlOf(host, address.port, path));
        });
      }),
  );

  let closing: Promise<void> | undefined;
  return {
    reader,
    url: urlOf(host, options.port, path),
    ready,
    close() {
      isClosed = true;
      closing ??= ready
        .then(() => server)
        .then(
          (listening) =>
            new Promise<void>((resolve) => {
              if (listening?.listening !== true) {
                resolve();
                return;
              }
              listening.close(() => resolve());
              listening.closeAllConnections();
            }),
        );
      return closing;
    },
  };
}
