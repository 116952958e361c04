/**
 * The closing lines of `.ci/run`: every failed test of every run, named (file, test, Node line, the
 * first line of its error), then the plain count line CI reads, always last. Whoever sees only the
 * tail of a CI log still learns which test failed and how.
 *
 * Usage: node scripts/ci-summary.mjs  (in the project root, after the runs wrote their JSON reports)
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

/** Each run's report, named for the Node line it ran under. A missing report is one failure. */
const REPORTS = [
  ['node 22', '.vitest-results.json'],
  ['node 24', '.vitest-results-node24.json'],
  ['node 26', '.vitest-results-node26.json'],
];
const MAX_MESSAGE = 240;

/** The first non-empty line of an error text, without colour codes, at most MAX_MESSAGE characters. */
function firstLine(text) {
  const line =
    (text ?? '')
      .replace(/\u001b\[[0-9;]*m/g, '')
      .split('\n')
      .find((l) => l.trim() !== '') ?? '';
  const trimmed = line.trim();
  return trimmed.length > MAX_MESSAGE ? `${trimmed.slice(0, MAX_MESSAGE)}…` : trimmed;
}

let passed = 0;
let failed = 0;
let skipped = 0;
const lines = [];
for (const [run, file] of REPORTS) {
  let report;
  try {
    report = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    failed += 1;
    lines.push(`FAILED [${run}] no report ${file}: the run broke before vitest finished (${firstLine(String(error))})`);
    continue;
  }
  passed += report.numPassedTests ?? 0;
  failed += report.numFailedTests ?? 0;
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  for (const suite of report.testResults ?? []) {
    const name = relative(process.cwd(), suite.name ?? '?');
    const failures = (suite.assertionResults ?? []).filter((a) => a.status === 'failed');
    for (const a of failures) {
      lines.push(`FAILED [${run}] ${name} > ${a.fullName ?? a.title}: ${firstLine(a.failureMessages?.[0])}`);
    }
    // A file that failed outside its tests (an import error, a hook) has no failed test to name.
    if (suite.status === 'failed' && failures.length === 0) {
      lines.push(`FAILED [${run}] ${name}: ${firstLine(suite.message)}`);
    }
  }
}
for (const line of lines) console.log(line);
console.log(`${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ''));
