/**
 * Builds the OpenTelemetry pipelines from options and the standard
 * environment, read once here: resource (`OTEL_SERVICE_NAME`,
 * `OTEL_RESOURCE_ATTRIBUTES`), OTLP/HTTP export (`OTEL_EXPORTER_OTLP_*`),
 * exporter selection (`OTEL_TRACES_EXPORTER`, `OTEL_METRICS_EXPORTER`), the
 * embedded OTLP-JSON-lines default (`SUBAGENT_OTEL_OUT`), the metric
 * temporality of pushed metrics (`OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`,
 * default delta), the content policy, and the optional Prometheus endpoint
 * (`SUBAGENT_OTEL_PROMETHEUS_PORT`, always cumulative).
 * Hands back the `RunTelemetry` listener and a bounded `shutdown`.
 *
 * Never throws into the host after construction: export failures are counted
 * into `subagent.telemetry.dropped` and reported once per kind through the
 * diag logger. Registers no global provider. Nothing from the environment
 * reaches a span, metric or resource attribute except `OTEL_SERVICE_NAME` and
 * `OTEL_RESOURCE_ATTRIBUTES`; headers only ever go into HTTP requests.
 *
 * @module subagent-otel/telemetry/setup
 */
import { resolve as resolvePath } from 'node:path';
import { TraceFlags, type Context } from '@opentelemetry/api';
import { ExportResultCode, parseKeyPairsIntoRecord, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  AggregationTemporalityPreference,
  CumulativeTemporalitySelector,
  DeltaTemporalitySelector,
  LowMemoryTemporalitySelector,
  OTLPMetricExporter,
} from '@opentelemetry/exporter-metrics-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  type ReadableSpan,
  type Span,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  MeterProvider,
  PeriodicExportingMetricReader,
  type AggregationTemporalitySelector,
  type IMetricReader,
  type InstrumentType,
  type PushMetricExporter,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { resolveContentPolicy, parseLengthLimit, type ContentPolicy, type Environment } from './content-policy.js';
import { RunTelemetry, type TelemetrySignal } from './run-telemetry.js';
import {
  OtlpJsonLinesMetricExporter,
  OtlpJsonLinesSpanExporter,
  createMetricFileExporter,
  createTraceFileExporter,
  streamLineSink,
  METRICS_FILE_NAME,
  TRACES_FILE_NAME,
} from './otlp-json-file-exporter.js';
import {
  DEFAULT_PROMETHEUS_HOST,
  ENV_PROMETHEUS_PORT,
  parsePrometheusPort,
  startPrometheusEndpoint,
  type PrometheusEndpoint,
} from './prometheus-endpoint.js';
import { describeError, OnceReporter } from './report-once.js';
import {
  DEFAULT_SERVICE_NAME,
  INSTRUMENTATION_SCOPE_NAME,
  TELEMETRY_EXPORTER_VALUE_CONSOLE,
  TELEMETRY_EXPORTER_VALUE_FILE,
  TELEMETRY_EXPORTER_VALUE_OTLP,
  TELEMETRY_SIGNAL_VALUE_METRICS,
  TELEMETRY_SIGNAL_VALUE_TRACES,
} from './semconv.js';

/** Environment variable naming the directory of the embedded OTLP-JSON-lines default. */
export const ENV_OUT_DIR = 'SUBAGENT_OTEL_OUT';
/** Directory of the embedded default when `SUBAGENT_OTEL_OUT` is unset (relative to the working directory). */
export const DEFAULT_OUT_DIR = './subagent-otel-out';
/** Default bound of `shutdown`, in milliseconds. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 5000;

/** Options of `createTelemetry`. Each documents its environment variable; an option wins over it. */
export interface TelemetryOptions {
  /**
   * Directory for `traces.jsonl` / `metrics.jsonl`, written IN ADDITION to
   * any OTLP endpoint (CLI `--out`). Without it, files are written only when
   * no endpoint is configured, to `SUBAGENT_OTEL_OUT` (default `./subagent-otel-out`).
   */
  readonly out?: string;
  /** Environment to read. Default `process.env`. */
  readonly env?: Environment;
  /**
   * `service.name` when neither `OTEL_SERVICE_NAME` nor `service.name` in
   * `OTEL_RESOURCE_ATTRIBUTES` names one. Default `subagent-otel`.
   */
  readonly serviceName?: string;
  /**
   * Port of the Prometheus scrape endpoint (`http://127.0.0.1:<port>/metrics`);
   * `0` is off. Default: `SUBAGENT_OTEL_PROMETHEUS_PORT`, else off. When
   * enabled, the documented port is 9464 (CLI `--prometheus-port`).
   */
  readonly prometheusPort?: number;
  /** Listen host of the Prometheus endpoint. Default `127.0.0.1`. */
  readonly prometheusHost?: string;
  /** Content policy settings over `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` and `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`. */
  readonly content?: Partial<ContentPolicy>;
  /**
   * Where the `console` exporter (`OTEL_TRACES_EXPORTER=console`) writes
   * OTLP-JSON lines. Default `process.stderr`: never stdout, which is the
   * protocol on the proxy path.
   */
  readonly consoleStream?: NodeJS.WritableStream;
}

