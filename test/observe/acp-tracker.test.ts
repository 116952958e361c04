import { describe, expect, it } from 'vitest';
import { AcpTracker, type AcpTrackerOptions } from '../../src/observe/acp-tracker.js';
import type { Direction } from '../../src/observe/frame-observer.js';
import type { RunRecord, RunStart } from '../../src/observe/run-record.js';
import type { JsonRpcFrame } from '../../src/wire/jsonrpc.js';

type Step = readonly [Direction, JsonRpcFrame];

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const OTHER_TRACEPARENT = '00-11111111111111111111111111111111-2222222222222222-01';

const request = (id: number, method: string, params: unknown): Step => [
  'client->agent',
  { kind: 'request', id, method, params },
];
const cancel = (sessionId = 's1'): Step => [
  'client->agent',
  { kind: 'notification', method: 'session/cancel', params: { sessionId } },
];
const answer = (id: number, result: unknown): Step => ['agent->client', { kind: 'response', id, result }];
const failure = (id: number, code: number, message: string): Step => [
  'agent->client',
  { kind: 'response', id, error: { code, message } },
];
const update = (update: Record<string, unknown>, sessionId = 's1'): Step => [
  'agent->client',
  { kind: 'notification', method: 'session/update', params: { sessionId, update } },
];
const say = (text: string, sessionId = 's1'): Step =>
  update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } }, sessionId);
const think = (text: string): Step => update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text } });
const prompt = (id: number, sessionId = 's1', meta?: Record<string, unknown>): Step =>
  request(id, 'session/prompt', {
    sessionId,
    prompt: [{ type: 'text', text: 'Find the config' }],
    ...(meta !== undefined ? { _meta: meta } : {}),
  });
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

const NO_USAGE = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  reported: false,
};

