import { describe, expect, it } from 'vitest';
import { parseInitializeParams, parsePromptParams, parseSdkNotification } from '../../src/wire/sdk-protocol.js';

describe('parseSdkNotification', () => {
  it('validates a session.event and keeps the event object', () => {
    const event = { type: 'turn/start', seq: 0, time: 5, data: { turn: 0 } };
    const result = parseSdkNotification('session.event', { sessionId: 's1', event });
    expect(result).toEqual({ ok: true, known: true, notification: { method: 'session.event', params: { sessionId: 's1', event }, eventKnown: true } });
  });

  it('accepts a session.event whose event type is unknown', () => {
    expect(parseSdkNotification('session.event', { sessionId: 's1', event: { type: 'future/x', seq: 1, time: 2 } })).toMatchObject({
      ok: true,
      known: true,
      notification: { eventKnown: false },
    });
  });

  it('reports an unknown method as unknown, not as an error', () => {
    expect(parseSdkNotification('session.telepathy', { anything: 1 })).toEqual({ ok: true, known: false, method: 'session.telepathy' });
  });

  it('validates subagent.finished including the reported output', () => {
    const params = {
      provider: 'deepseek',
      agentId: 'a1',
      parentSessionId: 'p',
      childSessionId: 'c',
      status: 'error',
      stopReason: 'max-tokens',
      lastAssistantMessage: [],
    };
    expect(parseSdkNotification('subagent.finished', params)).toEqual({ ok: true, known: true, notification: { method: 'subagent.finished', params } });
  });

  it.each([
    ['session.event', { event: {} }, 'params.sessionId', 'string', 'nothing (field missing)'],
    ['session.event', { sessionId: 's', event: { type: 'turn/end', seq: 0, time: 0 } }, 'params.event.data', 'object', 'nothing (field missing)'],
    ['session.event', { sessionId: 's', event: 12 }, 'params.event', 'a session event object', 'number 12'],
    ['subagent.started', { parentSessionId: 'p' }, 'params.childSessionId', 'string', 'nothing (field missing)'],
    ['subagent.finished', { provider: 'p', agentId: 'a', parentSessionId: 'p', childSessionId: 'c', status: 'ok', stopReason: 'completed', lastAssistantMessage: 'text' }, 'params.lastAssistantMessage', 'array', 'string "text"'],
    ['session.status', null, 'params', 'object', 'null'],
  ])('rejects malformed %s params naming the field', (method, params, path, expected, received) => {
    expect(parseSdkNotification(method, params)).toMatchObject({ ok: false, error: { path, expected, received } });
  });
});

describe('request params', () => {
  it('validates initialize and session/prompt', () => {
    expect(parseInitializeParams({ cwd: '/w', provider: 'deepseek', model: 'deepseek-chat' })).toMatchObject({ ok: true, value: { provider: 'deepseek' } });
    expect(parsePromptParams({ sessionId: 's', contentBlocks: [{ type: 'text', text: 'hi' }] })).toMatchObject({ ok: true });
    expect(parsePromptParams({ sessionId: 's', contentBlocks: 'hi' })).toMatchObject({ ok: false, error: { path: 'params.contentBlocks' } });
  });
});