/** What `shutdown` accomplished. */
export interface TelemetryShutdownReport {
  /** Whether some flush did not finish within the bound (then `errors` says which). */
  readonly timedOut: boolean;
  /** One line per problem: timeouts, export failures (first of each kind), listen errors. Never holds headers. */
  readonly errors: readonly string[];
  /** Spans and metric batches that could not be delivered, over the whole lifetime. */
  readonly dropped: { readonly traces: number; readonly metrics: number };
}

/** The built pipelines. */
export interface Telemetry {
  /** The `RunListener` to hand to trackers. */
  readonly runs: RunTelemetry;
  readonly tracerProvider: BasicTracerProvider;
  readonly meterProvider: MeterProvider;
  /** Absolute directory of the OTLP-JSON-lines files, when any signal is written to files. */
  readonly outDir?: string;
  /** The content policy in force. */
  readonly content: ContentPolicy;
  /** The Prometheus scrape endpoint when enabled: its URL, and `ready` (bound URL, or `undefined` when it could not listen; never rejects). */
  readonly prometheus?: { readonly url: string; readonly ready: Promise<string | undefined> };
  /** One line per destination, e.g. `traces: OTLP/HTTP JSON http://collector:4318/v1/traces`. URLs lose any credentials; never headers. */
  describeDestinations(): string[];
  /**
   * Flushes and shuts down traces, then metrics (so drops counted while
   * flushing traces are still exported), then the Prometheus endpoint, all
   * within `timeoutMs` (default 5000). Idempotent; resolves, never rejects.
   */
  shutdown(timeoutMs?: number): Promise<TelemetryShutdownReport>;
}

type ExporterKind = typeof TELEMETRY_EXPORTER_VALUE_OTLP | typeof TELEMETRY_EXPORTER_VALUE_FILE | typeof TELEMETRY_EXPORTER_VALUE_CONSOLE;

/** OTLP/HTTP settings of one signal. */
export interface OtlpSettings {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMillis: number;
}

/** Destinations of one signal. */
export interface SignalPlan {
  readonly otlp?: OtlpSettings;
  /** Absolute directory for the OTLP-JSON-lines file. */
  readonly fileDir?: string;
  readonly console: boolean;
}

/** Everything `createTelemetry` derives from options and environment, before building anything. */
export interface TelemetryPlan {
  /** Absolute directory of the embedded default (`SUBAGENT_OTEL_OUT` or `./subagent-otel-out`), used or not. */
  readonly defaultOutDir: string;
  readonly resourceAttributes: Readonly<Record<string, string>>;
  readonly traces: SignalPlan;
  readonly metrics: SignalPlan;
  readonly content: ContentPolicy;
  readonly prometheus?: { readonly port: number; readonly host: string };
  readonly batch: { readonly maxQueueSize: number; readonly maxExportBatchSize: number; readonly scheduledDelayMillis: number; readonly exportTimeoutMillis: number };
  readonly metricExport: { readonly intervalMillis: number; readonly timeoutMillis: number };
  /**
   * Temporality preference of every pushed metric stream (OTLP/HTTP, the
   * OTLP-JSON-lines file, `console`): `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`,
   * DELTA when unset or empty (docs/decisions/0009-delta-metrics-by-default.md).
   * The Prometheus endpoint is pulled and always cumulative.
   */
  readonly temporality: AggregationTemporalityPreference;
}

const reports = new OnceReporter();

/**
 * Parses `OTEL_RESOURCE_ATTRIBUTES` (`key=value,key2=value2`, percent-encoded).
 * @returns the attributes; `{}` when unset. Per the specification, a value
 *   with any malformed entry is discarded whole (reported once).
 */
