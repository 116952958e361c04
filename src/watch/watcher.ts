/**
 * `subagent-otel watch` without the command line: follows directories of
 * coding agents' transcripts while the agents run and reports each run once,
 * when it has ended (its files record the end, or they have been quiet for
 * the idle bound), through the same formats `replay` reads.
 *
 * Each pass lists the directories (with a change feed: only when it
 * notified a change, or at least every {@link FULL_LISTING_MS}), notices
 * files that appeared, grew, were
 * truncated, replaced (another inode under the same name) or deleted, reads
 * again every session with a changed file or one that just went quiet, and
 * hands the runs not reported before to the listener (of a run reported
 * before whose files grew since, its later part: `continuation`). A session is read
 * whole each time (its files are re-read from their start), which makes
 * truncation, rotation and half-written last lines harmless: the next pass
 * sees the files as they are. After a pass that reported runs, telemetry is
 * flushed and only then the checkpoint records them, so a restart repeats
 * nothing delivered and loses nothing not yet delivered (a kill between the
 * two repeats those runs, with the same span ids: decision 0094).
 *
 * Never writes into the watched directories: the checkpoint lives in the
 * user's state directory. Owns the loop, file tracking and the report gate;
 * what files mean is the formats'.
 *
 * @module subagent-otel/watch/watcher
 */
import { resolve, sep } from 'node:path';
import type { RunListener, RunRecord, RunStart } from '../observe/run-record.js';
import { expandPaths, sniffFile } from '../replay/input-files.js';
import type { TranscriptFile, TranscriptFileInfo, TranscriptFormat, TranscriptProblem, TranscriptSession } from '../transcripts/format.js';
import { TRANSCRIPT_FORMATS } from '../transcripts/formats.js';
import { classifyTranscript, withCost } from '../transcripts/transcripts.js';
import type { ChangeFeed } from './change-feed.js';
import { settlePoint, type EndNotices } from './end-notices.js';
import { saveCheckpoint, type Checkpoint, type SessionRead } from './checkpoint.js';
import { laterPart, reportedRunOf, type ReportedRun } from './continuation.js';

/** Default idle bound: a run whose files record no end is closed after 10 minutes without growth. */
export const DEFAULT_IDLE_MS = 600_000;
/** Spans reported between two backpressure waits (as `replay`). */
const BACKPRESSURE_SPANS = 512;
/** Default time between two passes. */
export const DEFAULT_INTERVAL_MS = 2_000;
/** The longest a checkpoint waits to record reads that reported no run (it is written at once after a pass that did). */
export const READ_SAVE_MS = 60_000;
/** With a change feed: the longest time between two listings, in case a notification was lost. */
export const FULL_LISTING_MS = 60_000;

/** Options of {@link watchTranscripts}. */
export interface WatchOptions {
  readonly dirs: readonly string[];
  /** Receives every reported run (start, then end), priced. Must not throw. */
  readonly listener: RunListener;
  readonly idleMs: number;
  readonly intervalMs: number;
  readonly checkpointPath: string;
  /** The checkpoint read at start, when there was one. */
  readonly checkpoint?: Checkpoint;
  /** Without a checkpoint: report runs that ended before this start too (default: only runs that end from now on). */
  readonly history: boolean;
  /** Without a checkpoint: runs that ended before this time (epoch ms) are history (overrides `history`; `watch --daemon`: the first setup). */
  readonly since?: number;
  /** Directories never entered (the telemetry output directory). */
  readonly exclude?: readonly string[];
  /**
   * Delivers what was reported so far, or puts it into the outbox on disk;
   * awaited before the checkpoint records it. Resolves `true` when all of it
   * is safe (delivered, in the outbox, or refused for good), `false` when
   * some was lost: the runs of that pass are then not checkpointed and are
   * read and reported again in the next pass (decision 0101). Must not reject.
   */
  readonly flush: () => Promise<boolean>;
  /** Backpressure while reading: awaited after every 512 spans' worth of runs reported (default: none). Must not reject. */
  readonly backpressure?: () => Promise<void>;
  /** Called for each run reported, after the listener. Must not throw. */
  readonly onRun?: (record: RunRecord) => void;
  /** Called once per distinct problem. Must not throw. */
  readonly onProblem?: (problem: TranscriptProblem) => void;
  /** Called after each pass. Must not throw. */
  readonly onPass?: (pass: WatchPass) => void;
  /** Ends the watch after the pass in progress. */
  readonly signal: AbortSignal;
  /** `gen_ai.agent.name` of every run (`--agent-name`). */
  readonly agentName?: string;
  /** Clock, epoch ms; default `Date.now`. */
  readonly now?: () => number;
  /** The formats to read (default every known one, `TRANSCRIPT_FORMATS`). */
  readonly formats?: readonly TranscriptFormat[];
  /**
   * Notifications of changes under `dirs` (decision 0120): a pass lists the
   * directories only when it says something changed, when it is not
   * `watching`, or {@link FULL_LISTING_MS} after the last listing. Without
   * one, every pass lists.
   */
  readonly changes?: ChangeFeed;
  /**
   * What the agents' end hooks said (`watch --daemon`, decision 0123): a
   * notice wakes the watch, which lists the directories and reads the
   * notified files' sessions once they settled, closing their runs without
   * waiting for the idle bound.
   */
  readonly notices?: EndNotices;
}

