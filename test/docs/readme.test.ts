import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as semconv from '../../src/telemetry/semconv.js';
import { ROOT } from '../helpers/paths.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

describe('README', () => {
  const names = Object.entries(semconv).filter(([key]) => key.startsWith('ATTR_') || key.startsWith('METRIC_'));

  it.each(names)('documents %s in a table', (_key, value) => {
    const rows = readme.split('\n').filter((line) => line.startsWith('|'));
    expect(rows.some((row) => row.includes(`\`${String(value)}\``) || row.includes(`${String(value)}\``))).toBe(true);
  });

  it('gives the two set-up commands', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm test');
  });

  it('names the collector endpoint and protocol the collector config listens on', () => {
    const endpoints = JSON.parse(readFileSync(join(ROOT, 'collector-config', 'endpoints.json'), 'utf8')) as Record<string, unknown>;
    expect(JSON.stringify(endpoints)).toContain('4318');
    expect(readme).toContain('OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318');
    expect(readme).toContain('OTEL_EXPORTER_OTLP_PROTOCOL=http/json');
  });
});
