/**
 * The five invariants of the corpus check, evaluated on what `replay` wrote
 * (its `--json` summary and its spans) against the check's own reading of
 * the files. Each gives a count of what it checked, the violations (each
 * naming the file and, where there is one, the run) and what it could not
 * check with why. No expected values: every number compared comes from the
 * files themselves.
 *
 * @module subagent-otel/corpus/invariants
 */
import { resolve } from 'node:path';
import { compareReport, outputText } from './compare.js';
import { isUnchecked, type ExpectedRun, type SniffedFile } from './facts.js';
import type { SpanIndex, SpanRun, Tokens } from './spans.js';

/** The names of the invariants, in the order they are printed. */
export const INVARIANTS = [
  'known-files-read',
  'one-run-per-file-nested',
  'output-equals-received',
  'tokens-equal-responses',
  'no-completed-after-error',
] as const;
export type InvariantName = (typeof INVARIANTS)[number];

/** What each invariant says, for the printed table and the JSON. */
export const INVARIANT_TEXT: Record<InvariantName, string> = {
  'known-files-read': 'no file holding a Claude Code, Codex or Gemini CLI record is skipped',
  'one-run-per-file-nested':
    'every file that holds a run gives exactly one; a subagent nested under the call that started it',
  'output-equals-received': "each subagent run's output equals what its parent received, or its span says it differs",
  'tokens-equal-responses': "a run's tokens equal the sum over its distinct responses",
  'no-completed-after-error':
    'no completed run whose file ends in an API error or interrupt record (an interrupt: aborted; a cut response: max-tokens)',
};

export interface Violation {
  readonly invariant: InvariantName;
  readonly file: string;
  readonly run?: string;
  readonly message: string;
}

export interface NotChecked {
  readonly invariant: InvariantName;
  readonly file: string;
  readonly run?: string;
  readonly why: string;
}

export interface InvariantRow {
  readonly name: InvariantName;
  readonly description: string;
  readonly checked: number;
  readonly violations: number;
  readonly notChecked: number;
}

export interface CorpusReport {
  readonly rows: readonly InvariantRow[];
  readonly violations: readonly Violation[];
  readonly notChecked: readonly NotChecked[];
  /** Normalisations that were needed to find an output equal, by run. */
  readonly normalised: readonly { readonly run: string; readonly applied: readonly string[] }[];
  /** Runs whose output differs from what the parent received and whose span says so (match false): no violation. */
  readonly differing: readonly { readonly run: string; readonly detail: string }[];
}

/** The parts of `replay --json`'s summary the check reads. */
export interface ReplayFileSummary {
  readonly path: string;
  readonly format?: string;
  readonly isSkipped: boolean;
  readonly what?: string;
}

function tokensText(t: Tokens): string {
  return `input ${t.input} (cache read ${t.cacheRead}, cache write ${t.cacheWrite}), output ${t.output}`;
}

/** Evaluates every invariant. `replayFiles` is the summary's `files`. */
export function evaluate(
  sniffed: readonly SniffedFile[],
  expected: readonly ExpectedRun[],
  replayFiles: readonly ReplayFileSummary[],
  spans: SpanIndex,
): CorpusReport {
  const findings = new Findings();
  const byPath = new Map(replayFiles.map((f) => [resolve(f.path), f]));
  const copies = findCopies(expected, byPath, findings);
  checkKnownFilesRead(sniffed, byPath, copies, findings);

  // 2-5, per file that should give a run.
  const claimed = new Set<string>();
  for (const e of expected) {
    if (copies.has(e.file)) continue;
    checkExpectedRun(e, spans, claimed, findings);
  }
  return findings.report();
}

/** What the invariants found so far: counts of what was checked, violations, what was not checked, notes. */
class Findings {
  readonly #checked = new Map<InvariantName, number>(INVARIANTS.map((n) => [n, 0]));
  readonly violations: Violation[] = [];
  readonly notChecked: NotChecked[] = [];
  readonly normalised: { run: string; applied: readonly string[] }[] = [];
  readonly differing: { run: string; detail: string }[] = [];

  /** Counts one more thing checked by invariant `n`. */
  bump(n: InvariantName): void {
    this.#checked.set(n, (this.#checked.get(n) ?? 0) + 1);
  }

  /** The report: one row per invariant, in {@link INVARIANTS} order, and the findings. */
  report(): CorpusReport {
    const rows = INVARIANTS.map((name) => ({
      name,
      description: INVARIANT_TEXT[name],
      checked: this.#checked.get(name) ?? 0,
      violations: this.violations.filter((v) => v.invariant === name).length,
      notChecked: this.notChecked.filter((v) => v.invariant === name).length,
    }));
    const { violations, notChecked, normalised, differing } = this;
    return { rows, violations, notChecked, normalised, differing };
  }
}

