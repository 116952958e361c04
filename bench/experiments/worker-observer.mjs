/**
 * EXPERIMENT, not the product: the worker half of `worker-proxy.mjs`. Runs
 * the proxy's observation (`startProxyObservation`, SDK protocol, file
 * exporter into the given directory) over the chunks the main thread posts,
 * in order, and exits after finishing it. Once the observation is built it
 * appends a readiness line to `SUBAGENT_OTEL_LOG_FILE` for the harness.
 *
 * @module subagent-otel/bench/experiments/worker-observer
 */
import { appendFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

const { startProxyObservation } = await import(new URL('../../dist/proxy/proxy-observation.js', import.meta.url).href);
const observation = startProxyObservation(
  { name: 'proxy', protocol: 'sdk', command: 'agent', args: [], out: workerData.out },
  { env: workerData.env, stderr: process.stderr },
);
// The harness's readiness sign (bench/lib/processes.mjs): the worker's diag logger writes nowhere, so say it here.
const logFile = workerData.env.SUBAGENT_OTEL_LOG_FILE;
if (logFile !== undefined) appendFileSync(logFile, 'worker observation ready (bench-ready)\n');
parentPort.on('message', ([direction, chunk]) => {
  if (direction === 'finish') {
    void observation.finish('the agent exited').then(() => process.exit(0));
  } else if (chunk === null) {
    observation.end(direction);
  } else {
    observation.push(direction, chunk);
  }
});
