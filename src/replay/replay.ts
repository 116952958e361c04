/**
 * `subagent-otel replay` without the command line: turns captured streams
 * and durable session logs into the same runs live observation produces, and
 * sums them up.
 *
 * Each file's format is told from its first line (`input-files`):
 * - durable session logs go to the `LogTracker` (one run per epoch). Line 1
 *   of every file is read first, so each session is known before any is
 *   replayed: a session nothing links to is streamed (each run reported as
 *   it closes); sessions linked as parent and child across files are held
 *   and reported after every file is read, parents first, children nested;
 * - captures written by `proxy --capture` are fed record by record, with
 *   their recorded direction and time, through `FrameTap.observeLine` into
 *   the tracker the live proxy would use (the header's protocol, else the
 *   `ProtocolSniffer`), so replay and live observation share one path;
 * - raw NDJSON JSON-RPC (a stream saved without our header) is fed the same
 *   way as agent-to-client and client-to-agent frames told apart by shape
 *   (requests and notifications the client sends vs. what the agent sends,
 *   see {@link directionOfRawFrame}); raw captures carry no times, so line k
 *   (0-based) gets the synthetic time `file mtime + k` ms.
 *
 * Every defect is reported with its file and line, and the rest goes on:
 * a bad record is skipped, a torn tail keeps the complete records before it,
 * an unreadable, empty, binary or unrecognized file is skipped whole. Owns
 * the orchestration and the summary; no output rule, no telemetry.
 *
 * @module subagent-otel/replay/replay
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { reportedOutputMatches } from '../output/result.js';
import { isCaptureHeader, parseCaptureHeader, parseCaptureRecord } from '../wire/capture.js';
import { parseFrame, type JsonRpcFrame } from '../wire/jsonrpc.js';
import { decodeUtf8Line } from '../wire/ndjson.js';
import { AcpTracker } from '../observe/acp-tracker.js';
import type { Direction, FrameObserver } from '../observe/frame-observer.js';
import { FrameTap } from '../observe/frame-tap.js';
import { LogTracker } from '../observe/log-tracker.js';
import { ProtocolSniffer, type Protocol } from '../observe/protocol-sniffer.js';
import type { RunListener, RunRecord, RunStart } from '../observe/run-record.js';
import { SdkTracker } from '../observe/sdk-tracker.js';
import { conventionTokenCounts } from '../telemetry/token-usage.js';
import { expandPaths, sniffFile, type InputFile, type InputFormat, type SniffResult } from './input-files.js';
import { readLines, type InputLine } from '../wire/input-lines.js';
import type { TranscriptFile, TranscriptReadContext } from '../transcripts/format.js';
import { classifyTranscript, readTranscripts } from '../transcripts/transcripts.js';
import { fileChunks } from '../wire/file-chunks.js';
import { readTranscriptsInParallel } from './transcript-pool.js';

/** `origin` passed to `RunListener.onMalformed` for capture lines the replay itself rejects. */
export const CAPTURE_ORIGIN = 'capture' as const;

/** Diagnostic of runs still open when a capture ends. */
export const CAPTURE_ENDED_DIAGNOSTIC = 'the capture ends before the run finished';

/**
 * One defect, at its file and 1-based line (0: the file as a whole).
 * `scope` says what was lost: `file` (nothing of the file was replayed) or
 * `record` (one record, or the rest of the file after an undecodable part;
 * complete records before it stand). `message` does not repeat file and line.
 */
export interface ReplayProblem {
  readonly file: string;
  readonly line: number;
  readonly code: string;
  readonly scope: 'file' | 'record';
  readonly message: string;
}

/** Progress of a replay, reported as bytes are read. */
export interface ReplayProgress {
  readonly filesDone: number;
  readonly filesTotal: number;
  /** Bytes read from disk so far (compressed bytes for zstd files). */
  readonly bytesDone: number;
  readonly bytesTotal: number;
  /** The file being read, when one is. */
  readonly file?: string;
}

