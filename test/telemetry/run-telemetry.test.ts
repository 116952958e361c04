/**
 * RunTelemetry against the real OpenTelemetry SDK: spans through a
 * `SimpleSpanProcessor` into an `InMemorySpanExporter`, metrics into an
 * `InMemoryMetricExporter` collected on demand. Whole attribute maps are
 * compared with literal maps keyed by the semconv constants.
 */
import { createHash } from 'node:crypto';
import { DiagLogLevel, SpanKind, SpanStatusCode, diag, type Attributes } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { DataPoint, Histogram } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import type { RunRecord, RunStart } from '../../src/observe/run-record.js';
import type { ContentPolicy } from '../../src/telemetry/content-policy.js';
import { RunTelemetry, finishReasonOfStopReason } from '../../src/telemetry/run-telemetry.js';
import { telemetryHarness } from '../helpers/telemetry-harness.js';
import { reportedOutputMatches } from '../../src/output/result.js';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_TOKEN_MODALITY,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
  ATTR_SUBAGENT_EMPTY_MESSAGES,
  ATTR_SUBAGENT_FRAME_ERROR,
  ATTR_SUBAGENT_FRAME_ORIGIN,
  ATTR_SUBAGENT_OUTPUT,
  ATTR_SUBAGENT_OUTPUT_LENGTH,
  ATTR_SUBAGENT_OUTPUT_SHA256,
  ATTR_SUBAGENT_OUTPUT_SOURCE,
  ATTR_SUBAGENT_PARENT_SESSION_ID,
  ATTR_SUBAGENT_PROVIDER,
  ATTR_SUBAGENT_REPORTED_OUTPUT_MATCH,
  ATTR_SUBAGENT_RUN_ID,
  ATTR_SUBAGENT_SOURCE,
  ATTR_SUBAGENT_STOP_REASON,
  ATTR_SUBAGENT_TELEMETRY_EXPORTER,
  ATTR_SUBAGENT_TELEMETRY_SIGNAL,
  METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_INPUT_TOKENS,
  METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_OUTPUT_TOKENS,
  METRIC_GEN_AI_CLIENT_OPERATION_DURATION,
  METRIC_GEN_AI_CLIENT_TOKEN_USAGE,
  METRIC_GEN_AI_EXECUTE_TOOL_DURATION,
  METRIC_GEN_AI_INVOKE_AGENT_DURATION,
  METRIC_SUBAGENT_FRAMES_MALFORMED,
  METRIC_SUBAGENT_OUTPUT_MISMATCHES,
  METRIC_SUBAGENT_RUNS,
  METRIC_SUBAGENT_TELEMETRY_DROPPED,
} from '../../src/telemetry/semconv.js';

const T0 = 1_700_000_000_000;
const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

interface Point {
  attributes: Attributes;
  value: number;
}

