/**
 * The dsh SDK runtime protocol (docs/PROTOCOLS.md section 4): method names as one
 * `as const` map, the payload types of every request, response and
 * notification the observer reads, and validators for their params.
 * Unknown methods are not errors: `parseSdkNotification` reports them as
 * `known: false`. Never throws.
 *
 * @module subagent-otel/wire/sdk-protocol
 */
import * as z from 'zod';
import { ContentBlockSchema, type ContentBlock } from './content.js';
import { parseSessionEvent, type SessionEvent } from './events.js';
import { describeValue, wireError, wireErrorFromIssues, type WireError } from './wire-error.js';
import { isJsonObject } from './json-values.js';

/**
 * Client-to-runtime request methods: all the protocol has. There is no
 * cancel: a client stops a run by disposing the runtime (`shutdown`, then
 * stdin EOF, SIGTERM, SIGKILL).
 */
export const SDK_REQUESTS = {
  initialize: 'initialize',
  prompt: 'session/prompt',
  shutdown: 'shutdown',
} as const;

/** Runtime-to-client notification methods. */
export const SDK_NOTIFICATIONS = {
  sessionEvent: 'session.event',
  sessionStatus: 'session.status',
  subagentStarted: 'subagent.started',
  subagentFinished: 'subagent.finished',
} as const;

/** `initialize` params: all required but `maxTokens`, a positive safe integer when present. */
export interface InitializeParams {
  readonly cwd: string;
  readonly provider: string;
  readonly model: string;
  readonly maxTokens?: number;
}
/** `session/prompt` params. */
export interface PromptParams {
  readonly sessionId: string;
  readonly contentBlocks: readonly ContentBlock[];
}
/** `session/prompt` result: the durable enqueue receipt of the prompt's user message. */
export interface PromptResult {
  readonly messageId: string;
}

export interface SessionEventParams {
  readonly sessionId: string;
  readonly event: SessionEvent;
}
export interface SessionStatusParams {
  readonly sessionId: string;
  readonly status: 'idle' | 'running' | (string & {});
}
export interface SubagentStartedParams {
  readonly parentSessionId: string;
  readonly childSessionId: string;
}
export interface SubagentFinishedParams {
  readonly provider: string;
  readonly agentId: string;
  readonly parentSessionId: string;
  readonly childSessionId: string;
  readonly status: 'ok' | 'error' | (string & {});
  readonly stopReason: string;
  /** What the runtime selected as the child's output; absent when it selected none. */
  readonly lastAssistantMessage?: readonly ContentBlock[];
}

/** A validated runtime notification. */
export type SdkNotification =
  | {
      readonly method: typeof SDK_NOTIFICATIONS.sessionEvent;
      readonly params: SessionEventParams;
      readonly eventKnown: boolean;
    }
  | { readonly method: typeof SDK_NOTIFICATIONS.sessionStatus; readonly params: SessionStatusParams }
  | { readonly method: typeof SDK_NOTIFICATIONS.subagentStarted; readonly params: SubagentStartedParams }
  | { readonly method: typeof SDK_NOTIFICATIONS.subagentFinished; readonly params: SubagentFinishedParams };

export type SdkNotificationResult =
  | { readonly ok: true; readonly known: true; readonly notification: SdkNotification }
  | { readonly ok: true; readonly known: false; readonly method: string }
  | { readonly ok: false; readonly error: WireError };

const SessionStatusSchema = z.looseObject({ sessionId: z.string(), status: z.string() });
const SubagentStartedSchema = z.looseObject({ parentSessionId: z.string(), childSessionId: z.string() });
const SubagentFinishedSchema = z.looseObject({
  provider: z.string(),
  agentId: z.string(),
  parentSessionId: z.string(),
  childSessionId: z.string(),
  status: z.string(),
  stopReason: z.string(),
  lastAssistantMessage: z.array(ContentBlockSchema).optional(),
});
const InitializeSchema = z.looseObject({
  cwd: z.string(),
  provider: z.string(),
  model: z.string(),
  maxTokens: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
});
const PromptResultSchema = z.looseObject({ messageId: z.string() });
const PromptSchema = z.looseObject({ sessionId: z.string(), contentBlocks: z.array(ContentBlockSchema) });

function validate<T>(schema: z.ZodType, params: unknown): { ok: true; value: T } | { ok: false; error: WireError } {
  const parsed = schema.safeParse(params);
  if (parsed.success) return { ok: true, value: parsed.data as T };
  return { ok: false, error: wireErrorFromIssues(parsed.error.issues, params, 'params') };
}