/** What one pass did. */
export interface WatchPass {
  readonly pass: number;
  /** Transcript files known (sessions and sidecars). */
  readonly files: number;
  /** Whether this pass listed the directories (false: the change feed said nothing moved). */
  readonly listed: boolean;
  /** Sessions read in this pass. */
  readonly sessionsRead: number;
  /** Runs reported in this pass. */
  readonly runsReported: number;
}

/** What a whole watch did. */
export interface WatchSummary {
  readonly passes: number;
  readonly runs: number;
  /** Runs the checkpoint held when the watch ended. */
  readonly reportedTotal: number;
  /** Problems reported (each once). */
  readonly problems: number;
  /** Runs reported again because telemetry of the pass that reported them was lost (they are in `runs` twice). */
  readonly repeated: number;
  /** Why the checkpoint could not be written, when it could not (the runs were delivered; a restart would repeat them). */
  readonly checkpointError?: string;
}

interface FileState {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ino: number;
  /** `null`: not a transcript file (yet: re-asked when it changes). */
  readonly info: TranscriptFileInfo | null;
}

/** Problems remembered so that a session read again does not report them again. */
const MAX_REMEMBERED_PROBLEMS = 10_000;

/**
 * Watches until `options.signal` aborts; the last pass finishes, telemetry is
 * flushed and the checkpoint written before it resolves.
 * @returns what was done. Never rejects for any input; a checkpoint that
 *   cannot be written is reported in the summary (and retried every pass).
 */
