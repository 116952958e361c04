/**
 * Properties of FrameTap with its delta-line fast path: for any stream of
 * lines (runtime delta lines, delta lines with a byte changed, other frames,
 * arbitrary bytes), chunked anywhere, the tap observes exactly the frames, in
 * order, and rejects exactly the lines (same kinds, same messages) that a
 * reference reading every line in full (`decodeUtf8Line` + `parseFrame`, the
 * tap's behaviour before the fast path) does.
 */
import { Buffer } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FrameObserver } from '../../src/observe/frame-observer.js';
import { FrameTap } from '../../src/observe/frame-tap.js';
import { parseFrame } from '../../src/wire/jsonrpc.js';
import { decodeUtf8Line } from '../../src/wire/ndjson.js';
import { chunked } from '../helpers/chunked.js';

const deltaArb = fc
  .record({
    sessionId: fc.constantFrom('session-1', 'session-2', 'x'),
    seq: fc.nat(),
    text: fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.constantFrom('a "q"', '\\', '\t')),
    type: fc.constantFrom('text-delta', 'reasoning-delta'),
  })
  .map((d) =>
    Buffer.from(
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'session.event',
        params: {
          sessionId: d.sessionId,
          event: {
            type: 'assistant/chunk',
            seq: d.seq,
            time: 1764400000000 + d.seq,
            data: { turn: 0, step: 1, chunk: { type: d.type, index: 0, text: d.text } },
          },
        },
      }),
    ),
  );
const changedArb = fc.tuple(deltaArb, fc.nat(), fc.integer({ min: 0, max: 255 })).map(([line, at, byte]) => {
  const copy = Buffer.from(line);
  const i = at % copy.length;
  copy[i] = byte === 0x0a ? 0x20 : byte;
  return copy;
});
const otherArb = fc.oneof(
  fc.json().map((text) => Buffer.from(text.replace(/\n/g, ' '))),
  fc
    .constantFrom(
      '{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s","status":"idle"}}',
      '{"jsonrpc":"2.0","id":1,"result":{}}',
      '',
      'not json',
    )
    .map((t) => Buffer.from(t)),
  fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes.map((b) => (b === 0x0a ? 0x41 : b)))),
);
const streamArb = fc.array(fc.oneof({ weight: 3, arbitrary: deltaArb }, changedArb, otherArb), { maxLength: 30 });

describe('FrameTap with the delta-line fast path', () => {
  it('observes and rejects exactly what a full parse of every line does', () =>
    fc.assert(
      fc.property(streamArb, fc.array(fc.nat(), { maxLength: 10 }), (lines, cuts) => {
        const input = Buffer.concat(lines.flatMap((line) => [line, Buffer.from('\n')]));
        const seen: unknown[] = [];
        const observer: FrameObserver = { observeFrame: (_d, frame) => seen.push(frame), close: () => undefined };
        const tap = new FrameTap(observer, {
          onRejected: (_d, kind, message) => seen.push(`${kind}: ${message}`),
          now: () => 0,
        });
        for (const chunk of chunked(input, cuts)) tap.push('agent->client', chunk);
        tap.end('agent->client');

        const expected: unknown[] = [];
        for (const raw of lines) {
          const line = raw[raw.length - 1] === 0x0d ? raw.subarray(0, -1) : raw; // the splitter drops one trailing \r
          if (line.length === 0) continue;
          const decoded = decodeUtf8Line(line);
          if (!decoded.ok) {
            expected.push('not-utf8: line is not valid UTF-8; skipped');
            continue;
          }
          const parsed = parseFrame(decoded.text);
          expected.push(parsed.ok ? parsed.frame : `${parsed.error.code}: ${parsed.error.message}`);
        }
        expect(seen).toEqual(expected);
        expect(tap.counts['agent->client'].lines).toBe(lines.length);
      }),
      { numRuns: 1500 },
    ));
});
