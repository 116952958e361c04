/**
 * Which GenAI names are emitted under `OTEL_SEMCONV_STABILITY_OPT_IN`
 * (decisions 0070, 0121: v0.1.0's names by default, the previous ones behind
 * `gen_ai_previous`), and which span carries a run's token usage (decision
 * 0071), through a real SDK pipeline. Names are spelled out here by hand from
 * the conventions' migration guide, never taken from `semconv.ts`.
 */
import { describe, expect, it } from 'vitest';
import type { Attributes } from '@opentelemetry/api';
import type { DataPoint, Histogram } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { telemetryHarness } from '../helpers/telemetry-harness.js';
import { parseSemconvStability, type SemconvStability } from '../../src/telemetry/config.js';
import { RunTelemetry } from '../../src/telemetry/run-telemetry.js';
import type { RunRecord } from '../../src/observe/run-record.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTelemetry } from '../../src/telemetry/setup.js';
import { attributes, readSpans } from '../helpers/cli.js';

const T0 = 1_700_000_000_000;

function record(overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    runId: 'run-1',
    source: 'sdk-subagent',
    agentName: 'reviewer',
    startTime: T0,
    provider: 'deepseek',
    model: 'deepseek-chat',
    endTime: T0 + 2500,
    stopReason: 'completed',
    output: [{ type: 'text', text: 'Done.' }],
    outputSource: 'message',
    emptyMessages: 0,
    usage: {
      inputTokens: 30,
      outputTokens: 12,
      cacheReadTokens: 6,
      cacheWriteTokens: 4,
      reasoningTokens: 2,
      reported: true,
    },
    steps: [
      {
        step: 0,
        startTime: T0 + 10,
        endTime: T0 + 900,
        usage: { inputTokens: 10, outputTokens: 4, cacheReadTokens: 6, cacheWriteTokens: 4, reasoningTokens: 2 },
        finishReason: 'tool-calls',
      },
      {
        step: 1,
        startTime: T0 + 1200,
        endTime: T0 + 2400,
        usage: { inputTokens: 20, outputTokens: 8 },
        finishReason: 'stop',
      },
    ],
    toolCalls: [{ callId: 'call-1', name: 'read', startTime: T0 + 950, endTime: T0 + 1100, isError: false }],
    ...overrides,
  };
}

interface Point {
  attributes: Attributes;
  value: number;
  count?: number;
}

function harness(semconv: SemconvStability) {
  const h = telemetryHarness({ capture: false }, semconv);
  return {
    ...h,
    spans: (): ReadableSpan[] => h.spanExporter.getFinishedSpans(),
    async points(name: string): Promise<Point[]> {
      await h.reader.forceFlush();
      const metric = h.metricExporter
        .getMetrics()
        .at(-1)
        ?.scopeMetrics.flatMap((s) => s.metrics)
        .find((m) => m.descriptor.name === name);
      if (metric === undefined) return [];
      return (metric.dataPoints as DataPoint<number | Histogram>[]).map((p) =>
        typeof p.value === 'number'
          ? { attributes: p.attributes, value: p.value }
          : { attributes: p.attributes, value: p.value.sum ?? Number.NaN, count: p.value.count },
      );
    },
    async metricNames(): Promise<string[]> {
      await h.reader.forceFlush();
      return (
        h.metricExporter
          .getMetrics()
          .at(-1)
          ?.scopeMetrics.flatMap((s) => s.metrics) ?? []
      )
        .map((m) => m.descriptor.name)
        .sort();
    },
  };
}

/** Sum of one usage attribute over every span of the trace, as a backend that sums spans computes it. */
function summed(spans: readonly ReadableSpan[], key: string): number {
  return spans.reduce(
    (sum, span) => sum + (typeof span.attributes[key] === 'number' ? (span.attributes[key] as number) : 0),
    0,
  );
}

