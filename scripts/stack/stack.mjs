/**
 * The subagent-otel stack without Docker: the collector (single tier, or an
 * agent and two gateways), Jaeger, Prometheus 3 and Alertmanager as local
 * processes on 127.0.0.1, each running the config file docker-compose.yml
 * mounts. Addresses reach the configs through their ${env:...} variables;
 * Prometheus runs a byte-for-byte copy of prometheus.yml and rules.yml in the
 * run directory, where its file_sd target files are written.
 *
 * Owns the run directory (state file stack.json, one log and data folder per
 * process) and the processes it starts; never touches another process. Used
 * by scripts/stack.mjs (up/down/status) and by the tests in test/stack/.
 *
 * @module subagent-otel/scripts/stack/stack
 */

import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, openSync, closeSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ROOT, alertmanagerBinary, binary } from './engines.mjs';

const CONFIG = join(ROOT, 'collector-config');
const HOST = '127.0.0.1';

/** The ports docker-compose.yml publishes; `up` uses them unless told to take free ports. */
export const PUBLISHED = Object.freeze({
  otlpGrpc: 4317,
  otlpHttp: 4318,
  jaegerUi: 16686,
  prometheus: 9090,
  alertmanager: 9093,
});

/** Opens `count` sockets on port 0 at once, so the kernel hands out distinct free ports, then closes them. */
async function freePorts(count) {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise((resolve, reject) => {
          const srv = createServer();
          srv.once('error', reject);
          srv.listen(0, HOST, () => resolve(srv));
        }),
    ),
  );
  const ports = servers.map((s) => s.address().port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/** Polls `probe` every 200 ms until it returns true; rejects after `timeoutMs` with `what`. */
async function waitFor(probe, what, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      if (await probe()) return;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${last})` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function httpOk(url) {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  await res.arrayBuffer();
  return res.status === 200;
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    // ESRCH: gone (EPERM cannot happen for our own children).
    return false;
  }
}

function tailOf(path, bytes = 3000) {
  try {
    const text = readFileSync(path, 'utf8');
    return text.slice(-bytes);
  } catch {
    // No log yet.
    return '';
  }
}

/**
 * Plans the processes of a stack: binaries, arguments, environment, ports.
 * Pure except for reading the engine cache (binary() throws with the build
 * command when an engine is missing).
 */
function plan({ tiers, ports, env, collectorConfigs }) {
  const p = ports;
  const collectorEnv = (c) => ({
    STACK_OTLP_GRPC_ENDPOINT: `${HOST}:${c.otlpGrpc}`,
    STACK_OTLP_HTTP_ENDPOINT: `${HOST}:${c.otlpHttp}`,
    STACK_HEALTH_CHECK_ENDPOINT: `${HOST}:${c.health}`,
    STACK_PROMETHEUS_EXPORTER_ENDPOINT: `${HOST}:${c.exporter}`,
    STACK_TELEMETRY_HOST: HOST,
    STACK_TELEMETRY_PORT: String(c.telemetry),
    STACK_JAEGER_OTLP_ENDPOINT: `${HOST}:${p.jaegerOtlp}`,
  });
  const otelcol = binary('subagent-otelcol');
  const collectors =
    tiers === 1
      ? [{ name: 'collector', config: 'otelcol.yaml', ports: p.collectors[0] }]
      : [
          { name: 'agent', config: 'otelcol.agent.yaml', ports: p.collectors[0] },
          { name: 'gateway-1', config: 'otelcol.gateway.yaml', ports: p.collectors[1] },
          { name: 'gateway-2', config: 'otelcol.gateway.yaml', ports: p.collectors[2] },
        ];
  const processes = [
    {
      name: 'jaeger',
      bin: binary('jaeger'),
      args: [`--config=${join(CONFIG, 'jaeger.yaml')}`],
      env: {
        JAEGER_OTLP_GRPC_ENDPOINT: `${HOST}:${p.jaegerOtlp}`,
        JAEGER_QUERY_HTTP_ENDPOINT: `${HOST}:${p.jaegerUi}`,
        JAEGER_QUERY_GRPC_ENDPOINT: `${HOST}:${p.jaegerQueryGrpc}`,
        JAEGER_HEALTH_CHECK_ENDPOINT: `${HOST}:${p.jaegerHealth}`,
        JAEGER_TELEMETRY_HOST: HOST,
        JAEGER_TELEMETRY_PORT: String(p.jaegerTelemetry),
      },
      ready: `http://${HOST}:${p.jaegerUi}/api/services`,
    },
    ...collectors.map((c) => ({
      name: c.name,
      bin: otelcol,
      args: [`--config=${join(CONFIG, c.config)}`, ...collectorConfigs.map((file) => `--config=${file}`)],
      env: {
        ...collectorEnv(c.ports),
        ...(c.name === 'agent'
          ? {
              STACK_GATEWAY_1_ENDPOINT: `${HOST}:${p.collectors[1].otlpGrpc}`,
              STACK_GATEWAY_2_ENDPOINT: `${HOST}:${p.collectors[2].otlpGrpc}`,
              // The persistent sending queue (file_storage/queue), relative to the run directory (the cwd).
              STACK_AGENT_QUEUE_DIR: 'agent-queue',
            }
          : {}),
        ...(c.name.startsWith('gateway')
          ? {
              ...(env.COMPLETED_TRACE_SAMPLING_PERCENTAGE
                ? { COMPLETED_TRACE_SAMPLING_PERCENTAGE: env.COMPLETED_TRACE_SAMPLING_PERCENTAGE }
                : {}),
              ...(env.TAIL_SAMPLING_DECISION_WAIT
                ? { TAIL_SAMPLING_DECISION_WAIT: env.TAIL_SAMPLING_DECISION_WAIT }
                : {}),
            }
          : {}),
      },
      ready: `http://${HOST}:${c.ports.health}/`,
      ports: c.ports,
    })),
    {
      name: 'alertmanager',
      bin: alertmanagerBinary(),
      args: (dir) => [
        `--config.file=${join(CONFIG, 'alertmanager', 'alertmanager.yml')}`,
        `--storage.path=${join(dir, 'alertmanager-data')}`,
        `--web.listen-address=${HOST}:${p.alertmanager}`,
        '--cluster.listen-address=',
      ],
      env: {},
      ready: `http://${HOST}:${p.alertmanager}/-/ready`,
    },
    {
      name: 'prometheus',
      bin: binary('prometheus'),
      args: (dir) => [
        `--config.file=${join(dir, 'prometheus', 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'prometheus-data')}`,
        `--web.listen-address=${HOST}:${p.prometheus}`,
      ],
      env: {},
      ready: `http://${HOST}:${p.prometheus}/-/ready`,
    },
  ];
  return { processes, collectors };
}

