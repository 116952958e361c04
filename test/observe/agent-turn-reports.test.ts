/**
 * Reading the agents' own per-call records (gemini-cli's `api_response`,
 * Claude Code's `api_request`, in the OTLP JSON their exporters send) and
 * completing a wire run from them; the join that holds ACP run ends until
 * those records came or the wait ran out.
 */
import { describe, expect, it, vi } from 'vitest';
import { AgentTelemetryJoin } from '../../src/observe/agent-telemetry-join.js';
import {
  completeRun,
  GEMINI_FINISH_REASON_SOURCE,
  modelCallReports,
  ownerOfReport,
  type AgentModelCallReport,
} from '../../src/observe/agent-turn-reports.js';
import type { RunListener, RunRecord, RunStart } from '../../src/observe/run-record.js';
import type { OtlpJsonLogsRequest } from '../../src/wire/otlp-json.js';

const SESSION = '7f0c3a52-1d2e-4b8a-9c61-2f4e5d6a7b8c';
const T0 = Date.parse('2026-12-01T21:36:00.000Z');

const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
const int = (key: string, value: number) => ({ key, value: { intValue: value } });

/** A gemini-cli 0.61 `api_response` record as its OTLP/HTTP exporter sends it (shape from the installed bundle). */
function geminiRecord(at: number, finish: string, role = 'main', session = SESSION) {
  return {
    timeUnixNano: `${at}000000`,
    attributes: [
      str('session.id', session),
      str('event.name', 'gemini_cli.api_response'),
      str('event.timestamp', new Date(at).toISOString()),
      int('input_token_count', 1200),
      int('output_token_count', 17),
      int('cached_content_token_count', 200),
      int('thoughts_token_count', 0),
      { key: 'finish_reasons', value: { arrayValue: { values: [{ stringValue: finish }] } } },
      str('role', role),
    ],
  };
}

function logs(records: unknown[], scope = 'gemini-cli'): OtlpJsonLogsRequest {
  return {
    resourceLogs: [
      {
        resource: { attributes: [str('service.name', scope)] },
        scopeLogs: [{ scope: { name: scope }, logRecords: records }],
      },
    ],
  } as OtlpJsonLogsRequest;
}

function run(overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    runId: 'run-1',
    source: 'acp',
    agentName: 'gemini-cli',
    sessionId: SESSION,
    startTime: T0,
    endTime: T0 + 1000,
    stopReason: 'completed',
    output: [{ type: 'text', text: 'Here is the first part of a long' }],
    outputSource: 'stream',
    emptyMessages: 0,
    usage: {
      inputTokens: 1200,
      outputTokens: 17,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      reported: true,
    },
    steps: [],
    toolCalls: [],
    usageOrigin: 'meta-quota',
    ...overrides,
  } as RunRecord;
}

describe('modelCallReports', () => {
  it("reads gemini's api_response records: session, time, role, finish reasons and tokens", () => {
    expect(modelCallReports(logs([geminiRecord(T0 + 500, 'length')]))).toEqual([
      {
        sessionId: SESSION,
        time: T0 + 500,
        role: 'main',
        finishReasons: ['length'],
        inputTokens: 1200,
        outputTokens: 17,
        cacheReadTokens: 200,
        reasoningTokens: 0,
        inputIncludesCache: true,
      },
    ]);
  });

  it("reads Claude Code's api_request records under its own scope only, the SDK loop as main", () => {
    const record = {
      timeUnixNano: `${T0 + 300}000000`,
      attributes: [
        str('session.id', SESSION),
        str('event.name', 'api_request'),
        str('event.timestamp', new Date(T0 + 300).toISOString()),
        int('input_tokens', 1200),
        int('output_tokens', 17),
        int('cache_read_tokens', 200),
        str('query_source', 'sdk'),
      ],
    };
    const title = {
      ...record,
      attributes: [...record.attributes.slice(0, -1), str('query_source', 'generate_session_title')],
    };
    expect(
      modelCallReports(logs([record, title], 'com.anthropic.claude_code.events')).map((r) => [
        r.role,
        r.inputTokens,
        r.cacheReadTokens,
        r.inputIncludesCache,
      ]),
    ).toEqual([
      ['main', 1200, 200, false],
      ['generate_session_title', 1200, 200, false],
    ]);
    expect(modelCallReports(logs([record], 'some-other-library'))).toEqual([]);
  });

  it('skips records of other events and records without a session', () => {
    const other = {
      ...geminiRecord(T0, 'stop'),
      attributes: [str('event.name', 'gemini_cli.user_prompt'), str('session.id', SESSION)],
    };
    const noSession = {
      ...geminiRecord(T0, 'stop'),
      attributes: geminiRecord(T0, 'stop').attributes.filter((a) => a.key !== 'session.id'),
    };
    expect(modelCallReports(logs([other, noSession]))).toEqual([]);
  });
});