describe('OTEL_SEMCONV_STABILITY_OPT_IN', () => {
  it('selects the previous names only when the list holds gen_ai_previous; v0.1.0 names otherwise', () => {
    expect(parseSemconvStability(undefined)).toBe('latest');
    expect(parseSemconvStability('')).toBe('latest');
    expect(parseSemconvStability('http')).toBe('latest');
    expect(parseSemconvStability('http/dup, database')).toBe('latest');
    expect(parseSemconvStability('gen_ai_previous')).toBe('previous');
    expect(parseSemconvStability(' http , gen_ai_previous ')).toBe('previous');
    expect(parseSemconvStability('gen_ai_previous_not')).toBe('latest');
    expect(parseSemconvStability('GEN_AI_PREVIOUS')).toBe('latest');
  });

  it('accepts gen_ai_latest_experimental as asking for the default, and lets gen_ai_previous win beside it', () => {
    expect(parseSemconvStability('gen_ai_latest_experimental')).toBe('latest');
    expect(parseSemconvStability('http,gen_ai_latest_experimental')).toBe('latest');
    // The variable is shared: another instrumentation may need gen_ai_latest_experimental; gen_ai_previous is ours alone.
    expect(parseSemconvStability('gen_ai_latest_experimental,gen_ai_previous')).toBe('previous');
    expect(parseSemconvStability('gen_ai_previous, gen_ai_latest_experimental')).toBe('previous');
  });

  it('is read from the environment at construction when no option is given', async () => {
    const saved = process.env['OTEL_SEMCONV_STABILITY_OPT_IN'];
    const { TracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = await import('@opentelemetry/sdk-trace');
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    try {
      process.env['OTEL_SEMCONV_STABILITY_OPT_IN'] = 'gen_ai_previous';
      const previous = new RunTelemetry({ tracer: provider.getTracer('test'), content: { capture: false } });
      delete process.env['OTEL_SEMCONV_STABILITY_OPT_IN'];
      const latest = new RunTelemetry({ tracer: provider.getTracer('test'), content: { capture: false } });
      previous.onRunEnd(record({ runId: 'previous', steps: [], toolCalls: [] }));
      latest.onRunEnd(record({ runId: 'latest', steps: [], toolCalls: [] }));
      const span = (runId: string) =>
        exporter.getFinishedSpans().find((s) => s.attributes['gen_ai.agent.id'] === runId);
      expect(span('previous')?.attributes['gen_ai.usage.cache_creation.input_tokens']).toBe(4);
      expect(span('previous')?.attributes['gen_ai.usage.cache_write.input_tokens']).toBeUndefined();
      expect(span('latest')?.attributes['gen_ai.usage.cache_write.input_tokens']).toBe(4);
      expect(span('latest')?.attributes['gen_ai.usage.cache_creation.input_tokens']).toBeUndefined();
    } finally {
      if (saved === undefined) delete process.env['OTEL_SEMCONV_STABILITY_OPT_IN'];
      else process.env['OTEL_SEMCONV_STABILITY_OPT_IN'] = saved;
      await provider.shutdown();
    }
  });
});

describe('createTelemetry', () => {
  it('takes the choice from the environment it was given', async () => {
    for (const [value, present, absent] of [
      ['', 'gen_ai.usage.cache_write.input_tokens', 'gen_ai.usage.cache_creation.input_tokens'],
      [
        'http,gen_ai_latest_experimental',
        'gen_ai.usage.cache_write.input_tokens',
        'gen_ai.usage.cache_creation.input_tokens',
      ],
      ['http,gen_ai_previous', 'gen_ai.usage.cache_creation.input_tokens', 'gen_ai.usage.cache_write.input_tokens'],
    ] as const) {
      const out = mkdtempSync(join(tmpdir(), 'semconv-'));
      try {
        const telemetry = createTelemetry({ env: { SUBAGENT_OTEL_OUT: out, OTEL_SEMCONV_STABILITY_OPT_IN: value } });
        telemetry.runs.onRunEnd(record({ steps: [], toolCalls: [] }));
        await telemetry.shutdown(5000);
        const run = readSpans(out).find((s) => s.name === 'invoke_agent reviewer');
        expect(run, value).toBeDefined();
        expect(attributes(run!)[present]).toBe(4);
        expect(attributes(run!)[absent]).toBeUndefined();
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    }
  });
});

describe('previous names (gen_ai_previous, kept for one release)', () => {
  it('keeps cache_creation, gen_ai.client.token.usage per run and gen_ai.invoke_agent.duration', async () => {
    const h = harness('previous');
    h.runs.onRunEnd(record());
    const chat = h.spans().filter((s) => s.name === 'chat deepseek-chat');
    expect(chat.map((s) => s.attributes['gen_ai.usage.cache_creation.input_tokens'])).toEqual([4, undefined]);
    expect(chat.every((s) => s.attributes['gen_ai.usage.cache_write.input_tokens'] === undefined)).toBe(true);
    const tool = h.spans().find((s) => s.name === 'execute_tool read');
    expect(tool?.attributes['gen_ai.agent.name']).toBeUndefined();
    const run = {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'deepseek',
      'gen_ai.request.model': 'deepseek-chat',
    };
    // input 30 + 6 + 4 = 40; output 12 (the 2 reasoning tokens are inside it)
    expect(await h.points('gen_ai.client.token.usage')).toEqual([
      { attributes: { ...run, 'gen_ai.token.type': 'input' }, value: 40, count: 1 },
      { attributes: { ...run, 'gen_ai.token.type': 'output' }, value: 12, count: 1 },
    ]);
    expect(await h.metricNames()).toEqual([
      'gen_ai.client.token.usage',
      'gen_ai.execute_tool.duration',
      'gen_ai.invoke_agent.duration',
      'subagent.runs',
    ]);
    await h.tracerProvider.shutdown();
    await h.meterProvider.shutdown();
  });
});

describe('v0.1.0 names (the default)', () => {
  it('emits v0.1.0 metric names only: no gen_ai.client.token.usage, a remote run as a client operation', async () => {
    const h = harness('latest');
    h.runs.onRunEnd(record());
    expect(await h.metricNames()).toEqual([
      'gen_ai.client.inference.operation.input_tokens',
      'gen_ai.client.inference.operation.output_tokens',
      'gen_ai.client.inference.usage.cache_read.input_tokens',
      'gen_ai.client.inference.usage.cache_write.input_tokens',
      'gen_ai.client.inference.usage.input_tokens',
      'gen_ai.client.inference.usage.output_tokens',
      'gen_ai.client.inference.usage.reasoning.output_tokens',
      'gen_ai.client.operation.duration',
      'gen_ai.execute_tool.duration',
      'gen_ai.invoke_agent.inference_calls',
      'gen_ai.invoke_agent.tool_calls',
      'subagent.runs',
    ]);
    await h.tracerProvider.shutdown();
    await h.meterProvider.shutdown();
  });

  it('renames cache_creation to cache_write and names the agent on execute_tool spans and durations', async () => {
    const h = harness('latest');
    h.runs.onRunEnd(record());
    const chat = h.spans().filter((s) => s.name === 'chat deepseek-chat');
    expect(chat.map((s) => s.attributes['gen_ai.usage.cache_write.input_tokens'])).toEqual([4, undefined]);
    expect(chat.every((s) => s.attributes['gen_ai.usage.cache_creation.input_tokens'] === undefined)).toBe(true);
    const tool = h.spans().find((s) => s.name === 'execute_tool read');
    expect(tool?.attributes['gen_ai.agent.name']).toBe('reviewer');
    expect(await h.points('gen_ai.execute_tool.duration')).toEqual([
      {
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'read',
          'gen_ai.agent.name': 'reviewer',
        },
        value: 0.15,
        count: 1,
      },
    ]);
    await h.tracerProvider.shutdown();
    await h.meterProvider.shutdown();
  });

  it('counts usage per model call with gen_ai.token.modality and records per-call histograms and call counts', async () => {
    const h = harness('latest');
    h.runs.onRunEnd(record());
    const chat = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'deepseek',
      'gen_ai.request.model': 'deepseek-chat',
    };
    const counted = { ...chat, 'gen_ai.token.modality': 'unknown' };
    // step 0: input 10 + 6 + 4 = 20, output 4 (2 reasoning inside); step 1: input 20, output 8
    expect(await h.points('gen_ai.client.inference.usage.input_tokens')).toEqual([{ attributes: counted, value: 40 }]);
    expect(await h.points('gen_ai.client.inference.usage.output_tokens')).toEqual([{ attributes: counted, value: 12 }]);
    expect(await h.points('gen_ai.client.inference.usage.cache_read.input_tokens')).toEqual([
      { attributes: counted, value: 6 },
    ]);
    expect(await h.points('gen_ai.client.inference.usage.cache_write.input_tokens')).toEqual([
      { attributes: counted, value: 4 },
    ]);
    expect(await h.points('gen_ai.client.inference.usage.reasoning.output_tokens')).toEqual([
      { attributes: counted, value: 2 },
    ]);
    expect(await h.points('gen_ai.client.inference.operation.input_tokens')).toEqual([
      { attributes: chat, value: 40, count: 2 },
    ]);
    expect(await h.points('gen_ai.client.inference.operation.output_tokens')).toEqual([
      { attributes: chat, value: 12, count: 2 },
    ]);
    expect(await h.points('gen_ai.invoke_agent.inference_calls')).toEqual([
      { attributes: { 'gen_ai.agent.name': 'reviewer' }, value: 2, count: 1 },
    ]);
    expect(await h.points('gen_ai.invoke_agent.tool_calls')).toEqual([
      { attributes: { 'gen_ai.agent.name': 'reviewer' }, value: 1, count: 1 },
    ]);
    expect(await h.points('gen_ai.client.token.usage')).toEqual([]);
    await h.tracerProvider.shutdown();
    await h.meterProvider.shutdown();
  });

  it('records a run in another process as a client operation and an in-process run as gen_ai.invoke_agent.duration', async () => {
    const h = harness('latest');
    h.runs.onRunEnd(record({ runId: 'remote' }));
    h.runs.onRunEnd(record({ runId: 'local', inProcess: true, agentName: 'local' }));
    const attributes = (agent: string) => ({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'deepseek',
      'gen_ai.request.model': 'deepseek-chat',
      'gen_ai.agent.name': agent,
    });
    expect(await h.points('gen_ai.client.operation.duration')).toEqual([
      { attributes: attributes('reviewer'), value: 2.5, count: 1 },
    ]);
    expect(await h.points('gen_ai.invoke_agent.duration')).toEqual([
      { attributes: attributes('local'), value: 2.5, count: 1 },
    ]);
    await h.tracerProvider.shutdown();
    await h.meterProvider.shutdown();
  });

  it('counts a run whose usage is known only per run once, with no per-call histogram and no inference-call count', async () => {
    const h = harness('latest');
    h.runs.onRunEnd(record({ source: 'acp', steps: [], toolCalls: [] }));
    const run = {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'deepseek',
      'gen_ai.request.model': 'deepseek-chat',
      'gen_ai.token.modality': 'unknown',
    };
    expect(await h.points('gen_ai.client.inference.usage.input_tokens')).toEqual([{ attributes: run, value: 40 }]);
    expect(await h.points('gen_ai.client.inference.operation.input_tokens')).toEqual([]);
    expect(await h.points('gen_ai.invoke_agent.inference_calls')).toEqual([]);
    expect(await h.points('gen_ai.invoke_agent.tool_calls')).toEqual([
      { attributes: { 'gen_ai.agent.name': 'reviewer' }, value: 0, count: 1 },
    ]);
    await h.tracerProvider.shutdown();
    await h.meterProvider.shutdown();
  });
});

