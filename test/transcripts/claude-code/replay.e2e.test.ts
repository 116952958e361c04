/**
 * Claude Code transcripts through `replay`: the real 2.1.38/2.1.39 sessions
 * of marot/spotter (the workspace's shared/transcripts/claude-code/real/) and the synthetic
 * layouts and cut-off runs (…/synthetic/), read in process (`replayPaths`)
 * and by the built CLI; damaged files; and the `live` rules of `watch`.
 * Every expected number was computed by an independent script from the
 * files (see the README next to them), never by the code under test.
 */
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunListener, RunRecord, RunStart } from '../../../src/observe/run-record.js';
import { replayPaths, type ReplayProblem } from '../../../src/replay/replay.js';
import { classifyClaudeCode, claudeCodeFormat, groupClaudeCode } from '../../../src/transcripts/claude-code/files.js';
import type { TranscriptFile, TranscriptLive } from '../../../src/transcripts/format.js';
import { attributes, readSpans, runCli, QUIET_ENV } from '../../helpers/cli.js';
import { sharedTranscripts } from '../../helpers/required-folder.js';
import { ROOT } from '../../helpers/paths.js';

const SHARED_REAL = sharedTranscripts('claude-code/real');
const HAS_REAL = SHARED_REAL !== undefined;
const REAL = SHARED_REAL ?? join(ROOT, 'shared-transcripts-missing');
const SYNTHETIC = join(ROOT, 'test/transcripts/claude-code/synthetic');
const dir = mkdtempSync(join(tmpdir(), 'claude-code-e2e-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
interface Collected {
  readonly events: Array<['start', RunStart] | ['end', RunRecord]>;
  readonly records: RunRecord[];
  readonly problems: ReplayProblem[];
}

async function replay(
  paths: readonly string[],
): Promise<Collected & { summary: Awaited<ReturnType<typeof replayPaths>> }> {
  const events: Collected['events'] = [];
  const problems: ReplayProblem[] = [];
  const listener: RunListener = {
    onRunStart: (s) => events.push(['start', s]),
    onRunEnd: (r) => events.push(['end', r]),
  };
  const summary = await replayPaths(paths, listener, { onProblem: (p) => problems.push(p) });
  const records = events.flatMap((e) => (e[0] === 'end' ? [e[1]] : []));
  return { events, records, problems, summary };
}

/** The figures of a run a test compares: identity, nesting, stop, usage buckets, calls, tools, notes. */
function figures(r: RunRecord): unknown[] {
  return [
    r.runId,
    r.agentName,
    r.parentRunId ?? null,
    r.parentToolCallId ?? null,
    r.stopReason,
    r.stopReasonInferredFrom,
    [r.usage.inputTokens, r.usage.outputTokens, r.usage.cacheReadTokens, r.usage.cacheWriteTokens],
    r.steps.length,
    r.toolCalls.length,
    r.usageNotes ?? [],
  ];
}

const S258 = '258c7280-ae70-4798-800f-63464d01a85d';
const SHORT = '55604662-cf2a-4331-851a-ec234028f8ca';
const SUB = '491e126e-1e71-469c-ade2-fcc8af567c74';
const HEAVY = 'd6e0bada-1959-4eec-a9d2-0bfade768d8f';
const ORPHAN = '6c2214d7-b87e-4432-8e41-22ba294ea584';

describe.runIf(HAS_REAL)('the real Claude Code 2.1.38/2.1.39 sessions', () => {
  it('gives one run per session file and per subagent, linked to their Task calls, with usage deduplicated', async () => {
    const { records, problems, summary } = await replay([REAL]);
    expect(problems).toEqual([]);
    expect(records.map(figures)).toEqual([
      [
        `claude-code:${S258}/agent-a881341`,
        'claude-code-guide',
        `claude-code:${S258}`,
        'toolu_01VmaERAwhb19LGUwu9GenaK',
        'completed',
        'claude-code:parent-result:completed',
        [15, 999, 34159, 42176],
        3,
        2,
        ['claude-code:subagent-final-usage-from-parent', 'claude-code:subagent-streaming-usage'],
      ],
      [
        `claude-code:${S258}`,
        'claude-code',
        null,
        null,
        'completed',
        'claude-code:stop-hook-summary',
        [180, 38899, 14771617, 349474],
        152,
        186,
        ['claude-code:streaming-usage'],
      ],
      [
        `claude-code:${ORPHAN}/agent-afc096d`,
        'subagent',
        null,
        null,
        'unknown',
        'none',
        [219, 28, 457858, 39438],
        18,
        48,
        ['claude-code:parent-session-absent', 'claude-code:subagent-streaming-usage'],
      ],
      [
        `claude-code:${SHORT}`,
        'claude-code',
        null,
        null,
        'aborted',
        'claude-code:interrupted',
        [3, 13, 11515, 13835],
        1,
        2,
        ['claude-code:streaming-usage'],
      ],
      [
        `claude-code:${SUB}/agent-afb92ff`,
        'Plan',
        `claude-code:${SUB}`,
        'toolu_01Cz2Pnv7qNcnK1ZiocxWhQX',
        'completed',
        'claude-code:parent-result:completed',
        [27, 3137, 125212, 15177],
        6,
        9,
        [
          'claude-code:subagent-from-parent-progress',
          'claude-code:subagent-final-message-from-parent',
          'claude-code:subagent-final-usage-from-parent',
          'claude-code:subagent-streaming-usage',
        ],
      ],
      [
        `claude-code:${SUB}`,
        'claude-code',
        null,
        null,
        'completed',
        'claude-code:stop-hook-summary',
        [1576, 1586, 427286, 25842],
        12,
        16,
        ['claude-code:streaming-usage'],
      ],
      [
        `claude-code:${HEAVY}`,
        'claude-code',
        null,
        null,
        'aborted',
        'claude-code:interrupted',
        [54, 212, 88231, 17696],
        4,
        6,
        ['claude-code:streaming-usage'],
      ],
    ]);
    expect(summary.runs).toBe(7);
    expect(summary.mismatches).toBe(0);
    expect(
      summary.files.filter((f) => f.what !== undefined).map((f) => [f.path.slice(REAL.length + 1), f.runs, f.what]),
    ).toEqual([
      [
        `${S258}/subagents/agent-acompact-fffbd0.jsonl`,
        0,
        'Claude Code auto-compaction summariser (agent-acompact): not a Task subagent, no run',
      ],
    ]);
    expect(summary.files.map((f) => [f.path.slice(REAL.length + 1), f.records, f.runs])).toContainEqual([
      `${S258}.jsonl`,
      1863,
      1,
    ]);
  });

  it('gives the child the text the parent received (parity), its times from its own lines, every call priced', async () => {
    const { records } = await replay([join(REAL, `${S258}.jsonl`), join(REAL, S258)]);
    const child = records.find((r) => r.runId === `claude-code:${S258}/agent-a881341`);
    expect(child?.reported?.compare).toBe('text');
    expect(child?.reported?.output).toEqual(child?.output);
    expect((child?.output?.[0] as { text: string } | undefined)?.text.length).toBe(3473);
    expect(
      (child?.output?.[0] as { text: string } | undefined)?.text.startsWith(
        'Based on the official Claude Code hooks documentation',
      ),
    ).toBe(true);
    expect([child?.startTime, child?.endTime].map((t) => new Date(t ?? 0).toISOString())).toEqual([
      '2026-02-11T21:24:19.366Z',
      '2026-02-11T21:24:52.186Z',
    ]);
    const root = records.find((r) => r.runId === `claude-code:${S258}`);
    expect([root?.startTime, root?.endTime].map((t) => new Date(t ?? 0).toISOString())).toEqual([
      '2026-02-11T20:31:53.375Z',
      '2026-02-11T21:46:25.932Z',
    ]);
    expect(root?.toolCalls.filter((t) => t.isError).length).toBe(7);
    expect([
      child?.cost?.unpricedModels,
      root?.cost?.unpricedModels,
      root?.cost?.pricedCalls,
      child?.cost?.pricedCalls,
    ]).toEqual([[], [], 152, 3]);
    expect(root?.sessionTotalCost?.pricedCalls).toBe(155);
  });

  it('reports each run’s start right before its end, children before their session', async () => {
    const { events } = await replay([REAL]);
    const kinds = events.map(([kind, value]) => `${kind}:${value.runId}`);
    for (let i = 0; i < kinds.length; i += 2) expect(kinds[i]?.replace('start:', 'end:')).toBe(kinds[i + 1]);
    expect(kinds.indexOf(`end:claude-code:${S258}/agent-a881341`)).toBeLessThan(
      kinds.indexOf(`start:claude-code:${S258}`),
    );
    expect(kinds.indexOf(`end:claude-code:${SUB}/agent-afb92ff`)).toBeLessThan(
      kinds.indexOf(`start:claude-code:${SUB}`),
    );
  });

  it('through the built CLI: one trace per session, the subagent under its Task tool span, no mismatch', async () => {
    const out = join(dir, 'real-out');
    const r = await runCli(['replay', '--json', '--out', out, REAL], '', QUIET_ENV);
    expect(r.stderr.toString('utf8')).toBe('');
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout.toString('utf8')) as {
      runs: number;
      mismatches: number;
      stopReasons: Array<{ stopReason: string; runs: number; outputTokens: number }>;
    };
    expect([summary.runs, summary.mismatches]).toEqual([7, 0]);
    expect(summary.stopReasons.map((s) => [s.stopReason, s.runs, s.outputTokens])).toEqual([
      ['completed', 4, 44621],
      ['aborted', 2, 225],
      ['unknown', 1, 28],
    ]);
    const spans = readSpans(out);
    const child = spans.find((s) => attributes(s)['gen_ai.agent.id'] === `claude-code:${S258}/agent-a881341`);
    const tool = spans.find((s) => s.spanId === child?.parentSpanId);
    const root = spans.find((s) => attributes(s)['gen_ai.agent.id'] === `claude-code:${S258}`);
    expect([
      tool?.name,
      tool?.parentSpanId === root?.spanId,
      tool?.traceId === root?.traceId,
      child?.traceId === root?.traceId,
    ]).toEqual(['execute_tool Task', true, true, true]);
    expect(child !== undefined && attributes(child)['subagent.reported_output.match']).toBe(true);
    const traces = new Set(spans.filter((s) => s.name.startsWith('invoke_agent')).map((s) => s.traceId));
    expect(traces.size).toBe(5);
  });
});

describe('the synthetic layouts and cut-off runs', () => {
  it('reads the <session>/subagents/ layout: sidecars, a truncated child, a rate-limited child, a background agent, a workflow agent', async () => {
    const { records, problems, summary } = await replay([join(SYNTHETIC, 'subagents-2.1')]);
    const S = '11111111-1111-4111-8111-111111111111';
    expect(problems).toEqual([]);
    expect(records.map(figures)).toEqual([
      [
        `claude-code:${S}/agent-a1000001`,
        'Explore',
        `claude-code:${S}`,
        'toolu_T1',
        'max-tokens',
        'claude-code:api-error:max_output_tokens',
        [5, 8002, 1000, 550],
        2,
        1,
        ['claude-code:subagent-final-usage-from-parent', 'claude-code:subagent-streaming-usage'],
      ],
      [
        `claude-code:${S}/agent-a2000002`,
        'general-purpose',
        `claude-code:${S}`,
        'toolu_T2',
        'error',
        'claude-code:api-error:rate_limit',
        [4, 96, 600, 0],
        1,
        0,
        ['claude-code:subagent-final-usage-from-parent'],
      ],
      [
        `claude-code:${S}/agent-a3000003`,
        'Explore',
        `claude-code:${S}`,
        'toolu_T3',
        'completed',
        'claude-code:task-notification:completed',
        [5, 7, 700, 10],
        1,
        0,
        ['claude-code:subagent-streaming-usage'],
      ],
      [
        `claude-code:${S}/agent-aw00001`,
        'workflow-agent',
        `claude-code:${S}`,
        'toolu_W1',
        'unknown',
        'none',
        [3, 4, 200, 0],
        1,
        0,
        ['claude-code:subagent-streaming-usage'],
      ],
      [
        `claude-code:${S}`,
        'claude-code',
        null,
        null,
        'completed',
        'claude-code:stop-hook-summary',
        [15, 201, 4800, 600],
        4,
        4,
        ['claude-code:streaming-usage'],
      ],
    ]);
    const [cut, limited, background] = records;
    expect([cut?.output, cut?.reported?.output, cut?.diagnostic]).toEqual([
      [{ type: 'text', text: 'The repository has src/ and test/ and the build' }],
      [{ type: 'text', text: 'The repository has src/ and test/ and the build' }],
      "API Error: Claude's response exceeded the 32000 output token maximum. To configure this behavior, set the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable.",
    ]);
    expect([limited?.output, limited?.diagnostic]).toEqual([
      [{ type: 'text', text: 'Report: all good.' }],
      'API Error: Rate limit reached',
    ]);
    expect(background?.reported).toBeUndefined();
    expect(
      summary.files
        .filter((f) => f.what !== undefined)
        .map((f) => [
          f.path
            .slice(SYNTHETIC.length + 1)
            .split('/')
            .pop(),
          f.what,
        ]),
    ).toEqual([
      [
        'agent-aside_question-0123456789abcdef.jsonl',
        'Claude Code /btw side question (aside_question): not a Task subagent, no run',
      ],
      ['journal.jsonl', 'Claude Code workflow journal (journal.jsonl): no run'],
      [
        'agent-a1000001.meta.json',
        'Claude Code subagent sidecar (agent type and delegating call), read with its subagent',
      ],
      [
        'agent-a3000003.meta.json',
        'Claude Code subagent sidecar (agent type and delegating call), read with its subagent',
      ],
    ]);
    expect(summary.truncationRate).toBe(0.2);
  });

  it('through the built CLI: each cut-off run span carries its diagnostic, the same text the run ends with', async () => {
    const out = join(dir, 'subagents-2.1-out');
    const r = await runCli(['replay', '--out', out, join(SYNTHETIC, 'subagents-2.1')], '', QUIET_ENV);
    expect(r.code).toBe(0);
    const S = '11111111-1111-4111-8111-111111111111';
    const runSpan = (id: string) =>
      readSpans(out).find((s) => s.name.startsWith('invoke_agent') && attributes(s)['gen_ai.agent.id'] === id);
    const cut = runSpan(`claude-code:${S}/agent-a1000001`);
    const limited = runSpan(`claude-code:${S}/agent-a2000002`);
    const fine = runSpan(`claude-code:${S}/agent-a3000003`);
    const CUT =
      "API Error: Claude's response exceeded the 32000 output token maximum. To configure this behavior, set the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable.";
    expect([cut && attributes(cut)['subagent.diagnostic'], cut?.status]).toEqual([
      CUT,
      { code: 2, message: `stop reason: max-tokens; ${CUT}` },
    ]);
    expect([limited && attributes(limited)['subagent.diagnostic'], limited?.status?.message]).toEqual([
      'API Error: Rate limit reached',
      'stop reason: error; API Error: Rate limit reached',
    ]);
    expect(fine && attributes(fine)['subagent.diagnostic']).toBeUndefined();
  });

  it('reads the sibling agent-<id>.jsonl layout (2.0.28 to 2.1.1), its Warmup sidechain not a run', async () => {
    const { records, summary } = await replay([join(SYNTHETIC, 'sibling-2.0')]);
    const S = '22222222-2222-4222-8222-222222222222';
    expect(records.map(figures)).toEqual([
      [
        `claude-code:${S}/agent-b1000001`,
        'Plan',
        `claude-code:${S}`,
        'toolu_S1',
        'completed',
        'claude-code:parent-result:completed',
        [1, 300, 2500, 20],
        1,
        0,
        ['claude-code:subagent-final-usage-from-parent'],
      ],
      [
        `claude-code:${S}`,
        'claude-code',
        null,
        null,
        'completed',
        'claude-code:stop-hook-summary',
        [6, 108, 4400, 430],
        2,
        1,
        [],
      ],
    ]);
    expect(records[1]?.output).toEqual([
      { type: 'reasoning', text: 'The plan is fine.' },
      { type: 'text', text: 'The plan: back up, then migrate.' },
    ]);
    expect(summary.files.find((f) => f.path.endsWith('agent-b9999999.jsonl'))?.what).toBe(
      'Claude Code warm-up sidechain (2.0.x "Warmup"): not a Task subagent, no run',
    );
  });

  it('reads the inline isSidechain layout (up to 2.0.27) and a session cut at its output limit', async () => {
    const { records, summary } = await replay([join(SYNTHETIC, 'inline-2.0')]);
    const S = '33333333-3333-4333-8333-333333333333';
    expect(records.map(figures)).toEqual([
      [
        `claude-code:${S}/agent-toolu_I1`,
        'general-purpose',
        `claude-code:${S}`,
        'toolu_I1',
        'completed',
        'claude-code:parent-result:returned',
        [6, 32, 200, 220],
        2,
        1,
        [],
      ],
      [
        `claude-code:${S}`,
        'claude-code',
        null,
        null,
        'max-tokens',
        'claude-code:api-error:max_output_tokens',
        [6, 51, 2300, 380],
        2,
        1,
        ['claude-code:streaming-usage'],
      ],
    ]);
    expect(records[1]?.output).toEqual([
      { type: 'text', text: 'Here is the whole config, line by line: key: value, and' },
    ]);
    expect(records[0]?.reported).toEqual({
      output: [{ type: 'text', text: 'The config is config.yaml.' }],
      compare: 'text',
    });
    expect(summary.mismatches).toBe(0);
  });
});

describe('records this reader does not know, and a subagent the user stopped (2.1.8x-2.1.9x)', () => {
  const S = '4a4a4a4a-4a4a-4a4a-8a4a-4a4a4a4a4a4a';

  it('reads a session whose line 1 is a permission-mode record, counts the unknown record type, nests its subagent', async () => {
    const { records, problems, summary } = await replay([join(SYNTHETIC, 'interrupted-2.1.97')]);
    expect(problems).toEqual([]);
    expect(summary.skipped).toEqual({ files: 0, records: 0 });
    // Figures by hand from the files (README "interrupted-2.1.97"): msg_I1 once (5 + 2000 read + 50 written, 30 out); msg_C1 once (4 + 800 read, 40 out).
    expect(records.map(figures)).toEqual([
      [
        `claude-code:${S}/agent-a4000004`,
        'general-purpose',
        `claude-code:${S}`,
        'toolu_I1',
        'aborted',
        'claude-code:parent-result:rejected',
        [4, 40, 800, 0],
        1,
        1,
        ['claude-code:subagent-streaming-usage'],
      ],
      [
        `claude-code:${S}`,
        'claude-code',
        null,
        null,
        'aborted',
        'claude-code:interrupted',
        [5, 30, 2000, 50],
        1,
        1,
        ['claude-code:streaming-usage'],
      ],
    ]);
    expect(summary.unknownRecords).toEqual({ 'claude-code future-record': 2 });
    expect(summary.files.find((f) => f.path.endsWith(`${S}.jsonl`))?.unknownRecords).toEqual({ 'future-record': 2 });
  });

  it('skips a file only when no record of its start identifies it, naming what it saw', async () => {
    const only = join(dir, 'unknown-only');
    mkdirSync(only, { recursive: true });
    writeFileSync(
      join(only, `${S}.jsonl`),
      '{"type":"permission-mode","permissionMode":"default"}\n{"type":"future-record","x":1}\n{"kind":"nothing"}\n',
    );
    const { records, problems } = await replay([only]);
    expect(records).toEqual([]);
    expect(problems.map((p) => [p.code, p.scope, p.message])).toEqual([
      [
        'unrecognized',
        'file',
        'no record of the 3 JSON line(s) read from the file\'s start is neither a session log header, a capture header, a JSON-RPC message nor a Claude Code, Codex or Gemini CLI transcript record (seen: type "permission-mode", type "future-record", an object with "kind"): not a session log, capture or transcript',
      ],
    ]);
  });

  it('through the built CLI: the stopped subagent span says aborted and the summary names the unknown type', async () => {
    const out = join(dir, 'interrupted-out');
    const r = await runCli(
      ['replay', '--no-progress', '--out', out, join(SYNTHETIC, 'interrupted-2.1.97')],
      '',
      QUIET_ENV,
    );
    expect(r.code).toBe(0);
    expect(String(r.stdout)).toContain(
      'records of types not known to this version, read past: claude-code future-record × 2',
    );
    const child = readSpans(out).find(
      (s) =>
        s.name.startsWith('invoke_agent') && attributes(s)['gen_ai.agent.id'] === `claude-code:${S}/agent-a4000004`,
    );
    expect(
      child && [
        attributes(child)['subagent.stop_reason'],
        attributes(child)['subagent.stop_reason.inferred_from'],
        child.status?.message,
      ],
    ).toEqual(['aborted', 'claude-code:parent-result:rejected', 'stop reason: aborted']);
    const json = await runCli(
      ['replay', '--json', '--out', join(dir, 'interrupted-json'), join(SYNTHETIC, 'interrupted-2.1.97')],
      '',
      QUIET_ENV,
    );
    expect((JSON.parse(String(json.stdout)) as { unknownRecords: unknown }).unknownRecords).toEqual({
      'claude-code future-record': 2,
    });
  });
});

describe('an inline sidechain after a call interrupted before it started (1.0.x)', () => {
  it('goes to the call that ran, not to the interrupted one with the same prompt', async () => {
    const { records, summary } = await replay([join(SYNTHETIC, 'inline-reissued-1.0')]);
    const S = '5b5b5b5b-5b5b-4b5b-8b5b-5b5b5b5b5b5b';
    // By hand (README "inline-reissued-1.0"): msg_S1 3 + 50 read, 9 out; msg_R1..R3 10+12+14, 100+300+400 read, 20+22+8 out.
    expect(records.map(figures)).toEqual([
      [
        `claude-code:${S}/agent-toolu_R2`,
        'subagent',
        `claude-code:${S}`,
        'toolu_R2',
        'completed',
        'claude-code:parent-result:returned',
        [3, 9, 50, 0],
        1,
        0,
        ['claude-code:subagent-final-usage-from-parent'],
      ],
      [
        `claude-code:${S}`,
        'claude-code',
        null,
        null,
        'completed',
        'claude-code:stop_reason:end_turn',
        [36, 50, 800, 0],
        3,
        2,
        ['claude-code:streaming-usage'],
      ],
    ]);
    expect(summary.mismatches).toBe(0);
  });
});

describe.runIf(HAS_REAL)('damaged Claude Code files', () => {
  it('reports bad lines with file and line and reads the rest into the same run', async () => {
    const root = join(dir, 'damaged');
    mkdirSync(root);
    const path = join(root, `${SHORT}.jsonl`);
    const lines = readFileSync(join(REAL, 'short.jsonl'), 'utf8').split('\n');
    // After line 3: a line that is not JSON, one that is not UTF-8, an unknown record type, an assistant line without content.
    writeFileSync(path, `${lines.slice(0, 3).join('\n')}\n{"type":"user",\n`);
    appendFileSync(path, Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a]));
    appendFileSync(
      path,
      `{"type":"some-future-record","uuid":"x"}\n{"type":"assistant","uuid":"y","message":{"id":"m"}}\n`,
    );
    appendFileSync(path, `${lines.slice(3).join('\n')}{"type":"user","parentUuid":"c06a9fe4","mess`);
    const { records, problems } = await replay([path]);
    expect(problems.map((p) => [p.line, p.code, p.scope])).toEqual([
      [4, 'not-json', 'record'],
      [5, 'invalid-utf8', 'record'],
      [7, 'invalid', 'record'],
      [20, 'torn-tail', 'record'],
    ]);
    expect(problems.every((p) => p.file === path)).toBe(true);
    expect(records.map(figures)).toEqual([
      [
        `claude-code:${SHORT}`,
        'claude-code',
        null,
        null,
        'aborted',
        'claude-code:interrupted',
        [3, 13, 11515, 13835],
        1,
        2,
        ['claude-code:streaming-usage'],
      ],
    ]);
  });

  it('stops reading a file after 1000 defective lines, keeping what came before', async () => {
    const root = join(dir, 'garbage');
    mkdirSync(root);
    const path = join(root, `${SHORT}.jsonl`);
    copyFileSync(join(REAL, 'short.jsonl'), path);
    appendFileSync(path, 'not json\n'.repeat(1200));
    const { records, problems } = await replay([path]);
    expect(problems.length).toBe(1001);
    expect(problems.slice(-2).map((p) => [p.line, p.code])).toEqual([
      [1015, 'not-json'],
      [1015, 'too-many-problems'],
    ]);
    expect(records.map((r) => [r.runId, r.stopReason])).toEqual([[`claude-code:${SHORT}`, 'aborted']]);
  });

  it('skips a line longer than the line limit and keeps the run', async () => {
    const root = join(dir, 'huge');
    mkdirSync(root);
    const path = join(root, `${HEAVY}.jsonl`);
    copyFileSync(join(REAL, 'tool_heavy.jsonl'), path);
    appendFileSync(path, `{"type":"user","pad":"${'x'.repeat(17 * 1024 * 1024)}"}\n`);
    const { records, problems } = await replay([path]);
    expect(problems.map((p) => [p.line, p.code])).toEqual([[40, 'oversized-line']]);
    expect(records.map((r) => [r.runId, r.steps.length, r.usage.outputTokens])).toEqual([
      [`claude-code:${HEAVY}`, 4, 212],
    ]);
  });
});