describe('AcpTracker: one run per prompt turn', () => {
  it('opens a run on session/prompt and closes it on the response with the streamed text', () => {
    const { starts, ends } = observe([
      ...initialize(0),
      prompt(1),
      say('All done.'),
      answer(1, { stopReason: 'end_turn' }),
    ]);
    const PROMPT = [{ type: 'text', text: 'Find the config' }];
    expect(starts).toEqual([
      { runId: 'run-1', source: 'acp', agentName: 'acp', sessionId: 's1', startTime: 102, prompt: PROMPT },
    ]);
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
      update({
        sessionUpdate: 'tool_call',
        toolCallId: 'call_1',
        title: 'Read config.json',
        name: 'read_file',
        kind: 'read',
        status: 'pending',
      }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'call_1', status: 'in_progress' }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'call_1', status: 'completed' }),
      answer(1, { stopReason: 'max_tokens', usage: { inputTokens: 2510, outputTokens: 304, totalTokens: 2814 } }),
    ]);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({
      stopReason: 'max-tokens',
      output: [{ type: 'text', text: 'I found the config file. Reading it now.' }],
      outputSource: 'stream',
      usage: {
        inputTokens: 2510,
        outputTokens: 304,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        reported: true,
      },
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
    expect(ends.map((r) => [r.stopReason, r.diagnostic, r.output])).toEqual([
      [mapped, diagnostic, [{ type: 'text', text: 'Step one done.' }]],
    ]);
  });

  it('ends a turn answered with a JSON-RPC error as error, with the message as diagnostic and the partial text kept', () => {
    const { ends } = observe([
      prompt(1),
      say('Half an answer'),
      failure(1, -32603, 'Internal error: model unavailable'),
    ]);
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
    expect(ends.map((r) => [r.output, r.outputSource])).toEqual([
      [[{ type: 'text', text: 'Visible answer.' }], 'stream'],
    ]);
  });

  it('reports no output for a turn that streamed only non-text blocks and a plan', () => {
    const { ends } = observe([
      prompt(1),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'image', data: 'AA==', mimeType: 'image/png' } }),
      update({
        sessionUpdate: 'agent_message_chunk',
        content: { type: 'resource', resource: { uri: 'file:///n.md', text: '# Notes' } },
      }),
      update({ sessionUpdate: 'plan', entries: [] }),
      answer(1, { stopReason: 'end_turn' }),
    ]);
    expect(ends.map((r) => [r.stopReason, r.output, r.outputSource])).toEqual([['completed', undefined, 'none']]);
  });

  it('records a failed tool as an error and an unfinished one as unfinished when the turn did not complete', () => {
    const { ends } = observe([
      prompt(1),
      update({
        sessionUpdate: 'tool_call',
        toolCallId: 'c1',
        title: 'Write notes.md',
        kind: 'edit',
        status: 'pending',
      }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'failed' }),
      update({
        sessionUpdate: 'tool_call',
        toolCallId: 'c2',
        title: 'Run tests',
        kind: 'execute',
        status: 'in_progress',
      }),
      answer(1, { stopReason: 'refusal' }),
    ]);
    expect(ends[0]?.toolCalls).toEqual([
      {
        callId: 'c1',
        title: 'Write notes.md',
        toolType: 'edit',
        startTime: 101,
        endTime: 102,
        isError: true,
        errorType: 'tool_error',
      },
      { callId: 'c2', title: 'Run tests', toolType: 'execute', startTime: 103, isError: true, errorType: 'unfinished' },
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
      { callId: 'c1', title: 'Search', startTime: 101, endTime: 101, isError: false },
      { callId: 'c9', title: 'Fetch page', startTime: 102, endTime: 102, isError: false },
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
    const { ends } = observe([
      prompt(1),
      say('Starting the long task'),
      cancel(),
      say(' - stopping now.'),
      answer(1, { stopReason: 'cancelled' }),
    ]);
    expect(ends.map((r) => [r.stopReason, r.output])).toEqual([
      ['aborted', [{ type: 'text', text: 'Starting the long task - stopping now.' }]],
    ]);
  });

  it('closes the run on a draft-v2 idle state update and ignores the later response and text', () => {
    const { ends } = observe([
      prompt(1),
      say('Finished before idle.'),
      update({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'end_turn' }),
      say('Late text after idle.'),
      answer(1, { stopReason: 'max_tokens' }),
    ]);
    expect(ends.map((r) => [r.stopReason, r.output, r.endTime])).toEqual([
      ['completed', [{ type: 'text', text: 'Finished before idle.' }], 102],
    ]);
  });

  it('waits past a draft-v2 acceptance (messageId, no stop reason) for the idle state update', () => {
    const { ends } = observe([
      prompt(1),
      answer(1, { messageId: 'm-1' }),
      update({ sessionUpdate: 'state_update', state: 'running' }),
      say('Working on it.'),
      update({
        sessionUpdate: 'state_update',
        state: 'idle',
        stopReason: 'error',
        error: { code: -32603, message: 'model unavailable' },
      }),
    ]);
    expect(ends.map((r) => [r.stopReason, r.diagnostic, r.output])).toEqual([
      ['error', 'model unavailable', [{ type: 'text', text: 'Working on it.' }]],
    ]);
  });

  it('ends a turn whose idle update reports no stop reason as error, never completed', () => {
    const { ends } = observe([prompt(1), say('Hm.'), update({ sessionUpdate: 'state_update', state: 'idle' })]);
    expect(ends.map((r) => [r.stopReason, r.diagnostic])).toEqual([
      ['error', 'the agent went idle without reporting a stop reason'],
    ]);
  });

  it('maps an idle cancelled stop reason to aborted', () => {
    const { ends } = observe([
      prompt(1),
      cancel(),
      update({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'cancelled' }),
    ]);
    expect(ends.map((r) => [r.stopReason, r.output])).toEqual([['aborted', undefined]]);
  });

  it('close() ends an open run as error with the partial text, once', () => {
    const { tracker, ends } = observe([prompt(1), say('Partial')]);
    tracker.close(500, 'the agent exited with code 3 before the prompt turn finished');
    tracker.close(600);
    tracker.observeFrame('agent->client', { kind: 'response', id: 1, result: { stopReason: 'end_turn' } }, 700);
    expect(ends.map((r) => [r.stopReason, r.diagnostic, r.output, r.endTime])).toEqual([
      [
        'error',
        'the agent exited with code 3 before the prompt turn finished',
        [{ type: 'text', text: 'Partial' }],
        500,
      ],
    ]);
  });

  it('endOpenRuns() ends open runs with the given stop reason at the clock time', () => {
    const { tracker, ends } = observe([prompt(1), say('Starting the long task'), cancel()]);
    tracker.endOpenRuns('aborted', 'the agent did not answer session/cancel within 2000 ms');
    expect(ends.map((r) => [r.stopReason, r.diagnostic, r.output, r.endTime])).toEqual([
      [
        'aborted',
        'the agent did not answer session/cancel within 2000 ms',
        [{ type: 'text', text: 'Starting the long task' }],
        999,
      ],
    ]);
    expect(tracker.openRuns).toBe(0);
  });
});

