import { describe, expect, it } from 'vitest';
import {
  ACP_AGENT_METHODS,
  ACP_CLIENT_METHODS,
  acpErrorText,
  acpMetaQuota,
  agentToolName,
  parseAcpPermissionRequest,
  parseAcpPermissionResponse,
  isKnownSessionUpdate,
  parseAcpCancelParams,
  parseAcpInitializeResult,
  parseAcpNewSessionResult,
  parseAcpPromptParams,
  parseAcpPromptResult,
  parseAcpSessionUpdate,
  tokenUsageFromAcp,
} from '../../src/wire/acp-protocol.js';

describe('method names', () => {
  it('spells the methods a prompt turn travels through as the protocol does', () => {
    expect([
      ACP_AGENT_METHODS.initialize,
      ACP_AGENT_METHODS.sessionNew,
      ACP_AGENT_METHODS.sessionPrompt,
      ACP_AGENT_METHODS.sessionCancel,
    ]).toEqual(['initialize', 'session/new', 'session/prompt', 'session/cancel']);
    expect([ACP_CLIENT_METHODS.sessionUpdate, ACP_CLIENT_METHODS.requestPermission]).toEqual([
      'session/update',
      'session/request_permission',
    ]);
  });
});

describe('parseAcpPromptParams', () => {
  it('keeps the W3C trace context of _meta', () => {
    const params = {
      sessionId: 's1',
      prompt: [{ type: 'text', text: 'Find the config' }],
      _meta: {
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        tracestate: 'vendor=1',
        baggage: 'team=a',
        other: 3,
      },
    };
    expect(parseAcpPromptParams(params)).toEqual({
      ok: true,
      value: {
        sessionId: 's1',
        prompt: [{ type: 'text', text: 'Find the config' }],
        _meta: {
          traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
          tracestate: 'vendor=1',
          baggage: 'team=a',
          other: 3,
        },
      },
    });
  });

  it('treats a null _meta as absent and accepts non-text prompt blocks', () => {
    expect(
      parseAcpPromptParams({
        sessionId: 's1',
        prompt: [{ type: 'image', data: 'AA==', mimeType: 'image/png' }],
        _meta: null,
      }),
    ).toEqual({
      ok: true,
      value: { sessionId: 's1', prompt: [{ type: 'image', data: 'AA==', mimeType: 'image/png' }] },
    });
  });

  it.each([
    [{ prompt: [] }, 'params.sessionId', 'string', 'nothing (field missing)'],
    [{ sessionId: 's', prompt: 'hi' }, 'params.prompt', 'array', 'string "hi"'],
    [{ sessionId: 's', prompt: [{ type: 'text' }] }, 'params.prompt.0.text', 'string', 'nothing (field missing)'],
    [{ sessionId: 's', prompt: [], _meta: { traceparent: 7 } }, 'params._meta.traceparent', 'string', 'number 7'],
  ])('rejects malformed prompt params naming the field (%j)', (params, path, expected, received) => {
    expect(parseAcpPromptParams(params)).toMatchObject({
      ok: false,
      error: { code: 'invalid', path, expected, received },
    });
  });
});

describe('parseAcpPromptResult', () => {
  it('reads a v1 stop reason with its usage as reported', () => {
    expect(
      parseAcpPromptResult({
        stopReason: 'max_tokens',
        usage: { inputTokens: 2510, outputTokens: 304, totalTokens: 2814, thoughtTokens: null },
      }),
    ).toEqual({
      ok: true,
      value: { stopReason: 'max_tokens', usage: { inputTokens: 2510, outputTokens: 304, totalTokens: 2814 } },
    });
  });

  it('keeps a stop reason protocol v1 does not define verbatim', () => {
    expect(parseAcpPromptResult({ stopReason: 'paused_for_review' })).toEqual({
      ok: true,
      value: { stopReason: 'paused_for_review' },
    });
  });

  it('reads a draft-v2 acceptance without a stop reason', () => {
    expect(parseAcpPromptResult({ messageId: 'm-1', usage: null })).toEqual({ ok: true, value: { messageId: 'm-1' } });
  });

  it.each([
    [{}, 'result.stopReason', 'string', 'nothing (field missing)'],
    [{ stopReason: 3 }, 'result.stopReason', 'string', 'number 3'],
    [
      { stopReason: 'end_turn', usage: { inputTokens: -1, outputTokens: 0 } },
      'result.usage.inputTokens',
      'number >= 0',
      'number -1',
    ],
    [null, 'result', 'object', 'null'],
  ])('rejects a malformed result naming the field (%j)', (result, path, expected, received) => {
    expect(parseAcpPromptResult(result)).toMatchObject({ ok: false, error: { path, expected, received } });
  });
});

