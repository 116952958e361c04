/**
 * Properties of the checks `wire/schema-check` derives from zod schemas: for
 * random schemas of every construct it reads (and some it does not), and
 * values generated near each schema (the right shape with fields of every
 * JSON type, missing, extra or `undefined`), the derived check accepts a
 * value only when `safeParse` does; and it does accept the values the
 * schema is made for. The unchanged check over the same schemas and values:
 * where it says yes, `safeParse` succeeds and its data deep-equals the value
 * (no key removed or added, no value replaced). Also the same over the event
 * payload schemas and the stand-in for any string.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { StreamChunkSchema, TokenUsageSchema, ContentBlockSchema } from '../../src/wire/content.js';
import { plainAcceptsEventData, schemaAcceptsEventData } from '../../src/wire/events.js';
import { ANY_STRING, plainCheckOf, unchangedCheckOf, withPlainCheck } from '../../src/wire/schema-check.js';

const anyValue = fc.oneof(
  fc.constantFrom(
    undefined,
    null,
    true,
    false,
    0,
    -0,
    1,
    -1,
    1.5,
    2 ** 53,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    '',
    'x',
    [],
    {},
  ),
  fc.jsonValue({ maxDepth: 2 }),
);

/** Blocks as Claude Code's records hold them: a `z.custom` whose code the derivation cannot read, registered. */
const isTypedList = (v: unknown): boolean =>
  Array.isArray(v) &&
  v.every((b) => typeof b === 'object' && b !== null && typeof (b as { type?: unknown }).type === 'string');
const registeredCustom = withPlainCheck(z.custom<unknown[]>(isTypedList), isTypedList);
/** A refinement registered with its check: accepted by the plain check, but its data is zod's copy of the object. */
const registeredRefinement = withPlainCheck(
  z.looseObject({ type: z.string() }).refine((v) => v.type !== ''),
  (v) =>
    typeof v === 'object' &&
    v !== null &&
    typeof (v as { type?: unknown }).type === 'string' &&
    (v as { type: string }).type !== '',
);

/** Schemas of the constructs the derivation reads, nested, plus a few it does not read. */
const schemaArb: fc.Arbitrary<z.ZodType> = fc.letrec<{ schema: z.ZodType }>((tie) => ({
  schema: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<z.ZodType>(
      z.string(),
      z.boolean(),
      z.number(),
      z.number().int(),
      z.number().int().nonnegative(),
      z.number().positive(),
      z.number().max(3),
      z.literal('x'),
      z.literal(true),
      z.unknown(),
      z.any(),
      z.string().min(1),
      z.string().regex(/^a/),
      z.enum(['a', 'b']),
      z.union([z.string(), z.number()]),
      z.strictObject({ a: z.string() }),
      z.looseObject({ a: z.number() }).refine((v) => v.a > 1),
      z.string().transform((s) => s.length),
      z.string().trim(),
      z.string().default('d'),
      z.custom<string>((v) => typeof v === 'string'),
      registeredCustom,
      registeredRefinement,
      z.discriminatedUnion('k', [z.looseObject({ k: z.literal('a') }), z.looseObject({ k: z.literal('b') })]),
      z.xor([z.string(), z.number()]),
    ),
    tie('schema').map((s) => s.optional()),
    tie('schema').map((s) => s.nullable()),
    tie('schema').map((s) => z.exactOptional(s)),
    fc.tuple(tie('schema'), fc.constantFrom<unknown>(undefined, null, 'c', 0, [], {})).map(([s, c]) => s.catch(c)),
    fc.array(tie('schema'), { minLength: 1, maxLength: 3 }).map((options) => z.union(options)),
    tie('schema').map((s) => z.array(s)),
    fc
      .dictionary(fc.constantFrom('a', 'b', 'c'), tie('schema'), { maxKeys: 3 })
      .chain((shape) => fc.constantFrom(z.looseObject(shape), z.object(shape))),
  ),
})).schema;

