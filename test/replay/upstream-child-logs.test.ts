/**
 * Replaying child session logs (a header naming `parentSession`): upstream
 * DeepSeek Harness's own recorded snapshots (copied under
 * `test/replay/upstream-snapshots/`, see the README there) and hand-made logs
 * in their shape. Pins three things:
 *
 * - a child's runs are its turns, whether they are streamed (the parent is
 *   not replayed) or held and linked (it is), and whether the rows carry
 *   `seq`/`time` or not: no run is added for a child that had turns (the
 *   "a child whose log holds no turn is still one run" rule fired whenever
 *   its runs had been streamed);
 * - packed chunk rows without `seq0`/`time0`, as those snapshots write them,
 *   are read, not rejected as `bad-packed-row`;
 * - text that exists only in such rows is the output of a child cut off
 *   after an empty usage-only message.
 *
 * Every expectation is written by hand from the log files.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunListener, RunRecord, RunStart } from '../../src/observe/run-record.js';
import { replayPaths, type ReplayProblem } from '../../src/replay/replay.js';

const SNAPSHOTS = join(import.meta.dirname, 'upstream-snapshots');
const CONTINUABLE = join(SNAPSHOTS, 'acp-agent', 'subagent-continuable');
const PARENT_ID = '11111111-1111-4111-8111-111111111111';
const CHILD_ID = '33333333-3333-4333-8333-333333333333';

const scratch = mkdtempSync(join(tmpdir(), 'upstream-child-logs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Replayed {
  readonly starts: RunStart[];
  readonly ends: RunRecord[];
  readonly problems: ReplayProblem[];
}

async function replay(paths: string[]): Promise<Replayed> {
  const starts: RunStart[] = [];
  const ends: RunRecord[] = [];
  const problems: ReplayProblem[] = [];
  const listener: RunListener = { onRunStart: (s) => starts.push(s), onRunEnd: (r) => ends.push(r) };
  await replayPaths(paths, listener, { onProblem: (p) => problems.push(p) });
  return { starts, ends, problems };
}

/** The child's runs as `[runId, stopReason, output text or undefined]`, in report order. */
function childRuns(ends: readonly RunRecord[]): Array<[string, string, string | undefined]> {
  return ends
    .filter((r) => r.sessionId === CHILD_ID)
    .map((r) => [r.runId, r.stopReason, r.output?.map((b) => ('text' in b ? b.text : `<${b.type}>`)).join('')]);
}

/** Writes `name` into a directory of its own under the scratch directory. @returns its path. */
function write(dir: string, name: string, text: string): string {
  const into = join(scratch, dir);
  mkdirSync(into, { recursive: true });
  const path = join(into, name);
  writeFileSync(path, text);
  return path;
}

/** The same log with `seq` and `time` on every event line, as the runtime writes it (times 10 ms apart from `createdAt`). */
function withEnvelopes(text: string): string {
  const lines = text.split('\n').filter((l) => l !== '');
  const header = JSON.parse(lines[0] ?? '{}') as { createdAt: number };
  const out = [lines[0]];
  lines.slice(1).forEach((line, i) => {
    const value = JSON.parse(line) as Record<string, unknown>;
    out.push(JSON.stringify({ type: value['type'], seq: i, time: header.createdAt + 10 * (i + 1), ...value }));
  });
  return `${out.join('\n')}\n`;
}

// What upstream's child log (session.1.jsonl) holds after its session/end-seed:
// turn 1 answers CHILD_OK and ends completed; turn 2 answers SECOND_OK and ends
// completed; turn 3 claims the queued THIRD_OK and ends with a durable error
// ("snapshot disk full", forced by upstream's snapshot fixture), which is why
// the parent's settlement notice says the child "failed before it finished".
const CONTINUABLE_CHILD_RUNS: Array<[string, string, string | undefined]> = [
  [`${CHILD_ID}#0`, 'completed', 'CHILD_OK'],
  [`${CHILD_ID}#1`, 'completed', 'SECOND_OK'],
  [`${CHILD_ID}#2`, 'error', undefined],
];

describe('upstream subagent-continuable child log', () => {
  it('streamed (the parent not replayed): its three turns, no invented run', async () => {
    const { ends, problems } = await replay([join(CONTINUABLE, 'session.1.jsonl')]);
    expect(problems).toEqual([]);
    expect(childRuns(ends)).toEqual(CONTINUABLE_CHILD_RUNS);
    expect(ends).toHaveLength(3);
  });

  it('linked under the parent: the same child runs, each nested under a run of the parent', async () => {
    const { starts, ends, problems } = await replay([CONTINUABLE]);
    expect(problems).toEqual([]);
    expect(childRuns(ends)).toEqual(CONTINUABLE_CHILD_RUNS);
    // Which parent turn: these logs carry no event times (every run starts at its header's createdAt), so only that there is one.
    for (const start of starts.filter((s) => s.sessionId === CHILD_ID))
      expect(start.parentRunId).toMatch(new RegExp(`^${PARENT_ID}#[01]$`));
    // The parent's two turns (DONE, then the settlement notice's) and the child's three.
    expect(ends).toHaveLength(5);
  });

  it('gives the same runs when every row carries seq and time, streamed and linked', async () => {
    const child = write(
      'enveloped',
      'session.1.jsonl',
      withEnvelopes(readFileSync(join(CONTINUABLE, 'session.1.jsonl'), 'utf8')),
    );
    const streamed = await replay([child]);
    expect(streamed.problems).toEqual([]);
    expect(childRuns(streamed.ends)).toEqual(CONTINUABLE_CHILD_RUNS);
    write('enveloped', 'session.jsonl', withEnvelopes(readFileSync(join(CONTINUABLE, 'session.jsonl'), 'utf8')));
    const linked = await replay([join(scratch, 'enveloped')]);
    expect(linked.problems).toEqual([]);
    expect(childRuns(linked.ends)).toEqual(CONTINUABLE_CHILD_RUNS);
  });
});