/** Options of {@link replayPaths}. */
export interface ReplayOptions {
  /** Protocol of raw NDJSON files (captures without our header). Default `auto`: decided by the `ProtocolSniffer`. */
  readonly protocol?: Protocol | 'auto';
  /** `gen_ai.agent.name` of every run. Default: each tracker's own (provider, agent info, `dsh`/`acp`). */
  readonly agentName?: string;
  /** Directories never entered while expanding directories (e.g. the telemetry output directory). */
  readonly exclude?: readonly string[];
  /** Called at each file's start and end and after each chunk read. Must not throw. */
  readonly onProgress?: (progress: ReplayProgress) => void;
  /** Called for each problem as it is found. Must not throw. */
  readonly onProblem?: (problem: ReplayProblem) => void;
  /** Called with each run as it is reported, after the listener (the command's run rows). Must not throw. */
  readonly onRun?: (record: RunRecord) => void;
  /**
   * Backpressure: awaited whenever runs carrying {@link BACKPRESSURE_SPANS}
   * spans or more were reported since the last wait; resolves when the
   * listener's exporters have taken what they were given (e.g. the tracer
   * provider's `forceFlush`). Reading waits meanwhile, so a replay of any
   * size never outruns a bounded export queue. Must not reject.
   */
  readonly backpressure?: () => Promise<void>;
  /**
   * Threads reading coding agents' transcripts (`--jobs`): 1 (default) in
   * this thread; more, a pool of worker threads reading whole sessions, with
   * the same runs, problems, progress and summary in the same order
   * (`transcript-pool`). Session logs and captures are read in this thread
   * whatever the number.
   */
  readonly jobs?: number;
  /** The worker module of the pool (tests); default the one beside `transcript-pool`. */
  readonly workerUrl?: URL;
}

/** Spans (a run's `invoke_agent`, `chat` and `execute_tool`) reported between two backpressure waits at most, plus one run's. */
export const BACKPRESSURE_SPANS = 512;

/** What one input file gave. */
export interface FileSummary {
  readonly path: string;
  /** Absent when the format could not be told (missing, empty, binary, unrecognized). */
  readonly format?: InputFormat;
  /** Protocol the capture was observed as, for captures and raw NDJSON that decided one. */
  readonly protocol?: Protocol;
  /** Records read: log events (packed members counted one by one), capture records or NDJSON lines. */
  readonly records: number;
  readonly runs: number;
  readonly problems: number;
  /** True when nothing of the file was replayed. */
  readonly isSkipped: boolean;
  /**
   * A coding agent's file that holds no run (an auto-compaction summariser,
   * a side question, a workflow journal, a sidecar read with its session):
   * what it is. Such a file is read (not skipped) and gives no run.
   */
  readonly what?: string;
  /** A coding agent's records of types its reader does not know, by type: read past (decision 0099). */
  readonly unknownRecords?: Readonly<Record<string, number>>;
}

/** Runs of one stop reason. */
export interface StopReasonSummary {
  readonly stopReason: string;
  readonly runs: number;
  /** `runs` / all runs, 0..1. */
  readonly share: number;
  /** Input tokens as `gen_ai.usage.input_tokens` counts them: uncached input plus cache reads and writes. */
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** What these runs cost in US dollars, when any of them was priced (transcripts). */
  readonly costUsd?: number;
}

/** The result of a replay. */
export interface ReplaySummary {
  /** One entry per input file, in replay order, then one per path that gave no file. */
  readonly files: readonly FileSummary[];
  readonly runs: number;
  /** By stop reason, most runs first (ties by name). */
  readonly stopReasons: readonly StopReasonSummary[];
  /** `max-tokens` runs / all runs; 0 when there were no runs. */
  readonly truncationRate: number;
  /** Runs whose runtime-reported output differs from the selected output. */
  readonly mismatches: number;
  /**
   * What the runs cost, when any was priced (transcripts): the sum of every
   * run's own cost in US dollars, and the models the price table did not know.
   */
  readonly cost?: { readonly amountUsd: number; readonly unpricedModels: readonly string[] };
  readonly problems: number;
  /** Files of which nothing was replayed, and records (or file tails) skipped in files that were. */
  readonly skipped: { readonly files: number; readonly records: number };
  /**
   * Records of coding agents' transcripts whose type the reader does not
   * know, by `<format> <type>`: read past, never a problem, never a reason
   * to skip a file (decision 0099). Empty when there were none.
   */
  readonly unknownRecords: Readonly<Record<string, number>>;
}

/**
 * Replays every file under `paths` into `listener`, in order, and sums up
 * the runs it reported. Runs of captures and of unlinked session logs are
 * reported while their file is read; runs of sessions linked across files
 * after the last file (so that a child's parent can be in any file). With
 * `options.backpressure`, reading waits for the exporters every
 * {@link BACKPRESSURE_SPANS} spans: memory stays bounded by the largest run
 * (and the linked sessions held), whatever the number of runs or files.
 *
 * @returns the summary. Never rejects for any input (missing, unreadable,
 *   empty, binary, damaged files are problems); a listener that throws is
 *   contained (the `RunListener` contract forbids it).
 */
