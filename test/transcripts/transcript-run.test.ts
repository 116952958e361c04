/**
 * TranscriptRunBuilder: reconstructed calls folded through the shared
 * RunBuilder (the one rule, usage sums, steps), stop evidence by strength.
 */
import { describe, expect, it } from 'vitest';
import { TranscriptRunBuilder, UNKNOWN_STOP } from '../../src/transcripts/transcript-run.js';

const T = 1_770_000_000_000;
const start = {
  runId: 'claude-code:s1',
  source: 'claude-code' as const,
  agentName: 'claude-code',
  startTime: T,
  traceKey: 'claude-code:s1',
};

describe('TranscriptRunBuilder', () => {
  it("selects the last non-empty message by the one rule and sums every call's usage, empty ones included", () => {
    const b = new TranscriptRunBuilder(start);
    b.call({
      time: T + 1,
      content: [
        { type: 'text', text: 'Partial answer' },
        { type: 'tool-call', id: 't1', name: 'Read', arguments: '{}' },
      ],
      usage: { inputTokens: 3, outputTokens: 10, cacheReadTokens: 100 },
      model: 'm',
      finishReason: 'tool-calls',
    });
    b.call({
      time: T + 5,
      endTime: T + 6,
      content: [],
      usage: { inputTokens: 1, outputTokens: 64 },
      model: 'm',
      finishReason: 'max-tokens',
    });
    b.noteStop({
      reason: 'max-tokens',
      inferredFrom: 'claude-code:api-error:max_output_tokens',
      diagnostic: "API Error: Claude's response exceeded the 64 output token maximum.",
    });
    const r = b.finish();
    expect(r.output).toEqual([
      { type: 'text', text: 'Partial answer' },
      { type: 'tool-call', id: 't1', name: 'Read', arguments: '{}' },
    ]);
    expect(r.outputSource).toBe('message');
    expect(r.emptyMessages).toBe(1);
    expect(r.usage).toEqual({
      inputTokens: 4,
      outputTokens: 74,
      cacheReadTokens: 100,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      reported: true,
    });
    expect(r.steps.map((s) => [s.step, s.startTime, s.endTime, s.finishReason, s.model])).toEqual([
      [0, T + 1, T + 1, 'tool-calls', 'm'],
      [1, T + 5, T + 6, 'max-tokens', 'm'],
    ]);
    expect(r.stopReason).toBe('max-tokens');
    expect(r.stopReasonInferredFrom).toBe('claude-code:api-error:max_output_tokens');
    expect(r.diagnostic).toBe("API Error: Claude's response exceeded the 64 output token maximum.");
    expect(r.endTime).toBe(T + 6);
  });

  it('is unknown, inferred from none, when nothing says how the run ended', () => {
    const r = new TranscriptRunBuilder(start).finish();
    expect([r.stopReason, r.stopReasonInferredFrom, r.output, r.outputSource, r.usage.reported]).toEqual([
      'unknown',
      'none',
      undefined,
      'none',
      false,
    ]);
    expect(UNKNOWN_STOP).toEqual({ reason: 'unknown', inferredFrom: 'none' });
  });

  it('never lets a later generic completion overrule a recorded truncation, but a later error replaces a completion', () => {
    const b = new TranscriptRunBuilder(start);
    b.noteStop({ reason: 'max-tokens', inferredFrom: 'a' });
    b.noteStop({ reason: 'completed', inferredFrom: 'parent' });
    expect(b.stop.reason).toBe('max-tokens');
    const c = new TranscriptRunBuilder(start);
    c.noteStop({ reason: 'completed', inferredFrom: 'parent' });
    c.noteStop({ reason: 'error', inferredFrom: 'api-error' });
    c.noteStop({ reason: 'unknown', inferredFrom: 'none' });
    expect(c.stop).toEqual({ reason: 'error', inferredFrom: 'api-error' });
  });

  it('records tool calls, the prompt, usage notes once each, the reported output and the models seen', () => {
    const b = new TranscriptRunBuilder(start);
    b.prompt([{ type: 'text', text: 'Find the bug' }]);
    b.toolStarted('t1', 'Bash', T + 2);
    b.toolFinished('t1', T + 3, true, 'tool_error');
    b.call({ time: T + 4, content: [{ type: 'text', text: 'Found it.' }], model: 'claude-sonnet-4-5' });
    b.noteUsage('claude-code:subagent-streaming-usage');
    b.noteUsage('claude-code:subagent-streaming-usage');
    b.noteStop({ reason: 'completed', inferredFrom: 'claude-code:parent-result:completed' });
    const r = b.finish({
      reported: { output: [{ type: 'text', text: 'Found it.' }], compare: 'text' },
      agentName: 'Explore',
    });
    expect(r.prompt).toEqual([{ type: 'text', text: 'Find the bug' }]);
    expect(r.toolCalls).toEqual([
      { callId: 't1', name: 'Bash', startTime: T + 2, endTime: T + 3, isError: true, errorType: 'tool_error' },
    ]);
    expect(r.usageNotes).toEqual(['claude-code:subagent-streaming-usage']);
    expect(r.reported).toEqual({ output: [{ type: 'text', text: 'Found it.' }], compare: 'text' });
    expect(r.agentName).toBe('Explore');
    expect(b.models).toEqual(['claude-sonnet-4-5']);
  });
});
