/**
 * Plain text of a run span's JSON fields for the view: the output blocks
 * (`outputText`), the prompt messages (`messagesText`) and a one-line
 * `preview`. Untrusted text is only extracted; JSON that does not parse
 * comes back as it is.
 */
import { describe, expect, it } from 'vitest';
import { messagesText, outputText, preview } from '../../src/view/run-fields.js';

describe('outputText', () => {
  it('joins text and reasoning blocks, naming other blocks by type and name', () => {
    const json = JSON.stringify([
      { type: 'reasoning', text: 'think' },
      { type: 'tool-call', id: 'c1', name: 'Read', arguments: '{}' },
      { type: 'image' },
      7,
      { type: 'text', text: 'done' },
    ]);
    expect(outputText(json)).toBe('think\n\n[tool-call Read]\n\n[image]\n\ndone');
  });

  it('gives empty text for no value, and the value itself when it is not a JSON array', () => {
    expect(outputText(undefined)).toBe('');
    expect(outputText('')).toBe('');
    expect(outputText('[{"type":"text","te')).toBe('[{"type":"text","te');
    expect(outputText('{"text":"x"}')).toBe('{"text":"x"}');
  });
});

describe('messagesText', () => {
  it("joins every message's text parts", () => {
    const json = JSON.stringify([
      { role: 'system', parts: [{ type: 'text', content: 'be brief' }] },
      { role: 'user', parts: [{ type: 'text', content: 'hello' }, { type: 'blob' }] },
      { role: 'user' },
    ]);
    expect(messagesText(json)).toBe('be brief\n\nhello');
  });

  it('gives the value itself when it does not parse', () => {
    expect(messagesText('not json')).toBe('not json');
    expect(messagesText(3)).toBe('');
  });
});

describe('preview', () => {
  it('flattens whitespace and cuts with an ellipsis to at most max characters', () => {
    expect(preview('  a\n\tb  c ', 10)).toBe('a b c');
    expect(preview('abcdef', 4)).toBe('abc…');
    expect(preview('abcd', 4)).toBe('abcd');
  });
});