export async function watchTranscripts(options: WatchOptions): Promise<WatchSummary> {
  const now = options.now ?? Date.now;
  const formats = options.formats ?? TRANSCRIPT_FORMATS;
  const classify = (head: Parameters<typeof classifyTranscript>[0]) => classifyTranscript(head, formats);
  const since = options.checkpoint?.since ?? options.since ?? (options.history ? 0 : now());
  const reported = new Map<string, ReportedRun>(Object.entries(options.checkpoint?.reported ?? {}));
  const dirs = options.dirs.map((dir) => resolve(dir));
  const states = new Map<string, FileState>();
  /** Per session ({@link readKey}): the files' signature when it was last read, and when. */
  const lastRead = new Map<string, SessionRead>(Object.entries(options.checkpoint?.read ?? {}));
  /** Whether `lastRead` changed since the checkpoint was last written. */
  let readChanged = false;
  /** When the checkpoint was last written (the watch's clock). */
  let lastSaved = now();
  let sessions: TranscriptSession[] = [];
  /** When the directories were last listed (the watch's clock). */
  let lastListing: number | undefined;
  const seenProblems = new Set<string>();
  let problemCount = 0;
  let runs = 0;
  let passes = 0;
  let checkpointError: string | undefined;
  let unsaved = false;
  /** Runs reported since the last safe flush: what the checkpoint held of each before, to undo an unsafe pass. */
  const unsafe = new Map<string, ReportedRun | undefined>();
  /** Sessions read since the last safe flush, read again after an unsafe one. */
  const readSince = new Set<string>();
  let spansSincePause = 0;
  let repeated = 0;

  // Priced after the gate, for the watch's lifetime: a root reported in a later pass still adds its children reported earlier.
  const priced = withCost({
    onRunStart: (start) => options.listener.onRunStart(start),
    onRunEnd: (record) => {
      options.listener.onRunEnd(record);
      options.onRun?.(record);
    },
  });
  let reportedThisPass = 0;
  /** Holds each run's start until its end says whether it is reported: history and runs reported before are dropped whole. */
  const pending = new Map<string, RunStart>();
  const gate: RunListener = {
    onRunStart: (start) => {
      pending.set(start.runId, start);
    },
    onRunEnd: (record) => {
      const start = pending.get(record.runId);
      pending.delete(record.runId);
      const previous = reported.get(record.runId);
      if (previous !== undefined && record.endTime <= previous.end) return;
      if (!unsafe.has(record.runId)) unsafe.set(record.runId, previous);
      reported.set(record.runId, reportedRunOf(record));
      unsaved = true;
      if (record.endTime < since) return; // history: remembered, never reported
      // A run reported before whose files grew since: only what came after is new (decision 0098).
      const run = previous === undefined ? record : laterPart(record, previous);
      if (run === undefined) return;
      priced.onRunStart(previous === undefined ? (start ?? record) : run);
      priced.onRunEnd(run);
      runs += 1;
      reportedThisPass += 1;
      spansSincePause += 1 + run.steps.length + run.toolCalls.length;
    },
  };

  const problem = (p: TranscriptProblem, quiet: boolean): void => {
    // A torn last line of a file still being written is the agent mid-write, not damage.
    if (!quiet && (p.code === 'torn-tail' || p.code === 'unrecognized' || p.code === 'empty-file')) return;
    const key = `${p.file}\u0000${p.line}\u0000${p.code}`;
    if (seenProblems.has(key)) return;
    if (seenProblems.size >= MAX_REMEMBERED_PROBLEMS) seenProblems.clear();
    seenProblems.add(key);
    problemCount += 1;
    options.onProblem?.(p);
  };
  /** The earliest time a notified file settles after the pass in progress (the loop wakes then). */
  let nextWake: number | undefined;
  /** When the last of `files` named by an end hook settles, if any was (decision 0123). */
  const settleOf = (files: readonly TranscriptFile[]): number | undefined => {
    if (options.notices === undefined) return undefined;
    let latest: number | undefined;
    for (const file of files) {
      const ended = options.notices.endedAt(file.path);
      const point = ended !== undefined ? settlePoint(ended, file.mtimeMs) : undefined;
      if (point !== undefined && (latest === undefined || point > latest)) latest = point;
    }
    return latest;
  };
  const isQuiet = (path: string, at: number): boolean => (states.get(path)?.mtimeMs ?? 0) < at - options.idleMs;

  /** Lists the directories and updates the file states (and the sessions, when files came or went). */
  const listFiles = async (at: number): Promise<void> => {
    const expanded = await expandPaths(dirs, options.exclude !== undefined ? { exclude: options.exclude } : {});
    options.changes?.follow(expanded.dirs);
    // A directory the agents have not written to yet is no problem for a watch.
    for (const p of expanded.problems) if (p.code !== 'no-files') problem({ file: p.path, line: 0, code: p.code, scope: 'file', message: p.message }, true);
    let membershipChanged = false;
    const listed = new Set<string>();
    for (const file of expanded.files) {
      listed.add(file.path);
      const before = states.get(file.path);
      const replaced = before !== undefined && (before.ino !== file.ino || file.size < before.size);
      const changed = before === undefined || before.size !== file.size || before.mtimeMs !== file.mtimeMs || before.ino !== file.ino;
      if (!changed) continue;
      let info = before?.info ?? null;
      if (before === undefined || replaced || info === null) {
        const sniffed = await sniffFile(file.path, { classifyTranscript: classify });
        const next = sniffed.ok && sniffed.transcript !== undefined && sniffed.transcript.kind !== 'other' ? sniffed.transcript : null;
        if (!sniffed.ok) problem({ file: file.path, line: 0, code: sniffed.code, scope: 'file', message: sniffed.message }, file.mtimeMs < at - options.idleMs);
        if ((next === null) !== (info === null) || next?.format !== info?.format) membershipChanged = true;
        info = next;
      }
      states.set(file.path, { size: file.size, mtimeMs: file.mtimeMs, ino: file.ino, info });
    }
    for (const path of [...states.keys()]) {
      if (listed.has(path)) continue;
      if (states.get(path)?.info !== null) membershipChanged = true;
      states.delete(path); // deleted: its runs already reported stay reported; nothing more can be read of it
    }
    if (membershipChanged) {
      sessions = group(states, formats);
      // Sessions whose files are gone are not read again: forget them.
      const current = new Set(sessions.map(readKey));
      for (const key of lastRead.keys()) {
        if (current.has(key)) continue;
        lastRead.delete(key);
        readChanged = true;
      }
    }
  };

  const onePass = async (): Promise<void> => {
    passes += 1;
    reportedThisPass = 0;
    let sessionsRead = 0;
    const at = now();
    // Taken on every pass, so a change notified during this listing makes the next pass list again.
    const notified = options.changes?.takeChanged() ?? true;
    // A hook may name a file created since the last listing.
    const hooked = options.notices?.takeFresh() ?? false;
    options.notices?.prune(at - options.idleMs);
    nextWake = undefined;
    const listed = notified || hooked || options.changes?.watching !== true || lastListing === undefined || at - lastListing >= FULL_LISTING_MS;
    if (listed) {
      lastListing = at;
      await listFiles(at);
    }

    for (const grouped of sessions) {
      if (options.signal.aborted) break;
      // The grouping is redone only when files come or go; sizes and times are always the latest seen.
      const session = refreshed(grouped, states);
      if (session === undefined) continue;
      const signature = session.files.map((f) => `${f.path}:${f.size}:${f.mtimeMs}`).join('|');
      const newest = Math.max(...session.files.map((f) => f.mtimeMs));
      const key = readKey(session);
      const last = lastRead.get(key);
      const quietSince = newest + options.idleMs;
      // A file an end hook named settles: its run closes then (decision 0123).
      const settled = settleOf(session.files);
      if (settled !== undefined && settled > at) nextWake = Math.min(nextWake ?? settled, settled);
      // Read when a file changed, or once more when the session has just gone quiet (runs without a recorded end close then).
      const due =
        last === undefined ||
        last.signature !== signature ||
        (last.at < quietSince && quietSince <= at) ||
        (settled !== undefined && last.at < settled && settled <= at);
      if (!due) continue;
      lastRead.set(key, { signature, at });
      readChanged = true;
      readSince.add(key);
      sessionsRead += 1;
      const format = formats.find((f) => f.name === session.format);
      if (format === undefined) continue;
      try {
        await format.read(session, {
          listener: gate,
          onProblem: (p) => problem(p, isQuiet(p.file, at)),
          onBytes: () => undefined,
          pause: () => {
            if (options.backpressure === undefined || spansSincePause < BACKPRESSURE_SPANS) return undefined;
            spansSincePause = 0;
            return options.backpressure();
          },
          ...(options.agentName !== undefined ? { agentName: options.agentName } : {}),
          live: {
            now: at,
            idleMs: options.idleMs,
            isReported: (runId, endTime) => (reported.get(runId)?.end ?? -Infinity) >= endTime,
            ...(options.notices !== undefined ? { endedAt: (path: string) => options.notices?.endedAt(path) } : {}),
          },
        });
      } catch (error) {
        // A format must not reject (its contract); if one does, the session is read again on its next change.
        problem({ file: session.files[0]?.path ?? session.key, line: 0, code: 'transcript-failed', scope: 'file', message: `the ${session.format} reader failed: ${String(error)}` }, true);
      }
      pending.clear(); // a start whose end never came (a reader that broke its contract) is not held forever
    }

    // Reads alone (no run reported) are written at most every READ_SAVE_MS, and when the watch stops: a restart
    // then reads only what changed since (decision 0120's update).
    const readsDue = readChanged && (options.signal.aborted || at - lastSaved >= READ_SAVE_MS);
    if (unsaved || readsDue) {
      if (unsaved && !(await options.flush())) {
        // Some of this pass's telemetry was lost: undo its runs and read their sessions again next pass (same ids).
        for (const [runId, before] of unsafe) {
          if (before === undefined) reported.delete(runId);
          else reported.set(runId, before);
        }
        repeated += unsafe.size;
        for (const key of readSince) lastRead.delete(key);
      }
      unsafe.clear();
      readSince.clear();
      try {
        await saveCheckpoint(options.checkpointPath, { version: 2, dirs, since, reported: Object.fromEntries(reported), read: Object.fromEntries(lastRead) });
        unsaved = false;
        readChanged = false;
        lastSaved = at;
        checkpointError = undefined;
      } catch (error) {
        checkpointError = `cannot write the checkpoint ${options.checkpointPath}: ${(error as Error).message}`;
      }
    }
    options.onPass?.({ pass: passes, files: [...states.values()].filter((s) => s.info !== null).length, listed, sessionsRead, runsReported: reportedThisPass });
  };

  for (;;) {
    await onePass();
    if (options.signal.aborted) break;
    const wait = nextWake !== undefined ? Math.min(options.intervalMs, nextWake - now()) : options.intervalMs;
    await (options.notices !== undefined ? options.notices.wait(wait, options.signal) : sleep(wait, options.signal));
    if (options.signal.aborted) break;
  }
  // Reads since the last write (no run reported: nothing to flush) are kept for the next start.
  if (readChanged && !unsaved) {
    try {
      await saveCheckpoint(options.checkpointPath, { version: 2, dirs, since, reported: Object.fromEntries(reported), read: Object.fromEntries(lastRead) });
    } catch (error) {
      checkpointError = `cannot write the checkpoint ${options.checkpointPath}: ${(error as Error).message}`;
    }
  }
  return { passes, runs, reportedTotal: reported.size, problems: problemCount, repeated, ...(checkpointError !== undefined ? { checkpointError } : {}) };
}

