/**
 * EXPERIMENT behind docs/decisions/0007: what moving the proxy's
 * observation to a worker thread would buy. Streams the proxy-throughput
 * workload (realistic SDK notification NDJSON) through
 * - `inline`: `subagent-otel proxy --protocol sdk` as it is (observation on
 *   the forwarding thread), and
 * - `worker`: `worker-proxy.mjs` (same bridge, same observation, in a worker),
 * and reports per variant: MB/s forwarded (go to the last byte at the
 * client), MB/s observed (go to the proxy's exit: every byte observed and
 * telemetry flushed), and the proxy's peak RSS. Both variants must export
 * one `invoke_agent` span per turn.
 *
 * Usage: node bench/experiments/observe-in-worker.mjs [--rounds n] [--scale x]
 * Not part of `npm run bench`.
 *
 * @module subagent-otel/bench/experiments/observe-in-worker
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, benchOptions, mib, peakRssOf, progress, summarize } from '../lib/common.mjs';
import { closed, peer, proxyEnv, spawnNode, waitForReady } from '../lib/processes.mjs';
import { sdkNotificationStream } from '../lib/workload.mjs';

const { rounds, scale } = benchOptions({ rounds: 3 });
const work = mkdtempSync(join(tmpdir(), 'subagent-otel-bench-worker-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const pieces = [...sdkNotificationStream({ bytes: Math.round(64 * 1024 * 1024 * scale) })];
const text = pieces.join('');
const turns = text.split('"type":"turn/start"').length - 1;
const data = Buffer.from(text, 'utf8');
const streamFile = join(work, 'stream.ndjson');
writeFileSync(streamFile, data);
const workerProxy = fileURLToPath(new URL('./worker-proxy.mjs', import.meta.url));

async function run(variant, index) {
  const dir = join(work, `${variant}-${index}`);
  mkdirSync(dir);
  const out = join(dir, 'out');
  const logFile = join(dir, 'proxy.log');
  const agent = [process.execPath, peer('emit-file.mjs'), streamFile];
  const argv =
    variant === 'inline'
      ? [CLI, 'proxy', '--protocol', 'sdk', '--out', out, '--', ...agent]
      : [workerProxy, out, '--', ...agent];
  const child = spawnNode(argv, proxyEnv(out, logFile));
  const ended = closed(child);
  let received = 0;
  let last = 0;
  let peak;
  child.stdout.on('data', (chunk) => {
    received += chunk.length;
    last = performance.now();
  });
  child.stderr.resume();
  await waitForReady(logFile);
  const go = performance.now();
  child.stdin.end('go\n');
  // VmHWM is a high-water mark: the last reading before the process is gone is its peak.
  const sampler = setInterval(() => {
    peak = peakRssOf(child.pid) ?? peak;
  }, 20);
  const exit = await ended;
  clearInterval(sampler);
  const exited = performance.now();
  if (exit.code !== 0 || received !== data.length)
    throw new Error(`${variant}: exit ${exit.code ?? exit.signal}, ${received} of ${data.length} bytes`);
  const spans = readFileSync(join(out, 'traces.jsonl'), 'utf8').split('"name":"invoke_agent').length - 1;
  if (spans !== turns) throw new Error(`${variant}: ${spans} invoke_agent spans for ${turns} turns`);
  rmSync(dir, { recursive: true, force: true });
  const mb = data.length / 1e6;
  return {
    forwarded: mb / ((last - go) / 1000),
    observed: mb / ((exited - go) / 1000),
    peakRssMiB: peak === undefined ? Number.NaN : mib(peak),
  };
}

const results = { inline: [], worker: [] };
for (let round = 0; round < rounds; round += 1) {
  for (const variant of round % 2 === 0 ? ['inline', 'worker'] : ['worker', 'inline']) {
    const r = await run(variant, round);
    results[variant].push(r);
    progress(
      'observe-in-worker',
      `round ${round + 1}/${rounds} ${variant}: forwarded ${r.forwarded.toFixed(1)} MB/s, observed ${r.observed.toFixed(1)} MB/s, peak RSS ${r.peakRssMiB.toFixed(0)} MiB`,
    );
  }
}
const table = Object.fromEntries(
  Object.entries(results).map(([variant, rs]) => [
    variant,
    {
      forwardedMBps: summarize(rs.map((r) => r.forwarded)),
      observedMBps: summarize(rs.map((r) => r.observed)),
      peakRssMiB: summarize(rs.map((r) => r.peakRssMiB)),
    },
  ]),
);
process.stdout.write(
  `${JSON.stringify({ experiment: 'observe-in-worker', bytes: data.length, turns, results: table })}\n`,
);