export async function replayPaths(
  paths: readonly string[],
  listener: RunListener,
  options: ReplayOptions = {},
): Promise<ReplaySummary> {
  const stats = new SummaryListener(listener, options.onRun);
  const expanded = await expandPaths(paths, options.exclude !== undefined ? { exclude: options.exclude } : {});
  const ledger = new ReplayLedger(
    options,
    expanded.files.length,
    expanded.files.reduce((sum, file) => sum + file.size, 0),
  );

  // Line 1 of every file first: which sessions link to which, before any run is reported.
  const sniffs: SniffResult[] = [];
  for (const { path } of expanded.files) sniffs.push(await sniffFile(path, { classifyTranscript }));
  const { sessions, linked } = linkedSessions(sniffs);
  const pause = (): Promise<void> | undefined => stats.pause(options.backpressure);
  const logs = new LogTracker(stats, {
    ...(options.agentName !== undefined ? { agentName: options.agentName } : {}),
    stream: (sessionId, parentSessionId) =>
      !linked.has(sessionId) && (parentSessionId === undefined || !sessions.has(parentSessionId)),
  });
  const context: ReplayContext = { stats, options, ledger, logs, pause, transcripts: [] };

  for (const [index, file] of expanded.files.entries()) await replayFile(context, file, index, sniffs[index]);

  await logs.emitPausing(pause);
  if (context.transcripts.length > 0) await replayTranscriptFiles(context);
  await stats.settle(options.backpressure);
  for (const problem of expanded.problems) {
    ledger.report({ file: problem.path, line: 0, code: problem.code, scope: 'file', message: problem.message });
    ledger.skipped.files += 1;
    ledger.files.push({ path: problem.path, records: 0, runs: 0, problems: 1, isSkipped: true });
  }
  return stats.summary(ledger.files, ledger.problems.length, ledger.skipped);
}

/**
 * What one {@link replayPaths} call collects as it goes: the problems (also
 * passed to `options.onProblem` as found), the skipped files and records,
 * the file summaries in replay order, and the bytes read (passed to
 * `options.onProgress`).
 */
class ReplayLedger {
  readonly problems: ReplayProblem[] = [];
  readonly skipped = { files: 0, records: 0 };
  readonly files: FileSummary[] = [];
  readonly #problemsByFile = new Map<string, number>();
  readonly #options: ReplayOptions;
  readonly filesTotal: number;
  readonly #bytesTotal: number;
  /** Bytes of the files finished so far (transcripts excepted: they are read after the loop). */
  #bytesBefore = 0;
  #bytesDone = 0;

  constructor(options: ReplayOptions, filesTotal: number, bytesTotal: number) {
    this.#options = options;
    this.filesTotal = filesTotal;
    this.#bytesTotal = bytesTotal;
  }

  /** Records `problem` (a `record` one counts as a skipped record) and passes it to `options.onProblem`. */
  readonly report = (problem: ReplayProblem): void => {
    this.problems.push(problem);
    this.#problemsByFile.set(problem.file, (this.#problemsByFile.get(problem.file) ?? 0) + 1);
    if (problem.scope === 'record') this.skipped.records += 1;
    this.#options.onProblem?.(problem);
  };

  /** Problems reported for `file` so far. */
  problemsOf(file: string): number {
    return this.#problemsByFile.get(file) ?? 0;
  }

  /** Reports progress: `filesDone` files done, `file` being read (when one is). */
  progress(filesDone: number, file?: string): void {
    this.#options.onProgress?.({
      filesDone,
      filesTotal: this.filesTotal,
      bytesDone: this.#bytesDone,
      bytesTotal: this.#bytesTotal,
      ...(file !== undefined ? { file } : {}),
    });
  }

  /** Counts `bytes` more read from `file` and reports progress. */
  addBytes(file: string, filesDone: number, bytes: number): void {
    this.#bytesDone += bytes;
    this.progress(filesDone, file);
  }

  /** A byte counter for `file` (see {@link addBytes}). */
  onBytes(file: string, filesDone: number): (bytes: number) => void {
    return (bytes) => this.addBytes(file, filesDone, bytes);
  }

  /** Marks a file of `size` bytes done (its bytes all counted, whatever was read) and reports progress. */
  fileDone(size: number, filesDone: number): void {
    this.#bytesBefore += size;
    this.#bytesDone = this.#bytesBefore;
    this.progress(filesDone);
  }
}

