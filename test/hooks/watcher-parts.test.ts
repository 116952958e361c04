/** The watcher's private folder, its lock, and its socket: private, one holder, only valid lines acted on. */
import { lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { createConnection } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listenForHooks } from '../../src/hooks/hook-listener.js';
import type { HookMessage } from '../../src/hooks/hook-message.js';
import { sendToWatcher } from '../../src/hooks/hook-sender.js';
import { ensurePrivateFolder } from '../../src/hooks/private-folder.js';
import { takeWatcherLock } from '../../src/hooks/watcher-lock.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'watcher-parts-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('ensurePrivateFolder', () => {
  it('makes the folder 0700, closes one that was open, and refuses a link', async () => {
    const dir = join(root, 'a', 'daemon');
    expect(await ensurePrivateFolder(dir)).toBeUndefined();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    chmodSync(dir, 0o755);
    expect(await ensurePrivateFolder(dir)).toBeUndefined();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const link = join(root, 'link');
    symlinkSync(dir, link);
    expect(await ensurePrivateFolder(link)).toMatch(/is a symbolic link/);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });
});

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

describe('listenForHooks', () => {
  it('hands on valid messages, refuses other lines and oversized connections, and is 0600', async () => {
    mkdirSync(join(root, 'd'), { mode: 0o700 });
    const socket = join(root, 'd', 'hooks.sock');
    const messages: HookMessage[] = [];
    const problems: string[] = [];
    const listener = await listenForHooks(
      socket,
      (m) => messages.push(m),
      (p) => problems.push(p),
    );
    try {
      expect(statSync(socket).mode & 0o777).toBe(0o600);
      expect(
        await sendToWatcher(socket, '{"v":1,"agent":"codex","at":5,"event":"Stop","transcriptPath":"/x.jsonl"}', 2000),
      ).toEqual({ kind: 'sent' });
      expect(await sendToWatcher(socket, '{"v":1,"agent":"other","at":5,"event":"Stop"}', 2000)).toEqual({
        kind: 'sent',
      });
      await new Promise<void>((done) => {
        const c = createConnection(socket, () => c.write('x'.repeat(70 * 1024)));
        c.on('close', () => done());
        c.on('error', () => undefined);
      });
      // Waits for the three lines to be handled (a condition, not a time: CI is a busy machine).
      for (let waited = 0; messages.length + problems.length < 3 && waited < 60_000; waited += 20)
        await new Promise((r) => setTimeout(r, 20));
      expect(messages).toEqual([{ v: 1, agent: 'codex', at: 5, event: 'Stop', transcriptPath: '/x.jsonl' }]);
      expect(problems).toEqual([
        expect.stringMatching(/refused a line .*agent/),
        expect.stringMatching(/more than 65536 bytes/),
      ]);
    } finally {
      await listener.close();
    }
    expect(await sendToWatcher(socket, '{}', 2000)).toEqual({ kind: 'absent' });
  });
});
