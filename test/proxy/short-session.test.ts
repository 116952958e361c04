/**
 * When the proxy stops treating a session as short (decision 0122): the
 * first of a byte count, a time after the observation was built, or the
 * agent's exit, and only once.
 */
import { describe, expect, it } from 'vitest';
import { SHORT_SESSION_LIMITS, ShortSessionWatch, type WatchTimers } from '../../src/proxy/short-session.js';

/** Timers run by hand: `fire()` runs the pending callback. */
function manualTimers(): WatchTimers & {
  pending: Array<{ callback: () => void; ms: number; unrefed: boolean }>;
  cleared: number;
  fire(): void;
} {
  const state = {
    pending: [] as Array<{ callback: () => void; ms: number; unrefed: boolean }>,
    cleared: 0,
    setTimeout(callback: () => void, ms: number) {
      const entry = { callback, ms, unrefed: false };
      state.pending.push(entry);
      return {
        unref: () => {
          entry.unrefed = true;
        },
      };
    },
    clearTimeout() {
      state.cleared += 1;
      state.pending = [];
    },
    fire() {
      const due = state.pending;
      state.pending = [];
      for (const entry of due) entry.callback();
    },
  };
  return state;
}

describe('ShortSessionWatch', () => {
  it('is over once the bytes forwarded reach the limit, counted over several chunks', () => {
    let calls = 0;
    const watch = new ShortSessionWatch(() => (calls += 1), { bytes: 100, ms: 1000 }, manualTimers());
    watch.forwarded(60);
    expect(calls).toBe(0);
    expect(watch.over).toBe(false);
    watch.forwarded(40);
    expect(calls).toBe(1);
    expect(watch.over).toBe(true);
    watch.forwarded(1000);
    expect(calls).toBe(1);
  });

  it('is over a set time after the observation was built, by a timer that does not keep the process alive', () => {
    let calls = 0;
    const timers = manualTimers();
    const watch = new ShortSessionWatch(() => (calls += 1), { bytes: 100, ms: 250 }, timers);
    watch.forwarded(10);
    expect(timers.pending).toEqual([]);
    watch.observing();
    watch.observing();
    expect(timers.pending.map((entry) => [entry.ms, entry.unrefed])).toEqual([[250, true]]);
    expect(calls).toBe(0);
    timers.fire();
    expect(calls).toBe(1);
    watch.ended();
    expect(calls).toBe(1);
  });

  it('is over when the session ended before either limit, and its timer is cleared', () => {
    let calls = 0;
    const timers = manualTimers();
    const watch = new ShortSessionWatch(() => (calls += 1), { bytes: 100, ms: 250 }, timers);
    watch.observing();
    watch.ended();
    expect(calls).toBe(1);
    expect(timers.cleared).toBe(1);
    watch.ended();
    watch.forwarded(500);
    expect(calls).toBe(1);
  });

  it('starts no timer once over (a busy session that reached the byte limit while the observation loaded)', () => {
    const timers = manualTimers();
    const watch = new ShortSessionWatch(() => undefined, { bytes: 1, ms: 250 }, timers);
    watch.forwarded(1);
    watch.observing();
    expect(timers.pending).toEqual([]);
  });

  it('defaults to 1 MiB and 1 s', () => {
    expect(SHORT_SESSION_LIMITS).toEqual({ bytes: 1024 * 1024, ms: 1000 });
  });
});
