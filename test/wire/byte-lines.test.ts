/**
 * The one byte reader: the same items for any chunking, plain and zstd
 * alike; how an input ends (tail, torn frame, corrupt data, nothing); the
 * pending first line for sniffing; stopping.
 */
import { describe, expect, it } from 'vitest';
import { compressZstdFrame } from '../../src/fixtures/durable-log-writer.js';
import { ByteLineReader, type ByteLineItem } from '../../src/wire/byte-lines.js';

const text = (items: readonly ByteLineItem[]): unknown[] =>
  items.map((item) => {
    switch (item.kind) {
      case 'line':
        return ['line', Buffer.from(item.bytes).toString()];
      case 'tail':
        return [
          'tail',
          item.line.kind === 'line' ? Buffer.from(item.line.bytes).toString() : item.line.length,
          item.isTornFrame,
        ];
      case 'corrupt-zstd':
        return ['corrupt-zstd'];
      default:
        return [item.kind];
    }
  });

async function readAll(bytes: Uint8Array, chunk: number): Promise<unknown[]> {
  const reader = new ByteLineReader();
  const items: ByteLineItem[] = [];
  for (let offset = 0; offset < bytes.length; offset += chunk)
    items.push(...(await reader.push(bytes.subarray(offset, offset + chunk))));
  items.push(...(await reader.end()));
  return text(items);
}

describe('ByteLineReader', () => {
  it('gives the same lines for plain and zstd input, whatever the chunking', async () => {
    const plain = Buffer.from('one\r\ntwo\nthree');
    const zstd = Buffer.concat([await compressZstdFrame('one\r\ntwo\n'), await compressZstdFrame('three')]);
    const expected = [
      ['line', 'one'],
      ['line', 'two'],
      ['tail', 'three', false],
    ];
    for (const chunk of [1, 2, 3, 7, 4096]) {
      expect(await readAll(plain, chunk)).toEqual(expected);
      expect(await readAll(zstd, chunk)).toEqual(expected);
    }
  });

  it('tells how the input ended', async () => {
    const frame = await compressZstdFrame('a\nb\n');
    expect(await readAll(new Uint8Array(0), 1)).toEqual([['empty']]);
    expect(await readAll(await compressZstdFrame(''), 3)).toEqual([['empty']]);
    expect(await readAll(frame.subarray(0, frame.length - 2), 5)).toEqual([
      ['line', 'a'],
      ['line', 'b'],
      ['torn-frame'],
    ]);
    expect(await readAll(Buffer.concat([frame, Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xff, 0xff])]), 64)).toEqual([
      ['line', 'a'],
      ['line', 'b'],
      ['corrupt-zstd'],
    ]);
  });

  it('shows the unfinished first line for sniffing, and ignores everything once stopped', async () => {
    const reader = new ByteLineReader();
    expect(await reader.push(Buffer.from('{"type":"sess'))).toEqual([]);
    expect(reader.compression).toBe('plain');
    expect(Buffer.from(reader.pendingBytes()).toString()).toBe('{"type":"sess');
    expect(reader.bufferedBytes).toBe(13);
    reader.stop();
    expect(reader.isStopped).toBe(true);
    expect(await reader.push(Buffer.from('ion"}\n'))).toEqual([]);
    expect(await reader.end()).toEqual([]);
  });
});
