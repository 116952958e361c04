/**
 * Test helper: real Prometheus and Alertmanager servers on 127.0.0.1, each in
 * a temporary directory of its own, on a free port, ready when their
 * `/-/ready` endpoint answers 200. Also finds the Prometheus command-line
 * tools and polls HTTP endpoints until a condition holds.
 *
 * Owns only the processes and directories it creates: `stop()` ends the
 * process (SIGTERM, then SIGKILL after 5 s) and removes the directory, and a
 * process-exit hook kills any server a test forgot to stop. Never sleeps for a
 * fixed time: readiness and conditions are polled over HTTP, failures are
 * reported with the server's own last log lines.
 *
 * @module subagent-otel/test/helpers/prometheus
 */

import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { binary } from '../../scripts/stack/engines.mjs';

/**
 * How to install the Debian tools these tests run, as `.ci/run` does.
 * Prometheus and promtool are not among them: the tests run the stack's own
 * Prometheus 3 engine (`binary('prometheus')`, built from Go modules by the
 * suite's global setup or `npm run stack -- build`), the one it deploys.
 */
export const INSTALL_HINTS = {
  alertmanager: 'apt-get install -y --no-install-recommends prometheus-alertmanager',
  amtool: 'apt-get install -y --no-install-recommends prometheus-alertmanager',
} as const;

/**
 * Finds the first of `names` that is an executable file on `PATH`.
 * @returns its absolute path. Throws an `Error` saying
 *   "`<name>` not found: <installHint>" when none is there; never spawns anything.
 */
export function requireTool(names: readonly [string, ...string[]], installHint: string): string {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter((d) => d !== '');
  for (const name of names) {
    for (const dir of dirs) {
      const candidate = join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // ENOENT / EACCES: not in this PATH entry, try the next one.
      }
    }
  }
  throw new Error(`${names.join(' or ')} not found: ${installHint}`);
}

/** Outcome of one finished command-line tool run. */
export interface ToolRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a command-line tool to completion (at most 60 s) in `cwd`.
 * @returns its exit status and output; a tool that cannot start throws.
 */
