/**
 * Run tracking for dsh durable session logs (docs/PROTOCOLS.md section 5): turns the
 * session log files of one replay into runs, one per activation epoch, and
 * links child sessions to their parents across files.
 *
 * Per file: the header names the session and its parent; every event is
 * validated with `parseSessionEvent` (an invalid one is reported with its
 * file and line and skipped); events before the LAST `session/end-seed` are
 * inherited and produce nothing; after it, each `turn/start` opens an epoch
 * that runs to the next `turn/start`, and each epoch is one run accumulated
 * by the shared `RunBuilder` (the same accumulator live SDK observation
 * uses): output by the one rule over the epoch's own events only, stop
 * reason by upstream's in-process rule (or, for a continuable child, its
 * epoch rule) over the same events (`output/stop-reason`). Files are read as a stream and epochs folded as
 * they go: what is held is one record per finished epoch (bounded by its
 * output, steps and tool calls), never a file's events.
 *
 * A session that nothing links to (no parent read in this replay, no child
 * naming it) can be streamed (`stream` option): each epoch is reported as it
 * closes, so memory is bounded by the open epoch whatever the number of
 * turns. Runs of linked sessions are held while files are read, since a
 * child's parent run may be in a file read later; `emit()` links every child epoch to the parent
 * session's run whose time span contains the epoch's start (else the parent's
 * last run that started before it) and reports the runs depth first, so a
 * parent's `onRunStart` precedes its children's and children end before
 * their parent.
 *
 * Owns no output rule (`output/`), no byte-level reading (`wire/durable-log`),
 * no telemetry and no file discovery (the replay).
 *
 * @module subagent-otel/observe/log-tracker
 */
import { readDurableLogBatches, type DurableLogProblemCode } from '../wire/durable-log.js';
import { Buffer } from 'node:buffer';
import { fileChunks } from '../wire/file-chunks.js';
import { isKnownEvent, parseSessionEvent, type SessionEvent } from '../wire/events.js';
import { ConsumedWorkFold } from '../output/consumed-work.js';
import { stopReasonOf } from '../output/stop-reason.js';
import { RunBuilder, guardListener } from './run-builder.js';
import type { RunListener, RunRecord, RunStart } from './run-record.js';
import { errorMessage } from '../wire/error-text.js';

/** `origin` passed to `RunListener.onMalformed` for log records this tracker skips. */
export const LOG_ORIGIN = 'log' as const;

/** Agent name of log runs when neither the options nor the log name a provider. */
export const LOG_DEFAULT_AGENT_NAME = 'dsh' as const;

/**
 * Why part of a log was not replayed: a code of the wire reader
 * (`DurableLogProblemCode`), `invalid-event` (a record that is not a valid
 * session event), or `duplicate-session` (a second file for a session id
 * already read in this replay).
 */
export type LogProblemCode = DurableLogProblemCode | 'invalid-event' | 'duplicate-session';

/**
 * One defect of one log file. `line` is 1-based, 0 for the file as a whole.
 * `scope` says what was lost: `file` (nothing of the file is replayed) or
 * `record` (one record, or the rest of the file after a corrupt zstd frame;
 * complete records before it stand). `message` does not repeat file and line.
 */
export interface LogProblem {
  readonly file: string;
  readonly line: number;
  readonly code: LogProblemCode;
  readonly scope: 'file' | 'record';
  readonly message: string;
}

/** What reading one log file gave. */
export interface LogFileResult {
  readonly file: string;
  /** From the header; absent when the file has no valid header. */
  readonly sessionId?: string;
  readonly parentSessionId?: string;
  /** Event records read (each member of a packed row counts), valid or not; the header excluded. */
  readonly records: number;
  /** Runs (epochs after the last `session/end-seed`) this file contributes. */
  readonly runs: number;
  /** Problems found; each was also passed to `onProblem`. */
  readonly problems: number;
  /** True when nothing of the file is replayed (unreadable, empty, not a log, duplicate). */
  readonly isSkipped: boolean;
}

