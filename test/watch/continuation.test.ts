/**
 * The later part of a run whose files grew after `watch` reported it: what
 * it holds (only the calls and tool calls after the reported end, their
 * usage, the output when the selection changed), its identity, and when
 * there is nothing to report. Expected values are written out by hand from
 * the record below.
 */
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/observe/run-record.js';
import { continuationRunId, laterPart, outputDigest, reportedRunOf } from '../../src/watch/continuation.js';

const T = Date.UTC(2026, 11, 3, 9, 0, 0);
const FIRST_ANSWER = [{ type: 'text' as const, text: 'First answer.' }];
const LATER_ANSWER = [{ type: 'text' as const, text: 'Later answer.' }];

/** A Claude Code session as its file holds it after being taken up again: two calls before T+60 s, two after. */
function whole(overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    runId: 'claude-code:s1',
    source: 'claude-code',
    agentName: 'claude-code',
    sessionId: 's1',
    traceKey: 'claude-code:s1',
    startTime: T,
    endTime: T + 3_600_000,
    stopReason: 'unknown',
    stopReasonInferredFrom: 'none',
    output: LATER_ANSWER,
    outputSource: 'message',
    emptyMessages: 3,
    prompt: [{ type: 'text', text: 'the first prompt' }],
    usage: {
      inputTokens: 10 + 20 + 30 + 40,
      outputTokens: 1 + 2 + 3 + 4,
      cacheReadTokens: 100 + 200 + 300 + 400,
      cacheWriteTokens: 5,
      reasoningTokens: 0,
      reported: true,
    },
    steps: [
      {
        step: 0,
        startTime: T + 1000,
        endTime: T + 2000,
        model: 'claude-sonnet-4-5',
        usage: { inputTokens: 10, outputTokens: 1, cacheReadTokens: 100, cacheWriteTokens: 5 },
      },
      {
        step: 1,
        startTime: T + 50_000,
        endTime: T + 60_000,
        model: 'claude-sonnet-4-5',
        usage: { inputTokens: 20, outputTokens: 2, cacheReadTokens: 200 },
      },
      {
        step: 2,
        startTime: T + 3_000_000,
        endTime: T + 3_100_000,
        model: 'claude-opus-4-5',
        usage: { inputTokens: 30, outputTokens: 3, cacheReadTokens: 300 },
      },
      {
        step: 3,
        startTime: T + 3_500_000,
        endTime: T + 3_600_000,
        model: 'claude-opus-4-5',
        usage: { inputTokens: 40, outputTokens: 4, cacheReadTokens: 400 },
      },
    ],
    toolCalls: [
      { callId: 'toolu_1', name: 'Task', startTime: T + 2000, endTime: T + 40_000, isError: false },
      { callId: 'toolu_2', name: 'Task', startTime: T + 3_100_000, endTime: T + 3_400_000, isError: false },
    ],
    cost: { amount: 1, currency: 'USD', unpricedModels: [], pricedCalls: 4 },
    ...overrides,
  };
}

/** What the checkpoint held after the first report, at T+60 s. */
const FIRST = { end: T + 60_000, output: outputDigest(FIRST_ANSWER), emptyMessages: 1 };

describe('the later part of a run that grew after its report', () => {
  it('holds only the calls and tool calls after the reported end, their usage, and the new output', () => {
    const part = laterPart(whole(), FIRST);
    expect(part).toBeDefined();
    expect(part?.runId).toBe('claude-code:s1@2026-12-03T09:01:00.000Z');
    expect(part?.continuesRunId).toBe('claude-code:s1');
    expect([part?.sessionId, part?.traceKey, part?.agentName, part?.source]).toEqual([
      's1',
      'claude-code:s1',
      'claude-code',
      'claude-code',
    ]);
    expect([part?.startTime, part?.endTime]).toEqual([T + 3_000_000, T + 3_600_000]);
    expect(part?.steps.map((s) => s.step)).toEqual([2, 3]);
    expect(part?.toolCalls.map((c) => c.callId)).toEqual(['toolu_2']);
    expect(part?.usage).toEqual({
      inputTokens: 70,
      outputTokens: 7,
      cacheReadTokens: 700,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      reported: true,
    });
    expect([part?.output, part?.outputSource, part?.emptyMessages]).toEqual([LATER_ANSWER, 'message', 2]);
    expect([part?.stopReason, part?.stopReasonInferredFrom]).toEqual(['unknown', 'none']);
    // The first prompt and the whole run's cost belong to the first part; the watch prices the later part anew.
    expect(part?.prompt).toBeUndefined();
    expect(part?.cost).toBeUndefined();
  });

  it('has no output when the selection did not change (the later calls wrote no text)', () => {
    const part = laterPart(whole({ output: FIRST_ANSWER, reported: { output: FIRST_ANSWER, compare: 'text' } }), FIRST);
    expect([part?.output, part?.outputSource, part?.reported]).toEqual([undefined, 'none', undefined]);
    expect(part?.usage.outputTokens).toBe(7);
  });

  it('keeps the parent’s report with a new output, and the stop reason and diagnostic as the run ends now', () => {
    const reported = { output: LATER_ANSWER, compare: 'text' as const };
    const part = laterPart(
      whole({
        reported,
        stopReason: 'error',
        stopReasonInferredFrom: 'claude-code:api-error:rate_limit',
        diagnostic: 'API Error: Rate limit reached',
      }),
      FIRST,
    );
    expect(part?.reported).toEqual(reported);
    expect([part?.stopReason, part?.stopReasonInferredFrom, part?.diagnostic]).toEqual([
      'error',
      'claude-code:api-error:rate_limit',
      'API Error: Rate limit reached',
    ]);
  });

  it('is nothing when the files only gained bookkeeping after the report', () => {
    const first = whole({
      steps: whole().steps.slice(0, 2),
      toolCalls: whole().toolCalls.slice(0, 1),
      output: FIRST_ANSWER,
    });
    expect(laterPart(first, FIRST)).toBeUndefined();
  });

  it('takes the output as new when an older checkpoint kept no digest of it', () => {
    const part = laterPart(whole({ output: FIRST_ANSWER }), { end: FIRST.end });
    expect([part?.output, part?.emptyMessages]).toEqual([FIRST_ANSWER, 3]);
  });

  it('has usage not reported when none of the later calls reported any', () => {
    const steps = whole().steps.map((s) =>
      s.startTime > FIRST.end ? { step: s.step, startTime: s.startTime, endTime: s.endTime } : s,
    );
    expect(laterPart(whole({ steps }), FIRST)?.usage).toEqual({
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      reported: false,
    });
  });

  it('names each later part by the end it follows, the same on every read', () => {
    expect(continuationRunId('codex:t1', T)).toBe('codex:t1@2026-12-03T09:00:00.000Z');
    expect(reportedRunOf(whole())).toEqual({
      end: T + 3_600_000,
      output: outputDigest(LATER_ANSWER),
      emptyMessages: 3,
    });
    expect(outputDigest(undefined)).toBe(outputDigest([]));
    expect(outputDigest(FIRST_ANSWER)).not.toBe(outputDigest(LATER_ANSWER));
    expect(outputDigest(FIRST_ANSWER)).toMatch(/^[0-9a-f]{32}$/);
  });
});
