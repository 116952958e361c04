#!/usr/bin/env node
/**
 * Regenerates the real agents' transcripts kept as test data
 * (`test/transcripts/<format>/generated/<scenario>/`): bundles
 * `test/agents/transcript-generator.ts` with esbuild next to its source (so
 * its paths from `import.meta.url` and its package imports resolve as in the
 * tests), runs every plan (or those whose `<agent>/<folder>` contains one of
 * the arguments), one at a time, and removes the bundle.
 *
 * Needs the pinned agents (`npm ci --no-audit --no-fund --prefix
 * test/agents/pinned`); no network: the agents talk to the scripted model
 * server on 127.0.0.1. `--debug DIR` writes each run's model requests there.
 *
 * Usage: node scripts/generate-agent-transcripts.mjs [--debug DIR] [filter...]
 *
 * A newer Claude Code under the pinned claude-agent-acp (to see what it
 * writes before pinning it): `CLAUDE_CODE_EXECUTABLE=<its claude binary>`,
 * e.g. from `npm install --prefix /tmp/cc @anthropic-ai/claude-agent-sdk-linux-x64@<v>`.
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let debugDir;
const filters = [];
for (let i = 0; i < args.length; i += 1) {
  if (args[i] === '--debug') debugDir = args[(i += 1)];
  else filters.push(args[i]);
}

const bundle = join(root, 'test', 'agents', `.transcript-generator.${process.pid}.bundle.mjs`);
await build({
  entryPoints: [join(root, 'test', 'agents', 'transcript-generator.ts')],
  outfile: bundle,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  packages: 'external',
  logLevel: 'warning',
});
let failed = 0;
try {
  const { PLANS, runPlan } = await import(pathToFileURL(bundle).href);
  const chosen = PLANS.filter((p) => filters.length === 0 || filters.some((f) => `${p.agent}/${p.folder}`.includes(f)));
  for (const plan of chosen) {
    const name = `${plan.agent}/${plan.folder}`;
    process.stdout.write(`${name} (${plan.scenario}) ...\n`);
    try {
      const result = await runPlan(plan, join(root, 'test', 'transcripts'), debugDir);
      process.stdout.write(`  model requests: ${result.answered.filter((a) => !a.endsWith(' side')).join(' | ')}\n`);
      process.stdout.write(`  prompt answer: ${JSON.stringify(result.turn.response ?? result.turn.error)}\n`);
      process.stdout.write(`  files: ${result.files.join(', ') || '(none)'}\n`);
      if (result.files.length === 0) failed += 1;
    } catch (error) {
      failed += 1;
      process.stdout.write(`  FAILED: ${error instanceof Error ? error.stack : String(error)}\n`);
    }
  }
} finally {
  rmSync(bundle, { force: true });
}
process.exitCode = failed === 0 ? 0 : 1;