describe('AcpTracker: identity and trace context', () => {
  it('parents the run with _meta.traceparent and tracestate of the prompt', () => {
    const { starts } = observe([prompt(1, 's1', { traceparent: TRACEPARENT, tracestate: 'vendor=1' })], {
      traceparent: OTHER_TRACEPARENT,
    });
    expect(starts).toEqual([
      {
        runId: 'run-1',
        source: 'acp',
        agentName: 'acp',
        sessionId: 's1',
        traceparent: TRACEPARENT,
        tracestate: 'vendor=1',
        startTime: 100,
        prompt: [{ type: 'text', text: 'Find the config' }],
      },
    ]);
  });

  it('falls back to the configured traceparent and tracestate when the prompt carries none', () => {
    const { starts } = observe([prompt(1)], { traceparent: OTHER_TRACEPARENT, tracestate: 'proxy=1' });
    expect(starts.map((s) => [s.traceparent, s.tracestate])).toEqual([[OTHER_TRACEPARENT, 'proxy=1']]);
  });

  it('never mixes the prompt traceparent with the configured tracestate', () => {
    const { starts } = observe([prompt(1, 's1', { traceparent: TRACEPARENT })], {
      traceparent: OTHER_TRACEPARENT,
      tracestate: 'proxy=1',
    });
    expect(starts.map((s) => [s.traceparent, s.tracestate])).toEqual([[TRACEPARENT, undefined]]);
  });

  it('names runs after the agentInfo of initialize, unless a name is configured', () => {
    expect(
      observe([...initialize(0, { name: 'fake-acp-agent', version: '1' }), prompt(1)]).starts.map((s) => s.agentName),
    ).toEqual(['fake-acp-agent']);
    expect(
      observe([...initialize(0, { name: 'fake-acp-agent', version: '1' }), prompt(1)], {
        agentName: 'reviewer',
      }).starts.map((s) => s.agentName),
    ).toEqual(['reviewer']);
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
    expect(malformed).toEqual([
      { origin: 'acp', code: 'invalid', message: 'params.update.content.text: expected string, received number 42' },
    ]);
    expect(ends.map((r) => r.output)).toEqual([[{ type: 'text', text: 'Kept.' }]]);
  });

  it('opens no run for malformed prompt params, and ignores that prompt response', () => {
    const { starts, ends, malformed } = observe([
      request(1, 'session/prompt', { prompt: [] }),
      say('orphan'),
      answer(1, { stopReason: 'end_turn' }),
    ]);
    expect([starts, ends]).toEqual([[], []]);
    expect(malformed).toEqual([
      {
        origin: 'acp',
        code: 'invalid',
        message: 'params.sessionId: expected string, received nothing (field missing)',
      },
    ]);
  });

  it('ends a turn whose response is malformed as error and reports it', () => {
    const { ends, malformed } = observe([prompt(1), say('Done?'), answer(1, { stopReason: 17 })]);
    expect(ends.map((r) => [r.stopReason, r.diagnostic])).toEqual([
      ['error', 'malformed session/prompt response: result.stopReason: expected string, received number 17'],
    ]);
    expect(malformed.map((m) => m.message)).toEqual(['result.stopReason: expected string, received number 17']);
  });

  it('reports malformed initialize results and session/cancel params', () => {
    const { malformed } = observe([
      request(0, 'initialize', {}),
      answer(0, { agentInfo: { version: '1' } }),
      ['client->agent', { kind: 'notification', method: 'session/cancel', params: {} }],
    ]);
    expect(malformed.map((m) => m.message)).toEqual([
      'result.agentInfo.name: expected string, received nothing (field missing)',
      'params.sessionId: expected string, received nothing (field missing)',
    ]);
  });
});

