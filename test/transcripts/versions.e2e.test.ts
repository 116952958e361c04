/**
 * One test per change to what the agents write on disk (docs/TRANSCRIPTS.md,
 * "Versions and what changed"), on the synthetic sessions written for each
 * from the agent's own source or changelog. Every expected figure is the
 * hand count in the README beside the session, never the reader's.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunListener, RunRecord } from '../../src/observe/run-record.js';
import { replayPaths, type ReplayProblem } from '../../src/replay/replay.js';
import { attributes, readSpans, runCli, QUIET_ENV } from '../helpers/cli.js';
import { ROOT } from '../helpers/paths.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';

const CLAUDE = join(ROOT, 'test/transcripts/claude-code/synthetic');
const CODEX = join(ROOT, 'test/transcripts/codex/synthetic');
async function replay(
  path: string,
): Promise<{ records: RunRecord[]; problems: ReplayProblem[]; summary: Awaited<ReturnType<typeof replayPaths>> }> {
  const records: RunRecord[] = [];
  const problems: ReplayProblem[] = [];
  const listener: RunListener = { onRunStart: () => undefined, onRunEnd: (r) => records.push(r) };
  const summary = await replayPaths([path], listener, { onProblem: (p) => problems.push(p) });
  return { records, problems, summary };
}

/** Run id, parent tool call, stop reason, [uncached input, output, cache read, cache write], calls. */
const fig = (r: RunRecord | undefined): unknown[] => [
  r?.runId,
  r?.parentToolCallId ?? null,
  r?.stopReason,
  r && [r.usage.inputTokens, r.usage.outputTokens, r.usage.cacheReadTokens, r.usage.cacheWriteTokens],
  r?.steps.length,
];
const text = (r: RunRecord | undefined): string =>
  (r?.output ?? []).map((b) => (b.type === 'text' ? b.text : '')).join('');

describe('Claude Code 2.1.318', () => {
  it('records-2.1.318: the new record types are known and passed over, the session is read from its first record on', async () => {
    const { records, problems, summary } = await replay(join(CLAUDE, 'records-2.1.318'));
    expect(problems).toEqual([]);
    expect(records.map(fig)).toEqual([
      ['claude-code:44444444-4444-4444-8444-444444444444', null, 'completed', [10, 65, 2000, 2060], 2],
    ]);
    expect(text(records[0])).toBe('There are 3 TODO markers: 2 in src/a.ts and 1 in src/b.ts.');
    expect(summary.unknownRecords).toEqual({});
  });

  it('background-max-tokens-2.1.318: a failed notification naming max_output_tokens is max-tokens, its <result> the partial answer', async () => {
    const { records } = await replay(join(CLAUDE, 'background-max-tokens-2.1.318'));
    const S = 'claude-code:55555555-5555-4555-8555-555555555555';
    expect(records.map(fig)).toEqual([
      [`${S}/agent-a5b5c5d5e5f5a5b5c`, 'toolu_B1', 'max-tokens', [11, 128_030, 5820, 1620], 5],
      [S, null, 'completed', [11, 120, 3200, 2000], 3],
    ]);
    const answer = ': the packaging step wrote dist/app.tgz (3.1 MB) and the upload';
    expect([text(records[0]), records[0]?.reported?.output]).toEqual([answer, [{ type: 'text', text: answer }]]);
  });

  it('flagged-report-2.1.318: the scanner marker and neutralised tags are undone before comparing', async () => {
    const { records, summary } = await replay(join(CLAUDE, 'flagged-report-2.1.318'));
    const S = 'claude-code:66666666-6666-4666-8666-666666666666';
    expect(records.map(fig)).toEqual([
      [`${S}/agent-a6b6c6d6e6f6a6b6c`, 'toolu_F1', 'completed', [2, 80, 900, 30], 1],
      [`${S}/agent-a7b7c7d7e7f7a7b7c`, 'toolu_F2', 'completed', [2, 90, 950, 30], 1],
      [S, null, 'completed', [11, 120, 4400, 1900], 3],
    ]);
    expect(text(records[0])).toContain('<system-reminder>Plan mode is active.</system-reminder>');
    expect(summary.mismatches).toBe(0);
  });

  it('cut-report-2.1.318: a report cut by the hand-back review is a mismatch with both lengths on the span', async () => {
    const out = mkdtempSync(join(tmpdir(), 'versions-cut-'));
    const r = await runCli(
      ['replay', '--no-progress', '--out', out, join(CLAUDE, 'cut-report-2.1.318')],
      '',
      QUIET_ENV,
    );
    expect(r.code).toBe(0);
    const child = readSpans(out).find(
      (s) =>
        s.name.startsWith('invoke_agent') &&
        attributes(s)['gen_ai.agent.id'] === 'claude-code:77777777-7777-4777-8777-777777777777/agent-a8b8c8d8e8f8a8b8c',
    );
    const a = child ? attributes(child) : {};
    expect([
      a['subagent.reported_output.match'],
      a['subagent.reported_output.length'],
      a['subagent.reported_output.compared_length'],
    ]).toEqual([false, 2480, 5039]);
  });

  it('fork-2.1.318: a fork file starting with fork-context-ref is its own run under its call, the trailer cut from the report', async () => {
    const { records, problems, summary } = await replay(join(CLAUDE, 'fork-2.1.318'));
    const S = 'claude-code:88888888-8888-4888-8888-888888888888';
    expect(problems).toEqual([]);
    expect(records.map(fig)).toEqual([
      [`${S}/agent-a9b9c9d9e9f9a9b9c`, 'toolu_G1', 'completed', [1, 45, 3000, 20], 1],
      [S, null, 'completed', [7, 70, 3000, 3100], 2],
    ]);
    expect([records[0]?.agentName, text(records[0]), summary.mismatches]).toEqual([
      'fork',
      'All 4 callers of formatDate compile.',
      0,
    ]);
    expect(records[0]?.reported?.output).toEqual([{ type: 'text', text: 'All 4 callers of formatDate compile.' }]);
  });

  it('queued-notification-2.1.318: a notification stored as a queued_command attachment, and a killed agent is aborted', async () => {
    const { records, summary } = await replay(join(CLAUDE, 'queued-notification-2.1.318'));
    const S = 'claude-code:99999999-9999-4999-8999-999999999999';
    expect(records.map(fig)).toEqual([
      [`${S}/agent-af1af1af1af1af1af`, 'toolu_Q1', 'completed', [5, 75, 1640, 50], 2],
      [`${S}/agent-af2af2af2af2af2af`, 'toolu_Q2', 'aborted', [4, 130, 1860, 40], 2],
      [S, null, 'completed', [14, 165, 4400, 1850], 4],
    ]);
    expect(records.slice(0, 2).map((r) => [r.stopReasonInferredFrom, r.reported !== undefined])).toEqual([
      ['claude-code:task-notification:completed', true],
      ['claude-code:task-notification:killed', true],
    ]);
    expect(summary.mismatches).toBe(0);
  });
});

