/**
 * Codex rollouts end to end: files sniffed and classified as `replay` does,
 * grouped into sessions, read into runs. Against the six real Codex 0.104
 * rollouts (runs, usage after deduplication, stop reasons, output against
 * Codex's own `last_agent_message`), the synthetic sessions with spawned
 * children (v1 with a copied history and a grandchild, v2 with ordinals)
 * and truncations, bad input, duplicates, `live` mode, and the built CLI.
 * Expected figures were computed from the files by a separate script and
 * are written here as literals.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunListener, RunRecord, RunStart } from '../../../src/observe/run-record.js';
import { reportedOutputMatches } from '../../../src/output/result.js';
import { sniffFile } from '../../../src/replay/input-files.js';
import { classifyCodex, codexFormat, groupCodex } from '../../../src/transcripts/codex/files.js';
import type { TranscriptFile, TranscriptProblem, TranscriptReadContext } from '../../../src/transcripts/format.js';
import { classifyTranscript, readTranscripts } from '../../../src/transcripts/transcripts.js';
import { isTextBlock, type ContentBlock } from '../../../src/wire/content.js';
import { attributes, readSpans, runCli } from '../../helpers/cli.js';
import { sharedTranscripts } from '../../helpers/required-folder.js';
import { ROOT } from '../../helpers/paths.js';

const FIXTURES = join(ROOT, 'test/transcripts/codex');
const SHARED_REAL = sharedTranscripts('codex/real');
const HAS_REAL = SHARED_REAL !== undefined;
const REAL = SHARED_REAL ?? join(ROOT, 'shared-transcripts-missing');
const SPAWN = join(FIXTURES, 'synthetic/spawn');
const SPAWN_V2 = join(FIXTURES, 'synthetic/spawn-v2');
const TRUNCATED = join(FIXTURES, 'synthetic/truncated');

const P = '019d4a10-0000-7000-8000-00000000000a';
const A = '019d4a10-0003-7000-8000-00000000000b';
const G = '019d4a10-0008-7000-8000-00000000000c';
const B = '019d4a10-0004-7000-8000-00000000000d';

const scratch = mkdtempSync(join(tmpdir(), 'codex-e2e-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The `.jsonl` files of `dir`, sniffed and classified as `replay` does. */
async function transcriptFiles(dir: string, mtimeMs?: (path: string) => number): Promise<TranscriptFile[]> {
  const files: TranscriptFile[] = [];
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.jsonl'))
    .sort()) {
    const path = join(dir, name);
    const sniffed = await sniffFile(path, { classifyTranscript });
    if (!sniffed.ok || sniffed.transcript === undefined) throw new Error(`${name} was not classified as a transcript`);
    const stat = statSync(path);
    files.push({ path, size: stat.size, mtimeMs: mtimeMs?.(path) ?? stat.mtimeMs, info: sniffed.transcript });
  }
  return files;
}

interface Recorded {
  readonly events: string[];
  readonly runs: RunRecord[];
  readonly starts: RunStart[];
  readonly problems: TranscriptProblem[];
  pauses: number;
}

function recorder(): {
  recorded: Recorded;
  context: (extra?: Partial<TranscriptReadContext>) => TranscriptReadContext;
} {
  const recorded: Recorded = { events: [], runs: [], starts: [], problems: [], pauses: 0 };
  const listener: RunListener = {
    onRunStart: (start) => {
      recorded.events.push(`start ${start.runId}`);
      recorded.starts.push(start);
    },
    onRunEnd: (record) => {
      recorded.events.push(`end ${record.runId}`);
      recorded.runs.push(record);
    },
  };
  const context = (extra: Partial<TranscriptReadContext> = {}): TranscriptReadContext => ({
    listener,
    onProblem: (problem) => recorded.problems.push(problem),
    onBytes: () => undefined,
    pause: () => {
      recorded.pauses += 1;
      return undefined;
    },
    ...extra,
  });
  return { recorded, context };
}

async function readDir(
  dir: string,
  extra: Partial<TranscriptReadContext> = {},
): Promise<Recorded & { results: Awaited<ReturnType<typeof readTranscripts>> }> {
  const { recorded, context } = recorder();
  const results = await readTranscripts(await transcriptFiles(dir), context(extra));
  return { ...recorded, results };
}

