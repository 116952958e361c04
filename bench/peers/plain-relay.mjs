/**
 * Benchmark peer: the least a Node process can do to sit between a client
 * and an agent: spawn the agent and `pipe` stdin to it and its stdout back,
 * nothing else (no real pipes, no signals, no observation). The latency
 * benchmark measures it as the reference for what any relay written in Node
 * adds on the machine at hand (process wake-ups, one more hop each way).
 *
 * Usage: node bench/peers/plain-relay.mjs <command> [args...]
 *
 * @module subagent-otel/bench/peers/plain-relay
 */
import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.on('exit', (code, signal) => {
  process.exitCode = code ?? (signal !== null ? 1 : 0);
});
