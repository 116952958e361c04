import { describe, expect, it } from 'vitest';
import { REMEMBERED_CLOSED_SESSIONS, SdkTracker } from '../../src/observe/sdk-tracker.js';
import type { RunListener, RunRecord, RunStart } from '../../src/observe/run-record.js';
import type { JsonRpcFrame } from '../../src/wire/jsonrpc.js';
import type { SessionEvent } from '../../src/wire/events.js';
import {
  events,
  finish,
  step,
  text,
  textDelta,
  toolCall,
  toolCallEvent,
  toolDelta,
  toolResultEvent,
  turnEnd,
  turnStart,
  usage,
} from '../helpers/events.js';

class Recorder implements RunListener {
  starts: RunStart[] = [];
  ends: RunRecord[] = [];
  malformed: Array<{ origin: string; code: string; message: string }> = [];
  onRunStart(start: RunStart): void {
    this.starts.push(start);
  }
  onRunEnd(record: RunRecord): void {
    this.ends.push(record);
  }
  onMalformed(origin: string, error: { code: string; message: string }): void {
    this.malformed.push({ origin, ...error });
  }
}

const note = (method: string, params: unknown): JsonRpcFrame => ({ kind: 'notification', method, params });
const sessionEvent = (sessionId: string, event: SessionEvent): JsonRpcFrame =>
  note('session.event', { sessionId, event });

function feed(tracker: SdkTracker, sessionId: string, evs: SessionEvent[]): void {
  for (const e of evs) tracker.observeFrame('agent->client', sessionEvent(sessionId, e), e.time ?? 0);
}

const T0 = 1_700_000_000_000;

function counter(): () => string {
  let n = 0;
  return () => `run-${++n}`;
}

