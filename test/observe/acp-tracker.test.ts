import { describe, expect, it } from 'vitest';
import { AcpTracker, type AcpTrackerOptions } from '../../src/observe/acp-tracker.js';
import type { Direction } from '../../src/observe/frame-observer.js';
import type { RunRecord, RunStart } from '../../src/observe/run-record.js';
import type { JsonRpcFrame } from '../../src/wire/jsonrpc.js';

type Step = readonly [Direction, JsonRpcFrame];

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const OTHER_TRACEPARENT = '00-11111111111111111111111111111111-2222222222222222-01';

const request = (id: number, method: string, params: unknown): Step => ['client->agent', { kind: 'request', id, method, params }];
const cancel = (sessionId = 's1'): Step => ['client->agent', { kind: 'notification', method: 'session/cancel', params: { sessionId } }];
const answer = (id: number, result: unknown): Step => ['agent->client', { kind: 'response', id, result }];
const failure = (id: number, code: number, message: string): Step => ['agent->client', { kind: 'response', id, error: { code, message } }];
const update = (update: Record<string, unknown>, sessionId = 's1'): Step => [
  'agent->client',
  { kind: 'notification', method: 'session/update', params: { sessionId, update } },
];
const say = (text: string, sessionId = 's1'): Step => update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } }, sessionId);
const think = (text: string): Step => update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text } });
const prompt = (id: number, sessionId = 's1', meta?: Record<string, unknown>): Step =>
  request(id, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Find the config' }], ...(meta !== undefined ? { _meta: meta } : {}) });
const initialize = (id: number, agentInfo?: Record<string, unknown>): Step[] => [
  request(id, 'initialize', { protocolVersion: 1, clientCapabilities: {} }),
  answer(id, { protocolVersion: 1, ...(agentInfo !== undefined ? { agentInfo } : {}) }),
];

interface Observed {
  readonly starts: RunStart[];
  readonly ends: RunRecord[];
  readonly malformed: { origin: string; code: string; message: string }[];
  readonly tracker: AcpTracker;
}

/** Feeds the steps at times 100, 101, 102, ... into a fresh tracker. */
function observe(steps: readonly Step[], options: AcpTrackerOptions = {}): Observed {
  const starts: RunStart[] = [];
  const ends: RunRecord[] = [];
  const malformed: { origin: string; code: string; message: string }[] = [];
  let runs = 0;
  const tracker = new AcpTracker(
    {
      onRunStart: (start) => starts.push(start),
      onRunEnd: (record) => ends.push(record),
      onMalformed: (origin, error) => malformed.push({ origin, code: error.code, message: error.message }),
    },
    {
      newRunId: () => {
        runs += 1;
        return `run-${runs}`;
      },
      now: () => 999,
      ...options,
    },
  );
  steps.forEach(([direction, frame], i) => tracker.observeFrame(direction, frame, 100 + i));
  return { starts, ends, malformed, tracker };
}

const NO_USAGE = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, reported: false };

