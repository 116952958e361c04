/**
 * Turns runs into telemetry: a `RunListener` that opens the `invoke_agent`
 * span when a tracker opens a run and, when it closes, records the run's
 * attributes, one `chat` child span per step, one `execute_tool` child span
 * per tool call, and the run metrics. It never selects output (the
 * `RunRecord` carries the one rule's selection) and never throws into the
 * tracker that calls it: a failure is reported once through the diag logger.
 *
 * Like an OpenTelemetry instrumentation, it writes through the global API
 * (`trace.getTracer`, `metrics.getMeter`) unless a tracer and meter are
 * handed in, binds late (a host SDK started after construction is still
 * used), and parents runs on `context.active()` or a per-tracker context.
 *
 * @module subagent-otel/telemetry/run-telemetry
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  context as contextApi,
  metrics as metricsApi,
  type MeterProvider,
  type TracerProvider,
  SpanStatusCode,
  TraceFlags,
  ValueType,
  defaultTextMapGetter,
  trace,
  type Attributes,
  type Context,
  type Counter,
  type Histogram,
  type HrTime,
  type Meter,
  type Span,
  type SpanContext,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator, millisToHrTime } from '@opentelemetry/core';
import type { RunListener, RunRecord, RunStart, StepRecord, ToolCallRecord } from '../observe/run-record.js';
import { conventionTokenCounts, type RunTokenCounts } from './token-usage.js';
import type { ContentBlock } from '../wire/content.js';
import { comparedLengths, reportedOutputMatches } from '../output/result.js';
import { outputAttributes, resolveContentPolicy, type ContentPolicy } from './content-policy.js';
import { acpRunAttributes, acpToolAttributes, diagnosticAttributes } from './acp-attributes.js';
import { inputAttributes } from './input-messages.js';
import { transcriptRunAttributes } from './transcript-attributes.js';
import { describeError, OnceReporter } from './report-once.js';
import { readSetting, SETTINGS } from './config.js';
import {
  stableChatSpanId,
  stableRunSpanId,
  stableToolSpanId,
  stableTraceId,
  type PlannedIds,
  type StableIdGenerator,
} from './stable-ids.js';
import type { TeamAttributes } from './team-attributes.js';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_TOKEN_TYPE,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOKEN_MODALITY,
  ATTR_SUBAGENT_EMPTY_MESSAGES,
  ATTR_SUBAGENT_FRAME_ERROR,
  ATTR_SUBAGENT_FRAME_ORIGIN,
  ATTR_SUBAGENT_OUTPUT_SOURCE,
  ATTR_SUBAGENT_PARENT_SESSION_ID,
  ATTR_SUBAGENT_PROVIDER,
  ATTR_SUBAGENT_REPORTED_OUTPUT_MATCH,
  ATTR_SUBAGENT_REPORTED_OUTPUT_LENGTH,
  ATTR_SUBAGENT_REPORTED_OUTPUT_COMPARED_LENGTH,
  ATTR_SUBAGENT_RUN_CONTINUES,
  ATTR_SUBAGENT_RUN_ID,
  ATTR_SUBAGENT_SOURCE,
  ATTR_SUBAGENT_STOP_REASON,
  ATTR_SUBAGENT_TELEMETRY_EXPORTER,
  ATTR_SUBAGENT_TELEMETRY_SIGNAL,
  ATTR_SUBAGENT_USAGE_ROLLUP,
  AGENT_DURATION_BUCKETS,
  CALL_COUNT_BUCKETS,
  DURATION_BUCKETS,
  ERROR_TYPE_VALUE_TOOL_ERROR,
  FINISH_REASON_VALUE_CANCELLED,
  FINISH_REASON_VALUE_CONTENT_FILTER,
  FINISH_REASON_VALUE_ERROR,
  FINISH_REASON_VALUE_LENGTH,
  FINISH_REASON_VALUE_STOP,
  FINISH_REASON_VALUE_TOOL_CALLS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  GEN_AI_TOKEN_MODALITY_VALUE_UNKNOWN,
  GEN_AI_TOKEN_TYPE_VALUE_INPUT,
  GEN_AI_TOKEN_TYPE_VALUE_OUTPUT,
  INSTRUMENTATION_SCOPE_NAME,
  METRIC_GEN_AI_CLIENT_INFERENCE_OPERATION_INPUT_TOKENS,
  METRIC_GEN_AI_CLIENT_INFERENCE_OPERATION_OUTPUT_TOKENS,
  METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_CACHE_READ_INPUT_TOKENS,
  METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_CACHE_WRITE_INPUT_TOKENS,
  METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_INPUT_TOKENS,
  METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_OUTPUT_TOKENS,
  METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_REASONING_OUTPUT_TOKENS,
  METRIC_GEN_AI_CLIENT_OPERATION_DURATION,
  METRIC_GEN_AI_CLIENT_TOKEN_USAGE,
  METRIC_GEN_AI_EXECUTE_TOOL_DURATION,
  METRIC_GEN_AI_INVOKE_AGENT_DURATION,
  METRIC_GEN_AI_INVOKE_AGENT_INFERENCE_CALLS,
  METRIC_GEN_AI_INVOKE_AGENT_TOOL_CALLS,
  METRIC_SUBAGENT_FRAMES_MALFORMED,
  METRIC_SUBAGENT_OUTPUT_MISMATCHES,
  METRIC_SUBAGENT_RUNS,
  METRIC_SUBAGENT_COST_USD,
  METRIC_SUBAGENT_TELEMETRY_DROPPED,
  SPAN_NAME_CHAT,
  SPAN_NAME_EXECUTE_TOOL,
  SPAN_NAME_INVOKE_AGENT,
  STOP_REASON_VALUE_ABORTED,
  STOP_REASON_VALUE_COMPLETED,
  STOP_REASON_VALUE_UNKNOWN,
  UNIT_USD,
  COST_CURRENCY_USD,
  STOP_REASON_VALUE_ERROR,
  STOP_REASON_VALUE_MAX_TOKENS,
  STOP_REASON_VALUE_REFUSAL,
  TOKEN_USAGE_BUCKETS,
  UNIT_FRAMES,
  UNIT_INFERENCE_CALLS,
  UNIT_ITEMS,
  UNIT_RUNS,
  UNIT_SECONDS,
  UNIT_TOKENS,
  UNIT_TOOL_CALLS,
  usageAttributeNames,
  type SemconvStability,
  type UsageAttributeNames,
} from './semconv.js';

/**
 * What a `RunTelemetry` writes through. Every field is optional: without
 * them it behaves like an OpenTelemetry instrumentation inside a host that
 * runs an SDK (see `RunTelemetry`).
 */
