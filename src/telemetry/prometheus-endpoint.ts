/**
 * The observer's own Prometheus scrape endpoint: a `MetricReader` (from
 * `@opentelemetry/exporter-prometheus`) for the shared `MeterProvider`, served
 * by a small `node:http` server this module owns, so the listen address is
 * chosen here (loopback by default) and the bound port is known.
 *
 * Naming is the exporter's: dots and hyphens become underscores, counters get
 * `_total`, units are not appended (`subagent.runs` with
 * `subagent.stop_reason` is `subagent_runs_total{subagent_stop_reason="..."}`).
 * Scope labels (`otel_scope_*`) are switched off to keep series short;
 * `target_info` (the resource: service name and SDK) is kept.
 *
 * @module subagent-otel/telemetry/prometheus-endpoint
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import type { IMetricReader } from '@opentelemetry/sdk-metrics';
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
  const exporter = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true });
  const server: Server = createServer((request, response) => {
    try {
      const requested = new URL(request.url ?? '/', 'http://localhost').pathname;
      if (request.method === 'GET' && requested === path) {
        exporter.getMetricsRequestHandler(request, response);
        return;
      }
      response.statusCode = 404;
      response.end('not found\n');
    } catch (error) {
      onError(`Prometheus endpoint failed to answer a scrape: ${describeError(error)}`);
      response.statusCode = 500;
      response.end();
    }
  });
  server.unref();

  const ready = new Promise<string | undefined>((resolve) => {
    server.once('error', (error) => {
      onError(`Prometheus endpoint could not listen on ${urlOf(host, options.port, path)}: ${describeError(error)}`);
      resolve(undefined);
    });
    server.listen(options.port, host, () => {
      const address = server.address() as AddressInfo;
      resolve(urlOf(host, address.port, path));
    });
  });

  let closing: Promise<void> | undefined;
  return {
    reader: exporter,
    url: urlOf(host, options.port, path),
    ready,
    close() {
      closing ??= new Promise<void>((resolve) => {
        if (!server.listening) {
          resolve();
          return;
        }
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
