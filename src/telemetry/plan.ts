/**
 * The plan of `createTelemetry`: the project's own decisions read from the
 * options and the environment before anything is built (which exporters
 * each signal has, its OTLP destination and protocol, the file directory,
 * the Prometheus endpoint, the metric export interval, the temporality, the
 * content policy, the outbox). Builds nothing; says a bad value once
 * through the reporter.
 *
 * @module subagent-otel/telemetry/plan
 */
import { resolve as resolvePath } from 'node:path';
import { checkOption, readSetting, SETTINGS, type OtlpProtocol, type TemporalityPreference } from './config.js';
import { resolveContentPolicy, type ContentPolicy, type Environment } from './content-policy.js';
import { isOtlpEndpoint } from './otlp-endpoint.js';
import type { OutboxPlace } from './outbox/outboxes.js';
import { OnceReporter } from './report-once.js';
import { DEFAULT_SERVICE_NAME } from './semconv.js';

/** Environment variable naming the directory of the embedded OTLP-JSON-lines default. */
export const ENV_OUT_DIR = SETTINGS.out.env;
/** Directory of the embedded default when `SUBAGENT_OTEL_OUT` is unset (relative to the working directory). */
export const DEFAULT_OUT_DIR = SETTINGS.out.default;

/**
 * Options of `createTelemetry`. Each documents its environment variable
 * (the configuration table in `config.ts`); an option wins over it.
 */
export interface TelemetryOptions {
  /**
   * Directory for `traces.jsonl` / `metrics.jsonl`, written IN ADDITION to
   * any OTLP endpoint (CLI `--out`). Without it, files are written only when
   * no endpoint is configured, to `SUBAGENT_OTEL_OUT` (default `./subagent-otel-out`).
   */
  readonly out?: string;
  /**
   * Environment to read, by this package and by the OpenTelemetry packages it
   * builds. Default `process.env`. When given, nothing is read from
   * `process.env`.
   */
  readonly env?: Environment;
  /**
   * `service.name` when neither `OTEL_SERVICE_NAME` nor `service.name` in
   * `OTEL_RESOURCE_ATTRIBUTES` names one. Default `subagent-otel`.
   */
  readonly serviceName?: string;
  /**
   * Port of the Prometheus scrape endpoint (`http://<host>:<port>/metrics`);
   * `0` is off. Default: `SUBAGENT_OTEL_PROMETHEUS_PORT`, else off. When
   * enabled, the documented port is 9464 (CLI `--prometheus-port`).
   */
  readonly prometheusPort?: number;
  /** Listen host of the Prometheus endpoint. Default: `SUBAGENT_OTEL_PROMETHEUS_HOST`, else `127.0.0.1`. */
  readonly prometheusHost?: string;
  /** Content policy settings over `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` and `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`. */
  readonly content?: Partial<ContentPolicy>;
  /**
   * Where the `console` exporter (`OTEL_TRACES_EXPORTER=console`) writes
   * OTLP-JSON lines. Default `process.stderr`: never stdout, which is the
   * protocol on the proxy path.
   */
  readonly consoleStream?: NodeJS.WritableStream;
  /**
   * The outbox root: OTLP exports the destination did not take wait there
   * on disk and are delivered later (decision 0100); `false` is off.
   * Default: `SUBAGENT_OTEL_OUTBOX` (a directory, or `off`), else off (the
   * CLI turns it on in the user's state directory).
   */
  readonly outbox?: string | false;
  /**
   * The team attributes on transcript runs (repository, branch, user: decision 0124).
   * Default: `SUBAGENT_OTEL_TEAM_ATTRIBUTES`, else off.
   */
  readonly teamAttributes?: boolean;
}

/** OTLP destination of one signal: the protocol, and the URL the exporter sends to. */
export interface OtlpDestination {
  readonly protocol: OtlpProtocol;
  readonly url: string;
}

/** Destinations of one signal. */
export interface SignalPlan {
  readonly otlp?: OtlpDestination;
  /** Absolute directory for the OTLP-JSON-lines file. */
  readonly fileDir?: string;
  readonly console: boolean;
}

/** The project's own decisions, derived from options and environment before building anything. */
export interface TelemetryPlan {
  /** Absolute directory of the embedded default (`SUBAGENT_OTEL_OUT` or `./subagent-otel-out`), used or not. */
  readonly defaultOutDir: string;
  /** `service.name` when the environment names none. */
  readonly serviceName: string;
  readonly traces: SignalPlan;
  readonly metrics: SignalPlan;
  readonly content: ContentPolicy;
  readonly prometheus?: { readonly port: number; readonly host: string };
  readonly metricExport: { readonly intervalMillis: number; readonly timeoutMillis: number };
  /**
   * Temporality preference of every pushed metric stream (OTLP, the
   * OTLP-JSON-lines file, `console`): DELTA when unset
   * (docs/decisions/0009-delta-metrics-by-default.md). The Prometheus
   * endpoint is pulled and always cumulative.
   */
  readonly temporality: TemporalityPreference;
  /** The outbox of the OTLP destinations, when on. */
  readonly outbox?: OutboxPlace;
}

const KNOWN_EXPORTERS = new Set(['otlp', 'console', 'none']);

/**
 * Parses `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER`.
 * @returns the set of known names (`otlp`, `console`, `none`); `{otlp}` when
 *   unset or empty. Unknown names are reported once and skipped.
 */
