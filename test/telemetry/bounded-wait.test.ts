/**
 * Waiting with a bound: `within` says how work ended (done, failed, or timed
 * out) and never rejects nor leaves its timer behind; `settleEach` waits for
 * every task before it rejects with the first failure.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { settleEach, within } from '../../src/telemetry/bounded-wait.js';

afterEach(() => vi.useRealTimers());

describe('within', () => {
  it('says done or failed, with the error, and clears its timer', async () => {
    vi.useFakeTimers();
    expect(await within(() => Promise.resolve(1), 1000)).toEqual({ status: 'done' });
    const error = new Error('export failed');
    expect(await within(() => Promise.reject(error), 1000)).toEqual({ status: 'failed', error });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('turns work that throws before returning a promise into failed', async () => {
    const error = new Error('sync throw');
    const outcome = await within(() => {
      throw error;
    }, 1000);
    expect(outcome).toEqual({ status: 'failed', error });
  });

  it('times out work that does not settle within the bound, a negative bound counting as 0', async () => {
    vi.useFakeTimers();
    const never = () => new Promise<void>(() => undefined);
    const bounded = within(never, 5000);
    await vi.advanceTimersByTimeAsync(4999);
    let settled = false;
    void bounded.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await bounded).toEqual({ status: 'timeout' });
    const negative = within(never, -10);
    await vi.advanceTimersByTimeAsync(0);
    expect(await negative).toEqual({ status: 'timeout' });
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('settleEach', () => {
  it('resolves when every task fulfilled', async () => {
    const ran: number[] = [];
    await settleEach([async () => ran.push(1), async () => ran.push(2)]);
    expect(ran.sort()).toEqual([1, 2]);
  });

  it('rejects with the first failure only after every task settled', async () => {
    let releaseSlow: () => void = () => undefined;
    let slowDone = false;
    const slow = () =>
      new Promise<void>((resolve) => {
        releaseSlow = () => {
          slowDone = true;
          resolve();
        };
      });
    const first = new Error('first');
    const all = settleEach([() => Promise.reject(first), slow, () => Promise.reject(new Error('second'))]);
    let rejected = false;
    all.catch(() => (rejected = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(rejected).toBe(false);
    releaseSlow();
    await expect(all).rejects.toBe(first);
    expect(slowDone).toBe(true);
  });
});
