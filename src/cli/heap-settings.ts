/**
 * V8 heap settings of the long-lived CLI processes: the proxy sits beside
 * every agent for its whole life, so its resident memory counts more than a
 * few percent of its CPU. Under a high allocation rate V8 grows its young
 * generation up to 16 MiB per semi-space and lets the old generation fill
 * with promoted garbage up to a generous limit before collecting it, and
 * rarely gives the pages back: a stream of 10,000 short runs left about
 * 70 MiB of peak RSS growth for 2 MiB of live state (decision 0035). And the
 * first optimization by TurboFan costs a few MiB that a short proxy would
 * spend on start-up code, so the proxy holds it during its start (decision
 * 0039). Owns only these settings; they are applied with
 * `v8.setFlagsFromString`, which takes effect for flags V8 reads while it
 * runs, as these are.
 *
 * @module subagent-otel/cli/heap-settings
 */
import { setFlagsFromString } from 'node:v8';

/**
 * V8 majors known to have these flags and to read them while running (Node 18
 * to 26: V8 10 to 14, each checked with `node --v8-options` and a run that
 * sets them). On others nothing is set: an unknown flag makes V8 print an
 * error on stdout, which is the proxied protocol.
 */
const KNOWN_V8_MAJORS = new Set(['10', '11', '12', '13', '14']);

/**
 * The flag: the young generation keeps its initial size. `--optimize-for-size`
 * was dropped: it cost about 0.7 ms of added p99 latency and 5% CPU, and the
 * memory targets hold without it (decision 0050).
 */
export const HEAP_FLAGS = ['--semi-space-growth-factor=1'] as const;

/** Holds V8's optimizing compiler back while the proxy starts (`holdOptimizationDuringStart`). */
export const START_FLAGS = { hold: '--no-opt', release: '--opt' } as const;

/**
 * Keeps V8's optimizing compiler (TurboFan) off until `release` is called.
 * Start-up code runs once, but module resolution in Node's loader runs its
 * path functions often enough to be optimized, and the first optimization of
 * the process costs about 3.5 MiB of resident memory that is never given
 * back: a third of what the proxy adds to a bare Node (decision 0039). Call
 * it early and `release` once the start is over; code that is hot after that
 * is optimized as usual. On V8 versions not known (see `favourSmallHeap`)
 * nothing is changed.
 * @returns `release`, idempotent. Never throws.
 */
export function holdOptimizationDuringStart(v8Version: string = process.versions.v8): () => void {
  const major = v8Version.split('.')[0] ?? '';
  if (!KNOWN_V8_MAJORS.has(major)) return () => undefined;
  setFlagsFromString(START_FLAGS.hold);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    setFlagsFromString(START_FLAGS.release);
  };
}

/**
 * Applies `HEAP_FLAGS` for the rest of the process. Call it once, early,
 * before the heavy allocation starts. Costs a few percent of CPU per byte
 * (more, smaller collections).
 * @returns whether the flags were applied (`false` on V8 versions they are not
 *   known to be safe on). Never throws.
 */
export function favourSmallHeap(v8Version: string = process.versions.v8): boolean {
  const major = v8Version.split('.')[0] ?? '';
  if (!KNOWN_V8_MAJORS.has(major)) return false;
  try {
    for (const flag of HEAP_FLAGS) setFlagsFromString(flag);
    return true;
  } catch {
    // setFlagsFromString throws only on a non-string argument; nothing to do but keep V8's defaults.
    return false;
  }
}
