/**
 * The guarded zstd decoder (`wire/zstd-decoder`) and the byte reader on top
 * of it: valid frames decode byte for byte; a frame fzstd loops on ends in a
 * `stalled` failure within the stall timeout, naming the block; the thread
 * that looped is terminated without harming other streams; threads are
 * started only for zstd input and reused by later streams.
 */
import { describe, expect, it } from 'vitest';
import { compressZstdFrame, skippableZstdFrame } from '../../src/fixtures/durable-log-writer.js';
import { ByteLineReader, type ByteLineItem } from '../../src/wire/byte-lines.js';
import { DEFAULT_ZSTD_STALL_TIMEOUT_MS, ZstdDecoder, zstdThreadStats, type ZstdPushResult } from '../../src/wire/zstd-decoder.js';
import { DurableLogDecoder } from '../../src/wire/durable-log.js';
import { FUZZ_LOOPING_INPUTS, LOOPING_BLOCK_OFFSET, loopingZstd } from '../helpers/looping-zstd.js';

/** Short enough for a test, long enough for a loaded 2-core machine to decode a small valid block. */
const STALL_MS = 400;

const TEXT = Array.from({ length: 300 }, (_, i) => `{"seq":${i},"text":"line ${i} ${'abc'.repeat(i % 17)}"}\n`).join('');

function concat(parts: readonly Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

/** Pushes `bytes` in slices of `size`, then ends. @returns the output and the first failure. */
function decodeAll(decoder: ZstdDecoder, bytes: Uint8Array, size: number): { output: string; failure: ZstdPushResult['failure'] } {
  const blocks: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length; offset += size) {
    const result = decoder.push(bytes.subarray(offset, offset + size));
    blocks.push(...result.blocks);
    if (result.failure !== undefined) return { output: Buffer.concat(blocks).toString('utf8'), failure: result.failure };
  }
  const last = decoder.end();
  blocks.push(...last.blocks);
  return { output: Buffer.concat(blocks).toString('utf8'), failure: last.failure };
}

function lines(items: readonly ByteLineItem[]): string[] {
  return items.flatMap((item) => (item.kind === 'line' ? [Buffer.from(item.bytes).toString('utf8')] : []));
}

describe('ZstdDecoder', () => {
  it('decodes concatenated and skippable frames exactly, whatever the chunking', async () => {
    const half = TEXT.length / 2;
    const bytes = concat([
      skippableZstdFrame(Uint8Array.of(1, 2, 3), 0),
      await compressZstdFrame(TEXT.slice(0, half)),
      skippableZstdFrame(new TextEncoder().encode('not data\n'), 9),
      await compressZstdFrame(TEXT.slice(half)),
    ]);
    for (const size of [1, 7, 4096, bytes.length]) {
      const { output, failure } = decodeAll(new ZstdDecoder(), bytes, size);
      expect(failure).toBeUndefined();
      expect(output).toBe(TEXT);
    }
  });

  it('leaves the caller\'s Buffer intact: slices of one file-read Buffer decode whole', async () => {
    const frames = Buffer.concat([await compressZstdFrame(TEXT.slice(0, 100)), await compressZstdFrame(TEXT.slice(100))]);
    // Like a file read: one Buffer with its own memory (not Node's shared pool), pushed as subarrays.
    const pool = Buffer.alloc(frames.length + 12);
    pool.write('prefix', 0);
    frames.copy(pool, 6);
    pool.write('suffix', 6 + frames.length);
    const chunk = pool.subarray(6, 6 + frames.length);
    const decoder = new ZstdDecoder();
    const blocks: Uint8Array[] = [];
    for (let offset = 0; offset < chunk.length; offset += 50) blocks.push(...decoder.push(chunk.subarray(offset, offset + 50)).blocks);
    blocks.push(...decoder.end().blocks);
    expect(Buffer.concat(blocks).toString('utf8')).toBe(TEXT);
    expect(pool.subarray(0, 6).toString('utf8')).toBe('prefix');
    expect(pool.length).toBe(frames.length + 12);
  });

  it('decodes the same when pushes may be held back, and reports held bad bytes at the next push', async () => {
    const frame = await compressZstdFrame(TEXT);
    const decoder = new ZstdDecoder();
    const blocks: Uint8Array[] = [];
    for (let offset = 0; offset < frame.length; offset += 100) blocks.push(...decoder.push(frame.subarray(offset, offset + 100), { mayHold: true }).blocks);
    // Everything was held (under 160 KiB): the output comes with the end.
    expect(blocks).toEqual([]);
    blocks.push(...decoder.end().blocks);
    expect(Buffer.concat(blocks).toString('utf8')).toBe(TEXT);

    const bad = new ZstdDecoder();
    expect(bad.push(Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0x08, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), { mayHold: true })).toEqual({ blocks: [] });
    expect(bad.push(Uint8Array.of(1))).toEqual({ blocks: [] });
    expect(bad.flush()).toEqual({ blocks: [], failure: { kind: 'corrupt', message: 'invalid zstd data' } });
  });

  it('reports a frame cut short as torn when the stream ends', async () => {
    const frame = await compressZstdFrame(TEXT);
    const { failure } = decodeAll(new ZstdDecoder(), frame.subarray(0, frame.length - 3), 4096);
    expect(failure?.kind).toBe('torn');
  });

  it('reports undecodable data as corrupt with fzstd\'s reason', () => {
    const { failure } = decodeAll(new ZstdDecoder(), concat([Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd), new Uint8Array(40).fill(0xff)]), 4096);
    expect(failure).toEqual({ kind: 'corrupt', message: 'invalid zstd data' });
  });

  it('gives up a frame fzstd loops on after the stall timeout, and closes', () => {
    const decoder = new ZstdDecoder({ stallTimeoutMs: STALL_MS });
    // Decoding runs one step behind: the push hands the frame over, the flush waits for it.
    expect(decoder.push(loopingZstd())).toEqual({ blocks: [] });
    const started = performance.now();
    const result = decoder.flush();
    const elapsed = performance.now() - started;
    expect(result).toEqual({ blocks: [], failure: { kind: 'stalled', message: 'the zstd decoder made no progress for 0.4 s and was stopped' } });
    expect(elapsed).toBeGreaterThanOrEqual(STALL_MS);
    expect(decoder.isClosed).toBe(true);
    expect(decoder.push(Uint8Array.of(1, 2, 3))).toEqual({ blocks: [] });
  });

  it('leaves other streams whole when a looping one is stopped', async () => {
    const frame = await compressZstdFrame(TEXT);
    const survivor = new ZstdDecoder({ stallTimeoutMs: STALL_MS });
    const before = survivor.push(frame.subarray(0, 100));
    expect(before.failure).toBeUndefined();

    const looping = new ZstdDecoder({ stallTimeoutMs: STALL_MS });
    looping.push(loopingZstd());
    expect(looping.flush().failure?.kind).toBe('stalled');

    const after = survivor.push(frame.subarray(100));
    const last = survivor.end();
    expect(last.failure).toBeUndefined();
    expect(Buffer.concat([...before.blocks, ...after.blocks, ...last.blocks]).toString('utf8')).toBe(TEXT);

    // A stream started after the stop gets a working thread.
    expect(decodeAll(new ZstdDecoder(), frame, 512)).toEqual({ output: TEXT, failure: undefined });
  });

  it('closes within about a second while its thread loops, whatever the stall timeout', async () => {
    const decoder = new ZstdDecoder({ stallTimeoutMs: 60_000 });
    expect(decoder.push(loopingZstd())).toEqual({ blocks: [] });
    const started = performance.now();
    decoder.close();
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1_000);
    expect(elapsed).toBeLessThan(10_000);
    expect(decoder.isClosed).toBe(true);
    // The looping thread was terminated, not lent again: the next stream decodes.
    expect(decodeAll(new ZstdDecoder(), await compressZstdFrame(TEXT), 4096)).toEqual({ output: TEXT, failure: undefined });
  });

  it('reuses one thread for streams read one after another', async () => {
    const frame = await compressZstdFrame(TEXT);
    expect(decodeAll(new ZstdDecoder(), frame, 4096).output).toBe(TEXT);
    const { started } = zstdThreadStats();
    for (let i = 0; i < 5; i += 1) expect(decodeAll(new ZstdDecoder(), frame, 4096).output).toBe(TEXT);
    expect(zstdThreadStats().started).toBe(started);
    expect(zstdThreadStats().idle).toBeGreaterThanOrEqual(1);
  });

  it('refuses a stall timeout that is not a positive number', () => {
    expect(() => new ZstdDecoder({ stallTimeoutMs: 0 })).toThrow(RangeError);
    expect(() => new ZstdDecoder({ stallTimeoutMs: Number.NaN })).toThrow(RangeError);
    expect(DEFAULT_ZSTD_STALL_TIMEOUT_MS).toBe(10_000);
  });
});

