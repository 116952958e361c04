/**
 * Builds the standalone OpenTelemetry pipelines of the CLI and of hosts
 * without an SDK. Keeps only the project's own decisions, read through the
 * configuration table (`config.ts`): where telemetry goes when no endpoint is
 * set (the OTLP-JSON-lines files), which OTLP protocol (default
 * `http/protobuf`, per signal), delta temporality, the metric export
 * interval, the Prometheus endpoint, the content policy and the shutdown
 * bound. The resource (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`) and
 * the batch span processor's `OTEL_BSP_*` limits are read from the
 * environment `createTelemetry` was given and handed to the constructors
 * (`sdk-environment.ts`), and so are the OTLP exporters' endpoint, headers,
 * compression, timeout and certificates (`otlp-exporters.ts`): no
 * OpenTelemetry constructor reads `process.env`, and nothing changes it. So
 * an `env` option isolates.
 * Hands back the `RunTelemetry` listener and a bounded `shutdown`.
 *
 * Never throws into the host after construction: export failures are counted
 * into `subagent.telemetry.dropped` and reported once per kind and pipeline
 * through the diag logger. Registers no global provider, context manager or
 * propagator. Nothing from the environment reaches a span, metric or resource
 * attribute except `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`; headers
 * only ever go into requests.
 *
 * @module subagent-otel/telemetry/setup
 */
import { userInfo } from 'node:os';
import { resolve as resolvePath } from 'node:path';
import { TraceFlags, type Context } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOnSampler,
  TracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  type Span,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import {
  MeterProvider,
  PeriodicExportingMetricReader,
  type AggregationTemporalitySelector,
  type IMetricReader,
  type InstrumentType,
  type PushMetricExporter,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { checkOption, MAX_TIMER_MS, readSetting, SETTINGS, type OtlpProtocol, type TemporalityPreference } from './config.js';
import { resolveContentPolicy, type ContentPolicy, type Environment } from './content-policy.js';
import { EndedTogetherSpanProcessor } from './ended-together-span-processor.js';
import { StableIdGenerator } from './stable-ids.js';
import { teamAttributes } from './team-attributes.js';
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
  LazyMetricExporter,
  LazySpanExporter,
  loadMetricExporter,
  loadSpanExporter,
  otlpExporterSettings,
  requestSerializer,
  temporalitySelector,
  type RequestBodies,
} from './otlp-exporters.js';
import type { DestinationOutbox } from './outbox/destination.js';
import { OutboxMetricExporter, OutboxSpanExporter, type OutboxListener } from './outbox/exporter.js';
import { openDestinationOutbox, type OutboxPlace } from './outbox/outboxes.js';
import { RefusedExportError } from './outbox/refusal.js';
import { batchSpanProcessorConfig, resourceAttributesOf } from './sdk-environment.js';
import { startPrometheusEndpoint, type PrometheusEndpoint } from './prometheus-endpoint.js';
import { isOtlpEndpoint } from './otlp-endpoint.js';
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
import { asError } from '../wire/error-text.js';

/** Environment variable naming the directory of the embedded OTLP-JSON-lines default. */
export const ENV_OUT_DIR = SETTINGS.out.env;
/** Directory of the embedded default when `SUBAGENT_OTEL_OUT` is unset (relative to the working directory). */
export const DEFAULT_OUT_DIR = SETTINGS.out.default;
/** Default bound of `shutdown`, in milliseconds. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = SETTINGS.shutdownTimeoutMs.default;

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

/** What `shutdown` accomplished. */
export interface TelemetryShutdownReport {
  /** Whether some flush did not finish within the bound (then `errors` says which). */
  readonly timedOut: boolean;
  /** One line per problem: timeouts, export failures (first of each kind), listen errors. Never holds headers. */
  readonly errors: readonly string[];
  /** Spans and metric batches this pipeline could not deliver, over its whole lifetime (`refused` and outbox bound drops included). */
  readonly dropped: { readonly traces: number; readonly metrics: number };
  /** Of `dropped`: what a destination refused for good (HTTP 4xx other than 408/429, the permanent gRPC codes). */
  readonly refused: { readonly traces: number; readonly metrics: number };
  /** Spans and metric batches put into the outbox instead of being delivered, and the runs (run spans) among them. */
  readonly outboxed: { readonly traces: number; readonly metrics: number; readonly runs: number };
  /** What this process delivered from the outbox (left there by earlier processes, or by itself during an outage). */
  readonly fromOutbox: { readonly requests: number; readonly items: number; readonly runs: number };
}