export interface RunTelemetryOptions {
  /** Tracer of every span. Default: the global tracer provider's, looked up at each run (late bound). */
  readonly tracer?: Tracer;
  /** Meter of every instrument. Default: the global meter provider's, re-bound when the global provider changes. */
  readonly meter?: Meter;
  /** Content policy. Default: `resolveContentPolicy(undefined, process.env)`, read once at construction. */
  readonly content?: ContentPolicy;
  /**
   * Which GenAI names to emit (decisions 0070, 0121). Default: `OTEL_SEMCONV_STABILITY_OPT_IN`
   * of `process.env`, read once at construction (`previous` when it lists
   * `gen_ai_previous`, else `latest`: the names of v0.1.0).
   */
  readonly semconv?: SemconvStability;
  /**
   * The id generator of the tracer provider behind `tracer`, when it is a
   * {@link StableIdGenerator}: runs that name a `traceKey` then get ids
   * derived from their run ids (decision 0093). `createTelemetry` passes its
   * own. Default none: every span gets the provider's ids.
   */
  readonly stableIds?: StableIdGenerator;
  /** The team attributes of a run's workspace (decision 0124), on its span and its run and cost metrics. Default: none. */
  readonly team?: TeamAttributes;
}

/** The run instruments, created together from one meter for one `SemconvStability`. */
interface Instruments {
  readonly runs: Counter;
  readonly agentDuration: Histogram;
  readonly toolDuration: Histogram;
  readonly mismatches: Counter;
  readonly malformed: Counter;
  readonly dropped: Counter;
  readonly cost: Counter;
  /** Previous names only: `gen_ai.client.token.usage`, one point per token type per run. */
  readonly tokenUsage?: Histogram;
  /** Latest names (v0.1.0, the default) only. */
  readonly latest?: LatestInstruments;
}

/** The instruments only the latest names (v0.1.0) define. */
interface LatestInstruments {
  readonly clientDuration: Histogram;
  readonly usageInput: Counter;
  readonly usageOutput: Counter;
  readonly usageCacheRead: Counter;
  readonly usageCacheWrite: Counter;
  readonly usageReasoning: Counter;
  readonly operationInput: Histogram;
  readonly operationOutput: Histogram;
  readonly inferenceCalls: Histogram;
  readonly toolCalls: Histogram;
}

function tokenCounter(meter: Meter, name: string, description: string): Counter {
  return meter.createCounter(name, { unit: UNIT_TOKENS, description, valueType: ValueType.INT });
}

function tokenHistogram(meter: Meter, name: string, description: string): Histogram {
  return meter.createHistogram(name, {
    unit: UNIT_TOKENS,
    description,
    valueType: ValueType.INT,
    advice: { explicitBucketBoundaries: [...TOKEN_USAGE_BUCKETS] },
  });
}

function createLatestInstruments(meter: Meter): LatestInstruments {
  const calls = (name: string, unit: string, description: string): Histogram =>
    meter.createHistogram(name, {
      unit,
      description,
      valueType: ValueType.INT,
      advice: { explicitBucketBoundaries: [...CALL_COUNT_BUCKETS] },
    });
  return {
    clientDuration: meter.createHistogram(METRIC_GEN_AI_CLIENT_OPERATION_DURATION, {
      unit: UNIT_SECONDS,
      description: 'Client-side duration of a delegated run in another process (equal to its invoke_agent span).',
      valueType: ValueType.DOUBLE,
      // The run buckets, not the model-call advice of this metric: the dashboard adds it to gen_ai.invoke_agent.duration
      // bucket by bucket, which needs one layout (decision 0095).
      advice: { explicitBucketBoundaries: [...AGENT_DURATION_BUCKETS] },
    }),
    usageInput: tokenCounter(
      meter,
      METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_INPUT_TOKENS,
      'Input tokens used, cached input included.',
    ),
    usageOutput: tokenCounter(
      meter,
      METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_OUTPUT_TOKENS,
      'Output tokens used, reasoning included.',
    ),
    usageCacheRead: tokenCounter(
      meter,
      METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_CACHE_READ_INPUT_TOKENS,
      'Input tokens served from the provider cache.',
    ),
    usageCacheWrite: tokenCounter(
      meter,
      METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_CACHE_WRITE_INPUT_TOKENS,
      'Input tokens written to the provider cache.',
    ),
    usageReasoning: tokenCounter(
      meter,
      METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_REASONING_OUTPUT_TOKENS,
      'Output tokens spent on reasoning.',
    ),
    operationInput: tokenHistogram(
      meter,
      METRIC_GEN_AI_CLIENT_INFERENCE_OPERATION_INPUT_TOKENS,
      'Input tokens per model call.',
    ),
    operationOutput: tokenHistogram(
      meter,
      METRIC_GEN_AI_CLIENT_INFERENCE_OPERATION_OUTPUT_TOKENS,
      'Output tokens per model call.',
    ),
    inferenceCalls: calls(
      METRIC_GEN_AI_INVOKE_AGENT_INFERENCE_CALLS,
      UNIT_INFERENCE_CALLS,
      'Model calls made during one delegated run.',
    ),
    toolCalls: calls(
      METRIC_GEN_AI_INVOKE_AGENT_TOOL_CALLS,
      UNIT_TOOL_CALLS,
      'Tool calls made during one delegated run.',
    ),
  };
}

