/**
 * `subagent-otel watch` (the built command) following a Claude Code projects
 * directory into which two sessions Claude Code 2.1.318 wrote here
 * (test/transcripts/claude-code/generated/: a foreground subagent that
 * answered, a background subagent cut at its output limit) appear while it
 * runs, their times moved after the watch's start and their ids renamed
 * (bench/lib/claude-history.mjs), otherwise byte for byte. Each run must
 * reach the trace file once, with the facts the folder's README computed
 * from the raw files (the cut background subagent: max-tokens, its partial
 * answer). Waits are on files and lines, never on time; the idle bound only
 * closes the runs that record no end.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeClaudeHistory } from '../../bench/lib/claude-history.mjs';
import { attributes, finished, readSpans, spawnCli, type OtlpSpan, QUIET_ENV } from '../helpers/cli.js';
import { ROOT } from '../helpers/paths.js';

const root = mkdtempSync(join(tmpdir(), 'generated-watch-e2e-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
/** The one project folder (`-tmp-real-agent-claude-…-work`) of a generated Claude Code scenario. */
function projectOf(scenario: string): string {
  const dir = join(ROOT, 'test', 'transcripts', 'claude-code', 'generated', scenario);
  if (!existsSync(dir))
    throw new Error(
      `${dir} is missing: it is committed test data (regenerate with 'node scripts/generate-agent-transcripts.mjs claude/')`,
    );
  const [project] = readdirSync(dir).filter((name) => name.startsWith('-'));
  if (project === undefined) throw new Error(`${dir}: no project folder`);
  return join(dir, project);
}

/** Session and subagent run ids of a staged copy, from its file names. */
function idsOf(projectsDir: string): { session: string; child: string } {
  const files = readdirSync(projectsDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  const session = files.map((e) => /^([0-9a-f-]{36})\.jsonl$/.exec(e.name)?.[1]).find((s) => s !== undefined);
  const agent = files.map((e) => /^agent-([0-9a-z]+)\.jsonl$/.exec(e.name)?.[1]).find((s) => s !== undefined);
  if (session === undefined || agent === undefined) throw new Error(`${projectsDir}: no session or subagent file`);
  return { session: `claude-code:${session}`, child: `claude-code:${session}/agent-${agent}` };
}

async function until<T>(what: string, check: () => T | undefined, ms = 240_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function run(
  spans: readonly OtlpSpan[],
  runId: string,
): { stopReason: unknown; output: string; input: unknown; outputTokens: unknown } | undefined {
  const span = spans.find((s) => s.name.startsWith('invoke_agent') && attributes(s)['subagent.run_id'] === runId);
  if (span === undefined) return undefined;
  const a = attributes(span);
  const parts =
    typeof a['subagent.output'] === 'string'
      ? (JSON.parse(a['subagent.output']) as Array<{ type: string; text?: string }>)
      : [];
  return {
    stopReason: a['subagent.stop_reason'],
    output: parts
      .filter((p) => p.type === 'text')
      .map((p) => p.text ?? '')
      .join(''),
    input: a['gen_ai.usage.input_tokens'],
    outputTokens: a['gen_ai.usage.output_tokens'],
  };
}

describe('watch on sessions Claude Code 2.1.318 wrote here', () => {
  it('reports the foreground subagent, the cut background subagent and both sessions once each, with the README facts', async () => {
    const latestTime = Date.now() + 86_400_000;
    const staged = { foreground: join(root, 'staged-fg'), cut: join(root, 'staged-cut') };
    writeClaudeHistory(projectOf('foreground'), staged.foreground, { copies: 1, latestTime });
    writeClaudeHistory(projectOf('background-cut'), staged.cut, { copies: 1, latestTime });
    const ids = { foreground: idsOf(join(staged.foreground, 'projects')), cut: idsOf(join(staged.cut, 'projects')) };

    const projects = join(root, 'projects');
    mkdirSync(projects);
    const out = join(root, 'out');
    const child = spawnCli(
      [
        'watch',
        '--interval',
        '0.2',
        '--idle',
        '3',
        '--checkpoint',
        join(root, 'state', 'watch.json'),
        '--out',
        out,
        projects,
      ],
      QUIET_ENV,
    );
    const done = finished(child);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    await until('the watch to follow the folder', () =>
      stderr.includes('subagent-otel watch: following') ? true : undefined,
    );
    cpSync(join(staged.foreground, 'projects', '-bench-0'), join(projects, '-gen-fg'), { recursive: true });
    cpSync(join(staged.cut, 'projects', '-bench-0'), join(projects, '-gen-cut'), { recursive: true });

    const runIds = (): string[] =>
      existsSync(join(out, 'traces.jsonl'))
        ? readSpans(out)
            .filter((s) => s.name.startsWith('invoke_agent'))
            .map((s) => String(attributes(s)['subagent.run_id']))
        : [];
    await until('four runs in the trace file', () => (new Set(runIds()).size >= 4 ? true : undefined));
    child.kill('SIGTERM');
    const stopped = await done;
    expect(stopped.code, stderr).toBe(0);

    const ids4 = runIds();
    expect(ids4.sort()).toEqual([ids.foreground.session, ids.foreground.child, ids.cut.session, ids.cut.child].sort());
    const spans = readSpans(out);
    expect(run(spans, ids.foreground.child)).toEqual({
      stopReason: 'completed',
      output: 'The subagent found 7 files.',
      input: 1000,
      outputTokens: 11,
    });
    expect(run(spans, ids.foreground.session)).toEqual({
      stopReason: 'completed',
      output: 'The subagent reported back.',
      input: 2800,
      outputTokens: 34,
    });
    expect(run(spans, ids.cut.session)).toEqual({
      stopReason: 'completed',
      output: 'The subagent reported back.',
      input: 4200,
      outputTokens: 51,
    });
    expect(run(spans, ids.cut.child)).toEqual({
      stopReason: 'max-tokens',
      output: 'Here is the first part of a long',
      input: 4000,
      outputTokens: 44,
    });
  }, 300_000);
});
