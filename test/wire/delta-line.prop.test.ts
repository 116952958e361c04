/**
 * Properties of the delta-line fast path (`parseDeltaLine`) against the full
 * parse (`decodeUtf8Line` + `parseFrame`), the reference it must agree with:
 * - a delta line in the runtime's layout, with any session id, numbers and
 *   text (escapes, non-ASCII, control characters, lone surrogates), is
 *   recognized, and its frame equals the full parse's;
 * - any line at all (valid delta lines with one byte changed, inserted or
 *   removed, other frames, random bytes): when the fast path recognizes it,
 *   the full parse accepts it and yields the same frame; it never accepts a
 *   line the full parse rejects;
 * - the frame does not depend on where in a larger buffer the line lies;
 * - raw text bytes of every kind (quotes, backslashes and escapes cut short
 *   or malformed, control bytes, DEL, bytes that are not UTF-8, valid
 *   multi-byte sequences), at every alignment of the four-bytes-at-a-time
 *   scan: the reader accepts exactly the lines the full parse accepts as
 *   this layout, and its fields and `text()` are the full parse's.
 */
import { Buffer } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeltaLineReader, parseDeltaLine } from '../../src/wire/delta-line.js';
import { parseFrame } from '../../src/wire/jsonrpc.js';
import { decodeUtf8Line } from '../../src/wire/ndjson.js';

/** The full parse: what the frame tap did for every line before the fast path. */
function fullParse(bytes: Uint8Array): unknown {
  const decoded = decodeUtf8Line(bytes);
  if (!decoded.ok) return { rejected: 'not-utf8' };
  const parsed = parseFrame(decoded.text);
  return parsed.ok ? parsed.frame : { rejected: parsed.error.code };
}

/** A delta notification line as the runtime writes it (JSON.stringify, the runtime's key order). */
function deltaLine(d: {
  sessionId: string;
  seq: number;
  time: number;
  turn: number;
  step: number;
  type: string;
  index: number;
  text: string;
}): Buffer {
  const event = {
    type: 'assistant/chunk',
    seq: d.seq,
    time: d.time,
    data: { turn: d.turn, step: d.step, chunk: { type: d.type, index: d.index, text: d.text } },
  };
  return Buffer.from(
    JSON.stringify({ jsonrpc: '2.0', method: 'session.event', params: { sessionId: d.sessionId, event } }),
    'utf8',
  );
}

const natArb = fc.oneof(
  fc.nat({ max: 20 }),
  fc.nat(),
  fc.constant(1_764_400_000_000),
  fc.constant(999_999_999_999_999),
);
const textArb = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }), // lone surrogates included: escaped by JSON.stringify
  fc.constantFrom(
    '',
    ' plain words',
    'quote " inside',
    'back\\slash',
    'tab\tand\nnewline',
    '\u0000\u001f',
    'é中文→…',
    '\ud83d\ude00',
  ),
);
const deltaArb = fc.record({
  sessionId: fc.oneof(fc.constantFrom('session-1', 's', ''), fc.string(), fc.string({ unit: 'grapheme-ascii' })),
  seq: natArb,
  time: natArb,
  turn: natArb,
  step: natArb,
  type: fc.constantFrom('text-delta', 'reasoning-delta'),
  index: natArb,
  text: textArb,
});

/** Variations of a valid line: one byte replaced, inserted or removed. */
const mutationArb = fc.record({
  at: fc.nat(),
  byte: fc.oneof(
    fc.constantFrom(0x22, 0x5c, 0x7d, 0x20, 0x2d, 0x2e, 0x30, 0x31, 0x65, 0x00, 0x0a, 0x80, 0xff, 0xc3),
    fc.integer({ min: 0, max: 255 }),
  ),
  kind: fc.constantFrom('replace', 'insert', 'remove'),
});

function mutate(line: Buffer, m: { at: number; byte: number; kind: string }): Buffer {
  const at = m.at % (line.length + (m.kind === 'insert' ? 1 : 0));
  const bytes = [...line];
  if (m.kind === 'replace') bytes[at] = m.byte;
  else if (m.kind === 'insert') bytes.splice(at, 0, m.byte);
  else bytes.splice(at, 1);
  return Buffer.from(bytes);
}

