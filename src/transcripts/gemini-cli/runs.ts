/**
 * Gemini CLI chat recordings read as runs: one run per recording (the main
 * session, and each subagent's own recording under
 * `chats/<parentSessionId>/`), each subagent nested under the parent's tool
 * call that ran it, with stop reasons from the notices the CLI recorded and
 * from the parent's tool result (docs/TRANSCRIPTS.md, "Gemini CLI").
 *
 * Owns the meaning of the records: rebuilding a conversation as gemini-cli's
 * own loader does (`loadConversationRecord`, chatRecordingService.ts lines
 * 133-400: the last record per message id wins and keeps the id's first
 * place, `$rewindTo` drops that message and everything after it, a `$set`
 * of `messages` replaces the conversation), turning `gemini` messages into
 * model calls with their usage, the parent's delegating tool call into the
 * child's parent, reported output and stop evidence. Pure: fed parsed records
 * (`transcripts/gemini-cli/records`) by the replay module, which owns files.
 * Never throws.
 *
 * Line numbers cited below are of google-gemini/gemini-cli at commit
 * 5411f113cafae26161b4969b0237b8e1e024e2c2 (docs/TRANSCRIPTS.md, "Gemini
 * CLI", says what was read there), unless a comment names another version.
 *
 * @module subagent-otel/transcripts/gemini-cli/runs
 */
import { clampTokenCount, type ContentBlock, type TokenUsage } from '../../wire/content.js';
import type {
  GeminiCliMessage,
  GeminiCliMetadata,
  GeminiCliRecord,
  GeminiCliTokens,
  GeminiCliToolCall,
} from './records.js';
import type { RunRecord, RunStart } from '../../observe/run-record.js';
import { TranscriptRunBuilder, UNKNOWN_STOP, type TranscriptStop } from '../transcript-run.js';
import { isJsonObject } from '../../wire/json-values.js';

/** The format's name: `source`, root `agentName`, run id and trace key prefix. */
export const GEMINI_CLI = 'gemini-cli' as const;

/** `gen_ai.provider.name` of every Gemini CLI run. */
export const GEMINI_CLI_PROVIDER = 'gcp.gemini' as const;

/** `agentName` of a subagent whose delegating tool call was not found (its parent's recording is absent or names no agent). */
export const GEMINI_CLI_UNNAMED_SUBAGENT = 'gemini-cli-subagent' as const;

/** Tool names that delegate to a subagent: `invoke_agent` (agents/agent-tool.ts, `AGENT_TOOL_NAME`) and the older `delegate_to_agent` (seen in 0.22 recordings). */
const DELEGATING_TOOLS: ReadonlySet<string> = new Set(['invoke_agent', 'delegate_to_agent']);

/** Longest diagnostic kept from a notice or a parent's result (the run builder caps in bytes again). */
const DIAGNOSTIC_MAX_CHARS = 2000;

/** A tool call of a `gemini` message, as much of it as runs need. */
export interface GeminiToolCallEntry {
  readonly id: string;
  readonly name: string;
  readonly status?: string;
  /** When the call was recorded complete; `NaN` when unreadable. */
  readonly endTime: number;
  /** The subagent's session id (`ToolCallRecord.agentId`). */
  readonly agentId?: string;
  /** `args.agent_name` of a delegating call. */
  readonly agentName?: string;
  /** What the model received as the result, as text; kept only for delegating calls (the child's reported output). */
  readonly resultText?: string;
  /** A delegating call's task (`args.prompt`, `args.objective` or `args.query`), to tell its child's recording apart. */
  readonly task?: string;
}

/** One message of a rebuilt conversation, reduced to what runs need (never the raw record). */
export interface GeminiEntry {
  readonly id: string;
  /** `user`, `gemini`, `info`, `error`, `warning`, or another type (kept, never read). */
  readonly type: string;
  /** Epoch ms of the record's `timestamp`; `NaN` when absent or unreadable. */
  readonly time: number;
  /** `user`: its text blocks (the prompt). */
  readonly prompt?: readonly ContentBlock[];
  /** `user`: the message holds only function responses (tool results recorded as a user turn), not a prompt. */
  readonly isToolResponse?: boolean;
  /** `info`, `error`, `warning`: the notice's text. */
  readonly notice?: string;
  /** `gemini`: the assistant message's blocks (reasoning, text, tool calls). */
  readonly content?: readonly ContentBlock[];
  /** `gemini`: usage in dsh buckets, when the record carries tokens. */
  readonly usage?: TokenUsage;
  /** `gemini`: the recorded `total` disagrees with the sum of its parts. */
  readonly isTotalOff?: boolean;
  readonly model?: string;
  readonly toolCalls?: readonly GeminiToolCallEntry[];
}

/**
 * One recording's conversation, rebuilt record by record as gemini-cli's
 * loader rebuilds it. Memory: one reduced entry per message id alive.
 */
export class GeminiConversation {
  #metadata: GeminiCliMetadata | undefined;
  #entries = new Map<string, GeminiEntry>();
  #isUsageDropped = false;
  #records = 0;

