/**
 * `cli/code-cache.ts` and the cache directory policy of
 * `cli/commands/observation-loader.ts`, in process, on a small CommonJS file
 * of the test's own: a cache is written after a run and accepted by the next
 * load, names differ by V8 flags, and a cache is never taken from a place
 * that is not private.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheFileFor, loadWithCodeCache, writeCacheFile } from '../../src/cli/code-cache.js';
import { codeCacheDir, unsafeCacheDir } from '../../src/cli/commands/observation-loader.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'code-cache-'));

/** A CommonJS module with a function compiled only when called (lazily), and one `require` of a built-in. */
const MODULE = `
const { basename } = require('node:path');
exports.name = basename(__filename);
exports.sum = function sum(values) { let total = 0; for (const v of values) total += v; return total; };
module.exports.label = 'bundle';
`;

function bundleIn(dir: string): string {
  const file = join(dir, 'bundle-ABC123.cjs');
  writeFileSync(file, MODULE);
  return file;
}

interface Exports {
  name: string;
  sum(values: number[]): number;
  label: string;
}

describe('loadWithCodeCache', () => {
  it('runs the bundle as a CommonJS module, writes its cache after the run, and the next load accepts it', () => {
    const dir = tmp();
    const bundle = bundleIn(dir);
    const cacheFile = join(dir, 'cache', 'bundle.v8cache');
    const first = loadWithCodeCache<Exports>(bundle, cacheFile);
    expect(first.status).toBe('absent');
    expect(first.detail).toBe('no cache file yet');
    expect(first.exports.name).toBe('bundle-ABC123.cjs');
    expect(first.exports.label).toBe('bundle');
    expect(first.exports.sum([1, 2, 3])).toBe(6);
    expect(first.persist()).toMatch(new RegExp(`^code cache written \\(\\d+ bytes\\) to ${cacheFile}$`));
    expect(first.persist()).toBe('code cache already written');
    expect(readFileSync(cacheFile).subarray(0, 8).toString('latin1')).toBe('SOTCC001');

    const second = loadWithCodeCache<Exports>(bundle, cacheFile);
    expect(second.status).toBe('accepted');
    expect(second.detail).toBeUndefined();
    expect(second.exports.sum([4, 5])).toBe(9);
    expect(second.persist()).toBe('code cache unchanged');
  });

  it('reports a file that is not a cache, and one whose payload was altered, as absent with the reason', () => {
    const dir = tmp();
    const bundle = bundleIn(dir);
    const cacheFile = join(dir, 'bundle.v8cache');
    loadWithCodeCache<Exports>(bundle, cacheFile).persist();
    const good = readFileSync(cacheFile);
    const altered = Buffer.from(good);
    altered[altered.length - 1] = (altered[altered.length - 1] as number) ^ 1;
    writeFileSync(cacheFile, altered);
    expect(loadWithCodeCache<Exports>(bundle, cacheFile).detail).toBe('cache file is damaged (digest mismatch)');
    writeFileSync(cacheFile, 'SOTCC001');
    expect(loadWithCodeCache<Exports>(bundle, cacheFile).detail).toBe('cache file is not a code cache of this format');
  });

  it('says V8 refused a well-framed cache made for another source, and replaces it', () => {
    const dir = tmp();
    const bundle = bundleIn(dir);
    const other = join(dir, 'other.cjs');
    writeFileSync(other, 'exports.other = 1;');
    const cacheFile = join(dir, 'bundle.v8cache');
    loadWithCodeCache<{ other: number }>(other, cacheFile).persist();
    const refused = loadWithCodeCache<Exports>(bundle, cacheFile);
    expect(refused.status).toBe('rejected');
    expect(refused.exports.sum([2, 2])).toBe(4);
    expect(refused.persist()).toMatch(/^code cache written/);
    expect(loadWithCodeCache<Exports>(bundle, cacheFile).status).toBe('accepted');
  });

  it('throws what the bundle throws, not anything about the cache', () => {
    const dir = tmp();
    const bundle = join(dir, 'broken.cjs');
    writeFileSync(bundle, "throw new Error('bundle failed');");
    expect(() => loadWithCodeCache(bundle, join(dir, 'x.v8cache'))).toThrow('bundle failed');
  });
});