describe('parseAcpSessionUpdate', () => {
  it('validates an agent message chunk', () => {
    const params = {
      sessionId: 's1',
      update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Hello' }, messageId: 'm1' },
    };
    const result = parseAcpSessionUpdate(params);
    expect(result).toEqual({ ok: true, known: true, value: params });
  });

  it('accepts chunks of non-text blocks without a text field', () => {
    const params = {
      sessionId: 's1',
      update: { sessionUpdate: 'agent_message_chunk', content: { type: 'image', data: 'AA==', mimeType: 'image/png' } },
    };
    expect(parseAcpSessionUpdate(params)).toEqual({ ok: true, known: true, value: params });
  });

  it('validates tool calls and their updates', () => {
    const call = {
      sessionId: 's1',
      update: {
        sessionUpdate: 'tool_call',
        toolCallId: 'c1',
        title: 'Read config.json',
        kind: 'read',
        status: 'pending',
      },
    };
    const change = { sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'failed', title: null };
    expect(parseAcpSessionUpdate(call)).toEqual({ ok: true, known: true, value: call });
    expect(parseAcpSessionUpdate({ sessionId: 's1', update: change })).toEqual({
      ok: true,
      known: true,
      value: { sessionId: 's1', update: change },
    });
  });

  it('reads a draft-v2 idle state update with its stop reason and failure', () => {
    const params = {
      sessionId: 's1',
      update: {
        sessionUpdate: 'state_update',
        state: 'idle',
        stopReason: 'error',
        error: { code: -32603, message: 'model unavailable' },
      },
    };
    expect(parseAcpSessionUpdate(params)).toEqual({
      ok: true,
      known: true,
      value: {
        sessionId: 's1',
        update: {
          sessionUpdate: 'state_update',
          state: 'idle',
          stopReason: 'error',
          error: { code: -32603, message: 'model unavailable' },
        },
      },
    });
  });

  it('drops a malformed state-update stop reason instead of rejecting the update', () => {
    expect(
      parseAcpSessionUpdate({
        sessionId: 's1',
        update: { sessionUpdate: 'state_update', state: 'idle', stopReason: 5 },
      }),
    ).toEqual({
      ok: true,
      known: true,
      value: { sessionId: 's1', update: { sessionUpdate: 'state_update', state: 'idle' } },
    });
  });

  it('accepts an unknown update kind as unknown, never as an error', () => {
    const params = { sessionId: 's1', update: { sessionUpdate: 'hologram', beams: 3 } };
    const result = parseAcpSessionUpdate(params);
    expect(result).toEqual({ ok: true, known: false, value: params });
    expect(result.ok && isKnownSessionUpdate(result.value.update)).toBe(false);
  });

  it.each([
    [{ update: {} }, 'params.sessionId', 'string', 'nothing (field missing)'],
    [{ sessionId: 's', update: 'x' }, 'params.update', 'an update object', 'string "x"'],
    [{ sessionId: 's', update: {} }, 'params.update.sessionUpdate', 'string', 'nothing (field missing)'],
    [
      { sessionId: 's', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 4 } } },
      'params.update.content.text',
      'string',
      'number 4',
    ],
    [
      { sessionId: 's', update: { sessionUpdate: 'tool_call', toolCallId: 'c1' } },
      'params.update.title',
      'string',
      'nothing (field missing)',
    ],
    [
      { sessionId: 's', update: { sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 1 } },
      'params.update.status',
      'string',
      'number 1',
    ],
    [
      { sessionId: 's', update: { sessionUpdate: 'state_update' } },
      'params.update.state',
      'string',
      'nothing (field missing)',
    ],
  ])('rejects a malformed update naming the field (%j)', (params, path, expected, received) => {
    expect(parseAcpSessionUpdate(params)).toMatchObject({ ok: false, error: { path, expected, received } });
  });
});

