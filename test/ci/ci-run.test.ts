/**
 * `.ci/run` runs the suite under this Node, then under each Node LTS line
 * (22, 24, 26) from the npm registry's `node` package, and its plain closing
 * line counts every run.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/paths.js';

const script = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');

/** The closing-line program of `.ci/run`, run in `dir`. */
function closingLine(dir: string): string {
  const program = /node -e '\n([\s\S]*?)\n'/.exec(script)?.[1];
  expect(program, 'the node -e summary block of .ci/run').toBeDefined();
  return execFileSync(process.execPath, ['-e', program!], { cwd: dir, encoding: 'utf8' }).trim();
}

describe('.ci/run', () => {
  it('installs Node 22, 24 and 26 from the npm registry and runs the test command again with each first on PATH', () => {
    expect(script).toContain('for major in 22 24 26; do');
    expect(script).toContain('npm install --prefix "$node_dir" --no-audit --no-fund --no-save "node@$major"');
    expect(script).toContain('PATH="$node_dir/node_modules/.bin:$PATH" npm test -- --reporter=default --reporter=json --outputFile.json="$report"');
    expect(script).toContain('report=".vitest-results-node$major.json"');
  });

  it('builds or reuses the stack\'s engines first and runs the stack tests once, on Prometheus 3', () => {
    expect(script.indexOf('node scripts/stack.mjs build')).toBeLessThan(script.indexOf('npm test --'));
    expect(script).toContain('npm run test:stack -- --reporter=default --reporter=json --outputFile.json=.vitest-results-stack.json');
  });

  it('counts every run in the closing line, and each missing report as a failure', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ci-run-'));
    try {
      writeFileSync(join(dir, '.vitest-results.json'), JSON.stringify({ numPassedTests: 700, numFailedTests: 0, numPendingTests: 0 }));
      expect(closingLine(dir)).toBe('700 passed, 4 failed');
      writeFileSync(join(dir, '.vitest-results-stack.json'), JSON.stringify({ numPassedTests: 20, numFailedTests: 0, numPendingTests: 0 }));
      writeFileSync(join(dir, '.vitest-results-node22.json'), JSON.stringify({ numPassedTests: 698, numFailedTests: 2, numPendingTests: 0 }));
      writeFileSync(join(dir, '.vitest-results-node24.json'), JSON.stringify({ numPassedTests: 700, numFailedTests: 0, numPendingTests: 0 }));
      expect(closingLine(dir)).toBe('2118 passed, 3 failed');
      writeFileSync(join(dir, '.vitest-results-node26.json'), JSON.stringify({ numPassedTests: 699, numFailedTests: 0, numPendingTests: 1 }));
      expect(closingLine(dir)).toBe('2817 passed, 2 failed, 1 skipped');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
