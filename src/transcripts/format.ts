/**
 * The contract every coding-agent transcript format (Claude Code, Codex,
 * Gemini CLI) fulfils for `replay` and `watch`: telling its files apart by
 * path and content, grouping them into sessions (a root session and every
 * run nested under it: one trace), and reading a session into runs.
 *
 * Owns the shapes only. Each format lives in its own folder beside this
 * module (`claude-code/`, `codex/`, `gemini-cli/`): `records.ts` (its line
 * schemas), `runs.ts` (records into runs) and `files.ts` (its files and
 * sessions, this contract), registered in `formats.ts`; the orchestration
 * (which files, in what order, cost, the summary) is `transcripts.ts`'s.
 *
 * @module subagent-otel/transcripts/format
 */
import type { NativeTranscriptFormat, RunListener } from '../observe/run-record.js';

/** What {@link TranscriptFormat.classify} sees of a file. */
export interface TranscriptHead {
  /** The path as given or found by the walk. */
  readonly path: string;
  /** Line 1 parsed as JSON, when it is a complete JSON value; else `undefined`. */
  readonly firstLine: unknown;
  /**
   * The file's first bytes as text (at most `SNIFF_MAX_BYTES`, cut at a
   * character boundary), for formats whose documents span lines (Gemini
   * CLI's legacy single-JSON chats).
   */
  readonly prefix: string;
  /**
   * The whole JSON lines of the file's first bytes, parsed, in file order
   * (line 1 first; at most `SNIFF_MAX_RECORDS`). A format recognises its
   * file by the first record that identifies it, not by line 1: agents add
   * record types a reader does not know (decision 0099). Absent: only
   * `firstLine` is known.
   */
  readonly records?: readonly unknown[];
}

/** What a file of a transcript format is. */
export interface TranscriptFileInfo {
  readonly format: NativeTranscriptFormat;
  /**
   * `session`: holds runs (a session, or a subagent's file); `sidecar`: read
   * with the session it belongs to (Claude Code's `agent-<id>.meta.json`);
   * `other`: recognised as this agent's, holds no run to report (an
   * auto-compaction summariser, a side question, a workflow journal, a
   * prompt history), never counted as a run or a problem.
   */
  readonly kind: 'session' | 'sidecar' | 'other';
  /** For `other` and `sidecar`: what the file is, in a user's words (printed in the summary). */
  readonly what?: string;
  /**
   * Facts from the path and the first record that grouping needs (session,
   * parent, agent and thread ids), format-specific and small. Never content.
   */
  readonly facts: Readonly<Record<string, string | undefined>>;
}

/** A classified file. */
export interface TranscriptFile {
  readonly path: string;
  /** Bytes when listed. */
  readonly size: number;
  /** Last modification, epoch ms, when listed (watch: how long the file has been quiet). */
  readonly mtimeMs: number;
  readonly info: TranscriptFileInfo;
}

/**
 * One session's files, read together: a root session and the runs nested
 * under it (subagents, their subagents). Every run of it shares one trace.
 */
export interface TranscriptSession {
  readonly format: NativeTranscriptFormat;
  /** Stable key of the root session; the trace key of its runs (`<format>:<root session id>`). */
  readonly key: string;
  /** The files, in the order the format reads them (parents before children). */
  readonly files: readonly TranscriptFile[];
}

/** A defect met while reading, at its file and 1-based line (0: the file as a whole). Same meaning as `ReplayProblem`. */
export interface TranscriptProblem {
  readonly file: string;
  readonly line: number;
  readonly code: string;
  readonly scope: 'file' | 'record';
  readonly message: string;
}

/** What one file of a session gave. */
export interface TranscriptFileResult {
  readonly path: string;
  /** Records (lines, messages) read. */
  readonly records: number;
  /** Runs reported from this file. */
  readonly runs: number;
  /** Nothing of the file was read (unreadable, not what its first line said). */
  readonly isSkipped: boolean;
  /**
   * Records of types the format does not know, by type: read past, never a
   * problem (an agent adds record types between versions; decision 0099).
   * Absent when there were none.
   */
  readonly unknownRecords?: Readonly<Record<string, number>>;
  /** A file read whole that turned out to hold no run: what it is, in a user's words (printed in the summary). */
  readonly what?: string;
}

