/**
 * `replayPaths` with `jobs: 2` (transcripts read by the pool of worker
 * threads, the BUILT worker `dist/replay/replay-worker.js`) against the
 * same replay in one thread: every run, problem and progress report, in the
 * same order, and the same summary. Then workers that fail on purpose
 * (`test/helpers/faulty-replay-worker.mjs`): the failing session is reported,
 * every other session's runs stand.
 */
import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { writeClaudeHistory } from '../../bench/lib/claude-history.mjs';
import type { RunListener, RunRecord } from '../../src/observe/run-record.js';
import { replayPaths, type ReplayOptions, type ReplaySummary } from '../../src/replay/replay.js';
import { ROOT } from '../helpers/paths.js';
import { requireFolder, SHARED_TRANSCRIPTS, SHARED_TRANSCRIPTS_HOW } from '../helpers/required-folder.js';

const WORKER = pathToFileURL(join(ROOT, 'dist', 'replay', 'replay-worker.js'));
const FAULTY_WORKER = pathToFileURL(join(ROOT, 'test', 'helpers', 'faulty-replay-worker.mjs'));
const SYNTHETIC = ['claude-code', 'codex', 'gemini-cli'].map((f) => join(ROOT, 'test', 'transcripts', f, 'synthetic'));

const dir = mkdtempSync(join(tmpdir(), 'replay-parallel-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Everything a replay tells its caller, in order, and its summary. */
interface Told {
  readonly calls: unknown[];
  readonly runs: RunRecord[];
  readonly summary: ReplaySummary;
}

async function replay(paths: readonly string[], options: ReplayOptions): Promise<Told> {
  const calls: unknown[] = [];
  const runs: RunRecord[] = [];
  const listener: RunListener = {
    onRunStart: (start) => calls.push(['start', start]),
    onRunEnd: (record) => {
      calls.push(['end', record]);
      runs.push(record);
    },
    onMalformed: (origin, error) => calls.push(['malformed', origin, error]),
  };
  const summary = await replayPaths(paths, listener, {
    ...options,
    onProblem: (problem) => calls.push(['problem', problem]),
    onProgress: (progress) => calls.push(['progress', progress]),
  });
  return { calls, runs, summary };
}

describe('replay --jobs 2', () => {
  it('tells the same runs, problems and progress in the same order as one thread, on the real sessions', async (context) => {
    const shared = requireFolder(context, SHARED_TRANSCRIPTS, SHARED_TRANSCRIPTS_HOW);
    const one = await replay([shared], { jobs: 1 });
    const two = await replay([shared], { jobs: 2, workerUrl: WORKER });
    expect(one.summary.runs).toBeGreaterThan(5);
    expect(two.calls).toEqual(one.calls);
    expect(two.summary).toEqual(one.summary);
  });

  it('tells the same on the synthetic sessions of every format, problems included', async () => {
    const one = await replay(SYNTHETIC, { jobs: 1 });
    const two = await replay(SYNTHETIC, { jobs: 3, workerUrl: WORKER });
    expect(one.summary.files.length).toBeGreaterThan(10);
    expect(two.calls).toEqual(one.calls);
    expect(two.summary).toEqual(one.summary);
  });

  it('reads in this thread when the worker cannot start, losing nothing', async () => {
    const history = join(dir, 'unstartable');
    writeClaudeHistory(join(SHARED_TRANSCRIPTS, 'claude-code', 'real'), history, { copies: 2 });
    const one = await replay([history], { jobs: 1 });
    const two = await replay([history], { jobs: 2, workerUrl: pathToFileURL(join(dir, 'no-such-worker.js')) });
    expect(one.summary.runs).toBeGreaterThan(2);
    expect(two.calls).toEqual(one.calls);
  });

  it('reports a session whose worker crashed, exited or whose reader threw, and keeps every other session', async () => {
    const history = join(dir, 'faulty');
    writeClaudeHistory(join(SHARED_TRANSCRIPTS, 'claude-code', 'real'), history, { copies: 5 });
    const projects = join(history, 'projects');
    for (const [k, marker] of [
      [1, 'CRASH'],
      [2, 'EXIT'],
      [3, 'THROW'],
    ] as const)
      renameSync(join(projects, `-bench-${k}`), join(projects, `-bench-${k}-${marker}`));
    const one = await replay([history], { jobs: 1 });
    const two = await replay([history], { jobs: 2, workerUrl: FAULTY_WORKER });

    const faulty = ['-bench-1-CRASH', '-bench-2-EXIT', '-bench-3-THROW'].map((name) => join(projects, name));
    const isFaulty = (path: string): boolean => faulty.some((folder) => path.startsWith(`${folder}/`));
    // The runs one thread tells for the faulty folders alone (the copies share a few ids: compared as values).
    const runsOfFaulty = (await replay(faulty, { jobs: 1 })).runs.map((run) => JSON.stringify(run));
    const expected = one.runs.filter((run) => {
      const at = runsOfFaulty.indexOf(JSON.stringify(run));
      if (at === -1) return true;
      runsOfFaulty.splice(at, 1);
      return false;
    });

    // Every healthy session's runs and files, as one thread tells them.
    expect(runsOfFaulty).toEqual([]);
    expect(two.runs).toEqual(expected);
    expect(two.runs.length).toBeGreaterThan(0);
    expect(two.summary.files.filter((file) => !isFaulty(file.path))).toEqual(
      one.summary.files.filter((file) => !isFaulty(file.path)),
    );

    // Each faulty session's files are skipped, each with one transcript-failed problem saying why.
    const problems = two.calls.flatMap((call) => {
      const [kind, problem] = call as [string, { file: string; code: string; message: string }];
      return kind === 'problem' ? [problem] : [];
    });
    const why = (marker: string): string[] => {
      const skipped = two.summary.files.filter((file) => file.path.includes(`-${marker}/`) && file.isSkipped);
      expect(skipped.length).toBeGreaterThan(0);
      const told = problems.filter((problem) => problem.file.includes(`-${marker}/`));
      expect(told.map((problem) => problem.file).sort()).toEqual(skipped.map((file) => file.path).sort());
      return [...new Set(told.map((problem) => `${problem.code}: ${problem.message}`))];
    };
    expect(why('CRASH')).toEqual([
      'transcript-failed: the claude-code reader failed: Error: the worker crashed on purpose',
    ]);
    expect(why('EXIT')).toEqual([
      'transcript-failed: the claude-code reader failed: its worker thread exited with code 3',
    ]);
    expect(why('THROW')).toEqual([
      'transcript-failed: the claude-code reader failed: Error: the reader broke on purpose',
    ]);
  });
});