/** Options of {@link LogTracker}. */
export interface LogTrackerOptions {
  /** `gen_ai.agent.name` of every run. Default: the run's provider (from `request/context`), else `dsh`. */
  readonly agentName?: string;
  /** Longest log line kept, in bytes (default 16 MiB, the wire reader's). */
  readonly maxLineBytes?: number;
  /**
   * Decides, when a file's header is read, whether its runs are reported as
   * each epoch closes (streamed) instead of held until `emit()`. Stream a
   * session that is no other session's parent and whose parent is not read
   * in this replay: nothing needs linking to it. A streamed file is read
   * once: its epochs since the last `session/end-seed` read so far (before
   * which epochs are inherited) are held, up to {@link MAX_DEFERRED_RUNS},
   * and reported when the file ends; past that bound, one scan of the file
   * finds its last `session/end-seed` and the rest is reported as each
   * epoch closes (decision 0128). A `readSource` cannot be read twice, so
   * its runs are always held. Default: hold all.
   */
  readonly stream?: (sessionId: string, parentSessionId: string | undefined) => boolean;
}

/** Per-file hooks of {@link LogTracker.readFile}. */
export interface ReadLogHooks {
  /** Called for each problem, in file order. Must not throw. */
  readonly onProblem?: (problem: LogProblem) => void;
  /** Called with the byte count of each chunk read from disk (compressed bytes for zstd). Must not throw. */
  readonly onBytes?: (bytes: number) => void;
  /**
   * Awaited between batches of records (one per 4 KiB of input), so a caller
   * can hold reading while its exporters catch up with streamed runs
   * (backpressure). Must not reject.
   */
  readonly pause?: () => Promise<void> | undefined;
}

/** A finished epoch waiting for `emit()`. */
interface PendingRun {
  readonly start: RunStart;
  readonly record: RunRecord;
}

interface SessionRuns {
  readonly sessionId: string;
  readonly parentSessionId: string | undefined;
  /** In start order (epochs of one file are read in order). */
  readonly runs: PendingRun[];
}

/** File-level wire problems: nothing of the file is replayed. */
const FILE_LEVEL_CODES: ReadonlySet<LogProblemCode> = new Set([
  'unreadable',
  'empty-file',
  'not-a-session-log',
  'duplicate-session',
]);

/**
 * Durable session logs to runs. Call {@link LogTracker.readFile} for each
 * file (any order, one at a time), then {@link LogTracker.emit} once to
 * report every run to the listener. Never throws on any file content.
 *
 * @example
 * const logs = new LogTracker(listener);
 * for (const file of files) await logs.readFile(file, { onProblem: print });
 * logs.emit();
 */
export class LogTracker {
  readonly #listener: RunListener;
  readonly #options: LogTrackerOptions;
  readonly #sessions = new Map<string, SessionRuns>();
  /** Session id -> the file it was read from, to refuse a second copy. */
  readonly #files = new Map<string, string>();

  constructor(listener: RunListener, options: LogTrackerOptions = {}) {
    this.#listener = guardListener(listener);
    this.#options = options;
  }

  /**
   * Reads one session log (plain or zstd, detected by magic bytes), folding
   * its epochs into pending runs. Each problem goes to `hooks.onProblem`;
   * skipped records (an invalid event, a line that is not JSON, a torn tail,
   * a corrupt zstd frame, ...) also go to the listener's `onMalformed('log',
   * { code, message })` with `file:line` in the message.
   *
   * @returns what the file gave. Never rejects: a missing or unreadable
   *   file, an empty file, a file that is not a session log, or a second file
   *   for an already-read session id gives `isSkipped: true` and one problem.
   */
  async readFile(path: string, hooks: ReadLogHooks = {}): Promise<LogFileResult> {
    return this.#read(path, fileChunks(path, hooks.onBytes), hooks, () => lastEndSeedLine(path, this.#maxLineOption()));
  }

