import { describe, expect, it } from 'vitest';
import {
  isReceipt,
  parseInitializeParams,
  parsePromptParams,
  parsePromptResult,
  parseSdkNotification,
  SDK_REQUESTS,
  upstreamRejectsEvent,
} from '../../src/wire/sdk-protocol.js';
import type { SessionEvent } from '../../src/wire/events.js';

describe('parseSdkNotification', () => {
  it('validates a session.event and keeps the event object', () => {
    const event = { type: 'turn/start', seq: 0, time: 5, data: { turn: 0 } };
    const result = parseSdkNotification('session.event', { sessionId: 's1', event });
    expect(result).toEqual({
      ok: true,
      known: true,
      notification: { method: 'session.event', params: { sessionId: 's1', event }, eventKnown: true },
    });
  });

  it('accepts a session.event whose event type is unknown', () => {
    expect(
      parseSdkNotification('session.event', { sessionId: 's1', event: { type: 'future/x', seq: 1, time: 2 } }),
    ).toMatchObject({
      ok: true,
      known: true,
      notification: { eventKnown: false },
    });
  });

  it('reports an unknown method as unknown, not as an error', () => {
    expect(parseSdkNotification('session.telepathy', { anything: 1 })).toEqual({
      ok: true,
      known: false,
      method: 'session.telepathy',
    });
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
    expect(parseSdkNotification('subagent.finished', params)).toEqual({
      ok: true,
      known: true,
      notification: { method: 'subagent.finished', params },
    });
  });

  it.each([
    ['session.event', { event: {} }, 'params.sessionId', 'string', 'nothing (field missing)'],
    [
      'session.event',
      { sessionId: 's', event: { type: 'turn/end', seq: 0, time: 0 } },
      'params.event.data',
      'object',
      'nothing (field missing)',
    ],
    ['session.event', { sessionId: 's', event: 12 }, 'params.event', 'a session event object', 'number 12'],
    ['subagent.started', { parentSessionId: 'p' }, 'params.childSessionId', 'string', 'nothing (field missing)'],
    [
      'subagent.finished',
      {
        provider: 'p',
        agentId: 'a',
        parentSessionId: 'p',
        childSessionId: 'c',
        status: 'ok',
        stopReason: 'completed',
        lastAssistantMessage: 'text',
      },
      'params.lastAssistantMessage',
      'array',
      'string "text"',
    ],
    ['session.status', null, 'params', 'object', 'null'],
  ])('rejects malformed %s params naming the field', (method, params, path, expected, received) => {
    expect(parseSdkNotification(method, params)).toMatchObject({ ok: false, error: { path, expected, received } });
  });
});

describe('request params', () => {
  it('validates initialize and session/prompt', () => {
    expect(parseInitializeParams({ cwd: '/w', provider: 'deepseek', model: 'deepseek-chat' })).toMatchObject({
      ok: true,
      value: { provider: 'deepseek' },
    });
    expect(parsePromptParams({ sessionId: 's', contentBlocks: [{ type: 'text', text: 'hi' }] })).toMatchObject({
      ok: true,
    });
    expect(parsePromptParams({ sessionId: 's', contentBlocks: 'hi' })).toMatchObject({
      ok: false,
      error: { path: 'params.contentBlocks' },
    });
  });
});

describe('the protocol as upstream types it', () => {
  it('has exactly three requests and no cancel', () => {
    expect(Object.values(SDK_REQUESTS)).toEqual(['initialize', 'session/prompt', 'shutdown']);
  });

  it.each([
    [{ cwd: '/w', provider: 'p', model: 'm' }, true],
    [{ cwd: '/w', provider: 'p', model: 'm', maxTokens: 64 }, true],
    [{ cwd: '/w', provider: 'p', model: 'm', maxTokens: Number.MAX_SAFE_INTEGER }, true],
    [{ provider: 'p', model: 'm' }, false],
    [{ cwd: '/w', model: 'm' }, false],
    [{ cwd: '/w', provider: 'p' }, false],
    [{ cwd: '/w', provider: 'p', model: 'm', maxTokens: 0 }, false],
    [{ cwd: '/w', provider: 'p', model: 'm', maxTokens: 1.5 }, false],
    [{ cwd: '/w', provider: 'p', model: 'm', maxTokens: Number.MAX_SAFE_INTEGER + 1 }, false],
  ])('initialize %j is valid: %s', (params, ok) => {
    expect(parseInitializeParams(params).ok).toBe(ok);
  });

  it('requires a string messageId in the session/prompt result', () => {
    expect(parsePromptResult({ messageId: 'm1' })).toEqual({ ok: true, value: { messageId: 'm1' } });
    expect(parsePromptResult({})).toMatchObject({ ok: false, error: { path: 'result.messageId' } });
    expect(parsePromptResult({ messageId: 7 })).toMatchObject({ ok: false });
    expect(parsePromptResult(null)).toMatchObject({ ok: false });
  });

  it('tells an inbox receipt from a claim and a cancellation', () => {
    const splice = (data: object) => ({ type: 'agent/inbox/spliced', seq: 0, time: 0, data }) as SessionEvent;
    expect(isReceipt(splice({ target: 'next-turn', start: 0, inserted: [{ id: 'm1' }] }))).toBe(true);
    expect(isReceipt(splice({ target: 'next-turn', start: 0, removedCount: 1, inserted: [] }))).toBe(false);
    expect(
      isReceipt(
        splice({ target: 'next-turn', start: 0, removedCount: 1, outcome: 'canceled', inserted: [{ id: 'm2' }] }),
      ),
    ).toBe(false);
    expect(isReceipt(splice({ target: 'next-turn', start: 0, inserted: [] }))).toBe(false);
    expect(isReceipt({ type: 'turn/start', seq: 0, time: 0, data: { turn: 0 } })).toBe(false);
  });

  it.each([
    [42, true],
    [{ seq: 0 }, true],
    [{ type: 'assistant/message', data: { message: { content: 'not-an-array' } } }, true],
    [{ type: 'assistant/message', data: { message: { content: [{ text: 'no type' }] } } }, true],
    [{ type: 'assistant/message' }, true],
    [{ type: 'assistant/message', data: { message: { content: [{ type: 'text', text: 'x' }] } } }, false],
    [{ type: 'step/start', data: { turn: 'one' } }, false],
    [{ type: 'future/thing' }, false],
  ])("upstream's client rejects the event %j: %s", (event, rejected) => {
    expect(upstreamRejectsEvent(event)).toBe(rejected);
  });
});
