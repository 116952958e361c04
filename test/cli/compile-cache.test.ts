/**
 * The compile cache directory policy of `cli/compile-cache.ts`: where the
 * cache goes, when it is off, and which directories are never used.
 */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeCacheDir, unsafeCacheDir } from '../../src/cli/compile-cache.js';

describe('the compile cache directory', () => {
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
    const dir = mkdtempSync(join(tmpdir(), 'compile-cache-'));
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