describe('parseDeltaLine against the full parse', () => {
  it('recognizes every delta line the runtime writes and yields the full parse frame', () =>
    fc.assert(
      fc.property(deltaArb, (d) => {
        const line = deltaLine(d);
        const frame = parseDeltaLine(line);
        // Session ids that need escapes go the full way; everything else is recognized.
        if (/^[\x20-\x7e]*$/.test(d.sessionId) && !/["\\]/.test(d.sessionId)) expect(frame).toBeDefined();
        if (frame !== undefined) expect(frame).toEqual(fullParse(line));
      }),
      { numRuns: 2000 },
    ));

  it('never accepts a changed line the full parse rejects, and agrees on the ones it accepts', () =>
    fc.assert(
      fc.property(deltaArb, fc.array(mutationArb, { minLength: 1, maxLength: 3 }), (d, mutations) => {
        let line = deltaLine(d);
        for (const m of mutations) line = mutate(line, m);
        const frame = parseDeltaLine(line);
        if (frame !== undefined) expect(frame).toEqual(fullParse(line));
      }),
      { numRuns: 5000 },
    ));

  it('leaves other frames and arbitrary bytes to the full parse', () =>
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
          fc.json().map((text) => Buffer.from(text, 'utf8')),
          fc
            .constantFrom(
              '{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"assistant/chunk","seq":1,"time":2,"data":{"turn":0,"step":0,"chunk":{"type":"block-start","index":0,"blockType":"text"}}}}}',
              '{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s","status":"idle"}}',
              '{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"agent/inbox/spliced","seq":0,"time":1,"data":{"target":"next-turn","start":0,"inserted":[]}}}}',
            )
            .map((text) => Buffer.from(text, 'utf8')),
        ),
        (line) => {
          const frame = parseDeltaLine(line);
          if (frame !== undefined) expect(frame).toEqual(fullParse(line));
        },
      ),
      { numRuns: 3000 },
    ));

  it('reads a line in place, wherever it lies in a larger buffer', () =>
    fc.assert(
      fc.property(deltaArb, fc.uint8Array({ maxLength: 40 }), fc.uint8Array({ maxLength: 40 }), (d, before, after) => {
        const line = deltaLine(d);
        const buffer = Buffer.concat([before, line, after]);
        expect(parseDeltaLine(buffer, before.length, before.length + line.length)).toEqual(parseDeltaLine(line));
      }),
      { numRuns: 1000 },
    ));
});

/** Raw bytes for the inside of the text string: pieces that are fine, special, or broken. */
const rawTextArb = fc
  .array(
    fc.oneof(
      fc
        .constantFrom(
          'a',
          ' ',
          'word ',
          '\\n',
          '\\"',
          '\\\\',
          '\\/',
          '\\u00e9',
          '\\uD83D',
          '\\uABCD',
          'é',
          '中',
          '😀',
          '\x7f',
        )
        .map((t) => Buffer.from(t, 'utf8')),
      fc.constantFrom('\\', '\\x', '\\u12', '\\uZZZZ', '\\u00g0', '"', '\\\\\\').map((t) => Buffer.from(t, 'latin1')),
      fc
        .constantFrom(
          [0x00],
          [0x09],
          [0x0a],
          [0x1f],
          [0x80],
          [0xbf],
          [0xc0, 0x80],
          [0xc3],
          [0xe2, 0x82],
          [0xed, 0xa0, 0x80],
          [0xf4, 0x90, 0x80, 0x80],
          [0xff],
        )
        .map((b) => Buffer.from(b)),
      fc.uint8Array({ maxLength: 6 }).map((b) => Buffer.from(b)),
    ),
    { maxLength: 24 },
  )
  .map((pieces) => Buffer.concat(pieces));

const HEAD_OF = (pad: string): string =>
  `{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s${pad}","event":{"type":"assistant/chunk","seq":1,"time":2,"data":{"turn":0,"step":0,"chunk":{"type":"text-delta","index":0,"text":"`;

describe('DeltaLineReader on raw text bytes', () => {
  it('accepts exactly what the full parse accepts, at every alignment, and reads the same text', () =>
    fc.assert(
      fc.property(rawTextArb, fc.nat({ max: 3 }), fc.nat({ max: 3 }), (raw, pad, offset) => {
        // The session id's length and the line's offset move the text against the four-byte words.
        const line = Buffer.concat([
          Buffer.from(HEAD_OF('x'.repeat(pad)), 'latin1'),
          raw,
          Buffer.from('"}}}}}', 'latin1'),
        ]);
        const buffer = Buffer.concat([Buffer.alloc(offset, 0x20), line, Buffer.from('\n')]);
        const reader = new DeltaLineReader();
        const accepted = reader.read(buffer, offset, offset + line.length);
        const reference = fullParse(line) as {
          kind?: string;
          params?: { event?: { data?: { chunk?: { text?: unknown } } } };
        };
        const fullAccepts =
          reference.kind === 'notification' && typeof reference.params?.event?.data?.chunk?.text === 'string';
        expect(accepted).toBe(fullAccepts);
        if (accepted) {
          expect(reader.text()).toBe(reference.params?.event?.data?.chunk?.text);
          expect(reader.toFrame()).toEqual(reference);
        }
      }),
      { numRuns: 5000 },
    ));
});
