/**
 * The result contract of a delegated run: `SubagentResult` (what the parent
 * receives), the `subagent/end` lifecycle payload, the foreground delegation
 * tool result, and reading a finished child's result from its event log.
 * Output always comes from `assistant-output.ts`; this module only shapes it.
 *
 * @module subagent-otel/output/result
 */
import type { ContentBlock } from '../wire/content.js';
import type { SessionEvent } from '../wire/events.js';
import { AssistantOutputFold } from './assistant-output.js';
import { ConsumedWorkFold } from './consumed-work.js';
import { stopReasonOf, type SubagentStopReason } from './stop-reason.js';

/** Maximum size of a diagnostic, in UTF-8 bytes. */
export const DIAGNOSTIC_MAX_BYTES = 4096;

/** What the parent receives from a delegated run. */
export interface SubagentResult {
  /** Selected by the one rule; `[]` when the child produced nothing. */
  readonly output: readonly ContentBlock[];
  readonly structured?: unknown;
  /** Provider-authored failure detail, at most 4096 UTF-8 bytes; never assistant text. */
  readonly diagnostic?: string;
  readonly stopReason: SubagentStopReason;
}

/** Payload of the `subagent/end` lifecycle event. */
export interface SubagentRunEndInfo {
  readonly runId: string;
  readonly provider: string;
  readonly id: string;
  readonly local: boolean;
  readonly stopReason: SubagentStopReason;
  /** Same rule as `SubagentResult.output`; ABSENT (not `[]`) when the child produced none. */
  readonly lastAssistantMessage?: readonly ContentBlock[];
}

/** A foreground delegation tool result as the parent model sees it. */
export interface ForegroundToolResult {
  readonly isError: boolean;
  /** What the parent model reads: always one text block. */
  readonly content: readonly ContentBlock[];
  /** Completed runs only: the tool's structured value, `SubagentResult.output` (`[]` when the child produced nothing). */
  readonly output?: readonly ContentBlock[];
}

/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes without splitting a
 * character. @returns `text` itself when it fits.
 */
export function capUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) so the cut lands on a character boundary.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8');
}

/**
 * Builds a `SubagentResult` from a selection.
 * @param output the rule's selection (`undefined` becomes `[]`).
 * @param diagnostic capped to `DIAGNOSTIC_MAX_BYTES`; omitted when empty.
 */
export function subagentResult(
  output: readonly ContentBlock[] | undefined,
  stopReason: SubagentStopReason,
  diagnostic?: string,
): SubagentResult {
  const result: SubagentResult = { output: output ?? [], stopReason };
  if (diagnostic === undefined || diagnostic === '') return result;
  return { ...result, diagnostic: capUtf8(diagnostic, DIAGNOSTIC_MAX_BYTES) };
}

/**
 * Builds the `subagent/end` payload.
 * @returns the payload with `lastAssistantMessage` only when `output` is a
 *   non-empty selection; an `undefined` or empty output leaves it absent.
 */
export function subagentRunEndInfo(
  identity: { readonly runId: string; readonly provider: string; readonly id: string; readonly local: boolean },
  stopReason: SubagentStopReason,
  output: readonly ContentBlock[] | undefined,
): SubagentRunEndInfo {
  const info: SubagentRunEndInfo = {
    runId: identity.runId,
    provider: identity.provider,
    id: identity.id,
    local: identity.local,
    stopReason,
  };
  return output !== undefined && output.length > 0 ? { ...info, lastAssistantMessage: output } : info;
}

/**
 * The headline of a non-`completed` run's tool result, as upstream's
 * foreground delegation tool words it (`stopReasonError`).
 */
export function stopReasonHeadline(stopReason: SubagentStopReason): string {
  switch (stopReason) {
    case 'aborted':
      return 'subagent run was cancelled';
    case 'error':
      return 'subagent run failed';
    case 'max-tokens':
      return 'subagent run hit its token limit before finishing';
    case 'refusal':
      return 'subagent declined the task';
    default:
      return `subagent run ended abnormally (${stopReason})`;
  }
}

/** Prefix the tool registry puts before the message of a failed tool call. */
export const TOOL_RESULT_ERROR_PREFIX = 'Error: ';
/** Introduces the diagnostic line of an errored tool result. */
export const TOOL_RESULT_DIAGNOSTIC_LABEL = 'Diagnostic: ';
/** Introduces the partial text of an errored tool result (on its own line). */
export const TOOL_RESULT_PARTIAL_LABEL = 'Partial output before the run ended:';

/** The text blocks of `output`, concatenated with nothing between them. */
function textOf(output: readonly ContentBlock[]): string {
  return output
    .filter((b): b is ContentBlock & { type: 'text'; text: string } => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('');
}

/**
 * Builds the foreground delegation tool result exactly as upstream's tool
 * gives it to the parent model (docs/decisions 0012).
 *
 * @returns for `completed`: `{ isError: false, content: [one text block:
 *   the output's text blocks joined with ''], output }` (the text is `''`
 *   when there is none; `output` is `SubagentResult.output`, `[]` when
 *   none). For any other stop reason: `{ isError: true, content: [one text
 *   block] }` whose text is `Error: <headline>`, then `\nDiagnostic: <d>`
 *   when the result has a diagnostic, then `\nPartial output before the run
 *   ended:\n<text>` when the output has text (text blocks joined with '').
 */
export function foregroundToolResult(result: SubagentResult): ForegroundToolResult {
  if (result.stopReason === 'completed') {
    return { isError: false, content: [{ type: 'text', text: textOf(result.output) }], output: result.output };
  }
  const diagnostic = result.diagnostic === undefined ? '' : `\n${TOOL_RESULT_DIAGNOSTIC_LABEL}${result.diagnostic}`;
  const text = textOf(result.output);
  const partial = text === '' ? '' : `\n${TOOL_RESULT_PARTIAL_LABEL}\n${text}`;
  return {
    isError: true,
    content: [
      {
        type: 'text',
        text: `${TOOL_RESULT_ERROR_PREFIX}${stopReasonHeadline(result.stopReason)}${diagnostic}${partial}`,
      },
    ],
  };
}

function canonicalJson(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, (v as Record<string, unknown>)[k]]),
    );
  });
}

