/**
 * `subagent-otel replay --jobs` as a real process (the BUILT, bundled CLI,
 * whose worker thread is its own entry among the chunks): the real and the
 * synthetic transcripts replayed with `--jobs 1` and `--jobs 2` give the
 * same spans (ids aside: compared with each parent named by its name and
 * start, in file order) and the same summary; a bad `--jobs` is a usage
 * error that says what to give.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSpans, runCli, type OtlpSpan, QUIET_ENV } from '../helpers/cli.js';
import { ROOT } from '../helpers/paths.js';
import { requireFolder, SHARED_TRANSCRIPTS, SHARED_TRANSCRIPTS_HOW } from '../helpers/required-folder.js';

const dir = mkdtempSync(join(tmpdir(), 'replay-jobs-e2e-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Spans in file order, each without its ids, its parent named by name and start time. */
function normalized(spans: readonly OtlpSpan[]): unknown[] {
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  return spans.map(({ traceId: _trace, spanId: _span, parentSpanId, ...rest }) => {
    const parent = parentSpanId !== undefined && parentSpanId !== '' ? byId.get(parentSpanId) : undefined;
    return { ...rest, parent: parent === undefined ? null : [parent.name, parent.startTimeUnixNano] };
  });
}

/** Runs `replay --jobs <jobs> --json --out <dir>/<name> ...paths`; @returns its spans and summary (its out paths made equal). */
async function replay(name: string, jobs: string, paths: readonly string[]): Promise<[unknown[], unknown]> {
  const out = join(dir, name);
  const result = await runCli(['replay', '--jobs', jobs, '--json', '--out', out, ...paths], '', QUIET_ENV);
  expect(result.stderr.toString('utf8')).toBe('');
  expect(result.code).toBe(0);
  return [normalized(readSpans(out)), JSON.parse(result.stdout.toString('utf8').split(out).join('<out>')) as unknown];
}

describe('replay --jobs', () => {
  it('writes the same spans and summary with 1 and 2 threads, on the real and the synthetic sessions', async (context) => {
    const shared = requireFolder(context, SHARED_TRANSCRIPTS, SHARED_TRANSCRIPTS_HOW);
    const paths = [
      join(shared, 'claude-code'),
      join(shared, 'codex'),
      join(shared, 'gemini-cli'),
      join(ROOT, 'test', 'transcripts', 'claude-code', 'synthetic', 'flagged-report-2.1.318'),
    ];
    const [oneSpans, oneSummary] = await replay('one', '1', paths);
    const [twoSpans, twoSummary] = await replay('two', '2', paths);
    expect(oneSpans.length).toBeGreaterThan(50);
    expect(twoSpans).toEqual(oneSpans);
    expect(twoSummary).toEqual(oneSummary);
  });

  it.each(['0', 'abc', '-2'])('rejects --jobs %s with a usage error (exit code 2)', async (jobs) => {
    const result = await runCli(['replay', `--jobs=${jobs}`, dir], '', QUIET_ENV);
    expect(result.code).toBe(2);
    expect(result.stderr.toString('utf8')).toContain(
      `--jobs takes a number of threads from 1 to 64 (1: no worker threads), got '${jobs}'`,
    );
  });

  it('documents --jobs on its help page', async () => {
    const result = await runCli(['replay', '--help']);
    expect(result.stdout.toString('utf8')).toMatch(/--jobs <n> +threads reading transcripts/);
  });
});
