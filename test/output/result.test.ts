import { describe, expect, it } from 'vitest';
import { finalAssistantOutput } from '../../src/output/assistant-output.js';
import {
  capUtf8,
  foregroundToolResult,
  readResult,
  splitEpochs,
  subagentResult,
  subagentRunEndInfo,
} from '../../src/output/result.js';
import { stopReasonFromAcp, stopReasonFromTurnEnd } from '../../src/output/stop-reason.js';
import { attempt, endSeed, events, finish, step, text, textDelta, toolCall, turnEnd, turnStart, usage } from '../helpers/events.js';

const identity = { runId: 'run-1', provider: 'deepseek', id: 'child-1', local: true };

describe('stop reason mappings', () => {
  it.each([
    ['completed', 'completed'],
    ['max-tokens', 'max-tokens'],
    ['aborted', 'aborted'],
    ['error', 'error'],
    ['blocked', 'error'],
    ['interrupted', 'error'],
    ['some-future-kind', 'error'],
  ])('maps the turn-end kind %s to %s', (kind, expected) => {
    expect(stopReasonFromTurnEnd({ kind })).toBe(expected);
  });

  it('maps a missing turn end to error, never completed', () => {
    expect(stopReasonFromTurnEnd(undefined)).toBe('error');
  });

  it.each([
    ['end_turn', 'completed'],
    ['max_tokens', 'max-tokens'],
    ['refusal', 'refusal'],
    ['cancelled', 'aborted'],
    ['max_turn_requests', 'error'],
    ['brand_new_reason', 'error'],
    [undefined, 'error'],
  ])('maps the ACP stop reason %s to %s', (acp, expected) => {
    expect(stopReasonFromAcp(acp)).toBe(expected);
  });
});

describe('readResult', () => {
  it('keeps the streamed text and the max-tokens stop reason after an empty terminal message', () => {
    const result = readResult(
      events([turnStart(), step('embedded', { stream: [textDelta('Partial answer'), finish('max-tokens')], content: [], usage: usage(10, 4096) }), turnEnd('max-tokens')]),
    );
    expect(result).toEqual({ output: [{ type: 'text', text: 'Partial answer' }], stopReason: 'max-tokens' });
  });

  it('reports an empty output and error when the child produced nothing and never ended its turn', () => {
    expect(readResult(events([turnStart()]))).toEqual({ output: [], stopReason: 'error' });
  });

  it('carries the failure of an errored turn as the diagnostic, separate from the output', () => {
    const result = readResult(
      events([
        turnStart(),
        attempt('embedded', { stream: [textDelta('Half a thought')], failure: { message: 'provider overloaded', code: 'overloaded' } }),
        turnEnd('error', 0, { error: { message: 'provider overloaded', code: 'overloaded' } }),
      ]),
    );
    expect(result).toEqual({ output: [{ type: 'text', text: 'Half a thought' }], stopReason: 'error', diagnostic: 'provider overloaded' });
  });
});

describe('splitEpochs', () => {
  it('drops inherited events before the last seed marker and opens an epoch at each turn start', () => {
    const log = events([
      turnStart(0),
      step('embedded', { turn: 0, content: [text('inherited answer')] }),
      turnEnd('completed', 0),
      endSeed(),
      turnStart(1),
      step('embedded', { turn: 1, content: [text('first activation')] }),
      turnEnd('completed', 1),
      turnStart(2),
      step('embedded', { turn: 2, stream: [textDelta('x')], content: [] }),
      turnEnd('max-tokens', 2),
      turnStart(3),
      turnEnd('aborted', 3),
    ]);
    const epochs = splitEpochs(log);
    expect(epochs.map((e) => e.map((ev) => ev.seq))).toEqual([[4, 5, 6], [7, 8, 9], [10, 11]]);
  });

  it('never lets a later epoch report an earlier epoch message, and leaves lastAssistantMessage absent without output', () => {
    const log = events([
      turnStart(0),
      step('embedded', { turn: 0, content: [text('epoch one answer')] }),
      turnEnd('completed', 0),
      turnStart(1),
      step('embedded', { turn: 1, content: [] }),
      turnEnd('max-tokens', 1),
    ]);
    const [first, second] = splitEpochs(log);
    expect(subagentRunEndInfo(identity, 'completed', finalAssistantOutput(first ?? []))).toEqual({
      ...identity,
      stopReason: 'completed',
      lastAssistantMessage: [{ type: 'text', text: 'epoch one answer' }],
    });
    const secondEnd = subagentRunEndInfo(identity, readResult(second ?? []).stopReason, finalAssistantOutput(second ?? []));
    expect(secondEnd).toEqual({ ...identity, stopReason: 'max-tokens' });
    expect('lastAssistantMessage' in secondEnd).toBe(false);
  });
});

describe('foregroundToolResult', () => {
  it('returns the output blocks of a completed run', () => {
    expect(foregroundToolResult(subagentResult([text('All done.')], 'completed'))).toEqual({ isError: false, content: [{ type: 'text', text: 'All done.' }] });
  });

  it('says so when a completed run produced nothing', () => {
    expect(foregroundToolResult(subagentResult(undefined, 'completed'))).toEqual({
      isError: false,
      content: [{ type: 'text', text: 'The subagent completed without producing output.' }],
    });
  });

  it('presents headline, diagnostic and partial text as separate blocks for a non-completed run', () => {
    const result = subagentResult([text('I will look that up.'), toolCall('call_1')], 'max-tokens', 'provider said: context too long');
    expect(foregroundToolResult(result)).toEqual({
      isError: true,
      content: [
        { type: 'text', text: 'Subagent stopped early: it reached its output token limit (stop reason: max-tokens).' },
        { type: 'text', text: 'Provider diagnostic:\nprovider said: context too long' },
        { type: 'text', text: 'Partial output from the subagent (it may be incomplete):\nI will look that up.' },
      ],
    });
  });

  it('omits the partial block when an aborted child produced no text', () => {
    expect(foregroundToolResult(subagentResult(undefined, 'aborted'))).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'Subagent stopped early: it was cancelled before it finished (stop reason: aborted).' }],
    });
  });

  it('caps the diagnostic at 4096 UTF-8 bytes without splitting a character', () => {
    const long = 'é'.repeat(3000); // 6000 bytes
    const result = subagentResult(undefined, 'error', long);
    expect(Buffer.byteLength(result.diagnostic ?? '', 'utf8')).toBe(4096);
    expect(result.diagnostic).toBe('é'.repeat(2048));
    expect(capUtf8('a€b', 3)).toBe('a');
  });
});