describe('AcpTracker: one run per prompt turn', () => {
  it('opens a run on session/prompt and closes it on the response with the streamed text', () => {
    const { starts, ends } = observe([...initialize(0), prompt(1), say('All done.'), answer(1, { stopReason: 'end_turn' })]);
    const PROMPT = [{ type: 'text', text: 'Find the config' }];
    expect(starts).toEqual([{ runId: 'run-1', source: 'acp', agentName: 'acp', sessionId: 's1', startTime: 102, prompt: PROMPT }]);
    expect(ends).toEqual([
      {
        runId: 'run-1',
        source: 'acp',
        agentName: 'acp',
        sessionId: 's1',
        startTime: 102,
        prompt: PROMPT,
        endTime: 104,
        stopReason: 'completed',
        output: [{ type: 'text', text: 'All done.' }],
        outputSource: 'stream',
        emptyMessages: 0,
        usage: NO_USAGE,
        steps: [],
        toolCalls: [],
      },
    ]);
  });

  it('keeps the partial text, the tool call and the reported usage of a max-tokens turn', () => {
    const { ends } = observe([
      prompt(1),
      say('I found the config file. '),
      say('Reading it now.'),
      update({ sessionUpdate: 'tool_call', toolCallId: 'call_1', title: 'Read config.json', name: 'read_file', kind: 'read', status: 'pending' }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'call_1', status: 'in_progress' }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'call_1', status: 'completed' }),
      answer(1, { stopReason: 'max_tokens', usage: { inputTokens: 2510, outputTokens: 304, totalTokens: 2814 } }),
    ]);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({
      stopReason: 'max-tokens',
      output: [{ type: 'text', text: 'I found the config file. Reading it now.' }],
      outputSource: 'stream',
      usage: { inputTokens: 2510, outputTokens: 304, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, reported: true },
      toolCalls: [{ callId: 'call_1', name: 'read_file', startTime: 103, endTime: 105, isError: false }],
    });
    expect(ends[0]?.diagnostic).toBeUndefined();
  });

  it.each([
    ['end_turn', 'completed', undefined],
    ['max_tokens', 'max-tokens', undefined],
    ['refusal', 'refusal', undefined],
    ['cancelled', 'aborted', undefined],
    ['max_turn_requests', 'error', 'the agent ended the turn with stop reason "max_turn_requests"'],
    ['paused_for_review', 'error', 'the agent ended the turn with stop reason "paused_for_review"'],
  ])('maps stop reason %s to %s', (raw, mapped, diagnostic) => {
    const { ends } = observe([prompt(1), say('Step one done.'), answer(1, { stopReason: raw })]);
    expect(ends.map((r) => [r.stopReason, r.diagnostic, r.output])).toEqual([[mapped, diagnostic, [{ type: 'text', text: 'Step one done.' }]]]);
  });

  it('ends a turn answered with a JSON-RPC error as error, with the message as diagnostic and the partial text kept', () => {
    const { ends } = observe([prompt(1), say('Half an answer'), failure(1, -32603, 'Internal error: model unavailable')]);
    expect(ends.map((r) => [r.stopReason, r.diagnostic, r.output])).toEqual([
      ['error', 'Internal error: model unavailable', [{ type: 'text', text: 'Half an answer' }]],
    ]);
  });

  it('selects only agent message text: thoughts, tool calls, plans and non-text blocks are never output', () => {
    const { ends } = observe([
      prompt(1),
      think('The user wants a short answer. '),
      say('Visible '),
      update({ sessionUpdate: 'plan', entries: [{ content: 'Answer', priority: 'high', status: 'pending' }] }),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'image', data: 'AA==', mimeType: 'image/png' } }),
      update({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'Find the config' } }),
      think('Keep it brief.'),
      say('answer.'),
      answer(1, { stopReason: 'end_turn' }),
    ]);
    expect(ends.map((r) => [r.output, r.outputSource])).toEqual([[[{ type: 'text', text: 'Visible answer.' }], 'stream']]);
  });

  it('reports no output for a turn that streamed only non-text blocks and a plan', () => {
    const { ends } = observe([
      prompt(1),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'image', data: 'AA==', mimeType: 'image/png' } }),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'resource', resource: { uri: 'file:///n.md', text: '# Notes' } } }),
      update({ sessionUpdate: 'plan', entries: [] }),
      answer(1, { stopReason: 'end_turn' }),
    ]);
    expect(ends.map((r) => [r.stopReason, r.output, r.outputSource])).toEqual([['completed', undefined, 'none']]);
  });

  it('records a failed tool as an error and an unfinished one as unfinished when the turn did not complete', () => {
    const { ends } = observe([
      prompt(1),
      update({ sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'Write notes.md', kind: 'edit', status: 'pending' }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'failed' }),
      update({ sessionUpdate: 'tool_call', toolCallId: 'c2', title: 'Run tests', kind: 'execute', status: 'in_progress' }),
      answer(1, { stopReason: 'refusal' }),
    ]);
    expect(ends[0]?.toolCalls).toEqual([
      { callId: 'c1', name: 'Write notes.md', startTime: 101, endTime: 102, isError: true, errorType: 'tool_error' },
      { callId: 'c2', name: 'Run tests', startTime: 103, isError: true, errorType: 'unfinished' },
    ]);
  });

  it('records a tool call announced as already completed, and one known only from its update', () => {
    const { ends } = observe([
      prompt(1),
      update({ sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'Search', status: 'completed' }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'c9', title: 'Fetch page', status: 'completed' }),
      answer(1, { stopReason: 'end_turn' }),
    ]);
    expect(ends[0]?.toolCalls).toEqual([
      { callId: 'c1', name: 'Search', startTime: 101, endTime: 101, isError: false },
      { callId: 'c9', name: 'Fetch page', startTime: 102, endTime: 102, isError: false },
    ]);
  });

  it('opens one run per prompt turn on the same session', () => {
    const { ends } = observe([
      prompt(1),
      say('First.'),
      answer(1, { stopReason: 'end_turn' }),
      prompt(2),
      say('Second.'),
      answer(2, { stopReason: 'max_tokens' }),
    ]);
    expect(ends.map((r) => [r.runId, r.stopReason, r.output])).toEqual([
      ['run-1', 'completed', [{ type: 'text', text: 'First.' }]],
      ['run-2', 'max-tokens', [{ type: 'text', text: 'Second.' }]],
    ]);
  });

  it('keeps the turns of two sessions apart', () => {
    const { ends } = observe([
      prompt(1, 's1'),
      prompt(2, 's2'),
      say('For one.', 's1'),
      say('For two.', 's2'),
      answer(2, { stopReason: 'end_turn' }),
      answer(1, { stopReason: 'refusal' }),
    ]);
    expect(ends.map((r) => [r.sessionId, r.stopReason, r.output])).toEqual([
      ['s2', 'completed', [{ type: 'text', text: 'For two.' }]],
      ['s1', 'refusal', [{ type: 'text', text: 'For one.' }]],
    ]);
  });
});

