/** A hook's notice closes a run once its file settles; a file that grows later is back under the idle bound. */
import { describe, expect, it } from 'vitest';
import { HOOK_LATE_WRITE_MS, HOOK_SETTLE_MS, type TranscriptFile } from '../../src/transcripts/format.js';
import { isQuietFile } from '../../src/transcripts/record-loop.js';
import { EndNotices, settlePoint } from '../../src/watch/end-notices.js';

const IDLE = 600_000;
const file = (mtimeMs: number): TranscriptFile => ({
  path: '/t/a.jsonl',
  size: 10,
  mtimeMs,
  info: { format: 'claude-code', kind: 'session', facts: {} } as unknown as TranscriptFile['info'],
});
const live = (now: number, ended?: number) => ({
  live: {
    now,
    idleMs: IDLE,
    isReported: () => false,
    endedAt: (path: string) => (path === '/t/a.jsonl' ? ended : undefined),
  },
});

describe('isQuietFile with an end notice', () => {
  it('is quiet once the file has not changed for the settle time after the hook', () => {
    expect(isQuietFile(file(1000), live(1000 + HOOK_SETTLE_MS - 1, 1000))).toBe(false);
    expect(isQuietFile(file(1000), live(1000 + HOOK_SETTLE_MS, 1000))).toBe(true);
    // The agent wrote its last line just after the hook: the settle time counts from that line.
    expect(isQuietFile(file(1100), live(1000 + HOOK_SETTLE_MS, 1000))).toBe(false);
    expect(isQuietFile(file(1100), live(1100 + HOOK_SETTLE_MS, 1000))).toBe(true);
    // A busy machine: the last line 1.9 s after the hook still belongs to the run that ended.
    expect(isQuietFile(file(2900), live(2900 + HOOK_SETTLE_MS - 1, 1000))).toBe(false);
    expect(isQuietFile(file(2900), live(2900 + HOOK_SETTLE_MS, 1000))).toBe(true);
  });

  it('leaves a file that grew after the late-write window, or has no notice, to the idle bound', () => {
    expect(HOOK_LATE_WRITE_MS).toBe(2000);
    expect(isQuietFile(file(1000 + 2000), live(9000, 1000))).toBe(true);
    expect(isQuietFile(file(1000 + 2001), live(9000, 1000))).toBe(false);
    expect(isQuietFile(file(1000), live(5000))).toBe(false);
    expect(isQuietFile(file(1000), live(1001 + IDLE))).toBe(true);
  });

  it('settles at the same time the rule says quiet', () => {
    expect(settlePoint(1000, 1100)).toBe(1100 + HOOK_SETTLE_MS);
    expect(settlePoint(1000, 900)).toBe(1000 + HOOK_SETTLE_MS);
    expect(settlePoint(1000, 2900)).toBe(2900 + HOOK_SETTLE_MS);
    expect(settlePoint(1000, 1000 + HOOK_LATE_WRITE_MS + 1)).toBeUndefined();
  });
});

describe('EndNotices', () => {
  it('keeps the later of repeated notices, wakes a waiter, and forgets old ones', async () => {
    const notices = new EndNotices();
    const stop = new AbortController();
    let woke = false;
    const waiting = notices.wait(60_000, stop.signal).then(() => (woke = true));
    notices.add('/t/../t/a.jsonl', 2000);
    notices.add('/t/a.jsonl', 1500);
    await waiting;
    expect(woke).toBe(true);
    expect(notices.endedAt('/t/a.jsonl')).toBe(2000);
    expect(notices.takeFresh()).toBe(true);
    expect(notices.takeFresh()).toBe(false);
    notices.prune(2001);
    expect(notices.endedAt('/t/a.jsonl')).toBeUndefined();
  });

  it('forgets a settled notice, but not one a later hook replaced', () => {
    const notices = new EndNotices();
    notices.add('/t/a.jsonl', 1000);
    notices.add('/t/b.jsonl', 1000);
    notices.add('/t/b.jsonl', 3000);
    notices.settled('/t/a.jsonl', 1000);
    notices.settled('/t/b.jsonl', 1000);
    expect(notices.endedAt('/t/a.jsonl')).toBeUndefined();
    expect(notices.endedAt('/t/b.jsonl')).toBe(3000);
    notices.settled('/t/c.jsonl', 1000);
    expect(notices.endedAt('/t/c.jsonl')).toBeUndefined();
  });
});