const permissionRequest = (id: number | string, toolCall: Record<string, unknown>, sessionId = 's1'): Step => [
  'agent->client',
  {
    kind: 'request',
    id,
    method: 'session/request_permission',
    params: {
      sessionId,
      toolCall,
      options: [
        { optionId: 'yes', name: 'Allow', kind: 'allow_once' },
        { optionId: 'always', name: 'Always', kind: 'allow_always' },
        { optionId: 'no', name: 'Reject', kind: 'reject_once' },
        { optionId: 'custom', name: 'Something else' },
      ],
    },
  },
];
const permissionAnswer = (id: number | string, outcome: Record<string, unknown>): Step => [
  'client->agent',
  { kind: 'response', id, result: { outcome } },
];

describe('AcpTracker: truncation signatures', () => {
  it('turns a matching JSON-RPC error into max-tokens naming the signature, keeping code, cause and partial text', () => {
    const { ends } = observe([
      prompt(1),
      say('Here is the first '),
      [
        'agent->client',
        {
          kind: 'response',
          id: 1,
          error: {
            code: -32603,
            message: 'Internal error',
            data: { message: 'stream disconnected: Incomplete response returned, reason: max_output_tokens' },
          },
        },
      ],
    ]);
    expect(ends.map((r) => [r.stopReason, r.stopReasonInferredFrom, r.rpcError, r.diagnostic, r.output])).toEqual([
      [
        'max-tokens',
        'codex-acp/max_output_tokens@1',
        {
          code: -32603,
          message: 'Internal error: stream disconnected: Incomplete response returned, reason: max_output_tokens',
        },
        'Internal error: stream disconnected: Incomplete response returned, reason: max_output_tokens',
        [{ type: 'text', text: 'Here is the first ' }],
      ],
    ]);
  });

  it("recognises codex-acp 2.6's output limit: its sentence as the turn's last text chunk, then end_turn", () => {
    const { ends } = observe([
      prompt(1),
      say('Here is the first part of a long'),
      say('Incomplete response returned, reason: max_output_tokens\n\n'),
      answer(1, { stopReason: 'end_turn' }),
      prompt(2),
      say('Incomplete response returned, reason: max_output_tokens\n\n'),
      say('but the turn went on.'),
      answer(2, { stopReason: 'end_turn' }),
    ]);
    expect(ends.map((r) => [r.stopReason, r.stopReasonInferredFrom ?? null])).toEqual([
      ['max-tokens', 'codex-acp/incomplete_text_chunk@2'],
      ['completed', null],
    ]);
    // The client's text stays the output, the sentence included.
    expect(ends[0]?.output).toEqual([
      {
        type: 'text',
        text: 'Here is the first part of a longIncomplete response returned, reason: max_output_tokens\n\n',
      },
    ]);
  });

  it("recognises claude-agent-acp 0.101's typed error kind without its text", () => {
    const { ends } = observe([
      prompt(1),
      [
        'agent->client',
        {
          kind: 'response',
          id: 1,
          error: { code: -32603, message: 'Internal error', data: { errorKind: 'max_output_tokens' } },
        },
      ],
    ]);
    expect(ends.map((r) => [r.stopReason, r.stopReasonInferredFrom])).toEqual([
      ['max-tokens', 'claude-agent-acp/error_kind_max_output_tokens@2'],
    ]);
  });

  it('changes nothing when recognition is turned off with an empty table', () => {
    const { ends } = observe(
      [
        prompt(1),
        failure(1, -32603, "Internal error: API Error: Claude's response exceeded the 32000 output token maximum."),
      ],
      {
        truncationSignatures: [],
      },
    );
    expect(ends.map((r) => [r.stopReason, r.stopReasonInferredFrom])).toEqual([['error', undefined]]);
  });

  it('recognises a result _meta signature of a given table, and never re-labels a reported max_tokens', () => {
    const table = [
      {
        id: 'x/meta@1',
        agent: 'x',
        agentVersions: '1',
        kind: 'result' as const,
        stopReason: 'end_turn',
        metaPath: ['finish'],
        pattern: /^MAX_TOKENS$/,
      },
    ];
    const { ends } = observe(
      [
        prompt(1),
        answer(1, { stopReason: 'end_turn', _meta: { finish: 'MAX_TOKENS' } }),
        prompt(2),
        answer(2, { stopReason: 'max_tokens', _meta: { finish: 'MAX_TOKENS' } }),
        prompt(3),
        answer(3, { stopReason: 'end_turn', _meta: { finish: 'STOP' } }),
      ],
      { truncationSignatures: table },
    );
    expect(ends.map((r) => [r.stopReason, r.stopReasonInferredFrom ?? null])).toEqual([
      ['max-tokens', 'x/meta@1'],
      ['max-tokens', null],
      ['completed', null],
    ]);
  });

  it('records the code and message of a draft-v2 idle state failure and matches it too', () => {
    const { ends } = observe([
      prompt(1),
      update({
        sessionUpdate: 'state_update',
        state: 'idle',
        stopReason: 'error',
        error: { code: -32603, message: "API Error: Claude's response exceeded the 4096 output token maximum." },
      }),
      prompt(2, 's2'),
      update(
        {
          sessionUpdate: 'state_update',
          state: 'idle',
          stopReason: 'error',
          error: { code: 401, message: 'Unauthorized' },
        },
        's2',
      ),
    ]);
    expect(ends.map((r) => [r.stopReason, r.stopReasonInferredFrom ?? null, r.rpcError])).toEqual([
      [
        'max-tokens',
        'claude-agent-acp/output_token_maximum@1',
        { code: -32603, message: "API Error: Claude's response exceeded the 4096 output token maximum." },
      ],
      ['error', null, { code: 401, message: 'Unauthorized' }],
    ]);
  });

  it('caps the recorded error text at 4096 UTF-8 bytes', () => {
    const { ends } = observe([prompt(1), failure(1, -32000, `boom ${'é'.repeat(5000)}`)]);
    expect(Buffer.byteLength(ends[0]?.rpcError?.message ?? '', 'utf8')).toBeLessThanOrEqual(4096);
    expect(ends[0]?.rpcError?.message.startsWith('boom éé')).toBe(true);
  });
});

