/**
 * The Agent Client Protocol vocabulary the observer reads (docs/PROTOCOLS.md section 6):
 * method names as `as const` maps, the payload types of the requests,
 * responses and notifications a prompt turn travels through, and validators
 * for them. Covers protocol v1 and the parts of draft v2 a run tracker needs
 * (a `session/prompt` answered on acceptance with `messageId`, the turn ended
 * by a `state_update` session update).
 *
 * Validation is deliberately minimal: only the fields the tracker reads are
 * checked, everything else passes through (objects are loose). Unknown
 * `sessionUpdate` kinds, content block types, tool statuses and stop reasons
 * are accepted as unknown values, never errors; a known kind with a field of
 * the wrong type is a `WireError`. The official SDK's generated zod schemas
 * are not exported by its package entry points, so these are our own. Never
 * throws; imports nothing outside `wire/`.
 *
 * @module subagent-otel/wire/acp-protocol
 */
import * as z from 'zod';
import type { TokenUsage } from './content.js';
import { describeValue, wireError, wireErrorFromIssues, type WireError } from './wire-error.js';
import { isJsonObject } from './json-values.js';

/** Methods the client calls on the agent (requests, and the `session/cancel` notification). */
export const ACP_AGENT_METHODS = {
  initialize: 'initialize',
  authenticate: 'authenticate',
  sessionNew: 'session/new',
  sessionLoad: 'session/load',
  sessionResume: 'session/resume',
  sessionPrompt: 'session/prompt',
  sessionCancel: 'session/cancel',
  sessionSetMode: 'session/set_mode',
} as const;

/** Methods the agent calls on the client (the `session/update` notification, and requests). */
export const ACP_CLIENT_METHODS = {
  sessionUpdate: 'session/update',
  requestPermission: 'session/request_permission',
  readTextFile: 'fs/read_text_file',
  writeTextFile: 'fs/write_text_file',
  terminalCreate: 'terminal/create',
} as const;

/** `update.sessionUpdate` kinds of a `session/update` notification that this version validates. */
export const ACP_SESSION_UPDATES = {
  agentMessageChunk: 'agent_message_chunk',
  agentThoughtChunk: 'agent_thought_chunk',
  userMessageChunk: 'user_message_chunk',
  toolCall: 'tool_call',
  toolCallUpdate: 'tool_call_update',
  plan: 'plan',
  usageUpdate: 'usage_update',
  /** Draft v2: the session's foreground state; `idle` (with `stopReason`) ends a turn. */
  stateUpdate: 'state_update',
} as const;

/** Tool call statuses of protocol v1. Other strings are accepted and treated as not finished. */
export const ACP_TOOL_CALL_STATUSES = ['pending', 'in_progress', 'completed', 'failed'] as const;

/** A text content block: the only block kind whose text can be output. */
export interface AcpTextBlock {
  readonly type: 'text';
  readonly text: string;
  readonly [field: string]: unknown;
}
/** Any other content block (`image`, `audio`, `resource`, `resource_link`, or a future type); never output. */
export interface AcpOtherBlock {
  readonly type: string;
  readonly [field: string]: unknown;
}
/** An ACP content block. */
export type AcpContentBlock = AcpTextBlock | AcpOtherBlock;

/** `_meta` of a `session/prompt` request: W3C trace context travels here. */
export interface AcpPromptMeta {
  readonly traceparent?: string;
  readonly tracestate?: string;
  readonly baggage?: string;
  readonly [field: string]: unknown;
}

/** `session/prompt` params. */
export interface AcpPromptParams {
  readonly sessionId: string;
  readonly prompt: readonly AcpContentBlock[];
  /** Absent when the request carried no `_meta` (or `null`). */
  readonly _meta?: AcpPromptMeta;
}

/**
 * Per-turn token usage on a `session/prompt` response (unstable in the
 * protocol; may be cumulative over the session). Recorded only as reported.
 */
export interface AcpUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens?: number;
  readonly thoughtTokens?: number;
  readonly cachedReadTokens?: number;
  readonly cachedWriteTokens?: number;
}

/**
 * `session/prompt` result. Protocol v1 answers when the turn ends, with
 * `stopReason`; draft v2 answers on acceptance, with `messageId` and no
 * `stopReason` (the turn then ends with an idle `state_update`).
 */
