/**
 * The result contract of a delegated run: `SubagentResult` (what the parent
 * receives), the `subagent/end` lifecycle payload, the foreground delegation
 * tool result, and reading a finished child's result from its event log.
 * Output always comes from `assistant-output.ts`; this module only shapes it.
 *
 * @module subagent-otel/output/result
 */
import type { ContentBlock } from '../wire/content.js';
import { isKnownEvent, type SessionEvent, type TurnEndReason } from '../wire/events.js';
import { AssistantOutputFold } from './assistant-output.js';
import { stopReasonFromTurnEnd, type SubagentStopReason } from './stop-reason.js';

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
  readonly content: readonly ContentBlock[];
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
  const info: SubagentRunEndInfo = { runId: identity.runId, provider: identity.provider, id: identity.id, local: identity.local, stopReason };
  return output !== undefined && output.length > 0 ? { ...info, lastAssistantMessage: output } : info;
}

function headline(stopReason: SubagentStopReason): string {
  switch (stopReason) {
    case 'max-tokens':
      return 'Subagent stopped early: it reached its output token limit (stop reason: max-tokens).';
    case 'aborted':
      return 'Subagent stopped early: it was cancelled before it finished (stop reason: aborted).';
    case 'refusal':
      return 'Subagent stopped early: the model refused to continue (stop reason: refusal).';
    case 'error':
      return 'Subagent failed (stop reason: error).';
    default:
      return `Subagent did not complete (stop reason: ${stopReason}).`;
  }
}

/** Label of the diagnostic block of an errored tool result. */
export const TOOL_RESULT_DIAGNOSTIC_LABEL = 'Provider diagnostic:';
/** Label of the partial-output block of an errored tool result. */
export const TOOL_RESULT_PARTIAL_LABEL = 'Partial output from the subagent (it may be incomplete):';
/** Text of a completed run's tool result when the child produced no output. */
export const TOOL_RESULT_NO_OUTPUT = 'The subagent completed without producing output.';

/**
 * Builds the foreground delegation tool result.
 *
 * @returns for `completed`: `{ isError: false, content: output }` (one text
 *   block saying there was no output when `output` is empty). For any other
 *   stop reason: `{ isError: true, content }` whose text blocks are, in order,
 *   the stop-reason headline, the diagnostic under its label when present
 *   (capped at 4096 UTF-8 bytes), and the child's partial text (the text
 *   blocks of `output`, joined) under its label when there is any. Each part
 *   is its own block, so they are never conflated.
 */
export function foregroundToolResult(result: SubagentResult): ForegroundToolResult {
  if (result.stopReason === 'completed') {
    return { isError: false, content: result.output.length > 0 ? result.output : [{ type: 'text', text: TOOL_RESULT_NO_OUTPUT }] };
  }
  const content: ContentBlock[] = [{ type: 'text', text: headline(result.stopReason) }];
  if (result.diagnostic !== undefined && result.diagnostic !== '') {
    content.push({ type: 'text', text: `${TOOL_RESULT_DIAGNOSTIC_LABEL}\n${capUtf8(result.diagnostic, DIAGNOSTIC_MAX_BYTES)}` });
  }
  const partial = result.output
    .filter((b): b is ContentBlock & { type: 'text'; text: string } => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('\n');
  if (partial !== '') content.push({ type: 'text', text: `${TOOL_RESULT_PARTIAL_LABEL}\n${partial}` });
  return { isError: true, content };
}

function canonicalJson(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, (v as Record<string, unknown>)[k]]));
  });
}

/**
 * Whether a runtime-reported output (`lastAssistantMessage`) equals the
 * rule's selection: both absent, or the same JSON with object key order
 * ignored. A reported `[]` against no selection is a mismatch: the runtime
 * should have left the field out. Pure; never throws on JSON values.
 */
export function reportedOutputMatches(
  reported: readonly ContentBlock[] | undefined,
  selected: readonly ContentBlock[] | undefined,
): boolean {
  return canonicalJson(reported) === canonicalJson(selected);
}

/**
 * The in-process `readResult`: the result of a finished child read from the
 * event suffix of its run (the events after its boundary).
 *
 * @returns output by the one rule (`[]` when none) and the stop reason of the
 *   suffix's last `turn/end` (`error` when there is none: an unclean end is
 *   never `completed`). A failed model call's or turn's error message becomes
 *   the diagnostic (a cancelled call's `aborted` failure does not). Never throws.
 */
export function readResult(events: Iterable<SessionEvent>): SubagentResult {
  const fold = new AssistantOutputFold();
  let end: TurnEndReason | undefined;
  let diagnostic: string | undefined;
  for (const event of events) {
    fold.push(event);
    if (!isKnownEvent(event)) continue;
    if (event.type === 'turn/end') {
      end = event.data.reason;
      const err = (end as { error?: { message?: unknown } }).error;
      if (end.kind === 'error' && typeof err?.message === 'string') diagnostic = err.message;
    } else if (event.type === 'assistant/attempt' && event.data.failure !== undefined && event.data.failure.code !== 'aborted') {
      // A cancelled call's failure only restates the cancel; it is no diagnostic.
      diagnostic = event.data.failure.message;
    }
  }
  const stopReason = stopReasonFromTurnEnd(end);
  return subagentResult(fold.collect(), stopReason, stopReason === 'completed' ? undefined : diagnostic);
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
