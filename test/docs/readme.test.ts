import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as semconv from '../../src/telemetry/semconv.js';
import { ROOT } from '../helpers/paths.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const telemetryReference = readFileSync(join(ROOT, 'docs', 'TELEMETRY.md'), 'utf8');

/** Text lines of a Markdown document outside fenced code and tables, without surrounding blanks. */
function proseLines(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').flatMap((line) => {
    if (line.trimStart().startsWith('```')) fenced = !fenced;
    return fenced || line.startsWith('|') || line.startsWith('#') ? [] : [line.trim()];
  });
}

describe('README', () => {
  const names = Object.entries(semconv).filter(([key]) => key.startsWith('ATTR_') || key.startsWith('METRIC_'));

  it('stays at most 400 lines, the reference living in docs/', () => {
    const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
    expect(lines).toBeLessThanOrEqual(400);
    expect(lines).toBeGreaterThan(100);
  });

  it('keeps nothing in two places: no prose line of the README is repeated in a docs/ reference', () => {
    const docs = ['TELEMETRY.md', 'API.md', 'AGENTS.md', 'RELIABILITY.md', 'PERFORMANCE.md'].map((name) =>
      readFileSync(join(ROOT, 'docs', name), 'utf8'),
    );
    const ours = proseLines(readme).filter((line) => line.length >= 60);
    expect(ours.length).toBeGreaterThan(50);
    const repeated = ours.filter((line) => docs.some((doc) => proseLines(doc).includes(line)));
    expect(repeated).toEqual([]);
  });

  it.each(names)('documents %s in a table of docs/TELEMETRY.md', (_key, value) => {
    const rows = telemetryReference.split('\n').filter((line) => line.startsWith('|'));
    expect(rows.some((row) => row.includes(`\`${String(value)}\``) || row.includes(`${String(value)}\``))).toBe(true);
  });

  it('gives the two set-up commands', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm test');
  });

  it('names the collector endpoint and protocol the collector config listens on', () => {
    const endpoints = JSON.parse(readFileSync(join(ROOT, 'collector-config', 'endpoints.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(JSON.stringify(endpoints)).toContain('4318');
    expect(readme).toContain('OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318');
    expect(readme).toContain('OTEL_EXPORTER_OTLP_PROTOCOL=http/json');
  });
});
