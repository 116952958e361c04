/**
 * Facts the README and the telemetry reference state that code decides: the
 * finish reasons listed, no example that runs an unpublished name through
 * npx, and what the proxy section says about stderr and `check`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as semconv from '../src/telemetry/semconv.js';
import { ROOT } from './helpers/paths.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const telemetryReference = readFileSync(join(ROOT, 'docs', 'TELEMETRY.md'), 'utf8');

/** Fenced code of every Markdown file in the repository (not node_modules, dist). */
function codeBlocks(): Array<{ file: string; code: string }> {
  const out: Array<{ file: string; code: string }> = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      if (['node_modules', 'dist', '.git'].includes(name)) continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.md')) {
        for (const m of readFileSync(path, 'utf8').matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm))
          out.push({ file: path.slice(ROOT.length + 1), code: m[1] ?? '' });
      }
    }
  };
  walk(ROOT);
  return out;
}

describe('README facts', () => {
  it('lists every finish reason the spans can carry', () => {
    const row = telemetryReference.split('\n').find((l) => l.startsWith('| `gen_ai.response.finish_reasons`'));
    const values = Object.entries(semconv)
      .filter(([key]) => key.startsWith('FINISH_REASON_VALUE_'))
      .map(([, value]) => String(value));
    expect(values).toContain('tool_call');
    for (const value of values) expect(row, value).toContain(`\`${value}\``);
  });

  it('runs no unpublished package through npx in any example', () => {
    const offending = codeBlocks().filter(({ code }) => /\bnpx\s+subagent-otel\b|"command":\s*"npx"/.test(code));
    expect(offending.map((b) => b.file)).toEqual([]);
  });

  it('says what the proxy prints on stderr and points to check and SUBAGENT_OTEL_LOG_FILE', () => {
    const proxy = readme.slice(readme.indexOf('### Zero code: the stdio proxy'), readme.indexOf('### Backends'));
    expect(proxy).not.toMatch(/prints\s+nothing\s+of\s+its\s+own\s+\(/);
    expect(proxy).toContain('subagent-otel check');
    expect(proxy).toContain('SUBAGENT_OTEL_LOG_FILE');
    expect(proxy).toContain('OTEL_TRACES_EXPORTER=console');
  });

  it('names the package a release publishes under', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      name: string;
      bin: Record<string, string>;
    };
    expect(pkg.name).toBe('subagent-otel');
    expect(Object.keys(pkg.bin)).toEqual(['subagent-otel']);
    expect(readme.replace(/\s+/g, ' ')).toContain('a release will be published as **`subagent-otel`**');
  });
});