/** Values near `schema`: what it asks for, mostly, and anything else sometimes. */
function near(schema: z.ZodType, depth = 0): fc.Arbitrary<unknown> {
  const def = schema._zod.def as unknown as {
    type: string;
    shape?: Record<string, z.ZodType>;
    innerType?: z.ZodType;
    element?: z.ZodType;
    values?: unknown[];
    options?: z.ZodType[];
  };
  const own = ((): fc.Arbitrary<unknown> => {
    switch (def.type) {
      case 'string':
        return fc.string({ maxLength: 3 });
      case 'boolean':
        return fc.boolean();
      case 'number':
        return fc.oneof(fc.integer({ min: -3, max: 5 }), fc.double());
      case 'literal':
        return fc.constantFrom(...(def.values ?? [undefined]));
      case 'optional':
        return fc.oneof(fc.constant(undefined), near(def.innerType as z.ZodType, depth + 1));
      case 'nullable':
        return fc.oneof(fc.constant(null), near(def.innerType as z.ZodType, depth + 1));
      case 'catch':
        return near(def.innerType as z.ZodType, depth + 1);
      case 'default':
        return fc.oneof(fc.constant(undefined), near(def.innerType as z.ZodType, depth + 1));
      case 'union':
        return fc.oneof(...(def.options ?? []).map((option) => near(option, depth + 1)));
      case 'custom':
        return fc.oneof(
          fc.string({ maxLength: 2 }),
          fc.array(fc.record({ type: fc.string({ maxLength: 2 }) }), { maxLength: 2 }),
        );
      case 'array':
        return fc.array(near(def.element as z.ZodType, depth + 1), { maxLength: 3 });
      case 'object': {
        const shape = def.shape ?? {};
        const fields = Object.fromEntries(Object.entries(shape).map(([k, s]) => [k, near(s, depth + 1)]));
        return fc.oneof(
          { weight: 4, arbitrary: fc.record(fields) },
          fc.record(fields, { requiredKeys: [] }),
          fc.record({ ...fields, extra: anyValue }),
        );
      }
      default:
        return anyValue;
    }
  })();
  return depth > 4 ? anyValue : fc.oneof({ weight: 5, arbitrary: own }, { weight: 1, arbitrary: anyValue });
}

const accepts = (schema: z.ZodType, value: unknown): boolean => schema.safeParse(value).success;

/**
 * Every path of own keys in `value`, sorted: with `toEqual` (which ignores
 * keys whose value is `undefined` and the prototype), says two values have
 * the same members. Fast-check's records may have a null prototype, JSON's
 * do not, zod's copies never: what a member reads is the contract, not that.
 */
function keyPaths(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null) return [];
  return Object.keys(value)
    .flatMap((key) => [`${prefix}/${key}`, ...keyPaths((value as Record<string, unknown>)[key], `${prefix}/${key}`)])
    .sort();
}

