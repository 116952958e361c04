/**
 * Codex (OpenAI Codex CLI) rollout lines at the wire layer: one JSON object
 * per line, `{timestamp, type, payload}` (newer versions add an `ordinal`),
 * `type` one of `session_meta`, `turn_context`, `response_item`, `event_msg`,
 * `compacted` (docs/TRANSCRIPTS.md, "Codex", for the sources of each shape).
 *
 * Owns what a line is: JSON parsing, validation of the fields the reader
 * uses (loose objects: unknown fields are kept, unknown record, item and
 * event types are accepted as `other`), and the small decoders for values
 * that are JSON inside strings (a collab tool's output, a subagent
 * notification). Never decides what a run is (`transcripts/codex/runs.ts`)
 * and never throws on input.
 *
 * @module subagent-otel/transcripts/codex/records
 */
import * as z from 'zod';
import { describeValue, wireError, wireErrorFromIssues, type WireError } from '../../wire/wire-error.js';
import { isJsonObject, parseJsonObject } from '../../wire/json-values.js';

/** Cumulative or per-response token counts as Codex records them (`TokenUsage`): `input_tokens` includes `cached_input_tokens`, `output_tokens` includes `reasoning_output_tokens`. */
export interface CodexTokenUsage {
  readonly inputTokens: number;
  readonly cachedInputTokens: number;
  readonly outputTokens: number;
  readonly reasoningOutputTokens: number;
  readonly totalTokens: number;
}

/**
 * Where a thread came from (`SessionSource`): a user-facing client (`cli`,
 * `vscode`, `exec`, `mcp`, a custom name), or a subagent. Subagents spawned
 * by `spawn_agent` are `thread-spawn`; the others (`review`, `compact`,
 * `memory_consolidation`, `other(<name>)`) are Codex's own internal helpers.
 */
export type CodexSource =
  | { readonly kind: 'client'; readonly name: string }
  | {
      readonly kind: 'thread-spawn';
      readonly parentThreadId: string;
      readonly depth?: number;
      readonly agentPath?: string;
      readonly agentNickname?: string;
      readonly agentRole?: string;
    }
  | { readonly kind: 'internal-subagent'; readonly name: string }
  | { readonly kind: 'unknown' };

/** `session_meta.payload`, the fields the reader uses. */
export interface CodexSessionMeta {
  /** The thread id (a UUID). */
  readonly id: string;
  readonly forkedFromId?: string;
  /** The thread's creation time (ISO 8601), when recorded. */
  readonly timestamp?: string;
  readonly cliVersion?: string;
  readonly originator?: string;
  readonly modelProvider?: string;
  readonly source: CodexSource;
  readonly agentNickname?: string;
  readonly agentRole?: string;
  readonly agentPath?: string;
  /** Newer children: the parent thread at the top level too. */
  readonly parentThreadId?: string;
  /** Newer versions: the root thread of the session tree this thread belongs to. */
  readonly sessionId?: string;
  /** Newer children: the `ordinal` of the first record that is the child's own (records before it copy the parent's history). */
  readonly historyStartOrdinal?: number;
  /** The thread's working directory (`cwd`). */
  readonly cwd?: string;
  /** `git.branch`, when recorded. */
  readonly gitBranch?: string;
  /** `git.repository_url`, when recorded. */
  readonly repositoryUrl?: string;
}

/** A content part of a `message` item (`input_text`, `output_text`, `input_image`, ...). */
export interface CodexContentPart {
  readonly type: string;
  readonly text?: string;
}

/** A `response_item` payload, by the kinds the reader distinguishes. */
export type CodexResponseItem =
  | {
      readonly type: 'message';
      readonly role: string;
      readonly content: readonly CodexContentPart[];
      readonly phase?: string;
    }
  | { readonly type: 'reasoning'; readonly texts: readonly string[] }
  | { readonly type: 'function_call'; readonly callId: string; readonly name: string; readonly arguments: string }
  | { readonly type: 'custom_tool_call'; readonly callId: string; readonly name: string; readonly input: string }
  | { readonly type: 'local_shell_call'; readonly callId?: string; readonly action: unknown }
  | { readonly type: 'web_search_call'; readonly action: unknown }
  | { readonly type: 'tool_search_call'; readonly callId?: string; readonly arguments: unknown }
  | {
      readonly type: 'function_call_output' | 'custom_tool_call_output' | 'tool_search_output';
      readonly callId?: string;
      readonly output: CodexToolOutput;
    }
  | { readonly type: 'other'; readonly itemType: string };