describe('small payloads', () => {
  it('reads the session id of session/new and session/cancel', () => {
    expect(parseAcpNewSessionResult({ sessionId: 'sess-9', modes: null })).toMatchObject({
      ok: true,
      value: { sessionId: 'sess-9' },
    });
    expect(parseAcpNewSessionResult({})).toMatchObject({ ok: false, error: { path: 'result.sessionId' } });
    expect(parseAcpCancelParams({ sessionId: 'sess-9' })).toMatchObject({ ok: true, value: { sessionId: 'sess-9' } });
    expect(parseAcpCancelParams({ session: 'x' })).toMatchObject({ ok: false, error: { path: 'params.sessionId' } });
  });

  it('reads agentInfo from initialize, absent when null', () => {
    expect(
      parseAcpInitializeResult({ protocolVersion: 1, agentInfo: { name: 'claude-code', title: null, version: '2.0' } }),
    ).toEqual({
      ok: true,
      value: { protocolVersion: 1, agentInfo: { name: 'claude-code', version: '2.0' } },
    });
    expect(parseAcpInitializeResult({ protocolVersion: 1, agentInfo: null })).toEqual({
      ok: true,
      value: { protocolVersion: 1 },
    });
    expect(parseAcpInitializeResult({ agentInfo: { version: '1' } })).toMatchObject({
      ok: false,
      error: { path: 'result.agentInfo.name' },
    });
  });

  it('converts reported usage field by field without inventing numbers', () => {
    expect(
      tokenUsageFromAcp({ inputTokens: 10, outputTokens: 4, totalTokens: 20, thoughtTokens: 2, cachedReadTokens: 6 }),
    ).toEqual({
      inputTokens: 10,
      outputTokens: 4,
      reasoningTokens: 2,
      cacheReadTokens: 6,
    });
    expect(tokenUsageFromAcp({ inputTokens: 1, outputTokens: 2 })).toEqual({ inputTokens: 1, outputTokens: 2 });
  });
});

