import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serializeDurableLog, writeDurableLogFile } from '../../src/fixtures/durable-log-writer.js';
import { LogTracker, type LogProblem } from '../../src/observe/log-tracker.js';
import type { RunListener, RunRecord, RunStart } from '../../src/observe/run-record.js';
import { readResult, splitEpochs, subagentRunEndInfo } from '../../src/output/result.js';
import { readDurableLogFile } from '../../src/wire/durable-log.js';
import type { SessionEvent } from '../../src/wire/events.js';
import {
  attempt,
  endSeed,
  events,
  finish,
  reasoning,
  step,
  stepEnd,
  stepStart,
  text,
  textDelta,
  toolCall,
  toolCallEvent,
  toolDelta,
  toolResultEvent,
  turnEnd,
  turnStart,
  usage,
  type Generation,
} from '../helpers/events.js';

const dir = mkdtempSync(join(tmpdir(), 'log-tracker-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = 1_700_000_000_000;

type Call =
  | { kind: 'start'; start: RunStart }
  | { kind: 'end'; record: RunRecord }
  | { kind: 'malformed'; origin: string; code: string; message: string };

/** A listener that records every call in order. */
function recorder(): RunListener & { calls: Call[]; records: () => RunRecord[]; starts: () => RunStart[] } {
  const calls: Call[] = [];
  return {
    calls,
    onRunStart: (start) => calls.push({ kind: 'start', start }),
    onRunEnd: (record) => calls.push({ kind: 'end', record }),
    onMalformed: (origin, error) => calls.push({ kind: 'malformed', origin, code: error.code, message: error.message }),
    records: () => calls.flatMap((c) => (c.kind === 'end' ? [c.record] : [])),
    starts: () => calls.flatMap((c) => (c.kind === 'start' ? [c.start] : [])),
  };
}

let files = 0;
async function writeLog(
  header: Record<string, unknown>,
  evs: readonly unknown[],
  options: { zstd?: boolean; pack?: boolean; batchSize?: number; name?: string } = {},
): Promise<string> {
  files += 1;
  const zstd = options.zstd ?? false;
  const path = join(dir, options.name ?? `session-${files}.jsonl${zstd ? '.zstd' : ''}`);
  await writeDurableLogFile(path, header, evs, {
    zstd,
    pack: options.pack ?? false,
    ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : {}),
  });
  return path;
}

async function replayFiles(paths: readonly string[], agentName?: string) {
  const listener = recorder();
  const problems: LogProblem[] = [];
  const tracker = new LogTracker(listener, agentName !== undefined ? { agentName } : {});
  const results = [];
  for (const path of paths) results.push(await tracker.readFile(path, { onProblem: (p) => problems.push(p) }));
  tracker.emit();
  return { listener, problems, results };
}

const header = (id: string, parentSession?: string) => ({
  type: 'session',
  version: 3,
  id,
  cwd: '/work/demo',
  createdAt: '2026-11-29T10:00:00.000Z',
  ...(parentSession !== undefined ? { parentSession } : {}),
  delegationDepth: parentSession !== undefined ? 1 : 0,
});

/**
 * The seed's case: a two-step turn cut off at max-tokens whose last step
 * assembled only a truncated tool call, leaving an empty usage-only message.
 */
function maxTokensTurn(gen: Generation): SessionEvent[] {
  return events([
    { type: 'request/context', data: { provider: 'deepseek', model: 'deepseek-chat' } },
    turnStart(1),
    stepStart(0, 1),
    step(gen, {
      step: 0,
      turn: 1,
      stream: [
        textDelta('Reading '),
        textDelta('the '),
        textDelta('config '),
        textDelta('first.'),
        toolDelta('call-1', '{"path":"a.txt"}'),
        finish('tool-calls'),
      ],
      content: [text('Reading the config first.'), toolCall('call-1')],
      usage: usage(120, 30, { cacheReadTokens: 40 }),
    }),
    toolCallEvent('call-1', 0, 'read_file', 1),
    toolResultEvent('call-1', false, 0, 1),
    stepEnd(0, 1),
    stepStart(1, 1),
    step(gen, {
      step: 1,
      turn: 1,
      stream: [
        toolDelta('call-2', '{"pa'),
        toolDelta('call-2', 'th":"b'),
        toolDelta('call-2', '.txt'),
        finish('max-tokens'),
      ],
      content: [],
      usage: usage(200, 64),
    }),
    stepEnd(1, 1),
    turnEnd('max-tokens', 1),
  ]);
}

describe('LogTracker: one epoch per turn', () => {
  it('gives identical runs for plain and zstd logs, packed and unpacked, of each generation', async () => {
    const byGeneration: Record<Generation, RunRecord[]> = { chunk: [], embedded: [] };
    for (const gen of ['chunk', 'embedded'] as const) {
      const evs = maxTokensTurn(gen);
      for (const zstd of [false, true]) {
        for (const pack of [false, true]) {
          const path = await writeLog(header(`sess-${gen}`), evs, { zstd, pack, batchSize: 5 });
          const { listener, problems } = await replayFiles([path]);
          expect(problems).toEqual([]);
          byGeneration[gen].push(...listener.records());
        }
      }
      const [first, ...rest] = byGeneration[gen];
      for (const other of rest) expect(other).toEqual(first);
    }
    const chunkRun = byGeneration.chunk[0] as RunRecord;
    const embeddedRun = byGeneration.embedded[0] as RunRecord;
    for (const run of [chunkRun, embeddedRun]) {
      expect(run.output).toEqual([
        { type: 'text', text: 'Reading the config first.' },
        { type: 'tool-call', id: 'call-1', name: 'read_file', arguments: '{"path":"a.txt"}' },
      ]);
      expect(run.stopReason).toBe('max-tokens');
      expect(run.outputSource).toBe('message');
      expect(run.emptyMessages).toBe(1);
      expect(run.usage).toEqual({
        inputTokens: 320,
        outputTokens: 94,
        cacheReadTokens: 40,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        reported: true,
      });
      expect(run.agentName).toBe('deepseek');
      expect(run.provider).toBe('deepseek');
      expect(run.model).toBe('deepseek-chat');
      expect(run.steps.map((s) => [s.step, s.finishReason])).toEqual([
        [0, 'tool-calls'],
        [1, 'max-tokens'],
      ]);
      expect(run.toolCalls.map((t) => [t.callId, t.name, t.isError])).toEqual([['call-1', 'read_file', false]]);
    }
    expect(embeddedRun).toMatchObject({
      runId: 'sess-embedded#0',
      source: 'log',
      sessionId: 'sess-embedded',
      startTime: T0 + 10,
      endTime: T0 + 100,
    });
    expect(chunkRun).toMatchObject({ runId: 'sess-chunk#0', startTime: T0 + 10, endTime: T0 + 200 });
  });

  it('expands packed chunk rows to exactly the original events', async () => {
    const evs = maxTokensTurn('chunk');
    const packedPath = await writeLog(header('sess-packed'), evs, { zstd: true, pack: true });
    // The packed file really packs: fewer lines than events.
    const lines = serializeDurableLog(header('sess-packed'), evs, { pack: true }).trimEnd().split('\n');
    expect(lines.length).toBeLessThan(evs.length + 1);
    expect(lines.some((line) => line.includes('"type":"text-chunks"'))).toBe(true);
    expect(lines.some((line) => line.includes('"type":"tool-call-chunks"'))).toBe(true);
    const read: unknown[] = [];
    for await (const record of readDurableLogFile(packedPath)) if (record.kind === 'event') read.push(record.value);
    expect(read).toEqual(evs);
  });

  it('ends an epoch without turn/end as error at its last event, with the output so far', async () => {
    const evs = events([
      turnStart(0),
      stepStart(0),
      attempt('embedded', { stream: [textDelta('partial '), textDelta('answer')] }),
    ]);
    const { listener } = await replayFiles([await writeLog(header('sess-crash'), evs)]);
    expect(listener.records()).toMatchObject([
      {
        runId: 'sess-crash#0',
        stopReason: 'error',
        output: [{ type: 'text', text: 'partial answer' }],
        outputSource: 'stream',
        startTime: T0,
        endTime: T0 + 20,
      },
    ]);
  });

  it('names runs after the agentName option when one is given', async () => {
    const { listener } = await replayFiles(
      [await writeLog(header('sess-named'), maxTokensTurn('embedded'))],
      'reviewer',
    );
    expect(listener.starts().map((s) => s.agentName)).toEqual(['reviewer']);
    expect(listener.records().map((r) => r.agentName)).toEqual(['reviewer']);
  });
});

describe('LogTracker: inherited events and continuable epochs', () => {
  const continuable = events([
    // Inherited from the session this one was forked from: never output.
    turnStart(0),
    step('embedded', { content: [text('inherited answer')], usage: usage(10, 5) }),
    turnEnd('completed', 0),
    endSeed(),
    turnStart(0),
    step('embedded', { content: [text('seeded twice: still inherited')] }),
    turnEnd('completed', 0),
    endSeed(),
    // Epoch 0: a complete answer.
    turnStart(1),
    stepStart(0, 1),
    step('embedded', { turn: 1, content: [text('first epoch answer')], usage: usage(100, 10) }),
    turnEnd('completed', 1),
    // Epoch 1: only an empty usage-only message, cut off.
    turnStart(2),
    stepStart(0, 2),
    step('embedded', {
      turn: 2,
      stream: [toolDelta('call-9', '{"q'), finish('max-tokens')],
      content: [],
      usage: usage(150, 64),
    }),
    turnEnd('max-tokens', 2),
    // Epoch 2: streamed text only, then aborted.
    turnStart(3),
    stepStart(0, 3),
    attempt('embedded', { turn: 3, stream: [textDelta('third '), textDelta('epoch')] }),
    turnEnd('aborted', 3, { reason: { kind: 'parent' } }),
    // Epoch 3: a reasoning-only message beats streamed text.
    turnStart(4),
    stepStart(0, 4),
    step('embedded', { turn: 4, stream: [textDelta('streamed')], content: [reasoning('thinking only')] }),
    turnEnd('completed', 4),
  ]);

  it('reports each epoch after the last session/end-seed as its own run, with only its own output', async () => {
    const { listener } = await replayFiles([await writeLog(header('child-1', 'parent-x'), continuable)]);
    const records = listener.records();
    expect(records.map((r) => [r.runId, r.stopReason, r.output, r.parentSessionId])).toEqual([
      ['child-1#0', 'completed', [{ type: 'text', text: 'first epoch answer' }], 'parent-x'],
      ['child-1#1', 'max-tokens', undefined, 'parent-x'],
      ['child-1#2', 'aborted', [{ type: 'text', text: 'third epoch' }], 'parent-x'],
      ['child-1#3', 'completed', [{ type: 'reasoning', text: 'thinking only' }], 'parent-x'],
    ]);
    expect(records.map((r) => r.usage.inputTokens)).toEqual([100, 150, 0, 0]);
    expect(records[1]?.emptyMessages).toBe(1);
  });

  it("never reports the first epoch's message for a later epoch, and an epoch without output has no lastAssistantMessage", async () => {
    const { listener } = await replayFiles([await writeLog(header('child-2', 'parent-x'), continuable)]);
    const second = listener.records()[1] as RunRecord;
    expect(second.output).toBeUndefined();
    expect(JSON.stringify(second)).not.toContain('first epoch answer');
    const info = subagentRunEndInfo(
      { runId: second.runId, provider: 'deepseek', id: 'child-2', local: true },
      second.stopReason,
      second.output,
    );
    expect(info).toEqual({
      runId: 'child-2#1',
      provider: 'deepseek',
      id: 'child-2',
      local: true,
      stopReason: 'max-tokens',
    });
    expect('lastAssistantMessage' in info).toBe(false);
  });

  it('agrees with readResult over the same epoch events', async () => {
    const { listener } = await replayFiles([await writeLog(header('child-3'), continuable, { zstd: true })]);
    const epochs = splitEpochs(continuable);
    const records = listener.records();
    expect(records).toHaveLength(epochs.length);
    records.forEach((record, i) => {
      const result = readResult(epochs[i] ?? []);
      expect(record.output ?? []).toEqual(result.output);
      expect(record.stopReason).toBe(result.stopReason);
    });
  });

  it('produces no run for a log with only inherited events', async () => {
    const evs = events([
      turnStart(0),
      step('embedded', { content: [text('old')] }),
      turnEnd('completed', 0),
      endSeed(),
    ]);
    const { listener, results } = await replayFiles([await writeLog(header('resumed'), evs)]);
    expect(listener.calls).toEqual([]);
    expect(results).toEqual([
      {
        file: expect.stringContaining('.jsonl') as unknown,
        sessionId: 'resumed',
        records: 4,
        runs: 0,
        problems: 0,
        isSkipped: false,
      },
    ]);
  });

  it('keeps the route learnt before the seed for later epochs', async () => {
    const evs = events([
      { type: 'request/context', data: { provider: 'moonshot', model: 'kimi' } },
      endSeed(),
      turnStart(1),
      step('embedded', { turn: 1, content: [text('ok')] }),
      turnEnd('completed', 1),
    ]);
    const { listener } = await replayFiles([await writeLog(header('routed'), evs)]);
    expect(listener.starts()).toMatchObject([
      { runId: 'routed#0', agentName: 'moonshot', provider: 'moonshot', model: 'kimi' },
    ]);
  });
});

describe('LogTracker: linking sessions across files', () => {
  it('nests each child epoch under the parent run containing its start and reports parents first', async () => {
    // Parent: two turns, T0..T0+40 and T0+100..T0+140.
    const parent = [
      ...events(
        [
          turnStart(0),
          step('embedded', { content: [text('delegating')] }),
          toolCallEvent('task-1'),
          toolResultEvent('task-1'),
          turnEnd('completed', 0),
        ],
        0,
        T0,
      ),
      ...events(
        [
          turnStart(1),
          step('embedded', { turn: 1, content: [text('again')] }),
          toolCallEvent('task-2', 0, 'task', 1),
          toolResultEvent('task-2', false, 0, 1),
          turnEnd('completed', 1),
        ],
        5,
        T0 + 100,
      ),
    ];
    // Child: an epoch inside each parent turn, and one after both (falls back to the parent's last run).
    const child = [
      ...events(
        [turnStart(0), step('embedded', { content: [text('child one')] }), turnEnd('completed', 0)],
        0,
        T0 + 15,
      ),
      ...events(
        [turnStart(1), step('embedded', { turn: 1, content: [text('child two')] }), turnEnd('completed', 1)],
        3,
        T0 + 105,
      ),
      ...events(
        [turnStart(2), step('embedded', { turn: 2, content: [text('child three')] }), turnEnd('completed', 2)],
        6,
        T0 + 500,
      ),
    ];
    const grandchild = events(
      [turnStart(0), step('embedded', { content: [text('deep')] }), turnEnd('completed', 0)],
      0,
      T0 + 107,
    );
    // Read children before the parent: linking must not depend on file order.
    const { listener } = await replayFiles([
      await writeLog(header('grandchild', 'child'), grandchild),
      await writeLog(header('child', 'parent'), child),
      await writeLog(header('parent'), parent),
      await writeLog(header('orphan', 'not-in-this-replay'), grandchild, { zstd: true }),
    ]);
    const order = listener.calls.map((c) =>
      c.kind === 'start' ? `start ${c.start.runId}` : c.kind === 'end' ? `end ${c.record.runId}` : c.kind,
    );
    expect(order).toEqual([
      'start parent#0',
      'start child#0',
      'end child#0',
      'end parent#0',
      'start parent#1',
      'start child#1',
      'start grandchild#0',
      'end grandchild#0',
      'end child#1',
      'start child#2',
      'end child#2',
      'end parent#1',
      'start orphan#0',
      'end orphan#0',
    ]);
    const links = Object.fromEntries(listener.starts().map((s) => [s.runId, [s.parentRunId, s.parentSessionId]]));
    expect(links).toEqual({
      'parent#0': [undefined, undefined],
      'parent#1': [undefined, undefined],
      'child#0': ['parent#0', 'parent'],
      'child#1': ['parent#1', 'parent'],
      'child#2': ['parent#1', 'parent'],
      'grandchild#0': ['child#1', 'child'],
      'orphan#0': [undefined, 'not-in-this-replay'],
    });
    expect(listener.records().find((r) => r.runId === 'child#1')?.parentRunId).toBe('parent#1');
  });
});

describe('LogTracker: damaged input', () => {
  const twoEpochs = events([
    turnStart(0),
    stepStart(0),
    step('embedded', { content: [text('one')] }),
    turnEnd('completed', 0),
    turnStart(1),
    stepStart(0, 1),
    step('embedded', { turn: 1, content: [text('two')] }),
    turnEnd('completed', 1),
  ]);

  it('reports a torn last line and keeps every complete record before it', async () => {
    const body = serializeDurableLog(header('torn'), twoEpochs, { pack: false });
    const path = join(dir, 'torn.jsonl');
    writeFileSync(path, body.slice(0, body.length - 12));
    const { listener, problems, results } = await replayFiles([path]);
    expect(problems).toEqual([
      {
        file: path,
        line: 9,
        code: 'torn-tail',
        scope: 'record',
        message: expect.stringContaining('incomplete') as unknown,
      },
    ]);
    expect(listener.records().map((r) => [r.runId, r.stopReason, r.output])).toEqual([
      ['torn#0', 'completed', [{ type: 'text', text: 'one' }]],
      ['torn#1', 'error', [{ type: 'text', text: 'two' }]],
    ]);
    expect(results[0]).toMatchObject({ records: 7, runs: 2, problems: 1, isSkipped: false });
  });

  it('reports a corrupt record in the middle with file and line, skips it, and replays the other runs', async () => {
    const lines = serializeDurableLog(header('corrupt'), twoEpochs, { pack: false }).split('\n');
    lines[3] = '{"type":"assistant/message","seq":2,"time":1,"data":{"turn":0}}'; // epoch 0's message, invalid
    lines[4] = '{"type":"turn/end", not json';
    const path = join(dir, 'corrupt.jsonl');
    writeFileSync(path, lines.join('\n'));
    const { listener, problems } = await replayFiles([path]);
    expect(problems.map((p) => [p.line, p.code, p.scope])).toEqual([
      [4, 'invalid-event', 'record'],
      [5, 'not-json', 'record'],
    ]);
    expect(listener.calls.filter((c) => c.kind === 'malformed')).toEqual([
      {
        kind: 'malformed',
        origin: 'log',
        code: 'invalid-event',
        message: expect.stringMatching(/^.*corrupt\.jsonl:4: the event is not a valid session event/) as unknown,
      },
      { kind: 'malformed', origin: 'log', code: 'not-json', message: `${path}:5: line 5 is not valid JSON` },
    ]);
    expect(listener.records().map((r) => [r.runId, r.stopReason, r.output])).toEqual([
      ['corrupt#0', 'error', undefined],
      ['corrupt#1', 'completed', [{ type: 'text', text: 'two' }]],
    ]);
  });

  it('skips a missing file, an empty file and a non-log file with one file-level problem each, and reads the others', async () => {
    const empty = join(dir, 'empty.jsonl');
    writeFileSync(empty, '');
    const notLog = join(dir, 'not-a-log.jsonl');
    writeFileSync(notLog, '{"jsonrpc":"2.0","method":"x"}\n');
    const good = await writeLog(header('good'), twoEpochs);
    const missing = join(dir, 'missing.jsonl');
    const { listener, problems, results } = await replayFiles([missing, empty, notLog, good]);
    expect(problems.map((p) => [p.file, p.line, p.code, p.scope])).toEqual([
      [missing, 0, 'unreadable', 'file'],
      [empty, 0, 'empty-file', 'file'],
      [notLog, 1, 'not-a-session-log', 'file'],
    ]);
    expect(problems[0]?.message).toContain('ENOENT');
    expect(results.map((r) => r.isSkipped)).toEqual([true, true, true, false]);
    expect(listener.records().map((r) => r.runId)).toEqual(['good#0', 'good#1']);
  });

  it('skips a second file for a session already read', async () => {
    const first = await writeLog(header('twice'), twoEpochs);
    const second = await writeLog(header('twice'), twoEpochs, { zstd: true });
    const { listener, problems, results } = await replayFiles([first, second]);
    expect(problems).toEqual([
      {
        file: second,
        line: 0,
        code: 'duplicate-session',
        scope: 'file',
        message: `session twice was already read from ${first}; this copy is skipped`,
      },
    ]);
    expect(results.map((r) => [r.runs, r.isSkipped])).toEqual([
      [2, false],
      [0, true],
    ]);
    expect(listener.records().map((r) => r.runId)).toEqual(['twice#0', 'twice#1']);
  });
});