export interface AcpPromptResult {
  /** Present on a v1 end-of-turn answer. Any string: unknown values are kept verbatim. */
  readonly stopReason?: string;
  /** Absent when the response had none (or `null`). */
  readonly usage?: AcpUsage;
  /** Present on a draft-v2 acceptance. */
  readonly messageId?: string;
  /** The result's `_meta` object, kept verbatim (agents put extra counts here, e.g. gemini-cli's `quota`). */
  readonly _meta?: Readonly<Record<string, unknown>>;
}

/** `session/new` result. */
export interface AcpNewSessionResult {
  readonly sessionId: string;
}

/** `session/cancel` params. */
export interface AcpCancelParams {
  readonly sessionId: string;
}

/** `initialize` result, reduced to what the tracker reads. */
export interface AcpInitializeResult {
  readonly protocolVersion?: number;
  /** Absent when the agent did not say who it is. */
  readonly agentInfo?: { readonly name: string; readonly title?: string; readonly version?: string };
}

/** `agent_message_chunk`, `agent_thought_chunk` or `user_message_chunk`; a changed `messageId` starts a new message. */
export interface AcpContentChunkUpdate {
  readonly sessionUpdate: 'agent_message_chunk' | 'agent_thought_chunk' | 'user_message_chunk';
  readonly content: AcpContentBlock;
  readonly messageId?: string | null;
}
/** Fields a tool call announcement, its updates and a permission request's inline tool call share. */
export interface AcpToolCallFields {
  readonly toolCallId: string;
  readonly title?: string | null;
  /** Not in the protocol; read when an agent sends it anyway. */
  readonly name?: string | null;
  /** ACP tool kind (`read`, `edit`, `execute`, ...), or an unknown string. */
  readonly kind?: string | null;
  /** One of `ACP_TOOL_CALL_STATUSES`, or an unknown string. */
  readonly status?: string | null;
  /** Agent-specific metadata, verbatim and unchecked (claude-agent-acp names its own tool in `claudeCode.toolName`). */
  readonly _meta?: unknown;
}
/** A new tool call. */
export interface AcpToolCallUpdateNew extends AcpToolCallFields {
  readonly sessionUpdate: 'tool_call';
  readonly title: string;
}
/** A change to a tool call announced earlier (only changed fields are present). */
export interface AcpToolCallUpdateChange extends AcpToolCallFields {
  readonly sessionUpdate: 'tool_call_update';
}
/** The agent's plan (never output). */
export interface AcpPlanUpdate {
  readonly sessionUpdate: 'plan';
  readonly entries: readonly unknown[];
}
/** Cumulative session cost of a `usage_update`. */
export interface AcpCost {
  readonly amount: number;
  readonly currency: string;
}
/**
 * Context-window usage (`used` of `size` tokens in context now) and the
 * optional cumulative session cost: NOT per-turn token usage. A `cost` that
 * is not `{ amount: number, currency: string }` is dropped, never rejected.
 */
export interface AcpUsageWindowUpdate {
  readonly sessionUpdate: 'usage_update';
  readonly used: number;
  readonly size: number;
  readonly cost?: AcpCost;
}
/**
 * Draft v2 foreground state. `stopReason` is absent when the agent reported
 * none or a malformed one (the draft says to treat both the same way);
 * `error` carries the failure of a `stopReason: 'error'` end.
 */
export interface AcpStateUpdate {
  readonly sessionUpdate: 'state_update';
  /** `running`, `idle`, `requires_action`, or an unknown string. */
  readonly state: string;
  readonly stopReason?: string;
  readonly error?: { readonly code?: number; readonly message?: string };
}
/** Every session update kind this version validates. */
export type AcpKnownSessionUpdate =
  | AcpContentChunkUpdate
  | AcpToolCallUpdateNew
  | AcpToolCallUpdateChange
  | AcpPlanUpdate
  | AcpUsageWindowUpdate
  | AcpStateUpdate;
/** A session update of a kind this version does not read; ignored by every consumer. */
export interface AcpUnknownSessionUpdate {
  readonly sessionUpdate: string;
  readonly [field: string]: unknown;
}
/** `session/update` params. */
export interface AcpSessionUpdateParams {
  readonly sessionId: string;
  readonly update: AcpKnownSessionUpdate | AcpUnknownSessionUpdate;
}

/** A validated value, or the first problem found. */
export type AcpParseResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: WireError };

/** Result of validating `session/update` params; `known` is `false` for an update kind this version does not read. */
export type AcpSessionUpdateResult =
  | { readonly ok: true; readonly value: AcpSessionUpdateParams; readonly known: boolean }
  | { readonly ok: false; readonly error: WireError };