/** State {@link replayPaths} shares with the steps it delegates to. */
interface ReplayContext {
  readonly stats: SummaryListener;
  readonly options: ReplayOptions;
  readonly ledger: ReplayLedger;
  readonly logs: LogTracker;
  readonly pause: () => Promise<void> | undefined;
  /** Coding agents' transcript files, read after the project's own formats, session by session. */
  readonly transcripts: TranscriptFile[];
}

/**
 * The sessions named by line 1 of the session logs among `sniffs`, and those
 * linked as parent and child across files (both ends of every link whose
 * parent is among the sessions).
 */
function linkedSessions(sniffs: readonly SniffResult[]): {
  readonly sessions: ReadonlySet<string>;
  readonly linked: ReadonlySet<string>;
} {
  const sessions = new Set<string>();
  const linked = new Set<string>();
  for (const sniffed of sniffs) if (sniffed.ok && sniffed.session !== undefined) sessions.add(sniffed.session.id);
  for (const sniffed of sniffs) {
    const parent = sniffed.ok ? sniffed.session?.parentSessionId : undefined;
    if (!sniffed.ok || sniffed.session === undefined || parent === undefined || !sessions.has(parent)) continue;
    linked.add(parent);
    linked.add(sniffed.session.id);
  }
  return { sessions, linked };
}

/**
 * Replays the `index`th input file as `sniffed` (sniffed again when
 * undefined) says: a file of unknown format is skipped whole, a session log
 * goes to the `LogTracker`, a capture or raw NDJSON file through
 * {@link replayStream}; a coding agent's transcript is queued on
 * `context.transcripts` (or summed up at once when it holds no run) and read
 * later. Pushes the file's summary (transcripts: later) and reports progress.
 * Never rejects.
 */
async function replayFile(
  context: ReplayContext,
  file: InputFile,
  index: number,
  sniffedFirst: SniffResult | undefined,
): Promise<void> {
  const { ledger, stats, options, logs, pause } = context;
  const { path, size } = file;
  ledger.progress(index, path);
  let problemCount = 0;
  const fileProblem = (problem: ReplayProblem): void => {
    problemCount += 1;
    ledger.report(problem);
  };
  const sniffed = sniffedFirst ?? (await sniffFile(path));
  if (!sniffed.ok) {
    fileProblem({ file: path, line: 0, code: sniffed.code, scope: 'file', message: sniffed.message });
    ledger.skipped.files += 1;
    ledger.files.push({ path, records: 0, runs: 0, problems: problemCount, isSkipped: true });
  } else if (sniffed.transcript !== undefined) {
    const info = sniffed.transcript;
    if (info.kind === 'other')
      ledger.files.push({
        path,
        format: info.format,
        records: 0,
        runs: 0,
        problems: 0,
        isSkipped: false,
        ...(info.what !== undefined ? { what: info.what } : {}),
      });
    else context.transcripts.push({ path, size, mtimeMs: file.mtimeMs, info });
    // Read later, with the rest of its session; its bytes count as done then.
    ledger.progress(index + 1);
    return;
  } else if (sniffed.format === 'log') {
    const result = await logs.readFile(path, { onProblem: fileProblem, onBytes: ledger.onBytes(path, index), pause });
    if (result.isSkipped) ledger.skipped.files += 1;
    ledger.files.push({
      path,
      format: 'log',
      records: result.records,
      runs: result.runs,
      problems: problemCount,
      isSkipped: result.isSkipped,
    });
  } else {
    const result = await replayStream(
      path,
      sniffed.format === 'capture' ? 'capture' : 'ndjson',
      stats,
      options,
      fileProblem,
      ledger.onBytes(path, index),
      pause,
    );
    if (result.isSkipped) ledger.skipped.files += 1;
    ledger.files.push({ ...result, problems: problemCount });
  }
  ledger.fileDone(size, index + 1);
}

/**
 * Reads the coding agents' transcripts queued on `context.transcripts`
 * (after every other file) and pushes one summary per file, in the order the
 * transcript reader returns them. Never rejects.
 */