  /** The metadata record merged with every `$set` (the last value of a field wins), or `undefined` before one is seen. */
  get metadata(): GeminiCliMetadata | undefined {
    return this.#metadata;
  }

  /** Records applied. */
  get records(): number {
    return this.#records;
  }

  /** A rewind or checkpoint dropped a `gemini` message that carried tokens: those calls were made and are not counted. */
  get isUsageDropped(): boolean {
    return this.#isUsageDropped;
  }

  /** The conversation now, in order. */
  entries(): readonly GeminiEntry[] {
    return [...this.#entries.values()];
  }

  /** Applies one record. Never throws. */
  apply(record: GeminiCliRecord): void {
    this.#records += 1;
    switch (record.kind) {
      case 'rewind':
        this.#rewind(record.messageId);
        break;
      case 'message':
        this.#put(record.message);
        break;
      case 'set': {
        if (record.messages !== undefined) this.#checkpoint(record.messages);
        this.#merge(record.fields);
        break;
      }
      case 'metadata':
        this.#metadata = { ...this.#metadata, ...record.metadata };
        for (const message of record.messages ?? []) this.#put(message);
        break;
      default:
        break;
    }
  }

  #put(message: GeminiCliMessage): void {
    // Map.set of a known id keeps its place, as the loader's messagesMap does: the last record wins in the first place.
    this.#entries.set(message.id, entryOf(message));
  }

  /** The loader (lines 189-201) drops the message with this id and every later one; an unknown id drops them all. */
  #rewind(id: string): void {
    const all = [...this.#entries.values()];
    const at = all.findIndex((entry) => entry.id === id);
    for (const entry of at === -1 ? all : all.slice(at)) {
      if (entry.usage !== undefined) this.#isUsageDropped = true;
      this.#entries.delete(entry.id);
    }
  }

  /**
   * A `messages` checkpoint (loader lines 250-294) replaces the conversation.
   * It is built from the model's history (`updateMessagesFromHistory`, lines
   * 953-1038), which never holds the CLI's notices (`info`, `error`,
   * `warning`: useHistoryManager.ts lines 89-114 record them beside it), so
   * the loader would lose every notice at each checkpoint (an abort, an
   * error, a resume). Notices are evidence of how turns ended, not
   * conversation: they are kept here, each after the nearest earlier message
   * the checkpoint keeps.
   */
  #checkpoint(messages: readonly GeminiCliMessage[]): void {
    const keep = new Set(messages.map((message) => message.id));
    const notices = new Map<string | undefined, GeminiEntry[]>();
    let anchor: string | undefined;
    for (const entry of this.#entries.values()) {
      if (keep.has(entry.id)) anchor = entry.id;
      else if (isNotice(entry)) notices.set(anchor, [...(notices.get(anchor) ?? []), entry]);
      else if (entry.usage !== undefined) this.#isUsageDropped = true;
    }
    this.#entries = new Map();
    for (const notice of notices.get(undefined) ?? []) this.#entries.set(notice.id, notice);
    for (const message of messages) {
      this.#put(message);
      for (const notice of notices.get(message.id) ?? []) this.#entries.set(notice.id, notice);
      notices.delete(message.id);
    }
  }

  #merge(fields: Readonly<Record<string, unknown>>): void {
    if (this.#metadata === undefined) return;
    const next: Record<string, unknown> = { ...this.#metadata };
    for (const key of ['sessionId', 'projectHash', 'startTime', 'lastUpdated', 'kind', 'summary'] as const) {
      if (typeof fields[key] === 'string') next[key] = fields[key];
    }
    this.#metadata = next as unknown as GeminiCliMetadata;
  }
}

function isNotice(entry: GeminiEntry): boolean {
  return entry.type === 'info' || entry.type === 'error' || entry.type === 'warning';
}

/** A part of a `PartListUnion`, as much as is read of it. */
interface Part {
  readonly text?: unknown;
  readonly thought?: unknown;
  readonly functionCall?: { readonly id?: unknown; readonly name?: unknown; readonly args?: unknown };
  readonly functionResponse?: { readonly id?: unknown; readonly name?: unknown; readonly response?: unknown };
}

/** A `PartListUnion` (a string, one part, or an array of strings and parts) as parts. */
function partsOf(content: unknown): Part[] {
  const one = (value: unknown): Part[] => {
    if (typeof value === 'string') return [{ text: value }];
    if (isJsonObject(value)) return [value as Part];
    return [];
  };
  return Array.isArray(content) ? content.flatMap(one) : one(content);
}

/** The plain text of parts (no thoughts, no function calls or responses). */
function textOfParts(parts: readonly Part[]): string {
  return parts.map((part) => (typeof part.text === 'string' && part.thought !== true ? part.text : '')).join('');
}