function run(runs: readonly RunRecord[], threadId: string): RunRecord {
  const found = runs.find((r) => r.runId === `codex:${threadId}`);
  if (found === undefined) throw new Error(`no run for ${threadId}`);
  return found;
}

function textOf(blocks: readonly ContentBlock[] | undefined): string {
  return (blocks ?? [])
    .filter(isTextBlock)
    .map((b) => b.text)
    .join('');
}

/** The `len=N sha=X` part of a redaction marker: the text and the `last_agent_message` of one message carry different marker names. */
function marker(text: string): string {
  return /len=\d+ sha=[0-9a-f]+/.exec(text)?.[0] ?? text;
}

describe.runIf(HAS_REAL)('the real Codex 0.104 rollouts (madshn/localpush)', () => {
  it('classifies each as a session of its own thread and groups six sessions of one file each', async () => {
    const files = await transcriptFiles(REAL);
    expect(files.map((f) => [f.info.format, f.info.kind, f.info.facts['threadId']])).toEqual([
      ['codex', 'session', '019c8a4c-ed82-79a1-aa28-7738fc5ab61a'],
      ['codex', 'session', '019c8a4d-8f45-7010-8b5d-7fad920aa6f9'],
      ['codex', 'session', '019c8a53-a0dd-7130-bcd7-95445d84846a'],
      ['codex', 'session', '019c8a59-e9dd-71f0-9ae3-4079fe9726a9'],
      ['codex', 'session', '019c8a70-dda7-7f33-98ea-f30553347322'],
      ['codex', 'session', '019c8bfe-ec25-79e0-97d7-bda6a9c575ff'],
    ]);
    const sessions = groupCodex(files);
    expect(sessions.map((s) => [s.key, s.files.length])).toEqual([
      ['codex:019c8a4c-ed82-79a1-aa28-7738fc5ab61a', 1],
      ['codex:019c8a4d-8f45-7010-8b5d-7fad920aa6f9', 1],
      ['codex:019c8a53-a0dd-7130-bcd7-95445d84846a', 1],
      ['codex:019c8a59-e9dd-71f0-9ae3-4079fe9726a9', 1],
      ['codex:019c8a70-dda7-7f33-98ea-f30553347322', 1],
      ['codex:019c8bfe-ec25-79e0-97d7-bda6a9c575ff', 1],
    ]);
  });

  it('reads one root run per file with the deduplicated usage, calls, tools and stop reasons', async () => {
    const { runs, problems, results } = await readDir(REAL);
    expect(problems).toEqual([]);
    expect(results.map((r) => [r.records, r.runs, r.isSkipped])).toEqual([
      [702, 1, false],
      [417, 1, false],
      [837, 1, false],
      [2722, 1, false],
      [19, 1, false],
      [63, 1, false],
    ]);
    const rows = runs.map((r) => ({
      id: r.runId.slice(-12),
      agent: r.agentName,
      parent: r.parentRunId,
      steps: r.steps.length,
      tools: r.toolCalls.length,
      unfinished: r.toolCalls.filter((t) => t.errorType === 'unfinished').length,
      usage: [r.usage.inputTokens, r.usage.cacheReadTokens, r.usage.outputTokens, r.usage.reasoningTokens],
      stop: [r.stopReason, r.stopReasonInferredFrom],
      notes: r.usageNotes,
      models: [...new Set(r.steps.map((s) => s.model))],
    }));
    expect(rows).toEqual([
      {
        id: '7738fc5ab61a',
        agent: 'codex',
        parent: undefined,
        steps: 81,
        tools: 105,
        unfinished: 0,
        usage: [367673, 6836352, 36075, 17896],
        stop: ['completed', 'codex:task_complete'],
        notes: undefined,
        models: ['gpt-5.3-codex'],
      },
      {
        id: '7fad920aa6f9',
        agent: 'codex',
        parent: undefined,
        steps: 28,
        tools: 118,
        unfinished: 0,
        usage: [99460, 1651968, 14600, 4293],
        stop: ['completed', 'codex:task_complete'],
        notes: undefined,
        models: ['gpt-5.3-codex'],
      },
      {
        id: '95445d84846a',
        agent: 'codex',
        parent: undefined,
        steps: 83,
        tools: 144,
        unfinished: 1,
        usage: [403949, 6337024, 36950, 17085],
        stop: ['unknown', 'none'],
        notes: undefined,
        models: ['gpt-5.3-codex'],
      },
      {
        id: '4079fe9726a9',
        agent: 'codex',
        parent: undefined,
        steps: 286,
        tools: 372,
        unfinished: 0,
        usage: [2188981, 31621504, 133999, 42113],
        stop: ['completed', 'codex:task_complete'],
        notes: undefined,
        models: ['gpt-5.3-codex'],
      },
      {
        id: 'f30553347322',
        agent: 'codex',
        parent: undefined,
        steps: 1,
        tools: 1,
        unfinished: 1,
        usage: [31013, 3456, 431, 264],
        stop: ['unknown', 'none'],
        notes: undefined,
        models: ['gpt-5.3-codex'],
      },
      {
        id: 'bda6a9c575ff',
        agent: 'codex',
        parent: undefined,
        steps: 6,
        tools: 5,
        unfinished: 0,
        usage: [59525, 238848, 1123, 483],
        stop: ['completed', 'codex:task_complete'],
        notes: undefined,
        models: ['gpt-5.3-codex'],
      },
    ]);
    // All six together, against Codex's cumulative totals (input 49,839,753 of which 46,689,152 cached; output 223,178):
    const sum = (key: 'inputTokens' | 'cacheReadTokens' | 'outputTokens' | 'reasoningTokens'): number =>
      runs.reduce((s, r) => s + r.usage[key], 0);
    expect([sum('inputTokens'), sum('cacheReadTokens'), sum('outputTokens'), sum('reasoningTokens')]).toEqual([
      3150601, 46689152, 223178, 82134,
    ]);
    expect(
      runs.every(
        (r) => r.cost !== undefined && r.cost.pricedCalls === r.steps.length && r.cost.unpricedModels.length === 0,
      ),
    ).toBe(true);
  });

  it('selects, for every run whose last turn completed, the text Codex itself reported as the turn’s last message (4 of 4)', async () => {
    const { runs } = await readDir(REAL);
    const selected = runs.map((r) => marker(textOf(r.output)));
    // `last_agent_message` of each file's last task_complete (none where the last turn never ended):
    const codexReported = [
      'len=361 sha=230ed000',
      'len=15927 sha=093a1686',
      undefined,
      'len=1281 sha=ddb3d2c5',
      undefined,
      'len=647 sha=10502814',
    ];
    expect(selected.filter((text, i) => codexReported[i] !== undefined && text === codexReported[i])).toHaveLength(4);
    expect(selected[0]).toBe('len=361 sha=230ed000');
    expect(runs.every((r) => r.reported === undefined)).toBe(true);
  });
});

