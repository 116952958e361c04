/**
 * Properties of LineSplitter:
 * - re-chunking the same bytes at arbitrary offsets yields the same lines and tail;
 * - the lines agree with a tiny reference model (split on `\n`, strip one `\r`,
 *   lines over the limit reported by length);
 * - without `\r` stripping and with no oversized line, lines joined with `\n`
 *   plus the tail reproduce the input exactly;
 * - the bytes held for an unfinished line never exceed maxLineBytes;
 * - `pushEach` (byte ranges) yields exactly the lines `push` yields, in order.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Buffer } from 'node:buffer';
import { LineSplitter } from '../../src/wire/ndjson.js';
import type { LineSplitterOptions, SplitLine } from '../../src/wire/ndjson.js';
import { chunked } from '../helpers/chunked.js';

type Seen = { line: number[] } | { oversized: number };

const see = (item: SplitLine): Seen =>
  item.kind === 'line' ? { line: Array.from(item.bytes) } : { oversized: item.length };

/** Bytes rich in newlines and carriage returns. */
const inputArb = fc
  .array(fc.oneof(fc.constantFrom(0x0a, 0x0d), fc.integer({ min: 0, max: 255 })), { maxLength: 200 })
  .map((values) => Uint8Array.from(values));

const cutsArb = fc.array(fc.nat(), { maxLength: 12 });

function split(chunks: readonly Uint8Array[], options: LineSplitterOptions): { lines: Seen[]; tail: Seen | undefined } {
  const splitter = new LineSplitter(options);
  const lines = chunks.flatMap((chunk) => splitter.push(chunk).map(see));
  const tail = splitter.end();
  return { lines, tail: tail === undefined ? undefined : see(tail) };
}

function splitEach(
  chunks: readonly Uint8Array[],
  options: LineSplitterOptions,
): { lines: Seen[]; tail: Seen | undefined } {
  const splitter = new LineSplitter(options);
  const lines: Seen[] = [];
  for (const chunk of chunks) {
    splitter.pushEach(Buffer.from(chunk), {
      line: (buffer, start, end) => lines.push({ line: Array.from(buffer.subarray(start, end)) }),
      oversized: (length) => lines.push({ oversized: length }),
    });
  }
  const tail = splitter.end();
  return { lines, tail: tail === undefined ? undefined : see(tail) };
}

/** The reference model: the whole input at once, with array operations only. */
function model(input: Uint8Array, max: number, strip: boolean): { lines: Seen[]; tail: Seen | undefined } {
  const segments: number[][] = [[]];
  for (const byte of input) {
    if (byte === 0x0a) segments.push([]);
    else segments[segments.length - 1]!.push(byte);
  }
  const last = segments.pop()!;
  const render = (segment: number[]): Seen => {
    if (segment.length > max) return { oversized: segment.length };
    return { line: strip && segment[segment.length - 1] === 0x0d ? segment.slice(0, -1) : segment };
  };
  return { lines: segments.map(render), tail: last.length === 0 ? undefined : render(last) };
}

describe('LineSplitter properties', () => {
  it('yields the same lines however the bytes are chunked, matching the reference model', () => {
    fc.assert(
      fc.property(inputArb, cutsArb, fc.integer({ min: 0, max: 24 }), fc.boolean(), (input, cuts, max, strip) => {
        const options = { maxLineBytes: max, stripCarriageReturn: strip };
        const expected = model(input, max, strip);
        expect(split(chunked(input, cuts), options)).toEqual(expected);
        expect(split([input], options)).toEqual(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('hands pushEach visitors exactly the lines push returns, however the bytes are chunked', () => {
    fc.assert(
      fc.property(inputArb, cutsArb, fc.integer({ min: 0, max: 24 }), fc.boolean(), (input, cuts, max, strip) => {
        const options = { maxLineBytes: max, stripCarriageReturn: strip };
        const chunks = chunked(input, cuts);
        expect(splitEach(chunks, options)).toEqual(split(chunks, options));
        expect(splitEach(chunks, options)).toEqual(model(input, max, strip));
      }),
      { numRuns: 3000 },
    );
  });

  it('reproduces the input from lines and separators when no line is oversized', () => {
    fc.assert(
      fc.property(inputArb, cutsArb, (input, cuts) => {
        const { lines, tail } = split(chunked(input, cuts), { stripCarriageReturn: false });
        const rebuilt: number[] = [];
        for (const item of lines) {
          if (!('line' in item)) throw new Error('no line can be oversized under the default limit');
          rebuilt.push(...item.line, 0x0a);
        }
        if (tail !== undefined && 'line' in tail) rebuilt.push(...tail.line);
        expect(rebuilt).toEqual(Array.from(input));
        expect(tail === undefined).toBe(input.length === 0 || input[input.length - 1] === 0x0a);
      }),
      { numRuns: 3000 },
    );
  });

  it('never holds more than maxLineBytes for an unfinished line', () => {
    fc.assert(
      fc.property(inputArb, cutsArb, fc.integer({ min: 0, max: 16 }), (input, cuts, max) => {
        const splitter = new LineSplitter({ maxLineBytes: max });
        for (const chunk of chunked(input, cuts)) {
          splitter.push(chunk);
          expect(splitter.bufferedBytes).toBeLessThanOrEqual(max);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