/** A tool result (`ToolCallRecord.result`: function-response parts) as the text the model received. */
export function resultTextOf(result: unknown): string | undefined {
  if (result === undefined || result === null) return undefined;
  const texts: string[] = [];
  for (const part of partsOf(result)) {
    if (typeof part.text === 'string') texts.push(part.text);
    const response = part.functionResponse?.response;
    if (response === undefined || response === null) continue;
    if (typeof response === 'object' && !Array.isArray(response)) {
      const fields = response as Record<string, unknown>;
      if (typeof fields['output'] === 'string') texts.push(fields['output']);
      else if (typeof fields['error'] === 'string') texts.push(fields['error']);
      else texts.push(JSON.stringify(response));
    } else texts.push(typeof response === 'string' ? response : JSON.stringify(response));
  }
  return texts.join('\n');
}

function timeOf(timestamp: string | undefined): number {
  return timestamp === undefined ? Number.NaN : Date.parse(timestamp);
}

/**
 * A `tokens` record in dsh buckets. In Gemini's accounting (checked on 2,643
 * real messages: `total` = `input` + `output` + `thoughts` + `tool` on every
 * one) `input` includes `cached`, `output` excludes `thoughts`, and `tool`
 * (toolUsePromptTokenCount) is prompt input beside `input`. So: uncached
 * input = `input` - `cached` + `tool`, cache read = `cached`, output =
 * `output` + `thoughts`, reasoning = `thoughts`.
 */
export function usageOfTokens(tokens: GeminiCliTokens): { usage: TokenUsage; isTotalOff: boolean } {
  const input = clampTokenCount(tokens.input ?? 0);
  const cached = clampTokenCount(tokens.cached ?? 0);
  const tool = clampTokenCount(tokens.tool ?? 0);
  const output = clampTokenCount(tokens.output ?? 0);
  const thoughts = clampTokenCount(tokens.thoughts ?? 0);
  const total = tokens.total === undefined ? undefined : clampTokenCount(tokens.total);
  const usage: TokenUsage = {
    inputTokens: Math.max(0, input - cached) + tool,
    outputTokens: output + thoughts,
    cacheReadTokens: cached,
    reasoningTokens: thoughts,
  };
  return { usage, isTotalOff: total !== undefined && total !== 0 && total !== input + output + thoughts + tool };
}

function entryOf(message: GeminiCliMessage): GeminiEntry {
  const type = message.type ?? 'unknown';
  const base = { id: message.id, type, time: timeOf(message.timestamp) };
  const parts = partsOf(message.content);
  switch (type) {
    case 'user': {
      const isToolResponse = parts.length > 0 && parts.every((part) => part.functionResponse !== undefined);
      const text = textOfParts(parts);
      return {
        ...base,
        prompt: text === '' ? [] : [{ type: 'text', text }],
        ...(isToolResponse ? { isToolResponse } : {}),
      };
    }
    case 'gemini':
      return { ...base, ...callOf(message, parts) };
    case 'info':
    case 'error':
    case 'warning':
      return { ...base, notice: textOfParts(parts) };
    default:
      return base;
  }
}

/** A `gemini` message's blocks, in the order the model produced them: thoughts, text, tool calls. */
function callOf(message: GeminiCliMessage, parts: readonly Part[]): Partial<GeminiEntry> {
  const content: ContentBlock[] = [];
  for (const thought of message.thoughts ?? []) {
    const text = [thought.subject, thought.description]
      .filter((piece): piece is string => typeof piece === 'string' && piece !== '')
      .join(': ');
    if (text !== '') content.push({ type: 'reasoning', text });
  }
  for (const part of parts) {
    if (part.thought === true && typeof part.text === 'string' && part.text !== '')
      content.push({ type: 'reasoning', text: part.text });
  }
  const text = textOfParts(parts);
  if (text !== '') content.push({ type: 'text', text });
  const toolCalls = (message.toolCalls ?? []).map(toolCallOf);
  const recorded = new Set(toolCalls.map((call) => call.id));
  for (const call of message.toolCalls ?? [])
    content.push({ type: 'tool-call', id: call.id, name: call.name, arguments: JSON.stringify(call.args ?? {}) });
  for (const part of parts) {
    // A function call the message holds without a tool call record (one that never completed).
    const call = part.functionCall;
    if (call === undefined || typeof call.name !== 'string') continue;
    const id = typeof call.id === 'string' ? call.id : '';
    if (id !== '' && recorded.has(id)) continue;
    content.push({ type: 'tool-call', id, name: call.name, arguments: JSON.stringify(call.args ?? {}) });
  }
  const tokens = message.tokens ?? undefined;
  const usage = tokens !== undefined ? usageOfTokens(tokens) : undefined;
  return {
    content,
    ...(usage !== undefined ? { usage: usage.usage, ...(usage.isTotalOff ? { isTotalOff: true } : {}) } : {}),
    ...(message.model !== undefined && message.model !== '' ? { model: message.model } : {}),
    toolCalls,
  };
}

