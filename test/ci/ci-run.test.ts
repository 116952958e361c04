/**
 * `.ci/run` runs the suite twice (this Node, then Node 22 LTS from the npm
 * registry's `node` package) and its plain closing line counts both runs.
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
  it('installs Node 22 from the npm registry and runs the test command again with it first on PATH', () => {
    expect(script).toContain('npm install --prefix "$node22_dir" --no-audit --no-fund --no-save node@22');
    expect(script).toContain('PATH="$node22_dir/node_modules/.bin:$PATH" npm test -- --reporter=default --reporter=json --outputFile.json=.vitest-results-node22.json');
  });

  it('counts both runs in the closing line, and a missing report as a failure', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ci-run-'));
    try {
      writeFileSync(join(dir, '.vitest-results.json'), JSON.stringify({ numPassedTests: 700, numFailedTests: 0, numPendingTests: 0 }));
      expect(closingLine(dir)).toBe('700 passed, 1 failed');
      writeFileSync(join(dir, '.vitest-results-node22.json'), JSON.stringify({ numPassedTests: 698, numFailedTests: 2, numPendingTests: 0 }));
      expect(closingLine(dir)).toBe('1398 passed, 2 failed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