/** A tool call's output: its text (content items' text joined with newlines) and the `success` flag where one was serialized. */
export interface CodexToolOutput {
  readonly text: string;
  readonly success?: boolean;
}

/** An `event_msg` payload, by the kinds the reader distinguishes. */
export type CodexEvent =
  | { readonly type: 'task_started'; readonly turnId?: string }
  | {
      readonly type: 'task_complete';
      readonly turnId?: string;
      readonly lastAgentMessage?: string | null;
      readonly errorMessage?: string;
    }
  | { readonly type: 'turn_aborted'; readonly turnId?: string; readonly reason: string }
  | { readonly type: 'token_count'; readonly total?: CodexTokenUsage; readonly last?: CodexTokenUsage }
  | { readonly type: 'error'; readonly message: string; readonly errorInfo?: string }
  | { readonly type: 'user_message'; readonly message: string }
  | { readonly type: 'agent_message'; readonly message: string }
  | { readonly type: 'collab_agent_spawn_end'; readonly callId: string; readonly newThreadId?: string }
  | {
      readonly type: 'collab_waiting_end';
      readonly callId: string;
      readonly statuses: ReadonlyMap<string, CodexAgentStatus>;
    }
  | {
      readonly type: 'collab_close_end';
      readonly callId: string;
      readonly receiverThreadId?: string;
      readonly status?: CodexAgentStatus;
    }
  | { readonly type: 'other'; readonly eventType: string };

/** One rollout line, typed. `time` is the line's timestamp in epoch ms (`NaN` when it has none that parses). */
export type CodexRecord = { readonly time: number; readonly ordinal?: number } & (
  | { readonly kind: 'session_meta'; readonly meta: CodexSessionMeta }
  | { readonly kind: 'turn_context'; readonly turnId?: string; readonly model?: string }
  | { readonly kind: 'response_item'; readonly item: CodexResponseItem }
  | { readonly kind: 'event_msg'; readonly event: CodexEvent }
  | { readonly kind: 'compacted' }
  | { readonly kind: 'other'; readonly type: string }
);

/**
 * A child's status as its parent's tools report it (`AgentStatus`):
 * `completed` with the child's last message (or none), `errored` with the
 * error's text, or another state (`running`, `interrupted`, `shutdown`,
 * `not_found`, `pending_init`).
 */
export type CodexAgentStatus =
  | { readonly kind: 'completed'; readonly message: string | undefined }
  | { readonly kind: 'errored'; readonly message: string }
  | { readonly kind: 'other'; readonly state: string };

/** The rollout line types this reader knows (`RolloutItem`). */
export const CODEX_LINE_TYPES = ['session_meta', 'turn_context', 'response_item', 'event_msg', 'compacted'] as const;

const count = z.number().catch(0);
const UsageSchema = z.looseObject({
  input_tokens: count,
  cached_input_tokens: count.optional(),
  output_tokens: count,
  reasoning_output_tokens: count.optional(),
  total_tokens: count.optional(),
});
const optionalString = z.string().nullish();

