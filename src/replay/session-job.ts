/**
 * One coding agent's session read away from the replay's main thread (a
 * worker of `transcript-pool`): the request naming it, the reading, and the
 * outcome sent back as plain data. The outcome is everything the reader
 * told its context, in the order it told it (runs started and ended,
 * malformed records, problems, bytes read) and the per-file results, so the
 * main thread can pass it on exactly as an in-process read would have.
 *
 * Runs are not priced here: the main thread prices them (`withCost`) as it
 * passes them on, the same code as in process.
 *
 * @module subagent-otel/replay/session-job
 */
import type { NativeTranscriptFormat, RunListener, RunRecord, RunStart } from '../observe/run-record.js';
import type {
  TranscriptFileResult,
  TranscriptProblem,
  TranscriptReadContext,
  TranscriptSession,
} from '../transcripts/format.js';
import { TRANSCRIPT_FORMATS } from '../transcripts/formats.js';
import { failedTranscriptFiles, readTranscriptSession } from '../transcripts/transcript-jobs.js';

/** What the main thread asks a worker to read. Plain data (structured clone). */
export interface SessionJobRequest {
  /** The session's index in the replay's order; echoed in the outcome. */
  readonly index: number;
  readonly format: NativeTranscriptFormat;
  readonly session: TranscriptSession;
  /** `--agent-name`, when given. */
  readonly agentName?: string;
}

/** One thing the reader told its context, in order. */
export type SessionEvent =
  | { readonly kind: 'start'; readonly start: RunStart }
  | { readonly kind: 'end'; readonly record: RunRecord }
  | {
      readonly kind: 'malformed';
      readonly origin: string;
      readonly error: { readonly code: string; readonly message: string };
    }
  | { readonly kind: 'problem'; readonly problem: TranscriptProblem }
  | { readonly kind: 'bytes'; readonly path: string; readonly bytes: number };

/** What a worker sends back for one {@link SessionJobRequest}. Plain data. */
export interface SessionJobOutcome {
  readonly index: number;
  readonly events: readonly SessionEvent[];
  readonly results: readonly TranscriptFileResult[];
}

/**
 * Reads the requested session with a context that records what it is told.
 * A format name no reader has gives the session's files as failed.
 * Never rejects.
 */
export async function readSessionJob(request: SessionJobRequest): Promise<SessionJobOutcome> {
  const events: SessionEvent[] = [];
  const listener: RunListener = {
    onRunStart: (start) => events.push({ kind: 'start', start }),
    onRunEnd: (record) => events.push({ kind: 'end', record }),
    onMalformed: (origin, error) =>
      events.push({ kind: 'malformed', origin, error: { code: error.code, message: error.message } }),
  };
  const context: TranscriptReadContext = {
    listener,
    onProblem: (problem) => events.push({ kind: 'problem', problem }),
    onBytes: (path, bytes) => events.push({ kind: 'bytes', path, bytes }),
    pause: () => undefined,
    ...(request.agentName !== undefined ? { agentName: request.agentName } : {}),
  };
  const format = TRANSCRIPT_FORMATS.find((candidate) => candidate.name === request.format);
  const results =
    format === undefined
      ? failedTranscriptFiles(request.format, request.session.files, 'no such format', context.onProblem)
      : await readTranscriptSession(format, request.session, context);
  return { index: request.index, events, results };
}

/**
 * Passes `outcome`'s events on to `context` (its listener priced by the
 * caller) in their order, awaiting `context.pause` after each run as an
 * in-process reader does between runs.
 *
 * @returns the outcome's file results. Never rejects (`context` must not throw).
 */
export async function passOnSessionEvents(
  outcome: SessionJobOutcome,
  context: TranscriptReadContext,
): Promise<readonly TranscriptFileResult[]> {
  for (const event of outcome.events) {
    switch (event.kind) {
      case 'start':
        context.listener.onRunStart(event.start);
        break;
      case 'end': {
        context.listener.onRunEnd(event.record);
        const pausing = context.pause();
        if (pausing !== undefined) await pausing;
        break;
      }
      case 'malformed':
        context.listener.onMalformed?.(event.origin, event.error);
        break;
      case 'problem':
        context.onProblem(event.problem);
        break;
      case 'bytes':
        context.onBytes(event.path, event.bytes);
        break;
    }
  }
  return outcome.results;
}