const nat = z.number().int().nonnegative();

/** A content block: any object with a string `type`; a `text` block must carry a string `text`. */
const ContentBlockSchema = z
  .looseObject({ type: z.string(), text: z.unknown().optional() })
  .superRefine((block, ctx) => {
    if (block.type === 'text' && typeof block.text !== 'string') {
      ctx.addIssue({ code: 'invalid_type', expected: 'string', input: block.text, path: ['text'] });
    }
  });

const PromptParamsSchema = z.looseObject({
  sessionId: z.string(),
  prompt: z.array(ContentBlockSchema),
  _meta: z
    .looseObject({
      traceparent: z.string().optional(),
      tracestate: z.string().optional(),
      baggage: z.string().optional(),
    })
    .nullish(),
});

const UsageSchema = z.looseObject({
  inputTokens: nat,
  outputTokens: nat,
  totalTokens: nat.nullish(),
  thoughtTokens: nat.nullish(),
  cachedReadTokens: nat.nullish(),
  cachedWriteTokens: nat.nullish(),
});

const PromptResultSchema = z.looseObject({
  stopReason: z.string().optional(),
  usage: UsageSchema.nullish(),
  messageId: z.string().nullish(),
  // A `_meta` that is not an object carries nothing this version reads: dropped below, never an error.
  _meta: z.unknown().optional(),
});

const NewSessionResultSchema = z.looseObject({ sessionId: z.string() });
const CancelParamsSchema = z.looseObject({ sessionId: z.string() });
const InitializeResultSchema = z.looseObject({
  protocolVersion: z.number().optional(),
  agentInfo: z.looseObject({ name: z.string(), title: z.string().nullish(), version: z.string().nullish() }).nullish(),
});

const toolFields = {
  toolCallId: z.string(),
  name: z.string().nullish(),
  kind: z.string().nullish(),
  status: z.string().nullish(),
  // Read only for an agent's own tool name: a `_meta` of any other shape is ignored, never an error.
  _meta: z.unknown().optional(),
};

const updateSchemas = {
  agent_message_chunk: z.looseObject({ content: ContentBlockSchema, messageId: z.string().nullish() }),
  agent_thought_chunk: z.looseObject({ content: ContentBlockSchema, messageId: z.string().nullish() }),
  user_message_chunk: z.looseObject({ content: ContentBlockSchema, messageId: z.string().nullish() }),
  tool_call: z.looseObject({ ...toolFields, title: z.string() }),
  tool_call_update: z.looseObject({ ...toolFields, title: z.string().nullish() }),
  plan: z.looseObject({ entries: z.array(z.unknown()) }),
  usage_update: z.looseObject({ used: z.number(), size: z.number(), cost: z.unknown().optional() }),
  state_update: z.looseObject({
    state: z.string(),
    // Draft v2: an omitted, null or malformed stopReason all mean "not reported"; checked below, never an error.
    stopReason: z.unknown().optional(),
    error: z.unknown().optional(),
  }),
} as const;

type KnownUpdateKind = keyof typeof updateSchemas;

/** `true` when this version validates and reads session updates of `kind`. */
export function isKnownSessionUpdateKind(kind: string): kind is KnownUpdateKind {
  return Object.prototype.hasOwnProperty.call(updateSchemas, kind);
}

/** Narrows a session update to the known union; unknown kinds return `false`. */
export function isKnownSessionUpdate(
  update: AcpKnownSessionUpdate | AcpUnknownSessionUpdate,
): update is AcpKnownSessionUpdate {
  return isKnownSessionUpdateKind(update.sessionUpdate);
}

/** `true` for a text content block (the only kind of block ACP output is made of). */
export function isAcpTextBlock(block: AcpContentBlock): block is AcpTextBlock {
  return block.type === 'text' && typeof block.text === 'string';
}

function validate<T>(schema: z.ZodType, value: unknown, basePath: string): AcpParseResult<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data as T };
  return { ok: false, error: wireErrorFromIssues(parsed.error.issues, value, basePath) };
}

/** Removes `null` values of optional fields so consumers see "absent" one way only. */
function withoutNulls<T extends object>(value: T): T {
  const copy: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) if (field !== null) copy[key] = field;
  return copy as T;
}

/**
 * Validates `session/prompt` params: `sessionId`, `prompt` (content blocks)
 * and the W3C trace context strings in `_meta`.
 *
 * @returns `{ ok: true, value }` (a `_meta` of `null` becomes absent), or
 *   `{ ok: false, error }` naming the first bad field under `params`.
 *   Never throws; never mutates `params`.
 */
