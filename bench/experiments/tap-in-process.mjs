/**
 * Experiment: the proxy's observation in process (telemetry with the file
 * exporter, SDK tracker, frame tap), fed the proxy-throughput workload as
 * 64 KiB chunks, against the split-and-JSON.parse floor on the same chunks,
 * alternating. Prints the CPU time per MB of both and their ratio (floor /
 * observation) per round: CPU time is steadier than wall time on a shared
 * machine. No pipes and no second process: the observation's own cost.
 *
 * Usage: node bench/experiments/tap-in-process.mjs [MiB] [rounds]
 *
 * @module subagent-otel/bench/experiments/tap-in-process
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importDist, splitAndParse } from '../lib/common.mjs';
import { sdkNotificationStream } from '../lib/workload.mjs';

const mib = Number(process.argv[2] ?? 16);
const rounds = Number(process.argv[3] ?? 5);
const data = Buffer.from([...sdkNotificationStream({ bytes: mib * 1024 * 1024 })].join(''), 'utf8');
const chunks = [];
for (let offset = 0; offset < data.length; offset += 64 * 1024) chunks.push(data.subarray(offset, offset + 64 * 1024));
const { startProxyObservation } = await importDist('proxy/proxy-observation.js');
const work = mkdtempSync(join(tmpdir(), 'subagent-otel-tap-'));

const floor = () => splitAndParse(chunks);

async function observe(round) {
  const observation = startProxyObservation(
    { name: 'proxy', protocol: 'sdk', command: 'agent', args: [], out: join(work, `out-${round}`) },
    { env: { SUBAGENT_OTEL_OUT: join(work, `out-${round}`) }, stderr: process.stderr },
  );
  for (const chunk of chunks) observation.push('agent->client', chunk, 0);
  observation.end('agent->client');
  await observation.finish('done');
}

const cpuMs = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};
for (let round = 0; round < rounds; round += 1) {
  let t = cpuMs();
  floor();
  const floorMs = cpuMs() - t;
  t = cpuMs();
  await observe(round);
  const tapMs = cpuMs() - t;
  const mb = data.length / 1e6;
  console.log(
    `round ${round + 1}: floor ${(floorMs / mb).toFixed(2)} CPU ms/MB, observation ${(tapMs / mb).toFixed(2)} CPU ms/MB, ratio ${(floorMs / tapMs).toFixed(2)}`,
  );
}
rmSync(work, { recursive: true, force: true });
