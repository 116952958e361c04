/**
 * Benchmark 3, proxy latency: round-trip time of a JSON-RPC request and its
 * response at a steady 1,000 frames per second, through `subagent-otel
 * proxy` (telemetry on, file exporter) and through the proxy's bridge with
 * observation off, against a direct pipe to the same echo process
 * (`bench/peers/echo.mjs`). The figure is the latency the proxy adds, p50
 * and p99: proxy round trip minus direct round trip, per round. A round
 * trip crosses the proxy twice (request in, response out), so the one-way
 * addition is about half of it; the round-trip addition is what is
 * reported, against the 1 ms target.
 *
 * Frames are sent on a 1 ms schedule (every due frame is written when a
 * 1 ms timer fires, so the rate holds at 1,000/s even when a timer is
 * late); the send time is taken at the write, the receive time when the
 * response line arrives. Before the schedule starts, the proxy's
 * observation is live and one ping has made the whole round trip (every
 * process is up); the first frames after that are a warm-up, not counted.
 *
 * @module subagent-otel/bench/proxy-latency
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchOptions, emitResult, figure, percentile, progress } from './lib/common.mjs';
import { closed, peer, proxyEnv, spawnNode, variantArgv, waitForReady } from './lib/processes.mjs';

const { rounds, scale } = benchOptions({ rounds: 5 });
const RATE = 1000;
const WARMUP = 300;
const MEASURED = Math.max(200, Math.round(2000 * scale));
const PAD = 'x'.repeat(160);
const work = mkdtempSync(join(tmpdir(), 'subagent-otel-bench-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

let runIndex = 0;
/**
 * One run of `WARMUP + MEASURED` frames through a variant.
 * @returns the measured round-trip times in ms, sorted ascending. Throws when a response is missing or wrong.
 */
async function roundTrips(variant) {
  runIndex += 1;
  const dir = join(work, `run-${runIndex}`);
  mkdirSync(dir);
  const outDir = join(dir, 'out');
  const logFile = join(dir, 'proxy.log');
  const child = spawnNode(variantArgv(variant, [peer('echo.mjs')], outDir), proxyEnv(outDir, logFile));
  const ended = closed(child);
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text) => {
    stderr += text;
  });
  if (variant === 'proxy') await waitForReady(logFile);

  const total = WARMUP + MEASURED;
  const sentAt = new Float64Array(total);
  const rtt = new Float64Array(total).fill(Number.NaN);
  let answered = 0;
  let pending = '';
  let resolveAll;
  const allAnswered = new Promise((resolve) => {
    resolveAll = resolve;
  });
  let pinged;
  const ping = new Promise((resolve) => {
    pinged = resolve;
  });
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text) => {
    const now = performance.now();
    pending += text;
    let newline = pending.indexOf('\n');
    let start = 0;
    while (newline !== -1) {
      const response = JSON.parse(pending.slice(start, newline));
      start = newline + 1;
      newline = pending.indexOf('\n', start);
      const id = response.id;
      if (id === 'ping') {
        pinged();
        continue;
      }
      if (!Number.isInteger(id) || id < 0 || id >= total || response.result?.seq !== id)
        throw new Error(`${variant}: unexpected response ${JSON.stringify(response).slice(0, 120)}`);
      rtt[id] = now - sentAt[id];
      answered += 1;
      if (answered === total) resolveAll();
    }
    pending = pending.slice(start);
  });

  // One round trip first: the whole chain (every process started, the proxy observing) is up before timing starts.
  child.stdin.write('{"jsonrpc":"2.0","id":"ping","method":"bench/echo","params":{"seq":"ping"}}\n');
  await ping;

  // Send on a steady 1 ms schedule: every frame that is due when the timer fires.
  const period = 1000 / RATE;
  const t0 = performance.now() + 5;
  let next = 0;
  await new Promise((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (next < total && t0 + next * period <= now) {
        sentAt[next] = performance.now();
        child.stdin.write(
          `{"jsonrpc":"2.0","id":${next},"method":"bench/echo","params":{"seq":${next},"pad":"${PAD}"}}\n`,
        );
        next += 1;
      }
      if (next < total) setTimeout(tick, Math.max(0, t0 + next * period - performance.now()));
      else resolve();
    };
    tick();
  });
  await allAnswered;
  child.stdin.end();
  const exit = await ended;
  if (exit.code !== 0) throw new Error(`${variant} exited with ${exit.code ?? exit.signal}: ${stderr.slice(0, 500)}`);
  rmSync(dir, { recursive: true, force: true });
  return Array.from(rtt.subarray(WARMUP)).sort((a, b) => a - b);
}