describe('SdkTracker', () => {
  it('closes a prompt turn cut off by an empty usage-only message with the streamed text, max-tokens and summed usage', () => {
    const rec = new Recorder();
    const tracker = new SdkTracker(rec, {
      newRunId: counter(),
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    });
    tracker.observeFrame(
      'client->agent',
      {
        kind: 'request',
        id: 1,
        method: 'initialize',
        params: { cwd: '/w', provider: 'deepseek', model: 'deepseek-chat' },
      },
      T0 - 5,
    );
    tracker.observeFrame(
      'client->agent',
      { kind: 'request', id: 2, method: 'session/prompt', params: { sessionId: 's1', contentBlocks: [text('go')] } },
      T0 - 1,
    );
    feed(
      tracker,
      's1',
      events(
        [
          turnStart(),
          step('embedded', {
            step: 0,
            stream: [textDelta('Partial answer '), textDelta('before the limit')],
            content: [text('x')].slice(1),
            usage: usage(100, 30, { cacheReadTokens: 50 }),
          }),
          turnEnd('max-tokens'),
        ],
        0,
        T0,
      ),
    );
    tracker.observeFrame('agent->client', { kind: 'response', id: 2, result: { messageId: 'm' } }, T0 + 100);
    expect(rec.starts).toEqual([
      {
        runId: 'run-1',
        source: 'sdk',
        agentName: 'deepseek',
        sessionId: 's1',
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        startTime: T0 - 1,
        provider: 'deepseek',
        model: 'deepseek-chat',
        prompt: [{ type: 'text', text: 'go' }],
      },
    ]);
    expect(rec.ends).toHaveLength(1);
    expect(rec.ends[0]).toMatchObject({
      runId: 'run-1',
      endTime: T0 + 20,
      stopReason: 'max-tokens',
      output: [{ type: 'text', text: 'Partial answer before the limit' }],
      outputSource: 'stream',
      emptyMessages: 1,
      usage: {
        inputTokens: 100,
        outputTokens: 30,
        cacheReadTokens: 50,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        reported: true,
      },
      steps: [
        {
          turn: 0,
          step: 0,
          startTime: T0 + 10,
          endTime: T0 + 20,
          model: 'deepseek-chat',
          usage: { inputTokens: 100, outputTokens: 30, cacheReadTokens: 50 },
        },
      ],
      toolCalls: [],
    });
    expect(rec.ends[0]?.reported).toBeUndefined();
  });

  it('nests an in-runtime subagent under the turn that started it and keeps the runtime report for comparison', () => {
    const rec = new Recorder();
    const tracker = new SdkTracker(rec, { newRunId: counter() });
    feed(
      tracker,
      'parent',
      events(
        [
          turnStart(),
          step('chunk', { step: 0, stream: [toolDelta('call_d', '{}')], content: [toolCall('call_d', 'delegate')] }),
          toolCallEvent('call_d', 0, 'delegate'),
        ],
        0,
        T0,
      ),
    );
    tracker.observeFrame(
      'agent->client',
      note('subagent.started', { parentSessionId: 'parent', childSessionId: 'child' }),
      T0 + 50,
    );
    feed(
      tracker,
      'child',
      events(
        [
          turnStart(),
          step('chunk', {
            step: 0,
            stream: [textDelta('Child partial answer.')],
            content: [text('Child partial answer.'), toolCall('c1')],
            usage: usage(10, 5),
          }),
          toolCallEvent('c1'),
          toolResultEvent('c1'),
          step('chunk', {
            step: 1,
            stream: [toolDelta('c2', '{"pa'), finish('max-tokens')],
            content: [],
            usage: usage(20, 4096),
          }),
          turnEnd('max-tokens'),
        ],
        0,
        T0 + 60,
      ),
    );
    tracker.observeFrame(
      'agent->client',
      note('subagent.finished', {
        provider: 'spawn',
        agentId: 'child-1',
        parentSessionId: 'parent',
        childSessionId: 'child',
        status: 'error',
        stopReason: 'max-tokens',
        lastAssistantMessage: [],
      }),
      T0 + 500,
    );
    feed(
      tracker,
      'parent',
      events(
        [
          toolResultEvent('call_d', true),
          step('embedded', { step: 1, content: [text('The child was cut off.')] }),
          turnEnd('completed'),
        ],
        10,
        T0 + 600,
      ),
    );

    expect(rec.starts.map((s) => [s.runId, s.source, s.sessionId, s.parentRunId, s.parentSessionId])).toEqual([
      ['run-1', 'sdk', 'parent', undefined, undefined],
      ['run-2', 'sdk-subagent', 'child', 'run-1', 'parent'],
    ]);
    const [child, parent] = rec.ends;
    // `subagent.finished.provider` names the subagent provider, never the model provider.
    expect(child?.provider).toBeUndefined();
    expect(child).toMatchObject({
      runId: 'run-2',
      stopReason: 'max-tokens',
      subagentProvider: 'spawn',
      agentName: 'spawn',
      output: [
        { type: 'text', text: 'Child partial answer.' },
        { type: 'tool-call', id: 'c1', name: 'read_file', arguments: '{"path":"a.txt"}' },
      ],
      outputSource: 'message',
      emptyMessages: 1,
      usage: { inputTokens: 30, outputTokens: 4101, reported: true },
      reported: { output: [] },
      endTime: T0 + 500,
    });
    expect(child?.toolCalls).toEqual([
      { callId: 'c1', name: 'read_file', startTime: T0 + 90, endTime: T0 + 100, isError: false },
    ]);
    expect(child?.steps.map((s) => [s.step, s.finishReason])).toEqual([
      [0, undefined],
      [1, 'max-tokens'],
    ]);
    expect(parent).toMatchObject({
      runId: 'run-1',
      stopReason: 'completed',
      output: [{ type: 'text', text: 'The child was cut off.' }],
    });
    expect(parent?.toolCalls).toEqual([
      {
        callId: 'call_d',
        name: 'delegate',
        startTime: T0 + 30,
        endTime: T0 + 600,
        isError: true,
        errorType: 'tool_error',
      },
    ]);
  });

  it('works as an in-process onNotification callback without seeing any request', () => {
    const rec = new Recorder();
    const tracker = new SdkTracker(rec, { newRunId: counter(), agentName: 'researcher' });
    const onNotification = tracker.onNotification.bind(tracker);
    for (const e of events([
      turnStart(),
      step('embedded', { content: [text('The answer is 42.')], usage: usage(120, 12) }),
      turnEnd('completed'),
    ])) {
      onNotification({ method: 'session.event', params: { sessionId: 's9', event: e } });
    }
    onNotification('session.status', { sessionId: 's9', status: 'idle' });
    expect(rec.ends).toHaveLength(1);
    expect(rec.ends[0]).toMatchObject({
      agentName: 'researcher',
      sessionId: 's9',
      stopReason: 'completed',
      output: [{ type: 'text', text: 'The answer is 42.' }],
      outputSource: 'message',
    });
  });

  it('closes an open run as error with the output folded so far and no diagnostic when the stream ends', () => {
    const rec = new Recorder();
    const tracker = new SdkTracker(rec, { newRunId: counter() });
    feed(
      tracker,
      's1',
      events([turnStart(), step('chunk', { stream: [textDelta('Half')], content: [] }).slice(0, 1)].flat(), 0, T0),
    );
    tracker.close(T0 + 999, 'agent exited with code 3');
    tracker.close(T0 + 2000);
    expect(rec.ends).toHaveLength(1);
    expect(rec.ends[0]).toMatchObject({
      stopReason: 'error',
      output: [{ type: 'text', text: 'Half' }],
      endTime: T0 + 999,
    });
    expect(rec.ends[0]?.diagnostic).toBeUndefined();
  });

  it('reports a prompt answered with an error as an error run', () => {
    const rec = new Recorder();
    const tracker = new SdkTracker(rec, { newRunId: counter() });
    tracker.observeFrame(
      'client->agent',
      { kind: 'request', id: 7, method: 'session/prompt', params: { sessionId: 's', contentBlocks: [] } },
      T0,
    );
    tracker.observeFrame(
      'agent->client',
      { kind: 'response', id: 7, error: { code: -32000, message: 'no provider key' } },
      T0 + 3,
    );
    expect(rec.ends[0]).toMatchObject({ stopReason: 'error', output: undefined, outputSource: 'none' });
    expect(rec.ends[0]?.diagnostic).toBeUndefined();
  });

  it('reports malformed notifications and goes on with the run', () => {
    const rec = new Recorder();
    const tracker = new SdkTracker(rec, { newRunId: counter() });
    const [start, msg, end] = events(
      [turnStart(), step('embedded', { content: [text('ok')] }), turnEnd('completed')],
      0,
      T0,
    );
    tracker.observeFrame('agent->client', sessionEvent('s', start as SessionEvent), T0);
    tracker.observeFrame(
      'agent->client',
      note('session.event', { sessionId: 's', event: { type: 'turn/end', seq: 1, time: T0 } }),
      T0,
    );
    tracker.observeFrame(
      'agent->client',
      note('session.event', { sessionId: 's', event: { type: 'future/thing', seq: 2, time: T0 } }),
      T0,
    );
    tracker.observeFrame('agent->client', sessionEvent('s', msg as SessionEvent), T0);
    tracker.observeFrame('agent->client', sessionEvent('s', end as SessionEvent), T0);
    expect(rec.malformed).toEqual([
      {
        origin: 'sdk',
        code: 'invalid',
        message: 'params.event.data: expected object, received nothing (field missing)',
      },
    ]);
    expect(rec.ends[0]).toMatchObject({ stopReason: 'completed', output: [{ type: 'text', text: 'ok' }] });
  });

  it('ignores inherited events before a session/end-seed marker', () => {
    const rec = new Recorder();
    const tracker = new SdkTracker(rec, { newRunId: counter() });
    feed(
      tracker,
      's',
      events(
        [
          turnStart(),
          step('embedded', { content: [text('inherited')], usage: usage(5, 5) }),
          { type: 'session/end-seed', data: {} },
          step('embedded', { content: [] }),
          turnEnd('max-tokens'),
        ],
        0,
        T0,
      ),
    );
    expect(rec.ends[0]).toMatchObject({
      output: undefined,
      outputSource: 'none',
      emptyMessages: 1,
      usage: { inputTokens: 0, outputTokens: 0, reported: false },
    });
  });

  it('never lets a throwing listener break tracking of later runs', () => {
    let calls = 0;
    const tracker = new SdkTracker({
      onRunStart: () => {
        throw new Error('listener bug');
      },
      onRunEnd: () => {
        calls += 1;
      },
    });
    feed(tracker, 'a', events([turnStart(), turnEnd('completed')], 0, T0));
    feed(tracker, 'b', events([turnStart(), turnEnd('completed')], 0, T0));
    expect(calls).toBe(2);
  });
});

