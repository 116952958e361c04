/**
 * One Codex thread into its run, driven with literal records: usage from
 * cumulative `token_count` snapshots (null first, repeats, input including
 * the cached part), calls paired with the items before their usage, tool
 * calls, each turn's end and the run's stop reason, the copy of a parent's
 * history a child starts with (by ordinal, by header and time, by the 0.110
 * marker), and what a parent records about its children.
 */
import { describe, expect, it } from 'vitest';
import {
  CodexThreadReader,
  codexErrorStop,
  codexParentResultStop,
  codexUsage,
  findCodexLink,
  isFailedCommandOutput,
  type CodexChildLink,
} from '../../../src/transcripts/codex/runs.js';
import type {
  CodexAgentStatus,
  CodexEvent,
  CodexRecord,
  CodexResponseItem,
  CodexSessionMeta,
  CodexTokenUsage,
} from '../../../src/transcripts/codex/records.js';

const T0 = Date.parse('2026-04-20T10:00:00.000Z');
const ROOT: CodexSessionMeta = { id: 'root-1', source: { kind: 'client', name: 'cli' }, modelProvider: 'openai' };
const CHILD: CodexSessionMeta = {
  id: 'child-1',
  source: { kind: 'thread-spawn', parentThreadId: 'root-1', depth: 1, agentRole: 'explorer' },
  agentRole: 'explorer',
};

const at = (ms: number): number => T0 + ms;
const item = (ms: number, value: CodexResponseItem, ordinal?: number): CodexRecord => ({
  time: at(ms),
  ...(ordinal !== undefined ? { ordinal } : {}),
  kind: 'response_item',
  item: value,
});
const event = (ms: number, value: CodexEvent, ordinal?: number): CodexRecord => ({
  time: at(ms),
  ...(ordinal !== undefined ? { ordinal } : {}),
  kind: 'event_msg',
  event: value,
});
const context = (ms: number, model = 'gpt-5.3-codex'): CodexRecord => ({
  time: at(ms),
  kind: 'turn_context',
  turnId: 't',
  model,
});
const usage = (input: number, cached: number, output: number, reasoning: number): CodexTokenUsage => ({
  inputTokens: input,
  cachedInputTokens: cached,
  outputTokens: output,
  reasoningOutputTokens: reasoning,
  totalTokens: input + output,
});
const tokens = (ms: number, total: CodexTokenUsage, last: CodexTokenUsage = total, ordinal?: number): CodexRecord =>
  event(ms, { type: 'token_count', total, last }, ordinal);
const say = (ms: number, text: string, ordinal?: number): CodexRecord =>
  item(ms, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }, ordinal);
const call = (ms: number, callId: string, name: string, args = '{}'): CodexRecord =>
  item(ms, { type: 'function_call', callId, name, arguments: args });
const output = (ms: number, callId: string, text: string): CodexRecord =>
  item(ms, { type: 'function_call_output', callId, output: { text } });
const started = (ms: number, turnId = 't'): CodexRecord => event(ms, { type: 'task_started', turnId });
const completed = (ms: number, last: string | null = null): CodexRecord =>
  event(ms, { type: 'task_complete', turnId: 't', lastAgentMessage: last });

function read(meta: CodexSessionMeta, records: readonly CodexRecord[], link?: CodexChildLink, parentThreadId?: string) {
  const reader = new CodexThreadReader(meta, T0, {
    traceKey: 'codex:root-1',
    agentName: meta === ROOT ? 'codex' : 'explorer',
    ...(parentThreadId !== undefined ? { parentThreadId } : {}),
    ...(link !== undefined ? { link } : {}),
  });
  for (const record of records) reader.push(record);
  return { reader, record: reader.finish() };
}

