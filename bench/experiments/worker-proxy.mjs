/**
 * EXPERIMENT, not the product: `subagent-otel proxy --protocol sdk` with its
 * observation moved to a worker thread. The main thread runs the same bridge
 * (`runStdioProxy`) and posts a copy of every forwarded chunk to a worker
 * that runs the same observation (`startProxyObservation`). The queue to the
 * worker is unbounded here; a real design would need a bound. Used by
 * `observe-in-worker.mjs` to measure what moving observation off the
 * forwarding thread would buy (docs/decisions/0007).
 *
 * Usage: node bench/experiments/worker-proxy.mjs <out-dir> -- <command> [args...]
 *
 * @module subagent-otel/bench/experiments/worker-proxy
 */
import { Worker } from 'node:worker_threads';

const { runStdioProxy } = await import(new URL('../../dist/proxy/stdio-proxy.js', import.meta.url).href);
const dash = process.argv.indexOf('--');
const out = process.argv[2];
const [command, ...args] = process.argv.slice(dash + 1);
if (dash === -1 || out === undefined || command === undefined) {
  process.stderr.write('usage: worker-proxy.mjs <out-dir> -- <command> [args...]\n');
  process.exit(2);
}

const worker = new Worker(new URL('./worker-observer.mjs', import.meta.url), {
  workerData: { out, env: { ...process.env } },
});
const exit = await runStdioProxy({
  command,
  args,
  onChunk: (direction, chunk) => {
    const copy = new Uint8Array(chunk); // the pipe may still hold the original
    worker.postMessage([direction, copy], [copy.buffer]);
  },
  onEnd: (direction) => worker.postMessage([direction, null]),
});
worker.postMessage(['finish', null]);
await new Promise((resolve) => worker.once('exit', resolve));
process.exit(exit.code ?? 1);