/**
 * Copies of one run (a Codex thread in sessions/ and archived_sessions/, a
 * Gemini CLI chat and its migrated .jsonl, a file copied to a second
 * folder): replay reads one; the others are not checked (each recorded as
 * such in `findings`). @returns each copy's file -> the file kept.
 */
function findCopies(
  expected: readonly ExpectedRun[],
  byPath: ReadonlyMap<string, ReplayFileSummary>,
  findings: Findings,
): Map<string, string> {
  const copies = new Map<string, string>();
  const primary = new Map<string, ExpectedRun[]>();
  for (const e of expected) primary.set(e.runIds[0] ?? '', [...(primary.get(e.runIds[0] ?? '') ?? []), e]);
  for (const group of primary.values()) {
    if (group.length < 2) continue;
    const read = group.filter((e) => byPath.get(resolve(e.file))?.isSkipped === false);
    const kept = read.length === 1 ? (read[0] as ExpectedRun) : (group[0] as ExpectedRun);
    for (const e of group) {
      if (e === kept) continue;
      copies.set(e.file, kept.file);
      findings.notChecked.push({
        invariant: 'one-run-per-file-nested',
        file: e.file,
        run: e.runIds[0] ?? '',
        why: `a copy of the run of ${kept.file}, which replay reads instead`,
      });
    }
  }
  return copies;
}

/** Invariant 1: every sniffed file of a known format (copies aside) is listed by replay and not skipped. */
function checkKnownFilesRead(
  sniffed: readonly SniffedFile[],
  byPath: ReadonlyMap<string, ReplayFileSummary>,
  copies: ReadonlyMap<string, string>,
  findings: Findings,
): void {
  for (const s of sniffed) {
    if (s.format === undefined || copies.has(s.file)) continue;
    findings.bump('known-files-read');
    const got = byPath.get(resolve(s.file));
    if (got === undefined)
      findings.violations.push({
        invariant: 'known-files-read',
        file: s.file,
        message: `replay did not list it, though ${s.evidence} (${s.format})`,
      });
    else if (got.isSkipped)
      findings.violations.push({
        invariant: 'known-files-read',
        file: s.file,
        message: `skipped by replay, though ${s.evidence} (${s.format})`,
      });
  }
}

/**
 * Invariants 2-5 for one file that should give a run: exactly one run (the
 * first of `e.runIds` with spans not yet `claimed`, which it claims), nested
 * where it should be; then its output, tokens and stop reason. Without a
 * single run the others are recorded as not checked.
 */
function checkExpectedRun(e: ExpectedRun, spans: SpanIndex, claimed: Set<string>, findings: Findings): void {
  findings.bump('one-run-per-file-nested');
  const id = e.runIds.find((r) => (spans.runsById.get(r)?.length ?? 0) > 0 && !claimed.has(r)) ?? e.runIds[0] ?? '';
  claimed.add(id);
  const found = spans.runsById.get(id) ?? [];
  if (found.length !== 1) {
    findings.violations.push({
      invariant: 'one-run-per-file-nested',
      file: e.file,
      run: id,
      message:
        found.length === 0
          ? `no run ${id} (${e.isSubagent ? 'a subagent' : 'a session'})`
          : `${found.length} runs with id ${id}`,
    });
    for (const n of ['output-equals-received', 'tokens-equal-responses', 'no-completed-after-error'] as const) {
      if (n === 'output-equals-received' && !e.isSubagent) continue;
      findings.notChecked.push({ invariant: n, file: e.file, run: id, why: 'the file has no single run to compare' });
    }
    return;
  }
  const run = found[0] as SpanRun;
  if (e.nesting !== undefined) checkNesting(e, run, spans, findings.violations, findings.notChecked);
  checkOutput(e, id, run, findings);
  checkTokens(e, id, run, findings);
  checkEndsIn(e, id, run, findings);
}

/**
 * Invariant 3, when the file says what the parent received: run `id`'s
 * output equals it (normalisations applied are noted), or its span says it
 * differs (noted as differing, no violation).
 */