  /**
   * {@link LogTracker.readFile} over bytes from elsewhere; `name` stands for
   * the file in problems and messages. An error thrown by iterating `source`
   * is reported as `unreadable` (file scope before the header, else record
   * scope: the records before it stand), never rethrown.
   */
  async readSource(name: string, source: AsyncIterable<Uint8Array>, hooks: ReadLogHooks = {}): Promise<LogFileResult> {
    return this.#read(name, source, hooks, undefined);
  }

  /**
   * Reads one file. A streamed one holds its epochs since the last
   * `session/end-seed` read so far and reports them when the file ends; when
   * more than {@link MAX_DEFERRED_RUNS} are held, `seedLine` (a file that can
   * be read again) tells the line of its last `session/end-seed`, and runs
   * after it are reported as they close.
   */
  async #read(
    name: string,
    source: AsyncIterable<Uint8Array>,
    hooks: ReadLogHooks,
    seedLine: (() => Promise<number>) | undefined,
  ): Promise<LogFileResult> {
    const reader = new SessionFileReader(name, this.#options, (problem) => {
      if (problem.scope === 'record') {
        this.#guard(() =>
          this.#listener.onMalformed?.(LOG_ORIGIN, {
            code: problem.code,
            message: `${name}:${problem.line}: ${problem.message}`,
          }),
        );
      }
      hooks.onProblem?.(problem);
    });
    try {
      // Batches, not single records: the records of a slice are handled synchronously.
      batches: for await (const batch of readDurableLogBatches(source, this.#maxLineOption())) {
        for (const record of batch) {
          if (record.kind === 'header') {
            const previous = this.#files.get(record.value.id);
            if (previous !== undefined) {
              reader.problem(
                0,
                'duplicate-session',
                `session ${record.value.id} was already read from ${previous}; this copy is skipped`,
              );
              break batches;
            }
            this.#files.set(record.value.id, name);
            reader.header(record.value.id, record.value['parentSession'], record.value['createdAt']);
            const stream = this.#options.stream;
            if (
              seedLine !== undefined &&
              stream !== undefined &&
              this.#guarded(() => stream(record.value.id, reader.parentSessionId))
            )
              reader.isDeferring = true;
          } else if (record.kind === 'event') {
            reader.event(record.value, record.line, record.member);
          } else {
            reader.problem(record.line, record.code, record.message);
          }
        }
        if (seedLine !== undefined && reader.isDeferring && reader.heldRuns > MAX_DEFERRED_RUNS) {
          const last = await seedLine();
          await this.#reportPausing(
            reader.streamTo(last, (run) => this.#report(run, undefined)),
            hooks,
          );
        }
        const pausing = hooks.pause?.();
        if (pausing !== undefined) await pausing;
      }
    } catch (error) {
      // readDurableLogBatches never throws for content: this is the source failing (missing file, EISDIR, EACCES, EIO).
      const reason = errorMessage(error);
      if (reader.sessionId === undefined) reader.problem(0, 'unreadable', `cannot read the file: ${reason}`);
      else reader.problem(0, 'unreadable', `reading stopped part-way (${reason}); the records before stand`, 'record');
    }
    const runs = reader.finish();
    if (reader.isDeferring && !reader.isSkipped) {
      // Read to its end: no later `session/end-seed` can make these epochs inherited.
      reader.streamedRuns += runs.length;
      await this.#reportPausing(runs, hooks);
    } else if (reader.sessionId !== undefined && !reader.isSkipped && !reader.isStreamed) {
      this.#sessions.set(reader.sessionId, {
        sessionId: reader.sessionId,
        parentSessionId: reader.parentSessionId,
        runs,
      });
    }
    return {
      file: name,
      ...(reader.sessionId !== undefined ? { sessionId: reader.sessionId } : {}),
      ...(reader.parentSessionId !== undefined ? { parentSessionId: reader.parentSessionId } : {}),
      records: reader.records,
      runs: reader.isSkipped ? 0 : reader.isStreamed ? reader.streamedRuns : runs.length,
      problems: reader.problems,
      isSkipped: reader.isSkipped,
    };
  }

  /**
   * Links and reports every pending run, then forgets them. A run of a
   * session whose header names a parent session that was read gets
   * `parentRunId`: the parent's run whose `[startTime, endTime]` contains
   * the child run's start, else the parent's last run that started at or
   * before it, else none. Runs are reported depth first: roots by start time
   * (then run id), `onRunStart` of a run, then its children the same way,
   * then its `onRunEnd`. A link that would form a cycle is dropped.
   * Calling it again reports only runs read since. Never throws (a throwing
   * listener is contained, and the other runs are still reported).
   */
  emit(): void {
    for (const tree of this.#heldTrees()) tree();
  }

  /**
   * {@link LogTracker.emit}, pausing between trees of linked runs (a root run
   * and everything nested under it) so the caller's exporters can catch up.
   * Never rejects (`pause` must not reject).
   */
  async emitPausing(pause: () => Promise<void> | undefined): Promise<void> {
    for (const tree of this.#heldTrees()) {
      tree();
      const pausing = pause();
      if (pausing !== undefined) await pausing;
    }
  }

  /** Links the held runs and forgets them; @returns one reporting step per tree of linked runs, in report order. */
  #heldTrees(): Array<() => void> {
    const runs: PendingRun[] = [];
    // One push per run: a session of 100,000+ epochs would overflow the stack as spread arguments.
    for (const session of this.#sessions.values()) for (const run of session.runs) runs.push(run);
    const parentOf = new Map<string, string>();
    for (const session of this.#sessions.values()) {
      if (session.parentSessionId === undefined) continue;
      const parent = this.#sessions.get(session.parentSessionId);
      if (parent === undefined) continue;
      for (const run of session.runs) {
        const parentRun = enclosingRun(parent.runs, run.start.startTime);
        if (parentRun !== undefined && parentRun.start.runId !== run.start.runId)
          parentOf.set(run.start.runId, parentRun.start.runId);
      }
    }
    this.#sessions.clear();

    const children = new Map<string, PendingRun[]>();
    const roots: PendingRun[] = [];
    for (const run of runs) {
      const parentId = parentOf.get(run.start.runId);
      if (parentId === undefined) {
        roots.push(run);
        continue;
      }
      const list = children.get(parentId) ?? [];
      list.push(run);
      children.set(parentId, list);
    }
    const emitted = new Set<string>();
    const visit = (run: PendingRun, parentRunId: string | undefined): void => {
      emitted.add(run.start.runId);
      this.#reportStart(run, parentRunId);
      for (const child of byStart(children.get(run.start.runId) ?? [])) {
        if (!emitted.has(child.start.runId)) visit(child, run.start.runId);
      }
      this.#reportEnd(run, parentRunId);
    };
    const trees: Array<() => void> = byStart(roots).map((root) => () => visit(root, undefined));
    // Runs only reachable through a cycle of links (clock-skewed logs naming each other as parents): report them unlinked.
    trees.push(() => {
      for (const run of byStart(runs)) if (!emitted.has(run.start.runId)) visit(run, undefined);
    });
    return trees;
  }

  /** Reports runs in order, awaiting `hooks.pause` after each (backpressure, as between batches). */
  async #reportPausing(runs: readonly PendingRun[], hooks: ReadLogHooks): Promise<void> {
    for (const run of runs) {
      this.#report(run, undefined);
      const pausing = hooks.pause?.();
      if (pausing !== undefined) await pausing;
    }
  }

  /** Reports one run, start then end. */
  #report(run: PendingRun, parentRunId: string | undefined): void {
    this.#reportStart(run, parentRunId);
    this.#reportEnd(run, parentRunId);
  }

  #reportStart(run: PendingRun, parentRunId: string | undefined): void {
    this.#guard(() => this.#listener.onRunStart(parentRunId !== undefined ? { ...run.start, parentRunId } : run.start));
  }

  #reportEnd(run: PendingRun, parentRunId: string | undefined): void {
    this.#guard(() => this.#listener.onRunEnd(parentRunId !== undefined ? { ...run.record, parentRunId } : run.record));
  }

  #guarded(decide: () => boolean): boolean {
    try {
      return decide();
    } catch {
      // A throwing `stream` predicate: hold the runs (the safe, unstreamed path).
      return false;
    }
  }

  #maxLineOption(): { maxLineBytes?: number } {
    const { maxLineBytes } = this.#options;
    return maxLineBytes !== undefined ? { maxLineBytes } : {};
  }

  #guard(fn: () => void): void {
    try {
      fn();
    } catch {
      // A RunListener must not throw (its contract); if one does, the other runs are still reported.
    }
  }
}