describe('usage from token_count snapshots', () => {
  it('takes one call per new cumulative total, skipping info-null and repeated snapshots, input minus cached', () => {
    const { record } = read(ROOT, [
      started(0),
      context(10),
      event(20, { type: 'token_count' }),
      say(1000, 'looking'),
      call(1100, 'c1', 'exec_command'),
      tokens(1200, usage(42772, 3456, 204, 124)),
      output(1300, 'c1', 'Wall time: 0.1 seconds\nProcess exited with code 0\nOutput:\nok'),
      context(1310),
      tokens(1400, usage(42772, 3456, 204, 124)),
      say(2000, 'done'),
      tokens(2100, usage(86990, 46336, 300, 141), usage(44218, 42880, 96, 17)),
      completed(2200, 'done'),
    ]);
    expect(record.steps.map((s) => s.usage)).toEqual([
      { inputTokens: 39316, outputTokens: 204, cacheReadTokens: 3456, reasoningTokens: 124 },
      { inputTokens: 1338, outputTokens: 96, cacheReadTokens: 42880, reasoningTokens: 17 },
    ]);
    expect(record.usage).toEqual({
      inputTokens: 40654,
      outputTokens: 300,
      cacheReadTokens: 46336,
      cacheWriteTokens: 0,
      reasoningTokens: 141,
      reported: true,
    });
    expect(record.steps.map((s) => s.model)).toEqual(['gpt-5.3-codex', 'gpt-5.3-codex']);
    expect(record.usageNotes).toBeUndefined();
  });

  it('pairs each usage with the items recorded before it: reasoning, text and tool calls in order', () => {
    const { record } = read(ROOT, [
      started(0),
      context(5),
      item(10, { type: 'reasoning', texts: ['plan'] }),
      say(20, 'running it'),
      call(30, 'c1', 'exec_command', '{"cmd":"ls"}'),
      tokens(40, usage(100, 0, 10, 2)),
      say(100, 'final'),
      tokens(110, usage(300, 100, 30, 2)),
      completed(120, 'final'),
    ]);
    expect(record.steps.map((s) => [s.startTime - T0, s.endTime - T0])).toEqual([
      [10, 40],
      [100, 110],
    ]);
    expect(record.output).toEqual([{ type: 'text', text: 'final' }]);
    expect(record.toolCalls).toEqual([{ callId: 'c1', name: 'exec_command', startTime: at(30), isError: false }]);
  });

  it('notes a delta that differs from last_token_usage, a total that went down, a call without usage, and calls without a model', () => {
    const noted = read(ROOT, [
      started(0),
      say(10, 'a'),
      tokens(20, usage(100, 0, 10, 0), usage(60, 0, 5, 0)),
      completed(30, 'a'),
    ]).record;
    expect(noted.usageNotes).toEqual(['codex:usage-delta-not-last', 'codex:model-unknown']);
    const reset = read(ROOT, [
      started(0),
      context(1),
      tokens(20, usage(100, 0, 10, 0)),
      say(30, 'b'),
      tokens(40, usage(50, 0, 0, 0)),
      completed(50, 'b'),
    ]).record;
    expect(reset.usageNotes).toEqual(['codex:usage-total-reset', 'codex:call-without-usage']);
    expect(reset.usage.inputTokens).toBe(100);
    expect(reset.output).toEqual([{ type: 'text', text: 'b' }]);
  });

  it('converts Codex buckets once: cached out of input, reasoning kept inside output', () => {
    expect(codexUsage(usage(1000, 800, 50, 20))).toEqual({
      inputTokens: 200,
      outputTokens: 50,
      cacheReadTokens: 800,
      reasoningTokens: 20,
    });
    expect(codexUsage({ ...usage(10, 20, 5, 0) })).toEqual({
      inputTokens: 0,
      outputTokens: 5,
      cacheReadTokens: 20,
      reasoningTokens: 0,
    });
  });
});