async function replayTranscriptFiles(context: ReplayContext): Promise<void> {
  const { ledger, options, transcripts } = context;
  const formatOf = new Map(transcripts.map((file) => [file.path, file.info]));
  const readContext: TranscriptReadContext = {
    listener: context.stats,
    onProblem: ledger.report,
    onBytes: (file, bytes) => ledger.addBytes(file, ledger.filesTotal, bytes),
    pause: context.pause,
    ...(options.agentName !== undefined ? { agentName: options.agentName } : {}),
  };
  const threads = options.jobs ?? 1;
  const results =
    threads > 1
      ? await readTranscriptsInParallel(transcripts, readContext, {
          threads,
          ...(options.workerUrl !== undefined ? { workerUrl: options.workerUrl } : {}),
        })
      : await readTranscripts(transcripts, readContext);
  for (const result of results) {
    const info = formatOf.get(result.path);
    const problemCount = ledger.problemsOf(result.path);
    if (result.isSkipped) ledger.skipped.files += 1;
    ledger.files.push({
      path: result.path,
      ...(info !== undefined ? { format: info.format } : {}),
      records: result.records,
      runs: result.runs,
      problems: problemCount,
      isSkipped: result.isSkipped,
      ...(info?.kind === 'sidecar' && info.what !== undefined
        ? { what: info.what }
        : result.what !== undefined
          ? { what: result.what }
          : {}),
      ...(result.unknownRecords !== undefined ? { unknownRecords: result.unknownRecords } : {}),
    });
  }
}

/**
 * Tells which way a frame of a raw NDJSON capture travelled, since such a
 * file does not say: a response answers a request of the other side, so its
 * direction is the opposite of the request with its id seen earlier; a
 * request or notification is client-to-agent when its method is one a client
 * sends (`initialize`, `session/*` requests, `shutdown`, ...), else
 * agent-to-client. Never throws.
 */
export function directionOfRawFrame(frame: JsonRpcFrame, requestDirections: Map<string, Direction>): Direction {
  if (frame.kind === 'response') {
    const key = JSON.stringify(frame.id);
    const requested = requestDirections.get(key);
    requestDirections.delete(key);
    if (requested === undefined) return 'agent->client';
    return requested === 'client->agent' ? 'agent->client' : 'client->agent';
  }
  const direction: Direction = CLIENT_METHODS.has(frame.method) ? 'client->agent' : 'agent->client';
  if (frame.kind === 'request') requestDirections.set(JSON.stringify(frame.id), direction);
  return direction;
}

/** Methods only a client (parent, editor) sends to an agent runtime, of both protocols. */
const CLIENT_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'authenticate',
  'session/new',
  'session/load',
  'session/prompt',
  'session/cancel',
  'session/set_mode',
  'shutdown',
]);

/** Replays one capture or raw NDJSON file through a `FrameTap` into the trackers. */
async function replayStream(
  path: string,
  format: 'capture' | 'ndjson',
  stats: SummaryListener,
  options: ReplayOptions,
  report: (problem: ReplayProblem) => void,
  onBytes: (bytes: number) => void,
  pause: () => Promise<void> | undefined,
): Promise<Omit<FileSummary, 'problems'>> {
  const replay = new StreamReplay(path, format, stats, options, report);
  if (format === 'ndjson') await replay.startRaw();
  for await (const item of readLines(fileChunks(path, onBytes))) {
    const pausing = pause();
    if (pausing !== undefined) await pausing;
    replay.onLine(item);
  }
  return replay.finish();
}

/** One conversation of a stream file: a capture shared by several proxies holds one per writer (its header's `id`). */
interface ReplayedStream {
  readonly protocol: Protocol | 'auto';
  readonly prefix: string;
  observing?: ReturnType<typeof observerFor>;
  tap?: FrameTap;
  lastTime: number;
}

/**
 * The state of one {@link replayStream} call: the line being read, the
 * records counted, and the file's conversations (each with the tracker it
 * feeds, made at its first frame). Problems go to `report` at the current
 * line; frames and records the trackers or the replay reject go to the
 * listener's `onMalformed` too.
 */
class StreamReplay {
  readonly #path: string;
  readonly #format: 'capture' | 'ndjson';
  readonly #stats: SummaryListener;
  readonly #options: ReplayOptions;
  readonly #report: (problem: ReplayProblem) => void;
  readonly #runsBefore: number;
  readonly #runIdPrefix: string;
  /** Trackers' own validation failures (bad params) are skipped frames of this file at the current line. */
  readonly #listener: RunListener;
  readonly #streams = new Map<string, ReplayedStream>();
  /** Conversations a later header of the same stream replaced. */
  readonly #ended: ReplayedStream[] = [];
  readonly #requestDirections = new Map<string, Direction>();
  #line = 0;
  #records = 0;
  /** Raw NDJSON: the file's mtime, line k's time being `baseTime + k - 1`. */
  #baseTime = Date.now();
  #isSkipped = false;

