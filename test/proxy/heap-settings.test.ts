import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import {
  favourSmallHeap,
  HEAP_FLAGS,
  holdOptimizationDuringStart,
  START_FLAGS,
} from '../../src/proxy/heap-settings.js';

describe('favourSmallHeap', () => {
  it('names the V8 flag it sets', () => {
    expect(HEAP_FLAGS).toEqual(['--semi-space-growth-factor=1']);
  });

  it('leaves V8 versions it does not know alone, so no unknown flag reaches V8 (which would print on stdout)', () => {
    expect(favourSmallHeap('15.0.1-node.1')).toBe(false);
    expect(favourSmallHeap('9.4.146.26-node.26')).toBe(false);
    expect(favourSmallHeap('')).toBe(false);
  });

  it('applies the flags on the V8 of Node 18 to 26, and the process goes on', () => {
    expect(favourSmallHeap('11.3.244.8-node.28')).toBe(true);
    expect(favourSmallHeap('13.6.233.17-node.53')).toBe(true);
    expect(favourSmallHeap('14.6.202.34-node.34')).toBe(true);
    expect(getHeapStatistics().total_heap_size).toBeGreaterThan(0);
  });
});

describe('holdOptimizationDuringStart', () => {
  it('names the flags that hold and release the optimizing compiler', () => {
    expect(START_FLAGS).toEqual({ hold: '--no-opt', release: '--opt' });
  });

  it('changes nothing on V8 versions it does not know and hands back a release that does nothing', () => {
    const release = holdOptimizationDuringStart('15.0.1-node.1');
    expect(release()).toBeUndefined();
  });

  it('holds on the V8 of Node 18 to 26; the release is idempotent and the process goes on optimizing', () => {
    const release = holdOptimizationDuringStart('11.3.244.8-node.28');
    release();
    release();
    let sum = 0;
    for (let i = 0; i < 100_000; i += 1) sum += i;
    expect(sum).toBe(4_999_950_000);
  });
});
