/**
 * The run span says what the parent received, usage included (decision 0071,
 * 2026-12 update): for every way a run is observed, the `invoke_agent` span's
 * `gen_ai.usage.*` equal the usage of the run the parent's `SubagentResult`
 * came from (`SubagentOutcome.record.usage`, in the conventions' accounting),
 * whatever the run's `chat` spans carry, and the figures are the literal ones
 * the runtime reported.
 *
 * Paths: the SDK backend in process (its own listener), the same backend
 * driving the built proxy (the proxy's spans in its trace file against the
 * backend's result), replay of the durable logs a proxied runtime wrote, and
 * the real runtime's captured bytes (test/captures, 210 in / 28 out) replayed
 * by the command and folded in process.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runSdkSubagent } from '../../src/backend/sdk-backend.js';
import { SdkTracker } from '../../src/observe/sdk-tracker.js';
import type { UsageTotals } from '../../src/observe/run-record.js';
import { conventionTokenCounts } from '../../src/telemetry/token-usage.js';
import { parseFrame } from '../../src/wire/jsonrpc.js';
import { attributes, readSpans, runCli, type OtlpSpan, QUIET_ENV } from '../helpers/cli.js';
import { CLI, FIXTURE_SDK_RUNTIME, ROOT } from '../helpers/paths.js';
import { telemetryHarness } from '../helpers/telemetry-harness.js';

const dir = mkdtempSync(join(tmpdir(), 'run-span-usage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const route = { provider: 'deepseek', model: 'deepseek-chat' };

/** The usage attributes a run span must carry for `usage`, in the conventions' accounting (absent parts omitted). */
function expectedAttributes(usage: UsageTotals): Record<string, number> {
  const tokens = conventionTokenCounts(usage);
  return {
    'gen_ai.usage.input_tokens': tokens.input,
    'gen_ai.usage.output_tokens': tokens.output,
    ...(tokens.cacheRead > 0 ? { 'gen_ai.usage.cache_read.input_tokens': tokens.cacheRead } : {}),
    ...(tokens.cacheWrite > 0 ? { 'gen_ai.usage.cache_write.input_tokens': tokens.cacheWrite } : {}), // v0.1.0, the default (decision 0121)
    ...(tokens.reasoning > 0 ? { 'gen_ai.usage.reasoning.output_tokens': tokens.reasoning } : {}),
  };
}

/** The usage attributes found on a span (every `gen_ai.usage.*` key). */
function usageOf(attrs: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(attrs).filter(([key]) => key.startsWith('gen_ai.usage.')));
}

const runSpansOf = (spans: readonly OtlpSpan[]): OtlpSpan[] => spans.filter((s) => s.name.startsWith('invoke_agent'));

describe('the SDK backend: the run span carries the usage of the result the parent got', () => {
  it('multi-step-max-tokens: 360 in (150 of them cache reads) / 94 out on the run span, each call on its chat span', async () => {
    const h = telemetryHarness();
    const outcome = await runSdkSubagent({
      command: process.execPath,
      args: [FIXTURE_SDK_RUNTIME],
      ...route,
      prompt: 'scenario:multi-step-max-tokens',
      listener: h.runs,
    });
    expect(outcome.result.stopReason).toBe('max-tokens');
    expect(outcome.record.usage).toMatchObject({
      inputTokens: 210,
      outputTokens: 94,
      cacheReadTokens: 150,
      reported: true,
    });
    const [span, ...more] = h.runSpans();
    expect(more).toHaveLength(0);
    expect(usageOf(span!.attributes)).toEqual(expectedAttributes(outcome.record.usage));
    expect(usageOf(span!.attributes)).toEqual({
      'gen_ai.usage.input_tokens': 360,
      'gen_ai.usage.output_tokens': 94,
      'gen_ai.usage.cache_read.input_tokens': 150,
    });
    expect(span!.attributes['subagent.usage.rollup']).toBe(true);
    const chats = h.spanExporter.getFinishedSpans().filter((s) => s.name.startsWith('chat'));
    expect(
      chats.map((s) => [s.attributes['gen_ai.usage.input_tokens'], s.attributes['gen_ai.usage.output_tokens']]),
    ).toEqual([
      [150, 30],
      [210, 64],
    ]);
    await h.tracerProvider.shutdown();
    await h.meterProvider.shutdown();
  });

  it('reasoning-only: 80 in / 6 out with 4 reasoning, the reasoning never added to the output', async () => {
    const h = telemetryHarness();
    const outcome = await runSdkSubagent({
      command: process.execPath,
      args: [FIXTURE_SDK_RUNTIME],
      ...route,
      prompt: 'scenario:reasoning-only',
      listener: h.runs,
    });
    const [span] = h.runSpans();
    expect(usageOf(span!.attributes)).toEqual(expectedAttributes(outcome.record.usage));
    expect(usageOf(span!.attributes)).toEqual({
      'gen_ai.usage.input_tokens': 80,
      'gen_ai.usage.output_tokens': 6,
      'gen_ai.usage.reasoning.output_tokens': 4,
    });
    await h.tracerProvider.shutdown();
    await h.meterProvider.shutdown();
  });
});

