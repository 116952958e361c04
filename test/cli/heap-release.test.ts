import { getHeapSpaceStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { IdleRelease, memoryReducer, RELEASE_GAP_MS } from '../../src/cli/heap-release.js';

/** An IdleRelease on a clock the test moves, counting its collections. */
function harness(minGapMs?: number): {
  release: IdleRelease;
  collections: () => number;
  advance: (ms: number) => void;
} {
  let now = 1_000_000;
  let count = 0;
  const release = new IdleRelease({
    reduce: () => {
      count += 1;
    },
    now: () => now,
    ...(minGapMs !== undefined ? { minGapMs } : {}),
  });
  return {
    release,
    collections: () => count,
    advance: (ms) => {
      now += ms;
    },
  };
}

describe('IdleRelease', () => {
  it('collects once the start is over, even when its first pass read no session', () => {
    const h = harness();
    expect(h.release.afterPass(0)).toBe(true);
    expect(h.collections()).toBe(1);
    h.advance(RELEASE_GAP_MS * 10);
    expect(h.release.afterPass(0)).toBe(false);
    expect(h.collections()).toBe(1);
  });

  it('waits for a pass that read nothing after a start that read sessions', () => {
    const h = harness();
    expect(h.release.afterPass(40)).toBe(false);
    expect(h.release.afterPass(3)).toBe(false);
    expect(h.collections()).toBe(0);
    expect(h.release.afterPass(0)).toBe(true);
    expect(h.collections()).toBe(1);
  });

  it('collects again after later reads, at most once per gap', () => {
    const h = harness(60_000);
    h.release.afterPass(0);
    h.advance(2_000);
    h.release.afterPass(1);
    h.advance(2_000);
    expect(h.release.afterPass(0)).toBe(false); // 4 s after the last collection
    h.advance(55_999);
    expect(h.release.afterPass(0)).toBe(false);
    h.advance(1);
    expect(h.release.afterPass(0)).toBe(true); // the read 56 s ago is still owed a collection
    expect(h.collections()).toBe(2);
    h.advance(120_000);
    expect(h.release.afterPass(0)).toBe(false); // nothing read since
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
