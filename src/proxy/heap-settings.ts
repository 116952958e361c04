/**
 * V8 heap settings of the long-lived CLI processes: the young generation
 * keeps its initial size (the proxy's resident memory stays flat under a
 * stream of short runs), and the optimizing compiler is held while the proxy
 * starts. Owns only these settings; they are applied with
 * `v8.setFlagsFromString`, which takes effect for flags V8 reads while it
 * runs, as these are. Why these flags and what they were measured at:
 * decisions 0035, 0039, 0050 and 0122.
 *
 * @module subagent-otel/proxy/heap-settings
 */
import { setFlagsFromString } from 'node:v8';

/**
 * V8 majors known to have these flags and to read them while running (Node 18
 * to 26: V8 10 to 14, each checked with `node --v8-options` and a run that
 * sets them). On others nothing is set: an unknown flag makes V8 print an
 * error on stdout, which is the proxied protocol.
 */
const KNOWN_V8_MAJORS = new Set(['10', '11', '12', '13', '14']);

/** Whether `v8Version` (`process.versions.v8`) is of a V8 major these settings are known to be safe on. */
export function isKnownV8(v8Version: string): boolean {
  return KNOWN_V8_MAJORS.has(v8Version.split('.')[0] ?? '');
}

/** The flag: the young generation keeps its initial size (decision 0050 says why no other). */
export const HEAP_FLAGS = ['--semi-space-growth-factor=1'] as const;

/** Holds V8's optimizing compiler back while the proxy starts (`holdOptimizationDuringStart`). */
export const START_FLAGS = { hold: '--no-opt', release: '--opt' } as const;

/**
 * Keeps V8's optimizing compiler (TurboFan) off until `release` is called,
 * so start-up code is never optimized (the first optimization's memory is
 * never given back: decision 0039). Call it once the built-in modules the
 * next steps need are loaded (with any flag set, V8 refuses Node's code
 * cache of its built-ins), and `release` once the work is no longer short
 * (decision 0122); code that is hot after that is optimized as usual. On V8
 * versions not known (see `favourSmallHeap`) nothing is changed.
 * @returns `release`, idempotent. Never throws.
 */
export function holdOptimizationDuringStart(v8Version: string = process.versions.v8): () => void {
  if (!isKnownV8(v8Version)) return () => undefined;
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
  if (!isKnownV8(v8Version)) return false;
  try {
    for (const flag of HEAP_FLAGS) setFlagsFromString(flag);
    return true;
  } catch {
    // setFlagsFromString throws only on a non-string argument; nothing to do but keep V8's defaults.
    return false;
  }
}
