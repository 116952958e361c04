/**
 * One phase of the outbox benchmark (`bench/outbox.mjs`), in a fresh process:
 * `fill <runs> <port> <dir>`: the collector at 127.0.0.1:<port> is down; the
 * runs are reported through `createTelemetry` with the outbox in <dir> and
 * shut down; `drain <runs> <port> <dir>`: a receiver answers 200 on <port>,
 * a pipeline with the same outbox is built and the time until the outbox is
 * empty is measured; `direct <runs> <port> <dir>`: the same runs straight to
 * that receiver, no outbox (the floor). Prints one JSON line: the phase's
 * seconds, the runs and requests that reached the receiver, the outbox's
 * bytes (body bytes and allocated blocks) and the process's peak RSS.
 *
 * @module subagent-otel/bench/outbox-probe
 */
import { createServer } from 'node:http';
import { readdirSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { importDist } from './lib/common.mjs';

const [phase, runsText, portText, dir] = process.argv.slice(2);
const runs = Number(runsText);
const port = Number(portText);
const { createTelemetry } = await importDist('telemetry/setup.js');

const T0 = Date.UTC(2026, 0, 1);
const record = (i) => ({
  runId: `bench-run-${i}`,
  source: 'sdk',
  agentName: 'bench',
  startTime: T0 + i,
  endTime: T0 + i + 10,
  stopReason: 'completed',
  output: [{ type: 'text', text: `answer ${i}: the outbox keeps what the collector did not take` }],
  outputSource: 'message',
  emptyMessages: 0,
  usage: {
    inputTokens: 100,
    outputTokens: 20,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    reported: true,
  },
  steps: [],
  toolCalls: [],
});

/** The outbox's records: body bytes and allocated bytes. */
function onDisk() {
  let bytes = 0;
  let allocated = 0;
  let files = 0;
  if (!existsSync(dir)) return { bytes, allocated, files };
  for (const folder of readdirSync(dir)) {
    for (const name of readdirSync(join(dir, folder))) {
      if (!name.endsWith('.otlp')) continue;
      const info = statSync(join(dir, folder, name));
      bytes += info.size;
      allocated += info.blocks * 512;
      files += 1;
    }
  }
  return { bytes, allocated, files };
}

let received = { requests: 0, bytes: 0 };
let server;
if (phase !== 'fill') {
  server = createServer((req, res) => {
    let size = 0;
    req.on('data', (c) => (size += c.length));
    req.on('end', () => {
      received.requests += 1;
      received.bytes += size;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
}

const env = {
  OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
  OTEL_EXPORTER_OTLP_TIMEOUT: '1000',
  OTEL_METRIC_EXPORT_INTERVAL: '600000',
};
const started = performance.now();
const telemetry = createTelemetry({ env, outbox: phase === 'direct' ? false : dir });
if (phase === 'drain') {
  while (onDisk().files > 0) await new Promise((resolve) => setTimeout(resolve, 20));
} else {
  for (let i = 0; i < runs; i += 1) {
    const r = record(i);
    telemetry.runs.onRunStart(r);
    telemetry.runs.onRunEnd(r);
    if (i % 256 === 255) await telemetry.flush(30_000);
  }
}
const seconds = (performance.now() - started) / 1000;
const report = await telemetry.shutdown(60_000);
server?.close();
process.stdout.write(
  `${JSON.stringify({ phase, runs, seconds, received, outbox: onDisk(), report, peakRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`,
);
process.exit(0);
