/**
 * Claude Code's transcript lines (`~/.claude/projects/<slug>/<session>.jsonl`
 * and its subagents' `agent-<id>.jsonl`, docs/TRANSCRIPTS.md) at the wire
 * layer: one JSON object per line, validated at this boundary into a typed
 * record. Owns the shapes only: which records make a run, how usage is
 * deduplicated and what says a run ended are `transcripts/claude-code/runs`'s.
 *
 * The schemas are loose (unknown fields are kept) and lenient where Claude
 * Code's versions differ: a record `type` this module does not know is
 * accepted as an `other` record and ignored by the reader; a usage count that
 * is not a number reads as absent, never as a reason to drop the line. A line
 * is rejected (a `WireError`) only when it is not JSON, not an object, or a
 * known record with a field the reader needs in the wrong shape (an
 * assistant line whose `message.content` is not a list of blocks). Never throws.
 *
 * @module subagent-otel/transcripts/claude-code/records
 */
import * as z from 'zod';
import { unchangedCheckOf, withPlainCheck } from '../../wire/schema-check.js';
import { describeValue, wireError, wireErrorFromIssues, type WireError } from '../../wire/wire-error.js';

/** The model name Claude Code writes on the records it makes up itself (API errors, placeholders): never a model call. */
export const CLAUDE_SYNTHETIC_MODEL = '<synthetic>' as const;

