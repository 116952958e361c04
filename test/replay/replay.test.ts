import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compressZstdFrame, writeDurableLogFile } from '../../src/fixtures/durable-log-writer.js';
import type { RunListener, RunRecord, RunStart } from '../../src/observe/run-record.js';
import { directionOfRawFrame, replayPaths, type ReplayProblem, type ReplayProgress } from '../../src/replay/replay.js';
import type { Direction } from '../../src/observe/frame-observer.js';
import { events, step, stepStart, text, textDelta, turnEnd, turnStart, usage } from '../helpers/events.js';

const dir = mkdtempSync(join(tmpdir(), 'replay-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = 1_700_000_000_000;

function recorder(): RunListener & { starts: RunStart[]; records: RunRecord[]; malformed: Array<[string, string]> } {
  const starts: RunStart[] = [];
  const records: RunRecord[] = [];
  const malformed: Array<[string, string]> = [];
  return {
    starts,
    records,
    malformed,
    onRunStart: (start) => starts.push(start),
    onRunEnd: (record) => records.push(record),
    onMalformed: (origin, error) => malformed.push([origin, error.code]),
  };
}

const rpc = (body: Record<string, unknown>): string => JSON.stringify({ jsonrpc: '2.0', ...body });
const sessionEvent = (sessionId: string, event: unknown): string =>
  rpc({ method: 'session.event', params: { sessionId, event } });
const ev = (type: string, seq: number, time: number, data: unknown) => ({ type, seq, time, data });
const message = (turn: number, content: unknown[], u?: unknown, stream?: unknown[]) => ({
  turn,
  step: 0,
  message: { id: `m${turn}`, role: 'assistant', content },
  ...(u !== undefined ? { usage: u } : {}),
  ...(stream !== undefined ? { stream } : {}),
});

/** A capture file as `proxy --capture` writes it: header, then `{t,d,l}` records. */
function captureText(protocol: string, records: ReadonlyArray<[number, 'c' | 'a', string]>): string {
  const header = JSON.stringify({ type: 'subagent-otel-capture', version: 1, protocol, startedAt: T0 });
  return [header, ...records.map(([t, d, l]) => JSON.stringify({ t, d, l }))].map((line) => `${line}\n`).join('');
}

/** An SDK session whose in-runtime subagent is misreported by the runtime (`lastAssistantMessage: []`). */
const sdkRecords: Array<[number, 'c' | 'a', string]> = [
  [
    T0 + 1,
    'c',
    rpc({ id: 1, method: 'initialize', params: { cwd: '/w', provider: 'deepseek', model: 'deepseek-chat' } }),
  ],
  [T0 + 2, 'a', rpc({ id: 1, result: { serverInfo: { name: 'deepseek-harness-sdk-runtime', version: '1' } } })],
  [
    T0 + 3,
    'c',
    rpc({
      id: 2,
      method: 'session/prompt',
      params: { sessionId: 's1', contentBlocks: [{ type: 'text', text: 'go' }] },
    }),
  ],
  [T0 + 4, 'a', sessionEvent('s1', ev('turn/start', 0, T0 + 4, { turn: 0 }))],
  [T0 + 5, 'a', rpc({ method: 'subagent.started', params: { parentSessionId: 's1', childSessionId: 'c1' } })],
  [T0 + 6, 'a', sessionEvent('c1', ev('turn/start', 0, T0 + 6, { turn: 0 }))],
  [
    T0 + 7,
    'a',
    sessionEvent(
      'c1',
      ev(
        'assistant/message',
        1,
        T0 + 7,
        message(0, [{ type: 'text', text: 'child answer' }], { inputTokens: 50, outputTokens: 5 }),
      ),
    ),
  ],
  [T0 + 8, 'a', sessionEvent('c1', ev('turn/end', 2, T0 + 8, { turn: 0, reason: { kind: 'completed' } }))],
  [
    T0 + 9,
    'a',
    rpc({
      method: 'subagent.finished',
      params: {
        provider: 'deepseek',
        agentId: 'a1',
        parentSessionId: 's1',
        childSessionId: 'c1',
        status: 'ok',
        stopReason: 'completed',
        lastAssistantMessage: [],
      },
    }),
  ],
  [
    T0 + 10,
    'a',
    sessionEvent(
      's1',
      ev(
        'assistant/message',
        1,
        T0 + 10,
        message(0, [{ type: 'text', text: 'parent answer' }], {
          inputTokens: 100,
          outputTokens: 10,
          cacheReadTokens: 20,
        }),
      ),
    ),
  ],
  [T0 + 11, 'a', sessionEvent('s1', ev('turn/end', 2, T0 + 11, { turn: 0, reason: { kind: 'completed' } }))],
  [T0 + 12, 'a', rpc({ id: 2, result: { messageId: 'u1' } })],
];

/** An ACP prompt turn cut off at max_tokens. */
const acpRecords: Array<[number, 'c' | 'a', string]> = [
  [T0 + 1, 'c', rpc({ id: 0, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } })],
  [T0 + 2, 'a', rpc({ id: 0, result: { protocolVersion: 1, agentInfo: { name: 'scripted-acp' } } })],
  [T0 + 3, 'c', rpc({ id: 1, method: 'session/new', params: { cwd: '/w', mcpServers: [] } })],
  [T0 + 4, 'a', rpc({ id: 1, result: { sessionId: 'acp-1' } })],
  [
    T0 + 5,
    'c',
    rpc({ id: 2, method: 'session/prompt', params: { sessionId: 'acp-1', prompt: [{ type: 'text', text: 'hi' }] } }),
  ],
  [
    T0 + 6,
    'a',
    rpc({
      method: 'session/update',
      params: {
        sessionId: 'acp-1',
        update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Hello ' } },
      },
    }),
  ],
  [
    T0 + 7,
    'a',
    rpc({
      method: 'session/update',
      params: {
        sessionId: 'acp-1',
        update: { sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'hmm' } },
      },
    }),
  ],
  [
    T0 + 8,
    'a',
    rpc({
      method: 'session/update',
      params: {
        sessionId: 'acp-1',
        update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'ACP' } },
      },
    }),
  ],
  [T0 + 9, 'a', rpc({ id: 2, result: { stopReason: 'max_tokens', usage: { inputTokens: 30, outputTokens: 7 } } })],
];

