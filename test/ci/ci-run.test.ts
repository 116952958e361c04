/**
 * `.ci/run` runs the README's test command (under the pinned Node 22 of the
 * devDependencies, whatever the machine's own Node), then the suite under
 * Node 24 and 26, the other LTS lines, from the npm registry's `node`
 * package (docs/decisions/0032), and its plain closing line counts every
 * run. Before the test command, a gate of its own: the packed command's
 * exports arrive at the project's collector (#31).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/paths.js';

const script = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');

/** What `scripts/ci-summary.mjs`, the closing program of `.ci/run`, prints when run in `dir`. */
function summary(dir: string): string[] {
  expect(script).toContain('\nnode scripts/ci-summary.mjs\n');
  const out = execFileSync(process.execPath, [join(ROOT, 'scripts', 'ci-summary.mjs')], { cwd: dir, encoding: 'utf8' });
  return out.trimEnd().split('\n');
}

/** The count line CI reads: always the summary's last line. */
function closingLine(dir: string): string {
  return summary(dir).at(-1)!;
}

describe('.ci/run', () => {
  it('runs the test command under the pinned Node, then installs Node 24 and 26 from the npm registry and runs the suite with each first on PATH', () => {
    expect(script).toContain('npm test -- --reporter=default --reporter=json --outputFile.json=.vitest-results.json');
    expect(script).toContain('for major in 24 26; do');
    expect(script).toContain('npm install --prefix "$node_dir" --no-audit --no-fund --no-save "node@$major"');
    // Not through npm: an npm script would put node_modules/.bin (the pinned Node 22) first on PATH again.
    // The stack's tests ran once in the test command: the further lines run the `suite` project only.
    expect(script).toContain(
      'PATH="$node_dir/node_modules/.bin:$PATH" node_modules/.bin/vitest run --project suite --reporter=default --reporter=json --outputFile.json="$report"',
    );
    expect(script).toContain('report=".vitest-results-node$major.json"');
  });

  it("builds or reuses the stack's engines before the test command, which runs the stack tests (on Prometheus 3) once", () => {
    expect(script.indexOf('node scripts/stack.mjs build')).toBeGreaterThan(0);
    expect(script.indexOf('node scripts/stack.mjs build')).toBeLessThan(script.indexOf('npm test --'));
    expect(script).not.toContain('test:stack');
  });

  it("builds and runs the packed command's export gate after the engines and before the test command, and fails the run when it fails", () => {
    const gate = script.indexOf(
      'npm run build --silent && node_modules/.bin/node scripts/packed-export-check.mjs || gate=$?',
    );
    expect(gate).toBeGreaterThan(script.indexOf('node scripts/stack.mjs build'));
    expect(gate).toBeLessThan(script.indexOf('npm test --'));
    expect(script).toContain('if [ "$gate" -ne 0 ]; then');
    expect(script.slice(script.indexOf('if [ "$gate" -ne 0 ]; then'))).toMatch(
      /^if \[ "\$gate" -ne 0 \]; then\n.*\n  status=1\nfi\nexit "\$status"\n$/,
    );
  });

  it('counts every run in the closing line, and each missing report as a failure', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ci-run-'));
    try {
      writeFileSync(
        join(dir, '.vitest-results.json'),
        JSON.stringify({ numPassedTests: 700, numFailedTests: 0, numPendingTests: 0 }),
      );
      expect(closingLine(dir)).toBe('700 passed, 2 failed');
      writeFileSync(
        join(dir, '.vitest-results-node24.json'),
        JSON.stringify({ numPassedTests: 698, numFailedTests: 2, numPendingTests: 1 }),
      );
      expect(closingLine(dir)).toBe('1398 passed, 3 failed, 1 skipped');
      writeFileSync(
        join(dir, '.vitest-results-node26.json'),
        JSON.stringify({ numPassedTests: 699, numFailedTests: 0, numPendingTests: 0 }),
      );
      expect(closingLine(dir)).toBe('2097 passed, 2 failed, 1 skipped');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names every failed test above the count line: Node line, file, test, first line of its error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ci-run-'));
    try {
      const failedTest = {
        fullName: 'watch reports a cut child',
        title: 'reports a cut child',
        status: 'failed',
        failureMessages: ['\u001b[31mAssertionError: expected 1 to be 2\u001b[39m\n    at watch.e2e.test.ts:10:3'],
      };
      writeFileSync(
        join(dir, '.vitest-results.json'),
        JSON.stringify({
          numPassedTests: 1,
          numFailedTests: 1,
          testResults: [
            {
              name: join(dir, 'test', 'cli', 'watch.e2e.test.ts'),
              status: 'failed',
              assertionResults: [{ fullName: 'watch passes', status: 'passed', failureMessages: [] }, failedTest],
            },
            {
              name: join(dir, 'test', 'a.test.ts'),
              status: 'failed',
              message: 'Error: Cannot find module x',
              assertionResults: [],
            },
          ],
        }),
      );
      writeFileSync(
        join(dir, '.vitest-results-node24.json'),
        '{"numPassedTests": 2, "numFailedTests": 0, "testResults": []}',
      );
      expect(summary(dir)).toEqual([
        'FAILED [node 22] test/cli/watch.e2e.test.ts > watch reports a cut child: AssertionError: expected 1 to be 2',
        'FAILED [node 22] test/a.test.ts: Error: Cannot find module x',
        "FAILED [node 26] no report .vitest-results-node26.json: the run broke before vitest finished (Error: ENOENT: no such file or directory, open '.vitest-results-node26.json')",
        '3 passed, 2 failed',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