/** One content block of a message, as the Anthropic API shapes it (`text`, `thinking`, `tool_use`, `tool_result`, ...); other types kept verbatim. */
export interface ClaudeBlock {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** A message's `usage` as recorded: counts absent when not numbers. */
export interface ClaudeUsage {
  readonly input_tokens?: number | undefined;
  readonly output_tokens?: number | undefined;
  readonly cache_creation_input_tokens?: number | undefined;
  readonly cache_read_input_tokens?: number | undefined;
  /** The part of `cache_creation_input_tokens` written with a one-hour lifetime. */
  readonly ephemeral_1h_input_tokens?: number | undefined;
  /** `output_tokens_details.thinking_tokens` (newer versions): the reasoning share of `output_tokens`. */
  readonly thinking_tokens?: number | undefined;
  /**
   * Whether the object carries the fields of the API's final `message_delta`
   * usage (`server_tool_use`, `iterations`). In 2.1.x the early lines of a
   * streamed response hold only the `message_start` usage, without them.
   */
  readonly isFinal: boolean;
}

/** Fields every Claude Code line may carry. */
export interface ClaudeEnvelope {
  readonly uuid?: string | undefined;
  /** `null` on the first line of a conversation or a subagent's file; absent on records outside the chain. */
  readonly parentUuid?: string | null | undefined;
  readonly sessionId?: string | undefined;
  /** The subagent's id, on its lines (`a881341`, `acompact-fffbd0`, `aside_question-…`). */
  readonly agentId?: string | undefined;
  readonly isSidechain?: boolean | undefined;
  /** The line's `timestamp`, epoch ms; absent when missing or not a date. */
  readonly time?: number | undefined;
  readonly version?: string | undefined;
  /** The session's working directory (`cwd`). */
  readonly cwd?: string | undefined;
  /** The git branch there (`gitBranch`; `HEAD` when detached). */
  readonly gitBranch?: string | undefined;
}

/** An `assistant` line: one content block (in 2.1.x) of one API response, or a synthetic record. */
export interface ClaudeAssistantRecord extends ClaudeEnvelope {
  readonly kind: 'assistant';
  readonly messageId?: string | undefined;
  readonly requestId?: string | undefined;
  readonly model?: string | undefined;
  readonly content: readonly ClaudeBlock[];
  /** `message.stop_reason` when not null. */
  readonly stopReason?: string | undefined;
  readonly usage?: ClaudeUsage | undefined;
  /** `isApiErrorMessage: true`: Claude Code's record of a failed or cut-off request. */
  readonly isApiError: boolean;
  /** `error` of an API error record (`max_output_tokens`, `rate_limit`, ...), when a string. */
  readonly error?: string | undefined;
  /** The record is Claude Code's own (`message.model` `<synthetic>`), not a model's answer. */
  readonly isSynthetic: boolean;
}

/** A `user` line: a prompt, a meta message, or tool results (with Claude Code's structured `toolUseResult`). */
export interface ClaudeUserRecord extends ClaudeEnvelope {
  readonly kind: 'user';
  /** `message.content`: a string or blocks. */
  readonly content: string | readonly ClaudeBlock[];
  /** The structured tool result beside the `tool_result` block, verbatim (tool-specific; may be a string). */
  readonly toolUseResult?: unknown;
  readonly isMeta: boolean;
  readonly isCompactSummary: boolean;
}

/** A `system` line (`stop_hook_summary`, `turn_duration`, `compact_boundary`, `local_command`, `api_error`, ...). */
export interface ClaudeSystemRecord extends ClaudeEnvelope {
  readonly kind: 'system';
  readonly subtype?: string | undefined;
}

/** A `progress` line (`hook_progress`, `bash_progress`, `agent_progress`, `waiting_for_task`, ...). */
export interface ClaudeProgressRecord extends ClaudeEnvelope {
  readonly kind: 'progress';
  /** `data.type`. */
  readonly progressType?: string | undefined;
  /** `data.agentId` of an `agent_progress` line: the subagent whose message it copies. */
  readonly progressAgentId?: string | undefined;
  /** `parentToolUseID`: the Task/Agent tool_use the progress belongs to. */
  readonly parentToolUseId?: string | undefined;
  /** `data.message` of an `agent_progress` line: a copy of one of the subagent's lines, parsed; absent when none or malformed. */
  readonly copied?: ClaudeAssistantRecord | ClaudeUserRecord | undefined;
}

/** Any other record (`file-history-snapshot`, `summary`, `queue-operation`, `custom-title`, a type not known here). */
export interface ClaudeOtherRecord extends ClaudeEnvelope {
  readonly kind: 'other';
  readonly type: string;
  /**
   * For an `attachment` line of type `queued_command` (2.1.3xx: a prompt
   * queued while the session was busy, such as a background agent's task
   * notification): its `prompt` text.
   */
  readonly queuedPrompt?: string;
  /** For an `attachment` of type `max_turns_reached` (2.1.3xx): the agent's turn limit, when it says it. */
  readonly maxTurnsReached?: { readonly maxTurns?: number | undefined };
}

/** One validated line. */
export type ClaudeCodeRecord =
  ClaudeAssistantRecord | ClaudeUserRecord | ClaudeSystemRecord | ClaudeProgressRecord | ClaudeOtherRecord;

/** A subagent's `agent-<id>.meta.json` sidecar (later 2.1.x), as far as it is read. */
export interface ClaudeAgentMeta {
  readonly agentType?: string | undefined;
  readonly description?: string | undefined;
  /** The parent's Task/Agent `tool_use` id. */
  readonly toolUseId?: string | undefined;
}

/** The structured result of a Task/Agent call (`toolUseResult` on the parent's tool_result line), as far as it is read. */
export interface ClaudeTaskResult {
  /** `completed` (foreground), `async_launched` (background), `teammate_spawned`, ...; absent in old versions. */
  readonly status?: string | undefined;
  readonly agentId?: string | undefined;
  /** What the parent received: the subagent's final text blocks. */
  readonly content?: readonly ClaudeBlock[] | undefined;
  /** The subagent's last request's final usage. */
  readonly usage?: ClaudeUsage | undefined;
  readonly totalDurationMs?: number | undefined;
  /** A `Workflow` launch's run id (`wf_…`): the name of its `subagents/workflows/<runId>/` directory. */
  readonly runId?: string | undefined;
}

/** A count, or absent when the value is not a non-negative number (never a reason to reject the line). */
const count = z.number().optional().catch(undefined);
const optionalString = z.string().optional().catch(undefined);

const UsageSchema = z.looseObject({
  input_tokens: count,
  output_tokens: count,
  cache_creation_input_tokens: count,
  cache_read_input_tokens: count,
  cache_creation: z.looseObject({ ephemeral_1h_input_tokens: count }).nullable().optional().catch(undefined),
  output_tokens_details: z.looseObject({ thinking_tokens: count }).nullable().optional().catch(undefined),
});

/** Whether `value` is a list of content blocks: objects, each with a string `type`. */
const isBlocks = (value: unknown): boolean =>
  Array.isArray(value) &&
  value.every(
    (block) => block !== null && typeof block === 'object' && typeof (block as { type?: unknown }).type === 'string',
  );

/**
 * Content blocks: an array of objects, each with a string `type`. Checked in
 * place, not rebuilt (a user line's tool results are most of a transcript's
 * bytes, and a copy of every block cost as much as parsing the JSON). A
 * custom type, so its check is registered for the compiled checks below.
 */
const BlocksSchema = withPlainCheck(
  z.custom<readonly ClaudeBlock[]>(isBlocks, {
    message: 'expected an array of content blocks, each an object with a string type',
  }),
  isBlocks,
);

const EnvelopeShape = {
  type: z.string(),
  uuid: optionalString,
  parentUuid: z.string().nullable().optional().catch(undefined),
  sessionId: optionalString,
  agentId: optionalString,
  isSidechain: z.boolean().optional().catch(undefined),
  timestamp: z.unknown().optional(),
  version: optionalString,
  cwd: optionalString,
  gitBranch: optionalString,
};
const EnvelopeSchema = z.looseObject(EnvelopeShape);
/** An `attachment` chain line: only a queued command's prompt is read (its other kinds hold no run's calls or output). */
const AttachmentSchema = z.looseObject({
  ...EnvelopeShape,
  attachment: z
    .looseObject({
      type: optionalString,
      prompt: z.unknown().optional(),
      maxTurns: z.number().optional().catch(undefined),
    })
    .optional()
    .catch(undefined),
});

const AssistantSchema = z.looseObject({
  ...EnvelopeShape,
  requestId: optionalString,
  isApiErrorMessage: z.boolean().optional().catch(undefined),
  error: z.unknown().optional(),
  message: z.looseObject({
    id: optionalString,
    model: optionalString,
    content: z.union([BlocksSchema, z.string()]),
    stop_reason: z.string().nullable().optional().catch(undefined),
    usage: z.unknown().optional(),
  }),
});

const UserSchema = z.looseObject({
  ...EnvelopeShape,
  isMeta: z.boolean().optional().catch(undefined),
  isCompactSummary: z.boolean().optional().catch(undefined),
  toolUseResult: z.unknown().optional(),
  message: z.looseObject({ content: z.union([z.string(), BlocksSchema]).optional() }),
});

const SystemSchema = z.looseObject({ ...EnvelopeShape, subtype: optionalString });

const ProgressSchema = z.looseObject({
  ...EnvelopeShape,
  parentToolUseID: optionalString,
  data: z
    .looseObject({ type: optionalString, agentId: optionalString, message: z.unknown().optional() })
    .optional()
    .catch(undefined),
});

const MetaSchema = z.looseObject({ agentType: optionalString, description: optionalString, toolUseId: optionalString });

const TaskResultSchema = z.looseObject({
  status: optionalString,
  agentId: optionalString,
  content: z.union([BlocksSchema, z.string()]).optional().catch(undefined),
  usage: z.unknown().optional(),
  totalDurationMs: count,
  runId: optionalString,
});

/**
 * Hot-path checks, compiled from the schemas above (`unchangedCheckOf`,
 * decision 0126): true when the schema would return the record member for
 * member as it is (every member the schema reads already has the type it
 * takes, so no `.catch` replaces one; `z.unknown` members and content blocks
 * are kept by reference). Such a record is read as it is, without zod's copy
 * of it; anything else goes through the schema, which repairs or rejects it
 * and says why. A field added to a schema is checked here with it. The
 * figures behind this: zod's parse and its copies were about a fifth of the
 * reader's time beyond reading and `JSON.parse` (decision 0130).
 */
const keepsAssistant = unchangedCheckOf(AssistantSchema);
const keepsUser = unchangedCheckOf(UserSchema);
const keepsProgress = unchangedCheckOf(ProgressSchema);
const keepsUsage = unchangedCheckOf(UsageSchema);
const keepsTaskResult = unchangedCheckOf(TaskResultSchema);

/** Line types whose records are chain lines (with `uuid`, `parentUuid` and `sessionId`). */
const CHAIN_TYPES: ReadonlySet<string> = new Set(['user', 'assistant', 'system', 'progress', 'attachment']);

/**
 * Claude Code's records outside the chain, by type, with the member that
 * makes each one Claude Code's. None of them holds a run's calls, usage or
 * output: the reader passes over them (they are not counted as unknown).
 * Shapes: the real 2.1.38/2.1.39 sessions (`file-history-snapshot`,
 * `summary`, `queue-operation`, `custom-title`), 2.1.8x-2.1.9x
 * (`permission-mode`) and the 2.1.318 sessions the suite's real agent
 * writes (`atis-latch`, `api-request-shape`, `api-request-blob`,
 * `api-request`, `tools-used`, `last-prompt`, `cost-state`), and 2.1.337's
 * `api-request-route` (`{type, provider, credential, sessionId}`, e.g.
 * `customEndpoint` and `key`: line 1 of its session files, and again
 * later in them); docs/TRANSCRIPTS.md.
 */
export const CLAUDE_NON_CHAIN_RECORDS: Readonly<Record<string, (r: Record<string, unknown>) => boolean>> = {
  'file-history-snapshot': (r) =>
    typeof r['messageId'] === 'string' && typeof r['snapshot'] === 'object' && r['snapshot'] !== null,
  summary: (r) => typeof r['leafUuid'] === 'string',
  'queue-operation': (r) => typeof r['operation'] === 'string' && typeof r['sessionId'] === 'string',
  'custom-title': (r) => typeof r['sessionId'] === 'string',
  'agent-name': (r) => typeof r['sessionId'] === 'string',
  'permission-mode': (r) => typeof r['permissionMode'] === 'string' && typeof r['sessionId'] === 'string',
  'atis-latch': (r) => typeof r['sessionId'] === 'string',
  'api-request-shape': (r) => typeof r['sessionId'] === 'string',
  'api-request-blob': (r) => typeof r['sessionId'] === 'string',
  'api-request': (r) => typeof r['sessionId'] === 'string',
  'api-request-route': (r) => typeof r['sessionId'] === 'string',
  'tools-used': (r) => typeof r['sessionId'] === 'string',
  'last-prompt': (r) => typeof r['sessionId'] === 'string',
  'cost-state': (r) => typeof r['sessionId'] === 'string',
  // A fork's file starts with a pointer to its parent's conversation instead of a copy (2.1.118+).
  'fork-context-ref': (r) => typeof r['agentId'] === 'string' && typeof r['parentSessionId'] === 'string',
};

/**
 * Whether `value` (one of a transcript's first records, parsed) is a Claude
 * Code record: a chain line ({@link isClaudeChainLine}) or one of
 * {@link CLAUDE_NON_CHAIN_RECORDS} with its identifying member. Other
 * agents' lines (Codex's `{timestamp, type, payload}`, Gemini CLI's records)
 * have none of these shapes. Never throws.
 */
export function isClaudeCodeLine(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const r = value as Record<string, unknown>;
  const type = r['type'];
  if (typeof type !== 'string') return false;
  if (CHAIN_TYPES.has(type)) return isClaudeChainLine(value);
  return Object.hasOwn(CLAUDE_NON_CHAIN_RECORDS, type) && (CLAUDE_NON_CHAIN_RECORDS[type]?.(r) ?? false);
}

/** Whether Claude Code records of `type` are known to this reader (chain lines and {@link CLAUDE_NON_CHAIN_RECORDS}); others are counted as unknown and read past. */
export function isKnownClaudeRecordType(type: string): boolean {
  return CHAIN_TYPES.has(type) || Object.hasOwn(CLAUDE_NON_CHAIN_RECORDS, type);
}

/** Whether `value` is a chain line: `user`, `assistant`, `system`, `progress` or `attachment` with string `uuid` and `sessionId` and a `parentUuid` member. Never throws. */
export function isClaudeChainLine(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const r = value as Record<string, unknown>;
  return (
    typeof r['type'] === 'string' &&
    CHAIN_TYPES.has(r['type']) &&
    typeof r['uuid'] === 'string' &&
    typeof r['sessionId'] === 'string' &&
    'parentUuid' in r
  );
}

/**
 * Parses one line's text.
 * @returns the typed record, or a `WireError`: `not-json`, `not-object`, or
 *   `invalid` (a record without a string `type`; an `assistant` line without
 *   a `message` whose `content` is blocks or text; a `user` line without a
 *   `message` object). Never throws; never retains `text`.
 */
export function parseClaudeCodeLine(text: string): ClaudeCodeRecord | WireError {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    // SyntaxError: not JSON.
    return wireError('not-json', '', 'a JSON object', `text that is not JSON (${text.length} chars)`);
  }
  return parseClaudeCodeValue(value);
}

