/**
 * OTLP/HTTP JSON export requests as an agent's SDK sends them: validation of
 * the parts the proxy reads (ids, times) with the rest kept as sent, and the
 * plain values of attributes and times.
 */
import { describe, expect, it } from 'vitest';
import { attributeMap, attributeValue, millisOf, parseOtlpJsonRequest } from '../../src/wire/otlp-json.js';

const span = {
  traceId: '0af7651916cd43dd8448eb211c80319c',
  spanId: 'b7ad6b7169203331',
  name: 'claude_code.interaction',
  startTimeUnixNano: '1700000000000000000',
  endTimeUnixNano: 1_700_000_001_000_000_000,
  vendorField: { kept: true },
};
const traces = (s: unknown) => ({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ spans: [s] }] }] });

describe('parseOtlpJsonRequest', () => {
  it('takes a traces request and keeps fields it does not read', () => {
    const parsed = parseOtlpJsonRequest('traces', traces(span));
    expect(parsed.ok).toBe(true);
    expect(JSON.stringify(parsed.ok && parsed.value.body)).toContain('"vendorField":{"kept":true}');
    expect(parsed.ok && parsed.value.signal).toBe('traces');
  });

  it('names the signal and the path of the first problem', () => {
    const badId = parseOtlpJsonRequest('traces', traces({ ...span, spanId: 'xyz' }));
    expect(badId.ok ? '' : badId.error).toMatch(/^traces request: resourceSpans\.0\.scopeSpans\.0\.spans\.0\.spanId: /);
    const badTime = parseOtlpJsonRequest('traces', traces({ ...span, startTimeUnixNano: '1.5' }));
    expect(badTime.ok ? '' : badTime.error).toMatch(/startTimeUnixNano/);
  });
});

describe('attribute values', () => {
  it('reads strings, booleans, doubles, safe integers and arrays of those', () => {
    expect(attributeValue({ stringValue: 'a' })).toBe('a');
    expect(attributeValue({ boolValue: false })).toBe(false);
    expect(attributeValue({ doubleValue: 0.5 })).toBe(0.5);
    expect(attributeValue({ intValue: '42' })).toBe(42);
    expect(attributeValue({ intValue: 7 })).toBe(7);
    expect(attributeValue({ intValue: '9007199254740993' })).toBeUndefined();
    expect(
      attributeValue({
        arrayValue: { values: [{ stringValue: 'x' }, { intValue: '1' }, { arrayValue: { values: [] } }] },
      }),
    ).toEqual(['x', 1]);
    expect(attributeValue({})).toBeUndefined();
    expect(attributeValue(undefined)).toBeUndefined();
  });

  it('maps a list of attributes by key, the later of two keys winning', () => {
    const map = attributeMap([
      { key: 'a', value: { stringValue: 'first' } },
      { key: 'b', value: { intValue: '2' } },
      { key: 'a', value: { stringValue: 'second' } },
    ]);
    expect([...map]).toEqual([
      ['a', 'second'],
      ['b', 2],
    ]);
    expect(attributeMap(undefined).size).toBe(0);
  });
});

describe('millisOf', () => {
  it('turns nanoseconds, as a string or a number, into epoch milliseconds; zero or absent is no time', () => {
    expect(millisOf('1700000000123456789')).toBe(1_700_000_000_123);
    expect(millisOf(1_700_000_000_500_000_000)).toBe(1_700_000_000_500);
    expect(millisOf('0')).toBeUndefined();
    expect(millisOf(undefined)).toBeUndefined();
  });
});
