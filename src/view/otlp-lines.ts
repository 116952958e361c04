/**
 * Reads an OTLP JSON lines file (what `--out` writes: one OTLP/HTTP JSON
 * export request per line) as a stream of validated trace requests, each
 * with where its line lies in the file, so a reader can come back for one
 * line later without holding it. Owns line splitting, the file's kind (traces,
 * metrics, not OTLP) and per-line validation; knows nothing of runs.
 *
 * @module subagent-otel/view/otlp-lines
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { parseOtlpJsonRequest, type OtlpJsonTracesRequest } from '../wire/otlp-json.js';

/** Where one line lies: its byte offset and length (without the newline). */
export interface LineRef {
  readonly offset: number;
  readonly length: number;
}

/** One line of a traces file, validated. */
export interface TracesLine extends LineRef {
  readonly request: OtlpJsonTracesRequest;
}

/** Thrown for a file that holds no OTLP JSON traces: the message names the file and says what it holds. */
export class NotOtlpTracesError extends Error {
  override readonly name = 'NotOtlpTracesError';
}

/** What {@link readTracesFile} found besides the requests. */
export interface TracesFileReport {
  /** Lines read as trace requests. */
  lines: number;
  /** Lines that were not (bad JSON, not a traces request): counted and skipped. */
  skipped: number;
  /** The first skipped line's number (1-based) and why, when any. */
  firstProblem?: string;
}

/** Lines of `path` with their offsets; the last line needs no newline. Reads in 1 MiB chunks. */
async function* rawLines(path: string): AsyncGenerator<{ offset: number; bytes: Buffer }> {
  let pending: Buffer[] = [];
  let pendingLength = 0;
  let lineStart = 0;
  let position = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    let from = 0;
    for (let nl = chunk.indexOf(10, from); nl !== -1; nl = chunk.indexOf(10, from)) {
      const part = chunk.subarray(from, nl);
      const bytes = pendingLength === 0 ? part : Buffer.concat([...pending, part], pendingLength + part.length);
      yield { offset: lineStart, bytes };
      pending = [];
      pendingLength = 0;
      from = nl + 1;
      lineStart = position + from;
    }
    if (from < chunk.length) {
      pending.push(chunk.subarray(from));
      pendingLength += chunk.length - from;
    }
    position += chunk.length;
  }
  if (pendingLength > 0) yield { offset: lineStart, bytes: Buffer.concat(pending, pendingLength) };
}

function isBlank(bytes: Buffer): boolean {
  for (const b of bytes) if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  return true;
}

/**
 * Validates one line as an OTLP JSON traces request.
 * @returns the request, or why not in words.
 */
export function parseTracesLine(
  bytes: Buffer,
): { ok: true; request: OtlpJsonTracesRequest } | { ok: false; error: string; metrics?: true } {
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { ok: false, error: 'not JSON' };
  }
  if (typeof json === 'object' && json !== null && 'resourceMetrics' in json)
    return { ok: false, error: 'an OTLP metrics request, not traces', metrics: true };
  if (typeof json !== 'object' || json === null || !('resourceSpans' in json))
    return { ok: false, error: 'not an OTLP JSON traces request (no resourceSpans)' };
  const parsed = parseOtlpJsonRequest('traces', json);
  if (!parsed.ok) return { ok: false, error: parsed.error };
  return { ok: true, request: parsed.value.body as OtlpJsonTracesRequest };
}

/**
 * Reads every line of a traces file, calling `onLine` for each valid one
 * in file order. A file whose first non-blank line is not a traces request
 * is refused whole; later bad lines are counted and skipped.
 *
 * @throws NotOtlpTracesError naming the file when it holds no OTLP JSON
 *   traces (a metrics file, another JSON file, a binary file).
 */
export async function readTracesFile(path: string, onLine: (line: TracesLine) => void): Promise<TracesFileReport> {
  const report: TracesFileReport = { lines: 0, skipped: 0 };
  let lineNumber = 0;
  for await (const { offset, bytes } of rawLines(path)) {
    lineNumber += 1;
    if (isBlank(bytes)) continue;
    const parsed = parseTracesLine(bytes);
    if (!parsed.ok) {
      if (report.lines === 0 && report.skipped === 0) {
        throw new NotOtlpTracesError(
          `${path} is not an OTLP JSON traces file: line ${lineNumber} is ${parsed.error}${hintOf(parsed.metrics === true)}`,
        );
      }
      report.skipped += 1;
      report.firstProblem ??= `line ${lineNumber}: ${parsed.error}`;
      continue;
    }
    report.lines += 1;
    onLine({ offset, length: bytes.length, request: parsed.request });
  }
  if (report.lines === 0 && report.skipped === 0) report.firstProblem = 'the file is empty';
  return report;
}

/**
 * Checks that `path` holds OTLP JSON traces by its first non-blank line, without reading further.
 * @throws NotOtlpTracesError naming the file and what it holds instead.
 */
export async function checkTracesFile(path: string): Promise<void> {
  let lineNumber = 0;
  for await (const { bytes } of rawLines(path)) {
    lineNumber += 1;
    if (isBlank(bytes)) continue;
    const parsed = parseTracesLine(bytes);
    if (parsed.ok) return;
    throw new NotOtlpTracesError(
      `${path} is not an OTLP JSON traces file: line ${lineNumber} is ${parsed.error}${hintOf(parsed.metrics === true)}`,
    );
  }
}

function hintOf(metrics: boolean): string {
  return metrics
    ? ' (give the traces.jsonl beside it, or their directory)'
    : " (view reads the traces.jsonl files the commands write, or agents' transcript folders)";
}

/** Reads the lines at `refs` of `path` again (one open file, in the order given) and validates each; bad lines are left out. */
export async function rereadTracesLines(path: string, refs: readonly LineRef[]): Promise<OtlpJsonTracesRequest[]> {
  const file = await open(path, 'r');
  try {
    const out: OtlpJsonTracesRequest[] = [];
    for (const ref of refs) {
      const buffer = Buffer.alloc(ref.length);
      const { bytesRead } = await file.read(buffer, 0, ref.length, ref.offset);
      const parsed = parseTracesLine(buffer.subarray(0, bytesRead));
      if (parsed.ok) out.push(parsed.request);
    }
    return out;
  } finally {
    await file.close();
  }
}
