/**
 * Stop reasons of delegated runs: the one module that owns every mapping
 * into them, per source, as DeepSeek Harness derives them (docs/decisions
 * 0011). Every consumer (result reader, `subagent/end`, tool result, spans,
 * metrics, replay summaries) takes its stop reason from a function here.
 *
 * | turn end kind | SDK backend | in-process result | continuable epoch |
 * |---|---|---|---|
 * | `completed` | completed | completed | completed (aborted if input was dropped unrun after it) |
 * | `max-tokens` | max-tokens | max-tokens | max-tokens |
 * | `aborted` | aborted | aborted | aborted |
 * | `interrupted` | error | error | aborted |
 * | `blocked` | error | refusal | refusal |
 * | `error`, unknown | error | error | error |
 * | no turn | error | error | completed (aborted if input was dropped unrun) |
 *
 * The SDK rule reads the last `turn/end` of the run; the in-process and
 * epoch rules read the last turn that accounted for work (`consumed-work.ts`).
 * An unknown or missing end is never `completed`, except where upstream's
 * epoch rule says so (an epoch that consumed nothing finished what it was given).
 *
 * @module subagent-otel/output/stop-reason
 */
import type { SessionEvent, TurnEndReason } from '../wire/events.js';
import { foldConsumedWork, type ConsumedWork } from './consumed-work.js';

/** Why a delegated run stopped. Extensible: runtimes may report other strings, kept verbatim. */
export type SubagentStopReason = 'completed' | 'aborted' | 'error' | 'max-tokens' | 'refusal' | (string & {});

/** Which rule derives a run's stop reason from dsh events. */
export type StopReasonRule = 'sdk' | 'in-process' | 'epoch';

/**
 * The SDK backend's rule (`sdkStopReason` upstream), applied to the run's last `turn/end`.
 * @returns `completed`, `max-tokens` or `aborted` for those kinds; `error` for
 *   every other kind (`error`, `blocked`, `interrupted`, unknown) and for no turn end.
 */
export function sdkStopReason(reason: TurnEndReason | undefined): SubagentStopReason {
  switch (reason?.kind) {
    case 'completed':
      return 'completed';
    case 'max-tokens':
      return 'max-tokens';
    case 'aborted':
      return 'aborted';
    default:
      return 'error';
  }
}

/**
 * The in-process result's rule (`toStopReason` upstream), applied to the
 * reason of the last turn that accounted for work.
 * @returns `completed`, `max-tokens`, `aborted` for those kinds; `refusal`
 *   for `blocked` (a pre-step rejection declined the task); `error` for
 *   `error`, `interrupted`, unknown kinds and no accounting turn.
 */
export function inProcessStopReason(reason: TurnEndReason | undefined): SubagentStopReason {
  switch (reason?.kind) {
    case 'completed':
      return 'completed';
    case 'max-tokens':
      return 'max-tokens';
    case 'aborted':
      return 'aborted';
    case 'blocked':
      return 'refusal';
    default:
      return 'error';
  }
}

/**
 * The continuable epoch's rule (`epochStopReason` upstream), applied to the epoch's work account.
 * @returns `max-tokens`; `aborted` for `aborted` and `interrupted`; `error`
 *   for `error` and unknown kinds; `refusal` for `blocked`; for `completed`
 *   or no accounting turn: `aborted` when input was dropped unrun after it,
 *   else `completed`.
 */
export function epochStopReason(work: ConsumedWork): SubagentStopReason {
  switch (work.end?.kind) {
    case 'max-tokens':
      return 'max-tokens';
    case 'aborted':
    case 'interrupted':
      return 'aborted';
    case 'error':
      return 'error';
    case 'blocked':
      return 'refusal';
    case undefined:
    case 'completed':
      return work.droppedUnrun ? 'aborted' : 'completed';
    default:
      return 'error';
  }
}

/**
 * The stop reason of a complete event suffix under `rule`.
 * @returns for `sdk`: {@link sdkStopReason} of the suffix's last `turn/end`;
 *   for `in-process`: {@link inProcessStopReason} of the last accounting
 *   turn; for `epoch`: {@link epochStopReason} of the suffix's account.
 *   Pure; never throws.
 */
export function stopReasonOfEvents(events: Iterable<SessionEvent>, rule: StopReasonRule): SubagentStopReason {
  if (rule === 'sdk') {
    let last: TurnEndReason | undefined;
    for (const event of events) {
      if (event.type === 'turn/end') last = (event.data as { reason?: TurnEndReason } | undefined)?.reason ?? last;
    }
    return sdkStopReason(last);
  }
  const work = foldConsumedWork(events);
  return rule === 'epoch' ? epochStopReason(work) : inProcessStopReason(work.end);
}

/**
 * The stop reason of a run from what a tracker accumulated: the last
 * `turn/end` (for `sdk`) or the work account (for the other rules).
 * Lets incremental consumers use the same tables as {@link stopReasonOfEvents}.
 */
export function stopReasonOf(
  rule: StopReasonRule,
  lastTurnEnd: TurnEndReason | undefined,
  work: ConsumedWork,
): SubagentStopReason {
  if (rule === 'sdk') return sdkStopReason(lastTurnEnd);
  return rule === 'epoch' ? epochStopReason(work) : inProcessStopReason(work.end);
}

/** ACP `session/prompt` stop reasons (protocol v1). */
export const ACP_STOP_REASONS = ['end_turn', 'max_tokens', 'max_turn_requests', 'refusal', 'cancelled'] as const;

/**
 * Maps an ACP prompt-turn stop reason to a stop reason.
 *
 * @param stopReason the response's `stopReason`; `undefined` when the turn
 *   ended with a JSON-RPC error or no response.
 * @returns `completed` for `end_turn`, `max-tokens` for `max_tokens`,
 *   `refusal` for `refusal`, `aborted` for `cancelled`; `error` for
 *   `max_turn_requests`, anything unknown and `undefined`.
 */
export function stopReasonFromAcp(stopReason: string | undefined): SubagentStopReason {
  switch (stopReason) {
    case 'end_turn':
      return 'completed';
    case 'max_tokens':
      return 'max-tokens';
    case 'refusal':
      return 'refusal';
    case 'cancelled':
      return 'aborted';
    default:
      return 'error';
  }
}