describe('stop reasons', () => {
  it('is completed from task_complete', () => {
    const { record } = read(ROOT, [started(0), say(10, 'ok'), completed(20, 'ok')]);
    expect([record.stopReason, record.stopReasonInferredFrom]).toEqual(['completed', 'codex:task_complete']);
  });

  it('is max-tokens when the turn recorded the incomplete-response error, even with a later task_complete', () => {
    const message = 'stream disconnected before completion: Incomplete response returned, reason: max_output_tokens';
    const { record } = read(ROOT, [
      started(0),
      say(10, 'partial'),
      event(20, { type: 'error', message, errorInfo: 'other' }),
      completed(30),
    ]);
    expect([record.stopReason, record.stopReasonInferredFrom, record.diagnostic]).toEqual([
      'max-tokens',
      'codex:incomplete:max_output_tokens',
      message,
    ]);
  });

  it('is error for another error, refusal for content_filter, and an error that does not affect a turn is no evidence', () => {
    expect(
      read(ROOT, [
        started(0),
        event(10, { type: 'error', message: 'unexpected status 500', errorInfo: 'internal_server_error' }),
        completed(20),
      ]).record,
    ).toMatchObject({
      stopReason: 'error',
      stopReasonInferredFrom: 'codex:error:internal_server_error',
    });
    expect(
      read(ROOT, [
        started(0),
        event(10, { type: 'error', message: 'Incomplete response returned, reason: content_filter' }),
        completed(20),
      ]).record,
    ).toMatchObject({
      stopReason: 'refusal',
      stopReasonInferredFrom: 'codex:incomplete:content_filter',
    });
    expect(
      read(ROOT, [
        started(0),
        event(10, { type: 'error', message: 'rollback failed', errorInfo: 'thread_rollback_failed' }),
        completed(20),
      ]).record,
    ).toMatchObject({
      stopReason: 'completed',
      stopReasonInferredFrom: 'codex:task_complete',
    });
  });

  it('is aborted from turn_aborted, with its reason', () => {
    expect(
      read(ROOT, [started(0), event(10, { type: 'turn_aborted', turnId: 't', reason: 'interrupted' })]).record,
    ).toMatchObject({
      stopReason: 'aborted',
      stopReasonInferredFrom: 'codex:turn_aborted:interrupted',
    });
  });

  it('is unknown for a turn that started and never ended, error when that turn recorded an error', () => {
    expect(read(ROOT, [started(0), say(10, 'working')]).record).toMatchObject({
      stopReason: 'unknown',
      stopReasonInferredFrom: 'none',
    });
    expect(read(ROOT, [started(0), event(10, { type: 'error', message: 'boom' })]).record).toMatchObject({
      stopReason: 'error',
      stopReasonInferredFrom: 'codex:error',
    });
    expect(read(ROOT, []).record).toMatchObject({ stopReason: 'unknown', stopReasonInferredFrom: 'none' });
  });

  it('is the last turn’s: an earlier error gives way to a later completion, an earlier truncation does not', () => {
    const errorFirst = read(ROOT, [
      started(0, 'a'),
      event(10, { type: 'error', message: 'boom' }),
      completed(20),
      started(30, 'b'),
      completed(40, 'ok'),
    ]).record;
    expect([errorFirst.stopReason, errorFirst.stopReasonInferredFrom]).toEqual(['completed', 'codex:task_complete']);
    const cutFirst = read(ROOT, [
      started(0, 'a'),
      event(10, { type: 'error', message: 'Incomplete response returned, reason: max_output_tokens' }),
      completed(20),
      started(30, 'b'),
      completed(40, 'ok'),
    ]).record;
    expect([cutFirst.stopReason, cutFirst.stopReasonInferredFrom]).toEqual([
      'max-tokens',
      'codex:incomplete:max_output_tokens',
    ]);
    const abortedLast = read(ROOT, [
      started(0, 'a'),
      event(10, { type: 'error', message: 'Incomplete response returned, reason: max_output_tokens' }),
      completed(20),
      started(30, 'b'),
      event(40, { type: 'turn_aborted', turnId: 'b', reason: 'interrupted' }),
    ]).record;
    expect(abortedLast.stopReason).toBe('aborted');
  });

  it('maps error texts and parent results to evidence', () => {
    expect(codexErrorStop('Incomplete response returned, reason: max_output_tokens')).toMatchObject({
      reason: 'max-tokens',
      inferredFrom: 'codex:incomplete:max_output_tokens',
    });
    expect(codexErrorStop('Incomplete response returned, reason: unknown')).toMatchObject({
      reason: 'error',
      inferredFrom: 'codex:incomplete:unknown',
    });
    expect(codexParentResultStop({ kind: 'completed', message: 'x' })).toEqual({
      reason: 'completed',
      inferredFrom: 'codex:parent-result:completed',
    });
    expect(
      codexParentResultStop({
        kind: 'errored',
        message: 'stream disconnected before completion: Incomplete response returned, reason: max_output_tokens',
      }),
    ).toMatchObject({
      reason: 'max-tokens',
      inferredFrom: 'codex:parent-result:incomplete:max_output_tokens',
    });
    expect(codexParentResultStop({ kind: 'errored', message: 'Interrupted' })).toMatchObject({
      reason: 'error',
      inferredFrom: 'codex:parent-result:errored',
    });
    expect(codexParentResultStop({ kind: 'other', state: 'shutdown' })).toBeUndefined();
  });
});