/** {@link parseClaudeCodeLine} for an already parsed value (a copied record inside an `agent_progress` line). Never throws. */
export function parseClaudeCodeValue(value: unknown): ClaudeCodeRecord | WireError {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return wireError('not-object', '', 'a JSON object', describeValue(value));
  const type = (value as Record<string, unknown>)['type'];
  switch (type) {
    case 'assistant':
      return parseAssistant(value);
    case 'user':
      return parseUser(value);
    case 'system': {
      const parsed = SystemSchema.safeParse(value);
      if (!parsed.success) return wireErrorFromIssues(parsed.error.issues, value);
      return { kind: 'system', ...envelope(parsed.data), subtype: parsed.data.subtype };
    }
    case 'progress':
      return parseProgress(value);
    case 'attachment': {
      const parsed = AttachmentSchema.safeParse(value);
      if (!parsed.success) return wireErrorFromIssues(parsed.error.issues, value);
      const attachment = parsed.data.attachment;
      const queued =
        attachment?.type === 'queued_command' && typeof attachment.prompt === 'string'
          ? { queuedPrompt: attachment.prompt }
          : {};
      const limit =
        attachment?.type === 'max_turns_reached' ? { maxTurnsReached: { maxTurns: attachment.maxTurns } } : {};
      return { kind: 'other', type: 'attachment', ...envelope(parsed.data), ...queued, ...limit };
    }
    default: {
      const parsed = EnvelopeSchema.safeParse(value);
      if (!parsed.success) return wireErrorFromIssues(parsed.error.issues, value);
      return { kind: 'other', type: parsed.data.type, ...envelope(parsed.data) };
    }
  }
}

