/**
 * Benchmark 8, the outbox under a 10,000-run outage: the collector is down
 * while 10,000 runs are reported (`fill`), then up while a new process
 * delivers the outbox (`drain`). Figures: bytes on disk per run (allocated
 * blocks, against the request bodies), the drain rate in runs per second
 * (against exporting the same runs straight to the same receiver, `direct`),
 * and the peak RSS of the filling and the draining process (against the
 * direct one). Each phase is a fresh process (`outbox-probe.mjs`); rounds
 * take a new outbox folder and port. Decision 0100.
 *
 * @module subagent-otel/bench/outbox
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchOptions, emitResult, figure, progress, runScript } from './lib/common.mjs';

const { rounds, scale } = benchOptions({ rounds: 2 });
const RUNS = Math.round(10_000 * scale);
const probe = fileURLToPath(new URL('./outbox-probe.mjs', import.meta.url));
const mib = (bytes) => bytes / (1024 * 1024);

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const rows = [];
for (let round = 0; round < rounds; round += 1) {
  const dir = mkdtempSync(join(tmpdir(), 'subagent-otel-bench-outbox-'));
  try {
    const port = await freePort();
    const fill = await runScript(probe, ['fill', String(RUNS), String(port), dir]);
    if (fill.report.outboxed.runs !== RUNS)
      throw new Error(
        `fill: ${fill.report.outboxed.runs} of ${RUNS} runs reached the outbox (dropped ${JSON.stringify(fill.report.dropped)})`,
      );
    const drain = await runScript(probe, ['drain', String(RUNS), String(port), dir]);
    if (drain.report.fromOutbox.runs !== RUNS)
      throw new Error(`drain: ${drain.report.fromOutbox.runs} of ${RUNS} runs delivered from the outbox`);
    const direct = await runScript(probe, ['direct', String(RUNS), String(await freePort()), join(dir, 'unused')]);
    rows.push({ fill, drain, direct });
    progress(
      'outbox',
      `round ${round + 1}/${rounds}: ${fill.outbox.files} files, ${(fill.outbox.allocated / RUNS).toFixed(0)} B/run on disk; drain ${(RUNS / drain.seconds).toFixed(0)} runs/s (direct ${(RUNS / direct.seconds).toFixed(0)}); peak RSS fill ${mib(fill.peakRssBytes).toFixed(0)} MiB, drain ${mib(drain.peakRssBytes).toFixed(0)} MiB`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const n = RUNS.toLocaleString('en-US');
emitResult({
  benchmark: 'outbox',
  workload: { runs: RUNS, spansPerRun: 1, protocol: 'http/protobuf', files: rows[0].fill.outbox.files },
  figures: [
    figure({
      id: 'outbox.bytes-per-run',
      title: `outbox bytes on disk per run, ${n}-run outage`,
      unit: 'B',
      values: rows.map((r) => r.fill.outbox.allocated / RUNS),
      floorName: 'request body bytes per run',
      floors: rows.map((r) => r.fill.outbox.bytes / RUNS),
    }),
    figure({
      id: 'outbox.drain-rate',
      title: `outbox drain rate, ${n} runs waiting`,
      unit: 'runs/s',
      values: rows.map((r) => RUNS / r.drain.seconds),
      floorName: 'the same runs exported directly',
      floors: rows.map((r) => RUNS / r.direct.seconds),
    }),
    figure({
      id: 'outbox.fill-peak-rss',
      title: `peak RSS while ${n} runs go to the outbox`,
      unit: 'MiB',
      values: rows.map((r) => mib(r.fill.peakRssBytes)),
      floorName: 'peak RSS exporting them directly',
      floors: rows.map((r) => mib(r.direct.peakRssBytes)),
    }),
    figure({
      id: 'outbox.drain-peak-rss',
      title: `peak RSS while ${n} waiting runs are delivered`,
      unit: 'MiB',
      values: rows.map((r) => mib(r.drain.peakRssBytes)),
      floorName: 'peak RSS exporting them directly',
      floors: rows.map((r) => mib(r.direct.peakRssBytes)),
    }),
  ],
});
