/**
 * `subagent-otel watch`: builds telemetry from the command's flags, follows
 * the given transcript directories (`watch/watcher`) until SIGINT or SIGTERM,
 * prints one row (or JSON line) per run as it is reported and each problem on
 * stderr, then flushes within a bound and says what it did. Owns
 * presentation, the checkpoint's place and the exit code only.
 *
 * @module subagent-otel/cli/commands/watch
 */
import { stat } from 'node:fs/promises';
import type { RunRecord } from '../../observe/run-record.js';
import { createTelemetry } from '../../telemetry/setup.js';
import { outboxLines } from '../outbox-lines.js';
import { startChangeFeed } from '../../watch/change-feed.js';
import { defaultCheckpointPath, loadCheckpoint } from '../../watch/checkpoint.js';
import type { EndNotices } from '../../watch/end-notices.js';
import {
  DEFAULT_IDLE_MS,
  DEFAULT_INTERVAL_MS,
  isInside,
  watchTranscripts,
  type WatchPass,
} from '../../watch/watcher.js';
import type { WatchCommand } from './watch-command.js';
import { formatProblem, formatRunRow, formatRunRowHeader } from '../summary.js';
import { checkOutputDirectory } from '../output-paths.js';
import { flushBoundMs, installDiagnostics, telemetryOptions } from '../telemetry-options.js';
import { IdleRelease, memoryReducer } from '../heap-release.js';

export type { WatchCommand };

/** What the command writes to and reads. */
export interface WatchIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly env: NodeJS.ProcessEnv;
  /** Aborts the watch (the process's SIGINT and SIGTERM). */
  readonly signal: AbortSignal;
}

/**
 * Bound on the export of one pass before what has no answer yet is put into
 * the outbox and the checkpoint written: longer than the OTLP exporter's own
 * timeout (10 s by default), so a slow but live collector still gets it directly.
 */
export const WATCH_SETTLE_MS = 30_000;

/** Default bound of the final flush. */
export const DEFAULT_WATCH_FLUSH_MS = 15_000;

/** What `watch --daemon` adds to a watch (`cli/commands/watch-daemon`). */
export interface WatchExtras {
  /** The hooks' notices: runs close when their hook says so. */
  readonly notices?: EndNotices;
  /** Without a checkpoint, runs that ended before this are history (the first setup). */
  readonly since?: number;
  /** Folders that do not exist yet are followed until they appear (an agent not used yet). */
  readonly allowMissing?: boolean;
}

/**
 * Runs the command until `io.signal` aborts.
 * @returns 0 when it stopped on a signal with everything delivered and the
 *   checkpoint written; 2 for a directory that is none, an output directory
 *   or checkpoint inside a watched directory, an unreadable checkpoint or an
 *   unwritable `--out` (checked before any work); 3 when telemetry was not
 *   all delivered or the checkpoint could not be written. Never rejects for
 *   bad input.
 */
