/**
 * `npm run corpus -- [--json] <dir...>`: the corpus check as a command.
 * Prints one row per invariant (what it checked, its violations, what it
 * could not check), then each violation naming its file and run; with
 * `--json`, the whole report as one JSON document. Exit code 0 when every
 * invariant holds, 1 on any violation, 2 on a usage error or when replay
 * could not run.
 *
 * @module subagent-otel/corpus/main
 */
import { existsSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';
import { checkCorpus, CheckError, type CheckResult } from './check.js';

const USAGE = `Usage: npm run corpus -- [--json] [--verbose] [--cli <file>] <file-or-directory...>

Replays every transcript under the folders with the built subagent-otel CLI and checks,
without expected values, that replay agrees with the files (docs/TRANSCRIPTS.md, "The corpus check").
  --json      the report as one JSON document on stdout
  --verbose   also list what could not be checked, and why
  --cli <f>   the subagent-otel CLI whose replay is checked (default: the built dist/cli/subagent-otel.js)
Exit code 0: every invariant holds; 1: a violation; 2: usage error or replay could not run.
`;

function table(result: CheckResult, verbose: boolean): string {
  const rel = (p: string): string => {
    const r = relative(process.cwd(), p);
    return r === '' || r.startsWith('..') || isAbsolute(r) ? p : r;
  };
  const lines: string[] = [];
  lines.push(`corpus: ${result.paths.map(rel).join(' ')}: ${result.files} files, ${result.runs} runs`);
  const width = Math.max(...result.rows.map((r) => r.name.length));
  lines.push(`${'invariant'.padEnd(width)}  checked  violations  not checked`);
  for (const r of result.rows)
    lines.push(
      `${r.name.padEnd(width)}  ${String(r.checked).padStart(7)}  ${String(r.violations).padStart(10)}  ${String(r.notChecked).padStart(11)}`,
    );
  if (result.violations.length > 0) {
    lines.push('', 'violations:');
    for (const v of result.violations)
      lines.push(`  ${v.invariant}: ${rel(v.file)}${v.run !== undefined ? ` [${v.run}]` : ''}: ${v.message}`);
  }
  if (result.differing.length > 0) {
    lines.push('', 'differs from what the parent received, and its span says so (match false):');
    for (const d of result.differing) lines.push(`  ${d.run}: ${d.detail}`);
  }
  if (result.normalised.length > 0) {
    lines.push('', 'equal after a listed normalisation:');
    for (const n of result.normalised) lines.push(`  ${n.run}: ${n.applied.join('; ')}`);
  }
  if (verbose && result.notChecked.length > 0) {
    lines.push('', 'not checked:');
    for (const n of result.notChecked)
      lines.push(`  ${n.invariant}: ${rel(n.file)}${n.run !== undefined ? ` [${n.run}]` : ''}: ${n.why}`);
  }
  return `${lines.join('\n')}\n`;
}

async function main(args: readonly string[]): Promise<number> {
  const argv = [...args];
  const at = argv.indexOf('--cli');
  const cli = at === -1 ? undefined : argv.splice(at, 2)[1];
  const flags = new Set(argv.filter((a) => a.startsWith('--')));
  const paths = argv.filter((a) => !a.startsWith('--'));
  const unknown = [...flags].filter((f) => f !== '--json' && f !== '--verbose' && f !== '--help');
  if (at !== -1 && (cli === undefined || !existsSync(cli))) {
    process.stderr.write(
      `corpus: --cli needs an existing file${cli !== undefined ? ` (${cli} does not exist)` : ''}\n${USAGE}`,
    );
    return 2;
  }
  if (flags.has('--help')) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (unknown.length > 0 || paths.length === 0) {
    process.stderr.write(
      `${unknown.length > 0 ? `corpus: unknown option ${unknown.join(', ')}\n` : 'corpus: name at least one file or directory\n'}${USAGE}`,
    );
    return 2;
  }
  const missing = paths.filter((p) => !existsSync(p));
  if (missing.length > 0) {
    process.stderr.write(`corpus: no such file or directory: ${missing.join(', ')}\n`);
    return 2;
  }
  let result: CheckResult;
  try {
    result = await checkCorpus(paths, cli !== undefined ? { cli } : {});
  } catch (error) {
    if (!(error instanceof CheckError)) throw error;
    process.stderr.write(`corpus: ${error.message}\n`);
    return 2;
  }
  process.stdout.write(
    flags.has('--json') ? `${JSON.stringify(result, null, 2)}\n` : table(result, flags.has('--verbose')),
  );
  return result.violations.length > 0 ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
