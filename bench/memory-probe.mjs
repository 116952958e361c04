/**
 * One measurement of benchmark 4 (memory), in a process of its own: applies
 * the proxy's heap settings (`favourSmallHeap`) and builds the
 * proxy's observation exactly as `subagent-otel proxy --protocol sdk`
 * does (`startProxyObservation`: telemetry with the file exporter, the SDK
 * tracker, the frame tap), records the process's peak RSS so far as its
 * idle RSS, then feeds it SDK traffic of both directions as 64 KiB chunks
 * (yielding to the event loop after each, as pipe reads would, so telemetry
 * timers run), finishes it (closing runs, flushing telemetry) and records
 * the peak RSS again.
 *
 * Usage: node bench/memory-probe.mjs single <events> | short <runs> [--parse-only]
 * - `single <events>`: one prompt turn of that many session events.
 * - `short <runs>`: that many prompt turns of 20 events each, each on its
 *   own session.
 * - `--parse-only`: no observation at all, the same traffic only split and
 *   `JSON.parse`d: how much V8 grows the heap for that traffic by itself.
 * Prints `{ mode, size, events, bytes, idleRss, peakRss, retainedHeap, runs }`
 * (bytes) as one JSON line. `retainedHeap` (with `--expose-gc` only) is the
 * heap still in use after a full collection once the traffic was fed and
 * before the observation finishes, minus the same at idle (after a warm-up
 * of 2,000 short runs, so that V8's compiled code is not counted): the
 * state the observation keeps, apart from what the garbage collector has
 * not yet returned. `events`, `bytes` and `runs` count the measured traffic
 * only, not the warm-up.
 *
 * @module subagent-otel/bench/memory-probe
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importDist, turnLoop } from './lib/common.mjs';
import { notificationLine, runEvents } from './lib/workload.mjs';

const [mode, sizeText, flag] = process.argv.slice(2);
const size = Number(sizeText);
if (
  (mode !== 'single' && mode !== 'short') ||
  !Number.isInteger(size) ||
  size < 1 ||
  (flag !== undefined && flag !== '--parse-only')
) {
  process.stderr.write('usage: memory-probe.mjs single <events> | short <runs> [--parse-only]\n');
  process.exit(2);
}
const isParseOnly = flag === '--parse-only';

/**
 * The reference for `--parse-only`: the same traffic, only split into lines
 * and `JSON.parse`d, nothing kept. What V8 does with the heap under that
 * allocation alone, without any observation state.
 */
function parseOnlyObservation() {
  let sink = 0;
  return {
    push(_direction, chunk) {
      // The probe's chunks always end at a line end, so no line spans two chunks.
      let start = 0;
      for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
        sink += JSON.parse(chunk.toString('utf8', start, newline)) === null ? 0 : 1;
        start = newline + 1;
      }
    },
    end() {},
    async finish() {
      if (sink < 0) throw new Error('unreachable: keeps the parse results observable');
    },
  };
}

// The proxy's process settings first (as `subagent-otel proxy` applies them before loading anything),
// for the observation and the parse-only reference alike.
const { favourSmallHeap } = await importDist('proxy/heap-settings.js');
favourSmallHeap();
const work = mkdtempSync(join(tmpdir(), 'subagent-otel-bench-mem-'));
const { startProxyObservation } = isParseOnly ? {} : await importDist('proxy/proxy-observation.js');
const env = { SUBAGENT_OTEL_OUT: join(work, 'out') };
const observation = isParseOnly
  ? parseOnlyObservation()
  : startProxyObservation(
      { name: 'proxy', protocol: 'sdk', command: 'agent', args: [], out: join(work, 'out') },
      { env, stderr: process.stderr },
    );
await turnLoop();
const peakKb = () => process.resourceUsage().maxRSS;
/** Heap in use after a full collection (only with `--expose-gc`): what is really retained. */
const liveHeap = () => {
  if (typeof globalThis.gc !== 'function') return undefined;
  globalThis.gc();
  return process.memoryUsage().heapUsed;
};
const idleRss = peakKb() * 1024;

