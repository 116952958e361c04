/**
 * Claude Code's transcript lines at the wire layer: typed records from the
 * shapes real 2.1.38/2.1.39 files hold, lenient where versions differ,
 * rejected with a `WireError` only when a field the reader needs is of the
 * wrong shape; and telling Claude Code's first lines from other agents'.
 */
import { describe, expect, it } from 'vitest';
import { TRANSCRIPT_CLASSIFIER_VERSION, TRANSCRIPT_FORMATS } from '../../../src/transcripts/formats.js';
import { classifyTranscript } from '../../../src/transcripts/transcripts.js';
import {
  isClaudeCodeLine,
  isClaudeWireError,
  isKnownClaudeRecordType,
  parseClaudeAgentMeta,
  parseClaudeCodeLine,
  parseClaudeTaskResult,
  parseClaudeUsage,
} from '../../../src/transcripts/claude-code/records.js';

const envelope = {
  parentUuid: null,
  isSidechain: false,
  userType: 'external',
  cwd: '/w',
  sessionId: 's-1',
  version: '2.1.39',
  uuid: 'u-1',
  timestamp: '2026-02-11T21:24:21.302Z',
};

describe('parseClaudeCodeLine', () => {
  it('reads an assistant line with its message id, request id, block, usage and the final-usage marker', () => {
    const line = JSON.stringify({
      ...envelope,
      type: 'assistant',
      requestId: 'req_1',
      message: {
        model: 'claude-sonnet-4-5-20250929',
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [{ type: 'text', text: 'hi' }],
        stop_reason: null,
        usage: {
          input_tokens: 6,
          cache_creation_input_tokens: 20135,
          cache_read_input_tokens: 22041,
          cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 20135 },
          output_tokens: 997,
          server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
          service_tier: 'standard',
        },
      },
    });
    expect(parseClaudeCodeLine(line)).toEqual({
      kind: 'assistant',
      uuid: 'u-1',
      parentUuid: null,
      sessionId: 's-1',
      agentId: undefined,
      isSidechain: false,
      time: 1770845061302,
      version: '2.1.39',
      cwd: '/w',
      gitBranch: undefined,
      messageId: 'msg_1',
      requestId: 'req_1',
      model: 'claude-sonnet-4-5-20250929',
      content: [{ type: 'text', text: 'hi' }],
      stopReason: undefined,
      usage: {
        input_tokens: 6,
        output_tokens: 997,
        cache_creation_input_tokens: 20135,
        cache_read_input_tokens: 22041,
        ephemeral_1h_input_tokens: 20135,
        thinking_tokens: undefined,
        isFinal: true,
      },
      isApiError: false,
      error: undefined,
      isSynthetic: false,
    });
  });

  it('reads a synthetic API error record as such', () => {
    const record = parseClaudeCodeLine(
      JSON.stringify({
        ...envelope,
        type: 'assistant',
        isApiErrorMessage: true,
        error: 'max_output_tokens',
        message: {
          id: 'x',
          model: '<synthetic>',
          role: 'assistant',
          content: [{ type: 'text', text: "API Error: Claude's response exceeded the 32000 output token maximum." }],
        },
      }),
    );
    expect(record).toMatchObject({
      kind: 'assistant',
      isApiError: true,
      error: 'max_output_tokens',
      isSynthetic: true,
      usage: undefined,
    });
  });

  it('keeps a line whose usage counts are not numbers, reading them as absent', () => {
    const record = parseClaudeCodeLine(
      JSON.stringify({
        ...envelope,
        type: 'assistant',
        message: { id: 'm', content: [], usage: { input_tokens: 'many', output_tokens: 3 } },
      }),
    );
    expect(record).toMatchObject({
      kind: 'assistant',
      usage: { input_tokens: undefined, output_tokens: 3, isFinal: false },
    });
  });

  it('reads a user line with string content and a tool_result line with its structured result', () => {
    expect(
      parseClaudeCodeLine(JSON.stringify({ ...envelope, type: 'user', message: { role: 'user', content: 'Warmup' } })),
    ).toMatchObject({
      kind: 'user',
      content: 'Warmup',
      isMeta: false,
      isCompactSummary: false,
    });
    const result = { status: 'completed', agentId: 'a881341', content: [{ type: 'text', text: 'done' }] };
    expect(
      parseClaudeCodeLine(
        JSON.stringify({
          ...envelope,
          type: 'user',
          isMeta: true,
          message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }] },
          toolUseResult: result,
        }),
      ),
    ).toMatchObject({
      kind: 'user',
      isMeta: true,
      toolUseResult: result,
      content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }],
    });
  });

  it('reads an agent_progress line with the copy of the subagent line it carries', () => {
    const record = parseClaudeCodeLine(
      JSON.stringify({
        ...envelope,
        type: 'progress',
        parentToolUseID: 'toolu_1',
        data: {
          type: 'agent_progress',
          agentId: 'a881341',
          message: {
            type: 'assistant',
            timestamp: '2026-02-11T21:24:22.960Z',
            message: { id: 'msg_c', model: 'm', content: [{ type: 'tool_use', id: 't', name: 'WebFetch', input: {} }] },
          },
        },
      }),
    );
    expect(record).toMatchObject({
      kind: 'progress',
      progressType: 'agent_progress',
      progressAgentId: 'a881341',
      parentToolUseId: 'toolu_1',
      copied: { kind: 'assistant', messageId: 'msg_c', time: 1770845062960 },
    });
  });

  it('accepts unknown record types and system lines', () => {
    expect(parseClaudeCodeLine('{"type":"file-history-snapshot","messageId":"m","snapshot":{}}')).toMatchObject({
      kind: 'other',
      type: 'file-history-snapshot',
      time: undefined,
    });
    expect(
      parseClaudeCodeLine(JSON.stringify({ ...envelope, type: 'system', subtype: 'stop_hook_summary' })),
    ).toMatchObject({ kind: 'system', subtype: 'stop_hook_summary' });
  });

  it('rejects text that is not JSON, values that are not objects, and assistant lines without message content', () => {
    const notJson = parseClaudeCodeLine('{"type":"assistant",');
    const notObject = parseClaudeCodeLine('[1,2]');
    const noContent = parseClaudeCodeLine(JSON.stringify({ ...envelope, type: 'assistant', message: { id: 'm' } }));
    const noType = parseClaudeCodeLine('{"uuid":"u"}');
    expect([notJson, notObject, noContent, noType].map((r) => (isClaudeWireError(r) ? [r.code, r.path] : r))).toEqual([
      ['not-json', ''],
      ['not-object', ''],
      ['invalid', 'message.content'],
      ['invalid', 'type'],
    ]);
  });
});