function harness(content: ContentPolicy = { capture: true }) {
  const {
    runs,
    spanExporter: spans,
    metricExporter: metrics,
    reader,
    tracerProvider,
    meterProvider,
  } = telemetryHarness(content);
  return {
    runs,
    finished: (): ReadableSpan[] => spans.getFinishedSpans(),
    span(name: string): ReadableSpan {
      const found = spans.getFinishedSpans().filter((s) => s.name === name);
      expect(found, `exactly one span named ${name}`).toHaveLength(1);
      return found[0] as ReadableSpan;
    },
    /** Data points of one metric (sum for counters and histograms), collected now. */
    async points(name: string): Promise<Point[]> {
      await reader.forceFlush();
      const latest = metrics.getMetrics().at(-1);
      const metric = latest?.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
      if (metric === undefined) return [];
      return (metric.dataPoints as DataPoint<number | Histogram>[]).map((p) => ({
        attributes: p.attributes,
        value: typeof p.value === 'number' ? p.value : (p.value.sum ?? Number.NaN),
      }));
    },
    async close() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

function start(overrides: Partial<RunStart> = {}): RunStart {
  return {
    runId: 'run-1',
    source: 'sdk-subagent',
    agentName: 'reviewer',
    sessionId: 'ses-child',
    parentSessionId: 'ses-parent',
    startTime: T0,
    provider: 'deepseek',
    model: 'deepseek-chat',
    ...overrides,
  };
}

function record(overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    ...start(),
    endTime: T0 + 2500,
    stopReason: 'completed',
    output: [{ type: 'text', text: 'Done.' }],
    outputSource: 'message',
    emptyMessages: 0,
    usage: {
      inputTokens: 10,
      outputTokens: 5,
      cacheReadTokens: 3,
      cacheWriteTokens: 2,
      reasoningTokens: 0,
      reported: true,
    },
    steps: [],
    toolCalls: [],
    ...overrides,
  };
}

describe('RunTelemetry run span', () => {
  it('records a completed run with every contract attribute, OK status and the run duration', async () => {
    const h = harness();
    h.runs.onRunStart(start());
    h.runs.onRunEnd(record());
    const span = h.span('invoke_agent reviewer');
    expect(span.kind).toBe(SpanKind.CLIENT);
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.startTime).toEqual([1_700_000_000, 0]);
    expect(span.duration).toEqual([2, 500_000_000]);
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.attributes).toEqual({
      [ATTR_GEN_AI_OPERATION_NAME]: 'invoke_agent',
      [ATTR_GEN_AI_AGENT_ID]: 'run-1',
      [ATTR_GEN_AI_AGENT_NAME]: 'reviewer',
      [ATTR_GEN_AI_CONVERSATION_ID]: 'ses-child',
      [ATTR_GEN_AI_PROVIDER_NAME]: 'deepseek',
      [ATTR_GEN_AI_REQUEST_MODEL]: 'deepseek-chat',
      [ATTR_SUBAGENT_RUN_ID]: 'run-1',
      [ATTR_SUBAGENT_SOURCE]: 'sdk-subagent',
      [ATTR_SUBAGENT_PROVIDER]: 'deepseek',
      [ATTR_SUBAGENT_PARENT_SESSION_ID]: 'ses-parent',
      [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 15,
      [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 5,
      [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: 3,
      [ATTR_GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS]: 2,
      [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: ['stop'],
      [ATTR_SUBAGENT_STOP_REASON]: 'completed',
      [ATTR_SUBAGENT_EMPTY_MESSAGES]: 0,
      [ATTR_SUBAGENT_OUTPUT]: '[{"type":"text","text":"Done."}]',
      [ATTR_SUBAGENT_OUTPUT_SOURCE]: 'message',
      [ATTR_SUBAGENT_OUTPUT_SHA256]: sha256('[{"type":"text","text":"Done."}]'),
      [ATTR_SUBAGENT_OUTPUT_LENGTH]: 32,
      [ATTR_GEN_AI_OUTPUT_MESSAGES]:
        '[{"role":"assistant","parts":[{"type":"text","content":"Done."}],"finish_reason":"stop"}]',
    });
    expect(await h.points(METRIC_SUBAGENT_RUNS)).toEqual([
      {
        attributes: {
          [ATTR_GEN_AI_AGENT_NAME]: 'reviewer',
          [ATTR_GEN_AI_PROVIDER_NAME]: 'deepseek',
          [ATTR_SUBAGENT_STOP_REASON]: 'completed',
          [ATTR_SUBAGENT_OUTPUT_SOURCE]: 'message',
        },
        value: 1,
      },
    ]);
    // A run in another process (CLIENT span): its duration is the client-side operation duration (v0.1.0, the default).
    expect(await h.points(METRIC_GEN_AI_CLIENT_OPERATION_DURATION)).toEqual([
      {
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: 'invoke_agent',
          [ATTR_GEN_AI_PROVIDER_NAME]: 'deepseek',
          [ATTR_GEN_AI_REQUEST_MODEL]: 'deepseek-chat',
          [ATTR_GEN_AI_AGENT_NAME]: 'reviewer',
        },
        value: 2.5,
      },
    ]);
    expect(await h.points(METRIC_GEN_AI_INVOKE_AGENT_DURATION)).toEqual([]);
    // Usage known only per run (no steps): counted once with the run's operation, modality unknown.
    const base = {
      [ATTR_GEN_AI_OPERATION_NAME]: 'invoke_agent',
      [ATTR_GEN_AI_PROVIDER_NAME]: 'deepseek',
      [ATTR_GEN_AI_REQUEST_MODEL]: 'deepseek-chat',
      [ATTR_GEN_AI_TOKEN_MODALITY]: 'unknown',
    };
    expect(await h.points(METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_INPUT_TOKENS)).toEqual([
      { attributes: base, value: 15 },
    ]);
    expect(await h.points(METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_OUTPUT_TOKENS)).toEqual([
      { attributes: base, value: 5 },
    ]);
    expect(await h.points(METRIC_GEN_AI_CLIENT_TOKEN_USAGE)).toEqual([]);
    expect(await h.points(METRIC_SUBAGENT_OUTPUT_MISMATCHES)).toEqual([]);
    await h.close();
  });

  it('marks a max-tokens run ERROR with error.type and keeps the streamed partial output past an empty message', async () => {
    const h = harness();
    h.runs.onRunStart(start({ runId: 'run-mt' }));
    h.runs.onRunEnd(
      record({
        runId: 'run-mt',
        stopReason: 'max-tokens',
        output: [{ type: 'text', text: 'partial answer' }],
        outputSource: 'stream',
        emptyMessages: 1,
        usage: {
          inputTokens: 100,
          outputTokens: 4096,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          reasoningTokens: 512,
          reported: true,
        },
      }),
    );
    const span = h.span('invoke_agent reviewer');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'stop reason: max-tokens' });
    expect(span.attributes).toEqual({
      [ATTR_GEN_AI_OPERATION_NAME]: 'invoke_agent',
      [ATTR_GEN_AI_AGENT_ID]: 'run-mt',
      [ATTR_GEN_AI_AGENT_NAME]: 'reviewer',
      [ATTR_GEN_AI_CONVERSATION_ID]: 'ses-child',
      [ATTR_GEN_AI_PROVIDER_NAME]: 'deepseek',
      [ATTR_GEN_AI_REQUEST_MODEL]: 'deepseek-chat',
      [ATTR_SUBAGENT_RUN_ID]: 'run-mt',
      [ATTR_SUBAGENT_SOURCE]: 'sdk-subagent',
      [ATTR_SUBAGENT_PROVIDER]: 'deepseek',
      [ATTR_SUBAGENT_PARENT_SESSION_ID]: 'ses-parent',
      [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 100,
      [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 4096, // outputTokens as reported: the 512 reasoning tokens are inside it
      [ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS]: 512,
      [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: ['length'],
      [ATTR_SUBAGENT_STOP_REASON]: 'max-tokens',
      [ATTR_SUBAGENT_EMPTY_MESSAGES]: 1,
      [ATTR_SUBAGENT_OUTPUT]: '[{"type":"text","text":"partial answer"}]',
      [ATTR_SUBAGENT_OUTPUT_SOURCE]: 'stream',
      [ATTR_SUBAGENT_OUTPUT_SHA256]: sha256('[{"type":"text","text":"partial answer"}]'),
      [ATTR_SUBAGENT_OUTPUT_LENGTH]: 41,
      [ATTR_GEN_AI_OUTPUT_MESSAGES]:
        '[{"role":"assistant","parts":[{"type":"text","content":"partial answer"}],"finish_reason":"length"}]',
      [ATTR_ERROR_TYPE]: 'max-tokens',
    });
    expect(await h.points(METRIC_SUBAGENT_RUNS)).toEqual([
      {
        attributes: {
          [ATTR_GEN_AI_AGENT_NAME]: 'reviewer',
          [ATTR_GEN_AI_PROVIDER_NAME]: 'deepseek',
          [ATTR_SUBAGENT_STOP_REASON]: 'max-tokens',
          [ATTR_SUBAGENT_OUTPUT_SOURCE]: 'stream',
        },
        value: 1,
      },
    ]);
    expect(await h.points(METRIC_GEN_AI_CLIENT_OPERATION_DURATION)).toEqual([
      {
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: 'invoke_agent',
          [ATTR_GEN_AI_PROVIDER_NAME]: 'deepseek',
          [ATTR_GEN_AI_REQUEST_MODEL]: 'deepseek-chat',
          [ATTR_GEN_AI_AGENT_NAME]: 'reviewer',
          [ATTR_ERROR_TYPE]: 'max-tokens',
        },
        value: 2.5,
      },
    ]);
    await h.close();
  });

  it('records an aborted run without output as cancelled, [] output and no token numbers when usage was not reported', async () => {
    const h = harness();
    h.runs.onRunStart(
      start({ runId: 'run-ab', source: 'acp', provider: undefined, model: undefined, parentSessionId: undefined }),
    );
    h.runs.onRunEnd(
      record({
        runId: 'run-ab',
        source: 'acp',
        provider: undefined,
        model: undefined,
        parentSessionId: undefined,
        stopReason: 'aborted',
        output: undefined,
        outputSource: 'none',
        usage: {
          inputTokens: 0,
          outputTokens: 0,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          reasoningTokens: 0,
          reported: false,
        },
      }),
    );
    const span = h.span('invoke_agent reviewer');
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.attributes).toEqual({
      [ATTR_GEN_AI_OPERATION_NAME]: 'invoke_agent',
      [ATTR_GEN_AI_AGENT_ID]: 'run-ab',
      [ATTR_GEN_AI_AGENT_NAME]: 'reviewer',
      [ATTR_GEN_AI_CONVERSATION_ID]: 'ses-child',
      [ATTR_SUBAGENT_RUN_ID]: 'run-ab',
      [ATTR_SUBAGENT_SOURCE]: 'acp',
      [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: ['cancelled'],
      [ATTR_SUBAGENT_STOP_REASON]: 'aborted',
      [ATTR_SUBAGENT_EMPTY_MESSAGES]: 0,
      [ATTR_SUBAGENT_OUTPUT]: '[]',
      [ATTR_SUBAGENT_OUTPUT_SOURCE]: 'none',
      [ATTR_SUBAGENT_OUTPUT_SHA256]: sha256('[]'),
      [ATTR_SUBAGENT_OUTPUT_LENGTH]: 2,
      [ATTR_ERROR_TYPE]: 'aborted',
    });
    expect(await h.points(METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_INPUT_TOKENS)).toEqual([]);
    expect(await h.points(METRIC_SUBAGENT_RUNS)).toEqual([
      {
        attributes: {
          [ATTR_GEN_AI_AGENT_NAME]: 'reviewer',
          [ATTR_SUBAGENT_STOP_REASON]: 'aborted',
          [ATTR_SUBAGENT_OUTPUT_SOURCE]: 'none',
        },
        value: 1,
      },
    ]);
    await h.close();
  });

  it('produces a span for a run that ends without a start, beginning at the record start time', async () => {
    const h = harness();
    h.runs.onRunEnd(record({ runId: 'run-late', startTime: T0 + 1000, endTime: T0 + 1250 }));
    const span = h.span('invoke_agent reviewer');
    expect(span.startTime).toEqual([1_700_000_001, 0]);
    expect(span.duration).toEqual([0, 250_000_000]);
    expect(span.attributes[ATTR_GEN_AI_AGENT_ID]).toBe('run-late');
    expect(await h.points(METRIC_GEN_AI_CLIENT_OPERATION_DURATION)).toMatchObject([{ value: 0.25 }]);
    await h.close();
  });

  it('places a replayed run from long before this process at its recorded wall-clock time', async () => {
    const h = harness();
    const old = Date.UTC(2020, 0, 1);
    h.runs.onRunEnd(record({ runId: 'run-old', startTime: old, endTime: old + 1000 }));
    expect(h.span('invoke_agent reviewer').startTime).toEqual([1_577_836_800, 0]);
    await h.close();
  });

  it('maps each stop reason to the conventions finish reason', () => {
    expect(['completed', 'max-tokens', 'aborted', 'error', 'refusal', 'blocked'].map(finishReasonOfStopReason)).toEqual(
      ['stop', 'length', 'cancelled', 'error', 'content_filter', 'blocked'],
    );
  });
});

describe('RunTelemetry parenting', () => {
  it('nests an in-runtime subagent under the span of the run that started it', async () => {
    const h = harness();
    h.runs.onRunStart(start({ runId: 'turn-1', source: 'sdk', agentName: 'session' }));
    h.runs.onRunStart(start({ runId: 'child-1', parentRunId: 'turn-1' }));
    h.runs.onRunEnd(record({ runId: 'child-1', parentRunId: 'turn-1' }));
    h.runs.onRunEnd(record({ runId: 'turn-1', source: 'sdk', agentName: 'session' }));
    const parent = h.span('invoke_agent session');
    const child = h.span('invoke_agent reviewer');
    expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect(child.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(parent.parentSpanContext).toBeUndefined();
    await h.close();
  });

  it('continues the W3C trace context handed in when no parent run is open', async () => {
    const h = harness();
    h.runs.onRunStart(
      start({
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        tracestate: 'congo=t61rcWkgMzE',
      }),
    );
    h.runs.onRunEnd(record());
    const span = h.span('invoke_agent reviewer');
    expect(span.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(span.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(span.parentSpanContext?.isRemote).toBe(true);
    expect(span.spanContext().traceState?.serialize()).toBe('congo=t61rcWkgMzE');
    await h.close();
  });

  it('starts a new trace when the handed-in traceparent is malformed', async () => {
    const h = harness();
    h.runs.onRunStart(start({ traceparent: 'not-a-traceparent' }));
    h.runs.onRunEnd(record());
    const span = h.span('invoke_agent reviewer');
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
    await h.close();
  });
});

describe('RunTelemetry child spans', () => {
  it('adds one chat span per step with its own usage, mapped finish reason and times', async () => {
    const h = harness();
    h.runs.onRunStart(start());
    h.runs.onRunEnd(
      record({
        steps: [
          {
            turn: 0,
            step: 0,
            startTime: T0 + 10,
            endTime: T0 + 900,
            model: 'deepseek-reasoner',
            usage: { inputTokens: 7, outputTokens: 3, cacheReadTokens: 1 },
            finishReason: 'tool-calls',
          },
          { turn: 0, step: 1, startTime: T0 + 1000, endTime: T0 + 2400, finishReason: 'max-tokens' },
        ],
      }),
    );
    const run = h.span('invoke_agent reviewer');
    const first = h.span('chat deepseek-reasoner');
    const second = h.span('chat deepseek-chat');
    for (const step of [first, second]) {
      expect(step.kind).toBe(SpanKind.CLIENT);
      expect(step.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    }
    expect(first.attributes).toEqual({
      [ATTR_GEN_AI_OPERATION_NAME]: 'chat',
      [ATTR_GEN_AI_PROVIDER_NAME]: 'deepseek',
      [ATTR_GEN_AI_REQUEST_MODEL]: 'deepseek-reasoner',
      [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 8,
      [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 3,
      [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: 1,
      [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: ['tool_call'],
    });
    expect(first.startTime).toEqual([1_700_000_000, 10_000_000]);
    expect(first.duration).toEqual([0, 890_000_000]);
    expect(second.attributes).toEqual({
      [ATTR_GEN_AI_OPERATION_NAME]: 'chat',
      [ATTR_GEN_AI_PROVIDER_NAME]: 'deepseek',
      [ATTR_GEN_AI_REQUEST_MODEL]: 'deepseek-chat',
      [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: ['length'],
    });
    expect(second.status.code).toBe(SpanStatusCode.UNSET);
    await h.close();
  });

  it('names a step span plain chat when no model is known', async () => {
    const h = harness();
    h.runs.onRunEnd(record({ model: undefined, steps: [{ step: 0, startTime: T0, endTime: T0 + 5 }] }));
    expect(h.span('chat').attributes).toEqual({
      [ATTR_GEN_AI_OPERATION_NAME]: 'chat',
      [ATTR_GEN_AI_PROVIDER_NAME]: 'deepseek',
    });
    await h.close();
  });

  it('adds one execute_tool span per tool call, ERROR with error.type for a failed one ending with the run when unfinished', async () => {
    const h = harness();
    h.runs.onRunStart(start());
    h.runs.onRunEnd(
      record({
        stopReason: 'error',
        toolCalls: [
          { callId: 'call-1', name: 'read_file', startTime: T0 + 100, endTime: T0 + 300, isError: false },
          { callId: 'call-2', name: 'bash', startTime: T0 + 400, isError: true, errorType: 'unfinished' },
          { callId: 'call-3', name: 'bash', startTime: T0 + 500, endTime: T0 + 600, isError: true },
        ],
      }),
    );
    const run = h.span('invoke_agent reviewer');
    const ok = h.span('execute_tool read_file');
    const failed = h.finished().filter((s) => s.name === 'execute_tool bash');
    expect(ok.kind).toBe(SpanKind.INTERNAL);
    expect(ok.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    expect(ok.status.code).toBe(SpanStatusCode.UNSET);
    expect(ok.attributes).toEqual({
      [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
      [ATTR_GEN_AI_TOOL_NAME]: 'read_file',
      [ATTR_GEN_AI_TOOL_CALL_ID]: 'call-1',
      [ATTR_GEN_AI_AGENT_NAME]: 'reviewer',
    });
    expect(failed.map((s) => [s.attributes, s.status, s.duration])).toEqual([
      [
        {
          [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
          [ATTR_GEN_AI_TOOL_NAME]: 'bash',
          [ATTR_GEN_AI_TOOL_CALL_ID]: 'call-2',
          [ATTR_GEN_AI_AGENT_NAME]: 'reviewer',
          [ATTR_ERROR_TYPE]: 'unfinished',
        },
        { code: SpanStatusCode.ERROR, message: 'tool error: unfinished' },
        [2, 100_000_000],
      ],
      [
        {
          [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
          [ATTR_GEN_AI_TOOL_NAME]: 'bash',
          [ATTR_GEN_AI_TOOL_CALL_ID]: 'call-3',
          [ATTR_GEN_AI_AGENT_NAME]: 'reviewer',
          [ATTR_ERROR_TYPE]: 'tool_error',
        },
        { code: SpanStatusCode.ERROR, message: 'tool error: tool_error' },
        [0, 100_000_000],
      ],
    ]);
    expect(await h.points(METRIC_GEN_AI_EXECUTE_TOOL_DURATION)).toEqual([
      {
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
          [ATTR_GEN_AI_TOOL_NAME]: 'read_file',
          [ATTR_GEN_AI_AGENT_NAME]: 'reviewer',
        },
        value: 0.2,
      },
      {
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
          [ATTR_GEN_AI_TOOL_NAME]: 'bash',
          [ATTR_GEN_AI_AGENT_NAME]: 'reviewer',
          [ATTR_ERROR_TYPE]: 'unfinished',
        },
        value: 2.1,
      },
      {
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
          [ATTR_GEN_AI_TOOL_NAME]: 'bash',
          [ATTR_GEN_AI_AGENT_NAME]: 'reviewer',
          [ATTR_ERROR_TYPE]: 'tool_error',
        },
        value: 0.1,
      },
    ]);
    await h.close();
  });
});

describe('RunTelemetry span times across two clocks', () => {
  it('places steps and tool calls stamped before the run started inside the run span', async () => {
    const h = harness();
    h.runs.onRunStart(start({ startTime: T0 + 3 }));
    h.runs.onRunEnd(
      record({
        endTime: T0 + 50,
        steps: [
          { turn: 0, step: 0, startTime: T0, endTime: T0 + 20, finishReason: 'stop' },
          { turn: 0, step: 1, startTime: T0 + 30, endTime: T0 + 60, finishReason: 'stop' },
        ],
        toolCalls: [
          { callId: 'call-1', name: 'read_file', startTime: T0 + 1, endTime: T0 + 2, isError: false },
          { callId: 'call-2', name: 'grep', startTime: T0 + 55, endTime: T0 + 58, isError: false },
        ],
      }),
    );
    const run = h.span('invoke_agent reviewer');
    expect([run.startTime, run.endTime]).toEqual([
      [1_700_000_000, 3_000_000],
      [1_700_000_000, 50_000_000],
    ]);
    const times = (name: string) =>
      h
        .finished()
        .filter((s) => s.name === name)
        .map((s) => [s.startTime, s.endTime]);
    expect(times('chat deepseek-chat')).toEqual([
      [
        [1_700_000_000, 3_000_000],
        [1_700_000_000, 20_000_000],
      ],
      [
        [1_700_000_000, 30_000_000],
        [1_700_000_000, 50_000_000],
      ],
    ]);
    expect(times('execute_tool read_file')).toEqual([
      [
        [1_700_000_000, 3_000_000],
        [1_700_000_000, 3_000_000],
      ],
    ]);
    expect(times('execute_tool grep')).toEqual([
      [
        [1_700_000_000, 50_000_000],
        [1_700_000_000, 50_000_000],
      ],
    ]);
    expect(await h.points(METRIC_GEN_AI_EXECUTE_TOOL_DURATION)).toEqual([
      {
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
          [ATTR_GEN_AI_TOOL_NAME]: 'read_file',
          [ATTR_GEN_AI_AGENT_NAME]: 'reviewer',
        },
        value: 0,
      },
      {
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
          [ATTR_GEN_AI_TOOL_NAME]: 'grep',
          [ATTR_GEN_AI_AGENT_NAME]: 'reviewer',
        },
        value: 0,
      },
    ]);
    await h.close();
  });

  it('never ends a run span before it starts when the end comes from the runtime clock (the SDK would warn)', async () => {
    const warnings: string[] = [];
    diag.setLogger(
      {
        error: (m) => warnings.push(m),
        warn: (m) => warnings.push(m),
        info: () => undefined,
        debug: () => undefined,
        verbose: () => undefined,
      },
      DiagLogLevel.WARN,
    );
    const h = harness();
    h.runs.onRunStart(start({ startTime: T0 + 4 }));
    h.runs.onRunEnd(record({ endTime: T0 + 1 }));
    diag.disable();
    expect(warnings).toEqual([]);
    const run = h.span('invoke_agent reviewer');
    expect([run.startTime, run.endTime, run.duration]).toEqual([
      [1_700_000_000, 4_000_000],
      [1_700_000_000, 4_000_000],
      [0, 0],
    ]);
    const durations = await h.points(METRIC_GEN_AI_CLIENT_OPERATION_DURATION);
    expect(durations.map((p) => p.value)).toEqual([0]);
    await h.close();
  });
});

describe('RunTelemetry unnamed tools', () => {
  it('gives a tool the agent did not name no gen_ai.tool.name, a plain execute_tool span name and a metric point without the title', async () => {
    const h = harness();
    h.runs.onRunStart(start({ source: 'acp' }));
    h.runs.onRunEnd(
      record({
        source: 'acp',
        toolCalls: [
          {
            callId: 'call_7',
            title: 'curl -H "Authorization: Bearer s3cret" https://example.test',
            toolType: 'execute',
            startTime: T0 + 100,
            endTime: T0 + 400,
            isError: false,
          },
        ],
      }),
    );
    const span = h.span('execute_tool');
    expect(span.attributes[ATTR_GEN_AI_TOOL_NAME]).toBeUndefined();
    expect(span.attributes[ATTR_GEN_AI_TOOL_CALL_ID]).toBe('call_7');
    expect(await h.points(METRIC_GEN_AI_EXECUTE_TOOL_DURATION)).toEqual([
      {
        attributes: { [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool', [ATTR_GEN_AI_AGENT_NAME]: 'reviewer' },
        value: 0.3,
      },
    ]);
    await h.close();
  });
});

describe('RunTelemetry reported output and counters', () => {
  it('counts a mismatch when the runtime reported a different output than the selection', async () => {
    const h = harness();
    h.runs.onRunEnd(record({ reported: { output: [] } }));
    expect(h.span('invoke_agent reviewer').attributes[ATTR_SUBAGENT_REPORTED_OUTPUT_MATCH]).toBe(false);
    expect(await h.points(METRIC_SUBAGENT_OUTPUT_MISMATCHES)).toEqual([
      { attributes: { [ATTR_GEN_AI_AGENT_NAME]: 'reviewer', [ATTR_GEN_AI_PROVIDER_NAME]: 'deepseek' }, value: 1 },
    ]);
    await h.close();
  });

  it('counts no mismatch when the report equals the selection up to key order, or both are absent', async () => {
    const h = harness();
    h.runs.onRunEnd(record({ runId: 'a', reported: { output: [{ text: 'Done.', type: 'text' } as never] } }));
    h.runs.onRunEnd(record({ runId: 'b', output: undefined, outputSource: 'none', reported: { output: undefined } }));
    expect(h.finished().map((s) => s.attributes[ATTR_SUBAGENT_REPORTED_OUTPUT_MATCH])).toEqual([true, true]);
    expect(await h.points(METRIC_SUBAGENT_OUTPUT_MISMATCHES)).toEqual([]);
    expect(reportedOutputMatches([], undefined)).toBe(false);
    await h.close();
  });

  it('counts malformed frames by origin and error code, and dropped telemetry by signal and exporter', async () => {
    const h = harness();
    h.runs.onMalformed('agent->client', { code: 'not-json', message: 'Unexpected token' });
    h.runs.onMalformed('agent->client', { code: 'not-json', message: 'Unexpected end' });
    h.runs.onMalformed('log', { code: 'invalid', message: 'bad event' });
    h.runs.recordDropped('traces', 'otlp', 3);
    expect(await h.points(METRIC_SUBAGENT_FRAMES_MALFORMED)).toEqual([
      {
        attributes: { [ATTR_SUBAGENT_FRAME_ORIGIN]: 'agent->client', [ATTR_SUBAGENT_FRAME_ERROR]: 'not-json' },
        value: 2,
      },
      { attributes: { [ATTR_SUBAGENT_FRAME_ORIGIN]: 'log', [ATTR_SUBAGENT_FRAME_ERROR]: 'invalid' }, value: 1 },
    ]);
    expect(await h.points(METRIC_SUBAGENT_TELEMETRY_DROPPED)).toEqual([
      {
        attributes: { [ATTR_SUBAGENT_TELEMETRY_SIGNAL]: 'traces', [ATTR_SUBAGENT_TELEMETRY_EXPORTER]: 'otlp' },
        value: 3,
      },
    ]);
    await h.close();
  });

  it('never throws into the tracker and still ends the span of a run whose output cannot be serialized', async () => {
    const h = harness();
    const cyclic: Record<string, unknown> = { type: 'text', text: 'x' };
    cyclic['self'] = cyclic;
    expect(() =>
      h.runs.onRunEnd(record({ runId: 'run-cyclic', stopReason: 'error', output: [cyclic as never] })),
    ).not.toThrow();
    const span = h.span('invoke_agent reviewer');
    expect(span.attributes[ATTR_SUBAGENT_STOP_REASON]).toBe('error');
    expect(span.attributes[ATTR_SUBAGENT_OUTPUT]).toBeUndefined();
    expect(await h.points(METRIC_SUBAGENT_RUNS)).toMatchObject([{ value: 1 }]);
    await h.close();
  });
});
