/**
 * Benchmark 2, proxy throughput: MB/s of realistic SDK notification NDJSON
 * (mostly `text-delta` `session.event` notifications, a large tool result
 * every few steps) from an agent process to its client, through
 * `subagent-otel proxy` with telemetry on (file exporter) and through the
 * proxy's bridge with observation off, against the same bytes through a
 * plain pipe and against a floor that only splits the bytes into lines and
 * `JSON.parse`s each line once (in this process, over the same 64 KiB
 * chunks a pipe delivers).
 *
 * Real processes and pipes: the agent is `bench/peers/emit-file.mjs`, which
 * streams the generated file once the harness says go; the harness reads
 * the other end and times from "go" to the arrival of the last byte (not to
 * end of file: the proxy keeps its stdout open until it has flushed
 * telemetry and exits, which is shutdown, not throughput). For the proxy, "go"
 * is sent once its observation is live (see `lib/processes.mjs`), so the
 * figure is the steady state, not telemetry's load time. Every run is
 * checked: all bytes arrive (the first proxy run also compares a SHA-256 of
 * them), and the proxy's traces hold one `invoke_agent` span per turn of the
 * stream (it really observed everything).
 *
 * @module subagent-otel/bench/proxy-throughput
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchOptions, cpuTimesOf, emitResult, figure, mib, progress, splitAndParse } from './lib/common.mjs';
import { closed, peer, proxyEnv, spawnNode, variantArgv, waitForReady } from './lib/processes.mjs';
import { sdkNotificationStream } from './lib/workload.mjs';

const { rounds, scale } = benchOptions({ rounds: 5 });
const BYTES = Math.round(64 * 1024 * 1024 * scale);
const work = mkdtempSync(join(tmpdir(), 'subagent-otel-bench-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

progress('proxy-throughput', `generating ${mib(BYTES).toFixed(0)} MiB of SDK notification NDJSON`);
const pieces = [];
let turns = 0;
for (const piece of sdkNotificationStream({ bytes: BYTES })) {
  pieces.push(piece);
  turns += piece.split('"type":"turn/start"').length - 1;
}
const data = Buffer.from(pieces.join(''), 'utf8');
pieces.length = 0;
const streamFile = join(work, 'stream.ndjson');
writeFileSync(streamFile, data);
const digest = createHash('sha256').update(data).digest('hex');
let lines = 0;
for (let at = data.indexOf(0x0a); at !== -1; at = data.indexOf(0x0a, at + 1)) lines += 1;
progress(
  'proxy-throughput',
  `${lines.toLocaleString('en-US')} lines, ${turns} turns, ${(data.length / 1e6).toFixed(1)} MB`,
);

const chunks = [];
for (let offset = 0; offset < data.length; offset += 64 * 1024) chunks.push(data.subarray(offset, offset + 64 * 1024));

/** CPU ms per MB of each run, by variant (the middle process for bridge and proxy; this process for the floor). */
const cpuPerMb = { bridge: [], proxy: [], floor: [] };
/** Of that, system (kernel) CPU ms per MB: the pipe reads and writes of forwarding, page faults. */
const systemCpuPerMb = { bridge: [], proxy: [] };

function timeFloor() {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const parsed = splitAndParse(chunks);
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  if (parsed !== lines) throw new Error(`floor parsed ${parsed} lines, expected ${lines}`);
  cpuPerMb.floor.push((used.user + used.system) / 1000 / (data.length / 1e6));
  return data.length / 1e6 / seconds;
}

let runIndex = 0;
/**
 * Streams the file through one variant. @returns MB/s from "go" to the arrival of the last byte.
 * Throws when bytes are missing or, for the proxy, when it did not observe every turn.
 */
