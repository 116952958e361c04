import { getHeapSpaceStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { GROWN_YOUNG_BYTES, IdleRelease, memoryReducer, RELEASE_GAP_MS } from '../../src/cli/heap-release.js';

const MiB = 2 ** 20;

/** An IdleRelease on a clock and a young generation the test sets, counting its collections. */
function harness(minGapMs?: number): {
  release: IdleRelease;
  collections: () => number;
  advance: (ms: number) => void;
  young: (bytes: number) => void;
} {
  let now = 1_000_000;
  let count = 0;
  let young = 16 * MiB;
  const release = new IdleRelease({
    reduce: () => {
      count += 1;
      young = 1 * MiB;
    },
    youngGeneration: () => young,
    now: () => now,
    ...(minGapMs !== undefined ? { minGapMs } : {}),
  });
  return {
    release,
    collections: () => count,
    advance: (ms) => {
      now += ms;
    },
    young: (bytes) => {
      young = bytes;
    },
  };
}

describe('IdleRelease', () => {
  it('collects on the first pass that read no session once the young generation grew', () => {
    const h = harness();
    expect(h.release.afterPass(40)).toBe(false);
    expect(h.collections()).toBe(0);
    expect(h.release.afterPass(0)).toBe(true);
    expect(h.collections()).toBe(1);
  });

  it('leaves a young generation that has not grown past the bound alone, however long the watch is idle', () => {
    const h = harness();
    h.young(GROWN_YOUNG_BYTES);
    expect(h.release.afterPass(0)).toBe(false);
    h.advance(RELEASE_GAP_MS * 10);
    expect(h.release.afterPass(0)).toBe(false);
    expect(h.collections()).toBe(0);
  });

  it('collects again when the young generation grew again, at most once per gap', () => {
    const h = harness(60_000);
    expect(h.release.afterPass(0)).toBe(true);
    h.advance(2_000);
    h.young(8 * MiB);
    expect(h.release.afterPass(0)).toBe(false); // 2 s after the last collection
    h.advance(57_999);
    expect(h.release.afterPass(0)).toBe(false);
    h.advance(1);
    expect(h.release.afterPass(3)).toBe(false); // a pass that read: not idle
    expect(h.release.afterPass(0)).toBe(true);
    expect(h.collections()).toBe(2);
  });
});

describe('memoryReducer', () => {
  it('is not offered on V8 majors the flags are not known on', () => {
    expect(memoryReducer('15.0.1-node.1')).toBeUndefined();
    expect(memoryReducer('9.4.146.26-node.26')).toBeUndefined();
    expect(memoryReducer('')).toBeUndefined();
  });

  it("shrinks a young generation grown by a burst of allocation back to V8's smallest", () => {
    const reduce = memoryReducer();
    expect(reduce).toBeTypeOf('function');
    const newSpace = (): number =>
      getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? NaN;
    // Short-lived objects with a few surviving each scavenge: V8 grows the young generation for them.
    let keep: object[] = [];
    for (let i = 0; i < 3_000_000; i += 1) {
      keep.push({ i, text: `x${i}` });
      if (keep.length > 200_000) keep = [];
    }
    keep = [];
    expect(newSpace()).toBeGreaterThan(4 * 2 ** 20);
    reduce?.();
    expect(newSpace()).toBeLessThanOrEqual(2 * 2 ** 20);
    // The flag that exposed V8's gc is off again: this context never had it.
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
  });
});