export async function runWatch(cmd: WatchCommand, io: WatchIo, extras: WatchExtras = {}): Promise<number> {
  const fail = (message: string): number => {
    io.stderr.write(`subagent-otel watch: ${message}\n`);
    return 2;
  };
  for (const dir of cmd.dirs) {
    const info = await stat(dir).catch(() => undefined);
    if (info === undefined && extras.allowMissing === true) continue;
    if (info === undefined)
      return fail(`${dir}: no such directory; give the directories the agents write to, e.g. ~/.claude/projects`);
    if (!info.isDirectory())
      return fail(`${dir}: not a directory (watch follows directories; for single files use 'subagent-otel replay')`);
  }
  const checkpointPath = cmd.checkpoint ?? defaultCheckpointPath(cmd.dirs, io.env);
  if (isInside(checkpointPath, cmd.dirs))
    return fail(
      `the checkpoint ${checkpointPath} would be inside a watched directory; watch never writes there: give --checkpoint elsewhere`,
    );
  const loaded = await loadCheckpoint(checkpointPath);
  if (!loaded.ok) return fail(loaded.message);

  installDiagnostics('stderr', io.env, io.stderr);
  const telemetry = createTelemetry(telemetryOptions(cmd, io.env));
  if (telemetry.outDir !== undefined) {
    if (isInside(telemetry.outDir, cmd.dirs)) {
      await telemetry.shutdown(0);
      return fail(
        `the output directory ${telemetry.outDir} is inside a watched directory; watch never writes there: give --out elsewhere`,
      );
    }
    const unusable = await checkOutputDirectory(telemetry.outDir);
    if (unusable !== undefined) {
      await telemetry.shutdown(0);
      return fail(`output directory ${telemetry.outDir}: ${unusable}`);
    }
  }

  io.stderr.write(
    `subagent-otel watch: following ${cmd.dirs.join(', ')}; ${loaded.checkpoint !== undefined ? `resuming from ${checkpointPath} (${Object.keys(loaded.checkpoint.reported).length} runs seen)` : `checkpoint ${checkpointPath}${cmd.history ? ', history included' : ', runs that end from now on'}`}; telemetry to ${telemetry.describeDestinations().join(', ')}; Ctrl-C to stop\n`,
  );
  // Notifications spare a pass listing the whole history when nothing moved (decision 0120).
  const changes = cmd.poll
    ? undefined
    : startChangeFeed(cmd.dirs, (why) => io.stderr.write(`subagent-otel watch: ${why}\n`));
  // The memory of a catch-up read goes back once the watch is idle (decision 0133).
  const reduce = memoryReducer();
  const release = reduce !== undefined ? new IdleRelease({ reduce }) : undefined;
  let headerShown = false;
  const onRun = (record: RunRecord): void => {
    if (cmd.json) {
      io.stdout.write(`${JSON.stringify(runLine(record))}\n`);
      return;
    }
    if (!headerShown) io.stdout.write(`${formatRunRowHeader()}\n`);
    headerShown = true;
    io.stdout.write(`${formatRunRow(record)}\n`);
  };
  const summary = await watchTranscripts({
    dirs: cmd.dirs,
    listener: telemetry.runs,
    idleMs: cmd.idleMs ?? DEFAULT_IDLE_MS,
    intervalMs: cmd.intervalMs ?? DEFAULT_INTERVAL_MS,
    checkpointPath,
    ...(loaded.checkpoint !== undefined ? { checkpoint: loaded.checkpoint } : {}),
    history: cmd.history,
    ...(extras.since !== undefined ? { since: extras.since } : {}),
    ...(extras.notices !== undefined ? { notices: extras.notices } : {}),
    ...(telemetry.outDir !== undefined ? { exclude: [telemetry.outDir] } : {}),
    // The checkpoint gate: delivered, or on disk in the outbox (what has no answer within the bound is filed there).
    flush: async () => (await telemetry.settle(WATCH_SETTLE_MS)).safe,
    backpressure: async () => {
      await telemetry.flush(WATCH_SETTLE_MS);
    },
    onRun,
    ...(release !== undefined ? { onPass: (pass: WatchPass) => release.afterPass(pass.sessionsRead) } : {}),
    onProblem: (problem) => io.stderr.write(`subagent-otel watch: ${formatProblem(problem)}\n`),
    signal: io.signal,
    ...(cmd.agentName !== undefined ? { agentName: cmd.agentName } : {}),
    ...(changes !== undefined ? { changes } : {}),
  });
  changes?.close();
  const report = await telemetry.shutdown(flushBoundMs(io.env, DEFAULT_WATCH_FLUSH_MS));
  const dropped = report.dropped.traces + report.dropped.metrics;
  io.stderr.write(
    `subagent-otel watch: stopped after ${summary.passes} pass(es): ${summary.runs} run(s) reported, ${summary.reportedTotal} in the checkpoint, ${summary.problems} problem(s)\n`,
  );
  if (summary.repeated > 0)
    io.stderr.write(
      `subagent-otel watch: ${summary.repeated} run(s) were reported again after their telemetry was lost (same span ids)\n`,
    );
  for (const line of outboxLines(report)) io.stderr.write(`subagent-otel watch: ${line}\n`);
  for (const error of report.errors) io.stderr.write(`subagent-otel watch: telemetry: ${error}\n`);
  if (dropped > 0)
    io.stderr.write(
      `subagent-otel watch: telemetry: ${report.dropped.traces} span(s) and ${report.dropped.metrics} metric batch(es) could not be delivered\n`,
    );
  if (summary.checkpointError !== undefined)
    io.stderr.write(`subagent-otel watch: ${summary.checkpointError}; a restart will report those runs again\n`);
  return dropped > 0 || summary.checkpointError !== undefined ? 3 : 0;
}

/** One `--json` line: the run's identity, stop reason, tokens, cost and output. */
function runLine(record: RunRecord): Record<string, unknown> {
  return {
    runId: record.runId,
    source: record.source,
    agentName: record.agentName,
    ...(record.sessionId !== undefined ? { sessionId: record.sessionId } : {}),
    ...(record.parentRunId !== undefined ? { parentRunId: record.parentRunId } : {}),
    ...(record.continuesRunId !== undefined ? { continuesRunId: record.continuesRunId } : {}),
    ...(record.diagnostic !== undefined ? { diagnostic: record.diagnostic } : {}),
    startTime: new Date(record.startTime).toISOString(),
    endTime: new Date(record.endTime).toISOString(),
    stopReason: record.stopReason,
    ...(record.stopReasonInferredFrom !== undefined ? { stopReasonInferredFrom: record.stopReasonInferredFrom } : {}),
    usage: record.usage,
    ...(record.cost !== undefined ? { cost: record.cost } : {}),
    outputSource: record.outputSource,
    output: record.output ?? null,
  };
}
