/**
 * dsh session events (docs/PROTOCOLS.md section 2) of both log generations: the
 * envelope `{ type, seq, time, data }`, the payload of every event type the
 * observer reads, turn-end reasons, and `parseSessionEvent`, the validator
 * every source goes through. Unknown event types and turn-end kinds are
 * accepted as unknown variants; a known type with a malformed payload is a
 * `WireError`. Never throws.
 *
 * @module subagent-otel/wire/events
 */
import * as z from 'zod';
import {
  ContentBlockSchema,
  StreamChunkSchema,
  TokenUsageSchema,
  type ContentBlock,
  type StreamChunk,
  type TokenUsage,
} from './content.js';
import { describeValue, wireError, wireErrorFromIssues, type WireError } from './wire-error.js';
import { plainCheckOf, plainDispatchOf, type PlainCheck } from './schema-check.js';

/** Why a turn ended. Unknown kinds are kept; consumers map them to `error`, never `completed`. */
export type TurnEndReason =
  | { readonly kind: 'completed' }
  | { readonly kind: 'max-tokens' }
  | { readonly kind: 'aborted'; readonly reason?: { readonly kind: string } }
  | { readonly kind: 'blocked'; readonly [field: string]: unknown }
  | { readonly kind: 'error'; readonly error?: { readonly message: string; readonly code: string } }
  | { readonly kind: 'interrupted' }
  | { readonly kind: string; readonly [field: string]: unknown };

export interface AssistantMessage {
  readonly id: string;
  readonly role: 'assistant';
  readonly content: readonly ContentBlock[];
  readonly source?: unknown;
}
export interface UserMessage {
  readonly id: string;
  readonly role: 'user';
  readonly content: readonly ContentBlock[];
  readonly source?: unknown;
}

/**
 * The event envelope. `seq` and `time` are optional, as upstream's recorded
 * logs and its tests treat them: a log written by upstream's snapshot harness
 * carries neither, and consumers fall back to the time the event was read
 * (live) or to the last known time (logs).
 */
interface Envelope<T extends string, D> {
  readonly type: T;
  readonly seq?: number;
  readonly time?: number;
  readonly data: D;
}

export type TurnStartEvent = Envelope<'turn/start', { readonly turn: number }>;
export type TurnEndEvent = Envelope<'turn/end', { readonly turn: number; readonly reason: TurnEndReason }>;
export type StepStartEvent = Envelope<'step/start', { readonly turn: number; readonly step: number }>;
export type StepEndEvent = Envelope<'step/end', { readonly turn: number; readonly step: number }>;
export type UserMessageEvent = Envelope<'user/message', UserMessage>;
export type AssistantChunkEvent = Envelope<
  'assistant/chunk',
  { readonly turn: number; readonly step: number; readonly chunk: StreamChunk }
>;
export type AssistantMessageEvent = Envelope<
  'assistant/message',
  {
    readonly turn: number;
    readonly step: number;
    readonly message: AssistantMessage;
    readonly usage?: TokenUsage;
    readonly stream?: readonly StreamChunk[];
    readonly interrupted?: true;
  }
>;
export type AssistantAttemptEvent = Envelope<
  'assistant/attempt',
  {
    readonly turn: number;
    readonly step: number;
    readonly stream: readonly StreamChunk[];
    readonly failure?: { readonly message: string; readonly code: string };
  }
>;
export type ToolCallEvent = Envelope<
  'tool/call',
  {
    readonly turn: number;
    readonly step: number;
    readonly callId: string;
    readonly name: string;
    readonly arguments: unknown;
  }
>;
export type ToolResultEvent = Envelope<
  'tool/result',
  {
    readonly turn: number;
    readonly step: number;
    readonly message: { readonly content: readonly ContentBlock[] };
    readonly error?: { readonly name?: string; readonly code?: string };
  }
>;
export type RequestContextEvent = Envelope<
  'request/context',
  { readonly provider?: string; readonly model?: string; readonly [field: string]: unknown }