  constructor(
    path: string,
    format: 'capture' | 'ndjson',
    stats: SummaryListener,
    options: ReplayOptions,
    report: (problem: ReplayProblem) => void,
  ) {
    this.#path = path;
    this.#format = format;
    this.#stats = stats;
    this.#options = options;
    this.#report = report;
    this.#runsBefore = stats.runs;
    this.#listener = {
      onRunStart: (start) => stats.onRunStart(start),
      onRunEnd: (record) => stats.onRunEnd(record),
      onMalformed: (origin, error) => {
        this.#problem(error.code, error.message);
        stats.onMalformed(origin, { code: error.code, message: `${path}:${this.#line}: ${error.message}` });
      },
    };
    this.#runIdPrefix = `replay-${createHash('sha256').update(resolve(path)).digest('hex').slice(0, 12)}`;
  }

  /** Raw NDJSON: takes the file's mtime as the base time (when it can be read) and opens the one conversation. */
  async startRaw(): Promise<void> {
    try {
      this.#baseTime = (await stat(this.#path)).mtimeMs;
    } catch {
      // The file vanished between sniffing and reading: reading it reports that below.
    }
    this.#newStream('', this.#options.protocol ?? 'auto', this.#baseTime);
  }

  /** Replays one line of the file, or reports its defect (an unreadable file before any record: skipped whole). */
  onLine(item: InputLine): void {
    this.#line = item.line;
    if (item.kind === 'problem') {
      if (item.code === 'unreadable' && this.#records === 0) {
        this.#problem(item.code, item.message, 0, 'file');
        this.#isSkipped = true;
      } else {
        this.#malformed(item.code, item.message, item.line);
      }
      return;
    }
    if (this.#format === 'capture') this.#captureLine(item.line, item.bytes);
    else this.#rawLine(item.line, item.bytes);
  }

  /** Closes every conversation at its last time (runs still open end as such) and sums up the file. */
  finish(): Omit<FileSummary, 'problems'> {
    const all = [...this.#ended, ...this.#streams.values()];
    for (const stream of all) stream.observing?.observer.close(stream.lastTime, CAPTURE_ENDED_DIAGNOSTIC);
    const decided = all.map((stream) => stream.observing?.protocol()).find((protocol) => protocol !== undefined);
    return {
      path: this.#path,
      format: this.#format,
      ...(decided !== undefined ? { protocol: decided } : {}),
      records: this.#records,
      runs: this.#stats.runs - this.#runsBefore,
      isSkipped: this.#isSkipped,
    };
  }

  /** A capture's line: a header (line 1, or another writer's) opens a conversation, a record feeds its stream's. */
  #captureLine(line: number, bytes: Uint8Array): void {
    const value = parseJsonLine(bytes);
    if (line === 1 || isCaptureHeader(value)) {
      // Line 1, or the header of another writer appending to the same file.
      this.#captureHeader(bytes, line);
      return;
    }
    this.#records += 1;
    const record = parseCaptureRecord(value);
    if (!record.ok) {
      this.#malformed(record.error.code, `not a capture record (${record.error.message}); skipped`);
      return;
    }
    const key = record.stream ?? '';
    const stream = this.#streams.get(key) ?? this.#newStream(key, 'auto', record.time);
    stream.lastTime = record.time;
    this.#tapOf(stream).observeLine(
      record.direction === 'c' ? 'client->agent' : 'agent->client',
      record.bytes,
      record.time,
    );
  }

  /** Raw NDJSON: synthetic time, direction told from the frame (FrameTap parses the line again and reports what fails). */
  #rawLine(line: number, bytes: Uint8Array): void {
    this.#records += 1;
    const stream = this.#streams.get('') ?? this.#newStream('', this.#options.protocol ?? 'auto', this.#baseTime);
    const time = this.#baseTime + (line - 1);
    stream.lastTime = time;
    this.#tapOf(stream).observeLine(rawDirection(bytes, this.#requestDirections), bytes, time);
  }

  #problem(code: string, message: string, at = this.#line, scope: ReplayProblem['scope'] = 'record'): void {
    this.#report({ file: this.#path, line: at, code, scope, message });
  }

  #malformed(code: string, message: string, at = this.#line): void {
    this.#problem(code, message, at);
    this.#stats.onMalformed(CAPTURE_ORIGIN, { code, message: `${this.#path}:${at}: ${message}` });
  }

  /** Opens conversation `key`; a second header for the same stream starts its own conversation. */
  #newStream(key: string, protocol: Protocol | 'auto', startedAt: number): ReplayedStream {
    const previous = this.#streams.get(key);
    if (previous !== undefined) this.#ended.push(previous);
    const prefix =
      key === '' && previous === undefined
        ? this.#runIdPrefix
        : `${this.#runIdPrefix}-${key === '' ? 'h' : key}-${this.#line}`;
    const stream: ReplayedStream = { protocol, prefix, lastTime: startedAt };
    this.#streams.set(key, stream);
    return stream;
  }

  /** The conversation's `FrameTap`, made with its tracker at its first frame. */
  #tapOf(stream: ReplayedStream): FrameTap {
    if (stream.tap !== undefined) return stream.tap;
    const observing = observerFor(stream.protocol, this.#listener, stream.prefix, this.#options.agentName);
    stream.observing = observing;
    stream.tap = new FrameTap(observing.observer, {
      onRejected: (_direction, kind, message) => this.#malformed(kind, message),
    });
    return stream.tap;
  }

  /** A capture header at line `at`: opens its conversation (an invalid one: an unnamed `auto` one, if none is open). */
  #captureHeader(bytes: Uint8Array, at: number): void {
    const header = parseCaptureHeader(parseJsonLine(bytes));
    if (!header.ok) {
      this.#problem(
        'bad-capture-header',
        `the capture header is invalid (${header.error.message}); the protocol is detected from the frames`,
        at,
      );
      if (!this.#streams.has('')) this.#newStream('', 'auto', Date.now());
      return;
    }
    const declared =
      header.header.protocol === 'sdk' || header.header.protocol === 'acp' ? header.header.protocol : 'auto';
    this.#newStream(header.header.id ?? '', declared, header.header.startedAt);
  }
}