/**
 * How long a file named by an agent's end hook must stay unchanged after the
 * hook before its run is closed: the agent writes the lines of a turn's end
 * around the time its hook runs, not strictly before.
 */
export const HOOK_SETTLE_MS = 300;

/**
 * How late after an end hook the agent's writes to the file still belong to
 * the run that ended (its last lines: Claude Code writes the turn's closing
 * records, e.g. its `stop_hook_summary`, after its Stop hook returns, later
 * still on a busy machine); a file that grows later than this (the run taken
 * up again) is back under the idle bound. Counted from when the watcher
 * heard the hook (after the hook's own start, which alone can take seconds
 * on a busy machine).
 */
export const HOOK_LATE_WRITE_MS = 2000;

/** Live reading (`watch`): which runs may be reported now. */
export interface TranscriptLive {
  /** Epoch ms now. */
  readonly now: number;
  /**
   * A run whose files record no end is closed (and reported, as its files
   * say: usually stop reason `unknown`) once every file it reads from has
   * been quiet this long (no growth, mtime older than `now - idleMs`).
   */
  readonly idleMs: number;
  /**
   * When the agent's own hook said the run recorded in the file at `path`
   * (resolved) ended (epoch ms; `SubagentStop`, `Stop`, `SessionEnd`), or
   * `undefined`. Such a file counts as quiet once it has not changed for
   * {@link HOOK_SETTLE_MS} after that time or after its last change (the
   * agent may write its last lines just after its hook), without waiting for
   * `idleMs`; a file that grows later than {@link HOOK_LATE_WRITE_MS} after
   * the hook (the run taken up again) is back under `idleMs`.
   */
  readonly endedAt?: (path: string) => number | undefined;
  /**
   * Whether run `runId` was reported (in an earlier pass or before a
   * restart) with an end at or after `endTime` (epoch ms): then it is not
   * reported again. A run reported with an earlier end has grown since (its
   * session was taken up again): it is reported again, and `watch` emits
   * only its later part. A reader that decides before reading a file may
   * ask with the file's mtime, which is never before its last record.
   */
  readonly isReported: (runId: string, endTime: number) => boolean;
}

/** What {@link TranscriptFormat.read} is given. */
export interface TranscriptReadContext {
  /**
   * Receives the runs: every run's `onRunStart` right before its
   * `onRunEnd`, a session's children before the session's own end (so a
   * root can carry its session's total cost), children nested by
   * `parentRunId`, `parentToolCallId` and the session's `traceKey`.
   */
  readonly listener: RunListener;
  readonly onProblem: (problem: TranscriptProblem) => void;
  /** Called with each chunk's size as bytes are read (progress). */
  readonly onBytes: (path: string, bytes: number) => void;
  /** Awaited, when it returns a promise, between runs: the exporters catching up (backpressure). */
  readonly pause: () => Promise<void> | undefined;
  /** `gen_ai.agent.name` of every run, overriding the format's own (`--agent-name`). */
  readonly agentName?: string;
  /** Present in `watch`: report only runs that ended (recorded, or quiet for long enough) and were not reported before. Absent in `replay`: every file is complete, every run is reported. */
  readonly live?: TranscriptLive;
}

/** One transcript format. Implementations are stateless; every method never throws or rejects for any input. */
export interface TranscriptFormat {
  readonly name: NativeTranscriptFormat;
  /** @returns what the file is for this format, or `undefined` when it is not one of its files. */
  classify(head: TranscriptHead): TranscriptFileInfo | undefined;
  /**
   * Groups this format's files into sessions, each root with everything
   * nested under it. A file whose parent is not among `files` forms (or
   * joins) a session of its own: its runs are reported without a parent.
   * Files of kind `other` are not passed in.
   */
  group(files: readonly TranscriptFile[]): TranscriptSession[];
  /** Reads one session and reports its runs. @returns one result per file of the session. */
  read(session: TranscriptSession, context: TranscriptReadContext): Promise<readonly TranscriptFileResult[]>;
}