describe('AcpTracker: cancellation and the two ways a turn ends', () => {
  it('keeps folding updates after session/cancel until the response arrives', () => {
    const { ends } = observe([prompt(1), say('Starting the long task'), cancel(), say(' - stopping now.'), answer(1, { stopReason: 'cancelled' })]);
    expect(ends.map((r) => [r.stopReason, r.output])).toEqual([['aborted', [{ type: 'text', text: 'Starting the long task - stopping now.' }]]]);
  });

  it('closes the run on a draft-v2 idle state update and ignores the later response and text', () => {
    const { ends } = observe([
      prompt(1),
      say('Finished before idle.'),
      update({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'end_turn' }),
      say('Late text after idle.'),
      answer(1, { stopReason: 'max_tokens' }),
    ]);
    expect(ends.map((r) => [r.stopReason, r.output, r.endTime])).toEqual([['completed', [{ type: 'text', text: 'Finished before idle.' }], 102]]);
  });

  it('waits past a draft-v2 acceptance (messageId, no stop reason) for the idle state update', () => {
    const { ends } = observe([
      prompt(1),
      answer(1, { messageId: 'm-1' }),
      update({ sessionUpdate: 'state_update', state: 'running' }),
      say('Working on it.'),
      update({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'error', error: { code: -32603, message: 'model unavailable' } }),
    ]);
    expect(ends.map((r) => [r.stopReason, r.diagnostic, r.output])).toEqual([['error', 'model unavailable', [{ type: 'text', text: 'Working on it.' }]]]);
  });

  it('ends a turn whose idle update reports no stop reason as error, never completed', () => {
    const { ends } = observe([prompt(1), say('Hm.'), update({ sessionUpdate: 'state_update', state: 'idle' })]);
    expect(ends.map((r) => [r.stopReason, r.diagnostic])).toEqual([['error', 'the agent went idle without reporting a stop reason']]);
  });

  it('maps an idle cancelled stop reason to aborted', () => {
    const { ends } = observe([prompt(1), cancel(), update({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'cancelled' })]);
    expect(ends.map((r) => [r.stopReason, r.output])).toEqual([['aborted', undefined]]);
  });

  it('close() ends an open run as error with the partial text, once', () => {
    const { tracker, ends } = observe([prompt(1), say('Partial')]);
    tracker.close(500, 'the agent exited with code 3 before the prompt turn finished');
    tracker.close(600);
    tracker.observeFrame('agent->client', { kind: 'response', id: 1, result: { stopReason: 'end_turn' } }, 700);
    expect(ends.map((r) => [r.stopReason, r.diagnostic, r.output, r.endTime])).toEqual([
      ['error', 'the agent exited with code 3 before the prompt turn finished', [{ type: 'text', text: 'Partial' }], 500],
    ]);
  });

  it('endOpenRuns() ends open runs with the given stop reason at the clock time', () => {
    const { tracker, ends } = observe([prompt(1), say('Starting the long task'), cancel()]);
    tracker.endOpenRuns('aborted', 'the agent did not answer session/cancel within 2000 ms');
    expect(ends.map((r) => [r.stopReason, r.diagnostic, r.output, r.endTime])).toEqual([
      ['aborted', 'the agent did not answer session/cancel within 2000 ms', [{ type: 'text', text: 'Starting the long task' }], 999],
    ]);
    expect(tracker.openRuns).toBe(0);
  });
});