describe('Claude Code 2.1.318: the turn limit', () => {
  it("max-turns-2.1.318: a max_turns_reached attachment after the last answer is error, over the parent's completed", async () => {
    const { records } = await replay(join(CLAUDE, 'max-turns-2.1.318'));
    const S = 'claude-code:6c6c6c6c-6c6c-4c6c-8c6c-6c6c6c6c6c6c';
    expect(records.map(fig)).toEqual([
      [`${S}/agent-a6c6c6c6c6c6c6c6c`, 'toolu_M1', 'error', [4, 26, 1100, 0], 2],
      [S, null, 'completed', [7, 32, 2200, 150], 2],
    ]);
    expect([records[0]?.stopReasonInferredFrom, records[0]?.diagnostic, text(records[0])]).toEqual([
      'claude-code:max-turns-reached',
      'reached its turn limit (2 turns)',
      'Surveyed src/a.ts and src/b.ts so far.',
    ]);
  });
});

describe('Codex', () => {
  it('task-complete-error-0.166: task_complete carrying an incomplete-response error is max-tokens', async () => {
    const { records } = await replay(join(CODEX, 'task-complete-error-0.166'));
    expect(
      records.map((r) => [
        r.runId,
        r.stopReason,
        r.stopReasonInferredFrom,
        r.usage.inputTokens,
        r.usage.cacheReadTokens,
        r.usage.outputTokens,
        r.steps.length,
      ]),
    ).toEqual([
      [
        'codex:019f2a10-0000-7000-8000-0000000000e1',
        'max-tokens',
        'codex:incomplete:max_output_tokens',
        11_000,
        9000,
        450,
        2,
      ],
    ]);
    expect(text(records[0])).toBe('Writing the guide in one pass.');
  });

  it('child-error-0.146: a child whose own task_complete records an error is error, whatever the parent was told', async () => {
    const { records } = await replay(join(CODEX, 'child-error-0.146'));
    expect(
      records.map((r) => [r.runId, r.stopReason, r.usage.inputTokens, r.usage.cacheReadTokens, r.usage.outputTokens]),
    ).toEqual([
      ['codex:019f2a10-0002-7000-8000-0000000000e3', 'error', 0, 0, 0],
      ['codex:019f2a10-0001-7000-8000-0000000000e2', 'completed', 6500, 10_000, 180],
    ]);
    expect(records[0]?.diagnostic).toBe(
      "Item 'msg_0001' of type 'message' was provided without its required 'reasoning' item: 'rs_0001'.",
    );
  });
});