function createInstruments(meter: Meter, stability: SemconvStability): Instruments {
  const latest = stability === 'latest';
  return {
    runs: meter.createCounter(METRIC_SUBAGENT_RUNS, {
      unit: UNIT_RUNS,
      description: 'Finished delegated runs by stop reason, agent name, provider and output source.',
      valueType: ValueType.INT,
    }),
    ...(latest
      ? { latest: createLatestInstruments(meter) }
      : {
          tokenUsage: tokenHistogram(
            meter,
            METRIC_GEN_AI_CLIENT_TOKEN_USAGE,
            'Number of input and output tokens used per run.',
          ),
        }),
    agentDuration: meter.createHistogram(METRIC_GEN_AI_INVOKE_AGENT_DURATION, {
      unit: UNIT_SECONDS,
      description: 'End-to-end duration of a delegated run (equal to its invoke_agent span).',
      valueType: ValueType.DOUBLE,
      // One layout in both naming modes, so series of upgraded and not yet switched observers add up (decision 0095).
      advice: { explicitBucketBoundaries: [...AGENT_DURATION_BUCKETS] },
    }),
    toolDuration: meter.createHistogram(METRIC_GEN_AI_EXECUTE_TOOL_DURATION, {
      unit: UNIT_SECONDS,
      description: 'Duration of a tool call inside a delegated run (equal to its execute_tool span).',
      valueType: ValueType.DOUBLE,
      advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
    }),
    mismatches: meter.createCounter(METRIC_SUBAGENT_OUTPUT_MISMATCHES, {
      unit: UNIT_RUNS,
      description: 'Runs whose runtime-reported output differs from the selected output.',
      valueType: ValueType.INT,
    }),
    malformed: meter.createCounter(METRIC_SUBAGENT_FRAMES_MALFORMED, {
      unit: UNIT_FRAMES,
      description: 'Frames or records that failed validation and were skipped.',
      valueType: ValueType.INT,
    }),
    dropped: meter.createCounter(METRIC_SUBAGENT_TELEMETRY_DROPPED, {
      unit: UNIT_ITEMS,
      description: 'Spans or metric batches an exporter failed to deliver.',
      valueType: ValueType.INT,
    }),
    cost: meter.createCounter(METRIC_SUBAGENT_COST_USD, {
      unit: UNIT_USD,
      description:
        'What finished runs cost in US dollars, priced from a maintained price table by the model of each call.',
      valueType: ValueType.DOUBLE,
    }),
  };
}

/** Where a run's span parents when it has no parent run and no `traceparent`. */
type ParentSource = () => Context;

/** Which signal an exporter failed to deliver. */
export type TelemetrySignal = 'traces' | 'metrics';

/**
 * The conventions' finish reason for a run's stop reason.
 * @returns `stop` for `completed`, `length` for `max-tokens`, `cancelled` for
 *   `aborted`, `error` for `error`, `content_filter` for `refusal`; any other
 *   stop reason verbatim.
 */
export function finishReasonOfStopReason(stopReason: string): string {
  switch (stopReason) {
    case STOP_REASON_VALUE_COMPLETED:
      return FINISH_REASON_VALUE_STOP;
    case STOP_REASON_VALUE_MAX_TOKENS:
      return FINISH_REASON_VALUE_LENGTH;
    case STOP_REASON_VALUE_ABORTED:
      return FINISH_REASON_VALUE_CANCELLED;
    case STOP_REASON_VALUE_ERROR:
      return FINISH_REASON_VALUE_ERROR;
    case STOP_REASON_VALUE_REFUSAL:
      return FINISH_REASON_VALUE_CONTENT_FILTER;
    default:
      return stopReason;
  }
}

/**
 * The conventions' finish reason for a model call's dsh finish kind.
 * @returns `stop`, `tool_call`, `length`, `cancelled`, `error` for `stop`,
 *   `tool-calls`, `max-tokens`, `aborted`, `error`; any other kind verbatim.
 */
export function finishReasonOfStepFinish(kind: string): string {
  switch (kind) {
    case 'stop':
      return FINISH_REASON_VALUE_STOP;
    case 'tool-calls':
      return FINISH_REASON_VALUE_TOOL_CALLS;
    case 'max-tokens':
      return FINISH_REASON_VALUE_LENGTH;
    case 'aborted':
      return FINISH_REASON_VALUE_CANCELLED;
    case 'error':
      return FINISH_REASON_VALUE_ERROR;
    default:
      return kind;
  }
}

