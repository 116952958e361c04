/**
 * Coding agents' transcripts in a replay: telling which files are whose
 * (`classifyTranscript`, over every format in {@link TRANSCRIPT_FORMATS}),
 * grouping them into sessions, reading each session through its format, and
 * pricing every run on the way (`withCost`): each run's own cost, and on a
 * session's root run the whole session's. Owns that orchestration; what a
 * format's files mean is the format's module's.
 *
 * Memory: one session at a time (its runs' records are bounded by their
 * steps and tool calls), whatever the number of sessions or bytes.
 *
 * @module subagent-otel/transcripts/transcripts
 */
import type { RunCost, RunListener, RunRecord } from '../observe/run-record.js';
import { runCost, sumCosts } from '../pricing/run-cost.js';
import type {
  TranscriptFile,
  TranscriptFileInfo,
  TranscriptFileResult,
  TranscriptFormat,
  TranscriptHead,
  TranscriptReadContext,
  TranscriptSession,
} from './format.js';
import { TRANSCRIPT_FORMATS } from './formats.js';

/**
 * What `head` is, asking each format in turn.
 * @returns the first format's answer, or `undefined` when no format claims
 *   the file. Never throws (a format that throws is taken as not claiming it).
 */
export function classifyTranscript(
  head: TranscriptHead,
  formats: readonly TranscriptFormat[] = TRANSCRIPT_FORMATS,
): TranscriptFileInfo | undefined {
  for (const format of formats) {
    try {
      const info = format.classify(head);
      if (info !== undefined) return info;
    } catch {
      // A classifier must not throw (its contract); one that does claims nothing.
    }
  }
  return undefined;
}

/**
 * A listener that prices every run before passing it on: `cost` from its
 * calls' usage and models, and on a root run (no `parentRunId`) of a trace,
 * `sessionTotalCost`, its own plus every run of the same trace that ended
 * before it. Children's costs are forgotten when their root ends. Never
 * throws (pricing never does; `target` must not).
 */
export function withCost(target: RunListener): RunListener {
  const byTrace = new Map<string, RunCost[]>();
  return {
    onRunStart: (start) => target.onRunStart(start),
    onRunEnd: (record) => {
      const cost = runCost(record);
      const key = record.traceKey;
      let priced: RunRecord = cost !== undefined ? { ...record, cost } : record;
      if (key !== undefined && record.parentRunId === undefined) {
        const session = sumCosts([cost, ...(byTrace.get(key) ?? [])]);
        byTrace.delete(key);
        if (session !== undefined) priced = { ...priced, sessionTotalCost: session };
      } else if (key !== undefined && cost !== undefined) {
        const costs = byTrace.get(key) ?? [];
        costs.push(cost);
        byTrace.set(key, costs);
      }
      target.onRunEnd(priced);
    },
    ...(target.onMalformed !== undefined
      ? { onMalformed: (origin, error) => target.onMalformed?.(origin, error) }
      : {}),
  };
}

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

/**
 * Reads `files` (classified transcript files of kind `session` or
 * `sidecar`; any mix of formats) session by session into `context.listener`,
 * priced by {@link withCost}.
 *
 * @returns one result per file, in the order read. Never rejects.
 */
export async function readTranscripts(
  files: readonly TranscriptFile[],
  context: TranscriptReadContext,
  formats: readonly TranscriptFormat[] = TRANSCRIPT_FORMATS,
): Promise<TranscriptFileResult[]> {
  const results: TranscriptFileResult[] = [];
  const priced: TranscriptReadContext = { ...context, listener: withCost(context.listener) };
  for (const job of transcriptJobs(files, formats)) {
    if (job.kind === 'failed')
      results.push(...failedTranscriptFiles(job.format.name, job.files, job.error, context.onProblem));
    else results.push(...(await readTranscriptSession(job.format, job.session, priced)));
  }
  return results;
}
