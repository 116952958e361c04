/**
 * The corpus check (`npm run corpus`, built to dist/corpus/main.js) run as
 * users run it: over the real sessions in ../shared/transcripts and over the
 * suite's synthetic sessions, where every invariant must hold and check
 * something; and over inputs made to violate each invariant, where it must
 * exit 1 naming the invariant and the run or file. Violations of what only
 * the reader decides (a file skipped, a run missing or misplaced, its tokens,
 * its stop reason) are made by a deliberately defective replay
 * (defective-replay.mjs: the real CLI, then one defect put into what it
 * wrote); violations the files themselves carry (a parent that received
 * something else than the subagent's answer, a cut report) by hand-made
 * transcripts read by the real CLI.
 */
import { cpSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Finished } from '../helpers/cli.js';
import { CLI, ROOT } from '../helpers/paths.js';
import { requireFolder, SHARED_TRANSCRIPTS, SHARED_TRANSCRIPTS_HOW } from '../helpers/required-folder.js';
import { checked, claudeAssistant, claudeLine, claudeUser, corpus, report, scratch } from './helpers.js';

const DEFECTIVE = join(ROOT, 'test', 'corpus', 'defective-replay.mjs');
const SYNTHETIC = ['claude-code', 'codex', 'gemini-cli'].map((f) => join(ROOT, 'test', 'transcripts', f, 'synthetic'));
const CLAUDE_21 = join(ROOT, 'test', 'transcripts', 'claude-code', 'synthetic', 'subagents-2.1');
const SESSION_21 = '11111111-1111-4111-8111-111111111111';

/** Every invariant held and checked at least one thing. */
function expectAllHold(done: Finished): void {
  const r = report(done);
  expect(r.violations).toEqual([]);
  expect(done.code).toBe(0);
  expect(r.rows.map((row) => row.name)).toEqual([
    'known-files-read',
    'one-run-per-file-nested',
    'output-equals-received',
    'tokens-equal-responses',
    'no-completed-after-error',
  ]);
  for (const row of r.rows) expect(row.checked, row.name).toBeGreaterThan(0);
}

describe('npm run corpus over real and synthetic sessions', () => {
  it('holds on the real sessions of ../shared/transcripts, each invariant checking something', async (context) => {
    requireFolder(context, SHARED_TRANSCRIPTS, SHARED_TRANSCRIPTS_HOW);
    expectAllHold(await corpus(['--json', SHARED_TRANSCRIPTS]));
  });

  it("holds on the suite's synthetic sessions, each invariant checking something", async () => {
    expectAllHold(await corpus(['--json', ...SYNTHETIC]));
  });

  it('holds on the sessions the real agents of today wrote here (test/transcripts/<agent>/generated)', async () => {
    expectAllHold(
      await corpus([
        '--json',
        ...['claude-code', 'codex', 'gemini-cli'].map((f) => join(ROOT, 'test', 'transcripts', f, 'generated')),
      ]),
    );
  });

  it('prints one row per invariant, and nothing else when all hold', async () => {
    const done = await corpus([CLAUDE_21]);
    const text = done.stdout.toString('utf8');
    expect(done.code).toBe(0);
    for (const name of [
      'known-files-read',
      'one-run-per-file-nested',
      'output-equals-received',
      'tokens-equal-responses',
      'no-completed-after-error',
    ]) {
      expect(text).toMatch(new RegExp(`^${name} +\\d+ +0 +\\d+$`, 'm'));
    }
    expect(text).not.toContain('violations:');
  });

  it('refuses a missing folder and an unknown option with exit code 2', async () => {
    expect((await corpus([join(ROOT, 'no-such-folder')])).code).toBe(2);
    expect((await corpus(['--frobnicate', CLAUDE_21])).code).toBe(2);
  });
});

