/** The watcher's lock (`takeWatcherLock`): one holder, named to the next, taken over from a dead one. */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { takeWatcherLock } from '../../src/hooks/watcher-lock.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'watcher-lock-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('takeWatcherLock', () => {
  it('gives the lock to one holder, names it to the next, and takes over from a dead one', async () => {
    const path = join(root, 'watch.lock');
    const first = await takeWatcherLock(path);
    expect(first.ok).toBe(true);
    // A live holder: another process.
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    await new Promise((r) => other.once('spawn', r));
    if (first.ok) await first.release();
    writeFileSync(path, `${other.pid}\n`);
    expect(await takeWatcherLock(path)).toEqual({ ok: false, holder: other.pid });
    other.kill('SIGKILL');
    await new Promise((r) => other.once('exit', r));
    const taken = await takeWatcherLock(path);
    expect(taken.ok).toBe(true);
  });
});