describe('a synthetic session with spawned children (multi-agent v1, a copied history, a grandchild)', () => {
  it('groups the four threads into one session, parents before children', async () => {
    const sessions = groupCodex(await transcriptFiles(SPAWN));
    expect(sessions.map((s) => [s.key, s.files.map((f) => f.info.facts['threadId'])])).toEqual([
      [`codex:${P}`, [P, A, G, B]],
    ]);
  });

  it('reports children before parents, each start right before its end, with a pause after each run', async () => {
    const { events, pauses } = await readDir(SPAWN);
    expect(events).toEqual([
      `start codex:${G}`,
      `end codex:${G}`,
      `start codex:${A}`,
      `end codex:${A}`,
      `start codex:${B}`,
      `end codex:${B}`,
      `start codex:${P}`,
      `end codex:${P}`,
    ]);
    expect(pauses).toBe(4);
  });

  it('nests each child under the spawn_agent call that named it, in the root’s trace, named by its role', async () => {
    const { runs } = await readDir(SPAWN);
    expect(
      runs.map((r) => [
        r.runId,
        r.agentName,
        r.parentRunId,
        r.parentToolCallId,
        r.traceKey,
        r.sessionId,
        r.parentSessionId,
      ]),
    ).toEqual([
      [`codex:${G}`, 'worker', `codex:${A}`, 'call_a_spawn_g', `codex:${P}`, G, A],
      [`codex:${A}`, 'explorer', `codex:${P}`, 'call_spawn_a', `codex:${P}`, A, P],
      [`codex:${B}`, 'worker', `codex:${P}`, 'call_spawn_b', `codex:${P}`, B, P],
      [`codex:${P}`, 'codex', undefined, undefined, `codex:${P}`, P, undefined],
    ]);
  });

  it('leaves the copied parent history out of the forked child’s usage, output and tools', async () => {
    const { runs } = await readDir(SPAWN);
    const child = run(runs, A);
    // The child's totals run from the copy's 12,000 input tokens to 67,000: its own are the 55,000 between.
    expect(child.usage).toEqual({
      inputTokens: 10000,
      cacheReadTokens: 45000,
      cacheWriteTokens: 0,
      outputTokens: 460,
      reasoningTokens: 160,
      reported: true,
    });
    expect(child.steps).toHaveLength(5);
    expect(child.toolCalls.map((t) => [t.callId, t.name, t.isError, t.errorType])).toEqual([
      ['call_a_exec1', 'exec_command', false, undefined],
      ['call_a_spawn_g', 'spawn_agent', false, undefined],
      ['call_a_wait', 'wait_agent', false, undefined],
      ['call_a_exec2', 'exec_command', true, 'exit_code'],
    ]);
    expect(child.prompt).toEqual([{ type: 'text', text: 'Review src/parser.ts for bugs.' }]);
    expect(child.usageNotes).toEqual(['codex:copied-history-by-time']);
    expect(run(runs, P).usage).toEqual({
      inputTokens: 16000,
      cacheReadTokens: 24000,
      cacheWriteTokens: 0,
      outputTokens: 520,
      reasoningTokens: 200,
      reported: true,
    });
    expect(run(runs, G).usage).toEqual({
      inputTokens: 8000,
      cacheReadTokens: 9000,
      cacheWriteTokens: 0,
      outputTokens: 180,
      reasoningTokens: 60,
      reported: true,
    });
    expect(run(runs, B).usage).toEqual({
      inputTokens: 5000,
      cacheReadTokens: 1000,
      cacheWriteTokens: 0,
      outputTokens: 50,
      reasoningTokens: 10,
      reported: true,
    });
  });

  it('reports what each parent’s wait_agent received as the child’s output, and it matches the selection (3 of 3)', async () => {
    const { runs } = await readDir(SPAWN);
    const children = [G, A, B].map((id) => run(runs, id));
    expect(
      children.map((r) => [textOf(r.reported?.output), r.reported?.compare, r.stopReason, r.stopReasonInferredFrom]),
    ).toEqual([
      [
        'The tokenizer tests do not cover a token at the end of input.',
        'text',
        'completed',
        'codex:parent-result:completed',
      ],
      ['parser.ts: off-by-one in readToken (line 42).', 'text', 'completed', 'codex:parent-result:completed'],
      ['writer.ts: no bugs found.', 'text', 'completed', 'codex:parent-result:completed'],
    ]);
    expect(
      children.filter((r) => reportedOutputMatches(r.reported?.output, r.output, r.reported?.compare)),
    ).toHaveLength(3);
  });

  it('prices every run and gives the root the session’s total', async () => {
    const { runs } = await readDir(SPAWN);
    const root = run(runs, P);
    const total = runs.reduce((sum, r) => sum + (r.cost?.amount ?? 0), 0);
    expect(runs.every((r) => (r.cost?.pricedCalls ?? 0) === r.steps.length)).toBe(true);
    expect(root.sessionTotalCost?.amount).toBeCloseTo(total, 12);
    expect(root.sessionTotalCost?.amount ?? 0).toBeGreaterThan(root.cost?.amount ?? 0);
  });

  it('reads a child whose parent file is absent as a run without a parent, never dropped', async () => {
    const dir = join(scratch, 'orphan');
    mkdirSync(dir, { recursive: true });
    copyFileSync(
      join(SPAWN, `rollout-2026-04-20T10-00-03-${A}.jsonl`),
      join(dir, `rollout-2026-04-20T10-00-03-${A}.jsonl`),
    );
    const { runs } = await readDir(dir);
    expect(
      runs.map((r) => [
        r.runId,
        r.parentRunId,
        r.parentToolCallId,
        r.parentSessionId,
        r.traceKey,
        r.agentName,
        r.reported,
      ]),
    ).toEqual([[`codex:${A}`, undefined, undefined, P, `codex:${A}`, 'explorer', undefined]]);
    expect(run(runs, A).usageNotes).toEqual(['codex:copied-history-by-time', 'codex:parent-file-absent']);
    expect(run(runs, A).stopReasonInferredFrom).toBe('codex:task_complete');
  });

  it('names every run by --agent-name when given', async () => {
    const { runs } = await readDir(SPAWN, { agentName: 'my-agent' });
    expect(runs.map((r) => r.agentName)).toEqual(['my-agent', 'my-agent', 'my-agent', 'my-agent']);
  });
});

