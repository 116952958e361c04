/**
 * `subagent-otel proxy`: spawns the agent behind the stdio bridge at once,
 * then loads the observation (telemetry, tracker, capture, the diagnostics
 * log and the configuration check) beside it and hands it every forwarded
 * chunk. Chunks forwarded while the observation is still loading are queued
 * (bounded) and observed in order once it is ready. Owns the order of start
 * and shutdown: spawn first; at the end the child's exit, then closing open
 * runs, the capture, and a bounded telemetry flush.
 *
 * Everything this module imports statically is what the path to `spawn`
 * needs (the bridge, the pipes, the parent-death wrapper): no OpenTelemetry,
 * zod, telemetry configuration, `node:crypto` or `node:http`. The rest is one
 * dynamic `import()` after the spawn (decision 0039), compiled from Node's
 * compile cache when the bin enabled it (decision 0061), and
 * `test/cli/start-path.test.ts` checks the bundle keeps it so. The Node
 * built-ins the observation imports are loaded just before it, and the
 * caller is told when that is done and when the session stopped being a
 * short one, so it can hold V8's optimizing compiler in between (decision
 * 0122).
 *
 * @module subagent-otel/proxy/run-proxy
 */
import type { Direction } from '../observe/frame-observer.js';
import { SETTINGS } from '../telemetry/config.js';
import type { TelemetryShutdownReport } from '../telemetry/setup.js';
import { closeProcessStdout } from './close-stdout.js';
import { compileCacheNote } from '../cli/compile-cache.js';
import type { ChildPipes } from './os-pipes.js';
import { runStdioProxy, type ProxyExit } from './stdio-proxy.js';
import { ShortSessionWatch } from './short-session.js';
import type { ProxyCommand, ProxyObservation } from './proxy-observation.js';
import type { AgentTelemetry } from './agent-telemetry.js';

/** Bytes queued for observation while it loads; past this, chunks are forwarded but not observed (and that is reported). */
export const STARTUP_QUEUE_LIMIT_BYTES = 32 * 1024 * 1024;

/**
 * Signals that end a proxy's conversation: on the first, every run that
 * ended is passed on and exported at once (the bridge forwards it to a
 * running agent as before); a second one after the agent exited ends the
 * proxy without waiting for the flush (decision 0096).
 */
export const FINISHING_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Environment variable naming the proxy's diagnostics file (`SUBAGENT_OTEL_LOG_FILE`). */
const ENV_LOG_FILE = SETTINGS.logFile.env;

function describeExit(exit: ProxyExit): string {
  if (exit.spawnError !== undefined) return `the agent could not be started (${exit.spawnError})`;
  return exit.signal !== null
    ? `the agent was killed by ${exit.signal}`
    : `the agent exited with code ${String(exit.code)}`;
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
  const outboxed = report.outboxed.traces + report.outboxed.metrics;
  if (lost === 0 && !report.timedOut && outboxed === 0) return captureError;
  const kept = `${report.outboxed.runs} run(s) (${report.outboxed.traces} span(s), ${report.outboxed.metrics} metric batch(es)) kept in the outbox for the next command (now: subagent-otel check --deliver)`;
  if (lost === 0 && !report.timedOut) return `telemetry was not delivered yet: ${kept}`;
  // Worded so it is never mistaken for the exporter's own drop line ("traces: otlp export failed") in the log.
  const first = (report.errors[0] ?? 'flush timed out').replace(/^(traces|metrics): /, '$1, ');
  return `telemetry was not delivered: ${report.dropped.traces} span(s) and ${report.dropped.metrics} metric batch(es) dropped (first problem: ${first})${outboxed > 0 ? `; ${kept}` : ''}`;
}

/**
 * Chunks forwarded before the observation is there, in order, up to
 * `limitBytes`; past it chunks are counted as not observed. Ends of a
 * direction are kept in order with the chunks.
 */
export class StartupQueue {
  readonly #limitBytes: number;
  #items: Array<[Direction, Buffer | null, number]> = [];
  #bytes = 0;
  /** Whether some chunk did not fit (it was forwarded, not observed). */
  overflowed = false;

  constructor(limitBytes: number = STARTUP_QUEUE_LIMIT_BYTES) {
    this.#limitBytes = limitBytes;
  }

