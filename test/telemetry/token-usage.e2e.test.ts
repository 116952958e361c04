/**
 * Reasoning tokens are a part of the output, never added to it (upstream's
 * `mapUsage` sets `outputTokens` to the provider's completion tokens, which
 * include reasoning; its token meter sums steps "without adding reasoning
 * twice"). `conventionTokenCounts` owns the mapping; the test checks it
 * directly and through every consumer of the built CLI: span attributes,
 * the token metrics (v0.1.0's counters by default, the previous histogram
 * under `gen_ai_previous`), the replay summary and the run table.
 *
 * The SDK turn below is the real runtime's plain completed turn in the
 * runtime's own framing (the same frames as
 * `test/captures/dsh-runtime-max-tokens-empty-message.ndjson`): 100 input
 * tokens, 7 output tokens of which 3 are reasoning. Before the fix it was
 * recorded as `gen_ai.usage.output_tokens = 10`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatRunTable } from '../../src/cli/summary.js';
import type { RunRecord } from '../../src/observe/run-record.js';
import { conventionTokenCounts } from '../../src/telemetry/token-usage.js';
import { attributes, readSpans, runCli, QUIET_ENV } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'token-usage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T = 1_796_063_390_280;
const USAGE = { inputTokens: 100, outputTokens: 7, cacheReadTokens: 0, reasoningTokens: 3 };
const event = (seq: number, type: string, data: unknown) =>
  JSON.stringify({
    jsonrpc: '2.0',
    method: 'session.event',
    params: { sessionId: 'session-1', event: { type, seq, time: T + seq, data } },
  });
const source = { kind: 'model', provider: 'deepseek-official', model: 'deepseek-v4-flash' };

/** The runtime's side of one plain completed prompt, as raw NDJSON JSON-RPC. */
const PLAIN_TURN = [
  JSON.stringify({
    jsonrpc: '2.0',
    id: 'req_1',
    result: { serverInfo: { name: 'deepseek-harness-sdk-runtime', version: '0.0.1' } },
  }),
  JSON.stringify({ jsonrpc: '2.0', method: 'session.status', params: { sessionId: 'session-1', status: 'running' } }),
  event(1, 'turn/start', { turn: 1 }),
  JSON.stringify({ jsonrpc: '2.0', id: 'req_2', result: { messageId: 'u1' } }),
  event(2, 'step/start', { turn: 1, step: 1 }),
  event(3, 'request/context', { provider: 'deepseek-official', model: 'deepseek-v4-flash', contextWindow: 1000000 }),
  event(4, 'assistant/chunk', { turn: 1, step: 1, chunk: { type: 'block-start', index: 0, blockType: 'reasoning' } }),
  event(5, 'assistant/chunk', { turn: 1, step: 1, chunk: { type: 'reasoning-delta', index: 0, text: 'Say hi.' } }),
  event(6, 'assistant/chunk', {
    turn: 1,
    step: 1,
    chunk: { type: 'block-end', index: 0, block: { type: 'reasoning', text: 'Say hi.' } },
  }),
  event(7, 'assistant/chunk', { turn: 1, step: 1, chunk: { type: 'block-start', index: 1, blockType: 'text' } }),
  event(8, 'assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 1, text: 'Hello there.' } }),
  event(9, 'assistant/chunk', {
    turn: 1,
    step: 1,
    chunk: { type: 'block-end', index: 1, block: { type: 'text', text: 'Hello there.' } },
  }),
  event(10, 'assistant/chunk', { turn: 1, step: 1, chunk: { type: 'usage', usage: USAGE } }),
  event(11, 'assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'stop' } } }),
  event(12, 'assistant/message', {
    turn: 1,
    step: 1,
    message: {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Say hi.' },
        { type: 'text', text: 'Hello there.' },
      ],
      source,
      id: 'a1',
    },
    usage: USAGE,
  }),
  event(13, 'step/end', { turn: 1, step: 1 }),
  event(14, 'turn/end', { turn: 1, reason: { kind: 'completed' } }),
  JSON.stringify({ jsonrpc: '2.0', method: 'session.status', params: { sessionId: 'session-1', status: 'idle' } }),
].join('\n');

interface MetricPoint {
  readonly attributes: Array<{ key: string; value: { stringValue?: string } }>;
  readonly sum?: number;
  readonly asInt?: number | string;
}

interface OtlpMetric {
  readonly name: string;
  readonly histogram?: { dataPoints: MetricPoint[] };
  readonly sum?: { dataPoints: MetricPoint[] };
}

/** The metrics of the last export in a metrics.jsonl (as the histogram check read it before decision 0121). */
function lastMetrics(out: string): OtlpMetric[] {
  const lines = readFileSync(join(out, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '');
  const last = JSON.parse(lines.at(-1) ?? '{}') as {
    resourceMetrics: Array<{ scopeMetrics: Array<{ metrics: OtlpMetric[] }> }>;
  };
  return last.resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
}

/** Previous names: sum of the `gen_ai.client.token.usage` histogram points of `tokenType`. */
function tokenUsageSum(out: string, tokenType: string): number {
  const points = lastMetrics(out)
    .filter((m) => m.name === 'gen_ai.client.token.usage')
    .flatMap((m) => m.histogram?.dataPoints ?? []);
  return points
    .filter((p) => p.attributes.some((a) => a.key === 'gen_ai.token.type' && a.value.stringValue === tokenType))
    .reduce((n, p) => n + (p.sum ?? 0), 0);
}

/** v0.1.0 names: sum of one `gen_ai.client.inference.usage.*` counter. */
function usageCounter(out: string, name: string): number {
  const points = lastMetrics(out)
    .filter((m) => m.name === name)
    .flatMap((m) => m.sum?.dataPoints ?? []);
  return points.reduce((n, p) => n + Number(p.asInt ?? 0), 0);
}

describe('conventionTokenCounts', () => {
  it('sums the disjoint input buckets and keeps output as reported, reasoning its share', () => {
    expect(
      conventionTokenCounts({
        inputTokens: 100,
        outputTokens: 7,
        cacheReadTokens: 20,
        cacheWriteTokens: 5,
        reasoningTokens: 3,
      }),
    ).toEqual({
      input: 125,
      output: 7,
      reasoning: 3,
      cacheRead: 20,
      cacheWrite: 5,
    });
    expect(conventionTokenCounts({ inputTokens: 4, outputTokens: 2 })).toEqual({
      input: 4,
      output: 2,
      reasoning: 0,
      cacheRead: 0,
      cacheWrite: 0,
    });
  });

  it("gives upstream's recorded child turn (97 in, 2816 cache read, 39 out of which 34 reasoning) 2913 in and 39 out", () => {
    // examples/acp-agent/tests/snapshots/subagent-fork-in-process/session.1.jsonl, turn 2 (copied under test/replay/upstream-snapshots).
    expect(
      conventionTokenCounts({ inputTokens: 97, outputTokens: 39, cacheReadTokens: 2816, reasoningTokens: 34 }),
    ).toMatchObject({ input: 2913, output: 39, reasoning: 34 });
  });
});

describe("the real runtime's plain completed turn: 7 output tokens, 3 of them reasoning", () => {
  it('records gen_ai.usage.output_tokens = 7 on the span, in the usage counters and in the replay summary', async () => {
    const capture = join(dir, 'plain-turn.ndjson');
    writeFileSync(capture, `${PLAIN_TURN}\n`);
    const out = join(dir, 'out');
    const run = await runCli(
      ['replay', '--json', '--no-progress', '--protocol', 'sdk', '--out', out, capture],
      '',
      QUIET_ENV,
    );
    expect(run.stderr.toString()).toBe('');
    expect(run.code).toBe(0);
    const spans = readSpans(out);
    expect(spans.filter((s) => s.name.startsWith('invoke_agent'))).toHaveLength(1);
    // The run span carries the run's usage and its one chat span the call's, the same tokens (decision 0071, 2026-12 update).
    const carriers = spans.filter((s) => attributes(s)['gen_ai.usage.output_tokens'] !== undefined);
    expect(carriers.map((s) => s.name).sort()).toEqual(['chat deepseek-v4-flash', 'invoke_agent dsh']);
    for (const carrier of carriers)
      expect(attributes(carrier)).toMatchObject({
        'gen_ai.usage.input_tokens': 100,
        'gen_ai.usage.output_tokens': 7,
        'gen_ai.usage.reasoning.output_tokens': 3,
      });
    expect(usageCounter(out, 'gen_ai.client.inference.usage.output_tokens')).toBe(7);
    expect(usageCounter(out, 'gen_ai.client.inference.usage.input_tokens')).toBe(100);
    expect(usageCounter(out, 'gen_ai.client.inference.usage.reasoning.output_tokens')).toBe(3);
    expect(tokenUsageSum(out, 'output')).toBe(0); // the previous histogram is not emitted by default (decision 0121)
    const summary = JSON.parse(run.stdout.toString()) as {
      stopReasons: Array<{ stopReason: string; runs: number; inputTokens: number; outputTokens: number }>;
    };
    expect(summary.stopReasons).toEqual([
      { stopReason: 'completed', runs: 1, share: 1, inputTokens: 100, outputTokens: 7 },
    ]);
  });

  it('records the same 100/7 in gen_ai.client.token.usage under the previous names (gen_ai_previous)', async () => {
    const capture = join(dir, 'plain-turn-previous.ndjson');
    writeFileSync(capture, `${PLAIN_TURN}\n`);
    const out = join(dir, 'out-previous');
    const run = await runCli(['replay', '--json', '--no-progress', '--protocol', 'sdk', '--out', out, capture], '', {
      ...QUIET_ENV,
      OTEL_SEMCONV_STABILITY_OPT_IN: 'gen_ai_previous',
    });
    expect(run.stderr.toString()).toBe('');
    expect(run.code).toBe(0);
    expect(tokenUsageSum(out, 'output')).toBe(7);
    expect(tokenUsageSum(out, 'input')).toBe(100);
    expect(usageCounter(out, 'gen_ai.client.inference.usage.output_tokens')).toBe(0);
  });

  it('shows 100/7 in the run table', () => {
    const record = {
      runId: 'r1',
      source: 'sdk',
      agentName: 'deepseek',
      startTime: T,
      endTime: T + 14,
      stopReason: 'completed',
      output: [{ type: 'text', text: 'Hello there.' }],
      outputSource: 'message',
      emptyMessages: 0,
      steps: [],
      toolCalls: [],
      usage: {
        inputTokens: 100,
        outputTokens: 7,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 3,
        reported: true,
      },
    } as unknown as RunRecord; // only the fields the table reads
    expect(formatRunTable([record])).toContain('100/7');
    expect(formatRunTable([record])).not.toContain('100/10');
  });
});
