/**
 * The delta reader leaves the validity of a line's payload to the event
 * schema (decision 0126): with the schema's check saying no, a line of the
 * exact layout is not recognized, and the full parse decides it.
 */
import { Buffer } from 'node:buffer';
import { describe, expect, it, vi } from 'vitest';

const asked: unknown[] = [];
vi.mock('../../src/wire/events.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/wire/events.js')>();
  return {
    ...original,
    plainEventDataCheck: () => (data: { turn: number; step: number; chunk: { type: string; index: number } }) => {
      asked.push({ turn: data.turn, step: data.step, chunk: { type: data.chunk.type, index: data.chunk.index } });
      return false;
    },
  };
});

const { parseDeltaLine } = await import('../../src/wire/delta-line.js');

const LINE =
  '{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"assistant/chunk","seq":1,"time":2,"data":{"turn":3,"step":4,"chunk":{"type":"reasoning-delta","index":5,"text":"x"}}}}}';

describe('DeltaLineReader and the event schema', () => {
  it('asks the schema check about the payload it read and declines the line when it says no', () => {
    expect(parseDeltaLine(Buffer.from(LINE, 'utf8'))).toBeUndefined();
    expect(asked).toHaveLength(1);
    expect(asked[0]).toEqual({ turn: 3, step: 4, chunk: { type: 'reasoning-delta', index: 5 } });
  });
});