export function parseResourceAttributes(raw: string | undefined): Record<string, string> {
  const attributes: Record<string, string> = {};
  if (raw === undefined || raw.trim() === '') return attributes;
  for (const entry of raw.split(',')) {
    if (entry.trim() === '') continue;
    const parts = entry.split('=');
    const key = parts[0]?.trim() ?? '';
    if (parts.length !== 2 || key === '') {
      reports.report('warn', `resource:${raw}`, `OTEL_RESOURCE_ATTRIBUTES entry ${JSON.stringify(entry)} is not key=value; the whole variable is ignored`);
      return {};
    }
    try {
      attributes[decodeURIComponent(key)] = decodeURIComponent((parts[1] ?? '').trim());
    } catch {
      // decodeURIComponent throws URIError on a malformed escape: the spec says discard the whole value.
      reports.report('warn', `resource:${raw}`, `OTEL_RESOURCE_ATTRIBUTES entry ${JSON.stringify(entry)} has a malformed percent escape; the whole variable is ignored`);
      return {};
    }
  }
  return attributes;
}

const KNOWN_EXPORTERS = new Set(['otlp', 'console', 'none']);

/**
 * Parses `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER`.
 * @returns the set of known names (`otlp`, `console`, `none`); `{otlp}` when
 *   unset or empty. Unknown names are reported once and skipped.
 */