describe('cache files', () => {
  it('are named after the bundle, the Node version, the architecture and the V8 flags', () => {
    const plain = cacheFileFor('/c', 'observation-XYZ.cjs', []);
    expect(plain).toMatch(new RegExp(`^/c/observation-XYZ\\.cjs-${process.version.replace(/\./g, '\\.')}-${process.arch}-[0-9a-f]{12}\\.v8cache$`));
    expect(cacheFileFor('/c', 'observation-XYZ.cjs', [])).toBe(plain);
    expect(cacheFileFor('/c', 'observation-XYZ.cjs', ['--max-old-space-size=100'])).not.toBe(plain);
  });

  it('are replaced whole, and a write that fails says why and leaves no temporary file', () => {
    const dir = tmp();
    const file = join(dir, 'a.v8cache');
    expect(writeCacheFile(file, Buffer.from('first'))).toBe(`code cache written (5 bytes) to ${file}`);
    expect(writeCacheFile(file, Buffer.from('second'))).toBe(`code cache written (6 bytes) to ${file}`);
    expect(readdirSync(dir)).toEqual(['a.v8cache']);
    mkdirSync(join(dir, 'occupied.v8cache'));
    expect(writeCacheFile(join(dir, 'occupied.v8cache'), Buffer.from('x'))).toMatch(/^code cache not written to .*occupied\.v8cache: /);
    expect(readdirSync(dir).sort()).toEqual(['a.v8cache', 'occupied.v8cache']);
  });
});

describe('the cache directory', () => {
  it('is SUBAGENT_OTEL_CODE_CACHE, off for off-words, else under XDG_CACHE_HOME or the home directory', () => {
    expect(codeCacheDir({ SUBAGENT_OTEL_CODE_CACHE: 'off' })).toBe(false);
    expect(codeCacheDir({ SUBAGENT_OTEL_CODE_CACHE: ' OFF ' })).toBe(false);
    expect(codeCacheDir({ SUBAGENT_OTEL_CODE_CACHE: '0' })).toBe(false);
    expect(codeCacheDir({ SUBAGENT_OTEL_CODE_CACHE: '/var/cache/x' })).toBe('/var/cache/x');
    expect(codeCacheDir({ SUBAGENT_OTEL_CODE_CACHE: '', XDG_CACHE_HOME: '/xdg' })).toBe('/xdg/subagent-otel');
    expect(codeCacheDir({ XDG_CACHE_HOME: '/xdg' })).toBe('/xdg/subagent-otel');
    // A relative XDG_CACHE_HOME is invalid by the XDG specification: ignored.
    expect(codeCacheDir({ XDG_CACHE_HOME: 'relative' })).toMatch(/\/\.cache\/subagent-otel$/);
  });

  it('is used only when missing or private to this user', () => {
    const dir = tmp();
    expect(unsafeCacheDir(join(dir, 'missing'))).toBeUndefined();
    mkdirSync(join(dir, 'private'), { mode: 0o700 });
    expect(unsafeCacheDir(join(dir, 'private'))).toBeUndefined();
    mkdirSync(join(dir, 'shared'));
    chmodSync(join(dir, 'shared'), 0o775);
    expect(unsafeCacheDir(join(dir, 'shared'))).toBe(`cache directory ${join(dir, 'shared')} is writable by others`);
    writeFileSync(join(dir, 'file'), '');
    expect(unsafeCacheDir(join(dir, 'file'))).toBe(`cache directory ${join(dir, 'file')} is not a directory`);
  });
});
