/**
 * `subagent-otel proxy`: spawns the agent behind the stdio bridge at once,
 * then loads the observation (telemetry, tracker, capture) beside it and
 * hands it every forwarded chunk. Chunks forwarded while the observation is
 * still loading are queued (bounded) and observed in order once it is ready.
 * Owns the order of shutdown: the child's exit, then closing open runs, the
 * capture, and a bounded telemetry flush.
 *
 * @module subagent-otel/cli/commands/proxy
 */
import { diag } from '@opentelemetry/api';
import type { Direction } from '../../observe/frame-observer.js';
import { configurationProblems } from '../../telemetry/config-problems.js';
import type { TelemetryShutdownReport } from '../../telemetry/setup.js';
import { closeProcessStdout } from '../close-stdout.js';
import { runStdioProxy, type ProxyExit } from '../stdio-proxy.js';
import { ENV_LOG_FILE, installDiagnostics, telemetryOptions } from '../telemetry-options.js';
import type { ProxyCommand, ProxyObservation } from './proxy-observation.js';

/** Bytes queued for observation while it loads; past this, chunks are forwarded but not observed (and that is reported). */
export const STARTUP_QUEUE_LIMIT_BYTES = 32 * 1024 * 1024;

function describeExit(exit: ProxyExit): string {
  if (exit.spawnError !== undefined) return `the agent could not be started (${exit.spawnError})`;
  return exit.signal !== null ? `the agent was killed by ${exit.signal}` : `the agent exited with code ${String(exit.code)}`;
}

/**
 * The proxy's one line about its own configuration: what is wrong, that the
 * agent is unaffected, and how to check. Pure.
 */
export function configurationWarning(what: string, hasLogFile: boolean): string {
  const log = hasLogFile ? '' : `; keep the details with ${ENV_LOG_FILE}=<file>`;
  return `subagent-otel proxy: ${what}; the agent runs unaffected. See where telemetry goes with: subagent-otel check (same options and environment)${log}`;
}

/** What went undelivered, for the warning at exit, or `undefined` when everything was delivered. */
function deliveryProblem(report: TelemetryShutdownReport, captureError: string | undefined): string | undefined {
  const lost = report.dropped.traces + report.dropped.metrics;
  if (lost === 0 && !report.timedOut) return captureError;
  // Worded so it is never mistaken for the exporter's own drop line ("traces: otlp export failed") in the log.
  const first = (report.errors[0] ?? 'flush timed out').replace(/^(traces|metrics): /, '$1, ');
  return `telemetry was not delivered: ${report.dropped.traces} span(s) and ${report.dropped.metrics} metric batch(es) dropped (first problem: ${first})`;
}

/**
 * Runs the proxy until the child exits and telemetry is flushed.
 * @returns the child's exit. Prints nothing on stdout. On stderr (and in the
 *   `SUBAGENT_OTEL_LOG_FILE` log) at most one line of its own about telemetry:
 *   at start when the configuration is unusable (an output directory or
 *   capture file that cannot be written, an endpoint that is no URL, an
 *   unsupported exporter), else at exit when telemetry was dropped; one
 *   warning line per privacy setting that was not understood (content capture
 *   then off); plus one line when the command could not be started. The
 *   child's bytes are untouched either way.
 */
export async function runProxy(cmd: ProxyCommand, io: { env: NodeJS.ProcessEnv; stderr: NodeJS.WritableStream }): Promise<ProxyExit> {
  installDiagnostics('proxy', io.env);
  let warned = false;
  const warnOnce = (what: string): void => {
    if (warned) return;
    warned = true;
    const line = configurationWarning(what, (io.env[ENV_LOG_FILE] ?? '') !== '');
    io.stderr.write(`${line}\n`);
    diag.warn(line);
  };
  let observation: ProxyObservation | undefined;
  const queue: Array<[Direction, Buffer | null, number]> = [];
  let queuedBytes = 0;
  let overflowed = false;

  const exited = runStdioProxy({
    command: cmd.command,
    args: cmd.args,
    env: io.env,
    onChunk: (direction, chunk) => {
      if (observation !== undefined) return observation.push(direction, chunk);
      if (queuedBytes + chunk.length > STARTUP_QUEUE_LIMIT_BYTES) {
        overflowed = true;
        return;
      }
      queuedBytes += chunk.length;
      queue.push([direction, Buffer.from(chunk), Date.now()]); // a copy: the bridge reuses a chunk's memory (borrowedChunks)
    },
    borrowedChunks: true,
    onEnd: (direction) => (observation !== undefined ? observation.end(direction) : void queue.push([direction, null, Date.now()])),
    onStdoutEnd: () => void closeProcessStdout(),
    onObserverError: (err) => diag.error(`subagent-otel: observation failed, forwarding continues: ${err instanceof Error ? err.message : String(err)}`),
  });

  // Privacy settings fail closed; the proxy's diag logger goes only to its log file, so say it where a user looks.
  const { resolveContentPolicyWithWarnings } = await import('../../telemetry/content-policy.js');
  for (const warning of resolveContentPolicyWithWarnings(telemetryOptions(cmd, io.env).content, io.env).warnings) {
    io.stderr.write(`subagent-otel proxy: warning: ${warning}\n`);
  }
  const { startProxyObservation } = await import('./proxy-observation.js');
  const ready = startProxyObservation(cmd, io.env);
  for (const [direction, chunk, time] of queue) {
    if (chunk === null) ready.end(direction);
    else ready.push(direction, chunk, time);
  }
  queue.length = 0;
  if (overflowed) diag.warn(`subagent-otel: more than ${STARTUP_QUEUE_LIMIT_BYTES} bytes arrived while telemetry was loading; the excess was forwarded but not observed`);
  observation = ready;
  // Checked beside the running agent, never before it: forwarding does not wait for the file system.
  const checked = configurationProblems(telemetryOptions(cmd, io.env), cmd.capture).then(
    (problems) => {
      if (problems.length > 0) warnOnce(`telemetry configuration problem: ${problems.join('; ')}`);
    },
    (error: unknown) => diag.error(`subagent-otel: configuration check failed: ${error instanceof Error ? error.message : String(error)}`),
  );

  const exit = await exited;
  if (exit.spawnError !== undefined) io.stderr.write(`subagent-otel proxy: cannot start '${cmd.command}': ${exit.spawnError}\n`);
  ready.end('agent->client');
  ready.end('client->agent');
  const finished = await ready.finish(describeExit(exit));
  await checked;
  const problem = deliveryProblem(finished.telemetry, finished.captureError);
  if (problem !== undefined) warnOnce(problem);
  return exit;
}
