/**
 * Gives back the memory a burst of reading left behind in a long-lived
 * process (`watch`): once the reading is over, one memory-reducing garbage
 * collection shrinks V8's young generation to its initial size and returns
 * the freed pages, which V8 would otherwise keep committed for as long as
 * the process stays idle (an idle watch allocates too little to collect
 * often, and V8 shrinks only at a collection). Owns that collection and
 * when it runs; decision 0133.
 *
 * @module subagent-otel/cli/heap-release
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { isKnownV8 } from '../proxy/heap-settings.js';

/** Runs one full, memory-reducing garbage collection, synchronously. */
export type ReduceMemory = () => void;

/**
 * V8's memory-reducing collection (the one it runs itself under memory
 * pressure: young generation shrunk, every collectable object collected,
 * freed pages returned), reached through V8's `gc` function, which is
 * exposed for one new context only and the flag turned off again at once.
 * @returns the collection; `undefined` on V8 versions the flags are not
 *   known on (`proxy/heap-settings`), or when no `gc` function came. Never throws.
 */
export function memoryReducer(v8Version: string = process.versions.v8): ReduceMemory | undefined {
  if (!isKnownV8(v8Version)) return undefined;
  let gc: unknown;
  try {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc');
  } catch {
    // Only a context that cannot be made throws here; the process then keeps V8's own schedule.
    gc = undefined;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  if (typeof gc !== 'function') return undefined;
  const collect = gc as (options: object) => void;
  // `last-resort`: collects until nothing more is freed, with the memory-reducing mode that shrinks the young generation.
  return () => collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

/** Options of {@link IdleRelease}. */
export interface IdleReleaseOptions {
  readonly reduce: ReduceMemory;
  /** Bytes V8's young generation holds now (default: its `new_space` size, `v8.getHeapSpaceStatistics`). */
  readonly youngGeneration?: () => number;
  /** Collect only when the young generation holds more than this (default {@link GROWN_YOUNG_BYTES}). */
  readonly grownBytes?: number;
  /** The least time between two collections (default {@link RELEASE_GAP_MS}). */
  readonly minGapMs?: number;
  /** Clock, epoch ms; default `Date.now`. */
  readonly now?: () => number;
}

/** Default least time between two collections: an agent writing all the time costs one a minute at most. */
export const RELEASE_GAP_MS = 60_000;

/** Default size of a grown young generation: V8 starts it at 1 MiB a semi-space and grows it to 16. */
export const GROWN_YOUNG_BYTES = 4 * 2 ** 20;

/** The size of V8's young generation now, in bytes. */
function youngGenerationBytes(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}

/**
 * When to collect: after a pass that read no session, when V8's young
 * generation has grown past `grownBytes` (a catch-up, the listings of a
 * large history, a burst of reading grew it), at most once per `minGapMs`.
 * A quiet pass that comes too soon leaves it to a later one.
 */
export class IdleRelease {
  readonly #reduce: ReduceMemory;
  readonly #young: () => number;
  readonly #grownBytes: number;
  readonly #minGapMs: number;
  readonly #now: () => number;
  #last: number | undefined;

  constructor(options: IdleReleaseOptions) {
    this.#reduce = options.reduce;
    this.#young = options.youngGeneration ?? youngGenerationBytes;
    this.#grownBytes = options.grownBytes ?? GROWN_YOUNG_BYTES;
    this.#minGapMs = options.minGapMs ?? RELEASE_GAP_MS;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Called after each pass with the number of sessions it read.
   * @returns whether it collected.
   */
  afterPass(sessionsRead: number): boolean {
    if (sessionsRead > 0) return false;
    const at = this.#now();
    if (this.#last !== undefined && at - this.#last < this.#minGapMs) return false;
    if (this.#young() <= this.#grownBytes) return false;
    this.#last = at;
    this.#reduce();
    return true;
  }
}