describe('tool calls', () => {
  it('records function, custom and web search calls; a non-zero exit code header is an error; an unanswered call is unfinished', () => {
    const { record } = read(ROOT, [
      started(0),
      call(10, 'c1', 'exec_command'),
      item(11, { type: 'custom_tool_call', callId: 'c2', name: 'apply_patch', input: '*** Begin Patch' }),
      item(12, { type: 'web_search_call', action: { type: 'search', query: 'q' } }),
      call(13, 'c3', 'exec_command'),
      tokens(20, usage(10, 0, 1, 0)),
      output(30, 'c1', 'Chunk ID: 1\nWall time: 2.0 seconds\nProcess exited with code 1\nOutput:\nfail'),
      item(31, {
        type: 'custom_tool_call_output',
        callId: 'c2',
        output: { text: 'Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess.' },
      }),
    ]);
    expect(record.toolCalls).toEqual([
      { callId: 'c1', name: 'exec_command', startTime: at(10), endTime: at(30), isError: true, errorType: 'exit_code' },
      { callId: 'c2', name: 'apply_patch', startTime: at(11), endTime: at(31), isError: false },
      { callId: 'web_search_call-1', name: 'web_search', startTime: at(12), endTime: at(12), isError: false },
      { callId: 'c3', name: 'exec_command', startTime: at(13), isError: true, errorType: 'unfinished' },
    ]);
    expect(record.output?.map((b) => b.type)).toEqual(['tool-call', 'tool-call', 'tool-call', 'tool-call']);
  });

  it('reads exit codes only from the header before the output', () => {
    expect(isFailedCommandOutput('Wall time: 1 seconds\nProcess exited with code 2\nOutput:\n')).toBe(true);
    expect(isFailedCommandOutput('Exit code: 0\nOutput:\nProcess exited with code 3')).toBe(false);
    expect(isFailedCommandOutput('Success. Updated the following files')).toBe(false);
  });
});