describe('SdkTracker with prompts queued on a busy session', () => {
  it('binds each run to its own prompt, so the previous prompt answer never closes the next run', () => {
    const rec = new Recorder();
    const tracker = new SdkTracker(rec, { newRunId: counter() });
    const prompt = (id: number, time: number) =>
      tracker.observeFrame(
        'client->agent',
        { kind: 'request', id, method: 'session/prompt', params: { sessionId: 's', contentBlocks: [text('go')] } },
        time,
      );
    prompt(1, T0);
    prompt(2, T0 + 1); // queued behind the running turn
    feed(
      tracker,
      's',
      events([turnStart(0), step('embedded', { content: [text('first')] }), turnEnd('completed', 0)], 0, T0 + 10),
    );
    feed(tracker, 's', events([turnStart(1)], 3, T0 + 40)); // the queued prompt's turn starts before the first answer
    tracker.observeFrame('agent->client', { kind: 'response', id: 1, result: { messageId: 'm1' } }, T0 + 45);
    feed(
      tracker,
      's',
      events([step('embedded', { turn: 1, content: [text('second')] }), turnEnd('completed', 1)], 4, T0 + 50),
    );
    tracker.observeFrame('agent->client', { kind: 'response', id: 2, result: { messageId: 'm2' } }, T0 + 70);
    expect(rec.ends.map((r) => [r.runId, r.stopReason, r.output])).toEqual([
      ['run-1', 'completed', [{ type: 'text', text: 'first' }]],
      ['run-2', 'completed', [{ type: 'text', text: 'second' }]],
    ]);
  });

  it('closes a queued prompt run as error when its own answer comes before its turn ends', () => {
    const rec = new Recorder();
    const tracker = new SdkTracker(rec, { newRunId: counter() });
    tracker.observeFrame(
      'client->agent',
      { kind: 'request', id: 1, method: 'session/prompt', params: { sessionId: 's', contentBlocks: [] } },
      T0,
    );
    tracker.observeFrame(
      'client->agent',
      { kind: 'request', id: 2, method: 'session/prompt', params: { sessionId: 's', contentBlocks: [] } },
      T0 + 1,
    );
    feed(tracker, 's', events([turnStart(0), turnEnd('completed', 0), turnStart(1)], 0, T0 + 10));
    tracker.observeFrame(
      'agent->client',
      { kind: 'response', id: 2, error: { code: -32000, message: 'runtime shutting down' } },
      T0 + 50,
    );
    expect(rec.ends.map((r) => [r.runId, r.stopReason, r.diagnostic])).toEqual([
      ['run-1', 'completed', undefined],
      ['run-2', 'error', undefined],
    ]);
  });
});