>;
export type EndSeedEvent = Envelope<'session/end-seed', Record<string, unknown>>;
/**
 * A mutation of the session's inbox. With `inserted` messages and no
 * `removedCount` it is the durable receipt of queued input (a prompt's
 * `messageId` is the id of an inserted message); with `removedCount` it is a
 * turn claiming input, or, with `outcome: 'canceled'`, input cancelled
 * before it ran.
 */
export type InboxSplicedEvent = Envelope<
  'agent/inbox/spliced',
  {
    readonly target?: string;
    readonly start?: number;
    readonly removedCount?: number;
    readonly outcome?: string;
    readonly inserted: readonly { readonly id?: string; readonly [field: string]: unknown }[];
  }
>;

/** Every event type the observer reads. */
export type KnownSessionEvent =
  | TurnStartEvent
  | TurnEndEvent
  | StepStartEvent
  | StepEndEvent
  | UserMessageEvent
  | AssistantChunkEvent
  | AssistantMessageEvent
  | AssistantAttemptEvent
  | ToolCallEvent
  | ToolResultEvent
  | RequestContextEvent
  | EndSeedEvent
  | InboxSplicedEvent;

/** An event of a type this version does not read; passed along, ignored by every consumer. */
export interface UnknownSessionEvent {
  readonly type: string;
  readonly seq?: number;
  readonly time?: number;
  readonly data?: unknown;
}

/** One session event as it travels in `session.event` notifications and durable logs. */
export type SessionEvent = KnownSessionEvent | UnknownSessionEvent;

const nat = z.number().int().nonnegative();
const turnStep = { turn: nat, step: nat };
const failure = z.looseObject({ message: z.string(), code: z.string() });

const TurnEndReasonSchema = z.looseObject({
  kind: z.string(),
  reason: z.looseObject({ kind: z.string() }).optional(),
  error: z.looseObject({ message: z.string(), code: z.string() }).optional(),
});

const dataSchemas = {
  'turn/start': z.looseObject({ turn: nat }),
  'turn/end': z.looseObject({ turn: nat, reason: TurnEndReasonSchema }),
  'step/start': z.looseObject(turnStep),
  'step/end': z.looseObject(turnStep),
  'user/message': z.looseObject({ id: z.string(), role: z.literal('user'), content: z.array(ContentBlockSchema) }),
  'assistant/chunk': z.looseObject({ ...turnStep, chunk: StreamChunkSchema }),
  'assistant/message': z.looseObject({
    ...turnStep,
    message: z.looseObject({ id: z.string(), role: z.literal('assistant'), content: z.array(ContentBlockSchema) }),
    usage: TokenUsageSchema.optional(),
    stream: z.array(StreamChunkSchema).optional(),
    interrupted: z.literal(true).optional(),
  }),
  'assistant/attempt': z.looseObject({ ...turnStep, stream: z.array(StreamChunkSchema), failure: failure.optional() }),
  'tool/call': z.looseObject({ ...turnStep, callId: z.string(), name: z.string(), arguments: z.unknown() }),
  'tool/result': z.looseObject({
    ...turnStep,
    message: z.looseObject({ content: z.array(ContentBlockSchema) }),
    error: z.looseObject({ name: z.string().optional(), code: z.string().optional() }).optional(),
  }),
  'request/context': z.looseObject({ provider: z.string().optional(), model: z.string().optional() }),
  'session/end-seed': z.looseObject({}),
  'agent/inbox/spliced': z.looseObject({
    target: z.string().optional(),
    start: z.number().optional(),
    removedCount: nat.optional(),
    outcome: z.string().optional(),
    inserted: z.array(z.looseObject({ id: z.string().optional() })),
  }),
} as const;

/** Every event type this version reads. */
export type KnownEventType = keyof typeof dataSchemas;

/**
 * The plain-code payload checks, derived from the schemas above
 * (`wire/schema-check`): zod costs several times the `JSON.parse` of the line
 * on the proxy's path, the derived checks a fraction of it. A sufficient
 * condition only: `true` means the schema accepts the data; `false` means
 * "ask the schema", which then decides and names any problem.
 */
