/**
 * Any NDJSON input, plain or zstd frames, as numbered lines (`readLines`,
 * `readLineBatches`): `\r\n` ends a line too, a last line without its newline
 * is kept when it is whole JSON and a torn tail otherwise, an oversized line
 * is a problem that keeps its number, corrupt zstd and a failing source end
 * the reading with a problem. Never throws.
 */
import { zstdCompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { readLineBatches, readLines, type InputLine } from '../../src/wire/input-lines.js';

async function* chunks(...parts: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield typeof part === 'string' ? Buffer.from(part) : part;
}

/** Lines as `n:text`, problems as `n:!code`. */
async function collect(source: AsyncIterable<Uint8Array>, maxLineBytes?: number): Promise<string[]> {
  const out: string[] = [];
  const options = maxLineBytes !== undefined ? { maxLineBytes } : {};
  for await (const item of readLines(source, options)) out.push(describeLine(item));
  return out;
}

function describeLine(item: InputLine): string {
  return item.kind === 'line'
    ? `${item.line}:${Buffer.from(item.bytes).toString('utf8')}`
    : `${item.line}:!${item.code}`;
}

describe('readLines', () => {
  it('numbers lines across chunk boundaries and drops a trailing \\r', async () => {
    expect(await collect(chunks('{"a":1}\r\n{"b"', ':2}\n', '\n{"c":3}\n'))).toEqual([
      '1:{"a":1}',
      '2:{"b":2}',
      '3:',
      '4:{"c":3}',
    ]);
  });

  it('keeps a last line without its newline when it is whole JSON, and calls it a torn tail otherwise', async () => {
    expect(await collect(chunks('{"a":1}\n{"b":2}'))).toEqual(['1:{"a":1}', '2:{"b":2}']);
    expect(await collect(chunks('{"a":1}\n{"b":'))).toEqual(['1:{"a":1}', '2:!torn-tail']);
  });

  it('reports a line over the bound as oversized, keeping the numbers of the lines after it', async () => {
    expect(await collect(chunks(`{"x":"${'y'.repeat(100)}"}\n{"a":1}\n`), 32)).toEqual([
      '1:!oversized-line',
      '2:{"a":1}',
    ]);
  });

  it('reads concatenated zstd frames like plain text, and a frame cut short as a torn tail', async () => {
    const frames = Buffer.concat([zstdCompressSync('{"a":1}\n'), zstdCompressSync('{"b":2}\n')]);
    expect(await collect(chunks(frames.subarray(0, 5), frames.subarray(5)))).toEqual(['1:{"a":1}', '2:{"b":2}']);
    const cut = zstdCompressSync(Buffer.from('{"a":1}\n'.repeat(50)));
    const lines = await collect(
      chunks(Buffer.concat([zstdCompressSync('{"z":0}\n'), cut.subarray(0, cut.length - 4)])),
    );
    expect(lines[0]).toBe('1:{"z":0}');
    expect(lines.at(-1)).toMatch(/:!torn-tail$/);
  });

  it('ends with corrupt-zstd on data after the magic bytes that is not zstd', async () => {
    const magic = Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd);
    const lines = await collect(chunks(Buffer.concat([magic, Buffer.from('garbage that is not a frame')])));
    expect(lines.at(-1)).toMatch(/:!corrupt-zstd$/);
  });

  it('turns a source that throws into an unreadable problem at line 0, after the lines read before it', async () => {
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('{"a":1}\n');
      throw new Error('EIO: i/o error');
    }
    const items: InputLine[] = [];
    for await (const item of readLines(failing())) items.push(item);
    expect(items.map(describeLine)).toEqual(['1:{"a":1}', '0:!unreadable']);
    const last = items.at(-1);
    expect(last?.kind === 'problem' && last.message).toBe('reading stopped: EIO: i/o error');
  });
});

describe('readLineBatches', () => {
  it('gives the same lines in batches', async () => {
    const batches: InputLine[][] = [];
    for await (const batch of readLineBatches(chunks('{"a":1}\n{"b":2}\n', '{"c":3}\n'))) batches.push([...batch]);
    expect(batches.flat().map(describeLine)).toEqual(['1:{"a":1}', '2:{"b":2}', '3:{"c":3}']);
  });
});
