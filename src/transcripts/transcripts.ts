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
} from './format.js';
import { TRANSCRIPT_FORMATS } from './formats.js';
import { failedTranscriptFiles, readTranscriptSession, transcriptJobs } from './transcript-jobs.js';

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