const plainChecks = Object.fromEntries(
  Object.entries(dataSchemas).map(([type, schema]) => [type, plainCheckOf(schema)]),
) as Record<KnownEventType, PlainCheck>;
/** The same checks as one function of the whole event, dispatching on its `type` (what `parseSessionEvent` runs). */
const plainEventCheck = plainDispatchOf(dataSchemas, 'data');

/**
 * The payload check without the plain-code shortcut: what the zod schema of
 * `type` alone says of `data`. For tests that hold the shortcut to the
 * schema; the observer never needs it.
 * @returns `true` when the schema accepts `data`, `false` for a type this version does not read or data it rejects.
 */
export function schemaAcceptsEventData(type: string, data: unknown): boolean {
  return isKnownEventType(type) && dataSchemas[type].safeParse(data).success;
}

/**
 * Whether the plain check derived from the schema of `type` accepts `data`:
 * a sufficient condition for the schema (see `wire/schema-check`), cheap
 * enough for every line of the proxy's path. Never throws.
 */
export function plainAcceptsEventData(type: string, data: unknown): boolean {
  return isKnownEventType(type) && plainChecks[type](data);
}

/** The plain check of the payload of events of `type` (see `plainAcceptsEventData`), for callers on a hot path. */
export function plainEventDataCheck(type: KnownEventType): PlainCheck {
  return plainChecks[type];
}

/** `true` when this version reads events of `type`. */
export function isKnownEventType(type: string): type is KnownEventType {
  return Object.prototype.hasOwnProperty.call(dataSchemas, type);
}

/** Narrows an event to the known union; unknown types return `false`. */
export function isKnownEvent(event: SessionEvent): event is KnownSessionEvent {
  return isKnownEventType(event.type);
}

/** Result of validating one event. `known` is `false` for an event type this version does not read. */
export type EventParseResult =
  | { readonly ok: true; readonly event: SessionEvent; readonly known: boolean }
  | { readonly ok: false; readonly error: WireError };

/**
 * Validates one session event envelope and, for known types, its payload.
 *
 * @param value a parsed JSON value (from a notification's `params.event` or a log line).
 * @param basePath prefix for error paths, e.g. `params.event`.
 * @returns `{ ok: true, event, known: true }` for a valid known event;
 *   `{ ok: true, event, known: false }` for any other `type` with a valid
 *   envelope (`seq` and `time` optional, well-typed when present; `data` optional); `{ ok: false, error }` naming
 *   the field, what was expected and what arrived otherwise.
 *   Never throws; never mutates `value`. The returned event is `value` itself
 *   when valid (no copy), so callers must treat it as read-only.
 */
export function parseSessionEvent(value: unknown, basePath = ''): EventParseResult {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, error: wireError('not-object', basePath, 'a session event object', describeValue(value)) };
  }
  const record = value as Record<string, unknown>;
  const at = (field: string): string => (basePath === '' ? field : `${basePath}.${field}`);
  if (typeof record.type !== 'string') {
    return { ok: false, error: wireError('invalid', at('type'), 'string', describeValue(record.type)) };
  }
  if (record.seq !== undefined && (typeof record.seq !== 'number' || !Number.isInteger(record.seq) || record.seq < 0)) {
    return { ok: false, error: wireError('invalid', at('seq'), 'non-negative integer', describeValue(record.seq)) };
  }
  if (record.time !== undefined && (typeof record.time !== 'number' || !Number.isFinite(record.time))) {
    return { ok: false, error: wireError('invalid', at('time'), 'number (epoch ms)', describeValue(record.time)) };
  }
  const type = record.type;
  if (!isKnownEventType(type)) return { ok: true, event: value as UnknownSessionEvent, known: false };
  if (plainEventCheck(record)) return { ok: true, event: value as KnownSessionEvent, known: true };
  const parsed = dataSchemas[type].safeParse(record.data);
  if (!parsed.success) {
    return { ok: false, error: wireErrorFromIssues(parsed.error.issues, record.data, at('data')) };
  }
  // Zod's loose objects return copies; keep the caller's value so events stay verbatim.
  return { ok: true, event: value as KnownSessionEvent, known: true };
}
