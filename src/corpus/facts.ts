/**
 * What the corpus check's own reading of the files says each one should
 * give: the vocabulary shared by the per-format readers (`claude-code.ts`,
 * `codex.ts`, `gemini-cli.ts`) and the invariants (`invariants.ts`).
 *
 * @module subagent-otel/corpus/facts
 */
import type { Tokens } from './spans.js';

/** The formats the check knows. */
export type Format = 'claude-code' | 'codex' | 'gemini-cli';

/** Something the check could not decide from the files, with why. */
export interface Unchecked {
  readonly unchecked: string;
}

/** Where a subagent's run must hang. */
export type Nesting =
  /** Under the `execute_tool` span of this call, in its parent's trace. */
  | { readonly kind: 'call'; readonly callId: string; readonly parentRunIds: readonly string[] }
  /** Directly under the parent's run (the parent's file names no call for it). */
  | { readonly kind: 'run'; readonly parentRunIds: readonly string[] }
  | { readonly kind: 'unchecked'; readonly why: string };

/** What a subagent's parent received as its report. */
export type Received = { readonly text: string; readonly source: string } | Unchecked;

/** One file that should give a run, as the check read it. */
export interface ExpectedRun {
  readonly file: string;
  readonly format: Format;
  /** The run id the file's run must carry (`gen_ai.agent.id`); alternatives tried in order. */
  readonly runIds: readonly string[];
  readonly isSubagent: boolean;
  /** Subagents only. */
  readonly nesting?: Nesting;
  /** Subagents only. */
  readonly received?: Received;
  /** How the run's output is compared: its text, or (Gemini CLI) the answer its `complete_task` call hands over. */
  readonly outputMode: 'text' | 'gemini-answer';
  /** The run's tokens as the sum over its distinct responses, in the span's buckets. */
  readonly tokens: Tokens | Unchecked;
  /** When the file's last record is an API error or an interrupt: that record, described. */
  readonly endsIn?: EndRecord;
}

/**
 * The record a file ends in, when it says the run did not complete: what it
 * is, and the stop reason it implies when it implies one (an interrupt:
 * `aborted`; a response cut at its output limit: `max-tokens`).
 */
export interface EndRecord {
  readonly what: string;
  readonly implies?: 'aborted' | 'max-tokens';
}

/** A file the check read, with what identified its format. */
export interface SniffedFile {
  readonly file: string;
  readonly format: Format | undefined;
  /** What identified it (`line 3: a Claude Code "permission-mode" record`), or what was seen. */
  readonly evidence: string;
}

/** Adds token counts. */
export function addTokens(a: Tokens, b: Tokens): Tokens {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
  };
}

export const NO_TOKENS: Tokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

/** True for an {@link Unchecked}. */
export function isUnchecked(v: unknown): v is Unchecked {
  return typeof v === 'object' && v !== null && 'unchecked' in v;
}
