/**
 * The stdio bridge of `subagent-otel proxy` with observation off: the same
 * `runStdioProxy` the proxy command uses, given no `onChunk`, so nothing is
 * split, parsed or tracked and no telemetry is loaded. Used by the proxy
 * benchmarks as the "observation off" variant; the product has no such flag.
 *
 * Usage: node bench/peers/bridge-only.mjs <command> [args...]
 * Exits with the child's exit code.
 *
 * @module subagent-otel/bench/peers/bridge-only
 */
const { runStdioProxy } = await import(new URL('../../dist/proxy/stdio-proxy.js', import.meta.url).href);

const [command, ...args] = process.argv.slice(2);
if (command === undefined) {
  process.stderr.write('usage: bridge-only.mjs <command> [args...]\n');
  process.exit(2);
}
const exit = await runStdioProxy({ command, args });
process.exit(exit.code ?? 1);
