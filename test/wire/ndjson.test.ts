import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_LINE_BYTES, LineSplitter, decodeUtf8Line } from '../../src/wire/ndjson.js';
import type { SplitLine } from '../../src/wire/ndjson.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/** A split line as something `toEqual` can compare with a literal. */
function show(item: SplitLine | undefined): string | { oversized: number } | undefined {
  if (item === undefined) return undefined;
  if (item.kind === 'oversized') return { oversized: item.length };
  return Buffer.from(item.bytes).toString('latin1');
}

describe('LineSplitter', () => {
  it('delivers each complete line without its newline and keeps the rest for later', () => {
    const splitter = new LineSplitter();
    expect(splitter.push(bytes('one\ntwo\nthr')).map(show)).toEqual(['one', 'two']);
    expect(splitter.push(bytes('ee\n')).map(show)).toEqual(['three']);
    expect(splitter.end()).toBeUndefined();
  });

  it('delivers a line split over three chunks once, whole', () => {
    const splitter = new LineSplitter();
    expect(splitter.push(bytes('{"a"'))).toEqual([]);
    expect(splitter.push(bytes(':'))).toEqual([]);
    expect(splitter.push(bytes('1}\n{'))).toHaveLength(1);
    expect(show(splitter.end())).toBe('{');
  });

  it('delivers empty lines as empty lines', () => {
    const splitter = new LineSplitter();
    expect(splitter.push(bytes('\n\na\n\n')).map(show)).toEqual(['', '', 'a', '']);
  });

  it('strips one trailing carriage return but keeps inner ones', () => {
    const splitter = new LineSplitter();
    expect(splitter.push(bytes('a\r\nb\rc\r\r\n')).map(show)).toEqual(['a', 'b\rc\r']);
  });

  it('strips a carriage return that arrived in the chunk before its newline', () => {
    const splitter = new LineSplitter();
    expect(splitter.push(bytes('line\r'))).toEqual([]);
    expect(splitter.push(bytes('\n')).map(show)).toEqual(['line']);
  });

  it('keeps carriage returns when told not to strip them', () => {
    const splitter = new LineSplitter({ stripCarriageReturn: false });
    expect(splitter.push(bytes('a\r\nb\n')).map(show)).toEqual(['a\r', 'b']);
  });

  it('returns the unterminated tail from end and then starts afresh', () => {
    const splitter = new LineSplitter();
    splitter.push(bytes('done\npartial'));
    expect(show(splitter.end())).toBe('partial');
    expect(splitter.end()).toBeUndefined();
    expect(splitter.push(bytes('next\n')).map(show)).toEqual(['next']);
  });

  it('reports a line longer than maxLineBytes by its length and resynchronizes at the next newline', () => {
    const splitter = new LineSplitter({ maxLineBytes: 4 });
    expect(splitter.push(bytes('abcd\nabcdefgh\nok\n')).map(show)).toEqual(['abcd', { oversized: 8 }, 'ok']);
  });

  it('never buffers more than maxLineBytes of an oversized line spread over many chunks', () => {
    const splitter = new LineSplitter({ maxLineBytes: 10 });
    const seen: number[] = [];
    for (let i = 0; i < 100; i += 1) {
      expect(splitter.push(bytes('xxxxxxx'))).toEqual([]);
      seen.push(splitter.bufferedBytes);
    }
    expect(Math.max(...seen)).toBe(7);
    expect(splitter.push(bytes('yy\nshort\n')).map(show)).toEqual([{ oversized: 702 }, 'short']);
    expect(splitter.bufferedBytes).toBe(0);
  });

  it('reports an oversized unterminated tail from end', () => {
    const splitter = new LineSplitter({ maxLineBytes: 3 });
    splitter.push(bytes('ok\ntoo long'));
    expect(show(splitter.end())).toEqual({ oversized: 8 });
  });

  it('counts a carriage return toward the line limit', () => {
    const splitter = new LineSplitter({ maxLineBytes: 2 });
    expect(splitter.push(bytes('ab\nab\r\n')).map(show)).toEqual(['ab', { oversized: 3 }]);
  });

  it('does not keep a reference to the caller chunk for an unfinished line', () => {
    const splitter = new LineSplitter();
    const chunk = Buffer.from('abc');
    splitter.push(chunk);
    chunk.fill(0x7a);
    expect(splitter.push(bytes('d\n')).map(show)).toEqual(['abcd']);
  });

  it('leaves the caller chunk unchanged', () => {
    const chunk = bytes('a\r\nb\r\n');
    new LineSplitter().push(chunk);
    expect(Array.from(chunk)).toEqual([0x61, 0x0d, 0x0a, 0x62, 0x0d, 0x0a]);
  });

  it('uses a 16 MiB line limit by default', () => {
    expect(DEFAULT_MAX_LINE_BYTES).toBe(16_777_216);
  });

  it('rejects a negative or fractional maxLineBytes', () => {
    expect(() => new LineSplitter({ maxLineBytes: -1 })).toThrow(RangeError);
    expect(() => new LineSplitter({ maxLineBytes: 1.5 })).toThrow(RangeError);
  });
});

describe('decodeUtf8Line', () => {
  it('decodes well-formed UTF-8', () => {
    expect(decodeUtf8Line(bytes('{"t":"héllo €"}'))).toEqual({ ok: true, text: '{"t":"héllo €"}' });
  });

  it('reports an invalid byte instead of replacing it', () => {
    expect(decodeUtf8Line(Uint8Array.of(0x7b, 0xff, 0x7d))).toEqual({ ok: false });
  });

  it('reports a multi-byte sequence cut short', () => {
    expect(decodeUtf8Line(Uint8Array.of(0x61, 0xe2, 0x82))).toEqual({ ok: false });
  });

  it('drops a leading byte order mark', () => {
    expect(decodeUtf8Line(Uint8Array.of(0xef, 0xbb, 0xbf, 0x7b, 0x7d))).toEqual({ ok: true, text: '{}' });
  });
});