describe('AcpTracker: usage shapes', () => {
  it('reads _meta.quota.token_count when the response has no usage, and prefers usage when both are there', () => {
    const quota = { quota: { token_count: { input_tokens: 1200, output_tokens: 17 }, model_usage: [] } };
    const { ends } = observe([
      prompt(1),
      answer(1, { stopReason: 'end_turn', _meta: quota }),
      prompt(2),
      answer(2, { stopReason: 'end_turn', usage: { inputTokens: 5, outputTokens: 6 }, _meta: quota }),
      prompt(3),
      answer(3, { stopReason: 'end_turn', _meta: { quota: { token_count: { input_tokens: -1, output_tokens: 17 } } } }),
    ]);
    expect(
      ends.map((r) => [r.usage.inputTokens, r.usage.outputTokens, r.usage.reported, r.usageOrigin ?? null]),
    ).toEqual([
      [1200, 17, true, 'meta-quota'],
      [5, 6, true, 'prompt-response'],
      [0, 0, false, null],
    ]);
  });

  it('records the last usage_update of the turn as context window and cumulative cost, never as tokens', () => {
    const { ends } = observe([
      prompt(1),
      update({ sessionUpdate: 'usage_update', used: 900, size: 200000, cost: { amount: 0.01, currency: 'USD' } }),
      update({ sessionUpdate: 'usage_update', used: 1401, size: 200000, cost: { amount: 'lots' } }),
      answer(1, { stopReason: 'end_turn' }),
      prompt(2),
      answer(2, { stopReason: 'end_turn' }),
    ]);
    expect(ends.map((r) => [r.contextWindow ?? null, r.sessionCost ?? null, r.usage.reported])).toEqual([
      [{ used: 1401, size: 200000 }, { amount: 0.01, currency: 'USD' }, false],
      [null, null, false],
    ]);
  });
});