/**
 * Token attributes in the conventions' accounting (`conventionTokenCounts`,
 * docs/PROTOCOLS.md section 1) under `names`: input is the sum of the
 * disjoint input buckets, output is `outputTokens` (reasoning inside it);
 * the cache and reasoning attributes give their parts, when non-zero.
 */
function usageAttributes(usage: RunTokenCounts, names: UsageAttributeNames): Attributes {
  const tokens = conventionTokenCounts(usage);
  const attributes: Attributes = { [names.input]: tokens.input, [names.output]: tokens.output };
  if (tokens.cacheRead > 0) attributes[names.cacheRead] = tokens.cacheRead;
  if (tokens.cacheWrite > 0) attributes[names.cacheWrite] = tokens.cacheWrite;
  if (tokens.reasoning > 0) attributes[names.reasoning] = tokens.reasoning;
  return attributes;
}

/**
 * Which spans of a run count its token usage once, for the per-call metrics
 * of the latest names (decision 0071): the `chat` spans when any step
 * reported usage, else the `invoke_agent` span (runs whose usage is known
 * only per run: ACP, session logs without steps). Spans do not follow it:
 * the `invoke_agent` span always carries the run's usage (decision 0071,
 * 2026-12 update), and `subagent.usage.rollup` marks it when the `chat`
 * spans below it carry the same tokens.
 */
export function usageCarrier(record: Pick<RunRecord, 'usage' | 'steps'>): 'chat' | 'invoke_agent' | 'none' {
  if (record.steps.some((step) => step.usage !== undefined)) return 'chat';
  return record.usage.reported ? 'invoke_agent' : 'none';
}

/** Sets `key` only when `value` is a non-empty string. */
function putString(attributes: Attributes, key: string, value: string | undefined): void {
  if (value !== undefined && value !== '') attributes[key] = value;
}

/** Identity attributes of a run, as far as `start` knows them. */
function identityAttributes(start: RunStart): Attributes {
  const attributes: Attributes = {
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
    [ATTR_GEN_AI_AGENT_ID]: start.runId,
    [ATTR_GEN_AI_AGENT_NAME]: start.agentName,
    [ATTR_SUBAGENT_RUN_ID]: start.runId,
    [ATTR_SUBAGENT_SOURCE]: start.source,
  };
  putString(attributes, ATTR_GEN_AI_CONVERSATION_ID, start.sessionId);
  putString(attributes, ATTR_GEN_AI_PROVIDER_NAME, start.provider);
  // The subagent provider (`spawn`) of an in-runtime child is no model provider: it goes here, never in gen_ai.provider.name.
  putString(attributes, ATTR_SUBAGENT_PROVIDER, start.subagentProvider ?? start.provider);
  putString(attributes, ATTR_GEN_AI_REQUEST_MODEL, start.model);
  putString(attributes, ATTR_SUBAGENT_PARENT_SESSION_ID, start.parentSessionId);
  putString(attributes, ATTR_SUBAGENT_RUN_CONTINUES, start.continuesRunId);
  return attributes;
}

/** CLIENT for a run in another process (proxy, SDK backend, ACP), INTERNAL for a run inside the process of its parent span. */
function spanKindOf(start: RunStart): SpanKind {
  return start.inProcess === true ? SpanKind.INTERNAL : SpanKind.CLIENT;
}

function hrTimeOf(epochMillis: number): HrTime {
  // Never hand the SDK a bare number: it reads numbers below the process's
  // time origin as performance offsets, which would misplace replayed runs.
  return millisToHrTime(epochMillis);
}

/** Where a span lies in time, in epoch milliseconds; `end >= start`. */
interface TimeWindow {
  readonly start: number;
  readonly end: number;
}

/**
 * A run span's window: from its start to its end, never ending before it
 * starts. A run's start and end can come from two clocks (the observer's
 * arrival time of the prompt, the runtime's `time` of its last event), each in
 * whole milliseconds, so a short run can appear to end before it began. Pure.
 */
export function runWindow(start: number, end: number): TimeWindow {
  return { start, end: Math.max(start, end) };
}

/**
 * A step's or tool call's window placed inside its run's: the runtime stamps
 * steps with its own clock, which can read a few milliseconds before the
 * observer saw the prompt, and a child span outside its parent misdraws every
 * trace view. Times inside the run are returned unchanged. Pure.
 */
export function childWindow(run: TimeWindow, start: number, end: number): TimeWindow {
  const from = Math.min(Math.max(start, run.start), run.end);
  return { start: from, end: Math.min(Math.max(end, from), run.end) };
}

/** The default parent of a run: the active context where the tracker called in. */
const activeContext: ParentSource = () => contextApi.active();

interface OpenRun {
  readonly span: Span;
  readonly startTime: number;
}

/** How many closed runs keep their span context for late children. */
const CLOSED_RUN_MEMORY = 1024;

/**
 * The telemetry sink for runs. Spans and metrics as docs/TELEMETRY.md's
 * tables specify; every method returns normally whatever happens inside.
 *
 * With no options it is an instrumentation: spans go to the global tracer
 * provider and metrics to the global meter provider, whichever the host
 * registers (before or after construction), runs nest under the host's
 * active span. `createTelemetry` hands in its own tracer and meter instead.
 *
 * @example
 * const runs = new RunTelemetry();                  // inside a host running NodeSDK
 * const tracker = new SdkTracker(runs, { agentName: 'researcher' });
 */