describe('the copy of a parent’s history in a child’s file', () => {
  it('skips records before subagent_history_start_ordinal, keeping the copy’s totals as the baseline', () => {
    const meta: CodexSessionMeta = { ...CHILD, historyStartOrdinal: 3 };
    const { record, reader } = read(meta, [
      { time: at(1), ordinal: 1, kind: 'session_meta', meta: ROOT },
      say(2, 'the parent’s answer', 1),
      tokens(3, usage(9000, 0, 90, 30), usage(9000, 0, 90, 30), 2),
      started(100),
      context(150),
      say(200, 'child answer', 4),
      tokens(210, usage(15000, 3000, 150, 50), usage(6000, 3000, 60, 20), 5),
      completed(220, 'child answer'),
    ]);
    expect(reader.copiedRecords).toBe(3);
    expect(record.usage).toMatchObject({
      inputTokens: 3000,
      cacheReadTokens: 3000,
      outputTokens: 60,
      reasoningTokens: 20,
    });
    expect(record.output).toEqual([{ type: 'text', text: 'child answer' }]);
    expect(record.usageNotes).toBeUndefined();
  });

  it('without ordinals, skips the burst that starts with the parent’s session_meta and lasts at most a second', () => {
    const { record, reader } = read(CHILD, [
      { time: at(10), kind: 'session_meta', meta: ROOT },
      started(11, 'parent-turn'),
      say(12, 'the parent’s answer'),
      tokens(900, usage(12000, 0, 300, 120)),
      started(1500, 'own'),
      context(1600),
      tokens(1700, usage(12000, 0, 300, 120)),
      say(3000, 'own answer'),
      tokens(3100, usage(21000, 4000, 450, 180), usage(9000, 4000, 150, 60)),
      completed(3200, 'own answer'),
    ]);
    expect(reader.copiedRecords).toBe(4);
    expect(record.usage).toMatchObject({ inputTokens: 5000, cacheReadTokens: 4000, outputTokens: 150 });
    expect(record.steps).toHaveLength(1);
    expect(record.usageNotes).toEqual(['codex:copied-history-by-time']);
  });

  it('ends the copy at the 0.110 marker output, and resets what was taken for the child’s own when the marker comes late', () => {
    const marker = output(
      5000,
      'spawn-call',
      'You are the newly spawned agent. The prior conversation history was forked from your parent agent.',
    );
    const { record } = read(CHILD, [
      { time: at(10), kind: 'session_meta', meta: ROOT },
      say(20, 'parent text'),
      // the burst ran longer than the window: these look like the child's own
      say(2000, 'parent text, later in the copy'),
      tokens(2100, usage(8000, 0, 80, 0)),
      marker,
      started(6000, 'own'),
      context(6001),
      say(7000, 'own'),
      tokens(7100, usage(9000, 500, 100, 0), usage(1000, 500, 20, 0)),
      completed(7200, 'own'),
    ]);
    expect(record.steps).toHaveLength(1);
    expect(record.usage).toMatchObject({ inputTokens: 500, cacheReadTokens: 500, outputTokens: 20 });
    expect(record.output).toEqual([{ type: 'text', text: 'own' }]);
    expect(record.usageNotes).toEqual(['codex:copied-history-by-time', 'codex:copied-history-late-end']);
  });

  it('ends the copy at its last marker when the parent was itself a forked child (its own marker inside the copy)', () => {
    const marker = (ms: number): CodexRecord =>
      output(
        ms,
        'spawn-call',
        'You are the newly spawned agent. The prior conversation history was forked from your parent agent.',
      );
    const { record } = read(CHILD, [
      { time: at(10), kind: 'session_meta', meta: ROOT },
      { time: at(11), kind: 'session_meta', meta: { id: 'grandparent', source: { kind: 'client', name: 'cli' } } },
      marker(12),
      say(13, 'the parent’s own answer'),
      tokens(14, usage(5000, 0, 50, 0)),
      marker(15),
      started(3000, 'own'),
      context(3001),
      say(4000, 'own'),
      tokens(4100, usage(6000, 0, 60, 0), usage(1000, 0, 10, 0)),
      completed(4200, 'own'),
    ]);
    expect(record.steps).toHaveLength(1);
    expect(record.usage).toMatchObject({ inputTokens: 1000, outputTokens: 10 });
    expect(record.output).toEqual([{ type: 'text', text: 'own' }]);
  });

  it('skips nothing in a child spawned without history', () => {
    const { reader, record } = read(CHILD, [
      item(10, { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'x' }] }),
      started(11),
      say(20, 'hi'),
      tokens(30, usage(10, 0, 1, 0)),
      completed(40, 'hi'),
    ]);
    expect(reader.copiedRecords).toBe(0);
    expect(record.usage.inputTokens).toBe(10);
  });
});