function toolCallOf(call: GeminiCliToolCall): GeminiToolCallEntry {
  const args = call.args !== null && typeof call.args === 'object' ? (call.args as Record<string, unknown>) : {};
  const agentName =
    typeof args['agent_name'] === 'string' && args['agent_name'] !== '' ? args['agent_name'] : undefined;
  const resultText = resultTextOf(call.result);
  const isDelegating =
    call.agentId !== undefined ||
    DELEGATING_TOOLS.has(call.name) ||
    (resultText !== undefined && SUBAGENT_RESULT.test(resultText));
  const task = [args['prompt'], args['objective'], args['query']].find(
    (value): value is string => typeof value === 'string' && value !== '',
  );
  return {
    id: call.id,
    name: call.name,
    ...(call.status !== undefined ? { status: call.status } : {}),
    endTime: timeOf(call.timestamp),
    ...(call.agentId !== undefined && call.agentId !== '' ? { agentId: call.agentId } : {}),
    ...(agentName !== undefined ? { agentName } : {}),
    ...(isDelegating && resultText !== undefined ? { resultText } : {}),
    ...(isDelegating && task !== undefined ? { task } : {}),
  };
}

/** A subagent's result as its parent receives it (agents/local-invocation.ts lines 314-317 and 373; browserAgentInvocation.ts line 332). */
const SUBAGENT_RESULT = /^(?:Subagent '([^'\n]*)'|Browser agent) (finished|failed)\./;

// ------------------------------------------------------------ stop evidence

/** What a notice says about how a turn ended: the run's stop, and the finish of the model call right before it when the notice is about that response. */
interface NoticeEvidence {
  readonly stop: TranscriptStop;
  readonly callFinish?: string;
}

/**
 * The finish-reason notices of `handleFinishedEvent` (useGeminiStream.ts
 * lines 1310-1357, written `⚠️  <text>`): each with the stop it means.
 * Safety-like blocks are `refusal`; other abnormal finishes `error`.
 */
const FINISH_NOTICES: ReadonlyArray<readonly [text: string, reason: string, stop: 'max-tokens' | 'refusal' | 'error']> =
  [
    ['Response truncated due to token limits.', 'MAX_TOKENS', 'max-tokens'],
    ['Response stopped due to safety reasons.', 'SAFETY', 'refusal'],
    ['Response stopped due to recitation policy.', 'RECITATION', 'refusal'],
    ['Response stopped due to unsupported language.', 'LANGUAGE', 'refusal'],
    ['Response stopped due to forbidden terms.', 'BLOCKLIST', 'refusal'],
    ['Response stopped due to prohibited content.', 'PROHIBITED_CONTENT', 'refusal'],
    ['Response stopped due to sensitive personally identifiable information.', 'SPII', 'refusal'],
    ['Response stopped due to image safety violations.', 'IMAGE_SAFETY', 'refusal'],
    ['Response stopped due to prohibited image content.', 'IMAGE_PROHIBITED_CONTENT', 'refusal'],
    ['Response stopped for other reasons.', 'OTHER', 'error'],
    ['Response stopped due to malformed function call.', 'MALFORMED_FUNCTION_CALL', 'error'],
    ['Response stopped due to unexpected tool call.', 'UNEXPECTED_TOOL_CALL', 'error'],
    ['Response stopped because no image was generated.', 'NO_IMAGE', 'error'],
  ];

/** The dsh finish kind of a model call for a stop its notice gives. */
function callFinishOf(stop: string): string {
  switch (stop) {
    case 'max-tokens':
      return 'max-tokens';
    case 'refusal':
      return 'content_filter';
    default:
      return 'error';
  }
}

function capped(text: string): string {
  return text.length > DIAGNOSTIC_MAX_CHARS ? `${text.slice(0, DIAGNOSTIC_MAX_CHARS)}…` : text;
}

/**
 * What an `info` or `error` notice says about how its turn ended, or
 * `undefined` for notices about anything else (updates, slash commands,
 * authentication, IDE, memory). Texts from useGeminiStream.ts and
 * packages/core/src/utils/constants.ts (docs/TRANSCRIPTS.md lists them).
 */