describe('a synthetic multi-agent v2 session (ordinals, agent paths, inter-agent messages)', () => {
  const V = '019e0c30-0000-7000-8000-00000000002a';
  const W = '019e0c30-0001-7000-8000-00000000002b';

  it('links the child by its agent path, skips its history by ordinal, and reads its result from the relayed notification', async () => {
    const { runs } = await readDir(SPAWN_V2);
    const child = run(runs, W);
    expect([child.parentRunId, child.parentToolCallId, child.agentName]).toEqual([
      `codex:${V}`,
      'call_v_spawn',
      'explorer',
    ]);
    expect(child.usage).toEqual({
      inputTokens: 4000,
      cacheReadTokens: 9000,
      cacheWriteTokens: 0,
      outputTokens: 120,
      reasoningTokens: 40,
      reported: true,
    });
    expect(child.usageNotes).toBeUndefined();
    expect(child.reported).toEqual({ output: [{ type: 'text', text: 'No unused exports in src/.' }], compare: 'text' });
    expect(reportedOutputMatches(child.reported?.output, child.output, 'text')).toBe(true);
    expect(run(runs, V).output).toEqual([{ type: 'text', text: 'The scout found no unused exports in src/.' }]);
  });
});

describe('synthetic truncations', () => {
  it('reads a turn cut at max_output_tokens as max-tokens, from the error the turn recorded', async () => {
    const { runs } = await readDir(TRUNCATED);
    const root = run(runs, '019d4b20-0000-7000-8000-00000000001a');
    expect([root.stopReason, root.stopReasonInferredFrom, root.diagnostic]).toEqual([
      'max-tokens',
      'codex:incomplete:max_output_tokens',
      'stream disconnected before completion: Incomplete response returned, reason: max_output_tokens',
    ]);
    expect(textOf(root.output)).toBe('Drafting the guide section by section.');
    expect(root.usage).toMatchObject({ inputTokens: 20000, outputTokens: 400 });
  });

  it('reads a child cut off as max-tokens from its parent’s wait result when its own file says it completed', async () => {
    const { runs } = await readDir(TRUNCATED);
    const child = run(runs, '019d4b20-0002-7000-8000-00000000001c');
    expect([
      child.agentName,
      child.parentToolCallId,
      child.stopReason,
      child.stopReasonInferredFrom,
      child.reported,
    ]).toEqual([
      'subagent',
      'call_q_spawn',
      'max-tokens',
      'codex:parent-result:incomplete:max_output_tokens',
      undefined,
    ]);
    expect(textOf(child.output)).toBe('Listing the endpoints router by router.');
    expect(run(runs, '019d4b20-0001-7000-8000-00000000001b').stopReason).toBe('completed');
  });
});