describe('runs, links and parity', () => {
  it('names the run by thread, nests a child under its parent and its spawn call, and prefers the spawn message as its prompt', () => {
    const link: CodexChildLink = {
      spawnCallId: 'call-spawn',
      prompt: 'Review the parser.',
      status: { kind: 'completed', message: 'one bug' },
    };
    const { record } = read(
      CHILD,
      [
        started(0),
        event(1, { type: 'user_message', message: 'Review the parser.' }),
        say(10, 'one bug'),
        completed(20, 'one bug'),
      ],
      link,
      'root-1',
    );
    expect(record).toMatchObject({
      runId: 'codex:child-1',
      sessionId: 'child-1',
      parentSessionId: 'root-1',
      parentRunId: 'codex:root-1',
      parentToolCallId: 'call-spawn',
      traceKey: 'codex:root-1',
      agentName: 'explorer',
      source: 'codex',
      provider: 'openai',
      prompt: [{ type: 'text', text: 'Review the parser.' }],
      reported: { output: [{ type: 'text', text: 'one bug' }], compare: 'text' },
      stopReason: 'completed',
      stopReasonInferredFrom: 'codex:parent-result:completed',
    });
  });

  it('takes a truncation from the parent’s result when the child’s own file says it completed', () => {
    const status: CodexAgentStatus = {
      kind: 'errored',
      message: 'stream disconnected before completion: Incomplete response returned, reason: max_output_tokens',
    };
    const { record } = read(
      CHILD,
      [started(0), say(10, 'Listing'), tokens(11, usage(10, 0, 1, 0)), completed(20)],
      { spawnCallId: 's', status },
      'root-1',
    );
    expect([record.stopReason, record.stopReasonInferredFrom, record.reported]).toEqual([
      'max-tokens',
      'codex:parent-result:incomplete:max_output_tokens',
      undefined,
    ]);
  });

  it('reports a completed-without-text parent result as no output, so a child that produced text is flagged', () => {
    const { record } = read(
      CHILD,
      [started(0), say(10, 'text the parent never got'), completed(20)],
      { status: { kind: 'completed', message: undefined } },
      'root-1',
    );
    expect(record.reported).toEqual({ output: undefined, compare: 'text' });
    expect(record.output).toEqual([{ type: 'text', text: 'text the parent never got' }]);
  });

  it('collects what a parent records about its children: spawn outputs, wait and close statuses, notifications', () => {
    const { reader } = read(ROOT, [
      started(0),
      call(10, 's1', 'spawn_agent', '{"message":"task one","agent_type":"worker"}'),
      call(11, 's2', 'spawn_agent', '{"message":"task two","task_name":"two"}'),
      tokens(12, usage(10, 0, 1, 0)),
      output(20, 's1', '{"agent_id":"kid-1","nickname":"Ada"}'),
      output(21, 's2', '{"task_name":"/root/two","nickname":null}'),
      call(30, 'w', 'wait_agent', '{"targets":["kid-1"]}'),
      tokens(31, usage(20, 0, 2, 0)),
      output(40, 'w', '{"status":{"kid-1":{"completed":"first"}},"timed_out":false}'),
      item(50, {
        type: 'message',
        role: 'user',
        content: [
          {
            type: 'input_text',
            text: '<subagent_notification>{"agent_path":"/root/two","status":{"errored":"boom"}}</subagent_notification>',
          },
        ],
      }),
      call(60, 'c', 'close_agent', '{"target":"kid-1"}'),
      tokens(61, usage(30, 0, 3, 0)),
      output(70, 'c', '{"previous_status":"shutdown"}'),
      completed(80),
    ]);
    expect(findCodexLink(reader.links, 'kid-1')).toEqual({
      spawnCallId: 's1',
      prompt: 'task one',
      status: { kind: 'completed', message: 'first' },
    });
    expect(findCodexLink(reader.links, 'kid-2', '/root/two')).toEqual({
      spawnCallId: 's2',
      prompt: 'task two',
      status: { kind: 'errored', message: 'boom' },
    });
    expect(findCodexLink(reader.links, 'kid-3')).toBeUndefined();
  });

  it('never takes an inter-agent message (recorded in the assistant role) as the run’s output, but reads the notification in it', () => {
    const relayed = JSON.stringify({
      author: '/root/two',
      recipient: '/root',
      other_recipients: [],
      content:
        '<subagent_notification>\n{"agent_path":"/root/two","status":{"completed":"found nothing"}}\n</subagent_notification>',
      trigger_turn: false,
    });
    const { record, reader } = read(ROOT, [
      started(0),
      say(10, 'waiting'),
      tokens(11, usage(10, 0, 1, 0)),
      say(20, relayed),
      completed(30, 'waiting'),
    ]);
    expect(record.output).toEqual([{ type: 'text', text: 'waiting' }]);
    expect(findCodexLink(reader.links, 'x', '/root/two')?.status).toEqual({
      kind: 'completed',
      message: 'found nothing',
    });
  });

  it('keeps the last task_complete message for parity checks', () => {
    expect(
      read(ROOT, [started(0), completed(10, 'a'), started(20), completed(30, null)]).reader.lastAgentMessage,
    ).toBeNull();
    expect(read(ROOT, [started(0)]).reader.lastAgentMessage).toBeUndefined();
  });

  it('names the first user_message the prompt of a root', () => {
    const { record } = read(ROOT, [
      started(0),
      event(1, { type: 'user_message', message: 'Fix the build.' }),
      event(2, { type: 'user_message', message: 'later' }),
    ]);
    expect(record.prompt).toEqual([{ type: 'text', text: 'Fix the build.' }]);
  });
});