/** The sessions of the known transcript files, each format grouping its own. */
function group(states: ReadonlyMap<string, FileState>, formats: readonly TranscriptFormat[]): TranscriptSession[] {
  const files: TranscriptFile[] = [];
  for (const [path, state] of states) if (state.info !== null) files.push({ path, size: state.size, mtimeMs: state.mtimeMs, info: state.info });
  const sessions: TranscriptSession[] = [];
  for (const format of formats) {
    const mine = files.filter((file) => file.info.format === format.name);
    if (mine.length === 0) continue;
    try {
      sessions.push(...format.group(mine));
    } catch {
      // A grouper must not throw (its contract); its files wait for the next change.
    }
  }
  return sessions;
}

/**
 * What the watch remembers a session's last read by: its format's key and
 * its first file. A format's key names the session (Claude Code: its id), so
 * two copies of one session in two folders share it; keyed by the key alone,
 * each copy's read replaced the other's signature and both were read again
 * on every pass while nothing changed.
 */
function readKey(session: TranscriptSession): string {
  return `${session.key}\0${session.files[0]?.path ?? ''}`;
}

/** `session` with each file's size and time as last listed; `undefined` when none of its files is left. */
function refreshed(session: TranscriptSession, states: ReadonlyMap<string, FileState>): TranscriptSession | undefined {
  const files: TranscriptFile[] = [];
  for (const file of session.files) {
    const state = states.get(file.path);
    if (state?.info !== null && state !== undefined) files.push({ ...file, size: state.size, mtimeMs: state.mtimeMs, info: state.info });
  }
  return files.length > 0 ? { ...session, files } : undefined;
}

/**
 * Whether `path` lies inside one of `dirs` (or is one of them): the watch
 * refuses to write its checkpoint or telemetry there.
 */
export function isInside(path: string, dirs: readonly string[]): boolean {
  const target = resolve(path);
  return dirs.some((dir) => {
    const root = resolve(dir);
    return target === root || target.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
  });
}

/** Waits `ms`, or less when `signal` aborts. Never rejects. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(finish, ms);
    function finish(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      done();
    }
    signal.addEventListener('abort', finish, { once: true });
  });
}