describe('npm run corpus catches a defective replay', () => {
  const run = (agent: string): string => `claude-code:${SESSION_21}/agent-${agent}`;
  const cases: Array<{ defect: string; invariant: string; names: string; says: string }> = [
    {
      defect: 'skip-file=agent-a2000002.jsonl',
      invariant: 'known-files-read',
      names: 'agent-a2000002.jsonl',
      says: 'skipped by replay, though line 1: a Claude Code "user" record',
    },
    {
      defect: `drop-run=${run('a2000002')}`,
      invariant: 'one-run-per-file-nested',
      names: run('a2000002'),
      says: `no run ${run('a2000002')}`,
    },
    {
      defect: `unnest=${run('a1000001')}`,
      invariant: 'one-run-per-file-nested',
      names: run('a1000001'),
      says: 'expected under tool call toolu_T1',
    },
    {
      defect: `output=${run('a2000002')}`,
      invariant: 'output-equals-received',
      names: run('a2000002'),
      says: 'differ from character 0',
    },
    {
      defect: `tokens=${run('a1000001')}`,
      invariant: 'tokens-equal-responses',
      names: run('a1000001'),
      says: 'output 8003; its responses sum to',
    },
    {
      defect: `complete=${run('a2000002')}`,
      invariant: 'no-completed-after-error',
      names: run('a2000002'),
      says: 'completed (claude-code:api-error:rate_limit), though the file ends in line 3: an API error record (rate_limit)',
    },
    {
      defect: `error=${run('a1000001')}`,
      invariant: 'no-completed-after-error',
      names: run('a1000001'),
      says: 'an API error record (max_output_tokens); that says max-tokens',
    },
  ];

  it('the defective replay without a defect changes nothing: every invariant holds', async () => {
    const done = await corpus(['--json', '--cli', DEFECTIVE, CLAUDE_21], {
      CORPUS_TEST_CLI: CLI,
      CORPUS_TEST_DEFECT: '',
    });
    expect(report(done).violations).toEqual([]);
    expect(done.code).toBe(0);
  });

  for (const c of cases) {
    it(`${c.invariant}: ${c.defect.split('=')[0]} exits 1 naming ${c.names}`, async () => {
      const done = await corpus(['--cli', DEFECTIVE, CLAUDE_21], {
        CORPUS_TEST_CLI: CLI,
        CORPUS_TEST_DEFECT: c.defect,
      });
      const text = done.stdout.toString('utf8');
      expect(done.code).toBe(1);
      const line = text.split('\n').find((l) => l.startsWith(`  ${c.invariant}: `) && l.includes(c.names));
      expect(line, text).toBeDefined();
      expect(line).toContain(c.says);
      expect(text).toMatch(new RegExp(`^${c.invariant} +\\d+ +[1-9]\\d* +\\d+$`, 'm'));
    });
  }
});

const SID = '44444444-4444-4444-8444-444444444444';
const line = (
  uuid: string,
  parent: string | null,
  at: number,
  agent: string | undefined,
  extra: Record<string, unknown>,
): string => claudeLine(SID, '2.1.90', uuid, parent, at, agent, extra);

/** Writes a session whose Agent call's result carries `received`, and its subagent whose last answer is `answer`. */
function claudePair(answer: string, received: string): string {
  const dir = scratch('corpus-claude-');
  const project = join(dir, '-home-user-proj');
  mkdirSync(join(project, SID, 'subagents'), { recursive: true });
  const session = [
    line('p1', null, 0, undefined, claudeUser('Summarise the repository.')),
    line(
      'p2',
      'p1',
      1,
      undefined,
      claudeAssistant(
        'msg_P1',
        {
          type: 'tool_use',
          id: 'toolu_X1',
          name: 'Agent',
          input: { description: 'Summarise', subagent_type: 'general-purpose', prompt: 'Summarise the repository.' },
        },
        20,
      ),
    ),
    line(
      'p3',
      'p2',
      9,
      undefined,
      claudeUser(
        [
          {
            tool_use_id: 'toolu_X1',
            type: 'tool_result',
            content: [
              { type: 'text', text: received },
              {
                type: 'text',
                text: "agentId: a4000004 (for resuming to continue this agent's work if needed)\n<usage>total_tokens: 150\ntool_uses: 0\nduration_ms: 8000</usage>",
              },
            ],
          },
        ],
        {
          toolUseResult: {
            status: 'completed',
            prompt: 'Summarise the repository.',
            agentId: 'a4000004',
            content: [{ type: 'text', text: received }],
            totalDurationMs: 8000,
            totalTokens: 150,
            totalToolUseCount: 0,
          },
        },
      ),
    ),
    line('p4', 'p3', 10, undefined, claudeAssistant('msg_P2', { type: 'text', text: 'Done.' }, 5)),
    line('p5', 'p4', 11, undefined, { type: 'system', subtype: 'turn_duration', durationMs: 11000 }),
  ];
  const child = [
    line('c1', null, 2, 'a4000004', claudeUser('Summarise the repository.')),
    line('c2', 'c1', 8, 'a4000004', claudeAssistant('msg_C1', { type: 'text', text: answer }, 40)),
  ];
  writeFileSync(join(project, `${SID}.jsonl`), `${session.join('\n')}\n`);
  writeFileSync(join(project, SID, 'subagents', 'agent-a4000004.jsonl'), `${child.join('\n')}\n`);
  return dir;
}