const CHUNK = 64 * 1024;
/** Short runs fed before the idle heap is measured (see the warm-up below). */
const WARM_UP_RUNS = 2000;
let events = 0;
let bytes = 0;
let prompts = 0;
const buffered = { 'client->agent': [], 'agent->client': [] };
const sizes = { 'client->agent': 0, 'agent->client': 0 };

async function send(direction, line) {
  buffered[direction].push(line);
  sizes[direction] += line.length + 1;
  if (sizes[direction] >= CHUNK) await flush(direction);
}
async function flush(direction) {
  if (buffered[direction].length === 0) return;
  const chunk = Buffer.from(`${buffered[direction].join('\n')}\n`, 'utf8');
  buffered[direction].length = 0;
  sizes[direction] = 0;
  bytes += chunk.length;
  observation.push(direction, chunk);
  await turnLoop();
}

/** One prompt turn on `sessionId`: the request, the turn's notifications, the response. */
async function promptTurn(sessionId, options) {
  const id = ++prompts;
  // Requests travel the other way: flush what the agent said first, so the tracker sees them in order.
  await flush('agent->client');
  await send(
    'client->agent',
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'session/prompt',
      params: { sessionId, contentBlocks: [{ type: 'text', text: 'go on' }] },
    }),
  );
  await flush('client->agent');
  for (const event of runEvents(options)) {
    events += 1;
    await send('agent->client', notificationLine(sessionId, event));
  }
  await send('agent->client', JSON.stringify({ jsonrpc: '2.0', id, result: { messageId: `m${id}` } }));
}

await send(
  'client->agent',
  JSON.stringify({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { cwd: '/', provider: 'deepseek', model: 'deepseek-chat' },
  }),
);
await flush('client->agent');
// Warm-up: V8 compiles the observation's code to optimized machine code over the first thousands of
// events, and keeps that code (and its deoptimization data) on the heap. Measured after it, the retained
// heap is the observation's state; measured before, 10,000 short runs kept about 0.5 MiB more than 1,000,
// all of it compiled code (heap snapshots of both: code, deopt data, relocation info; no object grows
// with the sessions). The warm-up's sessions are finished like any other.
for (let run = 0; run < WARM_UP_RUNS; run += 1)
  await promptTurn(`warm-up-${run}`, { events: 20, steps: 1, seed: run, turn: 0 });
await flush('agent->client');
events = 0;
bytes = 0;
const idleHeap = liveHeap();
if (mode === 'single') {
  await promptTurn('session-0', { events: size, steps: 200, seed: 3 });
} else {
  for (let run = 0; run < size; run += 1)
    await promptTurn(`session-${run}`, { events: 20, steps: 1, seed: run, turn: 0 });
}
await flush('agent->client');
const busyHeap = liveHeap();
observation.end('agent->client');
observation.end('client->agent');
await observation.finish('bench finished');
const peakRss = peakKb() * 1024;

/** How many `invoke_agent` spans the file exporter wrote; 0 when it wrote nothing. */
function exportedRuns(tracesFile) {
  try {
    return readFileSync(tracesFile, 'utf8').split('"name":"invoke_agent').length - 1;
  } catch {
    // ENOENT: no span was exported at all; reported as 0 runs, which the caller treats as a failure.
    return 0;
  }
}
const runs = isParseOnly ? 0 : exportedRuns(join(work, 'out', 'traces.jsonl')) - WARM_UP_RUNS;
rmSync(work, { recursive: true, force: true });
const retainedHeap = idleHeap !== undefined && busyHeap !== undefined ? busyHeap - idleHeap : undefined;
process.stdout.write(`${JSON.stringify({ mode, size, events, bytes, idleRss, peakRss, retainedHeap, runs })}\n`);
