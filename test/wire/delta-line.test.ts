import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { parseDeltaLine } from '../../src/wire/delta-line.js';

/** Bytes of a line. */
const line = (text: string): Buffer => Buffer.from(text, 'utf8');
/** A text-delta line exactly as the real dsh runtime wrote it (from a capture of its stdout). */
const CAPTURED =
  '{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"session-1","event":{"type":"assistant/chunk","seq":9,"time":1796063390332,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"Step one text before the tool."}}}}}';

describe('parseDeltaLine', () => {
  it('reads a text-delta line of the real runtime into its notification frame', () => {
    expect(parseDeltaLine(line(CAPTURED))).toEqual({
      kind: 'notification',
      method: 'session.event',
      params: {
        sessionId: 'session-1',
        event: {
          type: 'assistant/chunk',
          seq: 9,
          time: 1796063390332,
          data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'Step one text before the tool.' } },
        },
      },
    });
  });

  it('reads reasoning deltas, escapes and non-ASCII text', () => {
    const reasoning = CAPTURED.replace('"text-delta"', '"reasoning-delta"').replace(
      'Step one text before the tool.',
      'caf\\u00e9 \\"q\\" é→\\n',
    );
    expect(parseDeltaLine(line(reasoning))?.params).toEqual({
      sessionId: 'session-1',
      event: {
        type: 'assistant/chunk',
        seq: 9,
        time: 1796063390332,
        data: { turn: 1, step: 1, chunk: { type: 'reasoning-delta', index: 0, text: 'café "q" é→\n' } },
      },
    });
  });

  it('reads a line in place inside a larger buffer', () => {
    const buffer = Buffer.concat([line('xx\n'), line(CAPTURED), line('\nyy')]);
    expect(parseDeltaLine(buffer, 3, 3 + Buffer.byteLength(CAPTURED))?.params).toEqual(
      parseDeltaLine(line(CAPTURED))?.params,
    );
  });

  it.each([
    [
      'another chunk type',
      CAPTURED.replace(
        '"text-delta","index":0,"text":"Step one text before the tool."',
        '"block-start","index":0,"blockType":"text"',
      ),
    ],
    ['a raw tab in the text (not JSON)', CAPTURED.replace('Step one', 'Step\tone')],
    ['a bad escape', CAPTURED.replace('Step one', 'Step \\x one')],
    ['an unescaped quote inside the text', CAPTURED.replace('Step one', 'Step " one')],
    ['a number with a leading zero', CAPTURED.replace('"seq":9', '"seq":09')],
    ['a negative number', CAPTURED.replace('"index":0', '"index":-1')],
    ['a fraction', CAPTURED.replace('"time":1796063390332', '"time":1796063390332.5')],
    ['an exponent', CAPTURED.replace('"step":1', '"step":1e0')],
    ['a number too long to read exactly', CAPTURED.replace('"seq":9', '"seq":1234567890123456')],
    ['whitespace between tokens', CAPTURED.replace('"seq":9', '"seq": 9')],
    ['a session id with an escape', CAPTURED.replace('session-1', 'session\\u002d1')],
    ['another key order', CAPTURED.replace('"seq":9,"time":1796063390332', '"time":1796063390332,"seq":9')],
    ['an extra field', CAPTURED.replace('"index":0,', '"index":0,"extra":1,')],
    ['bytes after the last brace', `${CAPTURED} `],
    ['a truncated line', CAPTURED.slice(0, -1)],
    ['invalid UTF-8 in the text', null],
  ])('leaves %s to the full parse', (_name, text) => {
    const bytes =
      text === null
        ? Buffer.concat([line(CAPTURED.slice(0, -36)), Buffer.from([0xc3, 0x28]), line(CAPTURED.slice(-35))])
        : line(text);
    expect(parseDeltaLine(bytes)).toBeUndefined();
  });

  it('returns strings that do not keep the line alive', () => {
    const buffer = line(CAPTURED);
    const frame = parseDeltaLine(buffer);
    buffer.fill(0x20);
    expect((frame?.params as { event: { data: { chunk: { text: string } } } }).event.data.chunk.text).toBe(
      'Step one text before the tool.',
    );
  });
});
