/**
 * The entry of a replay worker thread (`transcript-pool`): reads each
 * session it is sent (`session-job`) and posts the outcome back, one at a
 * time in the order received. Loaded only as a worker's main module: at
 * `dist/replay/replay-worker.js` (tsc) and `dist/cli/chunks/replay-worker.js`
 * (the CLI bundle), beside the pool's code in both layouts.
 *
 * @module subagent-otel/replay/replay-worker
 */
import { parentPort } from 'node:worker_threads';
import { readSessionJob, type SessionJobRequest } from './session-job.js';

const port = parentPort;
if (port !== null) {
  let queue: Promise<void> = Promise.resolve();
  port.on('message', (request: SessionJobRequest) => {
    queue = queue.then(async () => port.postMessage(await readSessionJob(request)));
  });
  port.postMessage({ ready: true });
}
