/**
 * `fileChunks`: a file's bytes in order, the whole file or only as far as a
 * given size (watch reads a growing file up to the size it listed).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileChunks } from '../../src/wire/file-chunks.js';

const dir = mkdtempSync(join(tmpdir(), 'file-chunks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function collect(path: string, limit?: number): Promise<{ text: string; reported: number }> {
  const parts: Uint8Array[] = [];
  let reported = 0;
  for await (const chunk of fileChunks(path, (bytes) => (reported += bytes), limit)) parts.push(chunk);
  return { text: Buffer.concat(parts).toString('latin1'), reported };
}

describe('fileChunks', () => {
  // 200 KiB: more than three chunks, so a limit can fall inside a later one.
  const body = Array.from({ length: 200 * 1024 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
  const path = join(dir, 'body.txt');
  writeFileSync(path, body, 'latin1');

  it('gives the whole file, every byte reported', async () => {
    expect(await collect(path)).toEqual({ text: body, reported: body.length });
  });

  it('gives only the first `limit` bytes, also when the limit falls inside a later chunk', async () => {
    for (const limit of [1, 65_535, 65_536, 65_537, 150_001]) {
      expect(await collect(path, limit)).toEqual({ text: body.slice(0, limit), reported: limit });
    }
  });

  it('gives nothing for a limit of 0 and the whole file for a limit past its end', async () => {
    expect(await collect(path, 0)).toEqual({ text: '', reported: 0 });
    expect(await collect(path, body.length + 10)).toEqual({ text: body, reported: body.length });
  });

  it('throws from the iteration for a missing file', async () => {
    await expect(collect(join(dir, 'missing.txt'))).rejects.toThrow(/ENOENT/);
  });
});
