/**
 * The order in which `expandPaths` looks at the disk: every entry of a
 * directory is measured before any of its subdirectories is listed, so a
 * session file is measured before its `subagents/` folder is read (watch
 * reads the session file only up to that size; a child named in those bytes
 * was already on disk). The files come out in name order all the same.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

const calls: string[] = [];

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...real,
    readdir: (async (path: string) => {
      calls.push(`list ${path}`);
      return real.readdir(path);
    }) as typeof real.readdir,
    stat: (async (path: string) => {
      calls.push(`stat ${path}`);
      return real.stat(path);
    }) as typeof real.stat,
  };
});

const { expandPaths } = await import('../../src/replay/input-files.js');

const root = mkdtempSync(join(tmpdir(), 'walk-order-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('expandPaths walk order', () => {
  it('measures a session file before it lists the session folder beside it, and lists in name order', async () => {
    const session = join(root, 'abc');
    mkdirSync(join(session, 'subagents'), { recursive: true });
    writeFileSync(join(root, 'abc.jsonl'), '{}\n');
    writeFileSync(join(session, 'subagents', 'agent-1.jsonl'), '{}\n');
    writeFileSync(join(root, 'zzz.jsonl'), '{}\n');
    calls.length = 0;
    const { files } = await expandPaths([root]);
    expect(files.map((f) => f.path)).toEqual([
      join(session, 'subagents', 'agent-1.jsonl'),
      join(root, 'abc.jsonl'),
      join(root, 'zzz.jsonl'),
    ]);
    const measured = calls.indexOf(`stat ${join(root, 'abc.jsonl')}`);
    const listed = calls.indexOf(`list ${session}`);
    expect(measured).toBeGreaterThanOrEqual(0);
    expect(listed).toBeGreaterThan(measured);
    expect(calls.indexOf(`stat ${join(root, 'zzz.jsonl')}`)).toBeLessThan(listed);
  });
});