const LineSchema = z.looseObject({
  timestamp: z.string().optional(),
  ordinal: z.number().optional(),
  type: z.string(),
  payload: z.unknown(),
});
const SessionMetaSchema = z.looseObject({
  id: z.string(),
  forked_from_id: optionalString,
  timestamp: optionalString,
  cli_version: optionalString,
  originator: optionalString,
  model_provider: optionalString,
  source: z.unknown(),
  agent_nickname: optionalString,
  agent_role: optionalString,
  agent_type: optionalString,
  agent_path: optionalString,
  parent_thread_id: optionalString,
  session_id: optionalString,
  subagent_history_start_ordinal: z.number().nullish(),
  cwd: optionalString,
  git: z.looseObject({ branch: optionalString, repository_url: optionalString }).nullish().catch(undefined),
});
const TurnContextSchema = z.looseObject({ turn_id: optionalString, model: optionalString });
const ItemSchema = z.looseObject({ type: z.string() });
const MessageSchema = z.looseObject({
  role: z.string(),
  content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
  phase: optionalString,
});
const ReasoningSchema = z.looseObject({
  summary: z.array(z.looseObject({ text: z.string().optional() })).nullish(),
  content: z.array(z.looseObject({ text: z.string().optional() })).nullish(),
});
const FunctionCallSchema = z.looseObject({ call_id: z.string(), name: z.string(), arguments: z.unknown() });
const CustomToolCallSchema = z.looseObject({ call_id: z.string(), name: z.string(), input: z.unknown() });
const OutputSchema = z.looseObject({ call_id: optionalString, output: z.unknown().optional() });
const EventSchema = z.looseObject({ type: z.string() });
const TurnEventSchema = z.looseObject({ turn_id: optionalString });
const TaskCompleteSchema = z.looseObject({
  turn_id: optionalString,
  last_agent_message: z.string().nullish(),
  // 0.16x: a turn that ended on an error still completes, with the error's text (e.g. "Incomplete response returned, reason: max_output_tokens").
  error: z.looseObject({ message: optionalString }).nullish().catch(undefined),
});
const TurnAbortedSchema = z.looseObject({ turn_id: optionalString, reason: z.unknown() });
const TokenCountSchema = z.looseObject({
  info: z.looseObject({ total_token_usage: UsageSchema.nullish(), last_token_usage: UsageSchema.nullish() }).nullish(),
});
const MessageEventSchema = z.looseObject({ message: z.string() });
const ErrorEventSchema = z.looseObject({ message: z.string(), codex_error_info: z.unknown() });
const SpawnEndSchema = z.looseObject({ call_id: z.string(), new_thread_id: optionalString });
const WaitingEndSchema = z.looseObject({ call_id: z.string(), statuses: z.record(z.string(), z.unknown()).nullish() });
const CloseEndSchema = z.looseObject({ call_id: z.string(), receiver_thread_id: optionalString, status: z.unknown() });

type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: WireError };

function check<T>(schema: z.ZodType<T>, value: unknown, basePath: string): Parsed<T> {
  const parsed = schema.safeParse(value);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, error: wireErrorFromIssues(parsed.error.issues, value, basePath) };
}

/** `null`/`undefined` to `undefined`; other values unchanged. */
function opt<T>(value: T | null | undefined): T | undefined {
  return value ?? undefined;
}

/** `true` when `value` is a {@link WireError} rather than a record. */
export function isCodexWireError(value: CodexRecord | WireError): value is WireError {
  return !('kind' in value);
}

/**
 * Parses one rollout line.
 *
 * @returns the typed record; a line whose `type` is not a known one is
 *   `{kind: 'other'}` (a newer record type: ignored, not an error), and an
 *   item or event of an unknown type is `other` inside its kind. A
 *   `WireError` for a line that is not JSON (`not-json`), not an object
 *   (`not-object`), or a known type with a field the reader needs missing
 *   or of the wrong type (`invalid`). Never throws.
 */
export function parseCodexLine(text: string): CodexRecord | WireError {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // JSON.parse throws only SyntaxError for text that is not JSON.
    return wireError('not-json', '', 'a JSON object', `text of ${text.length} chars that is not JSON`);
  }
  return parseCodexValue(value);
}

/** {@link parseCodexLine} for a value already parsed from JSON. Never throws. */
export function parseCodexValue(value: unknown): CodexRecord | WireError {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return wireError('not-object', '', 'a JSON object', describeValue(value));
  const line = check(LineSchema, value, '');
  if (!line.ok) return line.error;
  const { type, payload } = line.value;
  const time = line.value.timestamp !== undefined ? Date.parse(line.value.timestamp) : Number.NaN;
  const base = { time, ...(line.value.ordinal !== undefined ? { ordinal: line.value.ordinal } : {}) };
  switch (type) {
    case 'session_meta': {
      const meta = check(SessionMetaSchema, payload, 'payload');
      return meta.ok ? { ...base, kind: 'session_meta', meta: sessionMeta(meta.value) } : meta.error;
    }
    case 'turn_context': {
      const context = check(TurnContextSchema, payload, 'payload');
      if (!context.ok) return context.error;
      const turnId = opt(context.value.turn_id);
      const model = opt(context.value.model);
      return {
        ...base,
        kind: 'turn_context',
        ...(turnId !== undefined ? { turnId } : {}),
        ...(model !== undefined && model !== '' ? { model } : {}),
      };
    }
    case 'response_item': {
      const item = responseItem(payload);
      return item.ok ? { ...base, kind: 'response_item', item: item.value } : item.error;
    }
    case 'event_msg': {
      const event = eventMsg(payload);
      return event.ok ? { ...base, kind: 'event_msg', event: event.value } : event.error;
    }
    case 'compacted':
      return { ...base, kind: 'compacted' };
    default:
      return { ...base, kind: 'other', type };
  }
}