/** An epoch being folded: the shared accumulator plus the work account its stop reason comes from. */
interface OpenEpoch {
  readonly builder: RunBuilder;
  readonly work: ConsumedWorkFold;
}

/**
 * Folds one file's records into epochs. Holds the open epoch's builder and
 * the records of finished epochs since the last `session/end-seed`.
 *
 * Stop reasons follow upstream's readers (docs/decisions 0011): a
 * continuable child (its `subagent/descriptor` says `mode: 'continuable'`)
 * by the epoch rule, every other log by the in-process rule, each over the
 * epoch's own events. A child session (its header names a parent) whose log
 * holds no turn after its last `session/end-seed` is still one run: the
 * delegation failed before the child's first turn, and the parent received
 * a result for it.
 */
class SessionFileReader {
  readonly #file: string;
  readonly #options: LogTrackerOptions;
  readonly #report: (problem: LogProblem) => void;
  sessionId: string | undefined;
  parentSessionId: string | undefined;
  records = 0;
  problems = 0;
  isSkipped = false;
  #finished: PendingRun[] = [];
  #open: OpenEpoch | undefined;
  /** Events after the last `session/end-seed` and before the first `turn/start`, for a child whose log holds no turn. */
  #preamble: OpenEpoch | undefined;
  #epoch = 0;
  #provider: string | undefined;
  #model: string | undefined;
  /** From `subagent/descriptor`: the subagent provider that ran this child, and whether it is continuable. */
  #subagentProvider: string | undefined;
  #continuable = false;
  /** Latest time known: the header's `createdAt`, then each event's `time` (events may carry none). */
  #time = 0;
  /** Line of the event being folded. */
  #line = 0;
  /** Set when runs are streamed: the file's last `session/end-seed` line (0: none), and where runs go. */
  #streaming: { readonly lastSeedLine: number; readonly emit: (run: PendingRun) => void } | undefined;
  streamedRuns = 0;