describe('classification', () => {
  const head = (path: string, firstLine: unknown, prefix = '') =>
    classifyClaudeCode({
      path,
      firstLine,
      prefix: prefix === '' && firstLine !== undefined ? JSON.stringify(firstLine) : prefix,
    });

  it('tells the prompt history, the session index and a sidecar from sessions', () => {
    expect(
      head('/h/.claude/history.jsonl', { display: '/model', pastedContents: {}, timestamp: 1, project: '/p' })?.what,
    ).toBe('Claude Code prompt history (history.jsonl): no run');
    expect(head('/p/sessions-index.json', undefined, '{\n  "version": 1,\n  "entries": [')?.what).toBe(
      'Claude Code session index (sessions-index.json): no run',
    );
    expect(head('/p/s/subagents/agent-a1.meta.json', undefined, '{\n "agentType": "Explore"\n}')).toMatchObject({
      kind: 'sidecar',
      facts: { role: 'meta', agentId: 'a1' },
    });
    expect(head('/p/s/subagents/agent-a1.meta.json', { name: 'x' })).toBeUndefined();
  });

  it('reads a first line longer than the sniff window by the envelope it begins with', () => {
    const prefix = `{"parentUuid":null,"isSidechain":true,"userType":"external","cwd":"/w","sessionId":"s-9","version":"2.1.39","agentId":"a7","type":"user","message":{"role":"user","content":"${'y'.repeat(500)}`;
    expect(head('/p/s-9/subagents/agent-a7.jsonl', undefined, prefix)).toEqual({
      format: 'claude-code',
      kind: 'session',
      facts: { role: 'child', agentId: 'a7', sessionId: 's-9' },
    });
  });

  it('groups children with their session by place, and a child without its session on its own', () => {
    const file = (path: string, facts: Record<string, string>): TranscriptFile => ({
      path,
      size: 1,
      mtimeMs: 1,
      info: { format: 'claude-code', kind: 'session', facts },
    });
    const sessions = groupClaudeCode([
      file('/p/aaa.jsonl', { role: 'main', sessionId: 'aaa' }),
      file('/p/aaa/subagents/agent-a1.jsonl', { role: 'child', agentId: 'a1', sessionId: 'aaa' }),
      file('/p/agent-b1.jsonl', { role: 'child', agentId: 'b1', sessionId: 'aaa' }),
      file('/q/zzz/subagents/agent-z1.jsonl', { role: 'child', agentId: 'z1', sessionId: 'zzz' }),
    ]);
    expect(sessions.map((s) => [s.key, s.files.map((f) => f.path)])).toEqual([
      ['claude-code:aaa', ['/p/aaa.jsonl', '/p/aaa/subagents/agent-a1.jsonl', '/p/agent-b1.jsonl']],
      ['claude-code:zzz', ['/q/zzz/subagents/agent-z1.jsonl']],
    ]);
  });
});