function sessionMeta(raw: z.infer<typeof SessionMetaSchema>): CodexSessionMeta {
  const fields: Record<string, string | number | undefined> = {
    forkedFromId: opt(raw.forked_from_id),
    timestamp: opt(raw.timestamp),
    cliVersion: opt(raw.cli_version),
    originator: opt(raw.originator),
    modelProvider: opt(raw.model_provider),
    agentNickname: opt(raw.agent_nickname),
    agentRole: opt(raw.agent_role) ?? opt(raw.agent_type),
    agentPath: opt(raw.agent_path),
    parentThreadId: opt(raw.parent_thread_id),
    sessionId: opt(raw.session_id),
    historyStartOrdinal: opt(raw.subagent_history_start_ordinal),
    cwd: opt(raw.cwd),
    gitBranch: opt(raw.git?.branch),
    repositoryUrl: opt(raw.git?.repository_url),
  };
  const present = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== ''));
  return { id: raw.id, source: parseCodexSource(raw.source), ...present } as CodexSessionMeta;
}

/**
 * Reads a `SessionSource` as serde writes it: a lowercase string for a
 * client (`"vscode"`), `{"custom": name}`, or `{"subagent": ...}` with
 * `{"thread_spawn": {...}}`, a string (`"review"`, `"compact"`,
 * `"memory_consolidation"`) or `{"other": name}`. Never throws.
 */
export function parseCodexSource(value: unknown): CodexSource {
  if (typeof value === 'string') return { kind: 'client', name: value };
  if (!isJsonObject(value)) return { kind: 'unknown' };
  if (typeof value['custom'] === 'string') return { kind: 'client', name: value['custom'] };
  const sub = value['subagent'];
  if (typeof sub === 'string') return { kind: 'internal-subagent', name: sub };
  if (!isJsonObject(sub)) return { kind: 'unknown' };
  const spawn = sub['thread_spawn'];
  if (isJsonObject(spawn) && typeof spawn['parent_thread_id'] === 'string') {
    const text = (key: string): string | undefined =>
      typeof spawn[key] === 'string' && spawn[key] !== '' ? spawn[key] : undefined;
    const agentPath = text('agent_path');
    const agentNickname = text('agent_nickname');
    const agentRole = text('agent_role') ?? text('agent_type');
    return {
      kind: 'thread-spawn',
      parentThreadId: spawn['parent_thread_id'],
      ...(typeof spawn['depth'] === 'number' ? { depth: spawn['depth'] } : {}),
      ...(agentPath !== undefined ? { agentPath } : {}),
      ...(agentNickname !== undefined ? { agentNickname } : {}),
      ...(agentRole !== undefined ? { agentRole } : {}),
    };
  }
  if (typeof sub['other'] === 'string') return { kind: 'internal-subagent', name: `other:${sub['other']}` };
  const key = Object.keys(sub)[0];
  return key !== undefined ? { kind: 'internal-subagent', name: key } : { kind: 'unknown' };
}