export class RunTelemetry implements RunListener {
  readonly #fixedTracer: Tracer | undefined;
  #tracerProvider: TracerProvider | undefined;
  readonly #content: ContentPolicy;
  readonly #semconv: SemconvStability;
  readonly #usageNames: UsageAttributeNames;
  readonly #stableIds: StableIdGenerator | undefined;
  readonly #team: TeamAttributes | undefined;
  readonly #open = new Map<string, OpenRun>();
  readonly #closed = new Map<string, SpanContext>();
  readonly #propagator = new W3CTraceContextPropagator();
  readonly #reports = new OnceReporter();
  #fixedInstruments: Instruments | undefined;
  #meterProvider: MeterProvider | undefined;
  #bound: { readonly provider: MeterProvider; readonly instruments: Instruments } | undefined;

  /**
   * @param options tracer, meter and content policy; each defaults as
   *   `RunTelemetryOptions` says. Creates no instrument on the global meter
   *   yet (that happens on first use), so constructing before the host's SDK
   *   starts loses nothing.
   */
  constructor(options: RunTelemetryOptions = {}) {
    this.#fixedTracer = options.tracer;
    this.#content = options.content ?? resolveContentPolicy(undefined, process.env);
    this.#semconv = options.semconv ?? readSetting(SETTINGS.semconvStability, process.env, this.#reports);
    this.#usageNames = usageAttributeNames(this.#semconv);
    this.#stableIds = options.stableIds;
    this.#team = options.team;
    if (options.meter !== undefined) this.#fixedInstruments = createInstruments(options.meter, this.#semconv);
  }

  /**
   * Writes spans through `provider` from now on instead of the global one
   * (the instrumentation convention). Ignored when a tracer was handed to the
   * constructor.
   */
  setTracerProvider(provider: TracerProvider): void {
    this.#tracerProvider = provider;
  }

  /**
   * Records metrics through `provider` from now on instead of the global one
   * (the instrumentation convention). Ignored when a meter was handed to the
   * constructor.
   */
  setMeterProvider(provider: MeterProvider): void {
    this.#meterProvider = provider;
  }

  /**
   * A listener for one tracker whose runs, when they have neither a parent
   * run nor a `traceparent`, nest under `parent` (a context, or a function
   * asked at each run start) instead of `context.active()`. Everything else
   * (spans, metrics, parent-run nesting) is shared with this `RunTelemetry`.
   *
   * @example
   * tracer.startActiveSpan('agent-loop', (span) => {
   *   const tracker = new SdkTracker(runs.withParent(context.active()));
   * });
   */
  withParent(parent: Context | (() => Context)): RunListener {
    const source: ParentSource = typeof parent === 'function' ? parent : () => parent;
    return {
      onRunStart: (start) => this.#onRunStart(start, source),
      onRunEnd: (record) => this.#onRunEnd(record, source),
      onMalformed: (origin, error) => this.onMalformed(origin, error),
    };
  }

  #tracer(): Tracer {
    if (this.#fixedTracer !== undefined) return this.#fixedTracer;
    return (this.#tracerProvider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_SCOPE_NAME);
  }

  /** The instruments of the meter in force, created on first use and again whenever the global provider changes. */
  #instruments(): Instruments {
    if (this.#fixedInstruments !== undefined) return this.#fixedInstruments;
    const provider = this.#meterProvider ?? metricsApi.getMeterProvider();
    if (this.#bound?.provider !== provider)
      this.#bound = {
        provider,
        instruments: createInstruments(provider.getMeter(INSTRUMENTATION_SCOPE_NAME), this.#semconv),
      };
    return this.#bound.instruments;
  }

  /**
   * Starts the run's `invoke_agent` span at `start.startTime`. Its parent is
   * the span of `start.parentRunId` when that run is open (or closed
   * recently), else the W3C `traceparent`/`tracestate` handed in, else the
   * context active where the tracker calls in (`context.active()`: the host's
   * current span when it runs an SDK with a context manager, else none).
   * A second start for an open run id is ignored. Never throws.
   */
  onRunStart(start: RunStart): void {
    this.#onRunStart(start, activeContext);
  }

  #onRunStart(start: RunStart, parent: ParentSource): void {
    this.#guard('onRunStart', () => {
      if (this.#open.has(start.runId)) return;
      this.#open.set(start.runId, this.#startRun(start, parent));
    });
  }

  /**
   * Completes the run: sets every attribute of the contract on its span
   * (starting it now at `record.startTime` when no `onRunStart` came), adds
   * the `chat` and `execute_tool` child spans, sets ERROR status and
   * `error.type` (the stop reason) for every run that did not complete, ends
   * the span at `record.endTime`, and records the run metrics. Never throws.
   */
  onRunEnd(record: RunRecord): void {
    this.#onRunEnd(record, activeContext);
  }

