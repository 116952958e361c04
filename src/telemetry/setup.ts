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
 * This module assembles; the parts are modules of their own: the plan
 * (`plan.ts`), the span pipelines (`trace-pipelines.ts`), the metric
 * readers (`metric-pipelines.ts`), the OTLP exporter they share
 * (`otlp-pipeline.ts`), the books (`export-accounts.ts`) and the bounded
 * flush, settle and shutdown (`pipeline-control.ts`).
 *
 * @module subagent-otel/telemetry/setup
 */
import { userInfo } from 'node:os';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, ParentBasedSampler, TracerProvider } from '@opentelemetry/sdk-trace';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { readSetting, SETTINGS } from './config.js';
import type { ContentPolicy } from './content-policy.js';
import { ExportAccounts, type TelemetryShutdownReport } from './export-accounts.js';
import { buildMetricPipelines } from './metric-pipelines.js';
import { METRICS_FILE_NAME, TRACES_FILE_NAME } from './otlp-json-file-exporter.js';
import type { DestinationOutbox } from './outbox/destination.js';
import type { PipelineContext } from './pipeline-context.js';
import { PipelineControl } from './pipeline-control.js';
import { planTelemetry, type TelemetryOptions, type TelemetryPlan } from './plan.js';
import { OnceReporter } from './report-once.js';
import { RunTelemetry } from './run-telemetry.js';
import { resourceAttributesOf } from './sdk-environment.js';
import { INSTRUMENTATION_SCOPE_NAME } from './semconv.js';
import { StableIdGenerator } from './stable-ids.js';
import { teamAttributes } from './team-attributes.js';
import { buildTracePipelines } from './trace-pipelines.js';

export {
  DEFAULT_OUT_DIR,
  ENV_OUT_DIR,
  planTelemetry,
  type OtlpDestination,
  type SignalPlan,
  type TelemetryOptions,
  type TelemetryPlan,
} from './plan.js';
export { DEFAULT_SHUTDOWN_TIMEOUT_MS } from './pipeline-control.js';
export type { TelemetryShutdownReport } from './export-accounts.js';

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
  const accounts = new ExportAccounts(reports, plan.outbox);
  const context: PipelineContext = {
    env,
    plan,
    reports,
    accounts,
    destinations: [],
    spillers: [],
    consoleStream: options.consoleStream,
  };

  // OTEL_SERVICE_NAME, then service.name in OTEL_RESOURCE_ATTRIBUTES, then the option, then subagent-otel.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': plan.serviceName }))
    .merge(resourceFromAttributes(resourceAttributesOf(env, reports)));

  const traces = buildTracePipelines(context);
  // Runs read from transcripts get ids derived from their names (decision 0093); every other span random ones.
  const stableIds = new StableIdGenerator();
  const tracerProvider = new TracerProvider({
    resource,
    idGenerator: stableIds,
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    // No SDK length limit (explicit, so the environment's cannot apply): the content cap is the content
    // policy's, on content attributes only (JSON kept valid); names, models and hashes are never cut.
    spanLimits: { attributeValueLengthLimit: Infinity, attributeCountLimit: 128 },
    spanProcessors: [...traces.spanProcessors],
  });

  const metrics = buildMetricPipelines(context);
  const meterProvider = new MeterProvider({ resource, readers: [...metrics.readers] });
  const runs = new RunTelemetry({
    tracer: tracerProvider.getTracer(INSTRUMENTATION_SCOPE_NAME),
    meter: meterProvider.getMeter(INSTRUMENTATION_SCOPE_NAME),
    content: plan.content,
    semconv: readSetting(SETTINGS.semconvStability, env, reports),
    stableIds,
    ...((options.teamAttributes ?? readSetting(SETTINGS.teamAttributes, env, reports))
      ? { team: teamAttributes(currentUserName()) }
      : {}),
  });
  accounts.runs = runs;

  for (const box of accounts.outboxes) box.start(); // what earlier processes left goes first, beside this one's work

  const control = new PipelineControl(traces, metrics, accounts, context.spillers);
  const telemetry: Telemetry = {
    runs,
    flush: (timeoutMs) => control.flush(timeoutMs),
    settle: (timeoutMs) => control.settle(timeoutMs),
    outboxes: accounts.outboxes,
    tracerProvider,
    meterProvider,
    content: plan.content,
    describeDestinations: () => [...context.destinations],
    shutdown: (timeoutMs) => control.shutdown(timeoutMs),
  };
  const { prometheus } = metrics;
  const withEndpoint =
    prometheus !== undefined
      ? { ...telemetry, prometheus: { url: prometheus.url, ready: prometheus.ready } }
      : telemetry;
  const outDir = traces.fileDir ?? metrics.fileDir;
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
