/**
 * The watcher's check of a line from its socket (`parseHookMessage`): a
 * version 1 message from a hooked agent comes back with only the fields it
 * carried; anything else is a sentence naming the field. Round trips of what
 * a hook sends are in test/hooks/hook-message.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseHookMessage } from '../../src/hooks/hook-message-schema.js';

const line = (value: Record<string, unknown>): string =>
  JSON.stringify({ v: 1, agent: 'codex', at: 7, event: 'Stop', ...value });

describe('parseHookMessage', () => {
  it('keeps the optional fields that were given and adds none', () => {
    expect(parseHookMessage(line({}))).toEqual({ v: 1, agent: 'codex', at: 7, event: 'Stop' });
    expect(parseHookMessage(line({ agentId: 'a1', reason: 'done' }))).toEqual({
      v: 1,
      agent: 'codex',
      at: 7,
      event: 'Stop',
      agentId: 'a1',
      reason: 'done',
    });
  });

  it('drops fields it does not know', () => {
    expect(parseHookMessage(line({ api_key: 'sk-secret' }))).toEqual({ v: 1, agent: 'codex', at: 7, event: 'Stop' });
  });

  it('names the field that is wrong', () => {
    expect(parseHookMessage(line({ at: -1 }))).toMatch(/^not a hook message \(at: /);
    expect(parseHookMessage(line({ event: '' }))).toMatch(/^not a hook message \(event: /);
    expect(parseHookMessage(line({ event: 'E'.repeat(65) }))).toMatch(/^not a hook message \(event: /);
    expect(parseHookMessage(line({ sessionId: '' }))).toMatch(/^not a hook message \(sessionId: /);
    expect(parseHookMessage(line({ transcriptPath: 'x'.repeat(4097) }))).toMatch(
      /^not a hook message \(transcriptPath: /,
    );
  });

  it('accepts a field of exactly the longest length', () => {
    expect(parseHookMessage(line({ transcriptPath: 'x'.repeat(4096) }))).toMatchObject({
      transcriptPath: 'x'.repeat(4096),
    });
  });

  it('names the whole line when it is not an object, and says when it is not JSON', () => {
    expect(parseHookMessage('[1]')).toMatch(/^not a hook message \(the line: /);
    expect(parseHookMessage('{"v":1,')).toMatch(/^not JSON \(/);
  });
});
