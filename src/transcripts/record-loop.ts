/**
 * The one record loop every transcript format reads its JSON-lines files
 * with, and its one policy for what is not a record:
 *
 * - a torn last line is no defect while the file is still being written
 *   (`watch`, the file not yet quiet): the next pass reads it whole;
 * - a file that cannot be read before its first record is skipped as a
 *   whole (`unreadable`, scope `file`); a read error later, oversized lines,
 *   corrupt zstd data, lines that are not UTF-8 or do not parse are problems
 *   at their line (scope `record`), and the records around them stand;
 * - after {@link MAX_PROBLEMS_PER_FILE} problems the rest of the file is not
 *   read (`too-many-problems`), as for session logs;
 * - blank lines are passed over.
 *
 * What a record means, and which record types a format knows, is the
 * format's: it parses each line and consumes each record.
 *
 * @module subagent-otel/transcripts/record-loop
 */
import { fileChunks } from '../wire/file-chunks.js';
import { readLineBatches } from '../wire/input-lines.js';
import { decodeUtf8Line } from '../wire/ndjson.js';
import { errorText } from '../wire/error-text.js';
import { HOOK_LATE_WRITE_MS, HOOK_SETTLE_MS, type TranscriptFile, type TranscriptReadContext } from './format.js';

/** Problems reported per file before the rest of it is skipped (`too-many-problems`). */
export const MAX_PROBLEMS_PER_FILE = 1000;

/** A line that is no record of the format: its problem code and the message to report. */
export interface RecordDefect {
  readonly code: string;
  readonly message: string;
}

/** What the format does with one line and one record. */
export interface RecordLoopHandlers<R, D extends RecordDefect = RecordDefect> {
  /** Parses one non-blank line; a defect is reported at its line (`<message>; skipped`). Must not throw. */
  readonly parse: (text: string) => R | D;
  readonly isDefect: (value: R | D) => value is D;
  /**
   * Consumes a record. `stop` ends reading (the format reported why);
   * `continue` goes on. Must not throw.
   */
  readonly onRecord: (record: R, line: number) => 'continue' | 'stop';
  /**
   * Called for a defective line instead of the default problem; `stop` ends
   * reading (e.g. Codex: a file whose first line is no session_meta is not
   * read at all). Default: a record problem, reading goes on.
   */
  readonly onDefect?: (defect: D, line: number, records: number) => 'report' | 'stop';
}

/** What the loop read of a file. */
export interface RecordLoopResult {
  /** Records handed to `onRecord`. */
  readonly records: number;
  /** Problems reported (lines and the file). */
  readonly problems: number;
  /** True when nothing of the file could be read. */
  readonly isSkipped: boolean;
}

/**
 * Whether the file is quiet: always in a replay; in `watch`, when it has not
 * changed for the idle bound, or when the agent's hook said its run ended and
 * it has not changed for {@link HOOK_SETTLE_MS} since the hook or its last
 * change, whichever is later (and did not grow later than
 * {@link HOOK_LATE_WRITE_MS} after the hook). Pure.
 */
export function isQuietFile(file: TranscriptFile, context: Pick<TranscriptReadContext, 'live'>): boolean {
  const live = context.live;
  if (live === undefined || file.mtimeMs < live.now - live.idleMs) return true;
  const ended = live.endedAt?.(file.path);
  return (
    ended !== undefined &&
    file.mtimeMs <= ended + HOOK_LATE_WRITE_MS &&
    live.now >= Math.max(ended, file.mtimeMs) + HOOK_SETTLE_MS
  );
}

/**
 * Reads `file` (plain or zstd JSON lines) record by record under the policy
 * above. Never rejects: an error thrown while reading becomes an
 * `unreadable` problem and ends reading, keeping what was read.
 */
export async function readRecords<R, D extends RecordDefect = RecordDefect>(
  file: TranscriptFile,
  context: TranscriptReadContext,
  handlers: RecordLoopHandlers<R, D>,
): Promise<RecordLoopResult> {
  let records = 0;
  let problems = 0;
  let isSkipped = false;
  const quiet = isQuietFile(file, context);
  /** Reports a problem; false once the file has had too many. */
  const problem = (line: number, code: string, message: string, scope: 'file' | 'record'): boolean => {
    problems += 1;
    context.onProblem({ file: file.path, line, code, scope, message });
    if (problems < MAX_PROBLEMS_PER_FILE) return true;
    context.onProblem({
      file: file.path,
      line,
      code: 'too-many-problems',
      scope: 'record',
      message: `${MAX_PROBLEMS_PER_FILE} defective lines by line ${line}; the rest of the file is not read`,
    });
    return false;
  };
  try {
    reading: for await (const batch of readLineBatches(
      // Live, a file is read as far as it was listed: what was appended since is read with the
      // files listed beside it on the next pass (a parent's later lines never outrun a child's file).
      fileChunks(
        file.path,
        (bytes) => context.onBytes(file.path, bytes),
        context.live !== undefined ? file.size : undefined,
      ),
    )) {
      for (const item of batch) {
        if (item.kind === 'problem') {
          if (item.code === 'torn-tail' && !quiet) continue;
          const isFileLevel = item.code === 'unreadable' && records === 0;
          if (isFileLevel) isSkipped = true;
          if (!problem(item.line, item.code, item.message, isFileLevel ? 'file' : 'record')) break reading;
          continue;
        }
        const decoded = decodeUtf8Line(item.bytes);
        if (!decoded.ok) {
          if (!problem(item.line, 'invalid-utf8', 'the line is not UTF-8 text; skipped', 'record')) break reading;
          continue;
        }
        if (decoded.text.trim() === '') continue;
        const parsed = handlers.parse(decoded.text);
        if (handlers.isDefect(parsed)) {
          if (handlers.onDefect?.(parsed, item.line, records) === 'stop') {
            problems += 1;
            break reading;
          }
          if (!problem(item.line, parsed.code, `${parsed.message}; skipped`, 'record')) break reading;
          continue;
        }
        records += 1;
        if (handlers.onRecord(parsed, item.line) === 'stop') break reading;
      }
    }
  } catch (error) {
    // readLineBatches never throws; a format's handler that breaks its contract must not lose what was read.
    problem(0, 'unreadable', `reading stopped: ${errorText(error)}`, 'file');
  }
  return { records, problems, isSkipped };
}
