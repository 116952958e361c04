/**
 * The Claude Code session reader driven by literal records: responses rebuilt
 * from their one-block lines and counted once, usage in the project's
 * buckets, subagents linked to their Task/Agent calls in the three layouts,
 * the subagent's result as the parent received it, and the stop evidence
 * (synthetic API errors, stop_reason, Stop-hook summaries, interrupts, the
 * parent's result, task notifications), never `completed` where nothing says so.
 */
import { describe, expect, it } from 'vitest';
import { ClaudeCodeSessionReader, type ClaudeRunOutcome } from '../../../src/transcripts/claude-code/runs.js';
import {
  isClaudeWireError,
  parseClaudeCodeValue,
  type ClaudeCodeRecord,
} from '../../../src/transcripts/claude-code/records.js';

const SID = 'ssss-1';
const T0 = Date.parse('2026-03-01T10:00:00.000Z');
let counter = 0;

function record(value: Record<string, unknown>): ClaudeCodeRecord {
  const parsed = parseClaudeCodeValue(value);
  if (isClaudeWireError(parsed)) throw new Error(parsed.message);
  return parsed;
}

/** Envelope at `t` seconds after T0. */
function at(t: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  counter += 1;
  return {
    parentUuid: null,
    isSidechain: false,
    sessionId: SID,
    uuid: `u-${counter}`,
    timestamp: new Date(T0 + t * 1000).toISOString(),
    ...extra,
  };
}

interface Usage {
  readonly input?: number;
  readonly output?: number;
  readonly read?: number;
  readonly write?: number;
  readonly final?: boolean;
}

function usage(u: Usage): Record<string, unknown> {
  return {
    input_tokens: u.input ?? 0,
    output_tokens: u.output ?? 0,
    cache_read_input_tokens: u.read ?? 0,
    cache_creation_input_tokens: u.write ?? 0,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: u.write ?? 0 },
    ...(u.final === true ? { server_tool_use: { web_search_requests: 0 } } : {}),
  };
}

function assistant(
  t: number,
  id: string,
  block: Record<string, unknown>,
  u: Usage = {},
  extra: Record<string, unknown> = {},
): ClaudeCodeRecord {
  const { stop_reason, ...rest } = extra as { stop_reason?: string };
  return record({
    ...at(t, rest),
    type: 'assistant',
    requestId: `req-${id}`,
    message: {
      id,
      model: 'claude-sonnet-4-5-20250929',
      content: [block],
      stop_reason: stop_reason ?? null,
      usage: usage(u),
    },
  });
}

function synthetic(t: number, error: string, text: string, extra: Record<string, unknown> = {}): ClaudeCodeRecord {
  return record({
    ...at(t, extra),
    type: 'assistant',
    isApiErrorMessage: true,
    error,
    message: { id: `syn-${t}`, model: '<synthetic>', content: [{ type: 'text', text }] },
  });
}

function user(t: number, content: unknown, extra: Record<string, unknown> = {}): ClaudeCodeRecord {
  return record({ ...at(t, extra), type: 'user', message: { role: 'user', content } });
}

function system(t: number, subtype: string): ClaudeCodeRecord {
  return record({ ...at(t), type: 'system', subtype });
}

const text = (value: string) => ({ type: 'text', text: value });
const task = (id: string, input: Record<string, unknown>) => ({ type: 'tool_use', id, name: 'Task', input });
const toolResult = (id: string, content: unknown, isError = false) => ({
  type: 'tool_result',
  tool_use_id: id,
  content,
  ...(isError ? { is_error: true } : {}),
});
const trailer = (agent: string) =>
  text(
    `agentId: ${agent} (for resuming to continue this agent's work if needed)\n<usage>total_tokens: 9\ntool_uses: 0\nduration_ms: 5</usage>`,
  );

function reader(
  options: Partial<ConstructorParameters<typeof ClaudeCodeSessionReader>[0]> = {},
): ClaudeCodeSessionReader {
  return new ClaudeCodeSessionReader({
    sessionId: SID,
    hasMain: true,
    childFiles: new Set(),
    fallbackTime: T0,
    ...options,
  });
}

