/**
 * `subagent-otel replay`: builds telemetry from the command's flags, replays
 * the given captures and durable session logs into it (`replay/replay`),
 * flushes it within a bound, and prints what happened: each problem on
 * stderr as it is found, a progress bar on stderr while a long replay runs
 * on a terminal, then the summary by stop reason (or `--json`) on stdout and
 * where the telemetry went. Owns presentation and the exit code only.
 *
 * @module subagent-otel/cli/commands/replay
 */
import { replayPaths, type ReplayProblem, type ReplayProgress, type ReplaySummary } from '../../replay/replay.js';
import { createTelemetry, type TelemetryShutdownReport } from '../../telemetry/setup.js';
import { availableParallelism } from 'node:os';
import { defaultReplayJobs, type ReplayCommand } from './replay-command.js';
import {
  formatProblem,
  formatProgressBar,
  formatRunRow,
  formatRunRowHeader,
  formatStopReasonSummary,
} from '../summary.js';
import type { RunRecord } from '../../observe/run-record.js';
import { checkOutputDirectory } from '../output-paths.js';
import {
  BACKPRESSURE_WAIT_MS,
  exportBackpressure,
  flushBoundMs,
  installDiagnostics,
  telemetryOptions,
} from '../telemetry-options.js';
import { outboxLines } from '../outbox-lines.js';

export type { ReplayCommand };

/** What the command writes to and reads. */
export interface ReplayIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream & { readonly isTTY?: boolean; readonly columns?: number };
  readonly env: NodeJS.ProcessEnv;
}

/** Environment variable bounding the final telemetry flush, in ms (shared with the proxy). */
/** Default bound of the final flush: a replay can hand the exporters many runs at once. */
export const DEFAULT_REPLAY_FLUSH_MS = 15_000;
/** Exit code of a replay whose telemetry (some of it) went to the outbox instead of the destination. */
export const EXIT_OUTBOXED = 4;
/** Problems printed per file; the rest are counted in one line at the end. */
export const MAX_PRINTED_PROBLEMS_PER_FILE = 20;

/** The `--json` document: the summary plus where telemetry went. */
export interface ReplayJson extends ReplaySummary {
  readonly telemetry: {
    readonly destinations: readonly string[];
    readonly outDir?: string;
    readonly shutdown: TelemetryShutdownReport;
  };
}

/**
 * Runs the command.
 *
 * @returns the exit code: 0 when every file was read whole and all telemetry
 *   was delivered; 1 when anything was skipped (a file, a record, a torn
 *   tail: each reported on stderr); 3 when every input was read but some
 *   telemetry could not be delivered (the exact counts on stderr); 4 when
 *   everything was read and nothing lost, but some telemetry went to the
 *   outbox instead of the destination (the number of runs on stderr and in
 *   `--json`; the next command or `check --deliver` delivers it); 2 when
 *   the output directory cannot be written (checked before any work).
 *   Never rejects for bad input; other usage errors never reach here (`replay-command.ts`).
 */
