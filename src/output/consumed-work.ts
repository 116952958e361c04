/**
 * Work accounting over a dsh event suffix: which closed turn accounts for the
 * work the suffix consumed, and whether accepted input was cancelled out of
 * the inbox, unrun, after it. The in-process result and the continuable-epoch
 * stop reasons (`stop-reason.ts`) both start from this account, as DeepSeek
 * Harness's own readers do: a turn counts when it entered a model step, or
 * when it claimed inbox input and then ended other than `completed`.
 *
 * @module subagent-otel/output/consumed-work
 */
import { isKnownEvent, type SessionEvent, type TurnEndReason } from '../wire/events.js';

/** The account of one event suffix. */
export interface ConsumedWork {
  /** Reason of the latest closed turn that accounts for consumed work; absent when none closed over any. */
  readonly end?: TurnEndReason;
  /** Time of that `turn/end`, when it carried one. */
  readonly endTime?: number;
  /** Accepted input was cancelled out of the inbox, unrun, after that turn. */
  readonly droppedUnrun: boolean;
}

/**
 * Incremental form: `push` every event of the suffix in order, read
 * `result` at any time. Holds two small sets of turn numbers, never events.
 */
export class ConsumedWorkFold {
  readonly #stepped = new Set<number>();
  readonly #claimed = new Set<number>();
  #open: number | undefined;
  #end: TurnEndReason | undefined;
  #endTime: number | undefined;
  #droppedUnrun = false;

  /** Folds one event; unknown and unrelated types are ignored. Never throws. */
  push(event: SessionEvent): void {
    if (!isKnownEvent(event)) return;
    switch (event.type) {
      case 'turn/start':
        this.#open = event.data.turn;
        return;
      case 'step/start':
        this.#stepped.add(event.data.turn);
        return;
      case 'agent/inbox/spliced': {
        const { removedCount, outcome, inserted } = event.data;
        if (removedCount === undefined) return; // a receipt: input queued, nothing consumed yet
        // A cancellation that leaves a replacement keeps the work pending; only one that inserts nothing drops it.
        if (outcome === 'canceled') this.#droppedUnrun ||= inserted.length === 0;
        else if (this.#open !== undefined) this.#claimed.add(this.#open);
        return;
      }
      case 'turn/end': {
        const { turn, reason } = event.data;
        this.#open = undefined;
        // Short-circuit on purpose: a stepped turn does not need (or clear) its claim.
        if (this.#stepped.delete(turn) || (this.#claimed.delete(turn) && claimEndCounts(reason))) {
          this.#end = reason;
          this.#endTime = event.time;
          // A drop before this turn closed is reported by the turn's own end.
          this.#droppedUnrun = false;
        }
        return;
      }
      default:
        return;
    }
  }

  /** The account so far. */
  get result(): ConsumedWork {
    return {
      ...(this.#end !== undefined ? { end: this.#end } : {}),
      ...(this.#endTime !== undefined ? { endTime: this.#endTime } : {}),
      droppedUnrun: this.#droppedUnrun,
    };
  }
}

/** A turn that claimed input but never stepped counts unless it ended `completed` (its claim was rewritten away). */
function claimEndCounts(reason: TurnEndReason): boolean {
  return reason.kind !== 'completed';
}

/** Applies {@link ConsumedWorkFold} to a complete suffix. Pure; never throws. */
export function foldConsumedWork(events: Iterable<SessionEvent>): ConsumedWork {
  const fold = new ConsumedWorkFold();
  for (const event of events) fold.push(event);
  return fold.result;
}