describe('shapes real agents send', () => {
  it('keeps a prompt result _meta object and drops one that is not an object', () => {
    const meta = { quota: { token_count: { input_tokens: 1200, output_tokens: 17 } } };
    expect(parseAcpPromptResult({ stopReason: 'end_turn', _meta: meta })).toEqual({
      ok: true,
      value: { stopReason: 'end_turn', _meta: meta },
    });
    expect(parseAcpPromptResult({ stopReason: 'end_turn', _meta: 'x' })).toEqual({
      ok: true,
      value: { stopReason: 'end_turn' },
    });
  });

  it('reads gemini-cli _meta.quota.token_count as reported, and nothing from a malformed one', () => {
    expect(
      acpMetaQuota({
        quota: {
          token_count: { input_tokens: 2400, output_tokens: 34 },
          model_usage: [{ model: 'gemini-3.1-pro-preview' }, { model: 'auto' }],
        },
      }),
    ).toEqual({
      inputTokens: 2400,
      outputTokens: 34,
      models: ['gemini-3.1-pro-preview', 'auto'],
    });
    expect(acpMetaQuota({ quota: { token_count: { input_tokens: 1.5, output_tokens: 3 } } })).toBeUndefined();
    expect(acpMetaQuota({ quota: { token_count: { input_tokens: 1 } } })).toBeUndefined();
    expect(acpMetaQuota({ quota: [] })).toBeUndefined();
    expect(acpMetaQuota(undefined)).toBeUndefined();
  });

  it('keeps a well-formed usage_update cost and drops a malformed one without rejecting the update', () => {
    const parse = (cost: unknown) =>
      parseAcpSessionUpdate({
        sessionId: 's',
        update: { sessionUpdate: 'usage_update', used: 1401, size: 200000, cost },
      });
    expect(parse({ amount: 0.00783, currency: 'USD' })).toEqual({
      ok: true,
      known: true,
      value: {
        sessionId: 's',
        update: { sessionUpdate: 'usage_update', used: 1401, size: 200000, cost: { amount: 0.00783, currency: 'USD' } },
      },
    });
    expect(parse({ amount: 'a lot' })).toEqual({
      ok: true,
      known: true,
      value: { sessionId: 's', update: { sessionUpdate: 'usage_update', used: 1401, size: 200000 } },
    });
  });

  it("finds the agent's own tool name in _meta", () => {
    expect(agentToolName({ claudeCode: { toolName: 'Bash' } })).toBe('Bash');
    expect(agentToolName({ terminal_info: { terminal_id: 't' }, other: { toolName: 'exec' } })).toBe('exec');
    expect(agentToolName({ claudeCode: { toolName: '' } })).toBeUndefined();
    expect(agentToolName(null)).toBeUndefined();
    expect(agentToolName('Bash')).toBeUndefined();
    expect(
      parseAcpSessionUpdate({
        sessionId: 's',
        update: { sessionUpdate: 'tool_call', toolCallId: 'c', title: 'T', _meta: 'odd' },
      }).ok,
    ).toBe(true);
  });

  it('reads a permission request with its inline tool call, and each answer', () => {
    expect(
      parseAcpPermissionRequest({
        sessionId: 's',
        toolCall: { toolCallId: 'c', title: 'echo hi', kind: 'execute', status: 'pending', locations: [] },
        options: [
          { optionId: 'proceed_once', name: 'Allow', kind: 'allow_once' },
          { optionId: 'x', kind: null },
        ],
      }),
    ).toEqual({
      ok: true,
      value: {
        sessionId: 's',
        toolCall: { toolCallId: 'c', title: 'echo hi', kind: 'execute', status: 'pending', locations: [] },
        options: [{ optionId: 'proceed_once', name: 'Allow', kind: 'allow_once' }, { optionId: 'x' }],
      },
    });
    expect(parseAcpPermissionRequest({ sessionId: 's', toolCall: { title: 'no id' }, options: [] }).ok).toBe(false);
    expect(parseAcpPermissionResponse({ outcome: { outcome: 'selected', optionId: 'allow' } })).toEqual({
      ok: true,
      value: { outcome: 'selected', optionId: 'allow' },
    });
    expect(parseAcpPermissionResponse({ outcome: { outcome: 'cancelled' } })).toEqual({
      ok: true,
      value: { outcome: 'cancelled' },
    });
    expect(parseAcpPermissionResponse({ outcome: { outcome: 'selected' } }).ok).toBe(false);
    expect(parseAcpPermissionResponse({}).ok).toBe(false);
  });

  it('joins an error message with the cause codex puts in data.message, never twice', () => {
    expect(
      acpErrorText({
        message: 'Internal error',
        data: { message: 'unexpected status 401 Unauthorized', codex_error_info: 'other' },
      }),
    ).toBe('Internal error: unexpected status 401 Unauthorized');
    expect(acpErrorText({ message: 'Internal error: boom', data: 'boom' })).toBe('Internal error: boom');
    expect(acpErrorText({ message: 'Rate limit exceeded. Try again later.' })).toBe(
      'Rate limit exceeded. Try again later.',
    );
    expect(acpErrorText({ message: '', data: { message: 'only here' } })).toBe('only here');
  });
});