async function timeVariant(variant, { verifyDigest = false } = {}) {
  runIndex += 1;
  const dir = join(work, `run-${runIndex}`);
  mkdirSync(dir);
  const outDir = join(dir, 'out');
  const logFile = join(dir, 'proxy.log');
  const child = spawnNode(variantArgv(variant, [peer('emit-file.mjs'), streamFile], outDir), proxyEnv(outDir, logFile));
  const ended = closed(child);
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text) => {
    stderr += text;
  });
  const hash = verifyDigest ? createHash('sha256') : undefined;
  let received = 0;
  let last = 0;
  let cpuAtEnd;
  child.stdout.on('data', (chunk) => {
    received += chunk.length;
    last = performance.now();
    hash?.update(chunk);
    if (received === data.length) cpuAtEnd = cpuTimesOf(child.pid);
  });
  if (variant === 'proxy') await waitForReady(logFile);
  const cpuAtGo = cpuTimesOf(child.pid);
  const go = performance.now();
  child.stdin.end('go\n');
  const exit = await ended;
  if (exit.code !== 0) throw new Error(`${variant} exited with ${exit.code ?? exit.signal}: ${stderr.slice(0, 500)}`);
  if (received !== data.length) throw new Error(`${variant}: received ${received} bytes, sent ${data.length}`);
  if (hash !== undefined && hash.digest('hex') !== digest)
    throw new Error(`${variant}: the bytes that arrived differ from the bytes sent`);
  if (variant === 'proxy') {
    const traces = readFileSync(join(outDir, 'traces.jsonl'), 'utf8');
    const spans = traces.split('"name":"invoke_agent').length - 1;
    if (spans !== turns) throw new Error(`proxy exported ${spans} invoke_agent spans for ${turns} turns`);
    const log = readFileSync(logFile, 'utf8');
    if (/not observed|observation failed/.test(log)) throw new Error(`proxy did not observe everything: ${log}`);
  }
  rmSync(dir, { recursive: true, force: true });
  if (variant !== 'pipe' && cpuAtGo !== undefined && cpuAtEnd !== undefined) {
    const mb = data.length / 1e6;
    cpuPerMb[variant].push((cpuAtEnd.userMs + cpuAtEnd.systemMs - cpuAtGo.userMs - cpuAtGo.systemMs) / mb);
    systemCpuPerMb[variant].push((cpuAtEnd.systemMs - cpuAtGo.systemMs) / mb);
  }
  return data.length / 1e6 / ((last - go) / 1000);
}

const variants = ['pipe', 'bridge', 'proxy', 'floor'];
const samples = Object.fromEntries(variants.map((v) => [v, []]));
const measure = (variant, options) => (variant === 'floor' ? timeFloor() : timeVariant(variant, options));

progress('proxy-throughput', 'warm-up (checks the bytes and the spans)');
for (const variant of variants) await measure(variant, { verifyDigest: true });

for (let round = 0; round < rounds; round += 1) {
  // Rotate the order so no variant always runs first (or right after the floor's garbage).
  const order = variants.map((_, i) => variants[(i + round) % variants.length]);
  const line = [];
  for (const variant of order) {
    const mbps = await measure(variant);
    samples[variant].push(mbps);
    line.push(`${variant} ${mbps.toFixed(1)}`);
  }
  progress('proxy-throughput', `round ${round + 1}/${rounds}: ${line.join(', ')} MB/s`);
}

const common = { unit: 'MB/s' };
emitResult({
  benchmark: 'proxy-throughput',
  workload: { bytes: data.length, lines, turns, sha256: digest },
  figures: [
    figure({
      ...common,
      id: 'proxy.throughput.telemetry-vs-floor',
      title: 'subagent-otel proxy, telemetry on (file exporter)',
      values: samples.proxy,
      floorName: 'split + JSON.parse each line once (in process)',
      floors: samples.floor,
      target: { kind: 'min-ratio', limit: 1, text: 'proxy with telemetry >= 1.0x the split-and-parse floor' },
    }),
    figure({
      ...common,
      id: 'proxy.throughput.telemetry-vs-pipe',
      title: 'subagent-otel proxy, telemetry on (file exporter)',
      values: samples.proxy,
      floorName: 'plain pipe (agent to harness)',
      floors: samples.pipe,
      target: { kind: 'min-ratio', limit: 0.5, text: 'proxy with telemetry >= 0.5x a plain pipe' },
    }),
    ...(cpuPerMb.proxy.length === rounds + 1 && cpuPerMb.floor.length === rounds + 1
      ? [
          figure({
            id: 'proxy.cpu.telemetry-vs-floor',
            title: 'CPU per MB of the proxy process, telemetry on (ratio: floor / proxy)',
            unit: 'CPU ms/MB',
            values: cpuPerMb.proxy.slice(1),
            floorName: 'CPU per MB of split + JSON.parse',
            floors: cpuPerMb.floor.slice(1),
            ratioOf: (proxy, floor) => floor / proxy,
            notes:
              'less sensitive to other load than wall-clock MB/s: the throughput ratio the proxy would reach with a core to itself (clock-tick resolution, 10 ms); ' +
              "results.json also has the bridge alone and the system (kernel) share of both, which is forwarding's pipe copies",
            extra: {
              bridgeCpuMsPerMb: cpuPerMb.bridge.slice(1),
              proxySystemCpuMsPerMb: systemCpuPerMb.proxy.slice(1),
              bridgeSystemCpuMsPerMb: systemCpuPerMb.bridge.slice(1),
            },
          }),
        ]
      : []),
    figure({
      ...common,
      id: 'proxy.throughput.bridge-vs-pipe',
      title: 'proxy bridge, observation off',
      values: samples.bridge,
      floorName: 'plain pipe (agent to harness)',
      floors: samples.pipe,
    }),
  ],
});
