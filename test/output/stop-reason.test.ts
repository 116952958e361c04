/**
 * Stop reasons as DeepSeek Harness derives them, one row per upstream rule.
 * Each row is an event suffix and the stop reason each of upstream's readers
 * gives for it, written by hand from reading upstream's source: the
 * in-process driver's `readResult` (`toStopReason` over `foldConsumedWork`),
 * the continuable Activation's `epochStopReason`, and the SDK backend's
 * `sdkStopReason` over the run's last `turn/end`.
 */
import { describe, expect, it } from 'vitest';
import { foldConsumedWork } from '../../src/output/consumed-work.js';
import { readEpochResult, readResult } from '../../src/output/result.js';
import {
  epochStopReason,
  inProcessStopReason,
  sdkStopReason,
  stopReasonOfEvents,
} from '../../src/output/stop-reason.js';
import { events, step, stepStart, text, turnEnd, turnStart } from '../helpers/events.js';

type Draft = { type: string; data?: unknown };
const claim = (): Draft => ({
  type: 'agent/inbox/spliced',
  data: { target: 'next-turn', start: 0, removedCount: 1, inserted: [] },
});
const receipt = (id = 'm1'): Draft => ({
  type: 'agent/inbox/spliced',
  data: { target: 'next-turn', start: 0, inserted: [{ id, role: 'user', content: [] }] },
});
const cancelled = (inserted: unknown[] = []): Draft => ({
  type: 'agent/inbox/spliced',
  data: { target: 'next-turn', start: 0, removedCount: 1, outcome: 'canceled', inserted },
});
const answer = (turn = 0): Draft[] =>
  [stepStart(0, turn), step('embedded', { turn, content: [text('answer')] })].flat();

/** [rule, suffix, in-process, epoch, sdk] */
const ROWS: Array<[string, Array<Draft | Draft[]>, string, string, string]> = [
  [
    'a stepped turn that completed',
    [receipt(), turnStart(), claim(), answer(), turnEnd('completed')],
    'completed',
    'completed',
    'completed',
  ],
  [
    'a stepped turn cut at max-tokens',
    [turnStart(), answer(), turnEnd('max-tokens')],
    'max-tokens',
    'max-tokens',
    'max-tokens',
  ],
  [
    'a stepped turn aborted',
    [turnStart(), answer(), turnEnd('aborted', 0, { reason: { kind: 'parent' } })],
    'aborted',
    'aborted',
    'aborted',
  ],
  [
    'a stepped turn that errored',
    [turnStart(), answer(), turnEnd('error', 0, { error: { message: 'x', code: 'y' } })],
    'error',
    'error',
    'error',
  ],
  [
    "blocked is a refusal for upstream's readers and an error for its SDK backend",
    [turnStart(), claim(), turnEnd('blocked')],
    'refusal',
    'refusal',
    'error',
  ],
  ['a stepped turn blocked', [turnStart(), answer(), turnEnd('blocked')], 'refusal', 'refusal', 'error'],
  [
    'interrupted is an error in process and aborted for an epoch',
    [turnStart(), answer(), turnEnd('interrupted')],
    'error',
    'aborted',
    'error',
  ],
  ['an unknown kind is an error everywhere', [turnStart(), answer(), turnEnd('paused')], 'error', 'error', 'error'],
  ['no turn at all', [], 'error', 'completed', 'error'],
  ['only a receipt, no turn', [receipt()], 'error', 'completed', 'error'],
  [
    'a turn that neither stepped nor claimed accounts for nothing',
    [turnStart(), turnEnd('completed')],
    'error',
    'completed',
    'completed',
  ],
  [
    'a claim ended completed without a step accounts for nothing',
    [turnStart(), claim(), turnEnd('completed')],
    'error',
    'completed',
    'completed',
  ],
  [
    'a claim ended aborted before its first step accounts for the input',
    [turnStart(), claim(), turnEnd('aborted')],
    'aborted',
    'aborted',
    'aborted',
  ],
  ['a claim ended in error before its first step', [turnStart(), claim(), turnEnd('error')], 'error', 'error', 'error'],
  [
    'an unknown end of a claim counts and is an error',
    [turnStart(), claim(), turnEnd('paused')],
    'error',
    'error',
    'error',
  ],
  [
    'the last accounting turn counts, not the last turn',
    [turnStart(0), answer(0), turnEnd('max-tokens', 0), turnStart(1), turnEnd('completed', 1)],
    'max-tokens',
    'max-tokens',
    'completed',
  ],
  [
    'an aborted turn without work after a completed one is not the accounting turn',
    [turnStart(0), answer(0), turnEnd('completed', 0), turnStart(1), turnEnd('aborted', 1)],
    'completed',
    'completed',
    'aborted',
  ],
  ['a turn that never ended', [turnStart(), answer()], 'error', 'completed', 'error'],
  [
    'input cancelled unrun after the accounting turn: aborted for an epoch only',
    [turnStart(), answer(), turnEnd('completed'), cancelled()],
    'completed',
    'aborted',
    'completed',
  ],
  [
    'a cancellation that leaves a replacement drops nothing',
    [turnStart(), answer(), turnEnd('completed'), cancelled([{ id: 'm2' }])],
    'completed',
    'completed',
    'completed',
  ],
  [
    "a drop before the accounting turn closed is that turn's own ending",
    [turnStart(), answer(), cancelled(), turnEnd('completed')],
    'completed',
    'completed',
    'completed',
  ],
  ['a drop with no accounting turn: aborted for an epoch', [cancelled()], 'error', 'aborted', 'error'],
  [
    'a recorded failure wins over a later cancellation',
    [turnStart(), answer(), turnEnd('error'), cancelled()],
    'error',
    'error',
    'error',
  ],
  [
    'max-tokens wins over a later cancellation',
    [turnStart(), answer(), turnEnd('max-tokens'), cancelled()],
    'max-tokens',
    'max-tokens',
    'max-tokens',
  ],
];

