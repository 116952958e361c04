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
import { sdkStopReason, stopReasonFromAcp } from '../../src/output/stop-reason.js';
import {
  attempt,
  endSeed,
  events,
  finish,
  step,
  stepStart,
  text,
  textDelta,
  toolCall,
  turnEnd,
  turnStart,
  usage,
} from '../helpers/events.js';

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
  ])('maps the turn-end kind %s to %s by the SDK rule (its older name)', (kind, expected) => {
    expect(sdkStopReason({ kind })).toBe(expected);
  });

  it('maps a missing turn end to error, never completed', () => {
    expect(sdkStopReason(undefined)).toBe('error');
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
      events([
        turnStart(),
        stepStart(0),
        step('embedded', {
          stream: [textDelta('Partial answer'), finish('max-tokens')],
          content: [],
          usage: usage(10, 4096),
        }),
        turnEnd('max-tokens'),
      ]),
    );
    expect(result).toEqual({ output: [{ type: 'text', text: 'Partial answer' }], stopReason: 'max-tokens' });
  });

  it('reports an empty output and error when the child produced nothing and never ended its turn', () => {
    expect(readResult(events([turnStart()]))).toEqual({ output: [], stopReason: 'error' });
  });

  it("sets no diagnostic for an errored turn, as upstream's readResult sets none", () => {
    const result = readResult(
      events([
        turnStart(),
        stepStart(0),
        attempt('embedded', {
          stream: [textDelta('Half a thought')],
          failure: { message: 'provider overloaded', code: 'overloaded' },
        }),
        turnEnd('error', 0, { error: { message: 'provider overloaded', code: 'overloaded' } }),
      ]),
    );
    expect(result).toEqual({ output: [{ type: 'text', text: 'Half a thought' }], stopReason: 'error' });
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
    expect(epochs.map((e) => e.map((ev) => ev.seq))).toEqual([
      [4, 5, 6],
      [7, 8, 9],
      [10, 11],
    ]);
  });

  it('never lets a later epoch report an earlier epoch message, and leaves lastAssistantMessage absent without output', () => {
    const log = events([
      turnStart(0),
      step('embedded', { turn: 0, content: [text('epoch one answer')] }),
      turnEnd('completed', 0),
      turnStart(1),
      stepStart(0, 1),
      step('embedded', { turn: 1, content: [] }),
      turnEnd('max-tokens', 1),
    ]);
    const [first, second] = splitEpochs(log);
    expect(subagentRunEndInfo(identity, 'completed', finalAssistantOutput(first ?? []))).toEqual({
      ...identity,
      stopReason: 'completed',
      lastAssistantMessage: [{ type: 'text', text: 'epoch one answer' }],
    });
    const secondEnd = subagentRunEndInfo(
      identity,
      readResult(second ?? []).stopReason,
      finalAssistantOutput(second ?? []),
    );
    expect(secondEnd).toEqual({ ...identity, stopReason: 'max-tokens' });
    expect('lastAssistantMessage' in secondEnd).toBe(false);
  });
});

describe('foregroundToolResult', () => {
  it('gives a completed run one text block of its text blocks joined with nothing between them, and the output as value', () => {
    const output = [text('All '), toolCall('call_1'), text('done.')];
    expect(foregroundToolResult(subagentResult(output, 'completed'))).toEqual({
      isError: false,
      content: [{ type: 'text', text: 'All done.' }],
      output,
    });
  });

  it('gives a completed run without output an empty text and output []', () => {
    expect(foregroundToolResult(subagentResult(undefined, 'completed'))).toEqual({
      isError: false,
      content: [{ type: 'text', text: '' }],
      output: [],
    });
  });

  it("gives the parent of upstream's subagent-max-tokens-partial snapshot exactly its recorded tool result", () => {
    expect(
      foregroundToolResult(subagentResult([text('partial one'), toolCall('call_child_1', 'todo_write')], 'max-tokens')),
    ).toEqual({
      isError: true,
      content: [
        {
          type: 'text',
          text: 'Error: subagent run hit its token limit before finishing\nPartial output before the run ended:\npartial one',
        },
      ],
    });
  });

  it.each([
    ['completed', undefined, [], { isError: false, content: [{ type: 'text', text: '' }], output: [] }],
    [
      'aborted',
      undefined,
      [],
      { isError: true, content: [{ type: 'text', text: 'Error: subagent run was cancelled' }] },
    ],
    [
      'error',
      'provider said: overloaded',
      [],
      {
        isError: true,
        content: [{ type: 'text', text: 'Error: subagent run failed\nDiagnostic: provider said: overloaded' }],
      },
    ],
    [
      'max-tokens',
      'context too long',
      [text('I will '), toolCall('c'), text('look.')],
      {
        isError: true,
        content: [
          {
            type: 'text',
            text: 'Error: subagent run hit its token limit before finishing\nDiagnostic: context too long\nPartial output before the run ended:\nI will look.',
          },
        ],
      },
    ],
    [
      'refusal',
      undefined,
      [text('No.')],
      {
        isError: true,
        content: [
          { type: 'text', text: 'Error: subagent declined the task\nPartial output before the run ended:\nNo.' },
        ],
      },
    ],
    [
      'paused',
      undefined,
      [],
      { isError: true, content: [{ type: 'text', text: 'Error: subagent run ended abnormally (paused)' }] },
    ],
    [
      'aborted',
      undefined,
      [toolCall('only-a-call')],
      { isError: true, content: [{ type: 'text', text: 'Error: subagent run was cancelled' }] },
    ],
  ] as const)(
    "stop reason %s, diagnostic %s, output %j: upstream's tool result",
    (stopReason, diagnostic, output, expected) => {
      expect(foregroundToolResult(subagentResult([...output], stopReason, diagnostic))).toEqual(expected);
    },
  );

  it('caps the diagnostic at 4096 UTF-8 bytes without splitting a character', () => {
    const long = 'é'.repeat(3000); // 6000 bytes
    const result = subagentResult(undefined, 'error', long);
    expect(Buffer.byteLength(result.diagnostic ?? '', 'utf8')).toBe(4096);
    expect(result.diagnostic).toBe('é'.repeat(2048));
    expect(capUtf8('a€b', 3)).toBe('a');
  });
});
