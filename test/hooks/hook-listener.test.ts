/** The watcher's socket (`listenForHooks`, fed by `sendToWatcher`): 0600, only valid lines acted on, oversized connections refused. */
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listenForHooks } from '../../src/hooks/hook-listener.js';
import type { HookMessage } from '../../src/hooks/hook-message.js';
import { sendToWatcher } from '../../src/hooks/hook-sender.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'hook-listener-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

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
