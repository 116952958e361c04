/**
 * Benchmark peer standing in for an agent runtime that streams a lot: waits
 * for one line on stdin (the harness's "go"), then writes the file named by
 * its argument to stdout as fast as the pipe takes it, and exits. Reads
 * nothing else and writes nothing on stderr.
 *
 * Usage: node bench/peers/emit-file.mjs <file>
 *
 * @module subagent-otel/bench/peers/emit-file
 */
import { createReadStream } from 'node:fs';

const file = process.argv[2];
if (file === undefined) {
  process.stderr.write('usage: emit-file.mjs <file>\n');
  process.exit(2);
}

let started = false;
const start = () => {
  if (started) return;
  started = true;
  process.stdin.off('data', onData);
  process.stdin.resume(); // keep draining stdin so the writer never blocks on us
  createReadStream(file, { highWaterMark: 64 * 1024 }).pipe(process.stdout);
};
const onData = (chunk) => {
  if (chunk.includes(0x0a)) start();
};
process.stdin.on('data', onData);
process.stdin.on('end', start);
