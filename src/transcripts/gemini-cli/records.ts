/**
 * Gemini CLI chat recordings at the wire layer: the records of its JSONL
 * files (`~/.gemini/tmp/<project>/chats/session-*.jsonl` and subagents'
 * `chats/<parentSessionId>/<sessionId>.jsonl`) and its legacy single-JSON
 * documents (`session-*.json`), validated into typed records.
 *
 * Shapes as google-gemini/gemini-cli writes and reads them
 * (`packages/core/src/services/chatRecordingTypes.ts`, and the loader
 * `loadConversationRecord` in `chatRecordingService.ts` lines 133-400, whose
 * order of tests is kept here): a record with a string `$rewindTo` is a
 * rewind; one with a string `id` is a message; one with an object `$set` is
 * a metadata update (possibly a `messages` checkpoint); one with string
 * `sessionId` and `projectHash` is the metadata record (line 1, or a whole
 * legacy document written on one line, with its `messages`). Anything else is
 * `unknown` and ignored, as the loader ignores it.
 *
 * Owns validation only: schemas are loose (unknown fields kept, unknown
 * message types and tool statuses accepted). What the records mean (last
 * record per id wins, rewinds, checkpoints, runs) is
 * `transcripts/gemini-cli/runs`'s. Never throws.
 *
 * Line numbers cited below are of google-gemini/gemini-cli at commit
 * 5411f113cafae26161b4969b0237b8e1e024e2c2 (docs/TRANSCRIPTS.md, "Gemini
 * CLI", says what was read there), unless a comment names another version.
 *
 * @module subagent-otel/transcripts/gemini-cli/records
 */
import * as z from 'zod';
import { describeValue, wireError, wireErrorFromIssues, type WireError } from '../../wire/wire-error.js';
import { isJsonObject } from '../../wire/json-values.js';

/** A token count as written: any JSON number (clamped by the reader). */
const count = z.custom<number>((value) => typeof value === 'number' && !Number.isNaN(value), {
  message: 'expected a number',
});

/**
 * `TokensSummary` (chatRecordingTypes.ts lines 19-26), from the response's
 * `usageMetadata` (`recordMessageTokens`, chatRecordingService.ts lines
 * 744-757): `input` promptTokenCount (cached included), `output`
 * candidatesTokenCount (thoughts excluded), `cached`
 * cachedContentTokenCount, `thoughts` thoughtsTokenCount, `tool`
 * toolUsePromptTokenCount, `total` totalTokenCount.
 */
export interface GeminiCliTokens {
  readonly input?: number;
  readonly output?: number;
  readonly cached?: number;
  readonly thoughts?: number;
  readonly tool?: number;
  readonly total?: number;
  readonly [field: string]: unknown;
}

const TokensSchema: z.ZodType<GeminiCliTokens> = z.looseObject({
  input: count.optional(),
  output: count.optional(),
  cached: count.optional(),
  thoughts: count.optional(),
  tool: count.optional(),
  total: count.optional(),
});

/** A thought summary (`ThoughtSummary & { timestamp }`): the model's reasoning as the API summarises it. */
export interface GeminiCliThought {
  readonly subject?: string;
  readonly description?: string;
  readonly timestamp?: string;
  readonly [field: string]: unknown;
}

const ThoughtSchema: z.ZodType<GeminiCliThought> = z.looseObject({
  subject: z.string().optional(),
  description: z.string().optional(),
  timestamp: z.string().optional(),
});

/**
 * `ToolCallRecord` (chatRecordingTypes.ts lines 54-67). `timestamp` is when
 * the call was recorded complete (`recordCompletedToolCalls`, geminiChat.ts
 * line 1638); `agentId` names the subagent a delegating call ran (its
 * recording's session id; written since gemini-cli PR #25092); `result` is
 * what the model received (function-response parts).
 */
export interface GeminiCliToolCall {
  readonly id: string;
  readonly name: string;
  readonly args?: unknown;
  readonly result?: unknown;
  /** `success`, `error`, `cancelled`, or a state the call never left (`scheduled`, `executing`, `awaiting_approval`, ...). */
  readonly status?: string;
  readonly timestamp?: string;
  readonly agentId?: string;
  readonly [field: string]: unknown;
}

const ToolCallSchema: z.ZodType<GeminiCliToolCall> = z.looseObject({
  id: z.string(),
  name: z.string(),
  args: z.unknown().optional(),
  result: z.unknown().optional(),
  status: z.string().optional(),
  timestamp: z.string().optional(),
  agentId: z.string().optional(),
});

/**
 * A `MessageRecord` (chatRecordingTypes.ts lines 44-87). `type` is `user`,
 * `gemini`, `info`, `error` or `warning` (others kept); `content` is a
 * `PartListUnion` (a string, a part, or an array of parts), kept unvalidated.
 */
export interface GeminiCliMessage {
  readonly id: string;
  readonly timestamp?: string;
  readonly type?: string;
  readonly content?: unknown;
  readonly toolCalls?: readonly GeminiCliToolCall[];
  readonly thoughts?: readonly GeminiCliThought[];
  readonly tokens?: GeminiCliTokens | null;
  readonly model?: string;
}