describe('run durations have one bucket layout in both naming modes (decision 0095)', () => {
  // The conventions' advice for gen_ai.invoke_agent.duration, spelled out here: the dashboard adds the run-duration
  // histograms of both modes bucket by bucket, which only works when their boundaries are the same.
  const RUN_BUCKETS = [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2, 102.4, 204.8, 409.6];

  async function boundaries(h: ReturnType<typeof harness>, name: string): Promise<number[][]> {
    await h.reader.forceFlush();
    const metric = h.metricExporter
      .getMetrics()
      .at(-1)
      ?.scopeMetrics.flatMap((m) => m.metrics)
      .find((m) => m.descriptor.name === name);
    return (metric?.dataPoints as DataPoint<Histogram>[] | undefined)?.map((p) => p.value.buckets.boundaries) ?? [];
  }

  for (const semconv of ['previous', 'latest'] as const) {
    it(`${semconv}: every run duration histogram has the agent-invocation buckets`, async () => {
      const h = harness(semconv);
      h.runs.onRunEnd(record({ runId: 'remote' }));
      h.runs.onRunEnd(record({ runId: 'local', inProcess: true, agentName: 'local' }));
      const agent = await boundaries(h, 'gen_ai.invoke_agent.duration');
      const client = await boundaries(h, 'gen_ai.client.operation.duration');
      expect(agent).toEqual(semconv === 'previous' ? [RUN_BUCKETS, RUN_BUCKETS] : [RUN_BUCKETS]);
      expect(client).toEqual(semconv === 'previous' ? [] : [RUN_BUCKETS]);
      await h.tracerProvider.shutdown();
      await h.meterProvider.shutdown();
    });
  }
});