/** Writes Prometheus's run-directory copy of prometheus.yml and rules.yml, and its file_sd targets. */
function writePrometheusFiles(dir, { collectors, ports, tiers, rules }) {
  const promDir = join(dir, 'prometheus');
  mkdirSync(join(promDir, 'targets'), { recursive: true });
  copyFileSync(join(CONFIG, 'prometheus', 'prometheus.yml'), join(promDir, 'prometheus.yml'));
  if (rules === undefined) copyFileSync(join(CONFIG, 'prometheus', 'rules.yml'), join(promDir, 'rules.yml'));
  else writeFileSync(join(promDir, 'rules.yml'), rules);
  const targets = (list) => `${JSON.stringify([{ targets: list }], null, 2)}\n`;
  const exporters = collectors.filter((c) => c.name !== 'agent').map((c) => `${HOST}:${c.ports.exporter}`);
  writeFileSync(join(promDir, 'targets', 'otel-collector.json'), targets(tiers === 1 ? exporters : []));
  writeFileSync(join(promDir, 'targets', 'otel-gateway.json'), targets(tiers === 1 ? [] : exporters));
  writeFileSync(
    join(promDir, 'targets', 'otelcol-telemetry.json'),
    targets(collectors.map((c) => `${HOST}:${c.ports.telemetry}`)),
  );
  writeFileSync(join(promDir, 'targets', 'alertmanager.json'), targets([`${HOST}:${ports.alertmanager}`]));
}

/**
 * One running stack.
 * @typedef {object} Stack
 * @property {string} dir run directory
 * @property {1|2} tiers
 * @property {Record<string, unknown>} urls addresses for users and tests
 * @property {(name: string) => number|undefined} pid
 * @property {(name: string, signal?: NodeJS.Signals) => Promise<void>} kill ends one process and waits for its exit
 * @property {(name: string) => Promise<void>} start starts one (stopped) process again, waits until ready
 * @property {(name: string) => string} logTail
 * @property {() => Promise<void>} stop ends every process (SIGTERM, then SIGKILL after 10 s)
 */