describe('bad input', () => {
  const META = JSON.stringify({
    timestamp: '2026-04-20T10:00:00.000Z',
    type: 'session_meta',
    payload: { id: 'bad-1', source: 'cli', cli_version: '0.121.0' },
  });
  const line = (type: string, payload: unknown): string =>
    JSON.stringify({ timestamp: '2026-04-20T10:00:01.000Z', type, payload });

  it('reports malformed, non-UTF-8, invalid and torn lines with file and line, and reads the rest', async () => {
    const dir = join(scratch, 'bad');
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'rollout-2026-04-20T10-00-00-bad-1.jsonl');
    const body = [
      META,
      '{"timestamp": "2026-04-20T10:00:01.000Z", "type": ',
      '[1,2,3]',
      line('response_item', { type: 'function_call', name: 'exec_command', arguments: '{}' }),
      line('session_state', { anything: true }),
      line('event_msg', { type: 'task_started', turn_id: 't' }),
      line('response_item', {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'still read' }],
      }),
      line('event_msg', {
        type: 'token_count',
        info: {
          total_token_usage: {
            input_tokens: 10,
            cached_input_tokens: 0,
            output_tokens: 2,
            reasoning_output_tokens: 0,
            total_tokens: 12,
          },
        },
      }),
      line('event_msg', { type: 'task_complete', turn_id: 't', last_agent_message: 'still read' }),
    ].join('\n');
    writeFileSync(
      path,
      Buffer.concat([
        Buffer.from(`${body}\n`),
        Buffer.from([0xff, 0xfe, 0x0a]),
        Buffer.from('{"timestamp":"2026-04-20T10:00:02.000Z","type":"event'),
      ]),
    );
    const { runs, problems, results } = await readDir(dir);
    expect(problems.map((p) => [p.line, p.code, p.scope])).toEqual([
      [2, 'not-json', 'record'],
      [3, 'not-object', 'record'],
      [4, 'invalid', 'record'],
      [10, 'invalid-utf8', 'record'],
      [11, 'torn-tail', 'record'],
    ]);
    expect(problems.every((p) => p.file === path)).toBe(true);
    expect(results).toEqual([{ path, records: 6, runs: 1, isSkipped: false }]);
    expect(runs.map((r) => [r.stopReason, textOf(r.output), r.usage.inputTokens])).toEqual([
      ['completed', 'still read', 10],
    ]);
  });

  it('skips, with a file problem, a file whose line 1 is not its thread’s session_meta', async () => {
    const dir = join(scratch, 'not-meta');
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'rollout-x.jsonl');
    writeFileSync(path, `${line('event_msg', { type: 'task_started' })}\n`);
    const { recorded, context } = recorder();
    const file: TranscriptFile = {
      path,
      size: 10,
      mtimeMs: 0,
      info: { format: 'codex', kind: 'session', facts: { threadId: 'x' } },
    };
    const results = await codexFormat.read({ format: 'codex', key: 'codex:x', files: [file] }, context());
    expect(results).toEqual([{ path, records: 1, runs: 0, isSkipped: true }]);
    expect(recorded.problems.map((p) => [p.line, p.code, p.scope])).toEqual([[1, 'not-a-codex-rollout', 'file']]);
    expect(recorded.runs).toEqual([]);
  });

  it('reads a thread found in both sessions/ and archived_sessions/ once, from sessions/', async () => {
    const name = `rollout-2026-04-20T10-00-04-${B}.jsonl`;
    const live = join(scratch, 'home/sessions/2026/04/20');
    const archived = join(scratch, 'home/archived_sessions');
    mkdirSync(live, { recursive: true });
    mkdirSync(archived, { recursive: true });
    copyFileSync(join(SPAWN, name), join(live, name));
    copyFileSync(join(SPAWN, name), join(archived, name));
    const files = [...(await transcriptFiles(archived)), ...(await transcriptFiles(live))];
    const sessions = groupCodex(files);
    expect(sessions.map((s) => s.files.map((f) => f.path))).toEqual([[join(live, name), join(archived, name)]]);
    const { recorded, context } = recorder();
    const results = await readTranscripts(files, context());
    expect(results.map((r) => [r.path, r.runs, r.isSkipped])).toEqual([
      [join(live, name), 1, false],
      [join(archived, name), 0, true],
    ]);
    expect(recorded.problems.map((p) => [p.file, p.code])).toEqual([[join(archived, name), 'duplicate-thread']]);
  });
});