export function parseAcpPromptParams(params: unknown): AcpParseResult<AcpPromptParams> {
  const result = validate<AcpPromptParams & { _meta?: AcpPromptMeta | null }>(PromptParamsSchema, params, 'params');
  if (!result.ok) return result;
  const { _meta, ...rest } = result.value;
  return { ok: true, value: _meta === null || _meta === undefined ? rest : { ...rest, _meta } };
}

/**
 * Validates a `session/prompt` result.
 *
 * @returns `{ ok: true, value }` when it carries a string `stopReason` (v1,
 *   any string) or a `messageId` (draft-v2 acceptance); `usage` is kept when
 *   present and valid, `_meta` when it is an object, `null` fields become
 *   absent. `{ ok: false, error }`
 *   under `result` otherwise, including a result with neither field or a
 *   malformed `usage`. Never throws.
 */
export function parseAcpPromptResult(result: unknown): AcpParseResult<AcpPromptResult> {
  const parsed = validate<{ stopReason?: string; usage?: AcpUsage | null; messageId?: string | null; _meta?: unknown }>(
    PromptResultSchema,
    result,
    'result',
  );
  if (!parsed.ok) return parsed;
  const { stopReason, usage, messageId, _meta } = parsed.value;
  if (stopReason === undefined && (messageId === undefined || messageId === null)) {
    return { ok: false, error: wireError('invalid', 'result.stopReason', 'string', describeValue(undefined)) };
  }
  return {
    ok: true,
    value: {
      ...(stopReason !== undefined ? { stopReason } : {}),
      ...(usage !== undefined && usage !== null ? { usage: withoutNulls(usage) } : {}),
      ...(messageId !== undefined && messageId !== null ? { messageId } : {}),
      ...(isJsonObject(_meta) ? { _meta } : {}),
    },
  };
}

/** Validates a `session/new` result. @returns its `sessionId`, or a `WireError` under `result`; never throws. */
export function parseAcpNewSessionResult(result: unknown): AcpParseResult<AcpNewSessionResult> {
  return validate<AcpNewSessionResult>(NewSessionResultSchema, result, 'result');
}

/** Validates `session/cancel` params. @returns its `sessionId`, or a `WireError` under `params`; never throws. */
export function parseAcpCancelParams(params: unknown): AcpParseResult<AcpCancelParams> {
  return validate<AcpCancelParams>(CancelParamsSchema, params, 'params');
}

/**
 * Validates an `initialize` result.
 * @returns the protocol version and `agentInfo` (absent when missing or
 *   `null`), or a `WireError` under `result`. Never throws.
 */
export function parseAcpInitializeResult(result: unknown): AcpParseResult<AcpInitializeResult> {
  const parsed = validate<{
    protocolVersion?: number;
    agentInfo?: { name: string; title?: string | null; version?: string | null } | null;
  }>(InitializeResultSchema, result, 'result');
  if (!parsed.ok) return parsed;
  const { protocolVersion, agentInfo } = parsed.value;
  return {
    ok: true,
    value: {
      ...(protocolVersion !== undefined ? { protocolVersion } : {}),
      ...(agentInfo !== undefined && agentInfo !== null
        ? { agentInfo: withoutNulls(agentInfo) as { name: string; title?: string; version?: string } }
        : {}),
    },
  };
}

/**
 * Validates `session/update` params by `update.sessionUpdate`.
 *
 * @returns `{ ok: true, value, known: true }` for a known kind with valid
 *   fields; `{ ok: true, value, known: false }` for any other kind (kept
 *   verbatim); `{ ok: false, error }` when `sessionId` or `update` is missing
 *   or a known kind has a bad field (path under `params.update`). For
 *   `state_update`, a `stopReason` that is not a string and an `error` that
 *   is not an object are dropped, never rejected. Never throws.
 */
