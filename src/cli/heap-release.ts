/**
 * Gives back the memory a burst of reading left behind in a long-lived
 * process (`watch`): once the reading is over, one memory-reducing garbage
 * collection shrinks V8's young generation to its initial size and returns
 * the freed pages, which V8 would otherwise keep committed for as long as
 * the process stays idle (an idle watch allocates too little to ever collect
 * again). Owns that collection and when it runs; decision 0133.
 *
 * @module subagent-otel/cli/heap-release
 */
import { setFlagsFromString } from 'node:v8';
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
  /** The least time between two collections (default {@link RELEASE_GAP_MS}). */
  readonly minGapMs?: number;
  /** Clock, epoch ms; default `Date.now`. */
  readonly now?: () => number;
}

/** Default least time between two collections: an agent writing all the time costs one a minute at most. */
export const RELEASE_GAP_MS = 60_000;

/**
 * When to collect: on the first pass that read no session after the start
 * (whose first pass lists and classifies every file, the catch-up) or after
 * passes that read sessions, at most once per `minGapMs`; a quiet pass that
 * comes too soon leaves it to a later quiet pass. Never again while nothing
 * was read since the last collection.
 */
export class IdleRelease {
  readonly #reduce: ReduceMemory;
  readonly #minGapMs: number;
  readonly #now: () => number;
  /** The start counts as reading: its first pass lists every file and reads the heads of those it does not know. */
  #readSince = true;
  #last: number | undefined;

  constructor(options: IdleReleaseOptions) {
    this.#reduce = options.reduce;
    this.#minGapMs = options.minGapMs ?? RELEASE_GAP_MS;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Called after each pass with the number of sessions it read.
   * @returns whether it collected.
   */
  afterPass(sessionsRead: number): boolean {
    if (sessionsRead > 0) {
      this.#readSince = true;
      return false;
    }
    if (!this.#readSince) return false;
    const at = this.#now();
    if (this.#last !== undefined && at - this.#last < this.#minGapMs) return false;
    this.#readSince = false;
    this.#last = at;
    this.#reduce();
    return true;
  }
}