export function noticeEvidence(type: string, text: string): NoticeEvidence | undefined {
  const diagnostic = capped(text.trim());
  if (type === 'info') {
    for (const [message, reason, stop] of FINISH_NOTICES) {
      if (!text.includes(message)) continue;
      const inferredFrom =
        stop === 'max-tokens' ? `${GEMINI_CLI}:info:truncated` : `${GEMINI_CLI}:info:finish:${reason.toLowerCase()}`;
      return {
        stop: { reason: stop, inferredFrom, ...(stop !== 'max-tokens' ? { diagnostic } : {}) },
        callFinish: callFinishOf(stop),
      };
    }
    const trimmed = text.trim();
    // Lines 737, 910, 2084 and 1191: the user cancelled (Esc, Ctrl+C, every tool call declined).
    if (trimmed === 'Request cancelled.' || trimmed === 'User cancelled the request.')
      return { stop: { reason: 'aborted', inferredFrom: `${GEMINI_CLI}:info:cancelled` } };
    // Line 1785: the CLI halted a request it took for a loop.
    if (trimmed.startsWith('A potential loop was detected.'))
      return { stop: { reason: 'aborted', inferredFrom: `${GEMINI_CLI}:info:loop-detected`, diagnostic } };
    // Lines 1460 and 2052: a hook or a tool stopped the agent.
    if (trimmed.startsWith('Agent execution stopped:'))
      return { stop: { reason: 'aborted', inferredFrom: `${GEMINI_CLI}:info:execution-stopped`, diagnostic } };
    // Line 1396: the session's turn limit.
    if (trimmed.startsWith('The session has reached the maximum number of turns'))
      return { stop: { reason: 'error', inferredFrom: `${GEMINI_CLI}:info:max-session-turns`, diagnostic } };
    // Line 1411: the request was not sent, it would overflow the context window.
    if (trimmed.startsWith('Sending this message (') && trimmed.includes('might exceed the context window limit')) {
      return { stop: { reason: 'error', inferredFrom: `${GEMINI_CLI}:info:context-window`, diagnostic } };
    }
    return undefined;
  }
  if (type !== 'error') return undefined;
  // handleInvalidStreamEvent (lines 1240-1293) and InvalidStreamError (geminiChat.ts lines 1507-1565).
  if (text.includes('(MAX_TOKENS)') || text.includes('truncated because it exceeded the token limit')) {
    return { stop: { reason: 'max-tokens', inferredFrom: `${GEMINI_CLI}:error:max-tokens`, diagnostic } };
  }
  if (/\((?:SAFETY|RECITATION|OTHER)\) with empty response text|The model response was blocked due to/.test(text)) {
    return { stop: { reason: 'refusal', inferredFrom: `${GEMINI_CLI}:error:blocked`, diagnostic } };
  }
  // parseAndFormatApiError (core/src/utils/errorParsing.ts lines 35-85): every API failure the turn showed.
  if (text.trimStart().startsWith('[API Error:'))
    return { stop: { reason: 'error', inferredFrom: `${GEMINI_CLI}:error:api`, diagnostic } };
  if (
    /^(?:Model stream ended|Invalid stream received from model|The model returned (?:an empty response|reasoning thoughts but no final response))/.test(
      text.trim(),
    )
  ) {
    return { stop: { reason: 'error', inferredFrom: `${GEMINI_CLI}:error:invalid-stream`, diagnostic } };
  }
  return undefined;
}

/**
 * What the parent's tool call says about how its subagent ended: its status
 * (`cancelled`: the user aborted it, the invocation re-threw the abort;
 * `error`: the tool failed) or, for `success`, the result text the
 * invocation composed (agents/local-invocation.ts lines 314-378: `finished`
 * with the executor's `Termination Reason`, or `failed. Error: ...`).
 * @returns the evidence, or `undefined` for a call that never finished.
 */
export function parentResultEvidence(call: GeminiToolCallEntry): TranscriptStop | undefined {
  const text = call.resultText ?? '';
  const diagnostic = capped(text.trim());
  switch (call.status) {
    case 'cancelled':
      return { reason: 'aborted', inferredFrom: `${GEMINI_CLI}:parent-result:cancelled` };
    case 'error':
      // 0.6x: a subagent the user cancelled leaves its delegating call an error whose response is `{"error": "Aborted"}`.
      if (text.trim() === 'Aborted') return { reason: 'aborted', inferredFrom: `${GEMINI_CLI}:parent-result:aborted` };
      return {
        reason: 'error',
        inferredFrom: `${GEMINI_CLI}:parent-result:error`,
        ...(diagnostic !== '' ? { diagnostic } : {}),
      };
    case 'success':
      break;
    default:
      return undefined;
  }
  const match = SUBAGENT_RESULT.exec(text);
  if (match?.[2] === 'failed') {
    if (text.includes('(MAX_TOKENS)') || text.includes('truncated because it exceeded the token limit')) {
      return { reason: 'max-tokens', inferredFrom: `${GEMINI_CLI}:parent-result:max-tokens`, diagnostic };
    }
    return { reason: 'error', inferredFrom: `${GEMINI_CLI}:parent-result:failed`, diagnostic };
  }
  const termination = /\nTermination Reason: ([A-Z_]+)/.exec(text)?.[1];
  if (match?.[2] === 'finished' && termination !== undefined) {
    const inferredFrom = `${GEMINI_CLI}:parent-result:${termination.toLowerCase()}`;
    // AgentTerminateMode (agents/types.ts lines 24-31): GOAL is the task done; ABORTED a cancellation; the rest limits or failures.
    if (termination === 'GOAL') return { reason: 'completed', inferredFrom };
    if (termination === 'ABORTED') return { reason: 'aborted', inferredFrom };
    return { reason: 'error', inferredFrom, diagnostic };
  }
  return { reason: 'completed', inferredFrom: `${GEMINI_CLI}:parent-result:success` };
}

// ------------------------------------------------------------ runs

/** One recording of a session, rebuilt. */
export interface GeminiRecording {
  readonly path: string;
  /** The file's name without its extension: tells apart recordings that share a session id. */
  readonly name: string;
  readonly sessionId: string;
  /**
   * Known to be a subagent's recording: metadata `kind: "subagent"`, or a
   * JSONL file under `chats/<parentSessionId>/`. A legacy document never
   * says; it is taken for a subagent's when a delegating call encloses its
   * start (gemini-cli 0.2x wrote a subagent's chat as one more
   * `session-*.json` with its parent's session id).
   */
  readonly isSubagent: boolean;
  /** A legacy single-JSON document. */
  readonly isLegacy: boolean;
  /** For a JSONL subagent: the main session's id, the folder it lives in. */
  readonly parentSessionId?: string;
  /** Epoch ms to start at when neither the metadata nor any message says (the file's mtime). */
  readonly fallbackTime: number;
  readonly conversation: GeminiConversation;
}

