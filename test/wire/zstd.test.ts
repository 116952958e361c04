/**
 * `zstdInflater`, Node's libzstd behind one asynchronous step: frames written
 * whole or in pieces give back their bytes; data libzstd refuses ends the
 * stream with its reason and no further output; a frame whose window
 * exceeds the bound is refused before it is decoded (decision 0062).
 */
import { constants, zstdCompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { zstdInflater } from '../../src/wire/zstd.js';

const text = Buffer.from('{"type":"turn/start","data":{"turn":0}}\n'.repeat(200));

describe('zstdInflater', () => {
  it('gives back the bytes of a frame written whole, or in pieces', async () => {
    const frame = zstdCompressSync(text);
    const whole = zstdInflater(1 << 20);
    const step = await whole.write(frame);
    expect(step.failure).toBeUndefined();
    expect(Buffer.concat(step.output)).toEqual(text);
    whole.close();

    const pieces = zstdInflater(1 << 20);
    const out: Buffer[] = [];
    for (let at = 0; at < frame.length; at += 7) out.push(...(await pieces.write(frame.subarray(at, at + 7))).output);
    expect(Buffer.concat(out)).toEqual(text);
    pieces.close();
  });

  it("ends with libzstd's reason on data that is not zstd, and gives nothing after", async () => {
    const inflater = zstdInflater(1 << 20);
    const step = await inflater.write(Buffer.from('not a zstd frame at all'));
    expect(step.failure).toMatch(/^libzstd: /);
    expect(await inflater.write(zstdCompressSync(text))).toEqual({ output: [] });
  });

  it('refuses a frame whose window is larger than the bound', async () => {
    // 4 MiB of varied bytes with a 4 MiB window: the frame declares the window, too large for a 1 MiB bound.
    const big = Buffer.alloc(4 << 20);
    for (let i = 0; i < big.length; i += 4) big.writeUInt32LE((i * 2654435761) >>> 0, i);
    const frame = zstdCompressSync(big, { params: { [constants.ZSTD_c_windowLog]: 22 } });
    const inflater = zstdInflater(1 << 20);
    const step = await inflater.write(frame);
    expect(step.failure).toMatch(/^libzstd: .*too much memory/i);
    const roomy = zstdInflater(4 << 20);
    const decoded = await roomy.write(frame);
    expect(decoded.failure).toBeUndefined();
    expect(Buffer.concat(decoded.output).length).toBe(big.length);
    roomy.close();
  });

  it('returns no output once closed, and closes twice without harm', async () => {
    const inflater = zstdInflater(1 << 20);
    inflater.close();
    inflater.close();
    expect(await inflater.write(zstdCompressSync(text))).toEqual({ output: [] });
  });
});