function checkOutput(e: ExpectedRun, id: string, run: SpanRun, findings: Findings): void {
  if (e.received === undefined) return;
  if (isUnchecked(e.received)) {
    findings.notChecked.push({ invariant: 'output-equals-received', file: e.file, run: id, why: e.received.unchecked });
    return;
  }
  findings.bump('output-equals-received');
  const c = compareReport(outputText(run.output, e.outputMode), e.received.text);
  if (c.applied.length > 0) findings.normalised.push({ run: id, applied: c.applied });
  if (!c.equal && run.reportedMatch === false) {
    // The texts differ and the run says so (subagent.reported_output.match false, with both lengths): telemetry tells the truth.
    findings.differing.push({ run: id, detail: c.detail ?? 'differs' });
  } else if (!c.equal) {
    const reader =
      run.reportedMatch === undefined
        ? 'the reader did not compare'
        : `the reader says match=${String(run.reportedMatch)}`;
    findings.violations.push({
      invariant: 'output-equals-received',
      file: e.file,
      run: id,
      message: `${c.detail ?? 'differs'} (received: ${e.received.source}; ${reader})`,
    });
  }
}

/** Invariant 4: run `id`'s tokens equal the sum over its distinct responses (when the file lets it be checked). */
function checkTokens(e: ExpectedRun, id: string, run: SpanRun, findings: Findings): void {
  if (isUnchecked(e.tokens)) {
    findings.notChecked.push({ invariant: 'tokens-equal-responses', file: e.file, run: id, why: e.tokens.unchecked });
    return;
  }
  findings.bump('tokens-equal-responses');
  const t = run.tokens;
  if (
    t.input !== e.tokens.input ||
    t.output !== e.tokens.output ||
    t.cacheRead !== e.tokens.cacheRead ||
    t.cacheWrite !== e.tokens.cacheWrite
  ) {
    findings.violations.push({
      invariant: 'tokens-equal-responses',
      file: e.file,
      run: id,
      message: `the run says ${tokensText(t)}; its responses sum to ${tokensText(e.tokens)}`,
    });
  }
}

/** Invariant 5, when the file ends in an error or interrupt: run `id` did not complete (and has the stop reason it implies). */
function checkEndsIn(e: ExpectedRun, id: string, run: SpanRun, findings: Findings): void {
  if (e.endsIn === undefined) return;
  findings.bump('no-completed-after-error');
  if (run.stopReason === 'completed' || (e.endsIn.implies !== undefined && run.stopReason !== e.endsIn.implies)) {
    const should = e.endsIn.implies !== undefined ? `; that says ${e.endsIn.implies}` : '';
    findings.violations.push({
      invariant: 'no-completed-after-error',
      file: e.file,
      run: id,
      message: `${run.stopReason} (${run.inferredFrom ?? 'no inference'}), though the file ends in ${e.endsIn.what}${should}`,
    });
  }
}

function checkNesting(
  e: ExpectedRun,
  run: SpanRun,
  spans: SpanIndex,
  violations: Violation[],
  notChecked: NotChecked[],
): void {
  const nesting = e.nesting;
  if (nesting === undefined) return;
  if (nesting.kind === 'unchecked') {
    notChecked.push({
      invariant: 'one-run-per-file-nested',
      file: e.file,
      run: run.runId,
      why: `nesting: ${nesting.why}`,
    });
    return;
  }
  const parentSpan = run.parentSpanId === undefined ? undefined : spans.spanKey(run.traceId, run.parentSpanId);
  const tool = parentSpan === undefined ? undefined : spans.toolsByKey.get(parentSpan);
  const parentRun = parentSpan === undefined ? undefined : spans.runsByKey.get(parentSpan);
  const where =
    tool !== undefined
      ? `under tool call ${tool.callId ?? '?'} (${tool.toolName ?? '?'})`
      : parentRun !== undefined
        ? `directly under run ${parentRun.runId}`
        : run.parentSpanId === undefined
          ? 'without a parent'
          : `under span ${run.parentSpanId}, neither a run nor a tool call`;
  if (nesting.kind === 'call') {
    const toolParent =
      tool?.parentSpanId === undefined
        ? undefined
        : spans.runsByKey.get(spans.spanKey(tool.traceId, tool.parentSpanId));
    if (
      tool === undefined ||
      tool.callId !== nesting.callId ||
      toolParent === undefined ||
      !nesting.parentRunIds.includes(toolParent.runId)
    ) {
      violations.push({
        invariant: 'one-run-per-file-nested',
        file: e.file,
        run: run.runId,
        message: `expected under tool call ${nesting.callId} of ${nesting.parentRunIds[0] ?? '?'}; it is ${where}${toolParent !== undefined && tool?.callId === nesting.callId ? ` of run ${toolParent.runId}` : ''}`,
      });
    }
  } else if (parentRun === undefined || !nesting.parentRunIds.includes(parentRun.runId)) {
    violations.push({
      invariant: 'one-run-per-file-nested',
      file: e.file,
      run: run.runId,
      message: `no call names it, so expected directly under ${nesting.parentRunIds[0] ?? '?'}; it is ${where}`,
    });
  }
}