/** A run built from a recording, ready to report. */
export interface GeminiRun {
  readonly path: string;
  readonly start: RunStart;
  readonly record: RunRecord;
  /** The files record the run's end: a subagent whose parent recorded its tool call finished. A main session never records its end. */
  readonly isEnded: boolean;
}

/** Options of {@link geminiCliRuns}. */
export interface GeminiRunOptions {
  /** `agentName` of every run (`--agent-name`). */
  readonly agentName?: string;
}

/** Where a subagent hangs: its parent recording and the tool call that ran it. */
interface ParentLink {
  readonly parent: GeminiRecording;
  readonly call?: GeminiToolCallEntry;
}

/** A delegating tool call of a recording, with the earliest time it can have started (the record before its message). */
interface DelegatingCall {
  readonly owner: GeminiRecording;
  readonly call: GeminiToolCallEntry;
  readonly from: number;
}

/** The run id of a session id: `gemini-cli:<session id>` (decision 0093). */
export function geminiCliRunId(sessionId: string): string {
  return `${GEMINI_CLI}:${sessionId}`;
}

/**
 * The runs of one session's recordings (main recordings, their subagents,
 * theirs), in the order they are to be reported: every run after the runs
 * nested under it, main recordings last. Never throws.
 *
 * A subagent's parent is the recording whose tool call names it by
 * `agentId`. Without one (recordings before gemini-cli PR #25092, the
 * session-based invocation, which sets none, and 0.2x legacy documents) it
 * is the one delegating call without `agentId` whose message and completion
 * times enclose the recording's start (several: the one whose task the
 * recording's first prompt contains); failing that, a JSONL subagent hangs
 * under the main recording without a tool call, and with no main recording
 * under nothing.
 *
 * Run ids are `gemini-cli:<session id>`; a recording whose session id an
 * earlier one already has (a legacy subagent's, a second chat of the same
 * process) is `gemini-cli:<session id>/<file name>`.
 */
export function geminiCliRuns(
  recordings: readonly GeminiRecording[],
  traceKey: string,
  options: GeminiRunOptions = {},
): GeminiRun[] {
  const calls: DelegatingCall[] = [];
  for (const owner of recordings) {
    // A call may have started as early as the record before its message: a message holding only tool calls is written when they complete (recordToolCalls, lines 791-812).
    let before = Number.NaN;
    for (const entry of owner.conversation.entries()) {
      const from = Number.isFinite(before) && !(entry.time < before) ? before : entry.time;
      for (const call of entry.toolCalls ?? [])
        if (call.resultText !== undefined || call.agentId !== undefined || DELEGATING_TOOLS.has(call.name))
          calls.push({ owner, call, from });
      if (Number.isFinite(entry.time)) before = entry.time;
    }
  }
  const links = new Map<GeminiRecording, ParentLink>();
  const claimed = new Set<GeminiToolCallEntry>();
  for (const { owner, call } of calls) {
    const child =
      call.agentId !== undefined
        ? recordings.find((recording) => recording.isSubagent && recording.sessionId === call.agentId)
        : undefined;
    if (child === undefined || child === owner || links.has(child)) continue;
    links.set(child, { parent: owner, call });
    claimed.add(call);
  }
  const subagents = new Set(recordings.filter((recording) => recording.isSubagent));
  for (const child of [...recordings].sort((a, b) => startOf(a) - startOf(b))) {
    if (links.has(child) || (!child.isSubagent && !child.isLegacy)) continue;
    const found = enclosingCall(child, calls, claimed);
    if (found !== undefined) {
      links.set(child, { parent: found.owner, call: found.call });
      claimed.add(found.call);
      subagents.add(child);
    }
  }
  const mains = recordings.filter((recording) => !subagents.has(recording)).sort((a, b) => startOf(a) - startOf(b));
  for (const child of subagents) {
    if (links.has(child)) continue;
    const start = startOf(child);
    const main = [...mains].reverse().find((candidate) => startOf(candidate) <= start) ?? mains[0];
    if (main !== undefined) links.set(child, { parent: main });
  }
  // A parent chain that loops back (malformed ids) is cut where it closes.
  for (const child of recordings) {
    const seen = new Set<GeminiRecording>([child]);
    for (let link = links.get(child); link !== undefined; link = links.get(link.parent)) {
      if (seen.has(link.parent)) {
        links.delete(child);
        break;
      }
      seen.add(link.parent);
    }
  }

  const runIds = new Map<GeminiRecording, string>();
  const taken = new Set<string>();
  for (const recording of [...mains, ...[...subagents].sort((a, b) => startOf(a) - startOf(b))]) {
    let id = geminiCliRunId(recording.sessionId);
    if (taken.has(id)) id = `${id}/${recording.name}`;
    for (let n = 2; taken.has(id); n += 1) id = `${geminiCliRunId(recording.sessionId)}/${recording.name}#${n}`;
    taken.add(id);
    runIds.set(recording, id);
  }
  const idOf = (recording: GeminiRecording): string => runIds.get(recording) ?? geminiCliRunId(recording.sessionId);

  const childrenOf = new Map<GeminiRecording | undefined, GeminiRecording[]>();
  for (const recording of recordings) {
    const parent = links.get(recording)?.parent;
    childrenOf.set(parent, [...(childrenOf.get(parent) ?? []), recording]);
  }
  const runs: GeminiRun[] = [];
  const visit = (recording: GeminiRecording): void => {
    for (const child of [...(childrenOf.get(recording) ?? [])].sort((a, b) => startOf(a) - startOf(b))) visit(child);
    const link = links.get(recording);
    runs.push(
      buildRun(
        recording,
        idOf(recording),
        subagents.has(recording),
        link !== undefined ? { ...link, parentRunId: idOf(link.parent) } : undefined,
        traceKey,
        options,
      ),
    );
  };
  const roots = [...(childrenOf.get(undefined) ?? [])].sort(
    (a, b) => Number(!subagents.has(a)) - Number(!subagents.has(b)) || startOf(a) - startOf(b),
  );
  for (const root of roots) visit(root);
  return runs;
}

