/**
 * Process plumbing shared by the proxy benchmarks: the command lines of the
 * three ways bytes travel (plain pipe, bridge with observation off,
 * `subagent-otel proxy` with telemetry on), a clean telemetry environment,
 * and waiting until a proxy's observation is live.
 *
 * Readiness: the proxy loads its observation after spawning the agent and
 * prints nothing, so the harness asks it for a sign through configuration
 * alone. `OTEL_TRACES_EXPORTER=otlp,bench-ready` makes telemetry setup
 * report the unknown exporter name once through the diag logger, which the
 * proxy appends synchronously to `SUBAGENT_OTEL_LOG_FILE`; the tracker and
 * tap are built in the same synchronous step. The unknown name is skipped,
 * so telemetry is exactly the default (OTLP-JSON-lines files in `--out`).
 *
 * @module subagent-otel/bench/lib/processes
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, watch } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI } from './common.mjs';

const PEERS = fileURLToPath(new URL('../peers/', import.meta.url));
/** `bench/peers/<name>`. */
export const peer = (name) => join(PEERS, name);

/** The exporter name whose "unsupported" report marks the observation as live. */
export const READY_EXPORTER = 'bench-ready';

/**
 * The environment of a proxied run: the harness's own minus every
 * `OTEL_*`/`SUBAGENT_OTEL_*` variable (so a developer's collector settings
 * never leak in), plus the file exporter and the readiness report.
 */
export function proxyEnv(outDir, logFile) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('OTEL_') && !key.startsWith('SUBAGENT_OTEL_') && key !== 'TRACEPARENT' && key !== 'TRACESTATE')
      env[key] = value;
  }
  return {
    ...env,
    SUBAGENT_OTEL_OUT: outDir,
    SUBAGENT_OTEL_LOG_FILE: logFile,
    OTEL_TRACES_EXPORTER: `otlp,${READY_EXPORTER}`,
  };
}

/**
 * Argv (after `node`) of each variant around an agent command.
 * - `pipe`: the agent itself; the harness reads its stdout directly.
 * - `bridge`: `bench/peers/bridge-only.mjs` (the proxy's bridge, observation off).
 * - `proxy`: `subagent-otel proxy --protocol sdk --out <outDir>` (telemetry on, file exporter).
 */
export function variantArgv(variant, agent, outDir) {
  switch (variant) {
    case 'pipe':
      return agent;
    case 'bridge':
      return [peer('bridge-only.mjs'), process.execPath, ...agent];
    case 'relay':
      return [peer('plain-relay.mjs'), process.execPath, ...agent];
    case 'proxy':
      return [CLI, 'proxy', '--protocol', 'sdk', '--out', outDir, '--', process.execPath, ...agent];
    default:
      throw new Error(`unknown variant ${variant}`);
  }
}

/** Spawns `node <argv>` with piped stdio. */
export function spawnNode(argv, env) {
  return spawn(process.execPath, argv, { stdio: ['pipe', 'pipe', 'pipe'], env });
}

/**
 * Resolves once `logFile` holds the readiness report (see the module
 * header), i.e. the proxy's observation is live. Event-driven (a watch on
 * the directory), with `timeoutMs` as a guard against a proxy that never
 * gets there: then it rejects, naming the file.
 */
export function waitForReady(logFile, timeoutMs = 30_000) {
  const isReady = () => existsSync(logFile) && readFileSync(logFile, 'utf8').includes(READY_EXPORTER);
  return new Promise((resolve, reject) => {
    if (isReady()) return resolve();
    const watcher = watch(dirname(logFile), (_event, name) => {
      if ((name === null || name === basename(logFile)) && isReady()) done(undefined);
    });
    const timer = setTimeout(() => done(new Error(`the proxy never reported ready in ${logFile}`)), timeoutMs);
    function done(error) {
      clearTimeout(timer);
      watcher.close();
      if (error === undefined) resolve();
      else reject(error);
    }
    // The report may have landed between the first check and the watch starting.
    if (isReady()) done(undefined);
  });
}

/** Resolves with `{ code, signal }` when the process has exited and its stdio closed. */
export function closed(child) {
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
}