const fileSize = (path: string): number => statSync(path).size;

describe('live reading (watch)', () => {
  const S = '11111111-1111-4111-8111-111111111111';
  const base = join(SYNTHETIC, 'subagents-2.1', '-home-user-proj');
  const NOW = 1_800_000_000_000;
  const IDLE = 60_000;

  /** The synthetic session's files as watch would list them, the workflow agent's and the session file's quiet or not. */
  function session(quiet: { main: boolean; workflow: boolean }, listedSize: (path: string) => number = fileSize) {
    const paths = [
      join(base, `${S}.jsonl`),
      join(base, S, 'subagents', 'agent-a1000001.jsonl'),
      join(base, S, 'subagents', 'agent-a2000002.jsonl'),
      join(base, S, 'subagents', 'agent-a3000003.jsonl'),
      join(base, S, 'subagents', 'workflows', 'wf_demo01', 'agent-aw00001.jsonl'),
    ];
    const files = paths.map((path): TranscriptFile => {
      const lines = readFileSync(path, 'utf8').split('\n');
      const info = classifyClaudeCode({
        path,
        firstLine: JSON.parse(lines[0] ?? 'null') as unknown,
        prefix: lines[0] ?? '',
      });
      if (info === undefined) throw new Error(`not classified: ${path}`);
      const isQuiet = path.endsWith(`${S}.jsonl`) ? quiet.main : path.includes('wf_demo01') ? quiet.workflow : false;
      return { path, size: listedSize(path), mtimeMs: isQuiet ? NOW - 2 * IDLE : NOW - 1000, info };
    });
    const [only] = groupClaudeCode(files);
    if (only === undefined) throw new Error('no session');
    return only;
  }

  async function read(
    quiet: { main: boolean; workflow: boolean },
    reported: readonly string[] = [],
    listedSize?: (path: string) => number,
  ): Promise<string[]> {
    const ended: string[] = [];
    const live: TranscriptLive = { now: NOW, idleMs: IDLE, isReported: (id) => reported.includes(id) };
    await claudeCodeFormat.read(session(quiet, listedSize), {
      listener: {
        onRunStart: () => undefined,
        onRunEnd: (r) => ended.push(r.runId.slice(`claude-code:${S}`.length) || '(session)'),
      },
      onProblem: () => undefined,
      onBytes: () => undefined,
      pause: () => undefined,
      live,
    });
    return ended;
  }

  it('reports the subagents whose end the parent records while the session file still grows', async () => {
    expect(await read({ main: false, workflow: false })).toEqual([
      '/agent-a1000001',
      '/agent-a2000002',
      '/agent-a3000003',
    ]);
  });

  it('reports a run whose files record no end once its file is quiet, and the session once its file is', async () => {
    expect(await read({ main: false, workflow: true })).toEqual([
      '/agent-a1000001',
      '/agent-a2000002',
      '/agent-a3000003',
      '/agent-aw00001',
    ]);
    expect(await read({ main: true, workflow: false })).toEqual([
      '/agent-a1000001',
      '/agent-a2000002',
      '/agent-a3000003',
      '(session)',
    ]);
  });

  it('reads a growing file only as far as it was listed: an end the parent recorded later waits for the next pass', async () => {
    const main = join(base, `${S}.jsonl`);
    const lines = readFileSync(main, 'utf8').split('\n');
    // Lines 6 and 7 are the parent's record of the first subagent's result; list the file as it was before them.
    expect(lines[5]).toContain('a1000001');
    const before = Buffer.byteLength(lines.slice(0, 5).join('\n') + '\n');
    const ended = await read({ main: false, workflow: false }, [], (path) => (path === main ? before : fileSize(path)));
    expect(ended).not.toContain('/agent-a1000001');
    expect(await read({ main: false, workflow: false })).toContain('/agent-a1000001');
  });

  it('never reports a run twice', async () => {
    expect(await read({ main: true, workflow: true }, [`claude-code:${S}/agent-a1000001`, `claude-code:${S}`])).toEqual(
      ['/agent-a2000002', '/agent-a3000003', '/agent-aw00001'],
    );
  });
});