describe('npm run corpus on what the files themselves say', () => {
  const RUN = `claude-code:${SID}/agent-a4000004`;
  const answer = Array.from({ length: 12 }, (_, i) => `Finding ${i + 1}: the module at src\\part${i}.ts is fine.`).join(
    '\n',
  );

  it('a parent that received the answer holds', async () => {
    const done = await corpus(['--json', claudePair(answer, answer)]);
    expect(report(done).violations).toEqual([]);
    expect(done.code).toBe(0);
    expect(checked(report(done), 'output-equals-received')).toBe(1);
  });

  it('a parent that received something else: named, and no violation while its span says match=false', async () => {
    const done = await corpus([claudePair(answer, 'Nothing to report.')]);
    expect(done.code).toBe(0);
    const text = done.stdout.toString('utf8');
    expect(text).toContain('differs from what the parent received, and its span says so (match false):');
    expect(text).toMatch(
      new RegExp(
        `  ${RUN.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: the output \\(${answer.length} characters\\) and what the parent received \\(18\\) differ`,
      ),
    );
  });

  it('a cut report is never equal: named with both lengths, its span saying match=false', async () => {
    const done = await corpus([claudePair(answer, answer.slice(0, 100))]);
    expect(done.code).toBe(0);
    expect(done.stdout.toString('utf8')).toContain(
      `  ${RUN}: a cut report: the parent received 100 of the output's ${answer.length} characters`,
    );
  });

  it('the altered report of 2.1.210 and later (backslashes escaped, a marker line inserted) is equal, the normalisations named', async () => {
    const lines = answer.replace(/\\/g, '\\\\').split('\n');
    const altered = [...lines.slice(0, 3), '[marker line inserted by Claude Code]', ...lines.slice(3)].join('\n');
    const done = await corpus(['--json', claudePair(answer, `${altered}  \n\n`)]);
    const r = report(done);
    expect(r.violations).toEqual([]);
    expect(done.code).toBe(0);
    expect(r.normalised).toEqual([
      {
        run: RUN,
        applied: ['backslashes escaped', 'a marker line inserted ("[marker line inserted by Claude Code]")'],
      },
    ]);
  });

  it('a Codex thread also in archived_sessions is one run, the copy not checked, not a violation', async () => {
    const dir = scratch('corpus-codex-');
    const spawnDir = join(ROOT, 'test', 'transcripts', 'codex', 'synthetic', 'spawn');
    const child = readdirSync(spawnDir).find((f) => f.endsWith('-00000000000d.jsonl')) ?? '';
    cpSync(spawnDir, join(dir, 'sessions', '2026', '04', '20'), { recursive: true });
    mkdirSync(join(dir, 'archived_sessions'));
    cpSync(join(spawnDir, child), join(dir, 'archived_sessions', child));
    const done = await corpus(['--verbose', dir]);
    const text = done.stdout.toString('utf8');
    expect(done.code).toBe(0);
    expect(text).toContain(
      `${join(dir, 'archived_sessions', child)} [codex:019d4a10-0004-7000-8000-00000000000d]: a copy of the run of ${join(dir, 'sessions', '2026', '04', '20', child)}, which replay reads instead`,
    );
    expect(text).toMatch(/^one-run-per-file-nested +4 +0 +1$/m);
  });
});
