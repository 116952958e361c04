/**
 * Benchmark peer for latency: answers every JSON-RPC request line on stdin
 * at once with a response line on stdout carrying the same id and the
 * request's params as its result. Lines that are not requests are ignored.
 * Exits when stdin ends.
 *
 * Usage: node bench/peers/echo.mjs
 *
 * @module subagent-otel/bench/peers/echo
 */
let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (text) => {
  pending += text;
  let newline = pending.indexOf('\n');
  if (newline === -1) return;
  let out = '';
  let start = 0;
  while (newline !== -1) {
    const line = pending.slice(start, newline);
    start = newline + 1;
    newline = pending.indexOf('\n', start);
    let request;
    try {
      request = JSON.parse(line);
    } catch {
      // Not JSON: nothing to answer. The harness only sends JSON.
      continue;
    }
    if (request !== null && typeof request === 'object' && 'id' in request && typeof request.method === 'string') {
      out += `${JSON.stringify({ jsonrpc: '2.0', id: request.id, result: request.params ?? null })}\n`;
    }
  }
  pending = pending.slice(start);
  if (out !== '') process.stdout.write(out);
});
process.stdin.on('end', () => process.exit(0));