function responseItem(payload: unknown): Parsed<CodexResponseItem> {
  const head = check(ItemSchema, payload, 'payload');
  if (!head.ok) return head;
  const type = head.value.type;
  switch (type) {
    case 'message': {
      const m = check(MessageSchema, payload, 'payload');
      if (!m.ok) return m;
      const phase = opt(m.value.phase);
      const content = m.value.content.map((part) => ({
        type: part.type,
        ...(part.text !== undefined ? { text: part.text } : {}),
      }));
      return { ok: true, value: { type, role: m.value.role, content, ...(phase !== undefined ? { phase } : {}) } };
    }
    case 'reasoning': {
      const r = check(ReasoningSchema, payload, 'payload');
      if (!r.ok) return r;
      const texts = [...(r.value.summary ?? []), ...(r.value.content ?? [])].flatMap((part) =>
        part.text !== undefined && part.text !== '' ? [part.text] : [],
      );
      return { ok: true, value: { type, texts } };
    }
    case 'function_call': {
      const f = check(FunctionCallSchema, payload, 'payload');
      if (!f.ok) return f;
      const args =
        typeof f.value.arguments === 'string' ? f.value.arguments : JSON.stringify(f.value.arguments ?? null);
      return { ok: true, value: { type, callId: f.value.call_id, name: f.value.name, arguments: args } };
    }
    case 'custom_tool_call': {
      const c = check(CustomToolCallSchema, payload, 'payload');
      if (!c.ok) return c;
      const input = typeof c.value.input === 'string' ? c.value.input : JSON.stringify(c.value.input ?? null);
      return { ok: true, value: { type, callId: c.value.call_id, name: c.value.name, input } };
    }
    case 'local_shell_call': {
      const record = isJsonObject(payload) ? payload : {};
      const callId = typeof record['call_id'] === 'string' ? record['call_id'] : undefined;
      return { ok: true, value: { type, ...(callId !== undefined ? { callId } : {}), action: record['action'] } };
    }
    case 'web_search_call':
      return { ok: true, value: { type, action: isJsonObject(payload) ? payload['action'] : undefined } };
    case 'tool_search_call': {
      const record = isJsonObject(payload) ? payload : {};
      const callId = typeof record['call_id'] === 'string' ? record['call_id'] : undefined;
      return { ok: true, value: { type, ...(callId !== undefined ? { callId } : {}), arguments: record['arguments'] } };
    }
    case 'function_call_output':
    case 'custom_tool_call_output':
    case 'tool_search_output': {
      const o = check(OutputSchema, payload, 'payload');
      if (!o.ok) return o;
      const callId = opt(o.value.call_id);
      const output = type === 'tool_search_output' ? { text: '' } : toolOutput(o.value.output);
      return { ok: true, value: { type, ...(callId !== undefined ? { callId } : {}), output } };
    }
    default:
      return { ok: true, value: { type: 'other', itemType: type } };
  }
}

/**
 * A tool output as serialized (`FunctionCallOutputPayload`): a string, an
 * array of content items (`input_text`/`output_text` parts joined with
 * newlines, images dropped), or an object `{content, success}` of older
 * versions. Never throws.
 */
export function toolOutput(value: unknown): CodexToolOutput {
  if (typeof value === 'string') return { text: value };
  if (Array.isArray(value))
    return {
      text: value
        .flatMap((part) => (isJsonObject(part) && typeof part['text'] === 'string' ? [part['text']] : []))
        .join('\n'),
    };
  if (isJsonObject(value)) {
    const inner = value['content'] !== undefined ? toolOutput(value['content']) : { text: '' };
    return { text: inner.text, ...(typeof value['success'] === 'boolean' ? { success: value['success'] } : {}) };
  }
  return { text: '' };
}

function usage(raw: z.infer<typeof UsageSchema> | null | undefined): CodexTokenUsage | undefined {
  if (raw === null || raw === undefined) return undefined;
  return {
    inputTokens: raw.input_tokens,
    cachedInputTokens: raw.cached_input_tokens ?? 0,
    outputTokens: raw.output_tokens,
    reasoningOutputTokens: raw.reasoning_output_tokens ?? 0,
    totalTokens: raw.total_tokens ?? raw.input_tokens + raw.output_tokens,
  };
}

