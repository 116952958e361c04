/**
 * The corpus check reads back the run spans `replay` wrote (`src/corpus/spans.ts`):
 * a run's cache writes under v0.1.0's name (the default, decision 0121) and
 * under the previous one (`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_previous`),
 * from trace files the project's own pipeline wrote in each mode.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSpans } from '../../src/corpus/spans.js';
import type { RunRecord } from '../../src/observe/run-record.js';
import { createTelemetry } from '../../src/telemetry/setup.js';

const dir = mkdtempSync(join(tmpdir(), 'corpus-spans-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = 1_700_000_000_000;

const run: RunRecord = {
  runId: 'run-cache',
  source: 'log',
  agentName: 'claude-code',
  startTime: T0,
  endTime: T0 + 1000,
  stopReason: 'completed',
  output: [{ type: 'text', text: 'Done.' }],
  outputSource: 'message',
  emptyMessages: 0,
  // input as the conventions count it: 3 uncached + 100 read + 10 written = 113
  usage: {
    inputTokens: 3,
    outputTokens: 7,
    cacheReadTokens: 100,
    cacheWriteTokens: 10,
    reasoningTokens: 0,
    reported: true,
  },
  steps: [],
  toolCalls: [],
};

describe('readSpans', () => {
  it.each([
    ['v0.1.0 names (the default)', ''],
    ['previous names (gen_ai_previous)', 'gen_ai_previous'],
  ])("reads a run span's cache writes under %s", async (_mode, optIn) => {
    const out = mkdtempSync(join(dir, 'out-'));
    const telemetry = createTelemetry({ env: { SUBAGENT_OTEL_OUT: out, OTEL_SEMCONV_STABILITY_OPT_IN: optIn } });
    telemetry.runs.onRunEnd(run);
    await telemetry.shutdown(5000);
    const index = readSpans(join(out, 'traces.jsonl'));
    expect(index.runs.map((r) => [r.runId, r.tokens])).toEqual([
      ['run-cache', { input: 113, output: 7, cacheRead: 100, cacheWrite: 10 }],
    ]);
  });
});
