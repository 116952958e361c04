/**
 * The checks of an output path before a command starts (`checkOutputDirectory`,
 * `checkOutputFile`): `undefined` for a usable path, else why not in words;
 * a missing directory is created, an existing file is appended to, never
 * truncated.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkOutputDirectory, checkOutputFile } from '../../src/cli/output-paths.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'output-paths-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('checkOutputDirectory', () => {
  it('accepts an existing directory and creates a missing one with its parents', async () => {
    expect(await checkOutputDirectory(root)).toBeUndefined();
    const deep = join(root, 'a', 'b', 'out');
    expect(await checkOutputDirectory(deep)).toBeUndefined();
    expect(statSync(deep).isDirectory()).toBe(true);
  });

  it('refuses a regular file, and a path under one', async () => {
    const file = join(root, 'file');
    writeFileSync(file, 'x');
    expect(await checkOutputDirectory(file)).toBe('it exists and is not a directory');
    expect(await checkOutputDirectory(join(file, 'out'))).toMatch(/^cannot use it: .*ENOTDIR/);
  });
});

describe('checkOutputFile', () => {
  it('creates a new file empty in an existing directory', async () => {
    const path = join(root, 'capture.ndjson');
    expect(await checkOutputFile(path)).toBeUndefined();
    expect(readFileSync(path, 'utf8')).toBe('');
  });

  it('keeps what an existing file holds', async () => {
    const path = join(root, 'capture.ndjson');
    writeFileSync(path, 'kept\n');
    expect(await checkOutputFile(path)).toBeUndefined();
    expect(readFileSync(path, 'utf8')).toBe('kept\n');
  });

  it('refuses a directory, and a file whose directory is missing or is a file', async () => {
    mkdirSync(join(root, 'dir'));
    expect(await checkOutputFile(join(root, 'dir'))).toBe('it exists and is not a regular file');
    expect(await checkOutputFile(join(root, 'missing', 'f'))).toMatch(/^its directory cannot be used: .*ENOENT/);
    writeFileSync(join(root, 'plain'), '');
    expect(await checkOutputFile(join(root, 'plain', 'f'))).toMatch(/^cannot use it: .*ENOTDIR/);
  });
});