  /**
   * Holds a copy of a chunk (the bridge reads into a forwarded chunk's memory
   * again: `borrowedChunks`) with the time it was forwarded, or drops it when
   * the queue is full.
   */
  push(direction: Direction, chunk: Buffer, time: number = Date.now()): void {
    if (this.#bytes + chunk.length > this.#limitBytes) {
      this.overflowed = true;
      return;
    }
    this.#bytes += chunk.length;
    this.#items.push([direction, Buffer.from(chunk), time]);
  }

  /** Holds the end of a direction. */
  end(direction: Direction, time: number = Date.now()): void {
    this.#items.push([direction, null, time]);
  }

  /** Hands everything held, in order, to `target` and empties the queue. */
  drainInto(target: Pick<ProxyObservation, 'push' | 'end'>): void {
    const items = this.#items;
    this.#items = [];
    this.#bytes = 0;
    for (const [direction, chunk, time] of items) {
      if (chunk === null) target.end(direction);
      else target.push(direction, chunk, time);
    }
  }
}

/**
 * Loads the Node built-in modules that the observation's own modules import
 * and that the spawn path has not loaded, so that they come from Node's code
 * cache of its built-ins before `onLoadingObservation` (which may set a V8
 * flag: any flag set makes V8 refuse that cache, and each of these modules
 * would then be compiled from source, decision 0122). Only a matter of
 * time: a module left out of this list still loads when imported.
 */
async function loadObservationBuiltins(): Promise<void> {
  await Promise.all([import('node:crypto'), import('node:fs/promises')]);
}

/**
 * Hooks of `runProxy` into the process's V8 settings (decision 0122), each
 * called at most once. `onShortSessionOver` may come first (1 MiB forwarded
 * before the observation loaded): `onLoadingObservation` is then not called.
 */
export interface ProxyStartHooks {
  /**
   * The agent was spawned and the built-ins the observation needs are
   * loaded; its own modules load next. Only while the session is short.
   */
  onLoadingObservation?: () => void;
  /** The observation is loaded and built, before it takes the chunks queued meanwhile. */
  onObserving?: () => void;
  /**
   * The session stopped being a short one (`ShortSessionWatch`): 1 MiB
   * forwarded, 1 s after `onObserving`, or the agent's exit, whichever
   * first. Not called when the agent could not be started.
   */
  onShortSessionOver?: () => void;
}

/**
 * Runs the proxy until the child exits and telemetry is flushed.
 * @param io.pipes the child's pipes when `prepareChildPipes` was started
 *   earlier (awaited just before spawning); default: made at spawn.
 * @param io.onLoadingObservation, io.onObserving, io.onShortSessionOver: see
 *   {@link ProxyStartHooks}.
 * @returns the child's exit. Prints nothing on stdout. On stderr (and in the
 *   `SUBAGENT_OTEL_LOG_FILE` log) at most one line of its own about telemetry:
 *   at start when the configuration is unusable (an output directory or
 *   capture file that cannot be written, an endpoint that is no URL, an
 *   unsupported exporter), else at exit when telemetry was dropped; one
 *   warning line per privacy setting that was not understood (content capture
 *   then off); plus one line when the command could not be started. The
 *   child's bytes are untouched either way.
 */