describe('AcpTracker: tool calls and permissions', () => {
  it("names a tool after the agent's own name in _meta, keeps the latest title and kind, and never duplicates it on late updates", () => {
    const meta = { claudeCode: { toolName: 'Bash' } };
    const { ends } = observe([
      prompt(1),
      update({
        sessionUpdate: 'tool_call',
        toolCallId: 't1',
        title: 'Terminal',
        kind: 'execute',
        status: 'pending',
        _meta: meta,
      }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 't1', title: 'ls -la', _meta: meta }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'completed', _meta: meta }),
      update({
        sessionUpdate: 'tool_call_update',
        toolCallId: 't1',
        status: 'failed',
        _meta: { claudeCode: { toolName: 'Bash', toolResponse: {} } },
      }),
      answer(1, { stopReason: 'end_turn' }),
    ]);
    expect(ends[0]?.toolCalls).toEqual([
      {
        callId: 't1',
        name: 'Bash',
        title: 'ls -la',
        toolType: 'execute',
        startTime: 101,
        endTime: 103,
        isError: false,
      },
    ]);
  });

  it('starts a tool seen only in session/request_permission there, and records each kind of answer', () => {
    const tool = (id: string) => ({ toolCallId: id, title: `Run ${id}`, kind: 'execute', status: 'pending' });
    const { ends } = observe([
      prompt(1),
      permissionRequest(0, tool('a')),
      permissionAnswer(0, { outcome: 'selected', optionId: 'yes' }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'a', status: 'completed' }),
      permissionRequest('p1', tool('b')),
      permissionAnswer('p1', { outcome: 'selected', optionId: 'no' }),
      permissionRequest(2, tool('c')),
      permissionAnswer(2, { outcome: 'cancelled' }),
      permissionRequest(3, tool('d')),
      permissionAnswer(3, { outcome: 'selected', optionId: 'custom' }),
      permissionRequest(4, tool('e')),
      ['client->agent', { kind: 'response', id: 4, error: { code: -32603, message: 'client broke' } }],
      permissionRequest(5, tool('f')),
      answer(1, { stopReason: 'end_turn' }),
    ]);
    expect(
      ends[0]?.toolCalls.map((t) => [t.callId, t.permission, t.endTime ?? null, t.isError, t.errorType ?? null]),
    ).toEqual([
      ['a', { outcome: 'allow_once', optionId: 'yes' }, 103, false, null],
      ['b', { outcome: 'reject_once', optionId: 'no' }, 105, true, 'permission_rejected'],
      ['c', { outcome: 'cancelled' }, 107, true, 'permission_cancelled'],
      ['d', { outcome: 'selected', optionId: 'custom' }, null, false, null],
      ['e', { outcome: 'error' }, null, false, null],
      ['f', { outcome: 'pending' }, null, false, null],
    ]);
    expect(ends[0]?.toolCalls[0]).toMatchObject({ title: 'Run a', toolType: 'execute', startTime: 101 });
    // The title is a command line: never a name.
    expect(ends[0]?.toolCalls.map((t) => t.name)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('keeps a permission answer that comes after the turn ended out of every run, and ignores requests outside a turn', () => {
    const { ends, malformed } = observe([
      prompt(1),
      permissionRequest(0, { toolCallId: 'a', title: 'Run a' }),
      answer(1, { stopReason: 'cancelled' }),
      permissionAnswer(0, { outcome: 'cancelled' }),
      permissionRequest(1, { toolCallId: 'z', title: 'Run z' }),
      permissionAnswer(1, { outcome: 'selected', optionId: 'yes' }),
    ]);
    expect(ends.map((r) => r.toolCalls.map((t) => [t.callId, t.permission, t.errorType]))).toEqual([
      [['a', { outcome: 'pending' }, 'unfinished']],
    ]);
    expect(malformed).toEqual([]);
  });

  it('reports a malformed permission request and answer, and goes on', () => {
    const { ends, malformed } = observe([
      prompt(1),
      [
        'agent->client',
        { kind: 'request', id: 0, method: 'session/request_permission', params: { sessionId: 's1', options: [] } },
      ],
      permissionRequest(1, { toolCallId: 'a', title: 'Run a' }),
      permissionAnswer(1, { outcome: 'selected' }),
      answer(1, { stopReason: 'end_turn' }),
    ]);
    expect(malformed.map((m) => [m.origin, m.code])).toEqual([
      ['acp', 'invalid'],
      ['acp', 'invalid'],
    ]);
    expect(ends[0]?.toolCalls.map((t) => [t.callId, t.permission])).toEqual([['a', { outcome: 'pending' }]]);
  });
});

