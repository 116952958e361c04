/**
 * Stop reasons of delegated runs and the mappings into them from each source:
 * dsh turn-end kinds and ACP `stopReason` values. An unclean, unknown or
 * missing end is never `completed`.
 *
 * @module subagent-otel/output/stop-reason
 */
import type { TurnEndReason } from '../wire/events.js';

/** Why a delegated run stopped. Extensible: runtimes may report other strings, kept verbatim. */
export type SubagentStopReason = 'completed' | 'aborted' | 'error' | 'max-tokens' | 'refusal' | (string & {});

/**
 * Maps a dsh turn end to a stop reason.
 *
 * @returns `completed`, `max-tokens` or `aborted` for those kinds; `error`
 *   for every other kind (`error`, `blocked`, `interrupted`, unknown) and
 *   for a missing turn end.
 */
export function stopReasonFromTurnEnd(reason: TurnEndReason | undefined): SubagentStopReason {
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