const variants = ['direct', 'relay', 'bridge', 'proxy'];
const argvVariant = { direct: 'pipe', relay: 'relay', bridge: 'bridge', proxy: 'proxy' };
const p50 = Object.fromEntries(variants.map((v) => [v, []]));
const p99 = Object.fromEntries(variants.map((v) => [v, []]));
const max = Object.fromEntries(variants.map((v) => [v, []]));

progress('proxy-latency', `${rounds} rounds of ${WARMUP} + ${MEASURED} frames at ${RATE}/s per variant`);
for (let round = 0; round < rounds; round += 1) {
  const order = variants.map((_, i) => variants[(i + round) % variants.length]);
  const line = [];
  for (const variant of order) {
    const sorted = await roundTrips(argvVariant[variant]);
    p50[variant].push(percentile(sorted, 50));
    p99[variant].push(percentile(sorted, 99));
    max[variant].push(sorted[sorted.length - 1]);
    line.push(`${variant} p50 ${percentile(sorted, 50).toFixed(3)} p99 ${percentile(sorted, 99).toFixed(3)}`);
  }
  progress('proxy-latency', `round ${round + 1}/${rounds}: ${line.join(', ')} ms`);
}

const added = (values, floors) => values.map((v, i) => v - floors[i]);
const NOTE = 'round trip crosses the proxy twice (request and response); ratio is proxy round trip / direct round trip';
emitResult({
  benchmark: 'proxy-latency',
  workload: { rate: RATE, warmup: WARMUP, measured: MEASURED, frameBytes: 200 },
  figures: [
    ...['p50', 'p99'].map((q) => {
      const by = q === 'p50' ? p50 : p99;
      return figure({
        id: `proxy.latency.added-${q}`,
        title: `added round-trip latency ${q}, subagent-otel proxy with telemetry (1,000 frames/s)`,
        unit: 'ms',
        values: added(by.proxy, by.direct),
        floorName: `direct pipe round trip ${q}`,
        floors: by.direct,
        ratioOf: (addedMs, directMs) => (addedMs + directMs) / directMs,
        ...(q === 'p99' ? { target: { kind: 'max-value', limit: 1, text: 'added p99 < 1 ms at 1,000 frames/s' } } : {}),
        notes: NOTE,
        extra: {
          proxyRoundTrip: by.proxy,
          bridgeRoundTrip: by.bridge,
          relayRoundTrip: by.relay,
          maxRoundTrip: { direct: max.direct, relay: max.relay, bridge: max.bridge, proxy: max.proxy },
        },
      });
    }),
    figure({
      id: 'proxy.latency.relay-added-p99',
      title: 'added round-trip latency p99, a five-line Node relay (spawn and pipe, nothing else)',
      unit: 'ms',
      values: added(p99.relay, p99.direct),
      floorName: 'direct pipe round trip p99',
      floors: p99.direct,
      ratioOf: (addedMs, directMs) => (addedMs + directMs) / directMs,
      notes: `${NOTE}. Reference for the machine: what any process written in Node adds by sitting in between (bench/peers/plain-relay.mjs)`,
    }),
    figure({
      id: 'proxy.latency.proxy-over-relay-p99',
      title: 'round-trip latency p99 the proxy adds over that Node relay',
      unit: 'ms',
      values: added(p99.proxy, p99.relay),
      floorName: 'the Node relay round trip p99',
      floors: p99.relay,
      ratioOf: (addedMs, relayMs) => (addedMs + relayMs) / relayMs,
      notes:
        "the part of the added p99 that is the proxy's own work (observation, bridge) rather than a Node process in the path",
    }),
    figure({
      id: 'proxy.latency.bridge-added-p99',
      title: 'added round-trip latency p99, bridge with observation off',
      unit: 'ms',
      values: added(p99.bridge, p99.direct),
      floorName: 'direct pipe round trip p99',
      floors: p99.direct,
      ratioOf: (addedMs, directMs) => (addedMs + directMs) / directMs,
      notes: NOTE,
    }),
  ],
});