  constructor(file: string, options: LogTrackerOptions, report: (problem: LogProblem) => void) {
    this.#file = file;
    this.#options = options;
    this.#report = report;
  }

  header(id: string, parentSession: unknown, createdAt: unknown): void {
    this.sessionId = id;
    if (typeof parentSession === 'string' && parentSession !== '') this.parentSessionId = parentSession;
    if (typeof createdAt === 'number' && Number.isFinite(createdAt)) this.#time = createdAt;
  }

  /**
   * Set when the header is read and the session's runs are to be streamed:
   * its epochs since the last `session/end-seed` read so far are held
   * ({@link SessionFileReader.heldRuns}) until the file ends or
   * {@link SessionFileReader.streamTo} is called.
   */
  isDeferring = false;

  /** Epochs finished since the last `session/end-seed` read so far, not reported yet. */
  get heldRuns(): number {
    return this.#finished.length;
  }

  /**
   * Reports each epoch as it closes from now on; epochs before
   * `lastSeedLine` (the file's last `session/end-seed`, 0 for none) are
   * inherited and dropped.
   * @returns the held epochs to report now: none when `lastSeedLine` lies
   *   ahead (they are inherited), else all of them (they follow it).
   */
  streamTo(lastSeedLine: number, emit: (run: PendingRun) => void): PendingRun[] {
    this.#streaming = { lastSeedLine, emit };
    this.isDeferring = false;
    const held = this.#line < lastSeedLine ? [] : this.#finished;
    this.#finished = [];
    this.streamedRuns += held.length;
    return held;
  }