describe('AcpTracker: identity and trace context', () => {
  it('parents the run with _meta.traceparent and tracestate of the prompt', () => {
    const { starts } = observe([prompt(1, 's1', { traceparent: TRACEPARENT, tracestate: 'vendor=1' })], { traceparent: OTHER_TRACEPARENT });
    expect(starts).toEqual([{ runId: 'run-1', source: 'acp', agentName: 'acp', sessionId: 's1', traceparent: TRACEPARENT, tracestate: 'vendor=1', startTime: 100, prompt: [{ type: 'text', text: 'Find the config' }] }]);
  });

  it('falls back to the configured traceparent and tracestate when the prompt carries none', () => {
    const { starts } = observe([prompt(1)], { traceparent: OTHER_TRACEPARENT, tracestate: 'proxy=1' });
    expect(starts.map((s) => [s.traceparent, s.tracestate])).toEqual([[OTHER_TRACEPARENT, 'proxy=1']]);
  });

  it('never mixes the prompt traceparent with the configured tracestate', () => {
    const { starts } = observe([prompt(1, 's1', { traceparent: TRACEPARENT })], { traceparent: OTHER_TRACEPARENT, tracestate: 'proxy=1' });
    expect(starts.map((s) => [s.traceparent, s.tracestate])).toEqual([[TRACEPARENT, undefined]]);
  });

  it('names runs after the agentInfo of initialize, unless a name is configured', () => {
    expect(observe([...initialize(0, { name: 'fake-acp-agent', version: '1' }), prompt(1)]).starts.map((s) => s.agentName)).toEqual(['fake-acp-agent']);
    expect(observe([...initialize(0, { name: 'fake-acp-agent', version: '1' }), prompt(1)], { agentName: 'reviewer' }).starts.map((s) => s.agentName)).toEqual([
      'reviewer',
    ]);
    expect(observe([...initialize(0), prompt(1)]).starts.map((s) => s.agentName)).toEqual(['acp']);
  });
});

describe('AcpTracker: input it does not fold', () => {
  it('ignores session/load, its replayed history and other methods', () => {
    const { starts, ends } = observe([
      request(1, 'session/load', { sessionId: 's1', cwd: '/w', mcpServers: [] }),
      update({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'old question' } }),
      say('old answer'),
      answer(1, null),
      request(2, 'authenticate', { methodId: 'x' }),
      answer(2, {}),
      ['agent->client', { kind: 'request', id: 0, method: 'session/request_permission', params: { sessionId: 's1' } }],
      ['client->agent', { kind: 'response', id: 0, result: { outcome: { outcome: 'cancelled' } } }],
      prompt(3),
      update({ sessionUpdate: 'hologram', beams: 3 }),
      say('New answer.'),
      answer(3, { stopReason: 'end_turn' }),
    ]);
    expect(starts).toHaveLength(1);
    expect(ends.map((r) => r.output)).toEqual([[{ type: 'text', text: 'New answer.' }]]);
  });

  it('reports a malformed update through onMalformed and skips it', () => {
    const { ends, malformed } = observe([
      prompt(1),
      say('Kept.'),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 42 } }),
      answer(1, { stopReason: 'end_turn' }),
    ]);
    expect(malformed).toEqual([{ origin: 'acp', code: 'invalid', message: 'params.update.content.text: expected string, received number 42' }]);
    expect(ends.map((r) => r.output)).toEqual([[{ type: 'text', text: 'Kept.' }]]);
  });

  it('opens no run for malformed prompt params, and ignores that prompt response', () => {
    const { starts, ends, malformed } = observe([request(1, 'session/prompt', { prompt: [] }), say('orphan'), answer(1, { stopReason: 'end_turn' })]);
    expect([starts, ends]).toEqual([[], []]);
    expect(malformed).toEqual([{ origin: 'acp', code: 'invalid', message: 'params.sessionId: expected string, received nothing (field missing)' }]);
  });

  it('ends a turn whose response is malformed as error and reports it', () => {
    const { ends, malformed } = observe([prompt(1), say('Done?'), answer(1, { stopReason: 17 })]);
    expect(ends.map((r) => [r.stopReason, r.diagnostic])).toEqual([
      ['error', 'malformed session/prompt response: result.stopReason: expected string, received number 17'],
    ]);
    expect(malformed.map((m) => m.message)).toEqual(['result.stopReason: expected string, received number 17']);
  });

  it('reports malformed initialize results and session/cancel params', () => {
    const { malformed } = observe([request(0, 'initialize', {}), answer(0, { agentInfo: { version: '1' } }), ['client->agent', { kind: 'notification', method: 'session/cancel', params: {} }]]);
    expect(malformed.map((m) => m.message)).toEqual([
      'result.agentInfo.name: expected string, received nothing (field missing)',
      'params.sessionId: expected string, received nothing (field missing)',
    ]);
  });
});