export async function runProxy(
  cmd: ProxyCommand,
  io: {
    env: NodeJS.ProcessEnv;
    stderr: NodeJS.WritableStream;
    pipes?: Promise<ChildPipes | undefined>;
    /** Signals handled (see {@link FINISHING_SIGNALS}); `[]` when embedding. */
    signals?: readonly NodeJS.Signals[];
  } & ProxyStartHooks,
): Promise<ProxyExit> {
  let observation: ProxyObservation | undefined;
  const queue = new StartupQueue();
  const shortSession = new ShortSessionWatch(() => io.onShortSessionOver?.());
  // Opt-in only (docs/AGENTS.md): without the flag nothing of it loads and the agent gets the proxy's own environment.
  let agentTelemetry: AgentTelemetry | undefined;
  if (cmd.agentTelemetry === true) {
    const { startAgentTelemetry } = await import('./agent-telemetry.js');
    agentTelemetry = await startAgentTelemetry(
      io.env,
      (message) => io.stderr.write(`subagent-otel proxy: warning: ${message}\n`),
      // A run whose wait the end of input shortened is exported as soon as it is passed on.
      () => void observation?.flush(),
    );
  }
  // Observer errors before the observation loaded cannot happen (chunks are only queued); later ones go to its log.
  const exited = runStdioProxy({
    command: cmd.command,
    args: cmd.args,
    env: agentTelemetry?.childEnv ?? io.env,
    ...(io.pipes !== undefined ? { pipes: (await io.pipes) ?? null } : {}),
    onChunk: (direction, chunk) => {
      shortSession.forwarded(chunk.length);
      if (observation !== undefined) observation.push(direction, chunk);
      else queue.push(direction, chunk);
    },
    // The observation keeps no chunk past the call (the queue copies): the bridge may reuse its read buffer.
    borrowedChunks: true,
    onEnd: (direction) => (observation !== undefined ? observation.end(direction) : queue.end(direction)),
    onStdoutEnd: () => void closeProcessStdout(),
    onObserverError: (err) =>
      observation?.log(
        'error',
        `subagent-otel: observation failed, forwarding continues: ${err instanceof Error ? err.message : String(err)}`,
      ),
  });

  // Installed once the bridge forwards signals (it did so synchronously at the spawn): a signal before that ends the
  // proxy as it always did, with nothing observed yet; from here on what ended is exported first.
  let signalled = false;
  let agentExited = false;
  let abandon: (() => void) | undefined;
  const signals = io.signals ?? FINISHING_SIGNALS;
  const onSignal = (): void => {
    if (signalled && agentExited) {
      abandon?.();
      return;
    }
    signalled = true;
    observation?.hurry();
  };
  for (const signal of signals) process.on(signal, onSignal);
  try {
    return await observeUntilExit(cmd, io, exited, queue, agentTelemetry, shortSession, {
      observing: (ready) => {
        observation = ready;
        if (signalled) ready.hurry();
      },
      exited: () => {
        agentExited = true;
      },
      abandoned: new Promise<void>((resolve) => (abandon = resolve)),
    });
  } finally {
    for (const signal of signals) process.off(signal, onSignal);
  }
}

/** The rest of `runProxy` once the agent runs: load the observation, wait for the exit, finish (or be abandoned). */
async function observeUntilExit(
  cmd: ProxyCommand,
  io: { env: NodeJS.ProcessEnv; stderr: NodeJS.WritableStream } & ProxyStartHooks,
  exited: Promise<ProxyExit>,
  queue: StartupQueue,
  agentTelemetry: AgentTelemetry | undefined,
  shortSession: ShortSessionWatch,
  hooks: { observing(ready: ProxyObservation): void; exited(): void; readonly abandoned: Promise<void> },
): Promise<ProxyExit> {
  // The agent runs: now load the observation beside it, its Node built-ins first.
  await loadObservationBuiltins();
  if (!shortSession.over) io.onLoadingObservation?.();
  const { startProxyObservation } = await import('./proxy-observation.js');
  const ready = startProxyObservation(cmd, io, agentTelemetry);
  ready.log('info', `subagent-otel: ${compileCacheNote()}`);
  io.onObserving?.();
  shortSession.observing();
  let warned = false;
  const warnOnce = (what: string): void => {
    if (warned) return;
    warned = true;
    const line = configurationWarning(what, (io.env[ENV_LOG_FILE] ?? '') !== '');
    io.stderr.write(`${line}\n`);
    ready.log('warn', line);
  };
  queue.drainInto(ready);
  if (queue.overflowed)
    ready.log(
      'warn',
      `subagent-otel: more than ${STARTUP_QUEUE_LIMIT_BYTES} bytes arrived while telemetry was loading; the excess was forwarded but not observed`,
    );
  hooks.observing(ready);
  // Checked beside the running agent, never before it: forwarding does not wait for the file system.
  const checked = ready.configurationProblems.then((problems) => {
    if (problems.length > 0) warnOnce(`telemetry configuration problem: ${problems.join('; ')}`);
  });

  const exit = await exited;
  hooks.exited();
  // Before the flush: what it loads (node:http for an OTLP exporter) and runs is not held back.
  if (exit.spawnError === undefined) shortSession.ended();
  if (exit.spawnError !== undefined)
    io.stderr.write(`subagent-otel proxy: cannot start '${cmd.command}': ${exit.spawnError}\n`);
  // The check started with the observation and is normally long done; it decides which one line is said.
  const finishing = Promise.all([ready.finish(describeExit(exit)), checked]).then(([finished]) => {
    const problem = deliveryProblem(finished.telemetry, finished.captureError);
    if (problem !== undefined) warnOnce(problem);
  });
  await Promise.race([
    finishing,
    hooks.abandoned.then(() =>
      ready.log('warn', 'subagent-otel: signalled again while finishing; exiting without waiting for the flush'),
    ),
  ]);
  return exit;
}