const STATE = 'stack.json';

/**
 * Starts the stack in `dir` (created; an older stack there must be down).
 * @param {object} options
 * @param {1|2} [options.tiers] 1: one collector; 2: agent + two gateways
 * @param {'free'|'published'} [options.ports] published: the compose ports for OTLP and the UIs
 * @param {string} options.dir run directory
 * @param {string} [options.rules] rules.yml text instead of the shipped one (tests use short windows)
 * @param {Record<string,string>} [options.env] COMPLETED_TRACE_SAMPLING_PERCENTAGE, TAIL_SAMPLING_DECISION_WAIT for the gateways
 * @param {string[]} [options.collectorConfigs] config files every collector loads after its own (`--config` each, merged as compose merges otelcol.files.yaml)
 * @param {boolean} [options.detached] processes outlive this one (the `up` command)
 * @param {number} [options.readyTimeoutMs] per process, default 120 000
 * @param {(line: string) => void} [options.log]
 * @returns {Promise<Stack>} once every process answers its readiness probe. On failure the started processes are stopped and the error carries the failing one's log tail.
 */
export async function startStack(options) {
  const tiers = options.tiers ?? 1;
  if (tiers !== 1 && tiers !== 2) throw new Error(`--tiers must be 1 or 2, not ${String(tiers)}`);
  const dir = options.dir;
  const log = options.log ?? (() => undefined);
  const readyTimeoutMs = options.readyTimeoutMs ?? 120_000;
  if (existsSync(join(dir, STATE))) {
    const old = JSON.parse(readFileSync(join(dir, STATE), 'utf8'));
    const alive = Object.entries(old.pids ?? {}).filter(([, pid]) => isAlive(pid));
    if (alive.length > 0)
      throw new Error(
        `a stack is already up in ${dir} (${alive.map(([n, pid]) => `${n} pid ${pid}`).join(', ')}): run \`npm run stack -- down\` first`,
      );
  }
  mkdirSync(join(dir, 'logs'), { recursive: true });
  const free = await freePorts(5 + 3 * 5 + 5);
  const take = () => {
    const port = free.shift();
    if (port === undefined) throw new Error('ran out of free ports');
    return port;
  };
  const published = options.ports === 'published';
  const collectorPorts = (first) => ({
    otlpGrpc: first && published ? PUBLISHED.otlpGrpc : take(),
    otlpHttp: first && published ? PUBLISHED.otlpHttp : take(),
    health: take(),
    exporter: take(),
    telemetry: take(),
  });
  const ports = {
    jaegerOtlp: take(),
    jaegerUi: published ? PUBLISHED.jaegerUi : take(),
    jaegerQueryGrpc: take(),
    jaegerHealth: take(),
    jaegerTelemetry: take(),
    prometheus: published ? PUBLISHED.prometheus : take(),
    alertmanager: published ? PUBLISHED.alertmanager : take(),
    collectors: [collectorPorts(true), collectorPorts(false), collectorPorts(false)],
  };
  const { processes, collectors } = plan({
    tiers,
    ports,
    env: options.env ?? {},
    collectorConfigs: options.collectorConfigs ?? [],
  });
  writePrometheusFiles(dir, { collectors, ports, tiers, rules: options.rules });

  const pids = {};
  const children = new Map();
  const exits = new Map();
  const specs = new Map(processes.map((p) => [p.name, p]));
  const logPath = (name) => join(dir, 'logs', `${name}.log`);
  const saveState = () =>
    writeFileSync(
      join(dir, STATE),
      `${JSON.stringify({ tiers, pids, urls, startedAt: new Date().toISOString() }, null, 2)}\n`,
    );

  const first = collectors[0].ports;
  const urls = {
    otlpHttp: `http://${HOST}:${first.otlpHttp}`,
    otlpGrpc: `http://${HOST}:${first.otlpGrpc}`,
    jaeger: `http://${HOST}:${ports.jaegerUi}`,
    prometheus: `http://${HOST}:${ports.prometheus}`,
    alertmanager: `http://${HOST}:${ports.alertmanager}`,
    collectors: Object.fromEntries(
      collectors.map((c) => [
        c.name,
        {
          otlpGrpc: `http://${HOST}:${c.ports.otlpGrpc}`,
          otlpHttp: `http://${HOST}:${c.ports.otlpHttp}`,
          metrics: `http://${HOST}:${c.ports.exporter}/metrics`,
          telemetry: `http://${HOST}:${c.ports.telemetry}/metrics`,
        },
      ]),
    ),
  };

  const launch = async (name) => {
    const spec = specs.get(name);
    if (spec === undefined) throw new Error(`no process ${name} in this stack`);
    const fd = openSync(logPath(name), 'a');
    const args = typeof spec.args === 'function' ? spec.args(dir) : spec.args;
    const child = spawn(spec.bin, args, {
      cwd: dir,
      env: { ...process.env, ...spec.env },
      stdio: ['ignore', fd, fd],
      detached: options.detached === true,
    });
    closeSync(fd);
    if (options.detached === true) child.unref();
    const exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.once('error', (err) => resolve({ code: -1, signal: null, error: err.message }));
    });
    children.set(name, child);
    exits.set(name, exited);
    pids[name] = child.pid;
    saveState();
    log(`stack: started ${name} (pid ${child.pid}), log ${logPath(name)}`);
    let gone = false;
    void exited.then(() => {
      gone = true;
    });
    await waitFor(
      async () => {
        if (gone) throw new Error(`${name} exited`);
        return httpOk(spec.ready);
      },
      `${name} to answer ${spec.ready}`,
      readyTimeoutMs,
    ).catch((err) => {
      throw new Error(`${err.message}\n--- ${logPath(name)} (tail):\n${tailOf(logPath(name))}`);
    });
    log(`stack: ${name} ready (${spec.ready})`);
  };

  const kill = async (name, signal = 'SIGTERM') => {
    const child = children.get(name);
    const exited = exits.get(name);
    if (child === undefined || exited === undefined) return;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      const escalate = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(escalate);
    }
    delete pids[name];
    saveState();
  };

  const stop = async () => {
    for (const name of [...children.keys()].reverse()) await kill(name);
  };

  try {
    // Backends first, so the collectors' first exports have somewhere to go.
    await launch('jaeger');
    for (const c of [...collectors].reverse()) await launch(c.name);
    await launch('alertmanager');
    await launch('prometheus');
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    dir,
    tiers,
    urls,
    pid: (name) => pids[name],
    kill,
    start: launch,
    logTail: (name) => tailOf(logPath(name)),
    stop,
  };
}