describe('completeRun', () => {
  const reports = (entries: Array<[number, string, string?]>): AgentModelCallReport[] =>
    modelCallReports(logs(entries.map(([at, finish, role]) => geminiRecord(at, finish, role))));

  it('turns a completed run whose last main call stopped at the length limit into max-tokens, naming the source', () => {
    const { record, join } = completeRun(run(), reports([[T0 + 500, 'length']]));
    expect(join).toBe('joined');
    expect(record.stopReason).toBe('max-tokens');
    expect(record.stopReasonInferredFrom).toBe(GEMINI_FINISH_REASON_SOURCE);
    expect(record.agentTelemetry).toBe('joined');
    // Usage the wire reported stays as it was.
    expect(record.usage.inputTokens).toBe(1200);
    expect(record.usageOrigin).toBe('meta-quota');
  });

  it('keeps a normal stop, a stop of a side call, and calls of other sessions or outside the window out of it', () => {
    expect(completeRun(run(), reports([[T0 + 500, 'stop']])).record.stopReason).toBe('completed');
    expect(
      completeRun(
        run(),
        reports([
          [T0 + 400, 'length', 'utility_router'],
          [T0 + 500, 'stop'],
        ]),
      ).record.stopReason,
    ).toBe('completed');
    expect(completeRun(run(), reports([[T0 + 5000, 'length']])).join).toBe('none');
    const other = modelCallReports(logs([geminiRecord(T0 + 500, 'length', 'main', 'another-session')]));
    expect(completeRun(run(), other).record).toMatchObject({ stopReason: 'completed', agentTelemetry: 'none' });
  });

  it('never overrules what the wire said: an error stays an error', () => {
    expect(completeRun(run({ stopReason: 'error' }), reports([[T0 + 500, 'length']])).record.stopReason).toBe('error');
  });

  it('fills usage only where the wire reported none, disjoint from the cached part', () => {
    const none = run({
      usage: {
        inputTokens: 0,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        reported: false,
      },
    });
    delete (none as { usageOrigin?: string }).usageOrigin;
    const { record } = completeRun(
      none,
      reports([
        [T0 + 200, 'stop'],
        [T0 + 600, 'stop'],
      ]),
    );
    expect(record.usage).toEqual({
      inputTokens: 2000,
      outputTokens: 34,
      cacheReadTokens: 400,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      reported: true,
    });
    expect(record.usageOrigin).toBe('agent-telemetry');
  });
});