describe("the run span carries the run's usage; chat spans carry each call's (decision 0071, 2026-12 update)", () => {
  /** Sum of one usage attribute over the spans a backend totals: every span but the run spans marked as roll-ups. */
  const summedOnce = (spans: readonly ReadableSpan[], key: string): number =>
    summed(
      spans.filter((s) => s.attributes['subagent.usage.rollup'] !== true),
      key,
    );
  for (const semconv of ['previous', 'latest'] as const) {
    it(`${semconv}: steps report usage, so the run span holds their sum and is marked as a roll-up`, async () => {
      const h = harness(semconv);
      h.runs.onRunEnd(record());
      const run = h.spans().find((s) => s.name === 'invoke_agent reviewer');
      expect(run?.attributes['gen_ai.usage.input_tokens']).toBe(40);
      expect(run?.attributes['gen_ai.usage.output_tokens']).toBe(12);
      expect(run?.attributes['gen_ai.usage.cache_read.input_tokens']).toBe(6);
      expect(run?.attributes['gen_ai.usage.reasoning.output_tokens']).toBe(2);
      expect(run?.attributes['subagent.usage.rollup']).toBe(true);
      const chat = h.spans().filter((s) => s.name.startsWith('chat'));
      expect(chat.map((s) => s.attributes['gen_ai.usage.input_tokens'])).toEqual([20, 20]);
      expect(summed(chat, 'gen_ai.usage.input_tokens')).toBe(40);
      // A backend summing every span counts the run twice; skipping the marked run spans counts it once.
      expect(summed(h.spans(), 'gen_ai.usage.input_tokens')).toBe(80);
      expect(summedOnce(h.spans(), 'gen_ai.usage.input_tokens')).toBe(40);
      expect(summedOnce(h.spans(), 'gen_ai.usage.output_tokens')).toBe(12);
      await h.tracerProvider.shutdown();
      await h.meterProvider.shutdown();
    });

    it(`${semconv}: no step reports usage, so the run span is the only carrier and carries no roll-up mark`, async () => {
      const h = harness(semconv);
      h.runs.onRunEnd(record({ steps: [{ step: 0, startTime: T0, endTime: T0 + 5 }] }));
      const run = h.spans().find((s) => s.name === 'invoke_agent reviewer');
      expect(run?.attributes['gen_ai.usage.input_tokens']).toBe(40);
      expect(run?.attributes['subagent.usage.rollup']).toBeUndefined();
      expect(summed(h.spans(), 'gen_ai.usage.input_tokens')).toBe(40);
      expect(summedOnce(h.spans(), 'gen_ai.usage.output_tokens')).toBe(12);
      await h.tracerProvider.shutdown();
      await h.meterProvider.shutdown();
    });

    it(`${semconv}: a run that reported no usage has no usage attribute anywhere`, async () => {
      const h = harness(semconv);
      h.runs.onRunEnd(
        record({
          steps: [{ step: 0, startTime: T0, endTime: T0 + 5 }],
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
      expect(
        h
          .spans()
          .some(
            (s) =>
              s.attributes['gen_ai.usage.input_tokens'] !== undefined ||
              s.attributes['subagent.usage.rollup'] !== undefined,
          ),
      ).toBe(false);
      await h.tracerProvider.shutdown();
      await h.meterProvider.shutdown();
    });
  }
});