/**
 * Stops the stack whose state file is in `dir`: SIGTERM to every recorded
 * process, SIGKILL to any still alive after 10 s.
 * @returns the names of the processes that were running.
 */
export async function stopStack(dir, log = () => undefined) {
  const statePath = join(dir, STATE);
  if (!existsSync(statePath)) return [];
  const state = JSON.parse(readFileSync(statePath, 'utf8'));
  const alive = Object.entries(state.pids ?? {}).filter(([, pid]) => isAlive(pid));
  for (const [name, pid] of alive) {
    process.kill(pid, 'SIGTERM');
    log(`stack: stopping ${name} (pid ${pid})`);
  }
  const deadline = Date.now() + 10_000;
  while (alive.some(([, pid]) => isAlive(pid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const [name, pid] of alive) {
    if (isAlive(pid)) {
      process.kill(pid, 'SIGKILL');
      log(`stack: killed ${name} (pid ${pid}) after 10 s`);
    }
  }
  rmSync(statePath, { force: true });
  return alive.map(([name]) => name);
}

/**
 * Reads the state file in `dir` and probes every recorded process.
 * @returns undefined when no stack was started there; else tiers, urls and per process pid and alive.
 */
export function stackStatus(dir) {
  const statePath = join(dir, STATE);
  if (!existsSync(statePath)) return undefined;
  const state = JSON.parse(readFileSync(statePath, 'utf8'));
  return {
    tiers: state.tiers,
    urls: state.urls,
    processes: Object.fromEntries(
      Object.entries(state.pids ?? {}).map(([name, pid]) => [name, { pid, alive: isAlive(pid) }]),
    ),
  };
}