function rawDirection(bytes: Uint8Array, requestDirections: Map<string, Direction>): Direction {
  const decoded = decodeUtf8Line(bytes);
  if (!decoded.ok) return 'agent->client';
  const parsed = parseFrame(decoded.text);
  return parsed.ok ? directionOfRawFrame(parsed.frame, requestDirections) : 'agent->client';
}

/**
 * The tracker the live proxy would use for `protocol` (`auto`: the
 * `ProtocolSniffer`), and a getter of the protocol decided so far. Run ids
 * are `<prefix>-<n>`, unique per file.
 */
function observerFor(
  protocol: Protocol | 'auto',
  listener: RunListener,
  prefix: string,
  agentName: string | undefined,
): { readonly observer: FrameObserver; readonly protocol: () => Protocol | undefined } {
  let count = 0;
  const options = { ...(agentName !== undefined ? { agentName } : {}), newRunId: () => `${prefix}-${(count += 1)}` };
  const factories = {
    sdk: (): FrameObserver => new SdkTracker(listener, options),
    acp: (): FrameObserver => new AcpTracker(listener, options),
  };
  if (protocol !== 'auto') return { observer: factories[protocol](), protocol: () => protocol };
  const sniffer = new ProtocolSniffer(factories);
  return { observer: sniffer, protocol: () => sniffer.protocol };
}

function parseJsonLine(bytes: Uint8Array): unknown {
  const decoded = decodeUtf8Line(bytes);
  if (!decoded.ok) return undefined;
  try {
    return JSON.parse(decoded.text) as unknown;
  } catch {
    // SyntaxError: the validators then report "expected an object".
    return undefined;
  }
}

/**
 * Whether the runtime reported an output for `record` that differs from the
 * selected one (JSON equality, object key order ignored; a reported `[]`
 * against no selection differs, since the runtime should have left the
 * field out). @returns `false` when the runtime reported nothing.
 */
export function isOutputMismatch(record: RunRecord): boolean {
  return (
    record.reported !== undefined &&
    !reportedOutputMatches(record.reported.output, record.output, record.reported.compare)
  );
}

/** Forwards runs to the caller's listener and counts them for the summary. */
class SummaryListener implements RunListener {
  readonly #target: RunListener;
  readonly #byReason = new Map<string, { runs: number; inputTokens: number; outputTokens: number; costUsd?: number }>();
  readonly #unpriced = new Set<string>();
  runs = 0;
  #mismatches = 0;
  /** Spans reported since the last backpressure wait. */
  #unsettledSpans = 0;