describe('classification', () => {
  const meta = (payload: Record<string, unknown>): unknown => ({
    timestamp: '2026-04-20T10:00:00.000Z',
    type: 'session_meta',
    payload,
  });

  it('lists Codex’s internal threads (review, compaction, memory, guardian) as what they are, not as runs', () => {
    const head = (source: unknown) =>
      classifyCodex({ path: 'rollout.jsonl', firstLine: meta({ id: 'i', source }), prefix: '' });
    expect(head({ subagent: 'review' })).toMatchObject({
      format: 'codex',
      kind: 'other',
      what: expect.stringContaining('review thread') as unknown,
    });
    expect(head({ subagent: 'compact' })).toMatchObject({
      kind: 'other',
      what: expect.stringContaining('compaction') as unknown,
    });
    expect(head({ subagent: 'memory_consolidation' })).toMatchObject({
      kind: 'other',
      what: expect.stringContaining('memory') as unknown,
    });
    expect(head({ subagent: { other: 'guardian' } })).toMatchObject({
      kind: 'other',
      what: expect.stringContaining('other:guardian') as unknown,
    });
  });

  it('tells an internal thread from a long line 1’s prefix too', () => {
    const prefix = (source: string): string =>
      `{"timestamp":"2026-04-20T10:00:00.000Z","type":"session_meta","payload":{"id":"i","timestamp":"2026-04-20T10:00:00.000Z","source":${source},"base_instructions":{"text":"xxxx`;
    expect(
      classifyCodex({ path: 'r.jsonl', firstLine: undefined, prefix: prefix('{"subagent":"compact"}') }),
    ).toMatchObject({ kind: 'other', facts: { threadId: 'i' } });
    expect(
      classifyCodex({ path: 'r.jsonl', firstLine: undefined, prefix: prefix('{"subagent":{"other":"guardian"}}') }),
    ).toMatchObject({ kind: 'other', what: expect.stringContaining('other:guardian') as unknown });
    expect(classifyCodex({ path: 'r.jsonl', firstLine: undefined, prefix: prefix('"exec"') })).toEqual({
      format: 'codex',
      kind: 'session',
      facts: { threadId: 'i' },
    });
  });

  it('claims no other file', () => {
    expect(classifyCodex({ path: 'a.jsonl', firstLine: { type: 'session', id: 'x' }, prefix: '' })).toBeUndefined();
    expect(
      classifyCodex({ path: 'a.jsonl', firstLine: { type: 'session_meta', payload: {} }, prefix: '' }),
    ).toBeUndefined();
    expect(
      classifyCodex({ path: 'a.jsonl', firstLine: undefined, prefix: '{"type":"user","message":{}}' }),
    ).toBeUndefined();
  });

  it('reads the grouping facts from the sniffed prefix when line 1 is longer than the sniff (long base instructions)', async () => {
    const dir = join(scratch, 'long');
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'rollout-long.jsonl');
    const payload = {
      id: 'kid',
      timestamp: '2026-04-20T10:00:00.000Z',
      cwd: '/w',
      originator: 'codex_cli_rs',
      cli_version: '0.121.0',
      source: {
        subagent: {
          thread_spawn: { parent_thread_id: 'mom', depth: 1, agent_nickname: 'Ada', agent_role: 'explorer' },
        },
      },
      agent_nickname: 'Ada',
      agent_role: 'explorer',
      model_provider: 'openai',
      base_instructions: { text: 'x'.repeat(100_000) },
    };
    writeFileSync(path, `${JSON.stringify(meta(payload))}\n`);
    const sniffed = await sniffFile(path, { classifyTranscript });
    expect(sniffed.ok && sniffed.transcript).toEqual({
      format: 'codex',
      kind: 'session',
      facts: { threadId: 'kid', parentThreadId: 'mom', agentRole: 'explorer' },
    });
  });
});

