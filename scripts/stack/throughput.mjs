#!/usr/bin/env node
/**
 * Measures what the collector tier takes: N proxies (the built CLI in front of
 * the scripted SDK runtime) each send R delegated runs at once to a fresh
 * stack on free loopback ports; reports spans per second from the first
 * proxy's start to the moment the collector (or the agent) has accepted every
 * span, and the collector processes' CPU time per 1,000 spans (from
 * /proc/<pid>/stat). A measurement for the README, not a test.
 *
 *   node scripts/stack/throughput.mjs [--tiers 1|2] [--proxies N] [--runs R]
 *
 * Needs `npm run build` and the engines (`npm run stack -- build`).
 *
 * @module subagent-otel/scripts/stack/throughput
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './engines.mjs';
import { startStack } from './stack.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i === -1 ? dflt : Number(args[i + 1]);
};
const tiers = opt('--tiers', 1);
const proxies = opt('--proxies', 4);
const runs = opt('--runs', 100);
const CLI = join(ROOT, 'dist', 'cli', 'subagent-otel.js');
const RUNTIME = join(ROOT, 'dist', 'fixtures', 'sdk-runtime.js');
const CLK_TCK = 100;

function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

async function acceptedSpans(url) {
  const text = await (await fetch(url)).text();
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('otelcol_receiver_accepted_spans')) sum += Number(line.split(' ').at(-1));
  return sum;
}

function runProxy(otlpHttp, index) {
  const out = mkdtempSync(join(tmpdir(), 'subagent-otel-throughput-'));
  const input = Array.from(
    { length: runs },
    (_, i) =>
      `${JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'session/prompt', params: { sessionId: `p${index}-${i}`, contentBlocks: [{ type: 'text', text: 'scenario:subagent' }] } })}\n`,
  ).join('');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'proxy', '--agent-name', 'bench', '--', process.execPath, RUNTIME], {
      env: {
        ...process.env,
        OTEL_SERVICE_NAME: 'stack-throughput',
        OTEL_EXPORTER_OTLP_ENDPOINT: otlpHttp,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        SUBAGENT_OTEL_OUT: out,
      },
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    child.once('exit', (code) => {
      rmSync(out, { recursive: true, force: true });
      if (code === 0 && !stderr.includes('not delivered')) resolve();
      else reject(new Error(`proxy ${index} exit ${code}: ${stderr}`));
    });
    child.stdin.end(input);
  });
}

const dir = mkdtempSync(join(tmpdir(), 'subagent-otel-throughput-stack-'));
const stack = await startStack({ dir, tiers, ports: 'free', env: { TAIL_SAMPLING_DECISION_WAIT: '2s' } });
try {
  const front = tiers === 1 ? 'collector' : 'agent';
  const names = tiers === 1 ? ['collector'] : ['agent', 'gateway-1', 'gateway-2'];
  // One warm-up proxy with the same runs, so the spans per proxy are measured, not assumed.
  await runProxy(stack.urls.otlpHttp, -1);
  const url = stack.urls.collectors[front].telemetry;
  let base = 0;
  for (let i = 0; i < 100 && base === 0; i++) {
    base = await acceptedSpans(url);
    if (base === 0) await new Promise((r) => setTimeout(r, 200));
  }
  const perProxy = base;
  const cpu0 = Object.fromEntries(names.map((n) => [n, cpuSeconds(stack.pid(n))]));
  const t0 = Date.now();
  await Promise.all(Array.from({ length: proxies }, (_, i) => runProxy(stack.urls.otlpHttp, i)));
  const expected = base + perProxy * proxies;
  let now = base;
  while (now < expected) {
    await new Promise((r) => setTimeout(r, 100));
    now = await acceptedSpans(url);
  }
  const seconds = (Date.now() - t0) / 1000;
  const spans = now - base;
  const cpu = Object.fromEntries(names.map((n) => [n, cpuSeconds(stack.pid(n)) - cpu0[n]]));
  const totalCpu = Object.values(cpu).reduce((a, b) => a + b, 0);
  console.log(
    JSON.stringify(
      {
        tiers,
        proxies,
        runsPerProxy: runs,
        spans,
        seconds: Math.round(seconds * 10) / 10,
        spansPerSecond: Math.round(spans / seconds),
        collectorCpuSeconds: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, Math.round(v * 100) / 100])),
        collectorCpuMsPer1000Spans: Math.round((totalCpu * 1000 * 1000) / spans),
      },
      null,
      2,
    ),
  );
} finally {
  await stack.stop();
  rmSync(dir, { recursive: true, force: true });
}