function byId(outcomes: readonly ClaudeRunOutcome[]): Map<string, ClaudeRunOutcome> {
  return new Map(outcomes.map((o) => [o.record.runId, o]));
}

describe('responses and usage', () => {
  it('rebuilds one response from its one-block lines: content in line order, usage per field the largest', () => {
    const r = reader();
    r.pushMain(user(0, 'go'));
    r.pushMain(
      assistant(
        1,
        'msg_1',
        { type: 'thinking', thinking: 'hmm', signature: 's' },
        { input: 3, read: 100, write: 50, output: 2 },
      ),
    );
    r.pushMain(assistant(2, 'msg_1', text('Answer.'), { input: 3, read: 100, write: 50, output: 2 }));
    r.pushMain(
      assistant(
        3,
        'msg_1',
        { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls' } },
        { input: 3, read: 100, write: 50, output: 40, final: true },
      ),
    );
    r.pushMain(user(4, [toolResult('toolu_1', 'a\nb')]));
    const [root] = r.finish();
    expect(root?.record.steps.map((s) => [s.startTime - T0, s.endTime - T0, s.usage])).toEqual([
      [
        1000,
        3000,
        { inputTokens: 3, outputTokens: 40, cacheReadTokens: 100, cacheWriteTokens: 50, cacheWrite1hTokens: 50 },
      ],
    ]);
    expect(root?.record.output).toEqual([
      { type: 'reasoning', text: 'hmm' },
      { type: 'text', text: 'Answer.' },
      { type: 'tool-call', id: 'toolu_1', name: 'Bash', arguments: '{"command":"ls"}' },
    ]);
    expect(root?.record.usage).toEqual({
      inputTokens: 3,
      outputTokens: 40,
      cacheReadTokens: 100,
      cacheWriteTokens: 50,
      reasoningTokens: 0,
      reported: true,
    });
    expect(root?.record.toolCalls).toEqual([
      { callId: 'toolu_1', name: 'Bash', startTime: T0 + 3000, endTime: T0 + 4000, isError: false },
    ]);
    expect(root?.record.usageNotes).toBeUndefined();
    expect(root?.record.prompt).toEqual([{ type: 'text', text: 'go' }]);
    expect(root?.record.provider).toBe('anthropic');
    expect(root?.record.model).toBe('claude-sonnet-4-5-20250929');
  });

  it('notes the session requests that never got their final usage', () => {
    const r = reader();
    r.pushMain(assistant(1, 'msg_1', text('a'), { input: 1, output: 10 }));
    r.pushMain(assistant(2, 'msg_2', text('b'), { input: 1, output: 70, final: true }));
    const [root] = r.finish();
    expect(root?.record.usage.outputTokens).toBe(80);
    expect(root?.record.usageNotes).toEqual(['claude-code:streaming-usage']);
  });

  it('counts a response once: a copy of a message id already counted (a fork replaying its parent) is skipped and noted', () => {
    const r = reader({ childFiles: new Set(['a1']) });
    r.pushMain(
      assistant(1, 'msg_parent', task('toolu_T', { subagent_type: 'fork', prompt: 'p' }), {
        input: 5,
        output: 60,
        final: true,
      }),
    );
    r.pushMain(
      user(9, [toolResult('toolu_T', [text('ok')])], {
        toolUseResult: { status: 'completed', agentId: 'a1', content: [text('ok')] },
      }),
    );
    const child = r.startChild('a1', 'child.jsonl');
    r.pushChild(child, user(2, 'p', { isSidechain: true, agentId: 'a1' }));
    r.pushChild(
      child,
      assistant(
        3,
        'msg_parent',
        task('toolu_T', { prompt: 'p' }),
        { input: 5, output: 60, final: true },
        { isSidechain: true, agentId: 'a1' },
      ),
    );
    r.pushChild(
      child,
      assistant(4, 'msg_child', text('ok'), { input: 7, output: 9, final: true }, { isSidechain: true, agentId: 'a1' }),
    );
    r.finishChild(child);
    const runs = byId(r.finish());
    const forked = runs.get(`claude-code:${SID}/agent-a1`)?.record;
    expect(forked?.steps.length).toBe(1);
    expect(forked?.usage.outputTokens).toBe(9);
    expect(forked?.usageNotes).toEqual(['claude-code:replayed-messages-skipped']);
    expect(runs.get(`claude-code:${SID}`)?.record.usage.outputTokens).toBe(60);
  });

  it('never counts the parent’s agent_progress copies when the child’s own file is read', () => {
    const r = reader({ childFiles: new Set(['a1']) });
    r.pushMain(assistant(1, 'msg_p', task('toolu_T', { prompt: 'p' }), { output: 5, final: true }));
    r.pushMain(
      record({
        ...at(2),
        type: 'progress',
        parentToolUseID: 'toolu_T',
        data: {
          type: 'agent_progress',
          agentId: 'a1',
          message: {
            type: 'assistant',
            timestamp: new Date(T0 + 2000).toISOString(),
            message: { id: 'msg_c', content: [text('x')], usage: usage({ output: 500 }) },
          },
        },
      }),
    );
    const [root] = r.finish();
    expect(root?.record.usage.outputTokens).toBe(5);
    expect(root?.record.runId).toBe(`claude-code:${SID}`);
  });
});

describe('subagents linked to their Task calls', () => {
  /** A parent with one Task call and its result, and a child file with two requests (streaming usage only). */
  function linkedSession(result: unknown, childTail: ClaudeCodeRecord[] = []): ClaudeRunOutcome[] {
    const r = reader({ childFiles: new Set(['a881341']) });
    r.pushMain(user(0, 'research this'));
    r.pushMain(
      assistant(
        1,
        'msg_p1',
        task('toolu_V', {
          description: 'Research',
          subagent_type: 'claude-code-guide',
          prompt: 'What is the hook contract?',
        }),
        { input: 3, output: 80, final: true },
      ),
    );
    r.pushMain(
      user(30, [toolResult('toolu_V', [text('The contract is JSON.'), trailer('a881341')])], { toolUseResult: result }),
    );
    r.pushMain(assistant(31, 'msg_p2', text('Done.'), { input: 2, output: 4, final: true }));
    r.pushMain(system(31.5, 'stop_hook_summary'));
    const child = r.startChild('a881341', 'agent-a881341.jsonl');
    const side = { isSidechain: true, agentId: 'a881341' };
    r.pushChild(child, user(2, 'What is the hook contract?', side));
    r.pushChild(
      child,
      assistant(
        3,
        'msg_c1',
        { type: 'tool_use', id: 'toolu_F', name: 'WebFetch', input: {} },
        { input: 3, write: 12118, output: 1 },
        side,
      ),
    );
    r.pushChild(child, user(4, [toolResult('toolu_F', 'docs')], side));
    r.pushChild(
      child,
      assistant(29, 'msg_c2', text('The contract is JSON.'), { input: 6, read: 22041, write: 20135, output: 1 }, side),
    );
    for (const line of childTail) r.pushChild(child, line);
    r.finishChild(child);
    return r.finish();
  }

  const completed = {
    status: 'completed',
    agentId: 'a881341',
    content: [text('The contract is JSON.')],
    totalDurationMs: 28000,
    usage: {
      input_tokens: 6,
      cache_creation_input_tokens: 20135,
      cache_read_input_tokens: 22041,
      output_tokens: 997,
      server_tool_use: {},
    },
  };

  it('nests the child under the Task call with its type as agent name, its own id and the parent’s result as reported output', () => {
    const outcomes = linkedSession(completed);
    expect(
      outcomes.map((o) => [
        o.record.runId,
        o.record.agentName,
        o.record.parentRunId,
        o.record.parentToolCallId,
        o.record.traceKey,
        o.isEnded,
      ]),
    ).toEqual([
      [
        `claude-code:${SID}/agent-a881341`,
        'claude-code-guide',
        `claude-code:${SID}`,
        'toolu_V',
        `claude-code:${SID}`,
        true,
      ],
      [`claude-code:${SID}`, 'claude-code', undefined, undefined, `claude-code:${SID}`, false],
    ]);
    const child = outcomes[0]?.record;
    expect(child?.sessionId).toBe(`${SID}/agent-a881341`);
    expect(child?.parentSessionId).toBe(SID);
    expect(child?.prompt).toEqual([{ type: 'text', text: 'What is the hook contract?' }]);
    expect(child?.reported).toEqual({ output: [{ type: 'text', text: 'The contract is JSON.' }], compare: 'text' });
    expect(child?.output).toEqual([{ type: 'text', text: 'The contract is JSON.' }]);
    expect([child?.stopReason, child?.stopReasonInferredFrom]).toEqual([
      'completed',
      'claude-code:parent-result:completed',
    ]);
    expect([child?.startTime, child?.endTime].map((t) => (t ?? 0) - T0)).toEqual([2000, 29000]);
    const root = outcomes[1]?.record;
    expect([root?.stopReason, root?.stopReasonInferredFrom]).toEqual(['completed', 'claude-code:stop-hook-summary']);
    expect(root?.toolCalls.map((t) => [t.callId, t.name, t.endTime])).toEqual([['toolu_V', 'Task', T0 + 30000]]);
  });

  it('completes the last request’s usage from the parent’s result and notes both approximations', () => {
    const child = linkedSession(completed)[0]?.record;
    expect(child?.steps.map((s) => s.usage)).toEqual([
      { inputTokens: 3, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 12118, cacheWrite1hTokens: 12118 },
      { inputTokens: 6, outputTokens: 997, cacheReadTokens: 22041, cacheWriteTokens: 20135, cacheWrite1hTokens: 20135 },
    ]);
    expect(child?.usageNotes).toEqual([
      'claude-code:subagent-final-usage-from-parent',
      'claude-code:subagent-streaming-usage',
    ]);
  });

  it('keeps a truncation the child file records over the parent’s "completed", with the partial text as output', () => {
    const cut =
      "API Error: Claude's response exceeded the 32000 output token maximum. To configure this behavior, set the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable.";
    const child = linkedSession(completed, [
      synthetic(29.5, 'max_output_tokens', cut, { isSidechain: true, agentId: 'a881341' }),
    ])[0]?.record;
    expect([child?.stopReason, child?.stopReasonInferredFrom, child?.diagnostic]).toEqual([
      'max-tokens',
      'claude-code:api-error:max_output_tokens',
      cut,
    ]);
    expect(child?.output).toEqual([{ type: 'text', text: 'The contract is JSON.' }]);
    expect(child?.steps.length).toBe(2);
  });

  it('reads other synthetic errors as error with their text as diagnostic', () => {
    const child = linkedSession(completed, [
      synthetic(29.5, 'rate_limit', 'API Error: Rate limit reached', { isSidechain: true, agentId: 'a881341' }),
    ])[0]?.record;
    expect([child?.stopReason, child?.stopReasonInferredFrom, child?.diagnostic]).toEqual([
      'error',
      'claude-code:api-error:rate_limit',
      'API Error: Rate limit reached',
    ]);
  });

  it('drops an error record a later model answer superseded', () => {
    const side = { isSidechain: true, agentId: 'a881341' };
    const child = linkedSession(completed, [
      synthetic(29.5, 'overloaded', 'API Error: Overloaded', side),
      assistant(29.8, 'msg_c3', text('Retried.'), { input: 1, output: 1 }, side),
    ])[0]?.record;
    expect([child?.stopReason, child?.stopReasonInferredFrom]).toEqual([
      'completed',
      'claude-code:parent-result:completed',
    ]);
    expect(child?.output).toEqual([{ type: 'text', text: 'Retried.' }]);
  });

  it('links the child by the tool_result trailer when the result is not structured, the text without the trailer as reported', () => {
    const outcomes = linkedSession('The contract is JSON.');
    const child = outcomes[0]?.record;
    // Without a result naming the agent, the trailer of the tool_result text links it.
    expect(child?.parentToolCallId).toBe('toolu_V');
    expect([child?.stopReason, child?.stopReasonInferredFrom, child?.reported]).toEqual([
      'completed',
      'claude-code:parent-result:returned',
      { output: [{ type: 'text', text: 'The contract is JSON.' }], compare: 'text' },
    ]);
  });

  it('reads an error tool_result for the call as the child’s stop', () => {
    const r = reader({ childFiles: new Set(['a1']) });
    r.pushMain(
      assistant(1, 'msg_p1', task('toolu_X', { subagent_type: 'Explore', prompt: 'p' }), { output: 5, final: true }),
    );
    r.pushMain(
      user(5, [toolResult('toolu_X', [text('[Request interrupted by user for tool use]')], true)], {
        toolUseResult: 'Error: [Request interrupted by user for tool use]',
      }),
    );
    r.pushMain(
      record({
        ...at(1.5),
        type: 'progress',
        parentToolUseID: 'toolu_X',
        data: { type: 'agent_progress', agentId: 'a1' },
      }),
    );
    const child = r.startChild('a1', 'agent-a1.jsonl');
    r.pushChild(child, user(2, 'p', { isSidechain: true, agentId: 'a1' }));
    r.finishChild(child);
    const [outcome] = r.finish();
    expect([
      outcome?.record.parentToolCallId,
      outcome?.record.stopReason,
      outcome?.record.stopReasonInferredFrom,
      outcome?.record.reported,
      outcome?.isEnded,
    ]).toEqual(['toolu_X', 'aborted', 'claude-code:parent-result:interrupted', undefined, true]);
    expect(outcome?.record.toolCalls).toEqual([]);
  });

  it('takes the agent type from the sidecar and the call from its toolUseId before any result', () => {
    const r = reader({ childFiles: new Set(['a9']) });
    r.addMeta('a9', { agentType: 'Explore', description: 'look', toolUseId: 'toolu_M' });
    r.pushMain(
      assistant(
        1,
        'msg_p1',
        { type: 'tool_use', id: 'toolu_M', name: 'Agent', input: { prompt: 'look' } },
        { output: 5, final: true },
      ),
    );
    expect(r.isLinked('a9')).toBe(true);
    const child = r.startChild('a9', 'agent-a9.jsonl');
    r.pushChild(child, user(2, 'look', { isSidechain: true, agentId: 'a9' }));
    r.pushChild(child, assistant(3, 'msg_c', text('seen'), { output: 1 }, { isSidechain: true, agentId: 'a9' }));
    r.finishChild(child);
    const [outcome] = r.finish();
    expect([
      outcome?.record.agentName,
      outcome?.record.parentToolCallId,
      outcome?.record.stopReason,
      outcome?.record.stopReasonInferredFrom,
      outcome?.isEnded,
    ]).toEqual(['Explore', 'toolu_M', 'unknown', 'none', false]);
  });

  it('ends a background agent by its task notification', () => {
    const r = reader({ childFiles: new Set(['a3']) });
    r.pushMain(
      assistant(1, 'msg_p1', task('toolu_B', { subagent_type: 'Explore', prompt: 'p', run_in_background: true }), {
        output: 5,
        final: true,
      }),
    );
    r.pushMain(
      user(2, [toolResult('toolu_B', [text('Async agent launched successfully.')])], {
        toolUseResult: { isAsync: true, status: 'async_launched', agentId: 'a3' },
      }),
    );
    r.pushMain(user(9, '<task-notification>\n<task-id>a3</task-id>\n<status>failed</status>\n</task-notification>'));
    const child = r.startChild('a3', 'agent-a3.jsonl');
    r.pushChild(child, assistant(5, 'msg_c', text('partial'), { output: 1 }, { isSidechain: true, agentId: 'a3' }));
    r.finishChild(child);
    const [outcome] = r.finish();
    expect([
      outcome?.record.stopReason,
      outcome?.record.stopReasonInferredFrom,
      outcome?.record.reported,
      outcome?.isEnded,
    ]).toEqual(['error', 'claude-code:task-notification:failed', undefined, true]);
  });

  it('reports a child whose parent session is absent without a parent, noted', () => {
    const r = reader({ hasMain: false, childFiles: new Set(['afc096d']) });
    const child = r.startChild('afc096d', 'agent-afc096d.jsonl');
    r.pushChild(child, user(1, 'Explore', { isSidechain: true, agentId: 'afc096d' }));
    r.pushChild(child, assistant(2, 'msg_c', text('x'), { output: 3 }, { isSidechain: true, agentId: 'afc096d' }));
    r.finishChild(child);
    const [outcome] = r.finish();
    expect([
      outcome?.record.runId,
      outcome?.record.agentName,
      outcome?.record.parentRunId,
      outcome?.record.traceKey,
      outcome?.record.usageNotes,
    ]).toEqual([
      `claude-code:${SID}/agent-afc096d`,
      'subagent',
      undefined,
      `claude-code:${SID}`,
      ['claude-code:parent-session-absent', 'claude-code:subagent-streaming-usage'],
    ]);
  });

  it('rebuilds a subagent whose file is absent from the parent’s progress copies, its answer from the parent’s result', () => {
    const r = reader();
    r.pushMain(
      assistant(1, 'msg_p1', task('toolu_P', { subagent_type: 'Plan', prompt: 'Draft it.' }), {
        output: 5,
        final: true,
      }),
    );
    const copy = (t: number, message: Record<string, unknown>) =>
      record({
        ...at(t),
        type: 'progress',
        parentToolUseID: 'toolu_P',
        data: {
          type: 'agent_progress',
          agentId: 'afb92ff',
          message: { ...message, timestamp: new Date(T0 + t * 1000).toISOString() },
        },
      });
    r.pushMain(copy(2, { type: 'user', message: { role: 'user', content: [text('Draft it.')] } }));
    r.pushMain(
      copy(3, {
        type: 'assistant',
        message: {
          id: 'msg_c1',
          model: 'claude-haiku-4-5-20251001',
          content: [{ type: 'tool_use', id: 'toolu_R', name: 'Read', input: {} }],
          usage: usage({ input: 3, read: 10, output: 2 }),
        },
      }),
    );
    r.pushMain(copy(4, { type: 'user', message: { role: 'user', content: [toolResult('toolu_R', 'file')] } }));
    r.pushMain(
      user(9, [toolResult('toolu_P', [text('Drafted.')])], {
        toolUseResult: {
          status: 'completed',
          agentId: 'afb92ff',
          content: [text('Drafted.')],
          usage: usage({ input: 3, read: 40, write: 8, output: 300, final: true }),
        },
      }),
    );
    const outcomes = r.finish();
    const child = outcomes[0]?.record;
    expect([child?.runId, child?.agentName, child?.parentToolCallId, child?.stopReasonInferredFrom]).toEqual([
      `claude-code:${SID}/agent-afb92ff`,
      'Plan',
      'toolu_P',
      'claude-code:parent-result:completed',
    ]);
    expect(child?.steps.map((s) => [s.startTime - T0, s.model, s.usage?.outputTokens])).toEqual([
      [3000, 'claude-haiku-4-5-20251001', 2],
      [9000, 'claude-haiku-4-5-20251001', 300],
    ]);
    expect(child?.output).toEqual([{ type: 'text', text: 'Drafted.' }]);
    expect(child?.toolCalls.map((t) => [t.callId, t.endTime])).toEqual([['toolu_R', T0 + 4000]]);
    expect(child?.usageNotes).toEqual([
      'claude-code:subagent-from-parent-progress',
      'claude-code:subagent-final-message-from-parent',
      'claude-code:subagent-final-usage-from-parent',
      'claude-code:subagent-streaming-usage',
    ]);
    expect(outcomes[1]?.record.usage.outputTokens).toBe(5);
  });

  it('reports a subagent’s own subagents before it, and it before the session', () => {
    const r = reader({ childFiles: new Set(['a1', 'a2']) });
    r.pushMain(
      assistant(1, 'msg_p', task('toolu_1', { subagent_type: 'general-purpose', prompt: 'p' }), {
        output: 5,
        final: true,
      }),
    );
    r.pushMain(
      user(6, [toolResult('toolu_1', [text('found')])], {
        toolUseResult: { status: 'completed', agentId: 'a1', content: [text('found')] },
      }),
    );
    const outer = r.startChild('a1', 'agent-a1.jsonl');
    r.pushChild(
      outer,
      assistant(
        2,
        'msg_a1',
        task('toolu_2', { subagent_type: 'Explore', prompt: 'q' }),
        { output: 1 },
        { isSidechain: true, agentId: 'a1' },
      ),
    );
    r.pushChild(
      outer,
      user(5, [toolResult('toolu_2', [text('found')])], {
        isSidechain: true,
        agentId: 'a1',
        toolUseResult: { status: 'completed', agentId: 'a2', content: [text('found')] },
      }),
    );
    r.finishChild(outer);
    expect(r.isLinked('a2')).toBe(true);
    const inner = r.startChild('a2', 'agent-a2.jsonl');
    r.pushChild(inner, assistant(3, 'msg_a2', text('found'), { output: 1 }, { isSidechain: true, agentId: 'a2' }));
    r.finishChild(inner);
    expect(r.finish().map((o) => [o.record.runId, o.record.parentRunId, o.record.parentToolCallId])).toEqual([
      [`claude-code:${SID}/agent-a2`, `claude-code:${SID}/agent-a1`, 'toolu_2'],
      [`claude-code:${SID}/agent-a1`, `claude-code:${SID}`, 'toolu_1'],
      [`claude-code:${SID}`, undefined, undefined],
    ]);
  });
});

describe('the inline layout (up to 2.0.27)', () => {
  it('reads sidechain lines of the session file as the subagent of the Task whose prompt they carry, skipping Warmup sidechains', () => {
    const r = reader();
    const side = { isSidechain: true };
    r.pushMain(user(0, 'Warmup', { ...side, uuid: 'w1' }));
    r.pushMain(
      assistant(0.5, 'msg_w', text('Ready.'), { output: 5 }, { ...side, parentUuid: 'w1', stop_reason: 'end_turn' }),
    );
    r.pushMain(user(1, 'Find the config.'));
    r.pushMain(
      assistant(2, 'msg_1', task('toolu_I', { subagent_type: 'general-purpose', prompt: 'Find the config file.' }), {
        output: 50,
        final: true,
      }),
    );
    r.pushMain(user(3, 'Find the config file.', { ...side, uuid: 's1' }));
    r.pushMain(assistant(4, 'msg_s1', text('config.yaml'), { output: 12, final: true }, { ...side, parentUuid: 's1' }));
    r.pushMain(
      user(5, [toolResult('toolu_I', [text('config.yaml')])], {
        toolUseResult: { content: [text('config.yaml')], totalDurationMs: 2000 },
      }),
    );
    const outcomes = r.finish();
    expect(
      outcomes.map((o) => [
        o.record.runId,
        o.record.agentName,
        o.record.parentToolCallId,
        o.record.stopReasonInferredFrom,
        o.record.usage.outputTokens,
      ]),
    ).toEqual([
      [`claude-code:${SID}/agent-toolu_I`, 'general-purpose', 'toolu_I', 'claude-code:parent-result:returned', 12],
      [`claude-code:${SID}`, 'claude-code', undefined, 'none', 50],
    ]);
    expect(outcomes[0]?.record.reported).toEqual({ output: [{ type: 'text', text: 'config.yaml' }], compare: 'text' });
  });
});

describe('how a session ends', () => {
  it('is completed when a Stop-hook summary or turn duration follows the last answer', () => {
    const r = reader();
    r.pushMain(assistant(1, 'msg_1', text('a'), { output: 1 }));
    r.pushMain(system(2, 'turn_duration'));
    expect(r.finish()[0]?.record.stopReasonInferredFrom).toBe('claude-code:turn-duration');
  });

  it('is unknown when the last answer is followed by nothing that says the turn ended', () => {
    const r = reader();
    r.pushMain(assistant(1, 'msg_1', text('a'), { output: 1 }));
    r.pushMain(system(2, 'stop_hook_summary'));
    r.pushMain(user(3, 'and now?'));
    r.pushMain(assistant(4, 'msg_2', text('b'), { output: 1 }));
    const [root] = r.finish();
    expect([root?.record.stopReason, root?.record.stopReasonInferredFrom]).toEqual(['unknown', 'none']);
  });

  it('is aborted when the user interrupted the last turn', () => {
    const r = reader();
    r.pushMain(assistant(1, 'msg_1', text('a'), { output: 1 }));
    r.pushMain(user(2, [text('[Request interrupted by user]')]));
    expect(r.finish()[0]?.record.stopReasonInferredFrom).toBe('claude-code:interrupted');
  });

  it('keeps a stop_reason written on an earlier line of the same response', () => {
    const r = reader();
    r.pushMain(assistant(1, 'msg_1', text('a'), { output: 1 }, { stop_reason: 'end_turn' }));
    r.pushMain(assistant(2, 'msg_1', text('b'), { output: 9 }));
    expect(r.finish()[0]?.record.stopReasonInferredFrom).toBe('claude-code:stop_reason:end_turn');
  });

  it('reads a recorded stop_reason of the last answer', () => {
    const r = reader();
    r.pushMain(assistant(1, 'msg_1', text('a'), { output: 1 }, { stop_reason: 'max_tokens' }));
    const [root] = r.finish();
    expect([root?.record.stopReason, root?.record.stopReasonInferredFrom, root?.record.steps[0]?.finishReason]).toEqual(
      ['max-tokens', 'claude-code:stop_reason:max_tokens', 'max-tokens'],
    );
  });

  it('reads a context-window record as error, never as assistant output', () => {
    const r = reader();
    r.pushMain(assistant(1, 'msg_1', text('a'), { output: 1 }));
    r.pushMain(synthetic(2, 'invalid_request', 'The model has reached its context window limit.'));
    const [root] = r.finish();
    expect([
      root?.record.stopReason,
      root?.record.stopReasonInferredFrom,
      root?.record.diagnostic,
      root?.record.output,
      root?.record.steps.length,
    ]).toEqual([
      'error',
      'claude-code:api-error:invalid_request',
      'The model has reached its context window limit.',
      [{ type: 'text', text: 'a' }],
      1,
    ]);
  });

  it('takes the session id from the records when the file name is none, and the agent name override for every run', () => {
    const r = reader({ sessionId: 'short', isSessionIdGuess: true, agentName: 'mine' });
    r.pushMain(record({ type: 'file-history-snapshot', messageId: 'm', snapshot: {} }));
    r.pushMain(user(1, 'hi', { sessionId: '55604662-cf2a-4331-851a-ec234028f8ca' }));
    const [root] = r.finish();
    expect([root?.record.runId, root?.record.agentName, root?.record.traceKey]).toEqual([
      'claude-code:55604662-cf2a-4331-851a-ec234028f8ca',
      'mine',
      'claude-code:55604662-cf2a-4331-851a-ec234028f8ca',
    ]);
  });

  it('reports no run for a session file without timed records (a snapshot-only file)', () => {
    const r = reader();
    r.pushMain(record({ type: 'summary', summary: 's', leafUuid: 'x' }));
    expect(r.finish()).toEqual([]);
  });
});
