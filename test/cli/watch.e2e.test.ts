/**
 * `subagent-otel watch` as users run it: the built command following a
 * Claude Code projects directory while a session is written into it. The
 * session is a copy of the synthetic 2.1 session with subagents
 * (test/transcripts/claude-code/synthetic/subagents-2.1: a child cut off at
 * `max_output_tokens`, one hit by `rate_limit`, one that completed, a
 * workflow agent, and the session itself), its times moved to now. Its
 * files appear, grow, end in a half-written line, are completed; the watcher
 * is killed with SIGKILL once it has checkpointed the subagents that ended,
 * and started again: every run must reach the trace file exactly once, none
 * lost, and the watched directory must hold only what the "agent" wrote.
 *
 * Waits are on lines, files and the checkpoint, never on time; the idle
 * bound (3 s) only decides when the runs without a recorded end close.
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeClaudeHistory } from '../../bench/lib/claude-history.mjs';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { attributes, finished, readSpans, spawnCli, QUIET_ENV } from '../helpers/cli.js';
import { ROOT } from '../helpers/paths.js';

const root = mkdtempSync(join(tmpdir(), 'watch-e2e-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Every file under `dir`, relative. */
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path).map((p) => join(name, p)) : [name];
  });
}

/** Resolves once `check` returns a value (polled every 100 ms), within `ms`. */
async function until<T>(what: string, check: () => T | undefined, ms = 240_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Resolves with the first stderr line that `match`es (the watch's own lines go to stderr). */
function stderrLine(child: ChildProcessWithoutNullStreams, match: (line: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString('utf8');
      for (const line of buffered.split('\n').slice(0, -1)) {
        if (!match(line)) continue;
        child.stderr.off('data', onData);
        resolve(line);
        return;
      }
    };
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the watch exited (${String(code)}) before printing the line`)));
  });
}

describe('watch, on the built command', () => {
  // Once following the system's file notifications (the default), once listing the folders on every look (--poll).
  for (const mode of ['notifications', 'poll'] as const) {
    it(`reports every run of a session written while it runs exactly once, across a SIGKILL and a restart (${mode})`, async () => {
      const base = join(root, mode);
      mkdirSync(base);
      // The session's files, as the agent will have written them at the end; their times after the watch's
      // start (a run that ended before it is history, not reported).
      const staged = join(base, 'staged');
      writeClaudeHistory(join(ROOT, 'test', 'transcripts', 'claude-code', 'synthetic', 'subagents-2.1'), staged, {
        copies: 1,
        latestTime: Date.now() + 86_400_000,
      });
      const projects = join(base, 'projects');
      mkdirSync(projects);
      const out = join(base, 'out');
      const checkpoint = join(base, 'state', 'watch.json');
      const sources = files(join(staged, 'projects')).filter((p) => p.endsWith('.jsonl') || p.endsWith('.meta.json'));
      const text = (p: string): string => readFileSync(join(staged, 'projects', p), 'utf8');
      const put = (p: string, body: string, append = false): void => {
        const target = join(projects, p);
        mkdirSync(dirname(target), { recursive: true });
        if (append) appendFileSync(target, body);
        else writeFileSync(target, body);
      };
      const main = sources.find((p) => !p.includes('/subagents/') && p.endsWith('.jsonl'));
      expect(main).toBeDefined();
      const mainLines = text(main!).split(/(?<=\n)/);
      const firstResult = mainLines.findIndex((l) => l.includes('"toolUseResult"'));
      expect(firstResult).toBeGreaterThan(0);

      // The idle bound must outlast any stall of this test between a child's torn write and its completion: with 3 s,
      // on a machine running two suites at once, one run reported a cut child as completed, most likely closed at idle
      // as its torn file said then.
      const args = [
        'watch',
        '--interval',
        '0.2',
        '--idle',
        '10',
        ...(mode === 'poll' ? ['--poll'] : []),
        '--checkpoint',
        checkpoint,
        '--out',
        out,
        projects,
      ];
      const first = spawnCli(args, QUIET_ENV);
      const firstDone = finished(first);
      await stderrLine(first, (line) => line.includes('subagent-otel watch: following'));
      // The session begins: the main file up to its Task calls, the children with a half-written last line.
      put(main!, mainLines.slice(0, firstResult).join(''));
      for (const p of sources.filter((s) => s !== main)) {
        const body = text(p);
        put(p, p.endsWith('.jsonl') ? body.slice(0, body.length - 20) : body);
      }
      // The children finish, then the parent records their results.
      for (const p of sources.filter((s) => s !== main && s.endsWith('.jsonl'))) {
        const body = text(p);
        put(p, body.slice(body.length - 20), true);
      }
      put(main!, mainLines.slice(firstResult).join(''), true);

      // The three Task children end by the parent's results: checkpointed (hence delivered), then the watcher is killed.
      const checkpointed = await until('three runs in the checkpoint', () => {
        if (!existsSync(checkpoint)) return undefined;
        const reported = Object.keys(
          (JSON.parse(readFileSync(checkpoint, 'utf8')) as { reported: Record<string, number> }).reported,
        );
        return reported.length >= 3 ? reported : undefined;
      });
      first.kill('SIGKILL');
      const killed = await firstDone;
      expect(killed.signal).toBe('SIGKILL');
      expect(checkpointed.every((id) => id.startsWith('claude-code:'))).toBe(true);

      const second = spawnCli(args, QUIET_ENV);
      const secondDone = finished(second);
      await stderrLine(second, (line) => line.includes('resuming from'));
      const runIds = (): string[] =>
        existsSync(join(out, 'traces.jsonl'))
          ? readSpans(out)
              .filter((s) => s.name.startsWith('invoke_agent'))
              .map((s) => String(attributes(s)['subagent.run_id']))
          : [];
      // The session and its workflow agent record no end: they close once quiet for the idle bound.
      await until('all five runs in the trace file', () => (new Set(runIds()).size === 5 ? true : undefined));
      second.kill('SIGTERM');
      const stopped = await secondDone;
      expect(stopped.code, stopped.stderr.toString('utf8')).toBe(0);
      expect(stopped.stderr.toString('utf8')).toContain('subagent-otel watch: stopped after');

      const ids = runIds();
      expect(ids).toHaveLength(5);
      expect(new Set(ids).size).toBe(5);
      const spans = readSpans(out).filter((s) => s.name.startsWith('invoke_agent'));
      const byAgent = spans
        .map((s) => `${String(attributes(s)['gen_ai.agent.name'])}:${String(attributes(s)['subagent.stop_reason'])}`)
        .sort();
      expect(byAgent).toEqual([
        'Explore:completed',
        'Explore:max-tokens',
        'claude-code:completed',
        'general-purpose:error',
        'workflow-agent:unknown',
      ]);
      // Rows on stdout: what each watcher reported, together every run once.
      const rows = (b: Buffer): number =>
        b
          .toString('utf8')
          .split('\n')
          .filter((l) => /^(↳ )?\S/.test(l) && !l.startsWith('agent') && !l.startsWith('---')).length;
      expect(rows(killed.stdout) + rows(stopped.stdout)).toBe(5);
      // The agents' folder holds exactly what the agent wrote.
      expect(files(projects).sort()).toEqual([...sources].sort());
      for (const p of sources) expect(readFileSync(join(projects, p), 'utf8')).toBe(text(p));
      expect(relative(base, checkpoint).startsWith('state')).toBe(true);
    }, 300_000);
  }

  it('reports the later part of a session taken up after its idle close, its usage the rest of the whole, its subagents nested in it', async () => {
    // The synthetic 2.1 session, ids kept, its times moved to tomorrow (after the watch's start: not history).
    const source = join(ROOT, 'test', 'transcripts', 'claude-code', 'synthetic', 'subagents-2.1');
    const S = '11111111-1111-4111-8111-111111111111';
    const latest = Date.parse('2026-03-01T10:01:33.200Z');
    const shift = Date.now() + 86_400_000 - latest;
    const body = (p: string): string =>
      readFileSync(join(source, p), 'utf8').replace(
        /"timestamp":"([^"]+)"/g,
        (_all, iso: string) => `"timestamp":"${new Date(Date.parse(iso) + shift).toISOString()}"`,
      );
    const projects = join(root, 'taken-up');
    const out = join(root, 'taken-up-out');
    const checkpoint = join(root, 'state', 'taken-up.json');
    const put = (p: string, text: string, append = false): void => {
      const target = join(projects, p);
      mkdirSync(dirname(target), { recursive: true });
      if (append) appendFileSync(target, text);
      else writeFileSync(target, text);
    };
    const main = `-home-user-proj/${S}.jsonl`;
    const sub = (name: string): string => `-home-user-proj/${S}/subagents/${name}`;
    const mainLines = body(main).split(/(?<=\n)/);
    // Part one: the first call delegates T1 and T2, both answer; then the user leaves. Line 9 is the next call (T3).
    expect(mainLines[8]).toContain('"id":"msg_A2"');
    put(main, mainLines.slice(0, 8).join(''));
    for (const name of [
      'agent-a1000001.jsonl',
      'agent-a1000001.meta.json',
      'agent-a2000002.jsonl',
      'agent-aside_question-0123456789abcdef.jsonl',
    ])
      put(sub(name), body(sub(name)));

    const watching = spawnCli(
      ['watch', '--json', '--interval', '0.2', '--idle', '3', '--checkpoint', checkpoint, '--out', out, projects],
      QUIET_ENV,
    );
    const done = finished(watching);
    const rootId = `claude-code:${S}`;
    const reportedIds = (): string[] =>
      existsSync(checkpoint)
        ? Object.keys((JSON.parse(readFileSync(checkpoint, 'utf8')) as { reported: Record<string, unknown> }).reported)
        : [];
    // The session closes once quiet for the idle bound (3 s), with its two children.
    await until('the session closed at the idle bound', () => (reportedIds().includes(rootId) ? true : undefined));
    // The user comes back: T3 and the workflow run, the session answers and ends its turn.
    for (const name of [
      'agent-a3000003.meta.json',
      'agent-a3000003.jsonl',
      'workflows/wf_demo01/journal.jsonl',
      'workflows/wf_demo01/agent-aw00001.jsonl',
    ])
      put(sub(name), body(sub(name)));
    put(main, mainLines.slice(8).join(''), true);
    const runSpans = () =>
      existsSync(join(out, 'traces.jsonl')) ? readSpans(out).filter((s) => s.name.startsWith('invoke_agent')) : [];
    await until('six run spans', () => (runSpans().length >= 6 ? true : undefined));
    watching.kill('SIGTERM');
    const stopped = await done;
    expect(stopped.code, stopped.stderr.toString('utf8')).toBe(0);

    const lines = stopped.stdout
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map(
        (l) =>
          JSON.parse(l) as {
            runId: string;
            continuesRunId?: string;
            stopReason: string;
            usage: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number };
            output: unknown;
          },
      );
    const first = lines.find((l) => l.runId === rootId);
    const later = lines.find((l) => l.continuesRunId === rootId);
    const figures = (l: (typeof lines)[number] | undefined) =>
      l === undefined
        ? undefined
        : [l.usage.inputTokens, l.usage.outputTokens, l.usage.cacheReadTokens, l.usage.cacheWriteTokens];
    // msg_A1 alone (lines 3-5, one call); then msg_A2, msg_A3, msg_A4 (lines 9, 11, 14): by hand from the file.
    expect(figures(first)).toEqual([3, 120, 1000, 100]);
    expect(figures(later)).toEqual([3 + 3 + 6, 40 + 30 + 11, 1100 + 1300 + 1400, 200 + 0 + 300]);
    // Together, the session's figures as the independent count in the fixture's README has them: [15, 201, 4800, 600].
    expect([0, 1, 2, 3].map((i) => (figures(first)?.[i] ?? 0) + (figures(later)?.[i] ?? 0))).toEqual([
      15, 201, 4800, 600,
    ]);
    expect([first?.stopReason, later?.stopReason]).toEqual(['unknown', 'completed']);
    expect(later?.output).toEqual([{ type: 'text', text: 'All done: the report is ready.' }]);
    expect(later?.runId.startsWith(`${rootId}@`)).toBe(true);
    expect(lines.map((l) => l.runId).sort()).toEqual([...new Set(lines.map((l) => l.runId))].sort());
    expect(lines).toHaveLength(6);

    // One trace; T3, delegated after the session was taken up, nests under the later part's Agent tool span.
    const spans = readSpans(out);
    const span = (id: string) =>
      spans.find((s) => s.name.startsWith('invoke_agent') && attributes(s)['subagent.run_id'] === id);
    const laterSpan = span(later?.runId ?? '');
    const t3 = span(`${rootId}/agent-a3000003`);
    const t3Tool = spans.find((s) => s.spanId === t3?.parentSpanId);
    expect([t3Tool?.name, t3Tool?.parentSpanId === laterSpan?.spanId]).toEqual(['execute_tool Agent', true]);
    expect(laterSpan && attributes(laterSpan)['subagent.run.continues']).toBe(rootId);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    expect(laterSpan?.parentSpanId ?? '').toBe('');
  }, 300_000);

  it('refuses a checkpoint or an output directory inside a watched directory, and a missing directory', async () => {
    const projects = join(root, 'refuse');
    mkdirSync(projects);
    const a = await finished(spawnCli(['watch', '--checkpoint', join(projects, 'cp.json'), projects], QUIET_ENV));
    expect(a.code).toBe(2);
    expect(a.stderr.toString('utf8')).toContain('would be inside a watched directory; watch never writes there');
    const outInside = await finished(
      spawnCli(['watch', '--checkpoint', join(root, 'cp2.json'), '--out', join(projects, 'otel'), projects], QUIET_ENV),
    );
    expect(outInside.code).toBe(2);
    expect(outInside.stderr.toString('utf8')).toContain('is inside a watched directory');
    const missing = await finished(spawnCli(['watch', join(root, 'nope')], QUIET_ENV));
    expect(missing.code).toBe(2);
    expect(missing.stderr.toString('utf8')).toContain('no such directory');
    expect(readdirSync(projects)).toEqual([]);
  }, 120_000);
});
