/**
 * Property of the plain-code payload checks of `wire/events.ts` (the
 * shortcut past zod on the proxy's path): whenever the shortcut accepts an
 * event's data, the zod schema of its type accepts it too, so the shortcut
 * never lets through what the schema rejects and never changes an error.
 * Data is generated near every known shape: right fields with values of
 * every JSON type (and a few non-JSON values an in-process host could hand
 * over), fields missing, extra fields, nested objects replaced by arrays or
 * null. Also: the shortcut does accept the well-formed shapes (so it is a
 * shortcut at all).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plainAcceptsEventData, schemaAcceptsEventData } from '../../src/wire/events.js';

const anyValue = fc.oneof(
  fc.constantFrom(
    undefined,
    null,
    true,
    0,
    1,
    -1,
    1.5,
    2 ** 53,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    '',
    'x',
    'user',
    'assistant',
    'text',
    'completed',
    [],
    {},
  ),
  fc.jsonValue({ maxDepth: 2 }),
);
const block = fc.oneof(
  fc.record(
    {
      type: fc.constantFrom('text', 'tool-result', 'image', 'custom'),
      text: fc.oneof(fc.string(), anyValue),
      toolCallId: fc.oneof(fc.string(), anyValue),
    },
    { requiredKeys: ['type'] },
  ),
  anyValue,
);
/** An object with some of `fields`, each either its plausible value or anything, maybe with an extra key. */
function near(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  const keys = Object.keys(fields);
  return fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record(
        Object.fromEntries(
          keys.map((k) => [k, fc.oneof({ weight: 4, arbitrary: fields[k] as fc.Arbitrary<unknown> }, anyValue)]),
        ),
        { requiredKeys: keys },
      ),
    },
    {
      weight: 2,
      arbitrary: fc.record(Object.fromEntries(keys.map((k) => [k, fields[k] as fc.Arbitrary<unknown>])), {
        requiredKeys: [],
      }),
    },
    { weight: 1, arbitrary: anyValue },
  );
}
const nat = fc.oneof(fc.nat({ max: 5 }), anyValue);
const str = fc.oneof(fc.string({ maxLength: 4 }), anyValue);
const optStr = fc.oneof(fc.constant(undefined), fc.string({ maxLength: 4 }), anyValue);

const shapes: Record<string, fc.Arbitrary<unknown>> = {
  'turn/end': near({
    turn: nat,
    reason: near({
      kind: str,
      reason: fc.oneof(fc.constant(undefined), near({ kind: str })),
      error: fc.oneof(fc.constant(undefined), near({ message: str, code: str })),
    }),
  }),
  'tool/call': near({ turn: nat, step: nat, callId: str, name: str, arguments: anyValue }),
  'tool/result': near({
    turn: nat,
    step: nat,
    message: near({ content: fc.oneof(fc.array(block, { maxLength: 3 }), anyValue) }),
    error: fc.oneof(fc.constant(undefined), near({ name: optStr, code: optStr })),
  }),
  'user/message': near({
    id: str,
    role: fc.oneof(fc.constant('user'), str),
    content: fc.oneof(fc.array(block, { maxLength: 3 }), anyValue),
  }),
  'request/context': near({ provider: optStr, model: optStr }),
  'session/end-seed': anyValue,
  'agent/inbox/spliced': near({
    target: optStr,
    start: fc.oneof(fc.constant(undefined), fc.integer(), anyValue),
    removedCount: fc.oneof(fc.constant(undefined), nat),
    outcome: optStr,
    inserted: fc.oneof(fc.array(fc.oneof(near({ id: optStr }), anyValue), { maxLength: 3 }), anyValue),
  }),
};

describe('plain payload checks of session events', () => {
  for (const [type, arb] of Object.entries(shapes)) {
    it(`accept ${type} data only when its schema does`, () =>
      fc.assert(
        fc.property(arb, (data) => {
          if (plainAcceptsEventData(type, data)) expect(schemaAcceptsEventData(type, data)).toBe(true);
        }),
        { numRuns: 3000 },
      ));
  }

  it('accept the well-formed shapes the runtime writes', () => {
    const wellFormed: Array<[string, unknown]> = [
      ['turn/end', { turn: 0, reason: { kind: 'error', error: { message: 'm', code: 'c' } } }],
      ['tool/call', { turn: 0, step: 1, callId: 'c1', name: 'read_file', arguments: { path: 'a' } }],
      [
        'tool/result',
        {
          turn: 0,
          step: 1,
          message: { content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'r' }] }] },
          error: { code: 'E' },
        },
      ],
      ['user/message', { id: 'u', role: 'user', content: [{ type: 'text', text: 'go' }], source: 'sdk' }],
      ['request/context', { provider: 'deepseek', model: 'deepseek-chat' }],
      ['session/end-seed', {}],
      ['agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [{ id: 'u1' }] }],
    ];
    for (const [type, data] of wellFormed) expect([type, plainAcceptsEventData(type, data)]).toEqual([type, true]);
  });
});