  get isStreamed(): boolean {
    return this.#streaming !== undefined || this.isDeferring;
  }

  problem(
    line: number,
    code: LogProblemCode,
    message: string,
    scope: LogProblem['scope'] = FILE_LEVEL_CODES.has(code) ? 'file' : 'record',
  ): void {
    if (scope === 'file') this.isSkipped = true;
    this.problems += 1;
    this.#report({ file: this.#file, line, code, scope, message });
  }

  event(value: Record<string, unknown>, line: number, member: number | undefined): void {
    this.records += 1;
    this.#line = line;
    const parsed = parseSessionEvent(value);
    if (!parsed.ok) {
      const where = member !== undefined ? `member ${member} of the packed row` : 'the event';
      this.problem(line, 'invalid-event', `${where} is not a valid session event (${parsed.error.message}); skipped`);
      return;
    }
    const event = parsed.event;
    if (event.time !== undefined) this.#time = event.time;
    if (event.type === 'subagent/descriptor') this.#noteDescriptor(event.data);
    if (isKnownEvent(event)) {
      if (event.type === 'session/end-seed') {
        // Everything so far was inherited (resume, fork, seed): no epoch before it is this session's own.
        this.#finished = [];
        this.#open = undefined;
        this.#preamble = undefined;
        this.#epoch = 0;
        return;
      }
      if (event.type === 'request/context') {
        // The route is session state, valid for later epochs too (it is logged only when it changes).
        if (event.data.provider !== undefined) this.#provider = event.data.provider;
        if (event.data.model !== undefined) this.#model = event.data.model;
      }
      if (event.type === 'turn/start') {
        this.#closeEpoch();
        this.#preamble = undefined;
        this.#open = this.#openEpoch(this.#time);
      }
    }
    let target = this.#open;
    if (target === undefined && this.#epoch === 0 && this.parentSessionId !== undefined) {
      this.#preamble ??= this.#openEpoch(this.#time, false);
      target = this.#preamble;
    }
    target?.builder.pushEvent(event, this.#time);
    target?.work.push(event);
  }

  /** Closes the last epoch. @returns the runs of the file since its last `session/end-seed`. */
  finish(): PendingRun[] {
    this.#closeEpoch();
    // `#epoch` counts the turns after the last `session/end-seed`, whether their runs were held or already streamed.
    if (this.#epoch === 0 && this.parentSessionId !== undefined && !this.isSkipped && this.sessionId !== undefined) {
      // A child whose log holds no turn: the delegation ended before its first turn; still one run.
      this.#open = this.#preamble ?? this.#openEpoch(this.#time);
      this.#closeEpoch();
    }
    return this.#finished;
  }

  #noteDescriptor(data: unknown): void {
    if (typeof data !== 'object' || data === null) return;
    const d = data as { mode?: unknown; provider?: unknown };
    if (typeof d.provider === 'string' && d.provider !== '') this.#subagentProvider = d.provider;
    if (d.mode === 'continuable') this.#continuable = true;
    else if (d.mode === 'one-shot') this.#continuable = false;
  }