export function parseExporterList(variable: string, raw: string | undefined): Set<string> {
  const names = (raw ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  if (names.length === 0) return new Set(['otlp']);
  const known = new Set<string>();
  for (const name of names) {
    if (KNOWN_EXPORTERS.has(name)) known.add(name);
    else reports.report('warn', `${variable}:${name}`, `${variable} names unsupported exporter ${JSON.stringify(name)} (supported: otlp, console, none); skipped`);
  }
  return known;
}

function positiveInt(env: Environment, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = parseLengthLimit(raw);
  if (value !== undefined) return value;
  reports.report('warn', `${name}:${raw}`, `${name}=${JSON.stringify(raw)} is not an integer >= 1; using ${fallback}`);
  return fallback;
}

function isUrl(text: string): boolean {
  try {
    new URL(text);
    return true;
  } catch {
    // URL constructor throws TypeError for anything that is not an absolute URL.
    return false;
  }
}

function otlpSettings(env: Environment, signal: 'TRACES' | 'METRICS'): OtlpSettings | undefined {
  const path = signal === 'TRACES' ? 'v1/traces' : 'v1/metrics';
  const specific = env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`]?.trim();
  const general = env['OTEL_EXPORTER_OTLP_ENDPOINT']?.trim();
  let url: string | undefined;
  if (specific !== undefined && specific !== '') url = specific;
  else if (general !== undefined && general !== '') url = `${general.replace(/\/+$/, '')}/${path}`;
  if (url === undefined) return undefined;
  if (!isUrl(url)) {
    reports.report('warn', `endpoint:${signal}`, `OTLP ${signal.toLowerCase()} endpoint is not a valid URL; ${signal.toLowerCase()} go to the OTLP-JSON-lines files instead`);
    return undefined;
  }
  const protocol = (env[`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`] ?? env['OTEL_EXPORTER_OTLP_PROTOCOL'] ?? '').trim();
  if (protocol === 'grpc') {
    reports.report('warn', `protocol:${protocol}`, 'OTLP protocol grpc is not supported; sending OTLP/HTTP JSON to the configured endpoint');
  } else if (protocol !== 'http/json') {
    reports.report('info', `protocol:${protocol}`, `OTLP protocol ${protocol === '' ? '(unset, spec default http/protobuf)' : protocol}: the protobuf exporter is not installed; sending OTLP/HTTP JSON, which every OTLP/HTTP receiver accepts`);
  }
  const headers = { ...parseKeyPairsIntoRecord(env['OTEL_EXPORTER_OTLP_HEADERS']), ...parseKeyPairsIntoRecord(env[`OTEL_EXPORTER_OTLP_${signal}_HEADERS`]) };
  const timeoutVariable = env[`OTEL_EXPORTER_OTLP_${signal}_TIMEOUT`] !== undefined ? `OTEL_EXPORTER_OTLP_${signal}_TIMEOUT` : 'OTEL_EXPORTER_OTLP_TIMEOUT';
  return { url, headers, timeoutMillis: positiveInt(env, timeoutVariable, 10_000) };
}

function signalPlan(env: Environment, signal: 'TRACES' | 'METRICS', out: string | undefined, defaultDir: string): SignalPlan {
  const variable = `OTEL_${signal}_EXPORTER`;
  const names = parseExporterList(variable, env[variable]);
  const none = names.has('none');
  if (none && names.size > 1) reports.report('warn', `${variable}:none+`, `${variable} combines none with other exporters; none wins`);
  const otlp = !none && names.has('otlp') ? otlpSettings(env, signal) : undefined;
  let fileDir: string | undefined;
  if (out !== undefined) fileDir = resolvePath(out);
  else if (!none && names.has('otlp') && otlp === undefined) fileDir = defaultDir;
  const plan: { otlp?: OtlpSettings; fileDir?: string; console: boolean } = { console: !none && names.has('console') };
  if (otlp !== undefined) plan.otlp = otlp;
  if (fileDir !== undefined) plan.fileDir = fileDir;
  return plan;
}

/** Environment variable of the metric temporality preference (OpenTelemetry OTLP exporter specification). */
const ENV_METRICS_TEMPORALITY = 'OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE';

/**
 * Reads `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE` (case and
 * surrounding blanks ignored).
 * @returns `cumulative`, `delta` or `lowmemory` as given; DELTA when unset or
 *   empty (this project's default, unlike the SDK's cumulative: there is one
 *   short-lived observer process per delegated run, and a collector can add
 *   up the deltas of many processes, never their cumulative values); DELTA,
 *   with a warning reported once, for any other value. Never throws.
 */
function temporalityOf(env: Environment): AggregationTemporalityPreference {
  const raw = (env[ENV_METRICS_TEMPORALITY] ?? '').trim().toLowerCase();
  switch (raw) {
    case '':
    case 'delta':
      return AggregationTemporalityPreference.DELTA;
    case 'cumulative':
      return AggregationTemporalityPreference.CUMULATIVE;
    case 'lowmemory':
      return AggregationTemporalityPreference.LOWMEMORY;
    default:
      reports.report('warn', `temporality:${raw}`, `${ENV_METRICS_TEMPORALITY}=${JSON.stringify(raw)} is not cumulative, delta or lowmemory; using delta`);
      return AggregationTemporalityPreference.DELTA;
  }
}

/**
 * The per-instrument temporality for a preference, the same table the OTLP
 * metric exporter applies to its own `temporalityPreference`: DELTA gives
 * delta counters and histograms (up-down counters stay cumulative),
 * LOWMEMORY delta synchronous counters and histograms only, CUMULATIVE
 * cumulative everything. Used for the exporters that have no preference of
 * their own (file, console), so every pushed stream agrees.
 */
function temporalitySelectorOf(preference: AggregationTemporalityPreference): AggregationTemporalitySelector {
  switch (preference) {
    case AggregationTemporalityPreference.DELTA:
      return DeltaTemporalitySelector;
    case AggregationTemporalityPreference.LOWMEMORY:
      return LowMemoryTemporalitySelector;
    default:
      return CumulativeTemporalitySelector;
  }
}

/**
 * Derives the whole configuration from options and environment without
 * building anything: pure apart from diag warnings (once per bad value).
 * Precedence: options over environment; `OTEL_SERVICE_NAME` over
 * `service.name` in `OTEL_RESOURCE_ATTRIBUTES` over `options.serviceName`.
 * Never throws.
 */
export function planTelemetry(options: TelemetryOptions = {}): TelemetryPlan {
  const env = options.env ?? process.env;
  const fromEnv = parseResourceAttributes(env['OTEL_RESOURCE_ATTRIBUTES']);
  const envServiceName = env['OTEL_SERVICE_NAME']?.trim();
  const serviceName =
    envServiceName !== undefined && envServiceName !== '' ? envServiceName : (fromEnv['service.name'] ?? options.serviceName ?? DEFAULT_SERVICE_NAME);
  const outEnv = env[ENV_OUT_DIR]?.trim();
  const defaultDir = resolvePath(outEnv !== undefined && outEnv !== '' ? outEnv : DEFAULT_OUT_DIR);

  let prometheusPort = options.prometheusPort;
  if (prometheusPort === undefined) {
    prometheusPort = parsePrometheusPort(env[ENV_PROMETHEUS_PORT]);
    if (prometheusPort === undefined) {
      reports.report('warn', `prometheus:${env[ENV_PROMETHEUS_PORT]}`, `${ENV_PROMETHEUS_PORT}=${JSON.stringify(env[ENV_PROMETHEUS_PORT])} is not a port (1-65535); the Prometheus endpoint stays off`);
      prometheusPort = 0;
    }
  } else if (!Number.isInteger(prometheusPort) || prometheusPort < 0 || prometheusPort > 65535) {
    reports.report('warn', `prometheus-option:${prometheusPort}`, `prometheusPort ${prometheusPort} is not a port (1-65535); the Prometheus endpoint stays off`);
    prometheusPort = 0;
  }

  const maxQueueSize = positiveInt(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048);
  const intervalMillis = positiveInt(env, 'OTEL_METRIC_EXPORT_INTERVAL', 60_000);
  const traces = signalPlan(env, 'TRACES', options.out, defaultDir);
  const plan: { -readonly [K in keyof TelemetryPlan]: TelemetryPlan[K] } = {
    defaultOutDir: defaultDir,
    resourceAttributes: { ...fromEnv, 'service.name': serviceName },
    traces,
    metrics: signalPlan(env, 'METRICS', options.out, defaultDir),
    content: resolveContentPolicy(options.content, env),
    batch: {
      maxQueueSize,
      maxExportBatchSize: Math.min(maxQueueSize, positiveInt(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512)),
      scheduledDelayMillis: positiveInt(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000),
      exportTimeoutMillis: positiveInt(env, 'OTEL_BSP_EXPORT_TIMEOUT', Math.max(30_000, (traces.otlp?.timeoutMillis ?? 0) + 1000)),
    },
    metricExport: { intervalMillis, timeoutMillis: Math.min(intervalMillis, positiveInt(env, 'OTEL_METRIC_EXPORT_TIMEOUT', 30_000)) },
    temporality: temporalityOf(env),
  };
  if (prometheusPort > 0) plan.prometheus = { port: prometheusPort, host: options.prometheusHost ?? DEFAULT_PROMETHEUS_HOST };
  return plan;
}

/** The URL without user info, query or fragment, for messages. */
function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return parsed.toString();
  } catch {
    // Not a URL (cannot happen after planning validated it): show nothing rather than something unsanitized.
    return '(invalid URL)';
  }
}

/** Counts sampled spans as they end: what every pipeline should eventually hand its exporter. */
class EndedSpanCounter implements SpanProcessor {
  count = 0;
  onStart(_span: Span, _parentContext: Context): void {}
  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0) this.count += 1;
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

type DropListener = (signal: TelemetrySignal, exporter: ExporterKind, count: number, error: unknown) => void;

/** Passes spans through and counts what the inner exporter failed to deliver. Never throws. */
class CountingSpanExporter implements SpanExporter {
  /** Spans whose export finished, delivered or failed (failures are counted as they settle). */
  settled = 0;
  readonly #inner: SpanExporter;
  readonly #kind: ExporterKind;
  readonly #onDrop: DropListener;
  #isClosed = false;

  constructor(inner: SpanExporter, kind: ExporterKind, onDrop: DropListener) {
    this.#inner = inner;
    this.#kind = kind;
    this.#onDrop = onDrop;
  }

  /**
   * Closes the books at shutdown: every span that ended but whose export was
   * never confirmed (still queued, dropped by a full queue, or in flight to a
   * collector that has not answered) is counted as dropped now, because the
   * process may exit before it settles. Results arriving later are not counted again.
   */
  closeAccounts(ended: number): void {
    if (this.#isClosed) return;
    this.#isClosed = true;
    const unconfirmed = ended - this.settled;
    if (unconfirmed > 0) this.#onDrop(TELEMETRY_SIGNAL_VALUE_TRACES, this.#kind, unconfirmed, new Error('spans not confirmed delivered by shutdown'));
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    const settle = (result: ExportResult): void => {
      if (!this.#isClosed) {
        this.settled += spans.length;
        if (result.code !== ExportResultCode.SUCCESS) this.#onDrop(TELEMETRY_SIGNAL_VALUE_TRACES, this.#kind, spans.length, result.error);
      }
      resultCallback(result);
    };
    try {
      this.#inner.export(spans, settle);
    } catch (error) {
      settle({ code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) });
    }
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }
}

/**
 * Passes metric batches through and counts failed ones. Keeps the inner
 * exporter's aggregation choice, and its temporality choice unless
 * `temporality` is given (then that selector decides, whatever the inner
 * exporter says). Never throws.
 */
class CountingMetricExporter implements PushMetricExporter {
  readonly #inner: PushMetricExporter;
  readonly #kind: ExporterKind;
  readonly #onDrop: DropListener;
  readonly selectAggregationTemporality?: PushMetricExporter['selectAggregationTemporality'];
  readonly selectAggregation?: PushMetricExporter['selectAggregation'];

  constructor(inner: PushMetricExporter, kind: ExporterKind, onDrop: DropListener, temporality?: AggregationTemporalitySelector) {
    this.#inner = inner;
    this.#kind = kind;
    this.#onDrop = onDrop;
    const own = inner.selectAggregationTemporality;
    if (temporality !== undefined) this.selectAggregationTemporality = temporality;
    else if (own !== undefined) this.selectAggregationTemporality = (type: InstrumentType) => own.call(inner, type);
    const aggregation = inner.selectAggregation;
    if (aggregation !== undefined) this.selectAggregation = (type: InstrumentType) => aggregation.call(inner, type);
  }

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    const settle = (result: ExportResult): void => {
      if (result.code !== ExportResultCode.SUCCESS) this.#onDrop(TELEMETRY_SIGNAL_VALUE_METRICS, this.#kind, 1, result.error);
      resultCallback(result);
    };
    try {
      this.#inner.export(metrics, settle);
    } catch (error) {
      settle({ code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) });
    }
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }
}

type Outcome = { readonly status: 'done' } | { readonly status: 'timeout' } | { readonly status: 'failed'; readonly error: unknown };

/** Settles `work` or times out after `ms`; never rejects, leaves no timer behind. */
async function within(work: () => Promise<unknown>, ms: number): Promise<Outcome> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve({ status: 'timeout' }), Math.max(0, ms));
  });
  let running: Promise<Outcome>;
  try {
    running = work().then(
      (): Outcome => ({ status: 'done' }),
      (error: unknown): Outcome => ({ status: 'failed', error }),
    );
  } catch (error) {
    running = Promise.resolve({ status: 'failed', error });
  }
  try {
    return await Promise.race([running, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Starts every task at once and waits for all of them to settle.
 * @returns resolves when all fulfilled; rejects with the first failure, but
 *   only after every task settled. Never rejects early.
 */
async function settleEach(tasks: ReadonlyArray<() => Promise<unknown>>): Promise<void> {
  const results = await Promise.allSettled(
    tasks.map(async (task) => {
      await task();
    }),
  );
  const failure = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
}

const MAX_REPORTED_ERRORS = 32;

/**
 * Builds tracer and meter providers, exporters, the optional Prometheus
 * endpoint, and the `RunTelemetry` listener.
 *
 * Destinations per signal: OTLP/HTTP (JSON) when an endpoint is configured
 * and the exporter list has `otlp` (the default); otherwise the embedded
 * OTLP-JSON-lines file in `SUBAGENT_OTEL_OUT` (default `./subagent-otel-out`).
 * `options.out` writes the files in addition to an endpoint, and even with
 * `OTEL_*_EXPORTER=none` (an explicit request). `console` writes OTLP-JSON
 * lines to `consoleStream` (stderr). OTLP spans go through a bounded
 * `BatchSpanProcessor` (`OTEL_BSP_MAX_QUEUE_SIZE`, default 2048); file and
 * console spans are written as each run ends (`SimpleSpanProcessor`), so a
 * crash keeps every finished run. Metrics are exported every
 * `OTEL_METRIC_EXPORT_INTERVAL` (default 60 s) and once more at shutdown,
 * with delta temporality unless `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`
 * says otherwise (OTLP, file and console alike); the Prometheus endpoint
 * serves cumulative values.
 * Every run is traced (`OTEL_TRACES_SAMPLER` is not read; a handed-in
 * unsampled `traceparent` is still honoured, parent-based).
 *
 * @returns the pipelines. Never throws: an exporter that cannot be built is
 *   reported and replaced by the file default.
 */
export function createTelemetry(options: TelemetryOptions = {}): Telemetry {
  const plan = planTelemetry(options);
  const errors: string[] = [];
  const dropped = { traces: 0, metrics: 0 };
  const destinations: string[] = [];
  let runs: RunTelemetry | undefined;

  const note = (message: string): void => {
    if (errors.length < MAX_REPORTED_ERRORS && !errors.includes(message)) errors.push(message);
  };
  const onDrop: DropListener = (signal, exporter, count, error) => {
    dropped[signal] += count;
    runs?.recordDropped(signal, exporter, count);
    const message = `${signal}: ${exporter} export failed, ${count} ${signal === 'traces' ? 'span(s)' : 'metric batch(es)'} dropped: ${describeError(error)}`;
    if (reports.report('warn', `drop:${signal}:${exporter}`, `${message} (further failures of this exporter are counted in subagent.telemetry.dropped, not logged)`)) note(message);
  };

  const resource = defaultResource().merge(resourceFromAttributes(plan.resourceAttributes));
  let outDir: string | undefined;

  // ---- traces
  const ended = new EndedSpanCounter();
  /** Every span pipeline's counting exporter: each is accounted at shutdown. */
  const counted: CountingSpanExporter[] = [];
  const spanProcessors: SpanProcessor[] = [ended];
  let traceFileDir = plan.traces.fileDir;
  if (plan.traces.otlp !== undefined) {
    try {
      const exporter = new CountingSpanExporter(
        new OTLPTraceExporter({ url: plan.traces.otlp.url, headers: { ...plan.traces.otlp.headers }, timeoutMillis: plan.traces.otlp.timeoutMillis }),
        TELEMETRY_EXPORTER_VALUE_OTLP,
        onDrop,
      );
      counted.push(exporter);
      spanProcessors.push(new BatchSpanProcessor(exporter, { ...plan.batch }));
      destinations.push(`traces: OTLP/HTTP JSON ${displayUrl(plan.traces.otlp.url)}`);
    } catch (error) {
      note(`traces: OTLP exporter could not be built (${describeError(error)}); writing files instead`);
      reports.report('error', 'otlp-build:traces', `traces: OTLP exporter could not be built (${describeError(error)}); writing files instead`);
      traceFileDir ??= plan.defaultOutDir;
    }
  }
  if (traceFileDir !== undefined) {
    const exporter = createTraceFileExporter(traceFileDir);
    const fileExporter = new CountingSpanExporter(exporter, TELEMETRY_EXPORTER_VALUE_FILE, onDrop);
    counted.push(fileExporter);
    spanProcessors.push(new SimpleSpanProcessor(fileExporter));
    destinations.push(`traces: file ${exporter.description}`);
    outDir = traceFileDir;
  }
  if (plan.traces.console) {
    const exporter = new OtlpJsonLinesSpanExporter(streamLineSink(options.consoleStream ?? process.stderr, 'stderr'));
    const consoleExporter = new CountingSpanExporter(exporter, TELEMETRY_EXPORTER_VALUE_CONSOLE, onDrop);
    counted.push(consoleExporter);
    spanProcessors.push(new SimpleSpanProcessor(consoleExporter));
    destinations.push(`traces: console (OTLP-JSON lines on ${exporter.description})`);
  }
  if (spanProcessors.length === 1) destinations.push('traces: none');

  const tracerProvider = new BasicTracerProvider({
    resource,
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    // No SDK length limit (explicit, so the environment's cannot apply): the content cap is the content
    // policy's, on content attributes only (JSON kept valid); names, models and hashes are never cut.
    spanLimits: { attributeValueLengthLimit: Infinity, attributeCountLimit: 128 },
    spanProcessors,
  });

  // ---- metrics
  const readers: IMetricReader[] = [];
  // One temporality for every pushed stream: the wrapper gives each push
  // exporter the selector of the preference (the file and console exporters
  // have none of their own; the OTLP exporter is also built with the same
  // preference). The Prometheus reader is no push exporter and stays cumulative.
  const pushTemporality = temporalitySelectorOf(plan.temporality);
  const periodic = (exporter: PushMetricExporter, kind: ExporterKind): PeriodicExportingMetricReader =>
    new PeriodicExportingMetricReader({
      exporter: new CountingMetricExporter(exporter, kind, onDrop, pushTemporality),
      exportIntervalMillis: plan.metricExport.intervalMillis,
      exportTimeoutMillis: plan.metricExport.timeoutMillis,
    });
  let metricFileDir = plan.metrics.fileDir;
  if (plan.metrics.otlp !== undefined) {
    try {
      const exporter = new OTLPMetricExporter({
        url: plan.metrics.otlp.url,
        headers: { ...plan.metrics.otlp.headers },
        timeoutMillis: plan.metrics.otlp.timeoutMillis,
        temporalityPreference: plan.temporality,
      });
      readers.push(periodic(exporter, TELEMETRY_EXPORTER_VALUE_OTLP));
      destinations.push(`metrics: OTLP/HTTP JSON ${displayUrl(plan.metrics.otlp.url)}`);
    } catch (error) {
      note(`metrics: OTLP exporter could not be built (${describeError(error)}); writing files instead`);
      reports.report('error', 'otlp-build:metrics', `metrics: OTLP exporter could not be built (${describeError(error)}); writing files instead`);
      metricFileDir ??= plan.defaultOutDir;
    }
  }
  if (metricFileDir !== undefined) {
    const exporter = createMetricFileExporter(metricFileDir);
    readers.push(periodic(exporter, TELEMETRY_EXPORTER_VALUE_FILE));
    destinations.push(`metrics: file ${exporter.description}`);
    outDir ??= metricFileDir;
  }
  if (plan.metrics.console) {
    const exporter = new OtlpJsonLinesMetricExporter(streamLineSink(options.consoleStream ?? process.stderr, 'stderr'));
    readers.push(periodic(exporter, TELEMETRY_EXPORTER_VALUE_CONSOLE));
    destinations.push(`metrics: console (OTLP-JSON lines on ${exporter.description})`);
  }
  let prometheus: PrometheusEndpoint | undefined;
  if (plan.prometheus !== undefined) {
    prometheus = startPrometheusEndpoint({ port: plan.prometheus.port, host: plan.prometheus.host }, (message) => {
      note(`metrics: ${message}`);
      reports.report('error', `prometheus:${message}`, message);
    });
    readers.push(prometheus.reader);
    destinations.push(`metrics: Prometheus ${prometheus.url}`);
  }
  if (readers.length === 0) destinations.push('metrics: none');

  const meterProvider = new MeterProvider({ resource, readers });
  runs = new RunTelemetry({
    tracer: tracerProvider.getTracer(INSTRUMENTATION_SCOPE_NAME),
    meter: meterProvider.getMeter(INSTRUMENTATION_SCOPE_NAME),
    content: plan.content,
  });

  let shuttingDown: Promise<TelemetryShutdownReport> | undefined;
  const shutdown = async (timeoutMs: number): Promise<TelemetryShutdownReport> => {
    const deadline = Date.now() + timeoutMs;
    let timedOut = false;
    const traceBudget = Math.floor(timeoutMs * 0.6);
    // Each pipeline is flushed on its own: the provider's shutdown rejects as
    // soon as one exporter fails (a collector answering 500), and returning
    // then would exit before the other pipelines (the file) finished writing.
    const traced = await within(() => settleEach(spanProcessors.map((processor) => () => processor.shutdown())), traceBudget);
    if (traced.status === 'timeout') {
      timedOut = true;
      note(`traces: shutdown did not finish within ${traceBudget} ms`);
    } else if (traced.status === 'failed' && dropped.traces === 0) {
      // A failed final export rejects the shutdown too; the drop line already says so.
      note(`traces: shutdown failed: ${describeError(traced.error)}`);
    }
    for (const pipeline of counted) pipeline.closeAccounts(ended.count);
    const metricBudget = Math.max(0, deadline - Date.now());
    // Readers on their own for the same reason (the provider's shutdown is a Promise.all).
    const metered = await within(
      () => settleEach(readers.map((reader) => () => reader.shutdown({ timeoutMillis: Math.max(1, metricBudget) }))),
      metricBudget,
    );
    if (metered.status === 'timeout') {
      timedOut = true;
      note(`metrics: shutdown did not finish within ${metricBudget} ms`);
    } else if (metered.status === 'failed' && dropped.metrics === 0) {
      note(`metrics: shutdown failed: ${describeError(metered.error)}`);
    }
    if (prometheus !== undefined) {
      const endpoint = prometheus;
      await within(() => endpoint.close(), Math.max(0, deadline - Date.now()));
    }
    return { timedOut, errors: [...errors], dropped: { ...dropped } };
  };

  const telemetry: Telemetry = {
    runs,
    tracerProvider,
    meterProvider,
    content: plan.content,
    describeDestinations: () => [...destinations],
    shutdown(timeoutMs = DEFAULT_SHUTDOWN_TIMEOUT_MS) {
      shuttingDown ??= shutdown(timeoutMs).catch((error: unknown) => ({
        timedOut: false,
        errors: [...errors, `shutdown failed: ${describeError(error)}`],
        dropped: { ...dropped },
      }));
      return shuttingDown;
    },
  };
  const withEndpoint = prometheus !== undefined ? { ...telemetry, prometheus: { url: prometheus.url, ready: prometheus.ready } } : telemetry;
  return outDir !== undefined ? { ...withEndpoint, outDir } : withEndpoint;
}

/** File names inside `outDir`, for messages and docs. */
export const OUT_FILE_NAMES = { traces: TRACES_FILE_NAME, metrics: METRICS_FILE_NAME } as const;