function parseExporterList(variable: string, raw: string | undefined, reports: OnceReporter): Set<string> {
  const names = (raw ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  if (names.length === 0) return new Set(['otlp']);
  const known = new Set<string>();
  for (const name of names) {
    if (KNOWN_EXPORTERS.has(name)) known.add(name);
    else
      reports.report(
        'warn',
        `${variable}:${name}`,
        `${variable} names unsupported exporter ${JSON.stringify(name)} (supported: otlp, console, none); skipped`,
      );
  }
  return known;
}

/**
 * Whether OTLP is configured for a signal, and with which protocol: the
 * per-signal endpoint or the general one must be set (else the signal goes
 * to the files). The protocol is the per-signal variable, else
 * `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf`. The URL, as the OTLP
 * exporter specification resolves it: the per-signal endpoint as it is, else
 * the generic one with `/v1/traces` or `/v1/metrics` appended for HTTP (as
 * it is for gRPC). The exporter sends to exactly this URL.
 */
function otlpDestination(
  env: Environment,
  signal: 'TRACES' | 'METRICS',
  reports: OnceReporter,
): OtlpDestination | undefined {
  const specificVariable = `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`;
  const protocol = env[specificVariable]?.trim()
    ? readSetting(SETTINGS.otlpProtocol, env, reports, specificVariable)
    : readSetting(SETTINGS.otlpProtocol, env, reports);
  const path = signal === 'TRACES' ? 'v1/traces' : 'v1/metrics';
  const specific = env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`]?.trim();
  const general = env['OTEL_EXPORTER_OTLP_ENDPOINT']?.trim();
  let url: string | undefined;
  let raw: string | undefined;
  if (specific !== undefined && specific !== '') url = raw = specific;
  else if (general !== undefined && general !== '') {
    raw = general;
    url = protocol === 'grpc' ? general : `${general.replace(/\/+$/, '')}/${path}`;
  }
  if (url === undefined || raw === undefined) return undefined;
  if (!isOtlpEndpoint(raw, protocol)) {
    reports.report(
      'warn',
      `endpoint:${signal}`,
      `OTLP ${signal.toLowerCase()} endpoint is not a valid URL; ${signal.toLowerCase()} go to the OTLP-JSON-lines files instead`,
    );
    return undefined;
  }
  return { protocol, url };
}

function signalPlan(
  env: Environment,
  signal: 'TRACES' | 'METRICS',
  out: string | undefined,
  defaultDir: string,
  reports: OnceReporter,
): SignalPlan {
  const variable = `OTEL_${signal}_EXPORTER`;
  const names = parseExporterList(variable, env[variable], reports);
  const none = names.has('none');
  if (none && names.size > 1)
    reports.report('warn', `${variable}:none+`, `${variable} combines none with other exporters; none wins`);
  const otlp = !none && names.has('otlp') ? otlpDestination(env, signal, reports) : undefined;
  let fileDir: string | undefined;
  if (out !== undefined) fileDir = resolvePath(out);
  else if (!none && names.has('otlp') && otlp === undefined) fileDir = defaultDir;
  const plan: { otlp?: OtlpDestination; fileDir?: string; console: boolean } = {
    console: !none && names.has('console'),
  };
  if (otlp !== undefined) plan.otlp = otlp;
  if (fileDir !== undefined) plan.fileDir = fileDir;
  return plan;
}

/**
 * Derives the project's own decisions from options and environment without
 * building anything: pure apart from diag warnings (once per bad value and
 * `reports`). Options win over the environment. Never throws.
 */
export function planTelemetry(
  options: TelemetryOptions = {},
  reports: OnceReporter = new OnceReporter(),
): TelemetryPlan {
  const env = options.env ?? process.env;
  const defaultDir = resolvePath(readSetting(SETTINGS.out, env, reports));

  const prometheusPort =
    checkOption(SETTINGS.prometheusPort, options.prometheusPort, reports) ??
    readSetting(SETTINGS.prometheusPort, env, reports);
  const prometheusHost = options.prometheusHost ?? readSetting(SETTINGS.prometheusHost, env, reports);

  const intervalMillis = readSetting(SETTINGS.metricExportIntervalMs, env, reports);
  const plan: { -readonly [K in keyof TelemetryPlan]: TelemetryPlan[K] } = {
    defaultOutDir: defaultDir,
    serviceName: options.serviceName ?? DEFAULT_SERVICE_NAME,
    traces: signalPlan(env, 'TRACES', options.out, defaultDir, reports),
    metrics: signalPlan(env, 'METRICS', options.out, defaultDir, reports),
    content: resolveContentPolicy(options.content, env),
    metricExport: {
      intervalMillis,
      timeoutMillis: Math.min(intervalMillis, readSetting(SETTINGS.metricExportTimeoutMs, env, reports)),
    },
    temporality: readSetting(SETTINGS.metricsTemporality, env, reports),
  };
  if (prometheusPort > 0) plan.prometheus = { port: prometheusPort, host: prometheusHost };
  const outbox = options.outbox ?? readSetting(SETTINGS.outbox, env, reports);
  if (typeof outbox === 'string' && outbox !== '')
    plan.outbox = { dir: resolvePath(outbox), maxBytes: readSetting(SETTINGS.outboxMaxBytes, env, reports) };
  return plan;
}