export function parseAcpSessionUpdate(params: unknown): AcpSessionUpdateResult {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    return { ok: false, error: wireError('invalid', 'params', '{ sessionId, update }', describeValue(params)) };
  }
  const p = params as Record<string, unknown>;
  if (typeof p.sessionId !== 'string') {
    return { ok: false, error: wireError('invalid', 'params.sessionId', 'string', describeValue(p.sessionId)) };
  }
  const update = p.update;
  if (update === null || typeof update !== 'object' || Array.isArray(update)) {
    return { ok: false, error: wireError('invalid', 'params.update', 'an update object', describeValue(update)) };
  }
  const kind = (update as Record<string, unknown>).sessionUpdate;
  if (typeof kind !== 'string') {
    return { ok: false, error: wireError('invalid', 'params.update.sessionUpdate', 'string', describeValue(kind)) };
  }
  if (!isKnownSessionUpdateKind(kind)) {
    return { ok: true, known: false, value: { sessionId: p.sessionId, update: update as AcpUnknownSessionUpdate } };
  }
  const parsed = validate<Record<string, unknown>>(updateSchemas[kind], update, 'params.update');
  if (!parsed.ok) return parsed;
  let value = update as AcpKnownSessionUpdate;
  if (kind === ACP_SESSION_UPDATES.stateUpdate) value = normalizeStateUpdate(update as Record<string, unknown>);
  else if (kind === ACP_SESSION_UPDATES.usageUpdate) value = normalizeUsageUpdate(update as Record<string, unknown>);
  return { ok: true, known: true, value: { sessionId: p.sessionId, update: value } };
}

function normalizeUsageUpdate(update: Record<string, unknown>): AcpUsageWindowUpdate {
  const { cost, ...rest } = update;
  const valid =
    isJsonObject(cost) &&
    typeof cost.amount === 'number' &&
    Number.isFinite(cost.amount) &&
    typeof cost.currency === 'string';
  return {
    ...(rest as unknown as AcpUsageWindowUpdate),
    ...(valid ? { cost: { amount: cost.amount as number, currency: cost.currency as string } } : {}),
  };
}

function normalizeStateUpdate(update: Record<string, unknown>): AcpStateUpdate {
  const { stopReason, error } = update;
  const failure = error !== null && typeof error === 'object' ? (error as Record<string, unknown>) : undefined;
  return {
    sessionUpdate: 'state_update',
    state: update.state as string,
    ...(typeof stopReason === 'string' ? { stopReason } : {}),
    ...(failure !== undefined
      ? {
          error: {
            ...(typeof failure.code === 'number' ? { code: failure.code } : {}),
            ...(typeof failure.message === 'string' ? { message: failure.message } : {}),
          },
        }
      : {}),
  };
}

/**
 * Converts reported ACP usage into the project's token usage, field by field
 * as reported (`thoughtTokens` to `reasoningTokens`, `cachedReadTokens` and
 * `cachedWriteTokens` to the cache counts); never computes or invents a
 * number, and leaves absent fields absent. `totalTokens` has no counterpart.
 */
export function tokenUsageFromAcp(usage: AcpUsage): TokenUsage {
  return {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    ...(usage.cachedReadTokens !== undefined ? { cacheReadTokens: usage.cachedReadTokens } : {}),
    ...(usage.cachedWriteTokens !== undefined ? { cacheWriteTokens: usage.cachedWriteTokens } : {}),
    ...(usage.thoughtTokens !== undefined ? { reasoningTokens: usage.thoughtTokens } : {}),
  };
}

/** One option a `session/request_permission` offers. */
export interface AcpPermissionOption {
  readonly optionId: string;
  /** `allow_once`, `allow_always`, `reject_once`, `reject_always`, or an unknown string. */
  readonly kind?: string;
}

/** `session/request_permission` params: the tool call travels inline (it may never be announced otherwise). */
export interface AcpPermissionRequestParams {
  readonly sessionId: string;
  readonly toolCall: AcpToolCallFields;
  readonly options: readonly AcpPermissionOption[];
}

/** The client's answer to `session/request_permission`. */
export type AcpPermissionOutcome =
  | { readonly outcome: 'selected'; readonly optionId: string }
  | { readonly outcome: 'cancelled' }
  /** An outcome string this version does not know, kept verbatim. */
  | { readonly outcome: string };

const PermissionRequestSchema = z.looseObject({
  sessionId: z.string(),
  toolCall: z.looseObject({ ...toolFields, title: z.string().nullish() }),
  options: z.array(z.looseObject({ optionId: z.string(), kind: z.string().nullish() })),
});

const PermissionResponseSchema = z.looseObject({
  outcome: z.looseObject({ outcome: z.string(), optionId: z.string().nullish() }),
});

/**
 * Validates `session/request_permission` params: `sessionId`, the inline
 * `toolCall` (`toolCallId` required; `title`, `kind`, `status`, `_meta`
 * optional) and the `options` (`optionId` required, `kind` optional).
 * @returns the params with `null` fields absent, or a `WireError` under `params`. Never throws.
 */