describe('the proxy: its run span carries the usage of the result the parent got through it', () => {
  it("the backend drives the runtime through the built proxy; the proxy's run span equals the backend's result", async () => {
    const out = join(dir, 'proxy');
    const outcome = await runSdkSubagent({
      command: process.execPath,
      args: [CLI, 'proxy', '--out', out, '--', process.execPath, FIXTURE_SDK_RUNTIME],
      env: QUIET_ENV,
      ...route,
      prompt: 'scenario:multi-step-max-tokens',
    });
    expect(outcome.result.stopReason).toBe('max-tokens');
    const spans = readSpans(out);
    const [span, ...more] = runSpansOf(spans);
    expect(more).toHaveLength(0);
    expect(usageOf(attributes(span!))).toEqual(expectedAttributes(outcome.record.usage));
    expect(usageOf(attributes(span!))).toEqual({
      'gen_ai.usage.input_tokens': 360,
      'gen_ai.usage.output_tokens': 94,
      'gen_ai.usage.cache_read.input_tokens': 150,
    });
    expect(attributes(span!)['subagent.usage.rollup']).toBe(true);
  });
});

describe('replay: the run spans carry the usage the runs reported', () => {
  it("the durable logs of the demo's proxied sessions: every run span equals its run's summed usage", async () => {
    const sessions = join(dir, 'sessions');
    const demo = await runCli(['demo', '--sessions', sessions, '--out', join(dir, 'demo-out')], '', QUIET_ENV);
    expect(demo.code).toBe(0);
    const out = join(dir, 'replayed');
    const replay = await runCli(['replay', '--json', '--no-progress', '--out', out, sessions], '', QUIET_ENV);
    expect(replay.code).toBe(0);
    const summary = JSON.parse(replay.stdout.toString()) as {
      stopReasons: Array<{ inputTokens: number; outputTokens: number }>;
    };
    const spans = runSpansOf(readSpans(out));
    const sum = (key: string): number =>
      spans.reduce((total, s) => total + ((attributes(s)[key] as number | undefined) ?? 0), 0);
    // The run spans alone sum to the replay's token totals (which count each run once).
    expect(sum('gen_ai.usage.input_tokens')).toBe(summary.stopReasons.reduce((n, r) => n + r.inputTokens, 0));
    expect(sum('gen_ai.usage.output_tokens')).toBe(summary.stopReasons.reduce((n, r) => n + r.outputTokens, 0));
    expect(sum('gen_ai.usage.input_tokens')).toBe(1820);
    expect(sum('gen_ai.usage.output_tokens')).toBe(410);
  });
});

describe("the real runtime's bytes: 210 in / 28 out on the run span", () => {
  const capture = join(ROOT, 'test', 'captures', 'dsh-runtime-max-tokens-empty-message.ndjson');

  it('replayed by the command', async () => {
    const out = join(dir, 'capture');
    const r = await runCli(['replay', '--no-progress', '--out', out, capture], '', QUIET_ENV);
    expect(r.code).toBe(0);
    const [span, ...more] = runSpansOf(readSpans(out));
    expect(more).toHaveLength(0);
    expect(usageOf(attributes(span!))).toEqual({ 'gen_ai.usage.input_tokens': 210, 'gen_ai.usage.output_tokens': 28 });
    expect(attributes(span!)['subagent.stop_reason']).toBe('max-tokens');
  });

  it("folded in process: the run span equals the record a parent's result is built from", async () => {
    const h = telemetryHarness();
    let usage: UsageTotals | undefined;
    const tracker = new SdkTracker({
      onRunStart: (s) => h.runs.onRunStart(s),
      onRunEnd: (r) => ((usage = r.usage), h.runs.onRunEnd(r)),
    });
    const lines = readFileSync(capture, 'utf8').trim().split('\n');
    lines.forEach((line, i) => {
      const parsed = parseFrame(line);
      if (parsed.ok) tracker.observeFrame('agent->client', parsed.frame, 1_796_063_390_280 + i);
    });
    tracker.close(1_796_063_390_280 + lines.length);
    expect(usage).toMatchObject({ inputTokens: 210, outputTokens: 28 });
    const [span] = h.runSpans();
    expect(usageOf(span!.attributes)).toEqual(expectedAttributes(usage!));
    await h.tracerProvider.shutdown();
    await h.meterProvider.shutdown();
  });
});