  #onRunEnd(record: RunRecord, parent: ParentSource): void {
    this.#guard('onRunEnd', () => {
      const open = this.#open.get(record.runId) ?? this.#startRun(record, parent);
      this.#open.delete(record.runId);
      this.#rememberClosed(record.runId, open.span.spanContext());
      this.#endRun(record, open);
    });
  }

  /** Counts one malformed frame by its origin and error code. Never throws. */
  onMalformed(origin: string, error: { readonly code: string; readonly message: string }): void {
    this.#guard('onMalformed', () => {
      this.#instruments().malformed.add(1, {
        [ATTR_SUBAGENT_FRAME_ORIGIN]: origin,
        [ATTR_SUBAGENT_FRAME_ERROR]: error.code,
      });
    });
  }

  /**
   * Counts telemetry an exporter failed to deliver (`count` spans, or metric
   * batches) into `subagent.telemetry.dropped`. Called by the exporter setup;
   * never throws.
   */
  recordDropped(signal: TelemetrySignal, exporter: string, count: number): void {
    this.#guard('recordDropped', () => {
      if (count > 0)
        this.#instruments().dropped.add(count, {
          [ATTR_SUBAGENT_TELEMETRY_SIGNAL]: signal,
          [ATTR_SUBAGENT_TELEMETRY_EXPORTER]: exporter,
        });
    });
  }

  #guard(method: string, body: () => void): void {
    try {
      body();
    } catch (error) {
      try {
        this.#reports.report(
          'error',
          `${method}:${describeError(error)}`,
          `RunTelemetry.${method} failed and was skipped: ${describeError(error)}`,
        );
      } catch {
        // Reporting itself failed (exotic error object): nothing more can be done without throwing into the tracker.
      }
    }
  }

  #parentContext(start: RunStart, fallback: ParentSource): Context {
    if (start.parentRunId !== undefined && start.traceKey !== undefined && this.#stableIds !== undefined) {
      // Stable ids: the parent's span (or its tool call's) has a derived id, whether or not it was started here.
      const spanId =
        start.parentToolCallId !== undefined
          ? stableToolSpanId(start.parentRunId, start.parentToolCallId)
          : stableRunSpanId(start.parentRunId);
      return trace.setSpanContext(ROOT_CONTEXT, {
        traceId: stableTraceId(start.traceKey),
        spanId,
        traceFlags: TraceFlags.SAMPLED,
        isRemote: false,
      });
    }
    if (start.parentRunId !== undefined) {
      const parent = this.#open.get(start.parentRunId)?.span.spanContext() ?? this.#closed.get(start.parentRunId);
      if (parent !== undefined) return trace.setSpanContext(ROOT_CONTEXT, parent);
    }
    if (start.traceparent !== undefined) {
      const carrier: Record<string, string> = { traceparent: start.traceparent };
      if (start.tracestate !== undefined) carrier['tracestate'] = start.tracestate;
      const extracted = this.#propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
      if (trace.getSpanContext(extracted) !== undefined) return extracted;
      this.#reports.report(
        'warn',
        'traceparent-invalid',
        `run ${start.runId}: traceparent is not a valid W3C trace context; the run span starts a new trace`,
      );
    }
    return fallback();
  }

  #startRun(start: RunStart, parent: ParentSource): OpenRun {
    const name = start.agentName !== '' ? `${SPAN_NAME_INVOKE_AGENT} ${start.agentName}` : SPAN_NAME_INVOKE_AGENT;
    const context = this.#parentContext(start, parent);
    const span = this.#startSpan(
      this.#plannedIds(start, () => ({
        spanId: stableRunSpanId(start.runId),
        traceId: stableTraceId(start.traceKey ?? start.runId),
      })),
      name,
      { kind: spanKindOf(start), startTime: hrTimeOf(start.startTime), attributes: identityAttributes(start) },
      context,
    );
    return { span, startTime: start.startTime };
  }

  /** The ids planned for a span of `run`, when the run names a trace key and the pipeline takes planned ids. */
  #plannedIds(run: Pick<RunStart, 'traceKey'>, ids: () => PlannedIds): PlannedIds | undefined {
    return run.traceKey !== undefined && this.#stableIds !== undefined ? ids() : undefined;
  }

  /** Starts one span, with `planned` ids when given. */
  #startSpan(planned: PlannedIds | undefined, name: string, options: SpanOptions, context: Context): Span {
    const tracer = this.#tracer();
    if (planned === undefined || this.#stableIds === undefined) return tracer.startSpan(name, options, context);
    return this.#stableIds.withPlannedIds(planned, () => tracer.startSpan(name, options, context));
  }

  /**
   * The span context of a run's `invoke_agent` span: open, or among the last
   * closed ones remembered. @returns `undefined` for a run never seen or long
   * forgotten. Never throws.
   */
  spanContextOf(runId: string): SpanContext | undefined {
    return this.#open.get(runId)?.span.spanContext() ?? this.#closed.get(runId);
  }

  #rememberClosed(runId: string, spanContext: SpanContext): void {
    this.#closed.delete(runId);
    this.#closed.set(runId, spanContext);
    if (this.#closed.size > CLOSED_RUN_MEMORY) {
      const oldest = this.#closed.keys().next();
      if (oldest.done !== true) this.#closed.delete(oldest.value);
    }
  }

  #endRun(record: RunRecord, open: OpenRun): void {
    const { span } = open;
    const completed = record.stopReason === STOP_REASON_VALUE_COMPLETED;
    const finishReason = finishReasonOfStopReason(record.stopReason);
    const attributes: Attributes = {
      ...identityAttributes(record),
      [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: [finishReason],
      [ATTR_SUBAGENT_STOP_REASON]: record.stopReason,
      [ATTR_SUBAGENT_EMPTY_MESSAGES]: record.emptyMessages,
      ...this.#team?.(record.workspace),
    };
    // The run span says what the parent received, usage included (decision 0071); the chat spans keep each call's share.
    const carrier = usageCarrier(record);
    if (record.usage.reported) Object.assign(attributes, usageAttributes(record.usage, this.#usageNames));
    if (carrier === 'chat') attributes[ATTR_SUBAGENT_USAGE_ROLLUP] = true;
    const acp = acpRunAttributes(record, this.#content);
    Object.assign(attributes, acp.attributes);
    const diagnostic = diagnosticAttributes(record, this.#content);
    Object.assign(attributes, diagnostic.attributes);
    let mismatch = false;
    try {
      Object.assign(attributes, outputAttributes(record.output, record.outputSource, this.#content, finishReason));
      if (record.reported !== undefined) {
        const match = reportedOutputMatches(record.reported.output, record.output, record.reported.compare);
        attributes[ATTR_SUBAGENT_REPORTED_OUTPUT_MATCH] = match;
        mismatch = !match;
        if (!match) {
          const lengths = comparedLengths(record.reported.output, record.output, record.reported.compare);
          attributes[ATTR_SUBAGENT_REPORTED_OUTPUT_LENGTH] = lengths.reported;
          attributes[ATTR_SUBAGENT_REPORTED_OUTPUT_COMPARED_LENGTH] = lengths.selected;
        }
      }
    } catch (error) {
      // An output that cannot be serialized (never from a validated frame) loses its output
      // attributes, not the run: the span still ends with everything else.
      this.#reports.report(
        'error',
        `output:${describeError(error)}`,
        `run ${record.runId}: output attributes skipped: ${describeError(error)}`,
      );
    }
    try {
      Object.assign(attributes, inputAttributes(record.prompt, this.#content));
    } catch (error) {
      // Same containment as the output: the prompt is lost, the run is not.
      this.#reports.report(
        'error',
        `input:${describeError(error)}`,
        `run ${record.runId}: input attributes skipped: ${describeError(error)}`,
      );
    }
    Object.assign(attributes, transcriptRunAttributes(record));
    // A run the file says nothing about (`unknown`) did not fail as far as anyone knows: no error status (decision 0093).
    const failed = !completed && record.stopReason !== STOP_REASON_VALUE_UNKNOWN;
    if (failed) attributes[ATTR_ERROR_TYPE] = record.stopReason;
    span.setAttributes(attributes);
    if (failed)
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message:
          diagnostic.statusSuffix !== undefined
            ? `${acp.statusDescription}; ${diagnostic.statusSuffix}`
            : acp.statusDescription,
      });

    const window = runWindow(open.startTime, record.endTime);
    const runContext = trace.setSpan(ROOT_CONTEXT, span);
    record.steps.forEach((step, index) => this.#stepSpan(step, index, record, window, runContext, carrier === 'chat'));
    for (const call of record.toolCalls) this.#toolSpan(call, record, window, runContext);
    span.end(hrTimeOf(window.end));

    this.#recordRunMetrics(record, window, mismatch);
  }

  #stepSpan(
    step: StepRecord,
    index: number,
    record: RunRecord,
    run: TimeWindow,
    parent: Context,
    carriesUsage: boolean,
  ): void {
    const times = childWindow(run, step.startTime, step.endTime);
    const model = step.model ?? record.model;
    const attributes: Attributes = { [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT };
    putString(attributes, ATTR_GEN_AI_PROVIDER_NAME, record.provider);
    putString(attributes, ATTR_GEN_AI_REQUEST_MODEL, model);
    if (carriesUsage && step.usage !== undefined)
      Object.assign(attributes, usageAttributes(step.usage, this.#usageNames));
    if (step.finishReason !== undefined)
      attributes[ATTR_GEN_AI_RESPONSE_FINISH_REASONS] = [finishReasonOfStepFinish(step.finishReason)];
    const failed = step.finishReason === 'error' || step.finishReason === 'aborted';
    if (failed) attributes[ATTR_ERROR_TYPE] = step.finishReason;
    const name = model !== undefined && model !== '' ? `${SPAN_NAME_CHAT} ${model}` : SPAN_NAME_CHAT;
    const planned = this.#plannedIds(record, () => ({ spanId: stableChatSpanId(record.runId, index) }));
    const span = this.#startSpan(
      planned,
      name,
      { kind: SpanKind.CLIENT, startTime: hrTimeOf(times.start), attributes },
      parent,
    );
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: `finish reason: ${String(step.finishReason)}` });
    span.end(hrTimeOf(times.end));
  }

  #toolSpan(call: ToolCallRecord, record: RunRecord, run: TimeWindow, parent: Context): void {
    const times = childWindow(run, call.startTime, call.endTime ?? record.endTime);
    // An unnamed tool (an ACP agent that sends only a title) has no gen_ai.tool.name: titles are unbounded (decision 0048).
    const attributes: Attributes = { [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL };
    putString(attributes, ATTR_GEN_AI_TOOL_NAME, call.name);
    attributes[ATTR_GEN_AI_TOOL_CALL_ID] = call.callId;
    Object.assign(attributes, acpToolAttributes(call, this.#content));
    const metricAttributes: Attributes = { [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL };
    putString(metricAttributes, ATTR_GEN_AI_TOOL_NAME, call.name);
    if (this.#semconv === 'latest') {
      // v0.1.0 names the agent that ran the tool on its span and its duration (#322).
      putString(attributes, ATTR_GEN_AI_AGENT_NAME, record.agentName);
      putString(metricAttributes, ATTR_GEN_AI_AGENT_NAME, record.agentName);
    }
    const errorType = call.isError
      ? call.errorType !== undefined && call.errorType !== ''
        ? call.errorType
        : ERROR_TYPE_VALUE_TOOL_ERROR
      : undefined;
    if (errorType !== undefined) {
      attributes[ATTR_ERROR_TYPE] = errorType;
      metricAttributes[ATTR_ERROR_TYPE] = errorType;
    }
    // The later part of a run takes that run's tool span ids: what it delegates names that run as its parent.
    const planned = this.#plannedIds(record, () => ({
      spanId: stableToolSpanId(record.continuesRunId ?? record.runId, call.callId),
    }));
    const name =
      call.name !== undefined && call.name !== '' ? `${SPAN_NAME_EXECUTE_TOOL} ${call.name}` : SPAN_NAME_EXECUTE_TOOL;
    const span = this.#startSpan(
      planned,
      name,
      { kind: SpanKind.INTERNAL, startTime: hrTimeOf(times.start), attributes },
      parent,
    );
    if (errorType !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: `tool error: ${errorType}` });
    span.end(hrTimeOf(times.end));
    this.#instruments().toolDuration.record((times.end - times.start) / 1000, metricAttributes);
  }

  #recordRunMetrics(record: RunRecord, window: TimeWindow, mismatch: boolean): void {
    const instruments = this.#instruments();
    const completed = record.stopReason === STOP_REASON_VALUE_COMPLETED;
    const agent: Attributes = { [ATTR_GEN_AI_AGENT_NAME]: record.agentName, ...this.#team?.(record.workspace) };
    putString(agent, ATTR_GEN_AI_PROVIDER_NAME, record.provider);

    instruments.runs.add(1, {
      ...agent,
      [ATTR_SUBAGENT_STOP_REASON]: record.stopReason,
      [ATTR_SUBAGENT_OUTPUT_SOURCE]: record.outputSource,
    });

    const operation: Attributes = { [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT };
    putString(operation, ATTR_GEN_AI_PROVIDER_NAME, record.provider);
    putString(operation, ATTR_GEN_AI_REQUEST_MODEL, record.model);

    const duration: Attributes = { ...operation, [ATTR_GEN_AI_AGENT_NAME]: record.agentName };
    if (!completed && record.stopReason !== STOP_REASON_VALUE_UNKNOWN) duration[ATTR_ERROR_TYPE] = record.stopReason;
    const seconds = (window.end - window.start) / 1000;
    const latest = instruments.latest;
    // v0.1.0: gen_ai.invoke_agent.duration is the in-process measure; a run in another process gets the client-side one.
    if (latest !== undefined && spanKindOf(record) === SpanKind.CLIENT) latest.clientDuration.record(seconds, duration);
    else instruments.agentDuration.record(seconds, duration);

    if (instruments.tokenUsage !== undefined && record.usage.reported) {
      const tokens = conventionTokenCounts(record.usage);
      instruments.tokenUsage.record(tokens.input, {
        ...operation,
        [ATTR_GEN_AI_TOKEN_TYPE]: GEN_AI_TOKEN_TYPE_VALUE_INPUT,
      });
      instruments.tokenUsage.record(tokens.output, {
        ...operation,
        [ATTR_GEN_AI_TOKEN_TYPE]: GEN_AI_TOKEN_TYPE_VALUE_OUTPUT,
      });
    }
    if (latest !== undefined) this.#recordLatestUsage(latest, record);
    if (mismatch) instruments.mismatches.add(1, agent);
    if (record.cost !== undefined && record.cost.currency === COST_CURRENCY_USD && record.cost.pricedCalls > 0) {
      instruments.cost.add(record.cost.amount, { ...agent, [ATTR_SUBAGENT_STOP_REASON]: record.stopReason });
    }
  }

  /**
   * Latest names (v0.1.0): the usage counters and per-call histograms once per model
   * call (`chat` step) that reported usage, or once for the run when only the
   * run's usage is known (its counters, no per-call histogram: the total of
   * several calls is no call's size); the run's call counts.
   */
  #recordLatestUsage(latest: LatestInstruments, record: RunRecord): void {
    const carrier = usageCarrier(record);
    const base = (model: string | undefined, operationName: string): Attributes => {
      const attributes: Attributes = { [ATTR_GEN_AI_OPERATION_NAME]: operationName };
      putString(attributes, ATTR_GEN_AI_PROVIDER_NAME, record.provider);
      putString(attributes, ATTR_GEN_AI_REQUEST_MODEL, model);
      return attributes;
    };
    const count = (usage: RunTokenCounts, attributes: Attributes): void => {
      const tokens = conventionTokenCounts(usage);
      const withModality = { ...attributes, [ATTR_GEN_AI_TOKEN_MODALITY]: GEN_AI_TOKEN_MODALITY_VALUE_UNKNOWN };
      latest.usageInput.add(tokens.input, withModality);
      latest.usageOutput.add(tokens.output, withModality);
      latest.usageCacheRead.add(tokens.cacheRead, withModality);
      latest.usageCacheWrite.add(tokens.cacheWrite, withModality);
      latest.usageReasoning.add(tokens.reasoning, withModality);
    };
    if (carrier === 'chat') {
      for (const step of record.steps) {
        if (step.usage === undefined) continue;
        const attributes = base(step.model ?? record.model, GEN_AI_OPERATION_NAME_VALUE_CHAT);
        count(step.usage, attributes);
        const tokens = conventionTokenCounts(step.usage);
        latest.operationInput.record(tokens.input, attributes);
        latest.operationOutput.record(tokens.output, attributes);
      }
    } else if (carrier === 'invoke_agent') {
      count(record.usage, base(record.model, GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT));
    }
    const agent: Attributes = { [ATTR_GEN_AI_AGENT_NAME]: record.agentName };
    // Model calls are known only where the source reports steps (dsh); ACP and bare logs report none.
    if (record.steps.length > 0) latest.inferenceCalls.record(record.steps.length, agent);
    latest.toolCalls.record(record.toolCalls.length, agent);
  }
}