function parseAssistant(value: unknown): ClaudeAssistantRecord | WireError {
  const parsed = keepsAssistant(value)
    ? { success: true as const, data: value as z.infer<typeof AssistantSchema> }
    : AssistantSchema.safeParse(value);
  if (!parsed.success) return wireErrorFromIssues(parsed.error.issues, value);
  const { message } = parsed.data;
  const content: readonly ClaudeBlock[] =
    typeof message.content === 'string'
      ? message.content === ''
        ? []
        : [{ type: 'text', text: message.content }]
      : message.content;
  const error = parsed.data.error;
  return {
    kind: 'assistant',
    ...envelope(parsed.data),
    messageId: message.id,
    requestId: parsed.data.requestId,
    model: message.model,
    content,
    stopReason: message.stop_reason ?? undefined,
    usage: parseClaudeUsage(message.usage),
    isApiError: parsed.data.isApiErrorMessage === true,
    error: typeof error === 'string' ? error : undefined,
    isSynthetic: message.model === CLAUDE_SYNTHETIC_MODEL,
  };
}

function parseUser(value: unknown): ClaudeUserRecord | WireError {
  const parsed = keepsUser(value)
    ? { success: true as const, data: value as z.infer<typeof UserSchema> }
    : UserSchema.safeParse(value);
  if (!parsed.success) return wireErrorFromIssues(parsed.error.issues, value);
  return {
    kind: 'user',
    ...envelope(parsed.data),
    content: parsed.data.message.content ?? [],
    ...(parsed.data.toolUseResult !== undefined ? { toolUseResult: parsed.data.toolUseResult } : {}),
    isMeta: parsed.data.isMeta === true,
    isCompactSummary: parsed.data.isCompactSummary === true,
  };
}

