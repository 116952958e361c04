/**
 * Coding agents' transcripts as the steps of a replay: grouping classified
 * files into sessions (format by format), reading one session with its
 * reader's failures contained, and the results of files no reader could
 * read. No pricing (`transcripts.ts` prices runs): a replay worker thread
 * loads this module and the formats, not the price tables.
 *
 * @module subagent-otel/transcripts/transcript-jobs
 */
import type {
  TranscriptFile,
  TranscriptFileResult,
  TranscriptFormat,
  TranscriptReadContext,
  TranscriptSession,
} from './format.js';
import { TRANSCRIPT_FORMATS } from './formats.js';

/** One step of reading transcripts, in order: a session to read, or the files of a format whose grouper failed. */
export type TranscriptJob =
  | { readonly kind: 'session'; readonly format: TranscriptFormat; readonly session: TranscriptSession }
  | {
      readonly kind: 'failed';
      readonly format: TranscriptFormat;
      readonly files: readonly TranscriptFile[];
      readonly error: unknown;
    };

/**
 * Groups `files` (classified transcript files of kind `session` or
 * `sidecar`; any mix of formats) into the sessions to read, format by
 * format in the order of `formats`. A grouper that throws (its contract
 * forbids it) gives one `failed` job with its files. Never throws.
 */
export function transcriptJobs(
  files: readonly TranscriptFile[],
  formats: readonly TranscriptFormat[] = TRANSCRIPT_FORMATS,
): TranscriptJob[] {
  const jobs: TranscriptJob[] = [];
  for (const format of formats) {
    const mine = files.filter((file) => file.info.format === format.name);
    if (mine.length === 0) continue;
    try {
      for (const session of format.group(mine)) jobs.push({ kind: 'session', format, session });
    } catch (error) {
      jobs.push({ kind: 'failed', format, files: mine, error });
    }
  }
  return jobs;
}

/**
 * The results of files no reader could read (`error`: what it threw), each
 * reported as a `transcript-failed` problem of scope `file` to `onProblem`.
 */
export function failedTranscriptFiles(
  formatName: string,
  files: readonly TranscriptFile[],
  error: unknown,
  onProblem: TranscriptReadContext['onProblem'],
): TranscriptFileResult[] {
  return files.map((file) => {
    onProblem({
      file: file.path,
      line: 0,
      code: 'transcript-failed',
      scope: 'file',
      message: `the ${formatName} reader failed: ${String(error)}`,
    });
    return { path: file.path, records: 0, runs: 0, isSkipped: true };
  });
}

/**
 * Reads one session through `format` into `context` (whose listener is
 * already priced, or not: the caller's choice). A reader that throws (its
 * contract forbids it) has its session's files reported as skipped.
 *
 * @returns one result per file, in the order read. Never rejects.
 */
export async function readTranscriptSession(
  format: TranscriptFormat,
  session: TranscriptSession,
  context: TranscriptReadContext,
): Promise<readonly TranscriptFileResult[]> {
  try {
    return await format.read(session, context);
  } catch (error) {
    // The session is reported as skipped, the replay goes on.
    return failedTranscriptFiles(format.name, session.files, error, context.onProblem);
  }
}