/**
 * Whether a runtime-reported output (`lastAssistantMessage`) equals the
 * rule's selection: both absent, or the same JSON with object key order
 * ignored. A reported `[]` against no selection is a mismatch: the runtime
 * should have left the field out. With `compare` `text`, for parents that
 * receive only a child's text (a coding agent's Task or spawn result), the
 * text of both (text blocks joined, as the foreground tool result joins
 * them) is compared instead, an absent output reading as no text; with
 * `answer`, the report's text against the selection's answer
 * (`answerOf`: its last tool call's `result` argument, else its text). Pure;
 * never throws on JSON values.
 */
export function reportedOutputMatches(
  reported: readonly ContentBlock[] | undefined,
  selected: readonly ContentBlock[] | undefined,
  compare: 'blocks' | 'text' | 'answer' = 'blocks',
): boolean {
  if (compare === 'text') return textOf(reported ?? []) === textOf(selected ?? []);
  if (compare === 'answer') return textOf(reported ?? []) === answerOf(selected ?? []);
  return canonicalJson(reported) === canonicalJson(selected);
}

/**
 * The characters of each side as {@link reportedOutputMatches} compares
 * them (`blocks`: their canonical JSON), for a mismatch to say how far apart
 * they are (a report cut at a length shows as a shorter `reported`). Pure.
 */
export function comparedLengths(
  reported: readonly ContentBlock[] | undefined,
  selected: readonly ContentBlock[] | undefined,
  compare: 'blocks' | 'text' | 'answer' = 'blocks',
): { readonly reported: number; readonly selected: number } {
  if (compare === 'text') return { reported: textOf(reported ?? []).length, selected: textOf(selected ?? []).length };
  if (compare === 'answer')
    return { reported: textOf(reported ?? []).length, selected: answerOf(selected ?? []).length };
  return { reported: (canonicalJson(reported) ?? '').length, selected: (canonicalJson(selected) ?? '').length };
}

/**
 * The answer a selection hands its parent: the `result` argument of its last
 * tool call when it has one (a child that finishes by calling a tool with its
 * answer, as Gemini CLI's subagents call `complete_task`; an object answer as
 * JSON indented by two, as the parent receives it), else its text. Never
 * throws.
 */
function answerOf(selected: readonly ContentBlock[]): string {
  for (let i = selected.length - 1; i >= 0; i -= 1) {
    const block = selected[i] as { type: string; arguments?: unknown };
    if (block.type !== 'tool-call') continue;
    if (typeof block.arguments !== 'string') break;
    try {
      const args = JSON.parse(block.arguments) as { result?: unknown } | null;
      if (typeof args?.result === 'string') return args.result;
      // An object answer (Gemini CLI 0.6x `complete_task {result: {response}}`) reaches the parent as JSON, indented by two.
      if (args?.result !== undefined && args.result !== null) return JSON.stringify(args.result, null, 2);
    } catch {
      // Arguments that are not JSON (a truncated call) carry no answer: the text stands.
    }
    break;
  }
  return textOf(selected);
}

/**
 * The in-process `readResult`: the result of a finished one-shot child read
 * from the event suffix of its run (the events after its boundary).
 *
 * @returns output by the one rule (`[]` when none) and the in-process stop
 *   reason (`inProcessStopReason` of the last turn that accounted for work;
 *   `error` when none did). No diagnostic: upstream's reader sets none.
 *   Never throws.
 */
export function readResult(events: Iterable<SessionEvent>): SubagentResult {
  return readSuffix(events, 'in-process');
}

/**
 * A continuable child's epoch result, as its `subagent/end` and parent
 * delivery report it: output by the one rule, stop reason by the epoch rule
 * (`epochStopReason`). No diagnostic. Never throws.
 */
export function readEpochResult(events: Iterable<SessionEvent>): SubagentResult {
  return readSuffix(events, 'epoch');
}

function readSuffix(events: Iterable<SessionEvent>, rule: 'in-process' | 'epoch'): SubagentResult {
  const fold = new AssistantOutputFold();
  const work = new ConsumedWorkFold();
  for (const event of events) {
    fold.push(event);
    work.push(event);
  }
  return subagentResult(fold.collect(), stopReasonOf(rule, undefined, work.result));
}

/**
 * Splits a child session's events into activation epochs. Events before the
 * last `session/end-seed` are inherited and belong to no epoch; each
 * `turn/start` after it opens a new epoch, which runs to the next one.
 *
 * @returns one event list per epoch, in order; `[]` when no turn started.
 *   Never mutates `events`.
 */
export function splitEpochs(events: readonly SessionEvent[]): SessionEvent[][] {
  let from = 0;
  for (let i = events.length - 1; i >= 0; i -= 1) {
    if (events[i]?.type === 'session/end-seed') {
      from = i + 1;
      break;
    }
  }
  const epochs: SessionEvent[][] = [];
  for (let i = from; i < events.length; i += 1) {
    const event = events[i] as SessionEvent;
    if (event.type === 'turn/start') epochs.push([]);
    epochs[epochs.length - 1]?.push(event);
  }
  return epochs;
}