function parseProgress(value: unknown): ClaudeProgressRecord | WireError {
  const parsed = keepsProgress(value)
    ? { success: true as const, data: value as z.infer<typeof ProgressSchema> }
    : ProgressSchema.safeParse(value);
  if (!parsed.success) return wireErrorFromIssues(parsed.error.issues, value);
  const data = parsed.data.data;
  let copied: ClaudeAssistantRecord | ClaudeUserRecord | undefined;
  if (data?.type === 'agent_progress' && data.message !== undefined && data.message !== null) {
    const inner = parseClaudeCodeValue(data.message);
    if ('kind' in inner && (inner.kind === 'assistant' || inner.kind === 'user')) copied = inner;
  }
  return {
    kind: 'progress',
    ...envelope(parsed.data),
    progressType: data?.type,
    progressAgentId: data?.agentId,
    parentToolUseId: parsed.data.parentToolUseID,
    copied,
  };
}

function envelope(data: z.infer<typeof EnvelopeSchema>): ClaudeEnvelope {
  return {
    uuid: data.uuid,
    parentUuid: data.parentUuid,
    sessionId: data.sessionId,
    agentId: data.agentId,
    isSidechain: data.isSidechain,
    time: timeOf(data.timestamp),
    version: data.version,
    cwd: data.cwd,
    gitBranch: data.gitBranch,
  };
}