export async function runReplay(cmd: ReplayCommand, io: ReplayIo): Promise<number> {
  installDiagnostics('stderr', io.env, io.stderr);
  const telemetry = createTelemetry(telemetryOptions(cmd, io.env));
  if (telemetry.outDir !== undefined) {
    const unusable = await checkOutputDirectory(telemetry.outDir);
    if (unusable !== undefined) {
      io.stderr.write(`subagent-otel replay: output directory ${telemetry.outDir}: ${unusable}\n`);
      await telemetry.shutdown(0);
      return 2;
    }
  }
  const showProgress = io.stderr.isTTY === true && cmd.progress !== false;
  const bar = showProgress ? new ProgressReporter(io.stderr) : undefined;
  const printed = new Map<string, number>();
  const onProblem = (problem: ReplayProblem): void => {
    const count = (printed.get(problem.file) ?? 0) + 1;
    printed.set(problem.file, count);
    if (count > MAX_PRINTED_PROBLEMS_PER_FILE) return;
    const line = `subagent-otel replay: ${formatProblem(problem)}`;
    if (bar !== undefined) bar.print(line);
    else io.stderr.write(`${line}\n`);
  };

  // One row per run as it is read (stdout), unless --json or --no-runs; the progress bar keeps to stderr.
  let rows = 0;
  const onRun = (record: RunRecord): void => {
    if (rows === 0) io.stdout.write(`${formatRunRowHeader()}\n`);
    rows += 1;
    io.stdout.write(`${formatRunRow(record)}\n`);
  };
  const summary = await replayPaths(cmd.paths, telemetry.runs, {
    ...(cmd.json || cmd.runs === false ? {} : { onRun }),
    protocol: cmd.protocol,
    jobs: cmd.jobs ?? defaultReplayJobs(availableParallelism()),
    ...(cmd.agentName !== undefined ? { agentName: cmd.agentName } : {}),
    ...(telemetry.outDir !== undefined ? { exclude: [telemetry.outDir] } : {}),
    onProblem,
    // With an outbox, a wait outlasts the exporter's own timeout: a collector that is down costs one timeout, then the outbox takes the rest.
    backpressure: exportBackpressure(
      telemetry.tracerProvider,
      telemetry.outboxes.length > 0 ? 3 * BACKPRESSURE_WAIT_MS : BACKPRESSURE_WAIT_MS,
    ),
    ...(bar !== undefined ? { onProgress: (progress: ReplayProgress) => bar.update(progress) } : {}),
  });
  bar?.finish();
  for (const [file, count] of printed) {
    if (count > MAX_PRINTED_PROBLEMS_PER_FILE)
      io.stderr.write(
        `subagent-otel replay: ${file}: ${count - MAX_PRINTED_PROBLEMS_PER_FILE} more problems not shown\n`,
      );
  }

  const report = await telemetry.shutdown(flushBoundMs(io.env, DEFAULT_REPLAY_FLUSH_MS));
  const destinations = telemetry.describeDestinations();
  const dropped = report.dropped.traces + report.dropped.metrics;

  if (cmd.json) {
    const json: ReplayJson = {
      ...summary,
      telemetry: {
        destinations,
        ...(telemetry.outDir !== undefined ? { outDir: telemetry.outDir } : {}),
        shutdown: report,
      },
    };
    io.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  } else {
    io.stdout.write(`${rows > 0 ? '\n' : ''}${formatStopReasonSummary(summary)}\n\nTelemetry written to:\n`);
    for (const destination of destinations) io.stdout.write(`  ${destination}\n`);
  }
  for (const error of report.errors) io.stderr.write(`subagent-otel replay: telemetry: ${error}\n`);
  for (const line of outboxLines(report)) io.stderr.write(`subagent-otel replay: ${line}\n`);
  if (dropped > 0) {
    io.stderr.write(
      `subagent-otel replay: telemetry: ${report.dropped.traces} span(s) and ${report.dropped.metrics} metric batch(es) in all could not be delivered\n`,
    );
  }
  if (summary.problems > 0) {
    io.stderr.write(
      `subagent-otel replay: ${summary.skipped.files} file(s) and ${summary.skipped.records} record(s) skipped; see the problems above\n`,
    );
  }
  if (summary.problems > 0) return 1;
  if (dropped > 0) return 3;
  return report.outboxed.traces + report.outboxed.metrics > 0 ? EXIT_OUTBOXED : 0;
}

/** Options of {@link ProgressReporter}. */
export interface ProgressReporterOptions {
  /** Clock in ms; default `Date.now`. */
  readonly now?: () => number;
  /** Shortest time between two redraws (default 100 ms: at most ~10 per second). */
  readonly minIntervalMs?: number;
  /** Nothing is drawn before the replay has run this long, so short replays show no bar (default 300 ms). */
  readonly delayMs?: number;
}

/**
 * A one-line progress bar on a terminal stream, redrawn in place with `\r`.
 * Draws nothing for the first `delayMs` and at most once per
 * `minIntervalMs` after that (the last update of a replay is drawn
 * regardless). Lines printed through {@link ProgressReporter.print} appear
 * above it. Never throws.
 */
export class ProgressReporter {
  readonly #stream: NodeJS.WritableStream & { readonly columns?: number };
  readonly #now: () => number;
  readonly #minIntervalMs: number;
  readonly #startedAt: number;
  readonly #delayMs: number;
  #lastDrawAt = Number.NEGATIVE_INFINITY;
  #isShown = false;

  constructor(stream: NodeJS.WritableStream & { readonly columns?: number }, options: ProgressReporterOptions = {}) {
    this.#stream = stream;
    this.#now = options.now ?? Date.now;
    this.#minIntervalMs = options.minIntervalMs ?? 100;
    this.#delayMs = options.delayMs ?? 300;
    this.#startedAt = this.#now();
  }

  /** Redraws the bar for `progress` when the delay has passed and the last redraw is old enough. */
  update(progress: ReplayProgress): void {
    const now = this.#now();
    if (now - this.#startedAt < this.#delayMs) return;
    const isLast = progress.filesDone === progress.filesTotal;
    if (!isLast && now - this.#lastDrawAt < this.#minIntervalMs) return;
    this.#lastDrawAt = now;
    this.#isShown = true;
    this.#stream.write(`\r\x1b[K${formatProgressBar(progress, this.#stream.columns ?? 80)}`);
  }

  /** Writes `line` (and a newline) above the bar. */
  print(line: string): void {
    this.#clear();
    this.#stream.write(`${line}\n`);
    // Let the next update redraw at once, so the bar does not vanish for long.
    this.#lastDrawAt = Number.NEGATIVE_INFINITY;
  }

  /** Removes the bar, leaving the cursor at the start of an empty line. */
  finish(): void {
    this.#clear();
  }

  #clear(): void {
    if (!this.#isShown) return;
    this.#stream.write('\r\x1b[K');
    this.#isShown = false;
  }
}