describe("SdkTracker frames runs as upstream's SDK client does", () => {
  const receipt = (id: string): SessionEvent =>
    ({
      type: 'agent/inbox/spliced',
      seq: 0,
      time: T0,
      data: { target: 'next-turn', start: 0, inserted: [{ id, role: 'user', content: [] }] },
    }) as SessionEvent;
  const status = (sessionId: string, value: string): JsonRpcFrame =>
    note('session.status', { sessionId, status: value });
  const prompt = (tracker: SdkTracker, id: number, sessionId: string): void =>
    tracker.observeFrame(
      'client->agent',
      { kind: 'request', id, method: 'session/prompt', params: { sessionId, contentBlocks: [text('go')] } },
      T0 - 1,
    );
  const start = (tracker: SdkTracker, sessionId: string): void => {
    prompt(tracker, 1, sessionId);
    tracker.observeFrame('agent->client', sessionEvent(sessionId, receipt('m1')), T0);
    tracker.observeFrame('agent->client', status(sessionId, 'running'), T0);
  };

  it("ends a run whose prompt answer has no messageId as error without output or usage, as upstream's client never collects it", () => {
    const rec = new Recorder();
    const tracker = new SdkTracker(rec, { newRunId: counter() });
    start(tracker, 's');
    feed(
      tracker,
      's',
      events(
        [{ type: 'assistant/chunk', data: { turn: 0, step: 0, chunk: textDelta('streamed then cut short') } }],
        1,
        T0 + 1,
      ),
    );
    tracker.observeFrame('agent->client', { kind: 'response', id: 1, result: {} }, T0 + 5);
    expect(rec.ends).toHaveLength(1);
    expect(rec.ends[0]).toMatchObject({
      stopReason: 'error',
      output: undefined,
      outputSource: 'none',
      usage: { reported: false },
      endTime: T0 + 5,
    });
  });

  it('ends a run at an assistant/message without a content array, as error with the text streamed before it', () => {
    const rec = new Recorder();
    const tracker = new SdkTracker(rec, { newRunId: counter() });
    start(tracker, 's');
    tracker.observeFrame('agent->client', { kind: 'response', id: 1, result: { messageId: 'm1' } }, T0 + 1);
    feed(
      tracker,
      's',
      events(
        [turnStart(), { type: 'assistant/chunk', data: { turn: 0, step: 0, chunk: textDelta('stream-only answer') } }],
        1,
        T0 + 2,
      ),
    );
    tracker.observeFrame(
      'agent->client',
      sessionEvent('s', {
        type: 'assistant/message',
        seq: 3,
        time: T0 + 30,
        data: { turn: 0, step: 0, message: { id: 'x', role: 'assistant', content: 'not-an-array' } },
      } as unknown as SessionEvent),
      T0 + 30,
    );
    expect(rec.ends).toHaveLength(1);
    expect(rec.ends[0]).toMatchObject({
      stopReason: 'error',
      output: [{ type: 'text', text: 'stream-only answer' }],
      outputSource: 'stream',
      endTime: T0 + 30,
    });
    tracker.observeFrame('agent->client', status('s', 'idle'), T0 + 40);
    expect(rec.ends).toHaveLength(1);
    expect(rec.malformed).toHaveLength(1);
  });

  it("keeps a run open through an invalid event upstream's client does not reject", () => {
    const rec = new Recorder();
    const tracker = new SdkTracker(rec, { newRunId: counter() });
    start(tracker, 's');
    tracker.observeFrame(
      'agent->client',
      sessionEvent('s', { type: 'step/start', seq: 1, time: T0 + 1, data: { turn: 'one' } } as unknown as SessionEvent),
      T0 + 1,
    );
    expect(rec.ends).toEqual([]);
    feed(
      tracker,
      's',
      events([turnStart(), step('embedded', { content: [text('fine')] }), turnEnd('completed')], 2, T0 + 2),
    );
    expect(rec.ends).toEqual([]); // a session that reports its status ends its run at idle, not at turn/end
    tracker.observeFrame('agent->client', status('s', 'idle'), T0 + 50);
    expect(rec.ends.map((r) => [r.stopReason, r.output, r.endTime])).toEqual([
      ['completed', [{ type: 'text', text: 'fine' }], T0 + 50],
    ]);
  });

  it("maps a turn-end kind no rule knows (upstream's FAKE_REASON_KIND=none) to error", () => {
    const rec = new Recorder();
    const tracker = new SdkTracker(rec, { newRunId: counter() });
    start(tracker, 's');
    feed(
      tracker,
      's',
      events(
        [turnStart(), step('embedded', { content: [text('hello from fake runtime')] }), turnEnd('none')],
        1,
        T0 + 1,
      ),
    );
    tracker.observeFrame('agent->client', status('s', 'idle'), T0 + 50);
    expect(rec.ends.map((r) => [r.stopReason, r.output])).toEqual([
      ['error', [{ type: 'text', text: 'hello from fake runtime' }]],
    ]);
  });

  it("nests a child whose subagent.started arrives after the parent's turn/end under the parent's run, and records its provider apart", () => {
    const rec = new Recorder();
    const tracker = new SdkTracker(rec, { newRunId: counter() });
    tracker.observeFrame(
      'client->agent',
      {
        kind: 'request',
        id: 0,
        method: 'initialize',
        params: { cwd: '/w', provider: 'deepseek', model: 'deepseek-chat' },
      },
      T0 - 2,
    );
    start(tracker, 'p');
    feed(
      tracker,
      'p',
      events(
        [turnStart(), step('embedded', { content: [text('hello from fake runtime')] }), turnEnd('completed')],
        1,
        T0 + 1,
      ),
    );
    tracker.observeFrame(
      'agent->client',
      note('subagent.started', { parentSessionId: 'p', childSessionId: 'p-child' }),
      T0 + 40,
    );
    feed(
      tracker,
      'p-child',
      events([turnStart(), step('embedded', { content: [text('child says hi')] }), turnEnd('completed')], 0, T0 + 41),
    );
    tracker.observeFrame(
      'agent->client',
      note('subagent.finished', {
        provider: 'spawn',
        agentId: 'p-child',
        parentSessionId: 'p',
        childSessionId: 'p-child',
        status: 'ok',
        stopReason: 'completed',
        lastAssistantMessage: [text('child says hi')],
      }),
      T0 + 70,
    );
    tracker.observeFrame('agent->client', status('p', 'idle'), T0 + 80);
    expect(rec.starts.map((s) => [s.runId, s.sessionId, s.parentRunId])).toEqual([
      ['run-1', 'p', undefined],
      ['run-2', 'p-child', 'run-1'],
    ]);
    expect(rec.ends.map((r) => [r.runId, r.stopReason, r.provider, r.subagentProvider, r.agentName])).toEqual([
      ['run-2', 'completed', 'deepseek', 'spawn', 'spawn'],
      ['run-1', 'completed', 'deepseek', undefined, 'deepseek'],
    ]);
  });

  it("nests a child started after its parent's run already closed (a runtime without status reports) under that run", () => {
    const rec = new Recorder();
    const tracker = new SdkTracker(rec, { newRunId: counter() });
    feed(
      tracker,
      'p',
      events([turnStart(), step('embedded', { content: [text('done')] }), turnEnd('completed')], 0, T0),
    );
    expect(rec.ends).toHaveLength(1);
    tracker.observeFrame(
      'agent->client',
      note('subagent.started', { parentSessionId: 'p', childSessionId: 'c' }),
      T0 + 40,
    );
    expect(rec.starts.map((s) => [s.runId, s.parentRunId])).toEqual([
      ['run-1', undefined],
      ['run-2', 'run-1'],
    ]);
  });

  it('remembers the last closed run of the most recent sessions only, so many sessions do not grow its memory', () => {
    const rec = new Recorder();
    const tracker = new SdkTracker(rec, { newRunId: counter() });
    const closeRunOf = (sessionId: string): void =>
      feed(
        tracker,
        sessionId,
        events([turnStart(), step('embedded', { content: [text('done')] }), turnEnd('completed')], 0, T0),
      );
    closeRunOf('oldest');
    closeRunOf('kept');
    for (let n = 0; n < REMEMBERED_CLOSED_SESSIONS - 1; n += 1) closeRunOf(`other-${n}`);
    closeRunOf('kept'); // a session closing again counts as recent
    closeRunOf('newest');
    expect(REMEMBERED_CLOSED_SESSIONS).toBe(1024);
    expect(rec.ends).toHaveLength(1027);
    // 'oldest' is one session too many ago: a late child starts unnested; the recent ones still nest.
    tracker.observeFrame(
      'agent->client',
      note('subagent.started', { parentSessionId: 'oldest', childSessionId: 'c1' }),
      T0 + 40,
    );
    tracker.observeFrame(
      'agent->client',
      note('subagent.started', { parentSessionId: 'kept', childSessionId: 'c2' }),
      T0 + 40,
    );
    tracker.observeFrame(
      'agent->client',
      note('subagent.started', { parentSessionId: 'newest', childSessionId: 'c3' }),
      T0 + 40,
    );
    expect(rec.starts.slice(-3).map((s) => [s.sessionId, s.parentRunId])).toEqual([
      ['c1', undefined],
      ['c2', 'run-1026'],
      ['c3', 'run-1027'],
    ]);
  });
});