/** What a runtime's stdout alone looks like, saved without any header. */
const rawStdout = [
  sessionEvent('s9', ev('turn/start', 0, 5, { turn: 0 })),
  sessionEvent(
    's9',
    ev(
      'assistant/message',
      1,
      6,
      message(0, [{ type: 'text', text: 'raw answer' }], { inputTokens: 1, outputTokens: 2 }),
    ),
  ),
  sessionEvent('s9', ev('turn/end', 2, 7, { turn: 0, reason: { kind: 'completed' } })),
  rpc({ method: 'session.status', params: { sessionId: 's9', status: 'idle' } }),
]
  .map((l) => `${l}\n`)
  .join('');

const header = (id: string, parentSession?: string) => ({
  type: 'session',
  version: 3,
  id,
  createdAt: '2026-11-29T10:00:00.000Z',
  ...(parentSession ? { parentSession } : {}),
  delegationDepth: 0,
});

async function mixedDirectory(root: string): Promise<void> {
  mkdirSync(join(root, 'sessions', 'sub'), { recursive: true });
  mkdirSync(join(root, 'captures'), { recursive: true });
  await writeDurableLogFile(
    join(root, 'sessions', 'parent.jsonl'),
    header('parent'),
    events(
      [
        turnStart(0),
        stepStart(0),
        step('embedded', { content: [text('parent log answer')], usage: usage(1000, 100) }),
        turnEnd('completed', 0),
      ],
      0,
      T0,
    ),
    { zstd: false, pack: false },
  );
  await writeDurableLogFile(
    join(root, 'sessions', 'sub', 'child.jsonl.zstd'),
    header('child', 'parent'),
    events(
      [
        turnStart(0),
        stepStart(0),
        step('chunk', {
          stream: [textDelta('partial '), textDelta('child '), textDelta('text')],
          content: [],
          usage: usage(200, 64),
        }),
        turnEnd('max-tokens', 0),
      ],
      0,
      T0 + 5,
    ),
    { zstd: true, pack: true, batchSize: 3 },
  );
  writeFileSync(join(root, 'captures', 'sdk.ndjson'), captureText('auto', sdkRecords));
  writeFileSync(join(root, 'captures', 'acp.ndjson'), captureText('acp', acpRecords));
  writeFileSync(join(root, 'captures', 'raw-stdout.ndjson'), rawStdout);
  writeFileSync(join(root, 'notes.txt'), 'not an input\n');
}

