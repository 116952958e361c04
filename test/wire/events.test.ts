import { describe, expect, it } from 'vitest';
import { parseSessionEvent } from '../../src/wire/events.js';

const base = { seq: 3, time: 1_700_000_000_000 };

describe('parseSessionEvent', () => {
  it('accepts a known event and returns the very same object', () => {
    const value = {
      type: 'assistant/message',
      ...base,
      data: {
        turn: 0,
        step: 1,
        message: { id: 'm1', role: 'assistant', content: [] },
        usage: { inputTokens: 1, outputTokens: 2 },
      },
    };
    const result = parseSessionEvent(value);
    expect(result).toEqual({ ok: true, event: value, known: true });
    expect(result.ok && result.event).toBe(value);
  });

  it('accepts both generations: chunk events and streams embedded in messages and attempts', () => {
    const chunk = {
      type: 'assistant/chunk',
      ...base,
      data: { turn: 0, step: 0, chunk: { type: 'text-delta', index: 0, text: 'hi' } },
    };
    const attempt = {
      type: 'assistant/attempt',
      ...base,
      data: {
        turn: 0,
        step: 0,
        stream: [
          { type: 'text-delta', index: 0, text: 'hi' },
          { type: 'finish', reason: { kind: 'aborted' } },
        ],
        failure: { message: 'x', code: 'y' },
      },
    };
    expect(parseSessionEvent(chunk)).toMatchObject({ ok: true, known: true });
    expect(parseSessionEvent(attempt)).toMatchObject({ ok: true, known: true });
  });

  it('accepts unknown event types, block types, chunk types and turn-end kinds as unknown variants', () => {
    expect(parseSessionEvent({ type: 'future/thing', ...base })).toMatchObject({ ok: true, known: false });
    expect(
      parseSessionEvent({
        type: 'assistant/message',
        ...base,
        data: {
          turn: 0,
          step: 0,
          message: { id: 'm', role: 'assistant', content: [{ type: 'hologram', x: 1 }] },
          stream: [{ type: 'sparkle', index: 0 }],
        },
      }),
    ).toMatchObject({ ok: true, known: true });
    expect(
      parseSessionEvent({ type: 'turn/end', ...base, data: { turn: 0, reason: { kind: 'galaxy-brain' } } }),
    ).toMatchObject({ ok: true, known: true });
  });

  it.each([
    [
      'missing data',
      { type: 'turn/end', ...base },
      { code: 'invalid', path: 'data', expected: 'object', received: 'nothing (field missing)' },
    ],
    [
      'non-array content',
      {
        type: 'assistant/message',
        ...base,
        data: { turn: 0, step: 0, message: { id: 'm', role: 'assistant', content: 'hello' } },
      },
      { code: 'invalid', path: 'data.message.content', expected: 'array', received: 'string "hello"' },
    ],
    [
      'a string turn',
      { type: 'turn/start', ...base, data: { turn: 'zero' } },
      { code: 'invalid', path: 'data.turn', expected: 'number', received: 'string "zero"' },
    ],
    [
      'a number where the event belongs',
      42,
      { code: 'not-object', path: '', expected: 'a session event object', received: 'number 42' },
    ],
    [
      'a negative seq',
      { type: 'turn/start', seq: -1, time: 0, data: { turn: 0 } },
      { code: 'invalid', path: 'seq', expected: 'non-negative integer', received: 'number -1' },
    ],
    [
      'a string time',
      { type: 'turn/start', seq: 0, time: 'noon', data: { turn: 0 } },
      { code: 'invalid', path: 'time', expected: 'number (epoch ms)', received: 'string "noon"' },
    ],
    [
      'a splice without inserted',
      { type: 'agent/inbox/spliced', ...base, data: { target: 'next-turn', start: 0, removedCount: 1 } },
      { code: 'invalid', path: 'data.inserted', expected: 'array', received: 'nothing (field missing)' },
    ],
    [
      'a missing type',
      { ...base, data: {} },
      { code: 'invalid', path: 'type', expected: 'string', received: 'nothing (field missing)' },
    ],
    [
      'a content block without a type',
      {
        type: 'assistant/message',
        ...base,
        data: { turn: 0, step: 0, message: { id: 'm', role: 'assistant', content: [{ text: 'hi' }] } },
      },
      { code: 'invalid', path: 'data.message.content.0.type', expected: 'string', received: 'nothing (field missing)' },
    ],
    [
      'a text delta with a numeric text',
      {
        type: 'assistant/chunk',
        ...base,
        data: { turn: 0, step: 0, chunk: { type: 'text-delta', index: 0, text: 7 } },
      },
      { code: 'invalid', path: 'data.chunk.text', expected: 'string', received: 'number 7' },
    ],
  ])('rejects %s with a typed error naming the field', (_name, value, expected) => {
    const result = parseSessionEvent(value);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toMatchObject(expected);
      expect(result.error.message).toBe(
        `${expected.path === '' ? '(root)' : expected.path}: expected ${expected.expected}, received ${expected.received}`,
      );
    }
  });

  it("accepts events without seq and time, as upstream's recorded logs carry them", () => {
    const event = { type: 'turn/end', data: { turn: 1, reason: { kind: 'max-tokens' } } };
    expect(parseSessionEvent(event)).toEqual({ ok: true, event, known: true });
    expect(parseSessionEvent({ type: 'approval/policy', data: { policy: 'never' } })).toMatchObject({
      ok: true,
      known: false,
    });
  });

  it('reads inbox splices: a receipt, a claim, a cancellation', () => {
    for (const data of [
      { target: 'next-turn', start: 0, inserted: [{ id: 'm1', role: 'user', content: [] }] },
      { target: 'next-turn', start: 0, removedCount: 1, inserted: [] },
      { target: 'next-turn', start: 0, removedCount: 1, outcome: 'canceled', inserted: [] },
    ]) {
      expect(parseSessionEvent({ type: 'agent/inbox/spliced', data })).toMatchObject({ ok: true, known: true });
    }
  });

  it('prefixes error paths with the caller base path', () => {
    const result = parseSessionEvent({ type: 'turn/start', ...base, data: {} }, 'params.event');
    expect(result).toMatchObject({ ok: false, error: { path: 'params.event.data.turn' } });
  });
});