const MessageShape = z.looseObject({
  id: z.string(),
  timestamp: z.string().optional(),
  type: z.string().optional(),
  content: z.unknown().optional(),
  toolCalls: z.array(z.unknown()).optional(),
  thoughts: z.array(z.unknown()).optional(),
  tokens: z.unknown().optional(),
  model: z.unknown().optional(),
});

/** The metadata record (`PartialMetadataRecord`, chatRecordingTypes.ts lines 131-140), or a legacy document's top level. */
export interface GeminiCliMetadata {
  readonly sessionId: string;
  readonly projectHash: string;
  readonly startTime?: string;
  readonly lastUpdated?: string;
  /** `main` or `subagent`; absent in legacy documents and in recordings before subagents had their own. */
  readonly kind?: string;
  readonly summary?: string;
}

const MetadataShape = z.looseObject({
  sessionId: z.string(),
  projectHash: z.string(),
  startTime: z.string().optional(),
  lastUpdated: z.string().optional(),
  kind: z.string().optional(),
  summary: z.string().optional(),
  messages: z.unknown().optional(),
});

/** One record of a recording. */
export type GeminiCliRecord =
  /** The metadata line; `messages` when it carries a whole conversation (a legacy record on one line). */
  | { readonly kind: 'metadata'; readonly metadata: GeminiCliMetadata; readonly messages?: readonly GeminiCliMessage[] }
  | { readonly kind: 'message'; readonly message: GeminiCliMessage }
  /** `{"$set": {...}}`: metadata fields; `messages` when it is a checkpoint that replaces the whole conversation. */
  | {
      readonly kind: 'set';
      readonly fields: Readonly<Record<string, unknown>>;
      readonly messages?: readonly GeminiCliMessage[];
    }
  /** `{"$rewindTo": id}`: the conversation from that message on is dropped. */
  | { readonly kind: 'rewind'; readonly messageId: string }
  /** A JSON object of no known shape: ignored. */
  | { readonly kind: 'unknown' };

/** A validated record with the defects found inside it (tool calls, thoughts or checkpoint messages skipped). */
export interface GeminiCliParsed {
  readonly record: GeminiCliRecord;
  /** Parts of the record that did not validate and were left out; the rest stands. */
  readonly issues: readonly WireError[];
}

/** What {@link parseGeminiCliLine} and {@link parseGeminiCliValue} return. */
export type GeminiCliParseResult =
  { readonly ok: true; readonly value: GeminiCliParsed } | { readonly ok: false; readonly error: WireError };

/**
 * Parses one line of a JSONL recording.
 * @returns the record, or `not-json` / `not-object` / `invalid` (a message
 *   or metadata record of the wrong shape). Never throws.
 */
export function parseGeminiCliLine(text: string): GeminiCliParseResult {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    // SyntaxError: the line is not JSON (a torn write is reported by the line reader before this).
    return { ok: false, error: wireError('not-json', '', 'a JSON object', `text of ${text.length} chars`) };
  }
  return parseGeminiCliValue(value);
}

/**
 * Validates one record already parsed from JSON, by the loader's order of
 * tests (rewind, message, `$set`, metadata).
 * @returns the record, or why it is rejected. Never throws.
 */
export function parseGeminiCliValue(value: unknown): GeminiCliParseResult {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, error: wireError('not-object', '', 'a JSON object', describeValue(value)) };
  }
  const object = value as Record<string, unknown>;
  if (typeof object['$rewindTo'] === 'string') return ok({ kind: 'rewind', messageId: object['$rewindTo'] });
  if (typeof object['id'] === 'string') {
    const issues: WireError[] = [];
    const message = parseMessage(object, '', issues);
    if (message === undefined)
      return { ok: false, error: issues[0] ?? wireError('invalid', '', 'a message record', 'object') };
    return ok({ kind: 'message', message }, issues);
  }
  const set = object['$set'];
  if (isJsonObject(set)) {
    const fields = set;
    const issues: WireError[] = [];
    const checkpoint = fields['messages'];
    if (Array.isArray(checkpoint))
      return ok({ kind: 'set', fields, messages: parseMessages(checkpoint, '$set.messages', issues) }, issues);
    return ok({ kind: 'set', fields });
  }
  if (typeof object['sessionId'] === 'string' && typeof object['projectHash'] === 'string') {
    const parsed = MetadataShape.safeParse(object);
    if (!parsed.success) return { ok: false, error: wireErrorFromIssues(parsed.error.issues, object) };
    const { messages, ...rest } = parsed.data;
    const metadata = metadataOf(rest);
    if (!Array.isArray(messages)) return ok({ kind: 'metadata', metadata });
    const issues: WireError[] = [];
    return ok({ kind: 'metadata', metadata, messages: parseMessages(messages, 'messages', issues) }, issues);
  }
  return ok({ kind: 'unknown' });
}

/**
 * Whether a parsed value is a recording's metadata record: an object with
 * string `sessionId` and `projectHash` and no `id` (a message) or `$set`.
 * Used to tell a recording by its first line. Never throws.
 */