describe('replayPaths', () => {
  it('replays a directory of session logs and captures into runs and sums them up', async () => {
    const root = join(dir, 'mixed');
    await mixedDirectory(root);
    const listener = recorder();
    const problems: ReplayProblem[] = [];
    const summary = await replayPaths([root], listener, { onProblem: (p) => problems.push(p) });
    expect(problems).toEqual([]);

    const byId = (runId: string) => listener.records.find((r) => r.runId === runId);
    expect(byId('parent#0')).toMatchObject({
      source: 'log',
      stopReason: 'completed',
      output: [{ type: 'text', text: 'parent log answer' }],
    });
    expect(byId('child#0')).toMatchObject({
      source: 'log',
      parentRunId: 'parent#0',
      parentSessionId: 'parent',
      stopReason: 'max-tokens',
      output: [{ type: 'text', text: 'partial child text' }],
      outputSource: 'stream',
      emptyMessages: 1,
    });
    const sdkRuns = listener.records.filter((r) => r.sessionId === 's1' || r.sessionId === 'c1');
    expect(
      sdkRuns.map((r) => [r.source, r.sessionId, r.stopReason, r.output, r.reported, r.startTime, r.endTime]),
    ).toEqual([
      ['sdk-subagent', 'c1', 'completed', [{ type: 'text', text: 'child answer' }], { output: [] }, T0 + 5, T0 + 9],
      ['sdk', 's1', 'completed', [{ type: 'text', text: 'parent answer' }], undefined, T0 + 3, T0 + 11],
    ]);
    expect(sdkRuns[0]?.parentRunId).toBe(sdkRuns[1]?.runId);
    expect(sdkRuns[1]?.runId).toMatch(/^replay-[0-9a-f]{12}-1$/);
    const acpRun = listener.records.find((r) => r.source === 'acp');
    expect(acpRun).toMatchObject({
      agentName: 'scripted-acp',
      sessionId: 'acp-1',
      stopReason: 'max-tokens',
      output: [{ type: 'text', text: 'Hello ACP' }],
      startTime: T0 + 5,
      endTime: T0 + 9,
    });
    const rawRun = listener.records.find((r) => r.sessionId === 's9');
    expect(rawRun).toMatchObject({
      source: 'sdk',
      stopReason: 'completed',
      output: [{ type: 'text', text: 'raw answer' }],
    });
    // Every start came before its end, and the log parent before its child.
    expect(listener.starts.map((s) => s.runId).indexOf('parent#0')).toBeLessThan(
      listener.starts.map((s) => s.runId).indexOf('child#0'),
    );

    expect(summary).toEqual({
      files: [
        {
          path: join(root, 'captures', 'acp.ndjson'),
          format: 'capture',
          protocol: 'acp',
          records: 9,
          runs: 1,
          problems: 0,
          isSkipped: false,
        },
        {
          path: join(root, 'captures', 'raw-stdout.ndjson'),
          format: 'ndjson',
          protocol: 'sdk',
          records: 4,
          runs: 1,
          problems: 0,
          isSkipped: false,
        },
        {
          path: join(root, 'captures', 'sdk.ndjson'),
          format: 'capture',
          protocol: 'sdk',
          records: 12,
          runs: 2,
          problems: 0,
          isSkipped: false,
        },
        {
          path: join(root, 'sessions', 'parent.jsonl'),
          format: 'log',
          records: 4,
          runs: 1,
          problems: 0,
          isSkipped: false,
        },
        {
          path: join(root, 'sessions', 'sub', 'child.jsonl.zstd'),
          format: 'log',
          records: 7,
          runs: 1,
          problems: 0,
          isSkipped: false,
        },
      ],
      runs: 6,
      stopReasons: [
        {
          stopReason: 'completed',
          runs: 4,
          share: 4 / 6,
          inputTokens: 1000 + 50 + 120 + 1,
          outputTokens: 100 + 5 + 10 + 2,
        },
        { stopReason: 'max-tokens', runs: 2, share: 2 / 6, inputTokens: 200 + 30, outputTokens: 64 + 7 },
      ],
      truncationRate: 2 / 6,
      mismatches: 1,
      problems: 0,
      skipped: { files: 0, records: 0 },
      unknownRecords: {},
    });
  });

  it('gives raw NDJSON lines the file mtime plus the line index in ms, and obeys a forced protocol', async () => {
    const path = join(dir, 'raw-times.ndjson');
    // Both directions without a header: the prompt (line 0) and its answer (line 5) carry no time of their own.
    const prompt = rpc({
      id: 4,
      method: 'session/prompt',
      params: { sessionId: 's9', contentBlocks: [{ type: 'text', text: 'go' }] },
    });
    const unfinished = rawStdout.split('\n').slice(0, 2).join('\n');
    writeFileSync(path, `${prompt}\n${unfinished}\n${rpc({ id: 4, result: { messageId: 'u9' } })}\n`);
    const mtime = new Date(T0 + 60_000);
    utimesSync(path, mtime, mtime);
    const listener = recorder();
    await replayPaths([path], listener);
    // The answer only acknowledges the queued prompt; the stream ends before the turn did: error, no diagnostic.
    expect(listener.records.map((r) => [r.startTime, r.endTime, r.stopReason, r.diagnostic])).toEqual([
      [T0 + 60_000, T0 + 60_003, 'error', undefined],
    ]);

    const forced = recorder();
    const summary = await replayPaths([path], forced, { protocol: 'acp' });
    // An SDK prompt read as ACP fails ACP validation: reported at its line, no run.
    expect(forced.records).toEqual([]);
    expect(forced.malformed).toEqual([['acp', 'invalid']]);
    expect(summary.files).toEqual([
      { path, format: 'ndjson', protocol: 'acp', records: 4, runs: 0, problems: 1, isSkipped: false },
    ]);
  });

  it('reports a torn tail, a corrupt record, an empty, a binary and a missing file, and replays everything else', async () => {
    const root = join(dir, 'damaged');
    mkdirSync(root, { recursive: true });
    const lines = captureText('sdk', sdkRecords).split('\n');
    // Line 8 (c1's message) is not a capture record; line 13 (the prompt response) is cut mid-way.
    const corrupt = [
      ...lines.slice(0, 7),
      '{"t":1,"d":"x","l":"{}"}',
      ...lines.slice(8, 12),
      lines[12]?.slice(0, 20),
    ].join('\n');
    writeFileSync(join(root, 'a-damaged.ndjson'), corrupt);
    writeFileSync(join(root, 'b-empty.jsonl'), '');
    writeFileSync(
      join(root, 'c-binary.jsonl'),
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
    );
    const torn = await compressZstdFrame(
      `${JSON.stringify(header('torn-log'))}\n${JSON.stringify(ev('turn/start', 0, T0, { turn: 0 }))}\n`,
    );
    writeFileSync(join(root, 'd-torn.jsonl.zstd'), torn.subarray(0, torn.length - 3));
    const missing = join(dir, 'no-such-file.jsonl');
    const listener = recorder();
    const problems: ReplayProblem[] = [];
    const summary = await replayPaths([root, missing], listener, { onProblem: (p) => problems.push(p) });

    expect(problems.map((p) => [p.file.replace(`${dir}/`, ''), p.line, p.code, p.scope])).toEqual([
      ['damaged/a-damaged.ndjson', 8, 'invalid', 'record'],
      ['damaged/a-damaged.ndjson', 13, 'torn-tail', 'record'],
      ['damaged/b-empty.jsonl', 0, 'empty-file', 'file'],
      ['damaged/c-binary.jsonl', 0, 'binary', 'file'],
      ['damaged/d-torn.jsonl.zstd', 3, 'torn-tail', 'record'],
      ['no-such-file.jsonl', 0, 'missing', 'file'],
    ]);
    expect(problems[3]?.message).toBe('binary data (line 1 is not UTF-8 text): not a session log or capture');
    // The child lost its message; the parent's turn still ends; the torn log keeps its complete turn/start.
    expect(listener.records.map((r) => [r.sessionId, r.stopReason, r.output])).toEqual([
      ['c1', 'completed', undefined],
      ['s1', 'completed', [{ type: 'text', text: 'parent answer' }]],
      ['torn-log', 'error', undefined],
    ]);
    expect(listener.malformed).toEqual([
      ['capture', 'invalid'],
      ['capture', 'torn-tail'],
      ['log', 'torn-tail'],
    ]);
    expect(summary.skipped).toEqual({ files: 3, records: 3 });
    expect(summary.problems).toBe(6);
    expect(
      summary.files.map((f) => [f.path.replace(`${dir}/`, ''), f.records, f.runs, f.problems, f.isSkipped]),
    ).toEqual([
      ['damaged/a-damaged.ndjson', 11, 2, 2, false],
      ['damaged/b-empty.jsonl', 0, 0, 1, true],
      ['damaged/c-binary.jsonl', 0, 0, 1, true],
      ['damaged/d-torn.jsonl.zstd', 1, 1, 1, false],
      ['no-such-file.jsonl', 0, 0, 1, true],
    ]);
  });

  it('reports progress up to every byte of every file', async () => {
    const root = join(dir, 'progress');
    await mixedDirectory(root);
    const seen: ReplayProgress[] = [];
    await replayPaths([root], recorder(), { onProgress: (p) => seen.push(p) });
    const last = seen[seen.length - 1];
    expect(last?.filesDone).toBe(5);
    expect(last?.filesTotal).toBe(5);
    expect(last?.bytesDone).toBe(last?.bytesTotal);
    expect(seen.some((p) => p.file?.endsWith('child.jsonl.zstd') === true)).toBe(true);
    for (let i = 1; i < seen.length; i += 1)
      expect(seen[i]?.bytesDone).toBeGreaterThanOrEqual(seen[i - 1]?.bytesDone ?? 0);
  });

  it('keeps replaying when the listener throws', async () => {
    const root = join(dir, 'throwing');
    await mixedDirectory(root);
    let ends = 0;
    const summary = await replayPaths([root], {
      onRunStart: () => {
        throw new Error('listener bug');
      },
      onRunEnd: () => {
        ends += 1;
        throw new Error('listener bug');
      },
    });
    expect(ends).toBe(6);
    expect(summary.runs).toBe(6);
  });

  it('does not enter excluded directories', async () => {
    const root = join(dir, 'excluded');
    await mixedDirectory(root);
    const summary = await replayPaths([root], recorder(), { exclude: [join(root, 'captures')] });
    expect(summary.files.map((f) => f.path.replace(`${root}/`, ''))).toEqual([
      'sessions/parent.jsonl',
      'sessions/sub/child.jsonl.zstd',
    ]);
  });
});

describe('directionOfRawFrame', () => {
  it('sends client methods to the agent, everything else to the client, and answers opposite to the request', () => {
    const seen = new Map<string, Direction>();
    const req = (id: number, method: string) => ({ kind: 'request' as const, id, method, params: {} });
    const res = (id: number) => ({ kind: 'response' as const, id, result: {} });
    expect(directionOfRawFrame(req(1, 'session/prompt'), seen)).toBe('client->agent');
    expect(directionOfRawFrame(req(7, 'session/request_permission'), seen)).toBe('agent->client');
    expect(directionOfRawFrame(res(7), seen)).toBe('client->agent');
    expect(directionOfRawFrame(res(1), seen)).toBe('agent->client');
    expect(directionOfRawFrame(res(99), seen)).toBe('agent->client');
    expect(directionOfRawFrame({ kind: 'notification', method: 'session/cancel', params: {} }, seen)).toBe(
      'client->agent',
    );
    expect(directionOfRawFrame({ kind: 'notification', method: 'session.event', params: {} }, seen)).toBe(
      'agent->client',
    );
  });
});
