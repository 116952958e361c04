/**
 * The work account of an event suffix (`foldConsumedWork`,
 * `ConsumedWorkFold`): a turn counts when it entered a model step, or when it
 * claimed inbox input and ended other than `completed`; input cancelled out
 * of the inbox with nothing in its place is dropped unrun until a counted
 * turn closes after it.
 */
import { describe, expect, it } from 'vitest';
import { ConsumedWorkFold, foldConsumedWork } from '../../src/output/consumed-work.js';
import { events, stepStart, turnEnd, turnStart, unknownEvent } from '../helpers/events.js';

const T0 = 1_700_000_000_000;
const spliced = (data: Record<string, unknown>) => ({ type: 'agent/inbox/spliced', data: { inserted: [], ...data } });

describe('foldConsumedWork', () => {
  it('accounts nothing for an empty suffix', () => {
    expect(foldConsumedWork([])).toEqual({ droppedUnrun: false });
  });

  it('takes the end of a turn that stepped, with its time', () => {
    // Events are 10 ms apart from T0: turn/start, step/start, turn/end at T0 + 20.
    expect(foldConsumedWork(events([turnStart(0), stepStart(0, 0), turnEnd('max-tokens', 0)]))).toEqual({
      end: { kind: 'max-tokens' },
      endTime: T0 + 20,
      droppedUnrun: false,
    });
  });

  it('keeps the latest counted turn and ignores a later turn that did no work', () => {
    const suffix = events([
      turnStart(0),
      stepStart(0, 0),
      turnEnd('completed', 0),
      turnStart(1),
      turnEnd('aborted', 1), // no step, no claim: consumed nothing
    ]);
    expect(foldConsumedWork(suffix)).toEqual({ end: { kind: 'completed' }, endTime: T0 + 20, droppedUnrun: false });
  });

  it('counts a turn that only claimed input when it ended other than completed', () => {
    const claimedThenError = events([turnStart(3), spliced({ removedCount: 1 }), turnEnd('error', 3)]);
    expect(foldConsumedWork(claimedThenError)).toEqual({
      end: { kind: 'error' },
      endTime: T0 + 20,
      droppedUnrun: false,
    });
    const claimedThenCompleted = events([turnStart(3), spliced({ removedCount: 1 }), turnEnd('completed', 3)]);
    expect(foldConsumedWork(claimedThenCompleted)).toEqual({ droppedUnrun: false });
  });

  it('treats a splice without removedCount as a receipt that claims nothing', () => {
    expect(foldConsumedWork(events([turnStart(0), spliced({}), turnEnd('error', 0)]))).toEqual({ droppedUnrun: false });
  });

  it('reports input cancelled with nothing in its place as dropped unrun, until a counted turn closes', () => {
    const dropped = events([
      turnStart(0),
      stepStart(0, 0),
      turnEnd('completed', 0),
      spliced({ removedCount: 1, outcome: 'canceled' }),
    ]);
    expect(foldConsumedWork(dropped).droppedUnrun).toBe(true);
    const replaced = events([spliced({ removedCount: 1, outcome: 'canceled', inserted: [{ id: 'x' }] })]);
    expect(foldConsumedWork(replaced).droppedUnrun).toBe(false);
    const closedAfter = events([
      spliced({ removedCount: 1, outcome: 'canceled' }),
      turnStart(1),
      stepStart(0, 1),
      turnEnd('completed', 1),
    ]);
    expect(foldConsumedWork(closedAfter)).toEqual({
      end: { kind: 'completed' },
      endTime: T0 + 30,
      droppedUnrun: false,
    });
  });

  it('ignores event types it does not read', () => {
    expect(foldConsumedWork(events([unknownEvent(), turnStart(0), unknownEvent()]))).toEqual({ droppedUnrun: false });
  });
});

describe('ConsumedWorkFold', () => {
  it('gives the account so far after each push', () => {
    const fold = new ConsumedWorkFold();
    const [start, step, end] = events([turnStart(0), stepStart(0, 0), turnEnd('interrupted', 0)]);
    fold.push(start!);
    fold.push(step!);
    expect(fold.result).toEqual({ droppedUnrun: false });
    fold.push(end!);
    expect(fold.result).toEqual({ end: { kind: 'interrupted' }, endTime: T0 + 20, droppedUnrun: false });
  });
});