describe('ByteLineReader on a frame fzstd loops on', () => {
  it('stops with corrupt-zstd naming the block, after the lines before it, for any chunking', async () => {
    const good = await compressZstdFrame('{"a":1}\n{"b":2}\n');
    const bytes = concat([good, loopingZstd()]);
    const expected = [
      { kind: 'line', text: '{"a":1}' },
      { kind: 'line', text: '{"b":2}' },
      {
        kind: 'corrupt-zstd',
        reason:
          `the zstd decoder made no progress for 0.4 s on the block at compressed byte ${good.length + LOOPING_BLOCK_OFFSET} and was stopped: ` +
          'the data is corrupt or made to decode slowly; check the file with `zstd -t`',
      },
    ];
    for (const size of [bytes.length, 64]) {
      const reader = new ByteLineReader({ zstdStallTimeoutMs: STALL_MS });
      const items: ByteLineItem[] = [];
      for (let offset = 0; offset < bytes.length && !reader.isStopped; offset += size) items.push(...reader.push(bytes.subarray(offset, offset + size)));
      items.push(...reader.end());
      expect(items.map((item) => (item.kind === 'line' ? { kind: 'line', text: Buffer.from(item.bytes).toString('utf8') } : item))).toEqual(expected);
    }
  });

  it('ends each input that used to hang the fuzz suite with a stall problem', () => {
    expect(FUZZ_LOOPING_INPUTS).toHaveLength(6);
    for (const input of FUZZ_LOOPING_INPUTS) {
      const decoder = new DurableLogDecoder({ zstdStallTimeoutMs: STALL_MS });
      const records = [...decoder.push(Buffer.from(input, 'base64')), ...decoder.end()];
      const last = records[records.length - 1];
      expect(last).toMatchObject({ kind: 'problem', code: 'corrupt-zstd' });
      expect(last?.kind === 'problem' ? last.message : '').toMatch(/made no progress for 0\.4 s on the block at compressed byte \d+ and was stopped/);
    }
  });

  it('starts no decoding thread for plain input', () => {
    const { started } = zstdThreadStats();
    const reader = new ByteLineReader();
    const items = [...reader.push(new TextEncoder().encode('{"plain":true}\nsecond\n')), ...reader.end()];
    expect(lines(items)).toEqual(['{"plain":true}', 'second']);
    expect(zstdThreadStats().started).toBe(started);
  });
});
