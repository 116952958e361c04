/** The watcher's private folder (`ensurePrivateFolder`): made or closed to 0700, never through a link. */
import { chmodSync, lstatSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensurePrivateFolder } from '../../src/hooks/private-folder.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'private-folder-'));
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
