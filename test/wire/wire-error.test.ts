/**
 * The wire layer's one error shape: `describeValue` names a value's type
 * without echoing long content, `wireError` composes the one-line message,
 * and `wireErrorFromIssues` turns the first schema issue (the deepest branch
 * of a union) into a path, an expectation and what arrived.
 */
import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { describeValue, wireError, wireErrorFromIssues } from '../../src/wire/wire-error.js';

describe('describeValue', () => {
  it('names each JSON type, previewing only short scalars', () => {
    expect(describeValue(undefined)).toBe('nothing (field missing)');
    expect(describeValue(null)).toBe('null');
    expect(describeValue([1, 2, 3])).toBe('array(3)');
    expect(describeValue({ secret: 'x' })).toBe('object');
    expect(describeValue('short')).toBe('string "short"');
    expect(describeValue('x'.repeat(25))).toBe('string(25 chars)');
    expect(describeValue(42)).toBe('number 42');
    expect(describeValue(false)).toBe('boolean false');
  });
});

describe('wireError', () => {
  it('composes `<path>: expected <expected>, received <received>`, the root named (root)', () => {
    expect(wireError('invalid', 'params.turn', 'number', 'string "a"')).toEqual({
      code: 'invalid',
      path: 'params.turn',
      expected: 'number',
      received: 'string "a"',
      message: 'params.turn: expected number, received string "a"',
    });
    expect(wireError('not-object', '', 'an object', 'null').message).toBe('(root): expected an object, received null');
  });
});

describe('wireErrorFromIssues', () => {
  const issuesOf = (schema: z.ZodType, value: unknown) => {
    const parsed = schema.safeParse(value);
    if (parsed.success) throw new Error('expected the value to be refused');
    return parsed.error.issues;
  };

  it('names the field under the base path, what was expected and what arrived', () => {
    const schema = z.object({ data: z.object({ turn: z.number() }) });
    const value = { data: { turn: 'one' } };
    expect(wireErrorFromIssues(issuesOf(schema, value), value, 'params.event')).toEqual({
      code: 'invalid',
      path: 'params.event.data.turn',
      expected: 'number',
      received: 'string "one"',
      message: 'params.event.data.turn: expected number, received string "one"',
    });
  });

  it('lists the allowed literals and states bounds', () => {
    const literal = { kind: 'other' };
    expect(wireErrorFromIssues(issuesOf(z.object({ kind: z.enum(['a', 'b']) }), literal), literal).expected).toBe(
      '"a" | "b"',
    );
    const small = { n: -1 };
    expect(wireErrorFromIssues(issuesOf(z.object({ n: z.number().min(0) }), small), small).expected).toBe(
      'number >= 0',
    );
  });

  it('descends into the union branch that got furthest', () => {
    const schema = z.union([z.object({ a: z.string() }), z.object({ b: z.object({ c: z.number() }) })]);
    const value = { b: { c: true } };
    const error = wireErrorFromIssues(issuesOf(schema, value), value);
    expect([error.path, error.expected, error.received]).toEqual(['b.c', 'number', 'boolean true']);
  });

  it('falls back to the root when there is no issue', () => {
    expect(wireErrorFromIssues([], 7, 'x').message).toBe('x: expected a valid value, received number 7');
  });
});