describe('live mode (watch)', () => {
  const NOW = Date.parse('2026-04-20T12:00:00.000Z');
  const IDLE = 60_000;
  /** The spawn session with every file quiet except those named, which were written just now. */
  const files = async (busy: readonly string[]): Promise<TranscriptFile[]> =>
    transcriptFiles(SPAWN, (path) => (busy.some((id) => path.includes(id)) ? NOW - 1_000 : NOW - 10 * IDLE));

  it('reports every run of a quiet session', async () => {
    const { recorded, context } = recorder();
    await readTranscripts(await files([]), context({ live: { now: NOW, idleMs: IDLE, isReported: () => false } }));
    expect(recorded.runs.map((r) => r.runId)).toEqual([`codex:${G}`, `codex:${A}`, `codex:${B}`, `codex:${P}`]);
  });

  it('holds a run whose file is still being written, and its parent, while quiet children are reported', async () => {
    const { recorded, context } = recorder();
    const results = await readTranscripts(
      await files([A]),
      context({ live: { now: NOW, idleMs: IDLE, isReported: () => false } }),
    );
    expect(recorded.runs.map((r) => r.runId)).toEqual([`codex:${G}`, `codex:${B}`]);
    expect(results.map((r) => r.runs)).toEqual([0, 0, 1, 1]);
  });

  it('never reports a run twice, and reports a parent once its children are done or reported', async () => {
    const { recorded, context } = recorder();
    const reported = new Set([`codex:${G}`, `codex:${B}`]);
    await readTranscripts(
      await files([]),
      context({ live: { now: NOW, idleMs: IDLE, isReported: (id) => reported.has(id) } }),
    );
    expect(recorded.runs.map((r) => r.runId)).toEqual([`codex:${A}`, `codex:${P}`]);
    // The child still links to its spawn call: the parent's file was read for it even though the parent is reported later.
    expect(run(recorded.runs, A).parentToolCallId).toBe('call_spawn_a');
  });

  it('reads again a thread whose file changed after its report, asking with the file’s mtime', async () => {
    const { recorded, context } = recorder();
    const quiet = NOW - 10 * IDLE; // every file's mtime here
    // B was reported with an end before its file's last change: it grew since. The others were reported as they are.
    const ends = new Map([
      [`codex:${P}`, quiet],
      [`codex:${A}`, quiet],
      [`codex:${G}`, quiet],
      [`codex:${B}`, quiet - 1],
    ]);
    const asked: Array<[string, number]> = [];
    const isReported = (id: string, end: number): boolean => {
      asked.push([id, end]);
      return (ends.get(id) ?? -Infinity) >= end;
    };
    await readTranscripts(await files([]), context({ live: { now: NOW, idleMs: IDLE, isReported } }));
    expect(recorded.runs.map((r) => r.runId)).toEqual([`codex:${B}`]);
    expect(asked.every(([, end]) => end === quiet)).toBe(true);
    expect(run(recorded.runs, B).parentToolCallId).toBeDefined();
  });

  it('reads no file whose run, and every descendant’s, was reported', async () => {
    const { recorded, context } = recorder();
    const all = new Set([`codex:${P}`, `codex:${A}`, `codex:${G}`, `codex:${B}`]);
    const results = await readTranscripts(
      await files([]),
      context({ live: { now: NOW, idleMs: IDLE, isReported: (id) => all.has(id) } }),
    );
    expect(recorded.runs).toEqual([]);
    expect(results.map((r) => [r.records, r.runs])).toEqual([
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
    ]);
  });
});