/**
 * The delegating call (without `agentId`, not yet claimed, of another
 * recording) whose message time and completion time enclose `child`'s
 * start; a legacy document also needs its parent's session id and a user
 * message first. Several: the one whose task `child`'s first prompt holds.
 */
function enclosingCall(
  child: GeminiRecording,
  calls: readonly DelegatingCall[],
  claimed: ReadonlySet<GeminiToolCallEntry>,
): DelegatingCall | undefined {
  const start = startOf(child);
  const first = child.conversation.entries()[0];
  if (child.isLegacy && !child.isSubagent && first?.type !== 'user') return undefined;
  const windows = calls.filter(
    ({ owner, call, from }) =>
      owner !== child &&
      call.agentId === undefined &&
      !claimed.has(call) &&
      (child.isSubagent || owner.sessionId === child.sessionId) &&
      from <= start &&
      (start <= call.endTime || !Number.isFinite(call.endTime)),
  );
  if (windows.length <= 1) return windows[0];
  const prompt = textOfBlocks(first?.prompt ?? []);
  const matching = windows.filter(({ call }) => call.task !== undefined && prompt.includes(call.task));
  return matching.length === 1 ? matching[0] : undefined;
}

function textOfBlocks(blocks: readonly ContentBlock[]): string {
  return blocks
    .map((block) =>
      block.type === 'text' && typeof (block as { text?: unknown }).text === 'string'
        ? (block as { text: string }).text
        : '',
    )
    .join('');
}

/** A recording's start: its metadata's `startTime`, else its first timed message, else the fallback. */
function startOf(recording: GeminiRecording): number {
  const declared = timeOf(recording.conversation.metadata?.startTime);
  if (Number.isFinite(declared)) return declared;
  for (const entry of recording.conversation.entries()) if (Number.isFinite(entry.time)) return entry.time;
  return recording.fallbackTime;
}