/** What `Telemetry.settle` found. */
export interface SettleReport {
  /**
   * Whether every span ended so far and every metric batch exported was
   * delivered, put into the outbox on disk, or refused for good, with no
   * other loss since the previous `settle`.
   */
  readonly safe: boolean;
  /** Spans and batches lost otherwise since the previous `settle` (queue overflow, an outbox that cannot be written). */
  readonly lost: number;
}

/** The built pipelines. */
export interface Telemetry {
  /** The `RunListener` to hand to trackers. */
  readonly runs: RunTelemetry;
  readonly tracerProvider: TracerProvider;
  readonly meterProvider: MeterProvider;
  /** Absolute directory of the OTLP-JSON-lines files, when any signal is written to files. */
  readonly outDir?: string;
  /** The content policy in force. */
  readonly content: ContentPolicy;
  /** The Prometheus scrape endpoint when enabled: its URL, and `ready` (bound URL, or `undefined` when it could not listen; never rejects). */
  readonly prometheus?: { readonly url: string; readonly ready: Promise<string | undefined> };
  /** One line per destination, e.g. `traces: OTLP grpc http://collector:4317`. URLs lose any credentials; never headers. */
  describeDestinations(): string[];
  /**
   * Flushes and shuts down traces, then metrics (so drops counted while
   * flushing traces are still exported), then the Prometheus endpoint, all
   * within `timeoutMs` (default 5000, at most 2^31-1). Idempotent; resolves,
   * never rejects.
   */
  shutdown(timeoutMs?: number): Promise<TelemetryShutdownReport>;
  /**
   * Exports what is buffered now (spans, then metrics), without shutting
   * anything down, within `timeoutMs` (clamped like `shutdown`). For a
   * process that may be killed soon: what ended reaches its destination
   * first. Failures are counted by the exporters as usual. Resolves `false`
   * when the bound passed first; never rejects; after `shutdown` it does
   * nothing and resolves `true`.
   */
  flush(timeoutMs: number): Promise<boolean>;
  /**
   * The checkpoint gate of `watch`: exports what is buffered now; what has
   * no answer when `timeoutMs` passes is put into the outbox (when there is
   * one). Resolves whether everything so far is safe (delivered, on disk in
   * the outbox, or refused for good). Never rejects.
   */
  settle(timeoutMs: number): Promise<SettleReport>;
  /** The outbox of each OTLP destination, when the outbox is on. */
  readonly outboxes: readonly DestinationOutbox[];
}

type ExporterKind = typeof TELEMETRY_EXPORTER_VALUE_OTLP | typeof TELEMETRY_EXPORTER_VALUE_FILE | typeof TELEMETRY_EXPORTER_VALUE_CONSOLE;

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
    else reports.report('warn', `${variable}:${name}`, `${variable} names unsupported exporter ${JSON.stringify(name)} (supported: otlp, console, none); skipped`);
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
function otlpDestination(env: Environment, signal: 'TRACES' | 'METRICS', reports: OnceReporter): OtlpDestination | undefined {
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
    reports.report('warn', `endpoint:${signal}`, `OTLP ${signal.toLowerCase()} endpoint is not a valid URL; ${signal.toLowerCase()} go to the OTLP-JSON-lines files instead`);
    return undefined;
  }
  return { protocol, url };
}

