/**
 * Replay streams unlinked session logs: each epoch is reported as it closes
 * (before the next file is read), epochs before a log's LAST
 * `session/end-seed` are never reported, linked sessions are still held and
 * nested, and the backpressure hook is awaited every 512 spans.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LogTracker, MAX_DEFERRED_RUNS } from '../../src/observe/log-tracker.js';
import type { RunListener } from '../../src/observe/run-record.js';
import { BACKPRESSURE_SPANS, replayPaths } from '../../src/replay/replay.js';

const dir = mkdtempSync(join(tmpdir(), 'streaming-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = 1_700_000_000_000;

/** A log of `turns` completed one-message turns, optionally with end-seeds after the given turn indexes. */
function writeLog(
  name: string,
  id: string,
  turns: number,
  options: { parent?: string; seedsAfter?: number[]; start?: number } = {},
): string {
  const lines: unknown[] = [
    {
      type: 'session',
      version: 3,
      id,
      cwd: '/w',
      createdAt: '2026-11-29T10:00:00.000Z',
      ...(options.parent !== undefined ? { parentSession: options.parent } : {}),
    },
  ];
  let seq = 0;
  for (let turn = 0; turn < turns; turn += 1) {
    const time = (options.start ?? T0) + turn * 10;
    lines.push(
      { type: 'turn/start', seq: seq++, time, data: { turn } },
      {
        type: 'assistant/message',
        seq: seq++,
        time: time + 1,
        data: {
          turn,
          step: 0,
          message: { id: `m${turn}`, role: 'assistant', content: [{ type: 'text', text: `${id} answer ${turn}` }] },
        },
      },
      { type: 'turn/end', seq: seq++, time: time + 2, data: { turn, reason: { kind: 'completed' } } },
    );
    if (options.seedsAfter?.includes(turn) === true)
      lines.push({ type: 'session/end-seed', seq: seq++, time: time + 3, data: {} });
  }
  const path = join(dir, name);
  writeFileSync(path, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
  return path;
}

function recorder(): RunListener & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    onRunStart: (start) =>
      calls.push(`start ${start.runId}${start.parentRunId !== undefined ? ` under ${start.parentRunId}` : ''}`),
    onRunEnd: (record) => calls.push(`end ${record.runId} ${JSON.stringify(record.output)}`),
  };
}

describe('streaming replay', () => {
  it('reports only the epochs after the last session/end-seed of a streamed log', async () => {
    const path = writeLog('seeded.jsonl', 'seeded', 5, { seedsAfter: [0, 2] });
    const listener = recorder();
    const summary = await replayPaths([path], listener);
    expect(summary.runs).toBe(2);
    expect(listener.calls).toEqual([
      'start seeded#0',
      'end seeded#0 [{"type":"text","text":"seeded answer 3"}]',
      'start seeded#1',
      'end seeded#1 [{"type":"text","text":"seeded answer 4"}]',
    ]);
    // The same runs as the held (unstreamed) path gives.
    const held = recorder();
    const tracker = new LogTracker(held);
    await tracker.readFile(path);
    tracker.emit();
    expect(held.calls).toEqual(listener.calls);
  });

  it('drops the epochs before a session/end-seed met after more epochs than are held back', async () => {
    // More epochs than MAX_DEFERRED_RUNS before the last end-seed: the file is scanned for it, and only what follows is reported.
    expect(MAX_DEFERRED_RUNS).toBe(256);
    const path = writeLog('late-seed.jsonl', 'late', 400, { seedsAfter: [5, 300] });
    const listener = recorder();
    const summary = await replayPaths([path], listener);
    expect(summary.runs).toBe(99);
    expect(listener.calls[0]).toBe('start late#0');
    expect(listener.calls[1]).toBe('end late#0 [{"type":"text","text":"late answer 301"}]');
    expect(listener.calls.at(-1)).toBe('end late#98 [{"type":"text","text":"late answer 399"}]');
    const held = recorder();
    const tracker = new LogTracker(held);
    await tracker.readFile(path);
    tracker.emit();
    expect(held.calls).toEqual(listener.calls);
  });

  it('reports the epochs held back once it knows the last session/end-seed is behind them', async () => {
    const path = writeLog('early-seed.jsonl', 'early', 300, { seedsAfter: [9] });
    const listener = recorder();
    const summary = await replayPaths([path], listener);
    expect(summary.runs).toBe(290);
    expect(listener.calls[1]).toBe('end early#0 [{"type":"text","text":"early answer 10"}]');
    expect(listener.calls.at(-1)).toBe('end early#289 [{"type":"text","text":"early answer 299"}]');
    expect(listener.calls).toHaveLength(580);
  });

  it('reports an unlinked log while it is read, and holds linked sessions to nest them', async () => {
    const parent = writeLog('a-parent.jsonl', 'parent', 1);
    const child = writeLog('b-child.jsonl', 'child', 1, { parent: 'parent', start: T0 + 1 });
    const alone = writeLog('c-alone.jsonl', 'alone', 2);
    const listener = recorder();
    let pausedAt: number[] = [];
    const summary = await replayPaths([parent, child, alone], listener, {
      onProgress: (progress) => {
        if (progress.filesDone === 3) pausedAt = [listener.calls.length];
      },
    });
    expect(summary.runs).toBe(4);
    // The unlinked session's runs came first, while files were read; the linked pair after the last file, nested.
    expect(pausedAt).toEqual([4]);
    expect(listener.calls).toEqual([
      'start alone#0',
      'end alone#0 [{"type":"text","text":"alone answer 0"}]',
      'start alone#1',
      'end alone#1 [{"type":"text","text":"alone answer 1"}]',
      'start parent#0',
      'start child#0 under parent#0',
      'end child#0 [{"type":"text","text":"child answer 0"}]',
      'end parent#0 [{"type":"text","text":"parent answer 0"}]',
    ]);
  });

  it('waits on the backpressure hook every 512 spans', async () => {
    // 1,000 turns of one step: 2,000 spans, so at least three waits while reading and one at the end.
    const path = writeLog('long.jsonl', 'long', 1000);
    let waits = 0;
    let runsAtFirstWait = -1;
    const listener = recorder();
    const summary = await replayPaths([path], listener, {
      backpressure: async () => {
        waits += 1;
        if (runsAtFirstWait === -1) runsAtFirstWait = listener.calls.length / 2;
      },
    });
    expect(summary.runs).toBe(1000);
    expect(BACKPRESSURE_SPANS).toBe(512);
    expect(waits).toBeGreaterThanOrEqual(4);
    // The first wait came once 256 runs (512 spans) were reported, within one 4 KiB batch of records.
    expect(runsAtFirstWait).toBeGreaterThanOrEqual(256);
    expect(runsAtFirstWait).toBeLessThan(300);
  });
});
