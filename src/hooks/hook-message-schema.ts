/**
 * The watcher's check of every line that reaches its socket: the
 * {@link HookMessage} shape, validated with zod. A line that fails is
 * counted and named in the watcher's log, never acted on.
 *
 * @module subagent-otel/hooks/hook-message-schema
 */
import * as z from 'zod';
import { errorText } from '../wire/error-text.js';
import { HOOKED_AGENTS } from './locations.js';
import { MAX_FIELD_LENGTH, type HookMessage } from './hook-message.js';

const field = z.string().min(1).max(MAX_FIELD_LENGTH).optional();

const HookMessageSchema = z.object({
  v: z.literal(1),
  agent: z.enum(HOOKED_AGENTS),
  at: z.number().finite().nonnegative(),
  event: z.string().min(1).max(64),
  sessionId: field,
  transcriptPath: field,
  agentTranscriptPath: field,
  agentId: field,
  agentType: field,
  reason: field,
});

/** The message on `line`, or a sentence naming what is wrong with it. Never throws. */
export function parseHookMessage(line: string): HookMessage | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return `not JSON (${errorText(error)})`;
  }
  const parsed = HookMessageSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `not a hook message (${issue !== undefined ? `${issue.path.join('.') || 'the line'}: ${issue.message}` : 'invalid'})`;
  }
  const { sessionId, transcriptPath, agentTranscriptPath, agentId, agentType, reason, ...rest } = parsed.data;
  return {
    ...rest,
    ...(sessionId !== undefined ? { sessionId } : {}),
    ...(transcriptPath !== undefined ? { transcriptPath } : {}),
    ...(agentTranscriptPath !== undefined ? { agentTranscriptPath } : {}),
    ...(agentId !== undefined ? { agentId } : {}),
    ...(agentType !== undefined ? { agentType } : {}),
    ...(reason !== undefined ? { reason } : {}),
  };
}