function eventMsg(payload: unknown): Parsed<CodexEvent> {
  const head = check(EventSchema, payload, 'payload');
  if (!head.ok) return head;
  const type = head.value.type;
  switch (type) {
    case 'task_started':
    case 'turn_started': {
      const e = check(TurnEventSchema, payload, 'payload');
      if (!e.ok) return e;
      const turnId = opt(e.value.turn_id);
      return { ok: true, value: { type: 'task_started', ...(turnId !== undefined ? { turnId } : {}) } };
    }
    case 'task_complete':
    case 'turn_complete': {
      const e = check(TaskCompleteSchema, payload, 'payload');
      if (!e.ok) return e;
      const turnId = opt(e.value.turn_id);
      const errorMessage = opt(e.value.error?.message);
      return {
        ok: true,
        value: {
          type: 'task_complete',
          ...(turnId !== undefined ? { turnId } : {}),
          lastAgentMessage: e.value.last_agent_message ?? null,
          ...(errorMessage !== undefined ? { errorMessage } : {}),
        },
      };
    }
    case 'turn_aborted': {
      const e = check(TurnAbortedSchema, payload, 'payload');
      if (!e.ok) return e;
      const turnId = opt(e.value.turn_id);
      const reason = typeof e.value.reason === 'string' ? e.value.reason : 'unknown';
      return { ok: true, value: { type, ...(turnId !== undefined ? { turnId } : {}), reason } };
    }
    case 'token_count': {
      const e = check(TokenCountSchema, payload, 'payload');
      if (!e.ok) return e;
      const total = usage(e.value.info?.total_token_usage);
      const last = usage(e.value.info?.last_token_usage);
      return {
        ok: true,
        value: { type, ...(total !== undefined ? { total } : {}), ...(last !== undefined ? { last } : {}) },
      };
    }
    case 'error': {
      const e = check(ErrorEventSchema, payload, 'payload');
      if (!e.ok) return e;
      const errorInfo = variantName(e.value.codex_error_info);
      return { ok: true, value: { type, message: e.value.message, ...(errorInfo !== undefined ? { errorInfo } : {}) } };
    }
    case 'user_message':
    case 'agent_message': {
      const e = check(MessageEventSchema, payload, 'payload');
      return e.ok ? { ok: true, value: { type, message: e.value.message } } : e;
    }
    case 'collab_agent_spawn_end': {
      const e = check(SpawnEndSchema, payload, 'payload');
      if (!e.ok) return e;
      const newThreadId = opt(e.value.new_thread_id);
      return {
        ok: true,
        value: { type, callId: e.value.call_id, ...(newThreadId !== undefined ? { newThreadId } : {}) },
      };
    }
    case 'collab_waiting_end': {
      const e = check(WaitingEndSchema, payload, 'payload');
      if (!e.ok) return e;
      const statuses = new Map(
        Object.entries(e.value.statuses ?? {}).map(([id, status]) => [id, parseCodexAgentStatus(status)]),
      );
      return { ok: true, value: { type, callId: e.value.call_id, statuses } };
    }
    case 'collab_close_end': {
      const e = check(CloseEndSchema, payload, 'payload');
      if (!e.ok) return e;
      const receiverThreadId = opt(e.value.receiver_thread_id);
      return {
        ok: true,
        value: {
          type,
          callId: e.value.call_id,
          ...(receiverThreadId !== undefined ? { receiverThreadId } : {}),
          ...(e.value.status !== undefined ? { status: parseCodexAgentStatus(e.value.status) } : {}),
        },
      };
    }
    default:
      return { ok: true, value: { type: 'other', eventType: type } };
  }
}

/** The variant name of a serde enum value: the string itself, or an object's only key. */
function variantName(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (isJsonObject(value)) return Object.keys(value)[0];
  return undefined;
}

/**
 * Reads an `AgentStatus` as serde writes it: `{"completed": text|null}`,
 * `{"errored": text}`, or a bare state string (`"running"`, `"shutdown"`,
 * `"completed"` in some older notifications). Never throws.
 */
export function parseCodexAgentStatus(value: unknown): CodexAgentStatus {
  if (typeof value === 'string')
    return value === 'completed' ? { kind: 'completed', message: undefined } : { kind: 'other', state: value };
  if (isJsonObject(value)) {
    if ('completed' in value) {
      const message = value['completed'];
      return { kind: 'completed', message: typeof message === 'string' ? message : undefined };
    }
    if (typeof value['errored'] === 'string') return { kind: 'errored', message: value['errored'] };
    const key = Object.keys(value)[0];
    if (key !== undefined) return { kind: 'other', state: key };
  }
  return { kind: 'other', state: 'unknown' };
}

