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
import type {
  TranscriptFile,
  TranscriptFileInfo,
  TranscriptFormat,
  TranscriptProblem,
  TranscriptSession,
} from '../transcripts/format.js';
import { TRANSCRIPT_CLASSIFIER_VERSION, TRANSCRIPT_FORMATS } from '../transcripts/formats.js';
import { classifyTranscript, withCost } from '../transcripts/transcripts.js';
import type { ChangeFeed } from './change-feed.js';
import { settlePoint, type EndNotices } from './end-notices.js';
import { saveCheckpoint, type Checkpoint, type RememberedFile, type SessionRead } from './checkpoint.js';
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

interface FileState extends RememberedFile {
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
  return new TranscriptWatch(options).run();
}

/** One watch: its file states, sessions, report gate and checkpoint state, and the passes over them. */
class TranscriptWatch {
  readonly #options: WatchOptions;
  readonly #now: () => number;
  readonly #formats: readonly TranscriptFormat[];
  readonly #since: number;
  readonly #reported: Map<string, ReportedRun>;
  readonly #dirs: string[];
  readonly #states: Map<string, FileState>;
  /** Tags the file states in the checkpoint: the classifier version and the formats' names. */
  readonly #classifier: string;
  /** Whether the next listing groups the files whatever changed (the first: states seeded from the checkpoint change nothing). */
  #regroupDue = true;
  /** Per session ({@link readKey}): the files' signature when it was last read, and when. */
  readonly #lastRead: Map<string, SessionRead>;
  /** Whether `lastRead` or the file states changed since the checkpoint was last written. */
  #seenChanged = false;
  /** When the checkpoint was last written (the watch's clock). */
  #lastSaved: number;
  #sessions: TranscriptSession[] = [];
  /** When the directories were last listed (the watch's clock). */
  #lastListing: number | undefined;
  readonly #seenProblems = new Set<string>();
  #problemCount = 0;
  #runs = 0;
  #passes = 0;
  #checkpointError: string | undefined;
  #unsaved = false;
  /** Runs reported since the last safe flush: what the checkpoint held of each before, to undo an unsafe pass. */
  readonly #unsafe = new Map<string, ReportedRun | undefined>();
  /** Sessions read since the last safe flush, read again after an unsafe one. */
  readonly #readSince = new Set<string>();
  /** End notices read as settled since the last recorded pass: forgotten once that pass's telemetry is safe. */
  readonly #settledNotices: Array<readonly [path: string, ended: number]> = [];
  #spansSincePause = 0;
  #repeated = 0;
  /** Priced after the gate, for the watch's lifetime: a root reported in a later pass still adds its children reported earlier. */
  readonly #priced: RunListener;
  #reportedThisPass = 0;
  /** Holds each run's start until its end says whether it is reported: history and runs reported before are dropped whole. */
  readonly #pending = new Map<string, RunStart>();
  /** The earliest time a notified file settles after the pass in progress (the loop wakes then). */
  #nextWake: number | undefined;

