/**
 * Benchmark 4, memory: peak RSS of the proxy's observation (telemetry with
 * the file exporter, SDK tracker, frame tap) over one run of 1,000,000
 * events and over 10,000 short runs, against the process's idle RSS (the
 * peak after the observation was built, before any traffic). Each
 * measurement is a fresh process (`memory-probe.mjs`, run with
 * `--expose-gc`).
 *
 * "Flat as events grow" is checked on two levels. Peak RSS growth includes
 * what V8 has not returned yet (its young generation grows under a high
 * allocation rate), so the state itself is also measured: the heap still in
 * use after a full collection, once all traffic was fed and before the
 * observation finishes, minus the same before the traffic and after a
 * warm-up of 2,000 short runs (V8's compiled code is not the observation's
 * state; without the warm-up it made 10,000 short runs look 0.5 MiB
 * heavier than 1,000). Its ratio between 1,000,000 and 100,000 events (and
 * between 10,000 and 1,000 short runs) must stay near 1.
 *
 * The single run keeps its number of steps fixed (200), so only the events
 * (streamed chunks) grow; the short runs are 20 events each, each on a
 * session of its own. A third reference is the same traffic only split and
 * `JSON.parse`d in a process without observation (`--parse-only`): the RSS
 * growth V8 shows for that allocation alone. Traffic is fed in process, as 64 KiB chunks with a
 * turn of the event loop after each; the bridge's own buffers are bounded by
 * the pipes and not part of this figure.
 *
 * @module subagent-otel/bench/memory
 */
import { fileURLToPath } from 'node:url';
import { benchOptions, emitResult, figure, mib, progress, runScript } from './lib/common.mjs';

const { rounds, scale } = benchOptions({ rounds: 2 });
const probe = fileURLToPath(new URL('./memory-probe.mjs', import.meta.url));
const SINGLE = Math.round(1_000_000 * scale);
const SINGLE_SMALL = Math.round(SINGLE / 10);
const SHORT = Math.round(10_000 * scale);
const SHORT_SMALL = Math.round(SHORT / 10);

const cases = [
  { key: 'single', mode: 'single', size: SINGLE, expectRuns: 1 },
  { key: 'singleSmall', mode: 'single', size: SINGLE_SMALL, expectRuns: 1 },
  { key: 'singleParse', mode: 'single', size: SINGLE, expectRuns: 0, parseOnly: true },
  { key: 'short', mode: 'short', size: SHORT, expectRuns: SHORT },
  { key: 'shortSmall', mode: 'short', size: SHORT_SMALL, expectRuns: SHORT_SMALL },
  { key: 'shortParse', mode: 'short', size: SHORT, expectRuns: 0, parseOnly: true },
];
const results = Object.fromEntries(cases.map((c) => [c.key, []]));

for (let round = 0; round < rounds; round += 1) {
  const line = [];
  for (const c of round % 2 === 0 ? cases : [...cases].reverse()) {
    const r = await runScript(
      probe,
      [c.mode, String(c.size), ...(c.parseOnly ? ['--parse-only'] : [])],
      ['--expose-gc'],
    );
    if (c.expectRuns > 0 && r.runs === 0)
      throw new Error(`memory ${c.mode} ${c.size}: telemetry exported no run at all`);
    if (r.runs !== c.expectRuns)
      progress('memory', `${c.mode} ${c.size}: telemetry exported ${r.runs} of ${c.expectRuns} runs`);
    results[c.key].push(r);
    line.push(
      `${c.mode} ${c.size}${c.parseOnly ? ' parse-only' : ''}: +${mib(r.peakRss - r.idleRss).toFixed(1)} MiB (retained ${mib(r.retainedHeap).toFixed(1)})`,
    );
  }
  progress('memory', `round ${round + 1}/${rounds}: ${line.join(', ')}`);
}

