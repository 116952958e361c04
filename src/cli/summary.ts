/**
 * Plain-text renderings the commands print: a table of runs (one row per
 * run), the replay summary by stop reason, one line per replay problem, and
 * the replay progress bar. Pure functions of their arguments: no I/O, no
 * clock, no environment; colour-free so they read the same in a terminal, a
 * CI log or a file. Output itself is never selected here: rows show the
 * `RunRecord`'s selection.
 *
 * @module subagent-otel/cli/summary
 */
import { basename } from 'node:path';
import { conventionTokenCounts } from '../telemetry/token-usage.js';
import type { RunRecord } from '../observe/run-record.js';
import { isOutputMismatch, type ReplayProblem, type ReplayProgress, type ReplaySummary } from '../replay/replay.js';

/** Options of {@link formatRunTable}. */
export interface RunTableOptions {
  /**
   * Leading columns: their headers and each record's cells (e.g. the demo's
   * `via` and `scenario`). Default: one `run` column with the run id.
   */
  readonly leading?: {
    readonly headers: readonly string[];
    readonly cells: (record: RunRecord, index: number) => readonly string[];
  };
  /** Widest output preview, in characters (default 44; at least 2). */
  readonly previewWidth?: number;
}

/** Note appended to a row whose runtime-reported output differs from the selection. */
export const MISMATCH_NOTE = '⚠ runtime reported a different output';

/**
 * Renders runs as an aligned text table: the leading columns, then stop
 * reason, output source, tokens (`in/out` as `gen_ai.usage.input_tokens` and `output_tokens`
 * count them, see `conventionTokenCounts`; `-` when no usage was
 * reported), and a one-line preview of the selected output (text and
 * reasoning verbatim with whitespace collapsed, other blocks as `[type]`,
 * `(no output)` when there is none), flagged with {@link MISMATCH_NOTE}
 * when the runtime reported something else.
 *
 * @returns the header, a rule line and one line per record, joined with
 *   `\n` (no trailing newline). Never throws; never mutates `records`.
 */
export function formatRunTable(records: readonly RunRecord[], options: RunTableOptions = {}): string {
  const width = Math.max(2, options.previewWidth ?? 44);
  const leading = options.leading ?? { headers: ['run'], cells: (record: RunRecord) => [record.runId] };
  const header = [...leading.headers, 'stop reason', 'source', 'tokens in/out', 'output'];
  const body = records.map((record, index) => [
    ...leading.cells(record, index),
    record.stopReason,
    record.outputSource,
    record.usage.reported ? tokenCell(record) : '-',
    `${preview(record, width)}${isOutputMismatch(record) ? `  ${MISMATCH_NOTE}` : ''}`,
  ]);
  return alignRows(header, body, new Set()).join('\n');
}

/** Widths of the streamed run rows' columns (the output column takes the rest of the line). */
const ROW_WIDTHS = { agent: 18, session: 12, stopReason: 12, tokens: 17, cost: 10 } as const;

/**
 * The header and rule of the run rows `replay` and `watch` print as runs are
 * reported ({@link formatRunRow}). @returns two lines joined with `\n`.
 */
export function formatRunRowHeader(): string {
  const cells = ['agent', 'session', 'stop reason', 'tokens in/out', 'cost', 'output'];
  const rule = [ROW_WIDTHS.agent, ROW_WIDTHS.session, ROW_WIDTHS.stopReason, ROW_WIDTHS.tokens, ROW_WIDTHS.cost, 6].map(
    (w) => '-'.repeat(w),
  );
  return [rowLine(cells), rowLine(rule)].join('\n');
}

/**
 * One run as a fixed-width row, printable as soon as the run is reported
 * (no table to align first): the agent name (`↳ ` before a run nested under
 * another, `… ` before the later part of a run reported before), the session id (cut to 12 characters), the stop reason, tokens as
 * `formatRunTable` counts them (`-` without usage), the cost (`$0.1424`;
 * `?` when nothing could be priced, `-` without a cost), and the output
 * preview, flagged when the parent received something else.
 * @returns the line without a newline. Never throws.
 */
export function formatRunRow(record: RunRecord, previewWidth = 44): string {
  // `↳` a delegated run, `…` the later part of a run reported before (watch).
  const agent = `${record.parentRunId !== undefined ? '↳ ' : ''}${record.continuesRunId !== undefined ? '… ' : ''}${record.agentName}`;
  const cost = record.cost === undefined ? '-' : record.cost.pricedCalls === 0 ? '?' : dollars(record.cost.amount);
  return rowLine([
    cut(agent, ROW_WIDTHS.agent),
    cut(record.sessionId ?? '-', ROW_WIDTHS.session),
    cut(record.stopReason, ROW_WIDTHS.stopReason),
    record.usage.reported ? tokenCellGrouped(record) : '-',
    cost,
    `${preview(record, Math.max(2, previewWidth))}${isOutputMismatch(record) ? `  ${MISMATCH_NOTE}` : ''}`,
  ]);
}

function rowLine(cells: readonly string[]): string {
  const widths = [ROW_WIDTHS.agent, ROW_WIDTHS.session, ROW_WIDTHS.stopReason, ROW_WIDTHS.tokens, ROW_WIDTHS.cost];
  return cells
    .map((cell, i) => (i < widths.length ? cell.padEnd(widths[i] ?? 0) : cell))
    .join('  ')
    .trimEnd();
}

