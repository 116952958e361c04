/**
 * The plain-object guard every reader of untrusted JSON shares: what counts
 * as a JSON object, and text that holds one.
 */
import { describe, expect, it } from 'vitest';
import { asJsonObject, isJsonObject, parseJsonObject } from '../../src/wire/json-values.js';

const NOT_OBJECTS: readonly unknown[] = [
  null,
  undefined,
  [],
  [1, 2],
  'text',
  '',
  0,
  1.5,
  true,
  false,
  10n,
  Symbol('s'),
  () => 1,
];

describe('isJsonObject', () => {
  it('is true for plain objects, empty or not, and for objects of a class', () => {
    expect(isJsonObject({})).toBe(true);
    expect(isJsonObject({ a: 1, b: [2] })).toBe(true);
    expect(isJsonObject(Object.create(null))).toBe(true);
    expect(isJsonObject(new Date(0))).toBe(true);
  });

  it('is false for null, arrays, primitives and functions', () => {
    for (const value of NOT_OBJECTS) expect(isJsonObject(value), String(typeof value)).toBe(false);
  });
});

describe('asJsonObject', () => {
  it('returns the very object it is given', () => {
    const object = { key: 'value' };
    expect(asJsonObject(object)).toBe(object);
  });

  it('returns undefined for anything else', () => {
    for (const value of NOT_OBJECTS) expect(asJsonObject(value)).toBeUndefined();
  });
});

describe('parseJsonObject', () => {
  it('returns the object JSON text holds', () => {
    expect(parseJsonObject('{"a":1,"b":{"c":[true]}}')).toEqual({ a: 1, b: { c: [true] } });
    expect(parseJsonObject(' {} ')).toEqual({});
  });

  it('returns undefined for JSON that holds no object', () => {
    for (const text of ['[]', '[{}]', 'null', '"{}"', '42', 'true'])
      expect(parseJsonObject(text), text).toBeUndefined();
  });

  it('returns undefined, without throwing, for text that is not JSON', () => {
    for (const text of ['', '{', '{"a":1', 'not json', '{"a":1}\n{"b":2}'])
      expect(parseJsonObject(text), text).toBeUndefined();
  });
});
