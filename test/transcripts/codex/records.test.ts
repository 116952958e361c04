/**
 * Codex rollout lines at the wire layer: each record type parsed into its
 * typed form, unknown types accepted as `other`, bad lines rejected with a
 * `WireError` naming the field, and the JSON-inside-strings decoders (collab
 * tool outputs, subagent notifications, inter-agent messages).
 */
import { describe, expect, it } from 'vitest';
import {
  codexArgument,
  isCodexWireError,
  parseCodexAgentStatus,
  parseCodexCollabOutput,
  parseCodexInterAgentMessage,
  parseCodexLine,
  parseCodexSource,
  parseCodexSubagentNotification,
  toolOutput,
  type CodexRecord,
} from '../../../src/transcripts/codex/records.js';
import type { WireError } from '../../../src/wire/wire-error.js';

const TS = '2026-04-20T10:00:00.000Z';
const T = Date.parse(TS);

function line(type: string, payload: unknown, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ timestamp: TS, ...extra, type, payload });
}

function record(text: string): CodexRecord {
  const parsed = parseCodexLine(text);
  if (isCodexWireError(parsed)) throw new Error(`unexpected wire error: ${parsed.message}`);
  return parsed;
}

function failure(text: string): WireError {
  const parsed = parseCodexLine(text);
  if (!isCodexWireError(parsed)) throw new Error(`expected a wire error, got ${parsed.kind}`);
  return parsed;
}

describe('parseCodexLine: session_meta', () => {
  it('reads a root thread of Codex Desktop 0.104 (the real line 1 shape)', () => {
    const text = line('session_meta', {
      id: '019c8bfe-ec25-79e0-97d7-bda6a9c575ff',
      timestamp: '2026-02-23T19:34:25.573Z',
      cwd: '/redacted/path',
      originator: 'Codex Desktop',
      cli_version: '0.104.0-alpha.1',
      source: 'vscode',
      model_provider: 'openai',
      base_instructions: { text: 'x' },
      git: { branch: 'main' },
    });
    expect(record(text)).toEqual({
      time: T,
      kind: 'session_meta',
      meta: {
        id: '019c8bfe-ec25-79e0-97d7-bda6a9c575ff',
        timestamp: '2026-02-23T19:34:25.573Z',
        originator: 'Codex Desktop',
        cliVersion: '0.104.0-alpha.1',
        modelProvider: 'openai',
        source: { kind: 'client', name: 'vscode' },
        cwd: '/redacted/path',
        gitBranch: 'main',
      },
    });
  });

  it('reads a spawned child with its parent, role, path and history start ordinal', () => {
    const text = line(
      'session_meta',
      {
        id: 'child',
        forked_from_id: 'parent',
        session_id: 'root',
        parent_thread_id: 'parent',
        source: {
          subagent: {
            thread_spawn: {
              parent_thread_id: 'parent',
              depth: 2,
              agent_path: '/root/a/b',
              agent_nickname: 'Ada',
              agent_role: 'explorer',
            },
          },
        },
        agent_nickname: 'Ada',
        agent_role: 'explorer',
        agent_path: '/root/a/b',
        subagent_history_start_ordinal: 7,
      },
      { ordinal: 0 },
    );
    expect(record(text)).toEqual({
      time: T,
      ordinal: 0,
      kind: 'session_meta',
      meta: {
        id: 'child',
        forkedFromId: 'parent',
        sessionId: 'root',
        parentThreadId: 'parent',
        agentNickname: 'Ada',
        agentRole: 'explorer',
        agentPath: '/root/a/b',
        historyStartOrdinal: 7,
        source: {
          kind: 'thread-spawn',
          parentThreadId: 'parent',
          depth: 2,
          agentPath: '/root/a/b',
          agentNickname: 'Ada',
          agentRole: 'explorer',
        },
      },
    });
  });

  it('rejects a session_meta without an id, naming the field', () => {
    expect(failure(line('session_meta', { cwd: '/x' }))).toMatchObject({
      code: 'invalid',
      path: 'payload.id',
      expected: 'string',
    });
  });
});