  readonly #onRun: ((record: RunRecord) => void) | undefined;

  constructor(target: RunListener, onRun?: (record: RunRecord) => void) {
    this.#target = target;
    this.#onRun = onRun;
  }

  onRunStart(start: RunStart): void {
    guard(() => this.#target.onRunStart(start));
  }

  /**
   * @returns a wait on `backpressure` when {@link BACKPRESSURE_SPANS} spans
   *   or more were reported since the last one, else `undefined` (no await,
   *   so reading pays nothing between waits).
   */
  pause(backpressure: (() => Promise<void>) | undefined): Promise<void> | undefined {
    if (backpressure === undefined || this.#unsettledSpans < BACKPRESSURE_SPANS) return undefined;
    return this.settle(backpressure);
  }

  /** Waits on `backpressure` for every span reported so far. Never rejects. */
  async settle(backpressure: (() => Promise<void>) | undefined): Promise<void> {
    this.#unsettledSpans = 0;
    if (backpressure === undefined) return;
    try {
      await backpressure();
    } catch {
      // The contract forbids a rejecting backpressure; if one does, reading goes on (drops are the exporter's to count).
    }
  }

  onRunEnd(record: RunRecord): void {
    this.runs += 1;
    this.#unsettledSpans += 1 + record.steps.length + record.toolCalls.length;
    const entry = this.#byReason.get(record.stopReason) ?? { runs: 0, inputTokens: 0, outputTokens: 0 };
    entry.runs += 1;
    if (record.usage.reported) {
      const tokens = conventionTokenCounts(record.usage);
      entry.inputTokens += tokens.input;
      entry.outputTokens += tokens.output;
    }
    if (record.cost !== undefined) {
      for (const model of record.cost.unpricedModels) this.#unpriced.add(model);
      if (record.cost.pricedCalls > 0) entry.costUsd = (entry.costUsd ?? 0) + record.cost.amount;
    }
    this.#byReason.set(record.stopReason, entry);
    if (isOutputMismatch(record)) this.#mismatches += 1;
    guard(() => this.#target.onRunEnd(record));
    if (this.#onRun !== undefined) guard(() => this.#onRun?.(record));
  }

  onMalformed(origin: string, error: { readonly code: string; readonly message: string }): void {
    guard(() => this.#target.onMalformed?.(origin, error));
  }

  summary(files: readonly FileSummary[], problems: number, skipped: { files: number; records: number }): ReplaySummary {
    const total = this.runs;
    const stopReasons = [...this.#byReason.entries()]
      .map(([stopReason, e]) => ({
        stopReason,
        runs: e.runs,
        share: total === 0 ? 0 : e.runs / total,
        inputTokens: e.inputTokens,
        outputTokens: e.outputTokens,
        ...(e.costUsd !== undefined ? { costUsd: e.costUsd } : {}),
      }))
      .sort((a, b) => b.runs - a.runs || (a.stopReason < b.stopReason ? -1 : a.stopReason > b.stopReason ? 1 : 0));
    const truncated = this.#byReason.get('max-tokens')?.runs ?? 0;
    const costed = [...this.#byReason.values()].filter((e) => e.costUsd !== undefined);
    return {
      files,
      runs: total,
      stopReasons,
      truncationRate: total === 0 ? 0 : truncated / total,
      mismatches: this.#mismatches,
      ...(costed.length > 0 || this.#unpriced.size > 0
        ? {
            cost: {
              amountUsd: costed.reduce((sum, e) => sum + (e.costUsd ?? 0), 0),
              unpricedModels: [...this.#unpriced].sort(),
            },
          }
        : {}),
      problems,
      skipped: { ...skipped },
      unknownRecords: unknownRecordTotals(files),
    };
  }
}

/** The files' unknown record types summed by `<format> <type>`, most first. */
function unknownRecordTotals(files: readonly FileSummary[]): Record<string, number> {
  const totals = new Map<string, number>();
  for (const file of files) {
    for (const [type, count] of Object.entries(file.unknownRecords ?? {})) {
      const key = `${file.format ?? 'unknown'} ${type}`;
      totals.set(key, (totals.get(key) ?? 0) + count);
    }
  }
  return Object.fromEntries([...totals].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)));
}

function guard(fn: () => void): void {
  try {
    fn();
  } catch {
    // A RunListener must not throw (its contract); if one does, the replay goes on with the other runs.
  }
}
