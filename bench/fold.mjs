/**
 * Benchmark 1, the fold: events per second of `finalAssistantOutput` over a
 * 1,000,000-event run, in both log generations, against a floor loop that
 * only walks the same already-parsed events.
 *
 * The run is generated once, as parsed JSON (chunk generation: 1,000,000 session events,
 * nearly all `text-delta` chunks) and converted to the embedded generation
 * (the same chunks inside `assistant/message.stream`, about 700 envelope
 * events). Events per second count logical events (envelopes plus embedded
 * chunks), so both generations carry the same 1,000,000. The floor visits
 * every envelope and every chunk embedded in a message or attempt and reads
 * its `type`, nothing more: the least any fold must do. Before timing, both generations are
 * checked to select the same output. Two more figures take the rule's worst
 * case: the same run with every message empty, so every text delta is
 * accumulated and the streamed-text fallback is selected (and flattened, as
 * a consumer reading it would).
 *
 * Each round times the floor and the fold back to back (order alternating
 * between rounds); the ratio is taken per round.
 *
 * @module subagent-otel/bench/fold
 */
import { isDeepStrictEqual } from 'node:util';
import { benchOptions, emitResult, figure, importDist, progress } from './lib/common.mjs';
import { embedStreams, logicalEventCount, runEvents } from './lib/workload.mjs';

const { finalAssistantOutput } = await importDist('output/assistant-output.js');
const { rounds, scale } = benchOptions({ rounds: 5 });
const EVENTS = Math.round(1_000_000 * scale);

let sink = 0;

/** The floor: read the type of every envelope and of every chunk embedded in a message or attempt. */
function walk(events) {
  let n = 0;
  for (const event of events) {
    const type = event.type;
    n += type.length;
    if (type === 'assistant/message' || type === 'assistant/attempt') {
      const stream = event.data.stream;
      if (stream !== undefined) for (const chunk of stream) n += chunk.type.length;
    }
  }
  return n;
}

/** Uses a selection the way a consumer would: reading the last character flattens accumulated text. */
function consume(output) {
  if (output === undefined) return 0;
  let n = output.length;
  for (const block of output)
    if (typeof block.text === 'string' && block.text.length > 0) n += block.text.charCodeAt(block.text.length - 1);
  return n;
}

/** Milliseconds per pass of `fn(events)`, averaged over enough passes to last `minMs`. */
function timePerPass(fn, events, minMs) {
  let passes = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    const out = fn(events);
    sink += typeof out === 'number' ? out : consume(out);
    passes += 1;
    elapsed = performance.now() - start;
  } while (elapsed < minMs);
  return elapsed / passes;
}

progress('fold', `generating a ${EVENTS.toLocaleString('en-US')}-event run`);
// Through JSON text and back, so the objects (and their strings) are shaped as parsed input is.
const chunkGeneration = [];
for (const event of runEvents({ events: EVENTS, steps: 200 })) chunkGeneration.push(JSON.parse(JSON.stringify(event)));
const embeddedGeneration = Array.from(embedStreams(chunkGeneration));
const logical = logicalEventCount(chunkGeneration);
if (logicalEventCount(embeddedGeneration) !== logical)
  throw new Error('the two generations do not carry the same events');
const selected = finalAssistantOutput(chunkGeneration);
if (selected === undefined || !isDeepStrictEqual(selected, finalAssistantOutput(embeddedGeneration))) {
  throw new Error('the two generations select different outputs');
}

// The worst case of the rule: no message has content (a run cancelled or cut off before any step
// assembled one), so every text delta is accumulated and the stream fallback is selected.
const emptied = (events) =>
  events.map((e) =>
    e.type === 'assistant/message' ? { ...e, data: { ...e.data, message: { ...e.data.message, content: [] } } } : e,
  );
const streamOnlyChunk = emptied(chunkGeneration);
const streamOnlyEmbedded = emptied(embeddedGeneration);
if (finalAssistantOutput(streamOnlyChunk)?.[0]?.text !== finalAssistantOutput(streamOnlyEmbedded)?.[0]?.text) {
  throw new Error('the two generations select different streamed text');
}

const generations = [
  { key: 'chunk', title: 'chunk generation (one event per chunk)', events: chunkGeneration, hasTarget: true },
  {
    key: 'embedded',
    title: 'embedded generation (chunks inside assistant/message.stream)',
    events: embeddedGeneration,
    hasTarget: true,
  },
  {
    key: 'chunk-stream-only',
    title: 'chunk generation, every message empty (worst case: all text accumulated)',
    events: streamOnlyChunk,
    hasTarget: false,
  },
  {
    key: 'embedded-stream-only',
    title: 'embedded generation, every message empty (worst case: all text accumulated)',
    events: streamOnlyEmbedded,
    hasTarget: false,
  },
];
const STREAM_ONLY_NOTE =
  'informational, no target: every one of ~1M text deltas is appended to one string (V8 rope nodes that survive to the old generation) and flattened once; ' +
  'the walk-only floor allocates nothing, so this ratio measures string accumulation, which the rule requires when no message has content';
const EMBEDDED_NOTE =
  'the fold stops walking embedded streams once a non-empty message is selected (streamed text can no longer win), so it can beat a floor that walks every chunk';
const samples = Object.fromEntries(generations.map((g) => [g.key, { fold: [], floor: [] }]));

// Warm up both code paths so the first round is not the JIT's.
for (const g of generations) {
  timePerPass(walk, g.events, 50);
  timePerPass(finalAssistantOutput, g.events, 50);
}

for (let round = 0; round < rounds; round += 1) {
  for (const g of generations) {
    const foldFirst = round % 2 === 1;
    const timeFold = () => timePerPass(finalAssistantOutput, g.events, 300);
    const timeFloor = () => timePerPass(walk, g.events, 100);
    const [foldMs, floorMs] = foldFirst
      ? [timeFold(), timeFloor()]
      : (() => {
          const f = timeFloor();
          return [timeFold(), f];
        })();
    samples[g.key].fold.push(logical / (foldMs / 1000));
    samples[g.key].floor.push(logical / (floorMs / 1000));
    progress(
      'fold',
      `round ${round + 1}/${rounds} ${g.key}: fold ${foldMs.toFixed(1)} ms, walk ${floorMs.toFixed(2)} ms per pass`,
    );
  }
}

emitResult({
  benchmark: 'fold',
  workload: {
    events: logical,
    envelopes: { chunk: chunkGeneration.length, embedded: embeddedGeneration.length },
    outputChars: JSON.stringify(selected).length,
    sink: sink % 10,
  },
  figures: generations.map((g) =>
    figure({
      id: `fold.${g.key}`,
      title: `finalAssistantOutput, ${g.title}`,
      unit: 'events/s',
      values: samples[g.key].fold,
      floorName: 'walk the same parsed events (read each type)',
      floors: samples[g.key].floor,
      ...(g.hasTarget ? { target: { kind: 'min-ratio', limit: 0.5, text: 'fold >= 50% of the walk-only floor' } } : {}),
      ...(g.key === 'embedded' ? { notes: EMBEDDED_NOTE } : g.hasTarget ? {} : { notes: STREAM_ONLY_NOTE }),
    }),
  ),
});