/** What a collab tool's output says about children, by the reference it names them with (a thread id or an agent path). */
export interface CodexCollabOutput {
  /** `spawn_agent`: the new child's reference (`agent_id`, v1; `task_name`, the agent path, v2). */
  readonly spawned?: string;
  /** `wait`/`wait_agent` (v1: `status` by target), `close_agent` (`previous_status`, keyed by `target`): statuses by reference. */
  readonly statuses: ReadonlyMap<string, CodexAgentStatus>;
}

/**
 * Reads the JSON text a collab tool returns (`spawn_agent`, `wait`,
 * `wait_agent`, `close_agent`). `target` is the reference the call's
 * arguments named (for `close_agent`, whose output does not repeat it).
 *
 * @returns `undefined` when the text is not a JSON object (an error the
 *   tool answered the model with, in words). Never throws.
 */
export function parseCodexCollabOutput(text: string, target?: string): CodexCollabOutput | undefined {
  const value = parseJsonObject(text);
  if (value === undefined) return undefined;
  const statuses = new Map<string, CodexAgentStatus>();
  const spawned =
    typeof value['agent_id'] === 'string'
      ? value['agent_id']
      : typeof value['task_name'] === 'string'
        ? value['task_name']
        : undefined;
  const status = value['status'];
  if (isJsonObject(status))
    for (const [reference, raw] of Object.entries(status)) statuses.set(reference, parseCodexAgentStatus(raw));
  if (value['previous_status'] !== undefined && target !== undefined)
    statuses.set(target, parseCodexAgentStatus(value['previous_status']));
  return { ...(spawned !== undefined ? { spawned } : {}), statuses };
}

/** What a `<subagent_notification>` user message says: the child's reference (agent path or thread id) and its final status. */
export interface CodexSubagentNotification {
  readonly reference: string;
  readonly status: CodexAgentStatus;
}

const NOTIFICATION_OPEN = '<subagent_notification>';
const NOTIFICATION_CLOSE = '</subagent_notification>';

/**
 * Reads a subagent notification Codex injects into a parent's history when
 * a child ends: `<subagent_notification>{"agent_path": ref, "status": ...}</subagent_notification>`
 * (older: `agent_id`), the tags in any case.
 *
 * @returns `undefined` when `text` holds none. Never throws.
 */
export function parseCodexSubagentNotification(text: string): CodexSubagentNotification | undefined {
  const lower = text.toLowerCase();
  const open = lower.indexOf(NOTIFICATION_OPEN);
  if (open === -1) return undefined;
  const close = lower.indexOf(NOTIFICATION_CLOSE, open);
  if (close === -1) return undefined;
  const value = parseJsonObject(text.slice(open + NOTIFICATION_OPEN.length, close));
  if (value === undefined) return undefined;
  const reference =
    typeof value['agent_path'] === 'string'
      ? value['agent_path']
      : typeof value['agent_id'] === 'string'
        ? value['agent_id']
        : undefined;
  if (reference === undefined) return undefined;
  return { reference, status: parseCodexAgentStatus(value['status']) };
}

/** A message one agent sent another (multi-agent v2's `InterAgentCommunication`), as recorded in the recipient's history. */
export interface CodexInterAgentMessage {
  readonly author: string;
  readonly recipient: string;
  readonly content: string;
}

/**
 * Reads a message item whose only part is the JSON of an inter-agent
 * message (`{author, recipient, other_recipients, content, trigger_turn}`),
 * which Codex records in the assistant role.
 *
 * @returns `undefined` for any other message. Never throws.
 */
export function parseCodexInterAgentMessage(content: readonly CodexContentPart[]): CodexInterAgentMessage | undefined {
  const only = content.length === 1 ? content[0] : undefined;
  if (only?.text === undefined || !only.text.startsWith('{')) return undefined;
  const value = parseJsonObject(only.text);
  if (value === undefined) return undefined;
  const { author, recipient, content: text } = value;
  if (
    typeof author !== 'string' ||
    typeof recipient !== 'string' ||
    typeof text !== 'string' ||
    typeof value['trigger_turn'] !== 'boolean'
  )
    return undefined;
  return { author, recipient, content: text };
}

/** The string value of `key` in a JSON object text (a tool call's arguments), when there is one. Never throws. */
export function codexArgument(text: string, key: string): string | undefined {
  const value = parseJsonObject(text);
  const field = value?.[key];
  return typeof field === 'string' ? field : undefined;
}