export function parseAcpPermissionRequest(params: unknown): AcpParseResult<AcpPermissionRequestParams> {
  const parsed = validate<{
    sessionId: string;
    toolCall: AcpToolCallFields;
    options: { optionId: string; kind?: string | null }[];
  }>(PermissionRequestSchema, params, 'params');
  if (!parsed.ok) return parsed;
  const { sessionId, toolCall, options } = parsed.value;
  return {
    ok: true,
    value: {
      sessionId,
      toolCall: withoutNulls(toolCall),
      options: options.map((o) => withoutNulls(o) as AcpPermissionOption),
    },
  };
}

/**
 * Validates the client's `session/request_permission` result.
 * @returns `{ outcome: 'selected', optionId }`, `{ outcome: 'cancelled' }`,
 *   or an unknown outcome verbatim; a `selected` outcome without `optionId`
 *   and any other shape are a `WireError` under `result`. Never throws.
 */
export function parseAcpPermissionResponse(result: unknown): AcpParseResult<AcpPermissionOutcome> {
  const parsed = validate<{ outcome: { outcome: string; optionId?: string | null } }>(
    PermissionResponseSchema,
    result,
    'result',
  );
  if (!parsed.ok) return parsed;
  const { outcome, optionId } = parsed.value.outcome;
  if (outcome === 'selected') {
    if (typeof optionId !== 'string')
      return { ok: false, error: wireError('invalid', 'result.outcome.optionId', 'string', describeValue(optionId)) };
    return { ok: true, value: { outcome, optionId } };
  }
  return { ok: true, value: { outcome } };
}

/**
 * The agent's own name for a tool, when its `_meta` carries one: an object
 * under any `_meta` key with a non-empty string `toolName` (claude-agent-acp
 * sends `_meta.claudeCode.toolName`, e.g. `Bash`). `claudeCode` is read
 * first; otherwise the first such key in object order. `undefined` when none.
 */
export function agentToolName(meta: unknown): string | undefined {
  if (!isJsonObject(meta)) return undefined;
  const nameIn = (value: unknown): string | undefined =>
    isJsonObject(value) && typeof value.toolName === 'string' && value.toolName !== '' ? value.toolName : undefined;
  const preferred = nameIn(meta['claudeCode']);
  if (preferred !== undefined) return preferred;
  for (const value of Object.values(meta)) {
    const name = nameIn(value);
    if (name !== undefined) return name;
  }
  return undefined;
}

/** Token counts an agent put in a prompt result's `_meta` (gemini-cli: `quota.token_count`), with the models it names. */
export interface AcpMetaQuota {
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** `quota.model_usage[].model`, in order, when present. */
  readonly models: readonly string[];
}

/**
 * Reads `_meta.quota.token_count.{input_tokens, output_tokens}` of a prompt
 * result (gemini-cli 0.61 sends the turn's sums there, reset every prompt).
 * @returns the counts as reported, or `undefined` when the shape is absent or
 *   either count is not a non-negative integer. Never throws.
 */
export function acpMetaQuota(meta: Readonly<Record<string, unknown>> | undefined): AcpMetaQuota | undefined {
  const quota = meta?.['quota'];
  if (!isJsonObject(quota)) return undefined;
  const count = quota['token_count'];
  if (!isJsonObject(count)) return undefined;
  const input = count['input_tokens'];
  const output = count['output_tokens'];
  if (!isCount(input) || !isCount(output)) return undefined;
  const usage = quota['model_usage'];
  const models = Array.isArray(usage)
    ? usage.flatMap((entry: unknown) =>
        isJsonObject(entry) && typeof entry.model === 'string' && entry.model !== '' ? [entry.model] : [],
      )
    : [];
  return { inputTokens: input, outputTokens: output, models };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * The human-readable detail of a JSON-RPC error: its `message`, followed by
 * `data` when that says more (a string `data`, or `data.message`, as
 * codex-acp sends `Internal error` with the cause in `data.message`).
 * Detail already contained in the message is not repeated. Never throws.
 */
export function acpErrorText(error: { readonly message: string; readonly data?: unknown }): string {
  const data = error.data;
  const detail =
    typeof data === 'string' ? data : isJsonObject(data) && typeof data.message === 'string' ? data.message : undefined;
  if (detail === undefined || detail === '' || error.message.includes(detail)) return error.message;
  return error.message === '' ? detail : `${error.message}: ${detail}`;
}