describe.runIf(HAS_REAL)('the built CLI', () => {
  it('replays the synthetic spawn session into one trace with each child under its spawn_agent tool span', async () => {
    const out = join(scratch, 'cli-spawn');
    const done = await runCli(['replay', SPAWN, '--out', out], '', {
      TRACEPARENT: '',
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
      OTEL_TRACES_EXPORTER: '',
      OTEL_METRICS_EXPORTER: '',
    });
    expect(done.code).toBe(0);
    const spans = readSpans(out);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const agents = spans.filter((s) => s.name.startsWith('invoke_agent'));
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    const rows = agents
      .map((s) => {
        const parent = s.parentSpanId !== undefined && s.parentSpanId !== '' ? byId.get(s.parentSpanId) : undefined;
        const a = attributes(s);
        return [
          a['gen_ai.agent.id'],
          s.name,
          parent?.name,
          parent !== undefined ? attributes(parent)['gen_ai.tool.call.id'] : undefined,
          a['subagent.stop_reason'],
          a['gen_ai.usage.input_tokens'],
        ];
      })
      .sort((x, y) => String(x[0]).localeCompare(String(y[0])));
    expect(rows).toEqual([
      [`codex:${P}`, 'invoke_agent codex', undefined, undefined, 'completed', 40000],
      [`codex:${A}`, 'invoke_agent explorer', 'execute_tool spawn_agent', 'call_spawn_a', 'completed', 55000],
      [`codex:${B}`, 'invoke_agent worker', 'execute_tool spawn_agent', 'call_spawn_b', 'completed', 6000],
      [`codex:${G}`, 'invoke_agent worker', 'execute_tool spawn_agent', 'call_a_spawn_g', 'completed', 17000],
    ]);
  });

  it('summarises the real rollouts: six runs, four completed and two unknown, no problem', async () => {
    const out = join(scratch, 'cli-real');
    const done = await runCli(['replay', REAL, '--out', out, '--json'], '', {
      TRACEPARENT: '',
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
      OTEL_TRACES_EXPORTER: '',
      OTEL_METRICS_EXPORTER: '',
    });
    expect(done.code).toBe(0);
    const summary = JSON.parse(done.stdout.toString('utf8')) as {
      runs: number;
      problems: number;
      stopReasons: Array<{ stopReason: string; runs: number; inputTokens: number; outputTokens: number }>;
    };
    expect([summary.runs, summary.problems]).toEqual([6, 0]);
    expect(summary.stopReasons.map((r) => [r.stopReason, r.runs, r.inputTokens, r.outputTokens])).toEqual([
      ['completed', 4, 43064311, 185797],
      ['unknown', 2, 6775442, 37381],
    ]);
  });
});
