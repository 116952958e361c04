/**
 * The one line a hook sends the running watcher: which agent, which event,
 * when, and the transcript files it names. Built in the hook process from
 * the payload the agent gives the hook on stdin (Claude Code and Codex give
 * the same snake_case fields), keeping only those fields: the rest of the
 * payload (the last assistant message, the tool input) never leaves the
 * hook. Pure; no schema library here, so the hook process stays small (the
 * watcher validates every line it receives: `hooks/hook-message-schema`).
 *
 * @module subagent-otel/hooks/hook-message
 */
import { errorText } from '../wire/error-text.js';
import type { HookedAgent } from './locations.js';

/** The events whose hooks `setup` installs: each marks the end of a run recorded in a file. */
export const END_EVENTS = ['SubagentStop', 'Stop', 'SessionEnd'] as const;
export type EndEvent = (typeof END_EVENTS)[number];

/** What a hook sends: one JSON line on the watcher's socket. */
export interface HookMessage {
  /** Version of this shape. */
  readonly v: 1;
  readonly agent: HookedAgent;
  /** When the hook ran (epoch ms, the hook process's clock). */
  readonly at: number;
  /** `hook_event_name` of the payload. */
  readonly event: string;
  readonly sessionId?: string;
  /** `transcript_path`: the session's transcript (the parent's, at `SubagentStop`). */
  readonly transcriptPath?: string;
  /** `agent_transcript_path` (`SubagentStop`): the subagent's own transcript. */
  readonly agentTranscriptPath?: string;
  readonly agentId?: string;
  readonly agentType?: string;
  /** `reason` (`SessionEnd`). */
  readonly reason?: string;
}

/** The longest string field kept (a path, an id): longer ones are dropped. */
export const MAX_FIELD_LENGTH = 4096;

const FIELDS = [
  ['session_id', 'sessionId'],
  ['transcript_path', 'transcriptPath'],
  ['agent_transcript_path', 'agentTranscriptPath'],
  ['agent_id', 'agentId'],
  ['agent_type', 'agentType'],
  ['reason', 'reason'],
] as const;

/**
 * The message for the hook payload `text` of `agent`, run at `at`.
 * @returns the message, or a sentence saying why the payload is unusable
 *   (not JSON, not an object, no `hook_event_name`). Never throws.
 */
export function hookMessageOf(agent: HookedAgent, text: string, at: number): HookMessage | string {
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch (error) {
    return `the hook's input is not JSON (${errorText(error)})`;
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    return "the hook's input is not a JSON object";
  const record = payload as Record<string, unknown>;
  const event = record['hook_event_name'];
  if (typeof event !== 'string' || event === '' || event.length > 64) return "the hook's input has no hook_event_name";
  const message: Record<string, unknown> = { v: 1, agent, at, event };
  for (const [from, to] of FIELDS) {
    const value = record[from];
    if (typeof value === 'string' && value !== '' && value.length <= MAX_FIELD_LENGTH) message[to] = value;
  }
  return message as unknown as HookMessage;
}

/**
 * The transcript file whose run the message says ended: the subagent's at
 * `SubagentStop`, the session's at `Stop` and `SessionEnd`; `undefined` for
 * any other event or when the payload named none (Claude Code before 2.0.42
 * gave no `agent_transcript_path`: the idle bound closes that run). Pure.
 */
export function endedTranscript(message: HookMessage): string | undefined {
  if (message.event === 'SubagentStop') return message.agentTranscriptPath;
  if (message.event === 'Stop' || message.event === 'SessionEnd') return message.transcriptPath;
  return undefined;
}