function buildRun(
  recording: GeminiRecording,
  runId: string,
  isSubagent: boolean,
  link: (ParentLink & { readonly parentRunId: string }) | undefined,
  traceKey: string,
  options: GeminiRunOptions,
): GeminiRun {
  const entries = recording.conversation.entries();
  const startTime = startOf(recording);
  const firstPrompt = entries.find(
    (entry) => entry.type === 'user' && entry.isToolResponse !== true && (entry.prompt?.length ?? 0) > 0,
  )?.prompt;
  const model = entries.find((entry) => entry.model !== undefined)?.model;
  const parentSessionId = link !== undefined ? link.parent.sessionId : recording.parentSessionId;
  const start: RunStart = {
    runId,
    source: GEMINI_CLI,
    agentName: options.agentName ?? (isSubagent ? subagentName(link?.call) : GEMINI_CLI),
    sessionId: recording.sessionId,
    ...(isSubagent && parentSessionId !== undefined ? { parentSessionId } : {}),
    ...(link !== undefined ? { parentRunId: link.parentRunId } : {}),
    ...(link?.call !== undefined ? { parentToolCallId: link.call.id } : {}),
    traceKey,
    startTime,
    provider: GEMINI_CLI_PROVIDER,
    ...(model !== undefined ? { model } : {}),
    ...(firstPrompt !== undefined ? { prompt: firstPrompt } : {}),
  };
  const builder = new TranscriptRunBuilder(start);
  const { stop, finishOf } = turnEvidence(entries);
  let cursor = startTime;
  const started = new Set<string>();
  let isTotalOff = false;
  let isWithoutTokens = false;
  let hasCalls = false;
  for (const entry of entries) {
    const time = Number.isFinite(entry.time) ? entry.time : cursor;
    if (entry.type !== 'gemini') {
      builder.seen(time);
      cursor = Math.max(cursor, time);
      continue;
    }
    hasCalls = true;
    const finishReason = finishOf.get(entry.id);
    builder.call({
      time: Math.min(cursor, time),
      endTime: time,
      content: entry.content ?? [],
      ...(entry.usage !== undefined ? { usage: entry.usage } : {}),
      ...(entry.model !== undefined ? { model: entry.model } : {}),
      ...(finishReason !== undefined ? { finishReason } : {}),
      id: entry.id,
    });
    if (entry.isTotalOff === true) isTotalOff = true;
    if (entry.usage === undefined && (entry.content?.length ?? 0) > 0) isWithoutTokens = true;
    cursor = Math.max(cursor, time);
    for (const call of entry.toolCalls ?? []) {
      if (started.has(call.id)) continue;
      started.add(call.id);
      builder.toolStarted(call.id, call.name, time);
      const end = Number.isFinite(call.endTime) ? Math.max(call.endTime, time) : time;
      if (call.status === 'success') builder.toolFinished(call.id, end, false);
      else if (call.status === 'error') builder.toolFinished(call.id, end, true, 'tool_error');
      else if (call.status === 'cancelled') builder.toolFinished(call.id, end, true, 'cancelled');
      else continue;
      cursor = Math.max(cursor, end);
    }
  }
  // `lastUpdated` is no end of the run where any record is timed: gemini-cli 0.2x rewrote it when a later start wrote the
  // previous chat's summary (sessionSummaryUtils.ts at v0.22.0, lines 83-85), days after the chat in 22 of the 87 real files.
  if (!entries.some((entry) => Number.isFinite(entry.time)))
    builder.seen(timeOf(recording.conversation.metadata?.lastUpdated));
  builder.noteStop(stop);
  const parentCall = link?.call;
  const parentStop = parentCall !== undefined ? parentResultEvidence(parentCall) : undefined;
  if (parentStop !== undefined) builder.noteStop(parentStop);
  if (isTotalOff) builder.noteUsage(`${GEMINI_CLI}:total-mismatch`);
  if (isWithoutTokens) builder.noteUsage(`${GEMINI_CLI}:message-without-tokens`);
  if (recording.conversation.isUsageDropped) builder.noteUsage(`${GEMINI_CLI}:rewound-calls-excluded`);
  if (isSubagent && !hasCalls) builder.noteUsage(`${GEMINI_CLI}:subagent-model-messages-unrecorded`);
  const reported: RunRecord['reported'] | undefined =
    // A call that ended in an error (`{"error": "Aborted"}`) handed the parent no report to compare.
    parentCall !== undefined && parentStop !== undefined && parentCall.status === 'success'
      ? {
          output:
            parentCall.resultText !== undefined
              ? [{ type: 'text', text: answerInResult(parentCall.resultText) }]
              : undefined,
          compare: 'answer',
        }
      : undefined;
  const record = builder.finish(reported !== undefined ? { reported } : {});
  return { path: recording.path, start, record, isEnded: parentStop !== undefined };
}

/**
 * The subagent's answer inside the result text its parent received: what
 * follows `Result:` in `Subagent '<name>' finished.\nTermination Reason:
 * …\nResult:\n…` (agents/local-invocation.ts lines 314-322), else the whole
 * text. Pure.
 */
function answerInResult(text: string): string {
  const at = text.indexOf('\nResult:\n');
  return at === -1 ? text : text.slice(at + '\nResult:\n'.length);
}

/**
 * How the conversation's last turn ended, by the notices after its last
 * model message (a later model message or a new prompt clears what an
 * earlier notice said: the session went on), and which model calls a
 * finish-reason notice right after them marks.
 */
function turnEvidence(entries: readonly GeminiEntry[]): { stop: TranscriptStop; finishOf: Map<string, string> } {
  let stop: TranscriptStop = UNKNOWN_STOP;
  const finishOf = new Map<string, string>();
  let lastCall: GeminiEntry | undefined;
  for (const entry of entries) {
    if (entry.type === 'gemini') {
      lastCall = entry;
      stop = UNKNOWN_STOP;
    } else if (entry.type === 'user' && entry.isToolResponse !== true) {
      lastCall = undefined;
      stop = UNKNOWN_STOP;
    } else if (entry.notice !== undefined) {
      const evidence = noticeEvidence(entry.type, entry.notice);
      if (evidence === undefined) continue;
      stop = evidence.stop;
      if (evidence.callFinish !== undefined && lastCall !== undefined) finishOf.set(lastCall.id, evidence.callFinish);
    }
  }
  return { stop, finishOf };
}

/** A subagent's name: the delegating call's `agent_name`, else the name its result states, else the call's tool name when it is the agent's own tool. */
function subagentName(call: GeminiToolCallEntry | undefined): string {
  if (call === undefined) return GEMINI_CLI_UNNAMED_SUBAGENT;
  if (call.agentName !== undefined) return call.agentName;
  const stated = SUBAGENT_RESULT.exec(call.resultText ?? '')?.[1];
  if (stated !== undefined && stated !== '') return stated;
  return DELEGATING_TOOLS.has(call.name) ? GEMINI_CLI_UNNAMED_SUBAGENT : call.name;
}