describe('stop reasons per upstream rule', () => {
  it.each(ROWS)('%s', (_rule, drafts, inProcess, epoch, sdk) => {
    const suffix = events(drafts);
    expect(readResult(suffix).stopReason).toBe(inProcess);
    expect(readEpochResult(suffix).stopReason).toBe(epoch);
    expect(stopReasonOfEvents(suffix, 'in-process')).toBe(inProcess);
    expect(stopReasonOfEvents(suffix, 'epoch')).toBe(epoch);
    expect(stopReasonOfEvents(suffix, 'sdk')).toBe(sdk);
  });

  it.each([
    ['completed', 'completed', 'completed'],
    ['max-tokens', 'max-tokens', 'max-tokens'],
    ['aborted', 'aborted', 'aborted'],
    ['blocked', 'refusal', 'error'],
    ['error', 'error', 'error'],
    ['interrupted', 'error', 'error'],
    ['future-kind', 'error', 'error'],
  ])('turn-end kind %s: in process %s, SDK backend %s', (kind, inProcess, sdk) => {
    expect(inProcessStopReason({ kind })).toBe(inProcess);
    expect(sdkStopReason({ kind })).toBe(sdk);
  });

  it('maps a missing end to error in process and in the SDK backend, and to completed for an epoch that consumed nothing', () => {
    expect(inProcessStopReason(undefined)).toBe('error');
    expect(sdkStopReason(undefined)).toBe('error');
    expect(epochStopReason({ droppedUnrun: false })).toBe('completed');
    expect(epochStopReason({ droppedUnrun: true })).toBe('aborted');
  });

  it("keeps the accounting turn's end and time, and forgets a drop its end reported", () => {
    expect(foldConsumedWork(events([turnStart(), answer(), cancelled(), turnEnd('completed')]))).toEqual({
      end: { kind: 'completed' },
      endTime: 1_700_000_000_000 + 4 * 10,
      droppedUnrun: false,
    });
    expect(foldConsumedWork(events([turnStart(), claim(), turnEnd('completed')]))).toEqual({ droppedUnrun: false });
  });
});