function cut(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

function tokenCellGrouped(record: RunRecord): string {
  const tokens = conventionTokenCounts(record.usage);
  return `${grouped(tokens.input)}/${grouped(tokens.output)}`;
}

/** A dollar amount: four decimals below $100, two above. */
function dollars(amount: number): string {
  return amount >= 100 ? `$${amount.toFixed(2)}` : `$${amount.toFixed(4)}`;
}

/**
 * Renders a replay summary: a table with one row per stop reason (runs,
 * share, input and output tokens) and a total row, then the truncation rate,
 * the output mismatches, and how many files and records were skipped.
 *
 * @returns lines joined with `\n` (no trailing newline); with no runs, the
 *   table is replaced by `no runs found`. Never throws.
 */
export function formatStopReasonSummary(summary: ReplaySummary): string {
  const lines: string[] = [];
  if (summary.runs === 0) {
    lines.push('no runs found');
  } else {
    // A cost column only when something was priced (transcripts): the project's own formats name no price.
    const costs = summary.cost !== undefined;
    const header = ['stop reason', 'runs', 'share', 'input tokens', 'output tokens', ...(costs ? ['cost'] : [])];
    const rows = summary.stopReasons.map((s) => [
      s.stopReason,
      grouped(s.runs),
      percent(s.share),
      grouped(s.inputTokens),
      grouped(s.outputTokens),
      ...(costs ? [s.costUsd !== undefined ? dollars(s.costUsd) : '-'] : []),
    ]);
    const total = summary.stopReasons.reduce(
      (sum, s) => ({ input: sum.input + s.inputTokens, output: sum.output + s.outputTokens }),
      { input: 0, output: 0 },
    );
    rows.push([
      'total',
      grouped(summary.runs),
      percent(1),
      grouped(total.input),
      grouped(total.output),
      ...(costs ? [dollars(summary.cost?.amountUsd ?? 0)] : []),
    ]);
    lines.push(...alignRows(header, rows, new Set([1, 2, 3, 4, 5])));
  }
  const filesRead = summary.files.length - summary.skipped.files;
  lines.push(
    '',
    `truncation rate (max-tokens runs / all runs): ${summary.runs === 0 ? '-' : percent(summary.truncationRate)}`,
    `output mismatches (runtime-reported output differs from the selected output): ${grouped(summary.mismatches)}`,
    `files: ${grouped(filesRead)} read, ${grouped(summary.skipped.files)} skipped; records skipped: ${grouped(summary.skipped.records)}`,
  );
  if (summary.cost !== undefined && summary.cost.unpricedModels.length > 0) {
    lines.push(`cost: not priced (the price table does not know them): ${summary.cost.unpricedModels.join(', ')}`);
  }
  const notRuns = new Map<string, number>();
  for (const file of summary.files)
    if (file.what !== undefined && file.runs === 0 && !file.isSkipped)
      notRuns.set(file.what, (notRuns.get(file.what) ?? 0) + 1);
  for (const [what, count] of notRuns) lines.push(`read, no run: ${grouped(count)} × ${what}`);
  const unknown = Object.entries(summary.unknownRecords ?? {});
  if (unknown.length > 0) {
    const shown = unknown.slice(0, 8).map(([key, count]) => `${key} × ${grouped(count)}`);
    lines.push(
      `records of types not known to this version, read past: ${shown.join(', ')}${unknown.length > 8 ? `, and ${unknown.length - 8} more types` : ''}`,
    );
  }
  return lines.join('\n');
}

/**
 * One line for a problem: `file:line: message [code]`, or for the file as a
 * whole (line 0) `file: message [code]`; `, file skipped` joins the code
 * when nothing of the file was replayed. No trailing newline.
 */
export function formatProblem(problem: ReplayProblem): string {
  const where = problem.line > 0 ? `${problem.file}:${problem.line}` : problem.file;
  return `${where}: ${problem.message} [${problem.code}${problem.scope === 'file' ? ', file skipped' : ''}]`;
}

/**
 * The progress bar line for a terminal `columns` wide: a bar of bytes read,
 * the percentage, files done of all, bytes (KiB/MiB/GiB), and the current
 * file's name, cut to fit. @returns the line without `\r` or newline, at
 * most `columns - 1` characters (at least 20).
 */
export function formatProgressBar(progress: ReplayProgress, columns: number): string {
  const width = Math.max(20, columns) - 1;
  const ratio =
    progress.bytesTotal > 0
      ? Math.min(1, progress.bytesDone / progress.bytesTotal)
      : progress.filesTotal > 0
        ? progress.filesDone / progress.filesTotal
        : 0;
  const slots = 20;
  const filled = Math.round(ratio * slots);
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(slots - filled)}]`;
  const counts = `${String(Math.floor(ratio * 100)).padStart(3)}%  ${progress.filesDone}/${progress.filesTotal} files  ${bytes(progress.bytesDone)}/${bytes(progress.bytesTotal)}`;
  const line = progress.file !== undefined ? `${bar} ${counts}  ${basename(progress.file)}` : `${bar} ${counts}`;
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}

function tokenCell(record: RunRecord): string {
  const tokens = conventionTokenCounts(record.usage);
  return `${tokens.input}/${tokens.output}`;
}

function preview(record: RunRecord, width: number): string {
  if (record.output === undefined) return '(no output)';
  const text = record.output
    .map((block) => {
      const t = (block as { text?: unknown }).text;
      return (block.type === 'text' || block.type === 'reasoning') && typeof t === 'string' ? t : `[${block.type}]`;
    })
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

/** Pads cells to their column's width (right-aligned for `rightAligned` columns); the last column is not padded. */
function alignRows(
  header: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
  rightAligned: ReadonlySet<number>,
): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => {
        const w = widths[i] ?? 0;
        if (rightAligned.has(i)) return cell.padStart(w);
        return i === cells.length - 1 ? cell : cell.padEnd(w);
      })
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}

function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 * 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  return `${(n / (1024 * 1024 * 1024)).toFixed(2)} GiB`;
}