export function runTool(path: string, args: readonly string[], cwd?: string): ToolRun {
  const r = spawnSync(path, args, { cwd, encoding: 'utf8', timeout: 60_000 });
  if (r.error !== undefined) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Asks the kernel for a free TCP port on 127.0.0.1.
 * @returns a port that was free a moment ago (the caller retries when a
 *   server then fails to bind it). Never leaves a socket open.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

/** Options of {@link pollUntil}. */
export interface PollOptions {
  /** What is awaited, for the timeout message. */
  readonly what: string;
  /** Give up after this many milliseconds. Default 30 000. */
  readonly timeoutMs?: number;
  /** Pause between two probes. Default 250 ms. */
  readonly intervalMs?: number;
}

/**
 * Calls `probe` until it returns something other than `undefined`.
 * @returns that value. Rejects with "timed out waiting for <what>" (plus the
 *   last probe error, if any) after `timeoutMs`; a probe that throws counts as
 *   "not yet".
 */
export async function pollUntil<T>(probe: () => Promise<T | undefined>, options: PollOptions): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  const interval = options.intervalMs ?? 250;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out waiting for ${options.what}${why}`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** A server process started by this helper. */
export interface LocalServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Its temporary directory (config, data); removed by `stop()`. */
  readonly dir: string;
  /** The last log lines it wrote (stderr and stdout), for failure messages. */
  logTail(): string;
  /** Ends the process and removes `dir`. Idempotent; never rejects. */
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}

const LOG_TAIL_BYTES = 8192;

interface ServerSpec {
  readonly bin: string;
  readonly args: (port: number, dir: string) => string[];
  readonly files: Readonly<Record<string, string>>;
  readonly readyTimeoutMs: number;
}

async function startOnce(spec: ServerSpec, port: number): Promise<LocalServer | 'port-taken'> {
  const dir = mkdtempSync(join(tmpdir(), 'subagent-otel-prom-'));
  for (const [name, text] of Object.entries(spec.files)) writeFileSync(join(dir, name), text);
  const child = spawn(spec.bin, spec.args(port, dir), { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  installExitHook();
  let log = '';
  const append = (chunk: Buffer): void => {
    log = (log + chunk.toString('utf8')).slice(-LOG_TAIL_BYTES);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  let exited = false;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      live.delete(child);
      resolve();
    });
    child.once('error', (err) => {
      log += `\nspawn error: ${err.message}`;
      exited = true;
      live.delete(child);
      resolve();
    });
  });
  const url = `http://127.0.0.1:${port}`;
  let stopped: Promise<void> | undefined;
  const server: LocalServer = {
    url,
    port,
    dir,
    logTail: () => log,
    stop: () => {
      stopped ??= (async () => {
        if (!exited) {
          child.kill('SIGTERM');
          const escalate = setTimeout(() => child.kill('SIGKILL'), 5_000);
          await exitPromise;
          clearTimeout(escalate);
        }
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
  let outcome: 'ready' | 'exited';
  try {
    outcome = await pollUntil<'ready' | 'exited'>(
      async () => {
        if (exited) return 'exited';
        const res = await fetch(`${url}/-/ready`);
        await res.arrayBuffer();
        return res.status === 200 ? 'ready' : undefined;
      },
      { what: `${spec.bin} on ${url} to become ready`, timeoutMs: spec.readyTimeoutMs, intervalMs: 100 },
    );
  } catch (err) {
    await server.stop();
    throw new Error(`${(err as Error).message}\n${log}`);
  }
  if (outcome === 'exited') {
    await server.stop();
    if (/address already in use/i.test(log)) return 'port-taken';
    throw new Error(`${spec.bin} exited before it was ready:\n${log}`);
  }
  return server;
}

async function startServer(spec: ServerSpec): Promise<LocalServer> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const started = await startOnce(spec, await freePort());
    if (started !== 'port-taken') return started;
  }
  throw new Error(`${spec.bin}: three free ports in a row were taken before it could bind them`);
}

/** Options of {@link startPrometheus}. */
export interface StartPrometheusOptions {
  /** The prometheus.yml text. Relative paths in it resolve in the server's directory. */
  readonly config: string;
  /** Further files (rule files) written into the server's directory by name. */
  readonly files?: Readonly<Record<string, string>>;
  /** How long to wait for `/-/ready`. Default 20 000 ms. */
  readonly readyTimeoutMs?: number;
}

/**
 * Starts `prometheus` on 127.0.0.1 with the given configuration, its TSDB in
 * a temporary directory.
 * @returns the ready server. Rejects with the server's log when it exits or is
 *   not ready in time; throws naming `npm run stack -- build` when the
 *   Prometheus 3 engine is not built.
 */
export function startPrometheus(options: StartPrometheusOptions): Promise<LocalServer> {
  const bin = binary('prometheus');
  return startServer({
    bin,
    files: { 'prometheus.yml': options.config, ...(options.files ?? {}) },
    readyTimeoutMs: options.readyTimeoutMs ?? 20_000,
    args: (port, dir) => [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
  });
}

/** Options of {@link startAlertmanager}. */
export interface StartAlertmanagerOptions {
  /** The alertmanager.yml text. */
  readonly config: string;
  /** How long to wait for `/-/ready`. Default 20 000 ms. */
  readonly readyTimeoutMs?: number;
}

/**
 * Starts Alertmanager (Debian's `prometheus-alertmanager`, or `alertmanager`)
 * on 127.0.0.1 with clustering off (`--cluster.listen-address=`), so it opens
 * no other port.
 * @returns the ready server; rejects or throws as {@link startPrometheus} does.
 */
export function startAlertmanager(options: StartAlertmanagerOptions): Promise<LocalServer> {
  const bin = requireTool(['prometheus-alertmanager', 'alertmanager'], INSTALL_HINTS.alertmanager);
  return startServer({
    bin,
    files: { 'alertmanager.yml': options.config },
    readyTimeoutMs: options.readyTimeoutMs ?? 20_000,
    args: (port, dir) => [
      `--config.file=${join(dir, 'alertmanager.yml')}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
      '--log.level=warn',
    ],
  });
}

/**
 * GETs a JSON document from a server started here.
 * @returns the parsed body; throws on a non-2xx status or invalid JSON.
 */
export async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url);
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as unknown;
}

/** One series of an instant query's answer. */
export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

/** Runs an instant PromQL query. @returns the result vector; throws on an HTTP error. */
export async function instantQuery(prom: LocalServer, query: string): Promise<Sample[]> {
  const body = (await getJson(`${prom.url}/api/v1/query?query=${encodeURIComponent(query)}`)) as {
    data: { result: Sample[] };
  };
  return body.data.result;
}

/** One alert as Prometheus's `/api/v1/alerts` lists it. */
export interface ApiAlert {
  labels: Record<string, string>;
  state: string;
  value: string;
}

/** The alerts Prometheus holds now (pending and firing). */
export async function prometheusAlerts(prom: LocalServer): Promise<ApiAlert[]> {
  const body = (await getJson(`${prom.url}/api/v1/alerts`)) as { data: { alerts: ApiAlert[] } };
  return body.data.alerts;
}