function signalPlan(env: Environment, signal: 'TRACES' | 'METRICS', out: string | undefined, defaultDir: string, reports: OnceReporter): SignalPlan {
  const variable = `OTEL_${signal}_EXPORTER`;
  const names = parseExporterList(variable, env[variable], reports);
  const none = names.has('none');
  if (none && names.size > 1) reports.report('warn', `${variable}:none+`, `${variable} combines none with other exporters; none wins`);
  const otlp = !none && names.has('otlp') ? otlpDestination(env, signal, reports) : undefined;
  let fileDir: string | undefined;
  if (out !== undefined) fileDir = resolvePath(out);
  else if (!none && names.has('otlp') && otlp === undefined) fileDir = defaultDir;
  const plan: { otlp?: OtlpDestination; fileDir?: string; console: boolean } = { console: !none && names.has('console') };
  if (otlp !== undefined) plan.otlp = otlp;
  if (fileDir !== undefined) plan.fileDir = fileDir;
  return plan;
}

/**
 * Derives the project's own decisions from options and environment without
 * building anything: pure apart from diag warnings (once per bad value and
 * `reports`). Options win over the environment. Never throws.
 */
export function planTelemetry(options: TelemetryOptions = {}, reports: OnceReporter = new OnceReporter()): TelemetryPlan {
  const env = options.env ?? process.env;
  const defaultDir = resolvePath(readSetting(SETTINGS.out, env, reports));

  const prometheusPort = checkOption(SETTINGS.prometheusPort, options.prometheusPort, reports) ?? readSetting(SETTINGS.prometheusPort, env, reports);
  const prometheusHost = options.prometheusHost ?? readSetting(SETTINGS.prometheusHost, env, reports);

  const intervalMillis = readSetting(SETTINGS.metricExportIntervalMs, env, reports);
  const plan: { -readonly [K in keyof TelemetryPlan]: TelemetryPlan[K] } = {
    defaultOutDir: defaultDir,
    serviceName: options.serviceName ?? DEFAULT_SERVICE_NAME,
    traces: signalPlan(env, 'TRACES', options.out, defaultDir, reports),
    metrics: signalPlan(env, 'METRICS', options.out, defaultDir, reports),
    content: resolveContentPolicy(options.content, env),
    metricExport: { intervalMillis, timeoutMillis: Math.min(intervalMillis, readSetting(SETTINGS.metricExportTimeoutMs, env, reports)) },
    temporality: readSetting(SETTINGS.metricsTemporality, env, reports),
  };
  if (prometheusPort > 0) plan.prometheus = { port: prometheusPort, host: prometheusHost };
  const outbox = options.outbox ?? readSetting(SETTINGS.outbox, env, reports);
  if (typeof outbox === 'string' && outbox !== '') plan.outbox = { dir: resolvePath(outbox), maxBytes: readSetting(SETTINGS.outboxMaxBytes, env, reports) };
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

const PROTOCOL_LABEL: Readonly<Record<OtlpProtocol, string>> = {
  grpc: 'OTLP/gRPC',
  'http/protobuf': 'OTLP/HTTP protobuf',
  'http/json': 'OTLP/HTTP JSON',
};

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
      settle({ code: ExportResultCode.FAILED, error: asError(error) });
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
      settle({ code: ExportResultCode.FAILED, error: asError(error) });
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
 * Destinations per signal: OTLP when an endpoint is configured and the
 * exporter list has `otlp` (the default), over the protocol of
 * `OTEL_EXPORTER_OTLP_[SIGNAL_]PROTOCOL` (`grpc`, `http/protobuf` — the
 * default —, `http/json`; the exporter is imported on first use of this
 * function for that protocol only); otherwise the embedded
 * OTLP-JSON-lines file in `SUBAGENT_OTEL_OUT` (default `./subagent-otel-out`).
 * `options.out` writes the files in addition to an endpoint, and even with
 * `OTEL_*_EXPORTER=none` (an explicit request). `console` writes OTLP-JSON
 * lines to `consoleStream` (stderr). OTLP spans go through a bounded
 * `BatchSpanProcessor` with the `OTEL_BSP_*` limits of `env` (queue default 2048); file and
 * console spans are written as each run ends, a run's spans as one batch
 * (`EndedTogetherSpanProcessor`), so a crash keeps every finished run. Metrics are exported every
 * `OTEL_METRIC_EXPORT_INTERVAL` (default 60 s) and once more at shutdown,
 * with delta temporality unless `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`
 * says otherwise (OTLP, file and console alike); the Prometheus endpoint
 * serves cumulative values.
 * Every run is traced (`OTEL_TRACES_SAMPLER` is not read; a handed-in
 * unsampled `traceparent` is still honoured, parent-based).
 *
 * @returns the pipelines. Never throws: an OTLP exporter that cannot be loaded is
 *   reported and its spans or batches counted as dropped.
 */
export function createTelemetry(options: TelemetryOptions = {}): Telemetry {
  // Each pipeline says its own problems once: a second createTelemetry reports its drops too.
  const reports = new OnceReporter();
  return buildTelemetry(options, planTelemetry(options, reports), reports);
}

/**
 * `createTelemetry` from a plan the caller already made, for callers that
 * also inspect the plan (`check`, `proxy`, `demo`): planning reports its
 * warnings once per plan, so planning the same options again would say each
 * warning again. Not part of the package's API.
 *
 * @param plan `planTelemetry(options)` of these same `options`.
 */
export function createTelemetryFromPlan(options: TelemetryOptions, plan: TelemetryPlan): Telemetry {
  return buildTelemetry(options, plan, new OnceReporter());
}

function buildTelemetry(options: TelemetryOptions, plan: TelemetryPlan, reports: OnceReporter): Telemetry {
  const env = options.env ?? process.env;
  const errors: string[] = [];
  const dropped = { traces: 0, metrics: 0 };
  const refused = { traces: 0, metrics: 0 };
  const outboxed = { traces: 0, metrics: 0, runs: 0 };
  /** Losses that make a checkpoint unsafe: not refusals, not the outbox bound (old data). */
  let unsafeLosses = 0;
  const destinations: string[] = [];
  const outboxes: DestinationOutbox[] = [];
  const spillers: Array<{ spill(): Promise<void> }> = [];
  let runs: RunTelemetry | undefined;

  const note = (message: string): void => {
    if (errors.length < MAX_REPORTED_ERRORS && !errors.includes(message)) errors.push(message);
  };
  const onDrop: DropListener = (signal, exporter, count, error) => {
    dropped[signal] += count;
    runs?.recordDropped(signal, exporter, count);
    if (error instanceof RefusedExportError) refused[signal] += count;
    else unsafeLosses += count;
    const message = `${signal}: ${exporter} export failed, ${count} ${signal === 'traces' ? 'span(s)' : 'metric batch(es)'} dropped: ${describeError(error)}`;
    if (reports.report('warn', `drop:${signal}:${exporter}`, `${message} (further failures of this exporter are counted in subagent.telemetry.dropped, not logged)`)) note(message);
  };

  /** The outbox of one OTLP destination, and how its pipeline is told what happened there. */
  const outboxFor = (signal: TelemetrySignal, settings: ReturnType<typeof otlpExporterSettings>, url: string): { box: DestinationOutbox; listener: OutboxListener } | undefined => {
    if (plan.outbox === undefined) return undefined;
    const place = plan.outbox;
    const box = openDestinationOutbox(place, settings, url, {
      onRefused: (items, error) => onDrop(signal, TELEMETRY_EXPORTER_VALUE_OTLP, items, new RefusedExportError(`refused by the destination while delivering the outbox: ${describeError(error)}`)),
    });
    outboxes.push(box);
    const listener: OutboxListener = {
      onOutboxed: (items, runCount) => {
        outboxed[signal] += items;
        outboxed.runs += runCount;
        reports.report('warn', `outbox:${signal}`, `${signal}: the destination did not take them; kept in the outbox ${box.store.dir} for delivery by the next command (or: subagent-otel check --deliver)`);
      },
      onBoundDropped: (items) => {
        dropped[signal] += items;
        runs?.recordDropped(signal, TELEMETRY_EXPORTER_VALUE_OTLP, items);
        const message = `${signal}: the outbox ${box.store.dir} is full (${place.maxBytes} bytes, SUBAGENT_OTEL_OUTBOX_MAX_BYTES): its oldest ${items} ${signal === 'traces' ? 'span(s)' : 'metric batch(es)'} dropped`;
        if (reports.report('warn', `outbox-full:${signal}`, message)) note(message);
      },
    };
    return { box, listener };
  };

  // OTEL_SERVICE_NAME, then service.name in OTEL_RESOURCE_ATTRIBUTES, then the option, then subagent-otel.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': plan.serviceName }))
    .merge(resourceFromAttributes(resourceAttributesOf(env, reports)));
  let outDir: string | undefined;

  // ---- traces
  const ended = new EndedSpanCounter();
  /** Every span pipeline's counting exporter: each is accounted at shutdown. */
  const counted: CountingSpanExporter[] = [];
  const spanProcessors: SpanProcessor[] = [ended];
  let traceFileDir = plan.traces.fileDir;
  if (plan.traces.otlp !== undefined) {
    const otlp = plan.traces.otlp;
    try {
      const settings = otlpExporterSettings('TRACES', otlp, plan.temporality, env, reports);
      const bodies: RequestBodies = new WeakMap();
      const load = loadSpanExporter(settings, bodies);
      load.catch((error: unknown) => {
        note(`traces: ${PROTOCOL_LABEL[otlp.protocol]} exporter could not be loaded (${describeError(error)})`);
        reports.report('error', 'otlp-load:traces', `traces: ${PROTOCOL_LABEL[otlp.protocol]} exporter could not be loaded (${describeError(error)}); its spans are counted as dropped`);
      });
      let inner: SpanExporter = new LazySpanExporter(load);
      const outbox = outboxFor(TELEMETRY_SIGNAL_VALUE_TRACES, settings, displayUrl(otlp.url));
      if (outbox !== undefined) {
        const wrapped = new OutboxSpanExporter(inner, outbox.box, bodies, () => requestSerializer('TRACES', otlp.protocol), outbox.listener);
        spillers.push(wrapped);
        inner = wrapped;
      }
      const exporter = new CountingSpanExporter(inner, TELEMETRY_EXPORTER_VALUE_OTLP, onDrop);
      counted.push(exporter);
      spanProcessors.push(new BatchSpanProcessor({ exporter, ...batchSpanProcessorConfig(env, reports) }));
      destinations.push(`traces: ${PROTOCOL_LABEL[otlp.protocol]} ${displayUrl(otlp.url)}`);
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
    spanProcessors.push(new EndedTogetherSpanProcessor(fileExporter));
    destinations.push(`traces: file ${exporter.description}`);
    outDir = traceFileDir;
  }
  if (plan.traces.console) {
    const exporter = new OtlpJsonLinesSpanExporter(streamLineSink(options.consoleStream ?? process.stderr, 'stderr'));
    const consoleExporter = new CountingSpanExporter(exporter, TELEMETRY_EXPORTER_VALUE_CONSOLE, onDrop);
    counted.push(consoleExporter);
    spanProcessors.push(new EndedTogetherSpanProcessor(consoleExporter));
    destinations.push(`traces: console (OTLP-JSON lines on ${exporter.description})`);
  }
  if (spanProcessors.length === 1) destinations.push('traces: none');

  // Runs read from transcripts get ids derived from their names (decision 0093); every other span random ones.
  const stableIds = new StableIdGenerator();
  const tracerProvider = new TracerProvider({
    resource,
    idGenerator: stableIds,
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
  const pushTemporality = temporalitySelector(plan.temporality);
  const periodic = (exporter: PushMetricExporter, kind: ExporterKind): PeriodicExportingMetricReader =>
    new PeriodicExportingMetricReader({
      exporter: new CountingMetricExporter(exporter, kind, onDrop, pushTemporality),
      exportIntervalMillis: plan.metricExport.intervalMillis,
      exportTimeoutMillis: plan.metricExport.timeoutMillis,
    });
  let metricFileDir = plan.metrics.fileDir;
  if (plan.metrics.otlp !== undefined) {
    const otlp = plan.metrics.otlp;
    try {
      const settings = otlpExporterSettings('METRICS', otlp, plan.temporality, env, reports);
      const bodies: RequestBodies = new WeakMap();
      const load = loadMetricExporter(settings, bodies);
      load.catch((error: unknown) => {
        note(`metrics: ${PROTOCOL_LABEL[otlp.protocol]} exporter could not be loaded (${describeError(error)})`);
        reports.report('error', 'otlp-load:metrics', `metrics: ${PROTOCOL_LABEL[otlp.protocol]} exporter could not be loaded (${describeError(error)}); its batches are counted as dropped`);
      });
      let inner: PushMetricExporter = new LazyMetricExporter(load);
      const outbox = outboxFor(TELEMETRY_SIGNAL_VALUE_METRICS, settings, displayUrl(otlp.url));
      if (outbox !== undefined) {
        const wrapped = new OutboxMetricExporter(inner, outbox.box, bodies, () => requestSerializer('METRICS', otlp.protocol), outbox.listener);
        spillers.push(wrapped);
        inner = wrapped;
      }
      readers.push(periodic(inner, TELEMETRY_EXPORTER_VALUE_OTLP));
      destinations.push(`metrics: ${PROTOCOL_LABEL[otlp.protocol]} ${displayUrl(otlp.url)}`);
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
    semconv: readSetting(SETTINGS.semconvStability, env, reports),
    stableIds,
    ...((options.teamAttributes ?? readSetting(SETTINGS.teamAttributes, env, reports)) ? { team: teamAttributes(currentUserName()) } : {}),
  });

  for (const box of outboxes) box.start(); // what earlier processes left goes first, beside this one's work

  const accounts = (): TelemetryShutdownReport => {
    const fromOutbox = { requests: 0, items: 0, runs: 0 };
    for (const box of outboxes) {
      const account = box.account().delivered;
      fromOutbox.requests += account.requests;
      fromOutbox.items += account.items;
      fromOutbox.runs += account.runs;
    }
    return { timedOut: false, errors: [...errors], dropped: { ...dropped }, refused: { ...refused }, outboxed: { ...outboxed }, fromOutbox };
  };
  /** Puts every export still waiting for an answer into the outbox. Never rejects. */
  const spill = async (): Promise<void> => {
    await Promise.all(spillers.map((s) => s.spill().catch(() => undefined)));
  };

  let shuttingDown: Promise<TelemetryShutdownReport> | undefined;
  const shutdown = async (requestedMs: number): Promise<TelemetryShutdownReport> => {
    // A bound beyond what a Node timer holds would fire at once: clamp it, and treat nonsense as the default.
    const timeoutMs = Number.isFinite(requestedMs) && requestedMs >= 0 ? Math.min(requestedMs, MAX_TIMER_MS) : DEFAULT_SHUTDOWN_TIMEOUT_MS;
    const deadline = Date.now() + timeoutMs;
    let timedOut = false;
    const traceBudget = Math.floor(timeoutMs * 0.6);
    // With an outbox, part of each budget is kept for filing what has no answer yet (a write and an fsync).
    const reserve = (budget: number): number => (spillers.length > 0 ? Math.min(1000, Math.floor(budget * 0.3)) : 0);
    // Each pipeline is flushed on its own: the provider's shutdown rejects as
    // soon as one exporter fails (a collector answering 500), and returning
    // then would exit before the other pipelines (the file) finished writing.
    const traced = await within(() => settleEach(spanProcessors.map((processor) => () => processor.shutdown())), traceBudget - reserve(traceBudget));
    if (traced.status === 'timeout' && spillers.length > 0) {
      await within(spill, reserve(traceBudget));
      // What is still unconfirmed now is counted below; the spilled batches were confirmed by the outbox.
    }
    if (traced.status === 'timeout' && counted.some((pipeline) => pipeline.settled < ended.count)) {
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
      () => settleEach(readers.map((reader) => () => reader.shutdown({ timeoutMillis: Math.max(1, metricBudget - reserve(metricBudget)) }))),
      metricBudget - reserve(metricBudget),
    );
    if (metered.status === 'timeout' && spillers.length > 0) await within(spill, Math.max(0, deadline - Date.now()));
    if (metered.status === 'timeout' && spillers.length === 0) {
      timedOut = true;
      note(`metrics: shutdown did not finish within ${metricBudget} ms`);
    } else if (metered.status === 'failed' && dropped.metrics === 0) {
      note(`metrics: shutdown failed: ${describeError(metered.error)}`);
    }
    // The outbox last: what this process filed, and what earlier ones left, while the destination takes it.
    await within(() => Promise.all(outboxes.map((box) => box.finish(deadline))), Math.max(0, deadline - Date.now()));
    if (prometheus !== undefined) {
      const endpoint = prometheus;
      await within(() => endpoint.close(), Math.max(0, deadline - Date.now()));
    }
    return { ...accounts(), timedOut, errors: [...errors] };
  };

  const flush = async (requestedMs: number): Promise<boolean> => {
    if (shuttingDown !== undefined) return true;
    const timeoutMs = Number.isFinite(requestedMs) && requestedMs >= 0 ? Math.min(requestedMs, MAX_TIMER_MS) : DEFAULT_SHUTDOWN_TIMEOUT_MS;
    const deadline = Date.now() + timeoutMs;
    const traced = await within(() => settleEach(spanProcessors.map((processor) => () => processor.forceFlush())), timeoutMs);
    if (traced.status === 'timeout') return false;
    const metered = await within(
      () => settleEach(readers.map((reader) => () => reader.forceFlush({ timeoutMillis: Math.max(1, deadline - Date.now()) }))),
      Math.max(0, deadline - Date.now()),
    );
    return metered.status !== 'timeout';
  };

  let lossesAtLastSettle = 0;
  let gapAtLastSettle = 0;
  const settle = async (requestedMs: number): Promise<SettleReport> => {
    const done = await flush(requestedMs);
    if (!done) await spill();
    // Spans that ended but no exporter settled after a whole flush (and spill) were lost on the way (a full queue).
    const gap = Math.max(0, ...counted.map((pipeline) => ended.count - pipeline.settled));
    const lost = unsafeLosses - lossesAtLastSettle + Math.max(0, gap - gapAtLastSettle);
    lossesAtLastSettle = unsafeLosses;
    gapAtLastSettle = gap;
    return { safe: lost === 0 && (done || spillers.length > 0), lost };
  };

  const telemetry: Telemetry = {
    runs,
    flush,
    settle,
    outboxes,
    tracerProvider,
    meterProvider,
    content: plan.content,
    describeDestinations: () => [...destinations],
    shutdown(timeoutMs = DEFAULT_SHUTDOWN_TIMEOUT_MS) {
      shuttingDown ??= shutdown(timeoutMs).catch((error: unknown) => ({
        ...accounts(),
        errors: [...errors, `shutdown failed: ${describeError(error)}`],
      }));
      return shuttingDown;
    },
  };
  const withEndpoint = prometheus !== undefined ? { ...telemetry, prometheus: { url: prometheus.url, ready: prometheus.ready } } : telemetry;
  return outDir !== undefined ? { ...withEndpoint, outDir } : withEndpoint;
}

/** File names inside `outDir`, for messages and docs. */
export const OUT_FILE_NAMES = { traces: TRACES_FILE_NAME, metrics: METRICS_FILE_NAME } as const;

/** The login name of the user running this process, or `undefined` where the system names none. */
function currentUserName(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined; // a uid without a passwd entry (some containers)
  }
}