describe('parseCodexSource', () => {
  it.each([
    ['vscode', { kind: 'client', name: 'vscode' }],
    [{ custom: 'atlas' }, { kind: 'client', name: 'atlas' }],
    [{ subagent: 'review' }, { kind: 'internal-subagent', name: 'review' }],
    [{ subagent: 'compact' }, { kind: 'internal-subagent', name: 'compact' }],
    [{ subagent: 'memory_consolidation' }, { kind: 'internal-subagent', name: 'memory_consolidation' }],
    [{ subagent: { other: 'guardian' } }, { kind: 'internal-subagent', name: 'other:guardian' }],
    [
      { subagent: { thread_spawn: { parent_thread_id: 'p', depth: 1, agent_type: 'worker' } } },
      { kind: 'thread-spawn', parentThreadId: 'p', depth: 1, agentRole: 'worker' },
    ],
    [42, { kind: 'unknown' }],
    [undefined, { kind: 'unknown' }],
  ])('reads %j', (source, expected) => {
    expect(parseCodexSource(source)).toEqual(expected);
  });
});

describe('parseCodexLine: response items', () => {
  it('keeps an assistant message with its parts and phase', () => {
    const text = line('response_item', {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'done' }],
      phase: 'final_answer',
    });
    expect(record(text)).toEqual({
      time: T,
      kind: 'response_item',
      item: {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'done' }],
        phase: 'final_answer',
      },
    });
  });

  it('joins a reasoning item’s summary and content texts, dropping empty ones', () => {
    const text = line('response_item', {
      type: 'reasoning',
      summary: [
        { type: 'summary_text', text: 'plan' },
        { type: 'summary_text', text: '' },
      ],
      content: [{ type: 'reasoning_text', text: 'raw' }],
      encrypted_content: 'gAAA',
    });
    expect(record(text)).toEqual({
      time: T,
      kind: 'response_item',
      item: { type: 'reasoning', texts: ['plan', 'raw'] },
    });
  });

  it('reads function and custom tool calls', () => {
    expect(
      record(
        line('response_item', {
          type: 'function_call',
          name: 'exec_command',
          arguments: '{"cmd":"ls"}',
          call_id: 'c1',
        }),
      ),
    ).toMatchObject({
      item: { type: 'function_call', callId: 'c1', name: 'exec_command', arguments: '{"cmd":"ls"}' },
    });
    expect(
      record(
        line('response_item', {
          type: 'custom_tool_call',
          status: 'completed',
          call_id: 'c2',
          name: 'apply_patch',
          input: '*** Begin Patch',
        }),
      ),
    ).toMatchObject({
      item: { type: 'custom_tool_call', callId: 'c2', name: 'apply_patch', input: '*** Begin Patch' },
    });
  });

  it('reads a tool output given as a string, as content items, or as an older {content, success} object', () => {
    expect(
      record(line('response_item', { type: 'function_call_output', call_id: 'c1', output: 'plain' })),
    ).toMatchObject({ item: { callId: 'c1', output: { text: 'plain' } } });
    expect(
      toolOutput([
        { type: 'input_text', text: 'a' },
        { type: 'input_image', image_url: 'data:' },
        { type: 'input_text', text: 'b' },
      ]),
    ).toEqual({ text: 'a\nb' });
    expect(toolOutput({ content: 'failed to run', success: false })).toEqual({ text: 'failed to run', success: false });
    expect(toolOutput(null)).toEqual({ text: '' });
  });

  it('accepts an item type it does not know as other', () => {
    expect(record(line('response_item', { type: 'ghost_snapshot', ghost_commit: {} }))).toEqual({
      time: T,
      kind: 'response_item',
      item: { type: 'other', itemType: 'ghost_snapshot' },
    });
  });

  it('rejects a function call without a call id', () => {
    expect(failure(line('response_item', { type: 'function_call', name: 'x', arguments: '{}' }))).toMatchObject({
      code: 'invalid',
      path: 'payload.call_id',
    });
  });
});