  constructor(options: WatchOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#formats = options.formats ?? TRANSCRIPT_FORMATS;
    this.#since = options.checkpoint?.since ?? options.since ?? (options.history ? 0 : this.#now());
    this.#reported = new Map<string, ReportedRun>(Object.entries(options.checkpoint?.reported ?? {}));
    this.#dirs = options.dirs.map((dir) => resolve(dir));
    this.#lastRead = new Map<string, SessionRead>(Object.entries(options.checkpoint?.read ?? {}));
    this.#classifier = `${TRANSCRIPT_CLASSIFIER_VERSION}:${this.#formats.map((f) => f.name).join(',')}`;
    // The files as the last watch left them, when the same classification made them: an unchanged one is not
    // classified again (decision 0134).
    const remembered = options.checkpoint?.files;
    this.#states = new Map<string, FileState>(
      remembered?.classifier === this.#classifier ? Object.entries(remembered.states) : [],
    );
    this.#lastSaved = this.#now();
    this.#priced = withCost({
      onRunStart: (start) => options.listener.onRunStart(start),
      onRunEnd: (record) => {
        options.listener.onRunEnd(record);
        options.onRun?.(record);
      },
    });
  }

  /** The passes, until the signal aborts, then the last reads into the checkpoint. Never rejects. */
  async run(): Promise<WatchSummary> {
    const options = this.#options;
    for (;;) {
      await this.#onePass();
      if (options.signal.aborted) break;
      const wait =
        this.#nextWake !== undefined ? Math.min(options.intervalMs, this.#nextWake - this.#now()) : options.intervalMs;
      await (options.notices !== undefined ? options.notices.wait(wait, options.signal) : sleep(wait, options.signal));
      if (options.signal.aborted) break;
    }
    // Reads and file states since the last write (no run reported: nothing to flush) are kept for the next start.
    if (this.#seenChanged && !this.#unsaved) await this.#saveCheckpoint();
    const checkpointError = this.#checkpointError;
    return {
      passes: this.#passes,
      runs: this.#runs,
      reportedTotal: this.#reported.size,
      problems: this.#problemCount,
      repeated: this.#repeated,
      ...(checkpointError !== undefined ? { checkpointError } : {}),
    };
  }

  /** The report gate: the listener the formats read into. */
  readonly #gate: RunListener = {
    onRunStart: (start) => {
      this.#pending.set(start.runId, start);
    },
    onRunEnd: (record) => this.#onRunEnd(record),
  };

  /** A run's end: reported once (or its later part), remembered either way; history is remembered, never reported. */
  #onRunEnd(record: RunRecord): void {
    const start = this.#pending.get(record.runId);
    this.#pending.delete(record.runId);
    const previous = this.#reported.get(record.runId);
    if (previous !== undefined && record.endTime <= previous.end) return;
    if (!this.#unsafe.has(record.runId)) this.#unsafe.set(record.runId, previous);
    this.#reported.set(record.runId, reportedRunOf(record));
    this.#unsaved = true;
    if (record.endTime < this.#since) return; // history: remembered, never reported
    // A run reported before whose files grew since: only what came after is new (decision 0098).
    const run = previous === undefined ? record : laterPart(record, previous);
    if (run === undefined) return;
    this.#priced.onRunStart(previous === undefined ? (start ?? record) : run);
    this.#priced.onRunEnd(run);
    this.#runs += 1;
    this.#reportedThisPass += 1;
    this.#spansSincePause += 1 + run.steps.length + run.toolCalls.length;
  }

  /** Says `p` once (a quiet file's torn or unrecognized tail included; a file still being written's not). */
  #problem(p: TranscriptProblem, quiet: boolean): void {
    // A torn last line of a file still being written is the agent mid-write, not damage.
    if (!quiet && (p.code === 'torn-tail' || p.code === 'unrecognized' || p.code === 'empty-file')) return;
    const key = `${p.file}\u0000${p.line}\u0000${p.code}`;
    if (this.#seenProblems.has(key)) return;
    if (this.#seenProblems.size >= MAX_REMEMBERED_PROBLEMS) this.#seenProblems.clear();
    this.#seenProblems.add(key);
    this.#problemCount += 1;
    this.#options.onProblem?.(p);
  }

  /** When the last of `files` named by an end hook settles, if any was (decision 0123). */
  #settleOf(files: readonly TranscriptFile[]): number | undefined {
    const notices = this.#options.notices;
    if (notices === undefined) return undefined;
    let latest: number | undefined;
    for (const file of files) {
      const ended = notices.endedAt(file.path);
      const point = ended !== undefined ? settlePoint(ended, file.mtimeMs) : undefined;
      if (point !== undefined && (latest === undefined || point > latest)) latest = point;
    }
    return latest;
  }

  #isQuiet(path: string, at: number): boolean {
    return (this.#states.get(path)?.mtimeMs ?? 0) < at - this.#options.idleMs;
  }

  /** Lists the directories and updates the file states (and the sessions, when files came or went). */
  async #listFiles(at: number): Promise<void> {
    const options = this.#options;
    const states = this.#states;
    const expanded = await expandPaths(this.#dirs, options.exclude !== undefined ? { exclude: options.exclude } : {});
    options.changes?.follow(expanded.dirs);
    // A directory the agents have not written to yet is no problem for a watch.
    for (const p of expanded.problems)
      if (p.code !== 'no-files')
        this.#problem({ file: p.path, line: 0, code: p.code, scope: 'file', message: p.message }, true);
    let membershipChanged = false;
    const listed = new Set<string>();
    for (const file of expanded.files) {
      listed.add(file.path);
      const before = states.get(file.path);
      const replaced = before !== undefined && (before.ino !== file.ino || file.size < before.size);
      const changed =
        before === undefined || before.size !== file.size || before.mtimeMs !== file.mtimeMs || before.ino !== file.ino;
      if (!changed) continue;
      let info = before?.info ?? null;
      if (before === undefined || replaced || info === null) {
        const sniffed = await sniffFile(file.path, {
          classifyTranscript: (head) => classifyTranscript(head, this.#formats),
        });
        const next =
          sniffed.ok && sniffed.transcript !== undefined && sniffed.transcript.kind !== 'other'
            ? sniffed.transcript
            : null;
        if (!sniffed.ok)
          this.#problem(
            { file: file.path, line: 0, code: sniffed.code, scope: 'file', message: sniffed.message },
            file.mtimeMs < at - options.idleMs,
          );
        if ((next === null) !== (info === null) || next?.format !== info?.format) membershipChanged = true;
        info = next;
      }
      states.set(file.path, { size: file.size, mtimeMs: file.mtimeMs, ino: file.ino, info });
      this.#seenChanged = true;
    }
    for (const path of [...states.keys()]) {
      if (listed.has(path)) continue;
      if (states.get(path)?.info !== null) membershipChanged = true;
      states.delete(path); // deleted: its runs already reported stay reported; nothing more can be read of it
      this.#seenChanged = true;
    }
    if (membershipChanged || this.#regroupDue) this.#regroup();
    this.#regroupDue = false;
  }

  /** Groups the files into sessions again, and forgets the reads of sessions whose files are gone (they are not read again). */
  #regroup(): void {
    this.#sessions = group(this.#states, this.#formats);
    const current = new Set(this.#sessions.map(readKey));
    for (const key of this.#lastRead.keys()) {
      if (current.has(key)) continue;
      this.#lastRead.delete(key);
      this.#seenChanged = true;
    }
  }

  async #onePass(): Promise<void> {
    const options = this.#options;
    this.#passes += 1;
    this.#reportedThisPass = 0;
    let sessionsRead = 0;
    const at = this.#now();
    // Taken on every pass, so a change notified during this listing makes the next pass list again.
    const notified = options.changes?.takeChanged() ?? true;
    // A hook may name a file created since the last listing.
    const hooked = options.notices?.takeFresh() ?? false;
    options.notices?.prune(at - options.idleMs);
    this.#nextWake = undefined;
    const listed =
      notified ||
      hooked ||
      options.changes?.watching !== true ||
      this.#lastListing === undefined ||
      at - this.#lastListing >= FULL_LISTING_MS;
    if (listed) {
      this.#lastListing = at;
      await this.#listFiles(at);
    }
    for (const grouped of this.#sessions) {
      if (options.signal.aborted) break;
      if (await this.#readIfDue(grouped, at)) sessionsRead += 1;
    }
    await this.#recordPass(at);
    for (const [path, ended] of this.#settledNotices.splice(0)) options.notices?.settled(path, ended);
    options.onPass?.({
      pass: this.#passes,
      files: [...this.#states.values()].filter((s) => s.info !== null).length,
      listed,
      sessionsRead,
      runsReported: this.#reportedThisPass,
    });
  }

  /** Reads `grouped` when a file changed, or once more when it has just gone quiet or settled. @returns whether it was due. */
  async #readIfDue(grouped: TranscriptSession, at: number): Promise<boolean> {
    const options = this.#options;
    // The grouping is redone only when files come or go; sizes and times are always the latest seen.
    const session = refreshed(grouped, this.#states);
    if (session === undefined) return false;
    const signature = session.files.map((f) => `${f.path}:${f.size}:${f.mtimeMs}`).join('|');
    const newest = Math.max(...session.files.map((f) => f.mtimeMs));
    const key = readKey(session);
    const last = this.#lastRead.get(key);
    const quietSince = newest + options.idleMs;
    // A file an end hook named settles: its run closes then (decision 0123).
    const settled = this.#settleOf(session.files);
    if (settled !== undefined && settled > at) this.#nextWake = Math.min(this.#nextWake ?? settled, settled);
    // Read when a file changed, or once more when the session has just gone quiet (runs without a recorded end close then).
    const due =
      last === undefined ||
      last.signature !== signature ||
      (last.at < quietSince && quietSince <= at) ||
      (settled !== undefined && last.at < settled && settled <= at);
    if (!due) return false;
    this.#lastRead.set(key, { signature, at });
    this.#seenChanged = true;
    this.#readSince.add(key);
    const format = this.#formats.find((f) => f.name === session.format);
    if (format === undefined) return true;
    await this.#read(format, session, at);
    this.#forgetSettledNotices(session.files, at);
    return true;
  }

  /**
   * After a read at `at`: each file whose end notice had settled by then was
   * read as closed, so its notice has done its work once the pass is
   * recorded. Kept, it would also settle the next turn the agent writes
   * within the late-write window of that hook (`HOOK_LATE_WRITE_MS`), and
   * close that turn in the middle (decision 0123).
   */
  #forgetSettledNotices(files: readonly TranscriptFile[], at: number): void {
    const notices = this.#options.notices;
    if (notices === undefined) return;
    for (const file of files) {
      const ended = notices.endedAt(file.path);
      if (ended === undefined) continue;
      const point = settlePoint(ended, file.mtimeMs);
      if (point !== undefined && point <= at) this.#settledNotices.push([file.path, ended]);
    }
  }

  /** `format` reads `session` into the gate. Never rejects. */
  async #read(format: TranscriptFormat, session: TranscriptSession, at: number): Promise<void> {
    const options = this.#options;
    try {
      await format.read(session, {
        listener: this.#gate,
        onProblem: (p) => this.#problem(p, this.#isQuiet(p.file, at)),
        onBytes: () => undefined,
        pause: () => {
          if (options.backpressure === undefined || this.#spansSincePause < BACKPRESSURE_SPANS) return undefined;
          this.#spansSincePause = 0;
          return options.backpressure();
        },
        ...(options.agentName !== undefined ? { agentName: options.agentName } : {}),
        live: {
          now: at,
          idleMs: options.idleMs,
          isReported: (runId, endTime) => (this.#reported.get(runId)?.end ?? -Infinity) >= endTime,
          ...(options.notices !== undefined ? { endedAt: (path: string) => options.notices?.endedAt(path) } : {}),
        },
      });
    } catch (error) {
      // A format must not reject (its contract); if one does, the session is read again on its next change.
      this.#problem(
        {
          file: session.files[0]?.path ?? session.key,
          line: 0,
          code: 'transcript-failed',
          scope: 'file',
          message: `the ${session.format} reader failed: ${String(error)}`,
        },
        true,
      );
    }
    this.#pending.clear(); // a start whose end never came (a reader that broke its contract) is not held forever
  }

  /**
   * After a pass: flushes what it reported, then writes the checkpoint; a
   * pass whose telemetry was lost is undone (its runs reported again).
   */
  async #recordPass(at: number): Promise<void> {
    const options = this.#options;
    // Reads and file states alone (no run reported) are written at most every READ_SAVE_MS, and when the watch
    // stops: a restart then reads and classifies only what changed since (decision 0120's update, 0134).
    const readsDue = this.#seenChanged && (options.signal.aborted || at - this.#lastSaved >= READ_SAVE_MS);
    if (!this.#unsaved && !readsDue) return;
    if (this.#unsaved && !(await options.flush())) {
      // Some of this pass's telemetry was lost: undo its runs and read their sessions again next pass (same ids).
      for (const [runId, before] of this.#unsafe) {
        if (before === undefined) this.#reported.delete(runId);
        else this.#reported.set(runId, before);
      }
      this.#repeated += this.#unsafe.size;
      for (const key of this.#readSince) this.#lastRead.delete(key);
      // Read again next pass, by the same notices.
      this.#settledNotices.length = 0;
    }
    this.#unsafe.clear();
    this.#readSince.clear();
    if (await this.#saveCheckpoint()) {
      this.#unsaved = false;
      this.#seenChanged = false;
      this.#lastSaved = at;
      this.#checkpointError = undefined;
    }
  }

  /** Writes the checkpoint. @returns whether it was written; else `checkpointError` says why. Never rejects. */
  async #saveCheckpoint(): Promise<boolean> {
    const options = this.#options;
    try {
      await saveCheckpoint(options.checkpointPath, {
        version: 2,
        dirs: this.#dirs,
        since: this.#since,
        reported: Object.fromEntries(this.#reported),
        read: Object.fromEntries(this.#lastRead),
        files: { classifier: this.#classifier, states: Object.fromEntries(this.#states) },
      });
      return true;
    } catch (error) {
      this.#checkpointError = `cannot write the checkpoint ${options.checkpointPath}: ${(error as Error).message}`;
      return false;
    }
  }
}

/** The sessions of the known transcript files, each format grouping its own. */
function group(states: ReadonlyMap<string, FileState>, formats: readonly TranscriptFormat[]): TranscriptSession[] {
  const files: TranscriptFile[] = [];
  for (const [path, state] of states)
    if (state.info !== null) files.push({ path, size: state.size, mtimeMs: state.mtimeMs, info: state.info });
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
    if (state?.info !== null && state !== undefined)
      files.push({ ...file, size: state.size, mtimeMs: state.mtimeMs, info: state.info });
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