describe('AgentTelemetryJoin', () => {
  function target(): RunListener & { starts: RunStart[]; ends: RunRecord[] } {
    const starts: RunStart[] = [];
    const ends: RunRecord[] = [];
    return { starts, ends, onRunStart: (s) => starts.push(s), onRunEnd: (r) => ends.push(r) };
  }

  it('passes starts at once, holds an ACP run end until its final main call is reported, then completes it', () => {
    const t = target();
    const join = new AgentTelemetryJoin(t, 600_000);
    const record = run({ toolCalls: [{ callId: 'c1', startTime: T0 + 300, endTime: T0 + 400, isError: false }] });
    join.onRunStart(record);
    expect(t.starts).toHaveLength(1);
    join.onRunEnd(record);
    expect(t.ends).toEqual([]);
    // The call before the tool is not the answer: still held.
    join.addReports(modelCallReports(logs([geminiRecord(T0 + 200, 'stop')])));
    expect(t.ends).toEqual([]);
    join.addReports(modelCallReports(logs([geminiRecord(T0 + 700, 'length')])));
    expect(t.ends.map((r) => [r.stopReason, r.agentTelemetry])).toEqual([['max-tokens', 'joined']]);
    expect(join.counts).toEqual({ joined: 1, none: 0 });
  });

  it('releases a run whose records never come after the wait, from the wire alone', () => {
    vi.useFakeTimers({ now: T0 + 2000 });
    try {
      const t = target();
      const join = new AgentTelemetryJoin(t, 10_000);
      join.onRunStart(run());
      join.onRunEnd(run());
      vi.advanceTimersByTime(9_999);
      expect(t.ends).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(t.ends.map((r) => [r.stopReason, r.agentTelemetry])).toEqual([['completed', 'none']]);
      expect(join.heldCount).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops holding runs once a whole wait passed without any report, and holds again when one comes', () => {
    vi.useFakeTimers({ now: T0 + 2000 });
    try {
      const t = target();
      const join = new AgentTelemetryJoin(t, 10_000);
      join.onRunEnd(run());
      vi.advanceTimersByTime(10_000);
      // The agent sends none: the next run passes at once.
      join.onRunEnd(run({ runId: 'run-2', startTime: T0 + 2000, endTime: T0 + 3000 }));
      expect(t.ends.map((r) => [r.runId, r.agentTelemetry])).toEqual([
        ['run-1', 'none'],
        ['run-2', 'none'],
      ]);
      join.addReports(modelCallReports(logs([geminiRecord(T0 + 4500, 'length')])));
      join.onRunEnd(run({ runId: 'run-3', startTime: T0 + 4000, endTime: T0 + 5000 }));
      expect(t.ends.map((r) => [r.runId, r.stopReason])).toEqual([
        ['run-1', 'completed'],
        ['run-2', 'completed'],
        ['run-3', 'max-tokens'],
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('lets a silent agent cost one wait in all: the runs held beside the first go with it (codex-acp 2.6)', () => {
    vi.useFakeTimers({ now: T0 + 2000 });
    try {
      const t = target();
      const join = new AgentTelemetryJoin(t, 10_000);
      // Five turns 150 ms apart, as codex answers them; no record ever comes.
      for (let i = 1; i <= 5; i += 1) {
        join.onRunEnd(run({ runId: `run-${i}`, startTime: T0 + i * 150, endTime: T0 + i * 150 + 100 }));
        vi.advanceTimersByTime(150);
      }
      expect(t.ends).toEqual([]);
      // The first run's wait ends 10 s after its end; the other four do not wait theirs out.
      vi.advanceTimersByTime(10_000 - 5 * 150);
      expect(t.ends.map((r) => [r.runId, r.agentTelemetry])).toEqual([1, 2, 3, 4, 5].map((i) => [`run-${i}`, 'none']));
      expect(join.released).toMatchObject({ wait: 1, silent: 4 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('on releaseAll passes every held run on with the records that came, and with final holds none after', () => {
    const t = target();
    const join = new AgentTelemetryJoin(t, 600_000);
    const tooled = run({ toolCalls: [{ callId: 'c1', startTime: T0 + 300, endTime: T0 + 400, isError: false }] });
    join.onRunEnd(tooled);
    // Only the call before the tool came: not the turn's answer, so the run is still held.
    join.addReports(modelCallReports(logs([geminiRecord(T0 + 200, 'stop')])));
    join.onRunEnd(run({ runId: 'run-2', startTime: T0 + 2000, endTime: T0 + 3000 }));
    expect(join.heldCount).toBe(2);
    expect(join.releaseAll('signal', true)).toBe(2);
    expect(t.ends.map((r) => [r.runId, r.agentTelemetry])).toEqual([
      ['run-1', 'joined'],
      ['run-2', 'none'],
    ]);
    join.onRunEnd(run({ runId: 'run-3', startTime: T0 + 4000, endTime: T0 + 5000 }));
    expect(t.ends.map((r) => r.runId)).toEqual(['run-1', 'run-2', 'run-3']);
    expect(join.heldCount).toBe(0);
    expect(join.released).toMatchObject({ signal: 2 });
    expect(join.releaseAll('signal', true)).toBe(0);
  });

  it('capWait shortens every wait from now, never lengthens one, and reports each early release', () => {
    vi.useFakeTimers({ now: T0 + 2000 });
    try {
      const t = target();
      const join = new AgentTelemetryJoin(t, 10_000);
      // The agent reports (another session's call): waits that end are not taken for silence.
      join.addReports(modelCallReports(logs([geminiRecord(T0 - 5000, 'stop', 'main', 'another-session')])));
      join.onRunEnd(run());
      vi.advanceTimersByTime(9_000);
      let released = 0;
      join.capWait(2_000, () => (released += 1));
      // run-1 had 1 s left: its wait is not made longer.
      vi.advanceTimersByTime(1_000);
      expect(t.ends.map((r) => r.runId)).toEqual(['run-1']);
      expect(released).toBe(0);
      join.onRunEnd(run({ runId: 'run-2', startTime: T0 + 2000, endTime: T0 + 3000 }));
      vi.advanceTimersByTime(1_999);
      expect(t.ends.map((r) => r.runId)).toEqual(['run-1']);
      vi.advanceTimersByTime(1);
      expect(t.ends.map((r) => [r.runId, r.agentTelemetry])).toEqual([
        ['run-1', 'none'],
        ['run-2', 'none'],
      ]);
      expect(released).toBe(1);
      expect(join.released).toMatchObject({ wait: 1, 'end-of-input': 1 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('passes runs of other sources through untouched', () => {
    const t = target();
    const join = new AgentTelemetryJoin(t, 600_000);
    const sdk = run({ source: 'sdk' });
    join.onRunEnd(sdk);
    expect(t.ends).toEqual([sdk]);
  });

  it('finds the run an agent span belongs to by time and session', () => {
    const join = new AgentTelemetryJoin(target(), 600_000);
    join.onRunStart(run());
    join.onRunStart(run({ runId: 'run-2', sessionId: 'other', startTime: T0 + 2000 }));
    expect(join.runAt(T0 + 10, SESSION)?.runId).toBe('run-1');
    // The agent's first span may start just before the proxy stamped the prompt.
    expect(join.runAt(T0 - 1, SESSION)?.runId).toBe('run-1');
    expect(join.runAt(T0 - 1000, SESSION)).toBeUndefined();
    expect(join.runAt(T0 + 2500, undefined)?.runId).toBe('run-2');
    expect(join.runAt(T0 + 2500, 'nobody')).toBeUndefined();
  });

  /**
   * Four consecutive turns of one gemini-cli 0.61 session, max-tokens x3 then
   * normal, as the proxy saw them in the truncation-alert e2e run (offsets
   * from one real run: the turns follow each other within 1-4 ms, shorter
   * than the report slack), each turn's main call stamped just before its end.
   */
  const TURNS = [
    { runId: 'turn-1', startTime: T0 + 608, endTime: T0 + 739, call: T0 + 736, finish: 'length' },
    { runId: 'turn-2', startTime: T0 + 743, endTime: T0 + 771, call: T0 + 770, finish: 'length' },
    { runId: 'turn-3', startTime: T0 + 772, endTime: T0 + 792, call: T0 + 791, finish: 'length' },
    { runId: 'turn-4', startTime: T0 + 795, endTime: T0 + 813, call: T0 + 811, finish: 'stop' },
  ] as const;
  const turnRecord = (i: number) => geminiRecord(TURNS[i]!.call, TURNS[i]!.finish);
  const routerRecord = (i: number) => geminiRecord(TURNS[i]!.startTime + 5, 'stop', 'utility_router');

  it('gives each late record of consecutive turns to its own turn, whatever order the batches come in', () => {
    const t = target();
    const join = new AgentTelemetryJoin(t, 600_000);
    for (const turn of TURNS) {
      const record = run({ runId: turn.runId, startTime: turn.startTime, endTime: turn.endTime });
      join.onRunStart(record);
      join.onRunEnd(record);
    }
    expect(t.ends).toEqual([]);
    // First batch: turns 4 and 2 (out of order), with side calls.
    join.addReports(modelCallReports(logs([turnRecord(3), routerRecord(1), turnRecord(1), routerRecord(3)])));
    expect(t.ends.map((r) => [r.runId, r.stopReason])).toEqual([
      ['turn-2', 'max-tokens'],
      ['turn-4', 'completed'],
    ]);
    // Then turn 3's, then turn 1's.
    join.addReports(modelCallReports(logs([turnRecord(2)])));
    join.addReports(modelCallReports(logs([turnRecord(0)])));
    expect(t.ends.map((r) => [r.runId, r.stopReason, r.stopReasonInferredFrom ?? null, r.agentTelemetry])).toEqual([
      ['turn-2', 'max-tokens', GEMINI_FINISH_REASON_SOURCE, 'joined'],
      ['turn-4', 'completed', null, 'joined'],
      ['turn-3', 'max-tokens', GEMINI_FINISH_REASON_SOURCE, 'joined'],
      ['turn-1', 'max-tokens', GEMINI_FINISH_REASON_SOURCE, 'joined'],
    ]);
    expect(join.counts).toEqual({ joined: 4, none: 0 });
  });

  it("never lets the previous turn's late record release the next turn, nor the next turn's record complete it", () => {
    const t = target();
    const join = new AgentTelemetryJoin(t, 600_000);
    const [one, two, three] = TURNS.map((turn) =>
      run({ runId: turn.runId, startTime: turn.startTime, endTime: turn.endTime }),
    );
    join.onRunStart(one!);
    join.onRunEnd(one!);
    join.onRunStart(two!);
    join.onRunEnd(two!);
    // Turn 3 has started and is still open.
    join.onRunStart(three!);
    // Turn 1's record (4 ms before turn 2 starts) and turn 3's (20 ms after turn 2 ends) are not turn 2's.
    join.addReports(modelCallReports(logs([turnRecord(0), turnRecord(2)])));
    expect(t.ends.map((r) => [r.runId, r.stopReason])).toEqual([['turn-1', 'max-tokens']]);
    // Turn 2's own record, a normal stop here, decides it.
    join.addReports(modelCallReports(logs([geminiRecord(TURNS[1].call, 'stop')])));
    expect(t.ends.map((r) => [r.runId, r.stopReason, r.agentTelemetry])).toEqual([
      ['turn-1', 'max-tokens', 'joined'],
      ['turn-2', 'completed', 'joined'],
    ]);
  });
  it('gives a turn its record when the proxy stamped its prompt after the agent had made the call (a descheduled proxy)', () => {
    const t = target();
    const join = new AgentTelemetryJoin(t, 600_000);
    // Turn 1 ends at +739. Turn 2's call is recorded at +760, but the proxy, off the CPU between forwarding the
    // prompt and stamping it, stamped the prompt at +820: 21 ms after turn 1 ended, 60 ms before turn 2 "started".
    const one = run({ runId: 'turn-1', startTime: T0 + 608, endTime: T0 + 739 });
    const two = run({ runId: 'turn-2', startTime: T0 + 820, endTime: T0 + 840 });
    for (const record of [one, two]) {
      join.onRunStart(record);
      join.onRunEnd(record);
    }
    join.addReports(modelCallReports(logs([geminiRecord(T0 + 736, 'stop'), geminiRecord(T0 + 760, 'length')])));
    expect(t.ends.map((r) => [r.runId, r.stopReason, r.agentTelemetry])).toEqual([
      ['turn-1', 'completed', 'joined'],
      ['turn-2', 'max-tokens', 'joined'],
    ]);
  });
});

describe('ownerOfReport', () => {
  const windows = [
    { runId: 'a', sessionId: SESSION, startTime: T0, endTime: T0 + 100 },
    { runId: 'x', sessionId: 'other', startTime: T0, endTime: T0 + 1000 },
    { runId: 'b', sessionId: SESSION, startTime: T0 + 100, endTime: T0 + 200 },
    { runId: 'c', sessionId: SESSION, startTime: T0 + 203 },
  ];
  it("is the run of the session whose span holds the time: after the previous run's end, up to its own end, the earlier one at a shared boundary", () => {
    expect(ownerOfReport({ sessionId: SESSION, time: T0 + 99 }, windows)).toBe('a');
    expect(ownerOfReport({ sessionId: SESSION, time: T0 + 100 }, windows)).toBe('a');
    expect(ownerOfReport({ sessionId: SESSION, time: T0 + 101 }, windows)).toBe('b');
    expect(ownerOfReport({ sessionId: SESSION, time: T0 + 200 }, windows)).toBe('b');
    // After b's end stamp: b's calls were recorded before its answer went out, so this is c's, though c's start stamp is later.
    expect(ownerOfReport({ sessionId: SESSION, time: T0 + 201 }, windows)).toBe('c');
    expect(ownerOfReport({ sessionId: SESSION, time: T0 + 202 }, windows)).toBe('c');
    // An open run holds everything after the previous run's end.
    expect(ownerOfReport({ sessionId: SESSION, time: T0 + 99_999 }, windows)).toBe('c');
    // The session's first run holds what came before its start stamp.
    expect(ownerOfReport({ sessionId: SESSION, time: T0 - 10 }, windows)).toBe('a');
    expect(ownerOfReport({ sessionId: SESSION, time: T0 - 5000 }, windows)).toBe('a');
    expect(ownerOfReport({ sessionId: 'other', time: T0 + 150 }, windows)).toBe('x');
    expect(ownerOfReport({ sessionId: 'other', time: T0 + 1001 }, windows)).toBeUndefined();
    expect(ownerOfReport({ sessionId: 'nobody', time: T0 + 150 }, windows)).toBeUndefined();
  });

  it("gives nothing after the end of the session's last run to any run", () => {
    const ended = windows.map((w) => (w.runId === 'c' ? { ...w, endTime: T0 + 300 } : w));
    expect(ownerOfReport({ sessionId: SESSION, time: T0 + 300 }, ended)).toBe('c');
    expect(ownerOfReport({ sessionId: SESSION, time: T0 + 301 }, ended)).toBeUndefined();
  });
});