describe('plainCheckOf', () => {
  it('accepts a value only when the schema does, for schemas of every construct', () =>
    fc.assert(
      fc.property(
        schemaArb.chain((schema) => fc.tuple(fc.constant(schema), near(schema))),
        ([schema, value]) => {
          if (plainCheckOf(schema)(value)) expect(accepts(schema, value)).toBe(true);
        },
      ),
      { numRuns: 4000 },
    ));

  it('says a value is unchanged only when the schema returns it as it is, for schemas of every construct', () =>
    fc.assert(
      fc.property(
        schemaArb.chain((schema) => fc.tuple(fc.constant(schema), near(schema))),
        ([schema, value]) => {
          if (!unchangedCheckOf(schema)(value)) return;
          const parsed = schema.safeParse(value);
          expect(parsed.success).toBe(true);
          // Keys and values alike: nothing stripped, filled in or replaced by a catch.
          expect(parsed.data).toEqual(value);
          expect(keyPaths(parsed.data)).toEqual(keyPaths(value));
          expect(plainCheckOf(schema)(value)).toBe(true);
        },
      ),
      { numRuns: 4000 },
    ));

  it('says unchanged for the values a schema keeps, and not where zod would change them', () => {
    const schema = z.looseObject({
      id: z.string().optional().catch(undefined),
      parent: z.string().nullable().optional().catch(undefined),
      content: z.union([registeredCustom, z.string()]),
      nested: z.object({ n: z.number().int() }).optional(),
    });
    const kept = { id: 'a', parent: null, content: [{ type: 't' }], nested: { n: 1 }, extra: [1] };
    expect([unchangedCheckOf(schema)(kept), schema.safeParse(kept).data]).toEqual([true, kept]);
    const changed: Array<[string, unknown]> = [
      ['a caught value', { ...kept, id: 3 }],
      ['a stripped key', { ...kept, nested: { n: 1, m: 2 } }],
      ['an own __proto__', JSON.parse('{"content":"c","__proto__":{}}')],
    ];
    for (const [why, value] of changed) {
      const parsed = schema.safeParse(value);
      expect([why, parsed.success, unchangedCheckOf(schema)(value)]).toEqual([why, true, false]);
      expect([parsed.data, keyPaths(parsed.data)]).not.toEqual([value, keyPaths(value)]);
      // The plain check may still say yes: it promises success, not the same value.
      expect(plainCheckOf(schema)(value)).toBe(true);
    }
    // zod returns the first option that succeeds: an object before the kept option would drop `__proto__`.
    const union = z.union([z.looseObject({}), z.unknown()]);
    const withProto: unknown = JSON.parse('{"__proto__":{}}');
    expect([unchangedCheckOf(union)(withProto), union.safeParse(withProto).data]).toEqual([false, {}]);
  });

  it('accepts the values a schema of the constructs it reads is made for', () => {
    const schema = z.looseObject({
      id: z.string(),
      count: z.number().int().nonnegative(),
      ratio: z.number(),
      flag: z.literal(true).optional(),
      tags: z.array(z.looseObject({ name: z.string(), on: z.boolean().optional() })),
      payload: z.unknown(),
    });
    const value = {
      id: 'a',
      count: 3,
      ratio: 0.5,
      tags: [{ name: 't' }, { name: 'u', on: false }],
      payload: null,
      x: 1,
    };
    expect([plainCheckOf(schema)(value), accepts(schema, value)]).toEqual([true, true]);
    // A required key whose schema accepts `undefined` must still be present, as zod says.
    const { payload: _payload, ...withoutPayload } = value;
    expect([plainCheckOf(schema)(withoutPayload), accepts(schema, withoutPayload)]).toEqual([false, false]);
  });

  it('asks the schema for constructs it cannot read', () => {
    for (const schema of [
      z.string().min(1),
      z.enum(['a']),
      z.xor([z.string(), z.number()]),
      z.discriminatedUnion('k', [z.looseObject({ k: z.literal('a') })]),
      z.strictObject({}),
    ])
      expect(plainCheckOf(schema)('a')).toBe(false);
    expect(plainCheckOf(z.discriminatedUnion('k', [z.looseObject({ k: z.literal('a') })]))({ k: 'a' })).toBe(false);
  });

  it('reads the chunk, block and usage schemas of the dsh vocabulary through their registered checks', () => {
    expect(plainCheckOf(StreamChunkSchema)({ type: 'text-delta', index: 0, text: 'hi' })).toBe(true);
    expect(plainCheckOf(StreamChunkSchema)({ type: 'text-delta', index: -1, text: 'hi' })).toBe(false);
    expect(plainCheckOf(StreamChunkSchema)({ type: 'a-new-kind', anything: 1 })).toBe(true);
    expect(plainCheckOf(StreamChunkSchema)({ type: 'usage', usage: { inputTokens: 1e400, outputTokens: 2 } })).toBe(
      true,
    );
    expect(plainCheckOf(TokenUsageSchema)({ inputTokens: Number.NaN, outputTokens: 2 })).toBe(false);
    expect(plainCheckOf(ContentBlockSchema)({ type: 'image' })).toBe(true);
  });

  it('takes the stand-in for any string only where every string is accepted', () => {
    expect(plainCheckOf(z.string())(ANY_STRING)).toBe(true);
    expect(plainCheckOf(z.unknown())(ANY_STRING)).toBe(true);
    expect(plainCheckOf(z.string().optional())(ANY_STRING)).toBe(true);
    expect(plainCheckOf(z.literal(''))(ANY_STRING)).toBe(false);
    expect(plainCheckOf(z.string().max(3))(ANY_STRING)).toBe(false);
    expect(plainCheckOf(z.number())(ANY_STRING)).toBe(false);
  });
});

/** Event payloads near the shapes the runtime writes, for every event type. */
const eventData: Array<[string, fc.Arbitrary<unknown>]> = [
  ['turn/start', near(z.looseObject({ turn: z.number().int() }))],
  ['step/start', near(z.looseObject({ turn: z.number().int(), step: z.number().int() }))],
  ['assistant/chunk', near(z.looseObject({ turn: z.number().int(), step: z.number().int(), chunk: z.unknown() }))],
  ['tool/call', near(z.looseObject({ turn: z.number(), step: z.number(), callId: z.string(), name: z.string() }))],
];

describe('the payload checks of session events', () => {
  for (const [type, arb] of eventData) {
    it(`accept ${type} data only when its schema does`, () =>
      fc.assert(
        fc.property(arb, (data) => {
          if (plainAcceptsEventData(type, data)) expect(schemaAcceptsEventData(type, data)).toBe(true);
        }),
        { numRuns: 1000 },
      ));
  }

  it('accept the well-formed shapes the runtime writes', () => {
    const wellFormed: Array<[string, unknown]> = [
      ['assistant/chunk', { turn: 0, step: 1, chunk: { type: 'text-delta', index: 0, text: 'hi' } }],
      ['assistant/chunk', { turn: 0, step: 1, chunk: { type: 'finish', reason: { kind: 'stop' } } }],
      [
        'assistant/message',
        {
          turn: 0,
          step: 1,
          message: { id: 'm', role: 'assistant', content: [{ type: 'text', text: 'a' }] },
          usage: { inputTokens: 1, outputTokens: 2 },
          stream: [{ type: 'block-end', index: 0, block: { type: 'tool-call', id: 'c', name: 'n', arguments: '{}' } }],
        },
      ],
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