describe('parseCodexLine: events', () => {
  it('reads turn starts and ends under both wire names', () => {
    expect(
      record(line('event_msg', { type: 'task_started', turn_id: 't1', model_context_window: 258400 })),
    ).toMatchObject({ event: { type: 'task_started', turnId: 't1' } });
    expect(record(line('event_msg', { type: 'turn_started', turn_id: 't2' }))).toMatchObject({
      event: { type: 'task_started', turnId: 't2' },
    });
    expect(record(line('event_msg', { type: 'task_complete', turn_id: 't1', last_agent_message: null }))).toMatchObject(
      { event: { type: 'task_complete', turnId: 't1', lastAgentMessage: null } },
    );
    expect(record(line('event_msg', { type: 'turn_complete', turn_id: 't2', last_agent_message: 'ok' }))).toMatchObject(
      { event: { type: 'task_complete', lastAgentMessage: 'ok' } },
    );
    expect(record(line('event_msg', { type: 'turn_aborted', turn_id: 't3', reason: 'interrupted' }))).toMatchObject({
      event: { type: 'turn_aborted', turnId: 't3', reason: 'interrupted' },
    });
  });

  it('reads a token_count with info null as no usage, and one with totals in Codex’s own buckets', () => {
    expect(record(line('event_msg', { type: 'token_count', info: null, rate_limits: null }))).toEqual({
      time: T,
      kind: 'event_msg',
      event: { type: 'token_count' },
    });
    const usage = {
      input_tokens: 42772,
      cached_input_tokens: 3456,
      output_tokens: 204,
      reasoning_output_tokens: 124,
      total_tokens: 42976,
    };
    expect(
      record(
        line('event_msg', {
          type: 'token_count',
          info: { total_token_usage: usage, last_token_usage: usage, model_context_window: 258400 },
        }),
      ),
    ).toEqual({
      time: T,
      kind: 'event_msg',
      event: {
        type: 'token_count',
        total: {
          inputTokens: 42772,
          cachedInputTokens: 3456,
          outputTokens: 204,
          reasoningOutputTokens: 124,
          totalTokens: 42976,
        },
        last: {
          inputTokens: 42772,
          cachedInputTokens: 3456,
          outputTokens: 204,
          reasoningOutputTokens: 124,
          totalTokens: 42976,
        },
      },
    });
  });

  it('reads an error with the variant of its codex_error_info', () => {
    expect(record(line('event_msg', { type: 'error', message: 'boom', codex_error_info: 'other' }))).toMatchObject({
      event: { type: 'error', message: 'boom', errorInfo: 'other' },
    });
    expect(
      record(
        line('event_msg', {
          type: 'error',
          message: 'x',
          codex_error_info: { response_stream_disconnected: { http_status_code: null } },
        }),
      ),
    ).toMatchObject({
      event: { errorInfo: 'response_stream_disconnected' },
    });
  });

  it('reads the collab end events of extended history', () => {
    expect(
      record(
        line('event_msg', {
          type: 'collab_agent_spawn_end',
          call_id: 'c',
          sender_thread_id: 'p',
          new_thread_id: 'k',
          prompt: '',
          model: 'm',
          reasoning_effort: 'low',
          status: 'running',
        }),
      ),
    ).toMatchObject({
      event: { type: 'collab_agent_spawn_end', callId: 'c', newThreadId: 'k' },
    });
    const waiting = record(
      line('event_msg', {
        type: 'collab_waiting_end',
        sender_thread_id: 'p',
        call_id: 'w',
        statuses: { k: { completed: 'text' } },
      }),
    );
    expect(
      waiting.kind === 'event_msg' && waiting.event.type === 'collab_waiting_end'
        ? [...waiting.event.statuses]
        : undefined,
    ).toEqual([['k', { kind: 'completed', message: 'text' }]]);
  });

  it('accepts an event type it does not know as other', () => {
    expect(record(line('event_msg', { type: 'item_completed', item: { type: 'AgentMessage' } }))).toEqual({
      time: T,
      kind: 'event_msg',
      event: { type: 'other', eventType: 'item_completed' },
    });
  });
});

describe('parseCodexLine: other lines', () => {
  it('reads turn_context’s model, compacted, and an unknown line type as other', () => {
    expect(record(line('turn_context', { turn_id: 't1', cwd: '/w', model: 'gpt-5.3-codex', summary: 'auto' }))).toEqual(
      { time: T, kind: 'turn_context', turnId: 't1', model: 'gpt-5.3-codex' },
    );
    expect(record(line('compacted', { message: 'summary' }))).toEqual({ time: T, kind: 'compacted' });
    expect(record(line('session_state', { x: 1 }))).toEqual({ time: T, kind: 'other', type: 'session_state' });
  });

  it('gives NaN for a line without a timestamp', () => {
    expect(record(JSON.stringify({ type: 'compacted', payload: {} })).time).toBeNaN();
  });

  it('rejects text that is not JSON, a JSON value that is not an object, and an object without a type', () => {
    expect(failure('{"timestamp":').code).toBe('not-json');
    expect(failure('[1,2]').code).toBe('not-object');
    expect(failure('{"timestamp":"x","payload":{}}')).toMatchObject({ code: 'invalid', path: 'type' });
  });
});

