/**
 * Runs read from transcripts, through the real SDK with the package's id
 * generator (decision 0093): span ids derived from run ids, so a child
 * reported by one pipeline nests under the parent tool span another pipeline
 * reports later (a watch restarted between them), the stop reason `unknown`
 * without error status, and the cost attributes and metric.
 */
import { SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/observe/run-record.js';
import { RunTelemetry } from '../../src/telemetry/run-telemetry.js';
import { StableIdGenerator, stableRunSpanId, stableToolSpanId, stableTraceId } from '../../src/telemetry/stable-ids.js';

const T = 1_770_000_000_000;

/** One pipeline as `createTelemetry` builds it: the stable id generator in the provider and handed to RunTelemetry. */
function pipeline() {
  const stableIds = new StableIdGenerator();
  const spans = new InMemorySpanExporter();
  const tracerProvider = new TracerProvider({
    idGenerator: stableIds,
    spanProcessors: [new SimpleSpanProcessor({ exporter: spans })],
  });
  const metrics = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metrics, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const runs = new RunTelemetry({
    tracer: tracerProvider.getTracer('t'),
    meter: meterProvider.getMeter('t'),
    content: { capture: true },
    semconv: 'previous',
    stableIds,
  });
  return {
    runs,
    spans: (): ReadableSpan[] => spans.getFinishedSpans(),
    async points(name: string) {
      await reader.forceFlush();
      const metric = metrics
        .getMetrics()
        .at(-1)
        ?.scopeMetrics.flatMap((s) => s.metrics)
        .find((m) => m.descriptor.name === name);
      return (metric?.dataPoints ?? []).map((p) => ({ attributes: p.attributes, value: p.value }));
    },
  };
}

function record(over: Partial<RunRecord> & Pick<RunRecord, 'runId'>): RunRecord {
  return {
    source: 'claude-code',
    agentName: 'claude-code',
    startTime: T,
    endTime: T + 60_000,
    stopReason: 'unknown',
    stopReasonInferredFrom: 'none',
    output: [{ type: 'text', text: 'done' }],
    outputSource: 'message',
    emptyMessages: 0,
    usage: {
      inputTokens: 10,
      outputTokens: 5,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      reported: true,
    },
    steps: [],
    toolCalls: [],
    traceKey: 'claude-code:s1',
    ...over,
  };
}

const ROOT = 'claude-code:s1';
const CHILD = 'claude-code:s1/agent-a1';

describe('stable ids', () => {
  it('derive the trace from the key and spans from the run ids; a child reported first nests under the tool span reported later, by another pipeline', () => {
    const first = pipeline();
    first.runs.onRunEnd(
      record({
        runId: CHILD,
        agentName: 'Explore',
        parentRunId: ROOT,
        parentToolCallId: 'toolu_1',
        parentSessionId: 's1',
        startTime: T + 1000,
        endTime: T + 5000,
        stopReason: 'max-tokens',
        stopReasonInferredFrom: 'claude-code:api-error:max_output_tokens',
      }),
    );
    const second = pipeline();
    second.runs.onRunEnd(
      record({
        runId: ROOT,
        toolCalls: [{ callId: 'toolu_1', name: 'Task', startTime: T + 900, endTime: T + 5100, isError: false }],
      }),
    );

    const [child] = first.spans();
    const root = second.spans().find((s) => s.name === 'invoke_agent claude-code');
    const tool = second.spans().find((s) => s.name === 'execute_tool Task');
    expect(root?.spanContext().traceId).toBe(stableTraceId(ROOT));
    expect(root?.spanContext().spanId).toBe(stableRunSpanId(ROOT));
    expect(root?.parentSpanContext).toBeUndefined();
    expect(tool?.spanContext().spanId).toBe(stableToolSpanId(ROOT, 'toolu_1'));
    expect(tool?.parentSpanContext?.spanId).toBe(root?.spanContext().spanId);
    expect(child?.spanContext().traceId).toBe(root?.spanContext().traceId);
    expect(child?.parentSpanContext?.spanId).toBe(tool?.spanContext().spanId);
    expect(child?.spanContext().spanId).toBe(stableRunSpanId(CHILD));
  });

  it('give the same ids when the same run is reported again', () => {
    const a = pipeline();
    const b = pipeline();
    a.runs.onRunEnd(record({ runId: ROOT }));
    b.runs.onRunEnd(record({ runId: ROOT }));
    expect(a.spans()[0]?.spanContext()).toEqual(b.spans()[0]?.spanContext());
  });

  it('are 32 and 16 hex characters, and differ between runs', () => {
    expect(stableTraceId(ROOT)).toMatch(/^[0-9a-f]{32}$/);
    expect(stableRunSpanId(ROOT)).toMatch(/^[0-9a-f]{16}$/);
    expect(stableRunSpanId(ROOT)).not.toBe(stableRunSpanId(CHILD));
    expect(stableToolSpanId(ROOT, 'x')).not.toBe(stableRunSpanId(ROOT));
  });

  it('leave runs without a trace key to random ids', () => {
    const p = pipeline();
    p.runs.onRunEnd({ ...record({ runId: 'r-1' }), traceKey: undefined } as RunRecord);
    p.runs.onRunEnd({ ...record({ runId: 'r-1' }), traceKey: undefined } as RunRecord);
    const [one, two] = p.spans();
    expect(one?.spanContext().spanId).not.toBe(two?.spanContext().spanId);
    expect(one?.spanContext().spanId).not.toBe(stableRunSpanId('r-1'));
  });
});

describe('a run whose files say nothing about how it ended', () => {
  it('is `unknown`, inferred from `none`, with no error status and no error.type', async () => {
    const p = pipeline();
    p.runs.onRunEnd(record({ runId: ROOT }));
    const [span] = p.spans();
    expect(span?.attributes['subagent.stop_reason']).toBe('unknown');
    expect(span?.attributes['subagent.stop_reason.inferred_from']).toBe('none');
    expect(span?.attributes['error.type']).toBeUndefined();
    expect(span?.status.code).toBe(SpanStatusCode.UNSET);
    const durations = await p.points('gen_ai.invoke_agent.duration');
    expect(durations.map((d) => d.attributes['error.type'])).toEqual([undefined]);
  });

  it('while a recorded truncation keeps its error status', () => {
    const p = pipeline();
    p.runs.onRunEnd(
      record({
        runId: ROOT,
        stopReason: 'max-tokens',
        stopReasonInferredFrom: 'claude-code:api-error:max_output_tokens',
      }),
    );
    const [span] = p.spans();
    expect(span?.status.code).toBe(SpanStatusCode.ERROR);
    expect(span?.attributes['error.type']).toBe('max-tokens');
  });
});

describe('cost', () => {
  it('is on the run span, the session total on the root, and counted in subagent.cost.usd by agent and stop reason', async () => {
    const p = pipeline();
    p.runs.onRunEnd(
      record({
        runId: ROOT,
        stopReason: 'completed',
        cost: { amount: 0.25, currency: 'USD', unpricedModels: [], pricedCalls: 3 },
        sessionTotalCost: { amount: 1.25, currency: 'USD', unpricedModels: ['x-model'], pricedCalls: 7 },
        usageNotes: ['claude-code:subagent-final-usage-from-parent'],
      }),
    );
    const [span] = p.spans();
    expect(span?.attributes['subagent.cost.amount']).toBe(0.25);
    expect(span?.attributes['subagent.cost.currency']).toBe('USD');
    expect(span?.attributes['subagent.cost.unpriced_models']).toBeUndefined();
    expect(span?.attributes['subagent.session.cost.amount']).toBe(1.25);
    expect(span?.attributes['subagent.usage.notes']).toEqual(['claude-code:subagent-final-usage-from-parent']);
    expect(await p.points('subagent.cost.usd')).toEqual([
      { attributes: { 'gen_ai.agent.name': 'claude-code', 'subagent.stop_reason': 'completed' }, value: 0.25 },
    ]);
  });

  it('has no amount when nothing could be priced, only the models the table does not know, and no metric point', async () => {
    const p = pipeline();
    p.runs.onRunEnd(
      record({ runId: ROOT, cost: { amount: 0, currency: 'USD', unpricedModels: ['nobody-knows'], pricedCalls: 0 } }),
    );
    const [span] = p.spans();
    expect(span?.attributes['subagent.cost.amount']).toBeUndefined();
    expect(span?.attributes['subagent.cost.unpriced_models']).toEqual(['nobody-knows']);
    expect(await p.points('subagent.cost.usd')).toEqual([]);
  });
});
