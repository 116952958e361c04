/**
 * `makeDirectory`, `mkdir -p` one level at a time: creates the missing
 * parents, accepts a directory that exists, and rejects (never spins) where
 * a level cannot be made: a file in the way, or `/proc`, where Node's
 * recursive `mkdir` never settles.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeDirectory } from '../../src/telemetry/make-directory.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'make-directory-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('makeDirectory', () => {
  it('creates a directory and its missing parents, and accepts one that exists', async () => {
    const deep = join(root, 'a', 'b', 'c');
    await makeDirectory(deep);
    expect(statSync(deep).isDirectory()).toBe(true);
    mkdirSync(join(root, 'there'));
    await expect(makeDirectory(join(root, 'there'))).resolves.toBeUndefined();
  });

  it('rejects with ENOTDIR when a file is in the way, at the path or above it', async () => {
    writeFileSync(join(root, 'file'), 'x');
    await expect(makeDirectory(join(root, 'file'))).rejects.toMatchObject({ code: 'ENOTDIR' });
    await expect(makeDirectory(join(root, 'file', 'below'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('rejects under /proc (Linux), where mkdir answers ENOENT for a parent that exists', async () => {
    await expect(makeDirectory('/proc/self/no-such-dir/out')).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
