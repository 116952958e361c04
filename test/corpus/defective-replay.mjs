/**
 * A deliberately defective `subagent-otel replay` for the corpus check's own
 * tests: runs the real built CLI with the arguments it was given, then puts
 * ONE defect into what it wrote, so a test can see the check catch it.
 * CORPUS_TEST_CLI: the real CLI. CORPUS_TEST_DEFECT: `<kind>=<target>`:
 *   skip-file=<path suffix>  the summary marks that file skipped
 *   drop-run=<run id>        that run's invoke_agent span is not written
 *   unnest=<run id>          that run's span loses its parent
 *   output=<run id>          that run's output text is replaced
 *   tokens=<run id>          that run's output tokens are one more
 *   complete=<run id>        that run's stop reason becomes completed
 *   error=<run id>           that run's stop reason becomes error
 * Usage: node defective-replay.mjs replay --json ... --out <dir> <paths...>
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [kind, target] = (process.env.CORPUS_TEST_DEFECT ?? '').split(/=(.*)/s);
const args = process.argv.slice(2);
const real = spawnSync(process.execPath, [process.env.CORPUS_TEST_CLI ?? '', ...args], {
  encoding: 'utf8',
  maxBuffer: 1 << 28,
});
if (real.error) throw real.error;
let stdout = real.stdout;

if (kind === 'skip-file') {
  const summary = JSON.parse(stdout);
  for (const f of summary.files) if (f.path.endsWith(target)) f.isSkipped = true;
  stdout = JSON.stringify(summary);
} else if (kind !== undefined && kind !== '') {
  const traces = join(args[args.indexOf('--out') + 1], 'traces.jsonl');
  const lines = readFileSync(traces, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
  const out = lines.map((line) => {
    const batch = JSON.parse(line);
    for (const rs of batch.resourceSpans) {
      for (const ss of rs.scopeSpans) {
        ss.spans = ss.spans.filter((span) => {
          const attr = (key) => span.attributes.find((a) => a.key === key);
          if (
            attr('gen_ai.agent.id')?.value.stringValue !== target ||
            attr('gen_ai.operation.name')?.value.stringValue !== 'invoke_agent'
          )
            return true;
          if (kind === 'drop-run') return false;
          if (kind === 'unnest') delete span.parentSpanId;
          if (kind === 'output')
            attr('subagent.output').value.stringValue = JSON.stringify([
              { type: 'text', text: 'not what the subagent wrote' },
            ]);
          if (kind === 'tokens')
            attr('gen_ai.usage.output_tokens').value.intValue =
              Number(attr('gen_ai.usage.output_tokens').value.intValue) + 1;
          if (kind === 'complete') attr('subagent.stop_reason').value.stringValue = 'completed';
          if (kind === 'error') attr('subagent.stop_reason').value.stringValue = 'error';
          return true;
        });
      }
    }
    return JSON.stringify(batch);
  });
  writeFileSync(traces, `${out.join('\n')}\n`);
}
process.stdout.write(stdout);
process.stderr.write(real.stderr);
process.exitCode = real.status ?? 1;