describe('parseClaudeCodeLine on members of the wrong type', () => {
  const assistant = {
    ...envelope,
    type: 'assistant',
    requestId: 'req_1',
    message: { id: 'msg_1', model: 'm', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn' },
  };

  it('reads an assistant line whose envelope members are of the wrong type as if they were absent', () => {
    const line = JSON.stringify({ ...assistant, isSidechain: 'no', cwd: 7, requestId: 3 });
    expect(parseClaudeCodeLine(line)).toMatchObject({
      kind: 'assistant',
      isSidechain: undefined,
      cwd: undefined,
      requestId: undefined,
      sessionId: 's-1',
      messageId: 'msg_1',
      stopReason: 'end_turn',
    });
  });

  it('reads a stop reason or model of the wrong type as absent, and rejects content that is no blocks nor text', () => {
    const wrongStop = { ...assistant, message: { ...assistant.message, stop_reason: 5, model: false } };
    expect(parseClaudeCodeLine(JSON.stringify(wrongStop))).toMatchObject({ stopReason: undefined, model: undefined });
    const badBlocks = { ...assistant, message: { ...assistant.message, content: [{ text: 'no type' }] } };
    expect(isClaudeWireError(parseClaudeCodeLine(JSON.stringify(badBlocks)))).toBe(true);
  });

  it('reads progress data of the wrong type as absent, and a user line whose message is no object as invalid', () => {
    const progress = { ...envelope, type: 'progress', parentToolUseID: 'toolu_1', data: ['agent_progress'] };
    expect(parseClaudeCodeLine(JSON.stringify(progress))).toMatchObject({
      kind: 'progress',
      progressType: undefined,
      parentToolUseId: 'toolu_1',
    });
    const user = { ...envelope, type: 'user', isMeta: 'yes', message: 'hello' };
    expect(isClaudeWireError(parseClaudeCodeLine(JSON.stringify(user)))).toBe(true);
    const meta = { ...envelope, type: 'user', isMeta: 'yes', message: { content: 'hello' } };
    expect(parseClaudeCodeLine(JSON.stringify(meta))).toMatchObject({ kind: 'user', isMeta: false, content: 'hello' });
  });
});

describe('isClaudeCodeLine', () => {
  it("claims Claude Code's chain lines and its records outside the chain", () => {
    expect(isClaudeCodeLine({ ...envelope, type: 'user', message: { content: 'hi' } })).toBe(true);
    expect(
      isClaudeCodeLine({ type: 'file-history-snapshot', messageId: 'm', snapshot: {}, isSnapshotUpdate: false }),
    ).toBe(true);
    expect(isClaudeCodeLine({ type: 'summary', summary: 's', leafUuid: 'u' })).toBe(true);
    expect(isClaudeCodeLine({ type: 'queue-operation', operation: 'enqueue', sessionId: 's', timestamp: 't' })).toBe(
      true,
    );
  });

  it('claims the api-request-route record that begins a 2.1.337 session file, and knows its type', () => {
    // Line 1 of a session file Claude Code 2.1.337 wrote against a custom ANTHROPIC_BASE_URL with an API key.
    const route = { type: 'api-request-route', provider: 'customEndpoint', credential: 'key', sessionId: 's' };
    expect(isClaudeCodeLine(route)).toBe(true);
    expect(isClaudeCodeLine({ type: 'api-request-route', provider: 'customEndpoint' })).toBe(false);
    expect(isKnownClaudeRecordType('api-request-route')).toBe(true);
    expect(isKnownClaudeRecordType('future-record')).toBe(false);
    expect(parseClaudeCodeLine(JSON.stringify(route))).toMatchObject({ kind: 'other', type: 'api-request-route' });
    // A session file just begun, whose head holds that record alone, is a Claude Code session (classifier 2).
    const head = { path: '/p/-w/s.jsonl', firstLine: route, prefix: `${JSON.stringify(route)}\n`, records: [route] };
    expect(classifyTranscript(head, TRANSCRIPT_FORMATS)).toMatchObject({ format: 'claude-code', kind: 'session' });
    expect(TRANSCRIPT_CLASSIFIER_VERSION).toBe(2);
  });

  it("claims no other agent's line", () => {
    expect(
      isClaudeCodeLine({ timestamp: '2026-02-23T10:00:00.000Z', type: 'session_meta', payload: { id: 'x' } }),
    ).toBe(false);
    expect(isClaudeCodeLine({ id: 'm1', timestamp: 't', type: 'user', content: 'hi', sessionId: 's' })).toBe(false);
    expect(isClaudeCodeLine({ type: 'session', id: 's', version: 3 })).toBe(false);
    expect(isClaudeCodeLine([{ type: 'user' }])).toBe(false);
  });
});

describe('Task results, usage and sidecars', () => {
  it('reads a Task result: status, agent, content, last request usage', () => {
    expect(
      parseClaudeTaskResult({
        status: 'completed',
        agentId: 'a1',
        content: [{ type: 'text', text: 'x' }],
        totalDurationMs: 5,
        usage: { input_tokens: 1, output_tokens: 2 },
      }),
    ).toEqual({
      status: 'completed',
      agentId: 'a1',
      content: [{ type: 'text', text: 'x' }],
      usage: {
        input_tokens: 1,
        output_tokens: 2,
        cache_creation_input_tokens: undefined,
        cache_read_input_tokens: undefined,
        ephemeral_1h_input_tokens: undefined,
        thinking_tokens: undefined,
        isFinal: false,
      },
      totalDurationMs: 5,
      runId: undefined,
    });
    expect(parseClaudeTaskResult('User rejected tool use')).toBeUndefined();
  });

  it('reads the thinking share of newer usage objects', () => {
    expect(
      parseClaudeUsage({ output_tokens: 40, output_tokens_details: { thinking_tokens: 30 }, iterations: [] }),
    ).toMatchObject({ output_tokens: 40, thinking_tokens: 30, isFinal: true });
    expect(parseClaudeUsage(null)).toBeUndefined();
  });

  it('reads a meta.json sidecar and rejects one that is not an object', () => {
    expect(
      parseClaudeAgentMeta('{"agentType":"Explore","description":"d","toolUseId":"toolu_1","spawnDepth":1}'),
    ).toEqual({ agentType: 'Explore', description: 'd', toolUseId: 'toolu_1' });
    const bad = parseClaudeAgentMeta('"Explore"');
    expect(isClaudeWireError(bad) ? bad.code : bad).toBe('not-object');
  });
});