/** An ISO timestamp (or epoch ms) as epoch ms; `undefined` when it is neither. */
function timeOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/** @returns the usage object's counts, or `undefined` when `value` is not an object. Never throws. */
export function parseClaudeUsage(value: unknown): ClaudeUsage | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const parsed = keepsUsage(value)
    ? { success: true as const, data: value as z.infer<typeof UsageSchema> }
    : UsageSchema.safeParse(value);
  if (!parsed.success) return undefined;
  const u = parsed.data;
  const raw = value as Record<string, unknown>;
  return {
    input_tokens: u.input_tokens,
    output_tokens: u.output_tokens,
    cache_creation_input_tokens: u.cache_creation_input_tokens,
    cache_read_input_tokens: u.cache_read_input_tokens,
    ephemeral_1h_input_tokens: u.cache_creation?.ephemeral_1h_input_tokens,
    thinking_tokens: u.output_tokens_details?.thinking_tokens,
    isFinal: 'server_tool_use' in raw || 'iterations' in raw,
  };
}

/**
 * Reads a `toolUseResult` as a Task/Agent result.
 * @returns the fields read, or `undefined` when `value` is not an object
 *   (other tools' string results). Never throws.
 */
export function parseClaudeTaskResult(value: unknown): ClaudeTaskResult | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const parsed = keepsTaskResult(value)
    ? { success: true as const, data: value as z.infer<typeof TaskResultSchema> }
    : TaskResultSchema.safeParse(value);
  if (!parsed.success) return undefined;
  const content = parsed.data.content;
  return {
    status: parsed.data.status,
    agentId: parsed.data.agentId,
    content: typeof content === 'string' ? [{ type: 'text', text: content }] : content,
    usage: parseClaudeUsage(parsed.data.usage),
    totalDurationMs: parsed.data.totalDurationMs,
    runId: parsed.data.runId,
  };
}

/**
 * Parses an `agent-<id>.meta.json` sidecar's text.
 * @returns its fields, or a `WireError` (`not-json`, `not-object`). Never throws.
 */
export function parseClaudeAgentMeta(text: string): ClaudeAgentMeta | WireError {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    // SyntaxError: not JSON.
    return wireError('not-json', '', 'a JSON object', `text that is not JSON (${text.length} chars)`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return wireError('not-object', '', 'a JSON object', describeValue(value));
  const parsed = MetaSchema.safeParse(value);
  if (!parsed.success) return wireErrorFromIssues(parsed.error.issues, value);
  return { agentType: parsed.data.agentType, description: parsed.data.description, toolUseId: parsed.data.toolUseId };
}

/** Whether a parse result is a `WireError`. */
export function isClaudeWireError(value: ClaudeCodeRecord | ClaudeAgentMeta | WireError): value is WireError {
  return 'code' in value && 'message' in value && 'expected' in value;
}
