/**
 * The text of a caught error: with its system code (`errorText`), exactly
 * its message (`errorMessage`), and as an `Error` (`asError`).
 */
import { describe, expect, it } from 'vitest';
import { asError, errorMessage, errorText } from '../../src/wire/error-text.js';

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('errorText', () => {
  it("prefixes an Error's message with its code when the message does not start with it", () => {
    expect(errorText(withCode('no such file', 'ENOENT'))).toBe('ENOENT: no such file');
  });

  it('leaves a message that already starts with its code as it is', () => {
    expect(errorText(withCode("ENOENT: no such file or directory, open 'x'", 'ENOENT'))).toBe(
      "ENOENT: no such file or directory, open 'x'",
    );
  });

  it('is the message of an Error without a code, and String() of anything else', () => {
    expect(errorText(new TypeError('bad'))).toBe('bad');
    expect(errorText('plain')).toBe('plain');
    expect(errorText(42)).toBe('42');
    expect(errorText(undefined)).toBe('undefined');
  });
});

describe('errorMessage', () => {
  it("is an Error's message exactly, never prefixed with its code", () => {
    expect(errorMessage(withCode('no such file', 'ENOENT'))).toBe('no such file');
    expect(errorMessage(new RangeError('out of range'))).toBe('out of range');
    expect(errorMessage(new Error(''))).toBe('');
  });

  it('is String() of a value that is not an Error', () => {
    expect(errorMessage('plain')).toBe('plain');
    expect(errorMessage(null)).toBe('null');
    expect(errorMessage({ message: 'not an Error' })).toBe('[object Object]');
  });
});

describe('asError', () => {
  it('returns an Error itself', () => {
    const error = new TypeError('kept');
    expect(asError(error)).toBe(error);
  });

  it('wraps anything else in an Error whose message is its String()', () => {
    const wrapped = asError('refused');
    expect(wrapped).toBeInstanceOf(Error);
    expect(wrapped.message).toBe('refused');
    expect(asError(7).message).toBe('7');
    expect(asError(undefined).message).toBe('undefined');
  });
});