export function isGeminiCliMetadata(value: unknown): value is GeminiCliMetadata {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const object = value as Record<string, unknown>;
  return (
    typeof object['sessionId'] === 'string' &&
    typeof object['projectHash'] === 'string' &&
    typeof object['id'] !== 'string' &&
    !('$set' in object) &&
    !('$rewindTo' in object)
  );
}

/**
 * The start of a legacy pretty-printed chat document (`JSON.stringify(record,
 * null, 2)`: `{`, then `"sessionId"` and `"projectHash"` as its first keys),
 * matched on the file's first bytes: for a document longer than the sniff
 * window, which cannot be parsed from them (a whole one is parsed instead).
 * @returns its session id, or `undefined` when `prefix` does not start so.
 */
export function legacyDocumentSessionId(prefix: string): string | undefined {
  const match = /^\uFEFF?\s*\{\s*"sessionId"\s*:\s*"((?:[^"\\]|\\.){1,512})"\s*,\s*"projectHash"\s*:\s*"/.exec(prefix);
  if (match === null) return undefined;
  try {
    return JSON.parse(`"${match[1] ?? ''}"`) as string;
  } catch {
    // An escape JSON does not accept: not a document gemini-cli wrote.
    return undefined;
  }
}

function ok(record: GeminiCliRecord, issues: readonly WireError[] = []): GeminiCliParseResult {
  return { ok: true, value: { record, issues } };
}

function metadataOf(data: Record<string, unknown>): GeminiCliMetadata {
  const text = (key: string): string | undefined => (typeof data[key] === 'string' ? data[key] : undefined);
  const startTime = text('startTime');
  const lastUpdated = text('lastUpdated');
  const kind = text('kind');
  const summary = text('summary');
  return {
    sessionId: String(data['sessionId']),
    projectHash: String(data['projectHash']),
    ...(startTime !== undefined ? { startTime } : {}),
    ...(lastUpdated !== undefined ? { lastUpdated } : {}),
    ...(kind !== undefined ? { kind } : {}),
    ...(summary !== undefined ? { summary } : {}),
  };
}

/** The valid messages of an array (a document's or a checkpoint's); each rejected one is an issue at its index. */
function parseMessages(values: readonly unknown[], path: string, issues: WireError[]): GeminiCliMessage[] {
  const messages: GeminiCliMessage[] = [];
  for (const [index, value] of values.entries()) {
    if (value === null || typeof value !== 'object' || typeof (value as Record<string, unknown>)['id'] !== 'string') {
      // The loader keeps only objects with a string id (isMessageRecord); anything else is skipped there too.
      issues.push(wireError('invalid', `${path}.${index}`, 'a message record with a string id', describeValue(value)));
      continue;
    }
    const message = parseMessage(value as Record<string, unknown>, `${path}.${index}`, issues);
    if (message !== undefined) messages.push(message);
  }
  return messages;
}

/** One message; invalid tool calls and thoughts are left out (each an issue), an invalid message is `undefined` (its issue pushed). */
function parseMessage(
  object: Record<string, unknown>,
  path: string,
  issues: WireError[],
): GeminiCliMessage | undefined {
  const parsed = MessageShape.safeParse(object);
  if (!parsed.success) {
    issues.push(wireErrorFromIssues(parsed.error.issues, object, path));
    return undefined;
  }
  const data = parsed.data;
  const prefix = path === '' ? '' : `${path}.`;
  const toolCalls: GeminiCliToolCall[] = [];
  for (const [index, call] of (data.toolCalls ?? []).entries()) {
    const one = ToolCallSchema.safeParse(call);
    if (one.success) toolCalls.push(one.data);
    else issues.push(wireErrorFromIssues(one.error.issues, call, `${prefix}toolCalls.${index}`));
  }
  const thoughts: GeminiCliThought[] = [];
  for (const [index, thought] of (data.thoughts ?? []).entries()) {
    const one = ThoughtSchema.safeParse(thought);
    if (one.success) thoughts.push(one.data);
    else issues.push(wireErrorFromIssues(one.error.issues, thought, `${prefix}thoughts.${index}`));
  }
  let tokens: GeminiCliTokens | null | undefined;
  if (data.tokens !== undefined) {
    const one = TokensSchema.nullable().safeParse(data.tokens);
    if (one.success) tokens = one.data;
    else issues.push(wireErrorFromIssues(one.error.issues, data.tokens, `${prefix}tokens`));
  }
  if (data.model !== undefined && typeof data.model !== 'string')
    issues.push(wireError('invalid', `${prefix}model`, 'string', describeValue(data.model)));
  const model = typeof data.model === 'string' ? data.model : undefined;
  return {
    id: data.id,
    ...(data.timestamp !== undefined ? { timestamp: data.timestamp } : {}),
    ...(data.type !== undefined ? { type: data.type } : {}),
    ...('content' in data ? { content: data.content } : {}),
    ...(data.toolCalls !== undefined ? { toolCalls } : {}),
    ...(data.thoughts !== undefined ? { thoughts } : {}),
    ...(tokens !== undefined ? { tokens } : {}),
    ...(model !== undefined ? { model } : {}),
  };
}