/**
 * Validates a runtime notification by method.
 *
 * @returns `{ ok: true, known: true, notification }` for the four known
 *   methods with valid params (a `session.event` whose event type is unknown
 *   is still valid, with `eventKnown: false`); `{ ok: true, known: false }`
 *   for any other method; `{ ok: false, error }` naming the bad field.
 *   Never throws. `session.event` params keep the caller's event object.
 */
export function parseSdkNotification(method: string, params: unknown): SdkNotificationResult {
  switch (method) {
    case SDK_NOTIFICATIONS.sessionEvent: {
      if (params === null || typeof params !== 'object') {
        return { ok: false, error: wireError('invalid', 'params', '{ sessionId, event }', describeValue(params)) };
      }
      const p = params as Record<string, unknown>;
      if (typeof p.sessionId !== 'string') {
        return { ok: false, error: wireError('invalid', 'params.sessionId', 'string', describeValue(p.sessionId)) };
      }
      const ev = parseSessionEvent(p.event, 'params.event');
      if (!ev.ok) return ev;
      return {
        ok: true,
        known: true,
        notification: { method, params: { sessionId: p.sessionId, event: ev.event }, eventKnown: ev.known },
      };
    }
    case SDK_NOTIFICATIONS.sessionStatus: {
      const r = validate<SessionStatusParams>(SessionStatusSchema, params);
      return r.ok ? { ok: true, known: true, notification: { method, params: r.value } } : r;
    }
    case SDK_NOTIFICATIONS.subagentStarted: {
      const r = validate<SubagentStartedParams>(SubagentStartedSchema, params);
      return r.ok ? { ok: true, known: true, notification: { method, params: r.value } } : r;
    }
    case SDK_NOTIFICATIONS.subagentFinished: {
      const r = validate<SubagentFinishedParams>(SubagentFinishedSchema, params);
      return r.ok ? { ok: true, known: true, notification: { method, params: r.value } } : r;
    }
    default:
      return { ok: true, known: false, method };
  }
}

/**
 * Validates `initialize` params as upstream's protocol types them: string
 * `cwd`, `provider` and `model`, and `maxTokens` absent or a positive safe
 * integer. @returns the params or a `WireError`; never throws.
 */
export function parseInitializeParams(
  params: unknown,
): { ok: true; value: InitializeParams } | { ok: false; error: WireError } {
  return validate<InitializeParams>(InitializeSchema, params ?? {});
}

/**
 * Validates a `session/prompt` result: upstream's client requires a string
 * `messageId` and treats any other answer as a protocol error.
 * @returns the result or a `WireError` under `result`; never throws.
 */
export function parsePromptResult(
  result: unknown,
): { ok: true; value: PromptResult } | { ok: false; error: WireError } {
  const parsed = PromptResultSchema.safeParse(result);
  if (parsed.success) return { ok: true, value: parsed.data as PromptResult };
  return { ok: false, error: wireErrorFromIssues(parsed.error.issues, result, 'result') };
}

/**
 * Whether a validated event is an inbox receipt: an `agent/inbox/spliced`
 * that inserts messages and claims none (no `removedCount`). A prompt's
 * `messageId` is the id of a message such a receipt inserts.
 */
export function isReceipt(event: SessionEvent): boolean {
  if (event.type !== 'agent/inbox/spliced') return false;
  const data = event.data as { removedCount?: unknown; inserted?: unknown } | undefined;
  return (
    data !== undefined && data.removedCount === undefined && Array.isArray(data.inserted) && data.inserted.length > 0
  );
}

/**
 * Whether upstream's SDK client rejects a `session.event` payload as a
 * protocol error, which ends its run: the event is not an object with a
 * string `type`, or it is an `assistant/message` whose `data.message.content`
 * is not an array of objects with a string `type`. Other invalid events do
 * not stop upstream's client. Never throws.
 */
export function upstreamRejectsEvent(event: unknown): boolean {
  if (!isJsonObject(event) || typeof event['type'] !== 'string') return true;
  if (event['type'] !== 'assistant/message') return false;
  const data = event['data'];
  const message = isJsonObject(data) ? data['message'] : undefined;
  const content = isJsonObject(message) ? message['content'] : undefined;
  return !Array.isArray(content) || !content.every((block) => isJsonObject(block) && typeof block['type'] === 'string');
}

/** Validates `session/prompt` params. @returns the params or a `WireError`; never throws. */
export function parsePromptParams(
  params: unknown,
): { ok: true; value: PromptParams } | { ok: false; error: WireError } {
  return validate<PromptParams>(PromptSchema, params);
}