describe('a one-turn child log', () => {
  const header = {
    type: 'session',
    version: 0,
    id: CHILD_ID,
    createdAt: 5_000,
    parentSession: PARENT_ID,
    origin: 'subagent',
    delegationDepth: 1,
  };
  const events = [
    { type: 'turn/start', data: { turn: 1 } },
    { type: 'step/start', data: { turn: 1, step: 1 } },
    {
      type: 'assistant/message',
      data: {
        turn: 1,
        step: 1,
        message: { role: 'assistant', content: [{ type: 'text', text: 'ONLY_TURN' }], id: 'm1' },
        usage: { inputTokens: 4, outputTokens: 2 },
      },
    },
    { type: 'step/end', data: { turn: 1, step: 1 } },
    { type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
  ];
  const plain = `${[header, ...events].map((r) => JSON.stringify(r)).join('\n')}\n`;

  it.each([
    ['with seq and time', withEnvelopes(plain)],
    ['without seq and time', plain],
  ])('%s is one completed run, streamed', async (name, text) => {
    const { ends, problems } = await replay([write(`one-turn-${name.replace(/ /g, '-')}`, 'session.1.jsonl', text)]);
    expect(problems).toEqual([]);
    expect(childRuns(ends)).toEqual([[`${CHILD_ID}#0`, 'completed', 'ONLY_TURN']]);
  });

  it('a child log holding no turn is still one run (the delegation failed before it), streamed', async () => {
    const { ends } = await replay([
      write(
        'no-turn',
        'session.1.jsonl',
        `${JSON.stringify(header)}\n${JSON.stringify({ type: 'approval/policy', data: { policy: 'never' } })}\n`,
      ),
    ]);
    expect(childRuns(ends)).toEqual([[`${CHILD_ID}#0`, 'error', undefined]]);
  });
});

describe('packed chunk rows without seq0/time0', () => {
  it("are all read in upstream's recorded child snapshots: no bad-packed-row", async () => {
    // 17 packed rows in these files (counted by hand with grep '-chunks"'), none carrying seq0 or time0.
    const files = readdirSync(SNAPSHOTS, { recursive: true, encoding: 'utf8' }).filter((f) =>
      /session\.\d+\.jsonl$/.test(f),
    );
    const packed = files.reduce(
      (n, f) =>
        n +
        (readFileSync(join(SNAPSHOTS, f), 'utf8').match(/"type":"(text|reasoning|tool-call)-chunks"/g) ?? []).length,
      0,
    );
    expect(packed).toBe(17);
    const { problems, ends } = await replay(files.map((f) => join(SNAPSHOTS, f)));
    expect(problems.map((p) => `${p.code} ${p.file}:${p.line}`)).toEqual([]);
    expect(ends.length).toBeGreaterThan(0);
  });

  it('give the output of a child cut off after an empty usage-only message, whose text exists only in such rows', async () => {
    const log = [
      {
        type: 'session',
        version: 0,
        id: CHILD_ID,
        createdAt: 7_000,
        parentSession: PARENT_ID,
        origin: 'subagent',
        delegationDepth: 1,
      },
      { type: 'subagent/descriptor', data: { version: 2, mode: 'one-shot', provider: 'spawn', label: 'cut off' } },
      { type: 'turn/start', data: { turn: 1 } },
      { type: 'step/start', data: { turn: 1, step: 1 } },
      { type: 'request/context', time: 7_040, data: { provider: 'deepseek-official', model: 'deepseek-v4-flash' } },
      {
        type: 'assistant/chunk',
        data: { turn: 1, step: 1, chunk: { type: 'block-start', index: 0, blockType: 'text' } },
      },
      {
        type: 'text-chunks',
        data: { turn: 1, step: 1, index: 0, dt: [3, 4], texts: ['Partial ', 'answer ', 'before'] },
      },
      { type: 'text-chunks', data: { turn: 1, step: 1, index: 0, dt: [1, 1], texts: [' the', ' cut', '.'] } },
      {
        type: 'assistant/message',
        data: {
          turn: 1,
          step: 1,
          message: { role: 'assistant', content: [], id: 'm1' },
          usage: { inputTokens: 30, outputTokens: 6 },
        },
      },
    ];
    const path = write('cut-off', 'session.1.jsonl', `${log.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const { ends, problems } = await replay([path]);
    expect(problems).toEqual([]);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({
      runId: `${CHILD_ID}#0`,
      stopReason: 'error',
      output: [{ type: 'text', text: 'Partial answer before the cut.' }],
      outputSource: 'stream',
      emptyMessages: 1,
      usage: { inputTokens: 30, outputTokens: 6 },
      startTime: 7_000,
      endTime: 7_040,
    });
  });
});