const growth = (key) => results[key].map((r) => mib(r.peakRss - r.idleRss));
const idle = (key) => results[key].map((r) => mib(r.idleRss));
const retained = (key) => results[key].map((r) => mib(r.retainedHeap));
const n = (x) => x.toLocaleString('en-US');
const RSS_TARGET = { kind: 'max-value', limit: 64, text: 'RSS growth < 64 MiB' };
const SHORT_RSS_TARGET = { kind: 'max-value', limit: 48, text: 'RSS growth < 48 MiB' };
const FLAT_TARGET = {
  kind: 'max-ratio',
  limit: 1.25,
  text: 'retained state at 10x the size within 25% of the smaller',
};
// Retained state is small; below 1 MiB a ratio says nothing, so both sides count at least 1 MiB.
const flatRatio = (big, small) => Math.max(big, 1) / Math.max(small, 1);

emitResult({
  benchmark: 'memory',
  workload: Object.fromEntries(
    cases.map((c) => [
      c.key,
      { mode: c.mode, size: c.size, events: results[c.key][0].events, bytes: results[c.key][0].bytes },
    ]),
  ),
  figures: [
    figure({
      id: 'memory.single-run.rss-growth',
      title: `peak RSS growth, one run of ${n(SINGLE)} events`,
      unit: 'MiB',
      values: growth('single'),
      floorName: 'idle RSS (observation built, no traffic)',
      floors: idle('single'),
      ratioOf: (g, i) => (g + i) / i,
      target: RSS_TARGET,
      notes: 'ratio is peak RSS / idle RSS',
      extra: {
        smallerRun: { events: SINGLE_SMALL, rssGrowthMiB: growth('singleSmall') },
        parseOnlyRssGrowthMiB: growth('singleParse'),
      },
    }),
    figure({
      id: 'memory.single-run.rss-growth-vs-parse',
      title: `peak RSS growth, one run of ${n(SINGLE)} events, against parsing the same traffic`,
      unit: 'MiB',
      values: growth('single'),
      floorName: 'RSS growth of split + JSON.parse alone, same traffic',
      floors: growth('singleParse'),
      notes: 'how much of the growth is V8 sizing its heap for the parse garbage rather than observation state',
    }),
    figure({
      id: 'memory.single-run.retained-flat',
      title: `heap retained after ${n(SINGLE)} events vs after ${n(SINGLE_SMALL)}`,
      unit: 'MiB',
      values: retained('single'),
      floorName: `heap retained after ${n(SINGLE_SMALL)} events`,
      floors: retained('singleSmall'),
      ratioOf: flatRatio,
      target: FLAT_TARGET,
    }),
    figure({
      id: 'memory.short-runs.rss-growth',
      title: `peak RSS growth, ${n(SHORT)} short runs`,
      unit: 'MiB',
      values: growth('short'),
      floorName: 'idle RSS (observation built, no traffic)',
      floors: idle('short'),
      ratioOf: (g, i) => (g + i) / i,
      target: SHORT_RSS_TARGET,
      notes: 'ratio is peak RSS / idle RSS',
      extra: {
        fewerRuns: { runs: SHORT_SMALL, rssGrowthMiB: growth('shortSmall') },
        parseOnlyRssGrowthMiB: growth('shortParse'),
      },
    }),
    figure({
      id: 'memory.short-runs.rss-growth-vs-parse',
      title: `peak RSS growth, ${n(SHORT)} short runs, against parsing the same traffic`,
      unit: 'MiB',
      values: growth('short'),
      floorName: 'RSS growth of split + JSON.parse alone, same traffic',
      floors: growth('shortParse'),
    }),
    figure({
      id: 'memory.short-runs.exported',
      title: `invoke_agent spans in traces.jsonl after ${n(SHORT)} short runs`,
      unit: 'spans',
      values: results.short.map((r) => r.runs),
      floorName: 'runs observed',
      floors: results.short.map(() => SHORT),
      target: { kind: 'min-ratio', limit: 1, text: 'every run exported (a correctness check of the workload)' },
    }),
    figure({
      id: 'memory.short-runs.retained-flat',
      title: `heap retained after ${n(SHORT)} short runs vs after ${n(SHORT_SMALL)}`,
      unit: 'MiB',
      values: retained('short'),
      floorName: `heap retained after ${n(SHORT_SMALL)} short runs`,
      floors: retained('shortSmall'),
      ratioOf: flatRatio,
      target: FLAT_TARGET,
    }),
  ],
});