  #openEpoch(time: number, counts = true): OpenEpoch {
    const sessionId = this.sessionId ?? '';
    const start: RunStart = {
      runId: `${sessionId}#${this.#epoch}`,
      source: 'log',
      agentName: this.#options.agentName ?? this.#provider ?? LOG_DEFAULT_AGENT_NAME,
      sessionId,
      ...(this.parentSessionId !== undefined ? { parentSessionId: this.parentSessionId } : {}),
      startTime: time,
      ...(this.#provider !== undefined ? { provider: this.#provider } : {}),
      ...(this.#model !== undefined ? { model: this.#model } : {}),
    };
    if (counts) this.#epoch += 1;
    return { builder: new RunBuilder(start), work: new ConsumedWorkFold() };
  }

  #closeEpoch(): void {
    const open = this.#open;
    if (open === undefined) return;
    this.#open = undefined;
    const { builder, work } = open;
    const account = work.result;
    const finished = builder.finish({
      endTime: builder.turnEndTime ?? builder.lastTime,
      stopReason: stopReasonOf(this.#continuable ? 'epoch' : 'in-process', builder.turnEnd, account),
    });
    // The agent name is settled at the end, when the epoch's own route is known; start and end agree on it.
    const agentName = this.#options.agentName ?? finished.provider ?? LOG_DEFAULT_AGENT_NAME;
    const subagent = this.#subagentProvider !== undefined ? { subagentProvider: this.#subagentProvider } : {};
    const run = {
      start: { ...builder.start, agentName, ...subagent },
      record: { ...finished, agentName, ...subagent },
    };
    const streaming = this.#streaming;
    if (streaming === undefined) {
      this.#finished.push(run);
      return;
    }
    // A later session/end-seed would discard this epoch as inherited: it is never reported.
    if (this.#line < streaming.lastSeedLine) return;
    this.streamedRuns += 1;
    streaming.emit(run);
  }
}

/**
 * Epochs a streamed file holds (since its last `session/end-seed` read so
 * far) before its last `session/end-seed` is looked up by a scan of the
 * file: most logs end within it and are read once (decision 0128).
 */
export const MAX_DEFERRED_RUNS = 256;

/**
 * The line of the last `session/end-seed` event of the log at `path` (0 when
 * there is none, or the file cannot be read: then the main pass reports why),
 * as the one durable-log reader numbers lines and decides what is a valid
 * event (only lines that mention the event type are parsed). A second pass over the file, taken only by a streamed file holding
 * more than {@link MAX_DEFERRED_RUNS} epochs.
 */
async function lastEndSeedLine(path: string, options: { maxLineBytes?: number }): Promise<number> {
  let last = 0;
  try {
    const lineFilter = (bytes: Uint8Array): boolean =>
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(END_SEED_BYTES) !== -1;
    for await (const batch of readDurableLogBatches(fileChunks(path), { ...options, lineFilter })) {
      for (const record of batch) {
        if (record.kind !== 'event' || record.value['type'] !== END_SEED) continue;
        const parsed = parseSessionEvent(record.value);
        if (parsed.ok && parsed.event.type === END_SEED) last = record.line;
      }
    }
  } catch {
    // Unreadable: the main pass reads the same file and reports the problem.
  }
  return last;
}

const END_SEED = 'session/end-seed';
const END_SEED_BYTES = Buffer.from(END_SEED);

/** The parent's run containing `time`, else its last run started at or before `time`. */
function enclosingRun(runs: readonly PendingRun[], time: number): PendingRun | undefined {
  let before: PendingRun | undefined;
  for (const run of runs) {
    if (run.start.startTime <= time && time <= run.record.endTime) return run;
    if (run.start.startTime <= time && (before === undefined || run.start.startTime >= before.start.startTime))
      before = run;
  }
  return before;
}

function byStart(runs: readonly PendingRun[]): PendingRun[] {
  return [...runs].sort(
    (a, b) =>
      a.start.startTime - b.start.startTime ||
      (a.start.runId < b.start.runId ? -1 : a.start.runId > b.start.runId ? 1 : 0),
  );
}