describe('collab outputs and notifications', () => {
  it('reads spawn_agent outputs of v1 (agent_id) and v2 (task_name)', () => {
    expect(parseCodexCollabOutput('{"agent_id":"019d","nickname":"Euclid"}')).toEqual({
      spawned: '019d',
      statuses: new Map(),
    });
    expect(parseCodexCollabOutput('{"task_name":"/root/scout","nickname":null}')).toEqual({
      spawned: '/root/scout',
      statuses: new Map(),
    });
  });

  it('reads wait_agent statuses by target and close_agent’s previous status under the call’s target', () => {
    expect(
      parseCodexCollabOutput('{"status":{"a":{"completed":"done"},"b":{"errored":"boom"}},"timed_out":false}')
        ?.statuses,
    ).toEqual(
      new Map([
        ['a', { kind: 'completed', message: 'done' }],
        ['b', { kind: 'errored', message: 'boom' }],
      ]),
    );
    expect(parseCodexCollabOutput('{"previous_status":{"completed":null}}', 'a')?.statuses).toEqual(
      new Map([['a', { kind: 'completed', message: undefined }]]),
    );
  });

  it('gives undefined for a tool error in words', () => {
    expect(parseCodexCollabOutput('Agent depth limit reached. Solve the task yourself.')).toBeUndefined();
  });

  it.each([
    [{ completed: 'x' }, { kind: 'completed', message: 'x' }],
    ['completed', { kind: 'completed', message: undefined }],
    [{ errored: 'e' }, { kind: 'errored', message: 'e' }],
    ['running', { kind: 'other', state: 'running' }],
    ['shutdown', { kind: 'other', state: 'shutdown' }],
    [null, { kind: 'other', state: 'unknown' }],
  ])('reads the agent status %j', (value, expected) => {
    expect(parseCodexAgentStatus(value)).toEqual(expected);
  });

  it('reads a subagent notification by agent_path or the older agent_id, tags in any case', () => {
    expect(
      parseCodexSubagentNotification(
        '<subagent_notification>\n{"agent_path":"/root/scout","status":{"completed":"ok"}}\n</subagent_notification>',
      ),
    ).toEqual({
      reference: '/root/scout',
      status: { kind: 'completed', message: 'ok' },
    });
    expect(
      parseCodexSubagentNotification(
        '<SUBAGENT_NOTIFICATION>{"agent_id":"a","status":"completed"}</subagent_notification>',
      ),
    ).toEqual({
      reference: 'a',
      status: { kind: 'completed', message: undefined },
    });
    expect(parseCodexSubagentNotification('no tags here')).toBeUndefined();
  });

  it('recognises an inter-agent message only by its whole JSON shape', () => {
    const relayed = JSON.stringify({
      author: '/root/scout',
      recipient: '/root',
      other_recipients: [],
      content: 'hi',
      trigger_turn: false,
    });
    expect(parseCodexInterAgentMessage([{ type: 'output_text', text: relayed }])).toEqual({
      author: '/root/scout',
      recipient: '/root',
      content: 'hi',
    });
    expect(
      parseCodexInterAgentMessage([{ type: 'output_text', text: '{"author":"a","content":"x"}' }]),
    ).toBeUndefined();
    expect(
      parseCodexInterAgentMessage([
        { type: 'output_text', text: relayed },
        { type: 'output_text', text: 'more' },
      ]),
    ).toBeUndefined();
  });

  it('reads a string argument from a tool call’s JSON arguments', () => {
    expect(codexArgument('{"target":"a","message":"m"}', 'target')).toBe('a');
    expect(codexArgument('{"target":1}', 'target')).toBeUndefined();
    expect(codexArgument('not json', 'target')).toBeUndefined();
  });
});
