#!/usr/bin/env node
/**
 * `npm run stack -- <command>`: the subagent-otel stack without Docker.
 *
 *   build                 build the engines that are missing or stale (Go)
 *   up [--tiers 1|2] [--free-ports] [--dir <dir>]
 *                         build or reuse the engines, start the stack on 127.0.0.1
 *   status [--dir <dir>]  which processes run, and where
 *   down [--dir <dir>]    stop it
 *
 * The run directory defaults to ${XDG_STATE_HOME:-~/.local/state}/subagent-otel/stack.
 * docs/STACK.md has the details.
 *
 * @module subagent-otel/scripts/stack
 */

import { homedir } from 'node:os';
import { join } from 'node:path';
import { ENGINES, engineDir, ensureEngines } from './stack/engines.mjs';
import { stackStatus, startStack, stopStack } from './stack/stack.mjs';

const USAGE =
  'usage: npm run stack -- build | up [--tiers 1|2] [--free-ports] [--dir <dir>] | status [--dir <dir>] | down [--dir <dir>]';

function parse(argv) {
  const [command, ...rest] = argv;
  const opts = { command, tiers: 1, freePorts: false, dir: undefined };
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a === '--tiers') {
      const v = rest[++i];
      if (v !== '1' && v !== '2') throw new Error(`--tiers takes 1 or 2, not ${v ?? 'nothing'}\n${USAGE}`);
      opts.tiers = Number(v);
    } else if (a === '--free-ports') opts.freePorts = true;
    else if (a === '--dir') {
      opts.dir = rest[++i];
      if (opts.dir === undefined) throw new Error(`--dir needs a directory\n${USAGE}`);
    } else throw new Error(`unknown argument ${a}\n${USAGE}`);
  }
  if (!['build', 'up', 'down', 'status'].includes(command ?? '')) throw new Error(USAGE);
  return opts;
}

function defaultDir() {
  const base =
    process.env.XDG_STATE_HOME && process.env.XDG_STATE_HOME !== ''
      ? process.env.XDG_STATE_HOME
      : join(homedir(), '.local', 'state');
  return join(base, 'subagent-otel', 'stack');
}

async function main() {
  const opts = parse(process.argv.slice(2));
  const dir = opts.dir ?? defaultDir();
  const log = (line) => console.error(line);
  if (opts.command === 'build') {
    const r = await ensureEngines({ log });
    for (const e of ENGINES)
      console.log(
        `${e.name} ${e.version}: ${r[e.name] === 'reused' ? 'up to date' : `built in ${r[e.name]} s`} (${engineDir(e)})`,
      );
    return;
  }
  if (opts.command === 'down') {
    const stopped = await stopStack(dir, log);
    console.log(stopped.length === 0 ? `no stack running in ${dir}` : `stopped ${stopped.join(', ')}`);
    return;
  }
  if (opts.command === 'status') {
    const s = stackStatus(dir);
    if (s === undefined) {
      console.log(`no stack in ${dir}`);
      process.exitCode = 3;
      return;
    }
    console.log(JSON.stringify(s, null, 2));
    if (Object.values(s.processes).some((p) => !p.alive)) process.exitCode = 1;
    return;
  }
  await ensureEngines({ log });
  const stack = await startStack({
    tiers: opts.tiers,
    ports: opts.freePorts ? 'free' : 'published',
    dir,
    detached: true,
    log,
  });
  console.log(`stack up (${opts.tiers === 1 ? 'single tier' : 'agent + 2 gateways'}), run directory ${dir}
  observer:     OTEL_EXPORTER_OTLP_ENDPOINT=${stack.urls.otlpHttp} OTEL_EXPORTER_OTLP_PROTOCOL=http/json
  Jaeger API:   ${stack.urls.jaeger}/api/traces?service=subagent-otel
  Prometheus:   ${stack.urls.prometheus}/api/v1/alerts
  Alertmanager: ${stack.urls.alertmanager}/api/v2/alerts
stop it with: npm run stack -- down${opts.dir ? ` --dir ${opts.dir}` : ''}`);
}

main().catch((err) => {
  console.error(`stack: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