describe('AcpTracker: agents that report session usage totals', () => {
  const SESSION_SCOPE = [{ agent: 'totals-agent', agentVersions: '1', scope: 'session' as const }];
  const newSession = (id: number, sessionId: string): Step[] => [
    request(id, 'session/new', { cwd: '/', mcpServers: [] }),
    answer(id, { sessionId }),
  ];

  it('turns the totals of a session it saw created into per-turn figures', () => {
    const { ends } = observe(
      [
        ...initialize(0, { name: 'totals-agent' }),
        ...newSession(1, 's1'),
        prompt(2),
        answer(2, {
          stopReason: 'end_turn',
          usage: { inputTokens: 1000, outputTokens: 50, totalTokens: 1050, cachedReadTokens: 10 },
        }),
        prompt(3),
        answer(3, {
          stopReason: 'end_turn',
          usage: { inputTokens: 2300, outputTokens: 80, totalTokens: 2380, cachedReadTokens: 30 },
        }),
      ],
      { usageScopes: SESSION_SCOPE },
    );
    expect(
      ends.map((r) => [
        r.usage.inputTokens,
        r.usage.outputTokens,
        r.usage.cacheReadTokens,
        r.usageOrigin,
        r.sessionUsageTotals,
      ]),
    ).toEqual([
      [1000, 50, 10, 'prompt-response-session-delta', undefined],
      [1300, 30, 20, 'prompt-response-session-delta', undefined],
    ]);
  });

  it('keeps totals it cannot subtract from (a session it did not see start, a count that went down) as cumulative', () => {
    const { ends } = observe(
      [
        ...initialize(0, { name: 'totals-agent' }),
        prompt(1, 'loaded'),
        answer(1, { stopReason: 'end_turn', usage: { inputTokens: 9000, outputTokens: 400 } }),
        prompt(2, 'loaded'),
        answer(2, { stopReason: 'end_turn', usage: { inputTokens: 9500, outputTokens: 420 } }),
        prompt(3, 'loaded'),
        answer(3, { stopReason: 'end_turn', usage: { inputTokens: 100, outputTokens: 5 } }),
      ],
      { usageScopes: SESSION_SCOPE },
    );
    expect(
      ends.map((r) => [r.usage.reported, r.usage.inputTokens, r.usageOrigin ?? null, r.sessionUsageTotals ?? null]),
    ).toEqual([
      [false, 0, null, { inputTokens: 9000, outputTokens: 400 }],
      [true, 500, 'prompt-response-session-delta', null],
      [false, 0, null, { inputTokens: 100, outputTokens: 5 }],
    ]);
  });

  it("reads usage as the turn's own for agents not declared to send totals", () => {
    const { ends } = observe(
      [
        ...initialize(0, { name: 'other' }),
        prompt(1),
        answer(1, { stopReason: 'end_turn', usage: { inputTokens: 7, outputTokens: 3 } }),
      ],
      { usageScopes: SESSION_SCOPE },
    );
    expect(ends.map((r) => [r.usage.inputTokens, r.usageOrigin])).toEqual([[7, 'prompt-response']]);
  });
});
