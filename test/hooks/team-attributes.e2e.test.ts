/**
 * The team attributes end to end: a Claude Code session in a git working
 * copy, replayed with SUBAGENT_OTEL_TEAM_ATTRIBUTES on and off, and `setup
 * --team` recording the switch for the watcher.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attributes, readSpans, runCli } from '../helpers/cli.js';
import { ScriptedClaudeSession } from './scripted-claude-session.js';

let root: string;
let projects: string;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'team-e2e-'));
  const work = join(root, 'widgets');
  mkdirSync(join(work, '.git'), { recursive: true });
  writeFileSync(
    join(work, '.git', 'config'),
    '[remote "origin"]\n\turl = https://alice:token@github.com/acme/widgets.git\n',
  );
  projects = join(root, 'projects');
  const session = new ScriptedClaudeSession(projects, work, () => 'true', { PATH: process.env.PATH });
  session.lineFields = { gitBranch: 'feature/limits' };
  session.prompt('Delegate.');
  await session.delegate('Count.', 'Seven files.');
  session.answer('Done.');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('team attributes', () => {
  it('are on every transcript run and its run and cost metrics when turned on, with no credential', async () => {
    const out = join(root, 'on');
    const result = await runCli(['replay', '--no-progress', '--out', out, projects], '', {
      SUBAGENT_OTEL_TEAM_ATTRIBUTES: 'true',
    });
    expect(result.code).toBe(0);
    const runs = readSpans(out).filter((span) => span.name.startsWith('invoke_agent'));
    expect(runs).toHaveLength(2);
    for (const run of runs) {
      expect(attributes(run)).toMatchObject({
        'vcs.repository.url.full': 'https://github.com/acme/widgets',
        'vcs.ref.head.name': 'feature/limits',
        'user.name': userInfo().username,
      });
    }
    const metrics = readFileSync(join(out, 'metrics.jsonl'), 'utf8');
    const traces = readFileSync(join(out, 'traces.jsonl'), 'utf8');
    for (const secret of ['alice:', ':token@']) expect(traces + metrics).not.toContain(secret);
    type Metric = { name: string; sum?: { dataPoints: Array<{ attributes: Array<{ key: string }> }> } };
    type MetricsLine = { resourceMetrics: Array<{ scopeMetrics: Array<{ metrics: Metric[] }> }> };
    const points: Metric[] = metrics
      .split('\n')
      .filter((line) => line !== '')
      .flatMap((line) =>
        (JSON.parse(line) as MetricsLine).resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics)),
      )
      .filter((metric) => metric.name === 'subagent.runs' || metric.name === 'subagent.cost.usd');
    expect([...new Set(points.map((metric) => metric.name))].sort()).toEqual(['subagent.cost.usd', 'subagent.runs']);
    for (const metric of points) {
      for (const point of metric.sum?.dataPoints ?? [])
        expect(point.attributes.map((a) => a.key)).toEqual(
          expect.arrayContaining(['vcs.repository.url.full', 'vcs.ref.head.name', 'user.name']),
        );
    }
  });

  it('are absent by default', async () => {
    const out = join(root, 'off');
    expect(
      (await runCli(['replay', '--no-progress', '--out', out, projects], '', { SUBAGENT_OTEL_TEAM_ATTRIBUTES: '' }))
        .code,
    ).toBe(0);
    const text = readFileSync(join(out, 'traces.jsonl'), 'utf8') + readFileSync(join(out, 'metrics.jsonl'), 'utf8');
    expect(text).not.toContain('vcs.');
    expect(text).not.toContain('user.name');
  });

  it('setup --team records the switch for the watcher', async () => {
    const env = {
      HOME: join(root, 'home'),
      CLAUDE_CONFIG_DIR: join(root, 'claude'),
      XDG_STATE_HOME: join(root, 'state'),
      XDG_CONFIG_HOME: join(root, 'config'),
    };
    expect((await runCli(['setup', 'claude-code', '--team'], '', env)).code).toBe(0);
    expect(
      JSON.parse(readFileSync(join(root, 'config', 'subagent-otel', 'hooks.json'), 'utf8')).env
        .SUBAGENT_OTEL_TEAM_ATTRIBUTES,
    ).toBe('true');
  });
});
