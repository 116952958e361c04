/**
 * The shipped Prometheus and Alertmanager files, checked with the real tools:
 * promtool 3.16.0 (the Prometheus the stack deploys, built by
 * `npm run stack -- build`) and amtool from Debian's `prometheus-alertmanager`:
 * `promtool check config`, `promtool check rules`, `promtool test rules`
 * (the production `for`/window durations are proven here) and
 * `amtool check-config`. Also pins the committed `rules.yml` to its source,
 * `render-rules.mjs`. A missing tool fails the test with the install command.
 *
 * @module subagent-otel/test/collector-config/promtool
 */

import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PRODUCTION_SETTINGS, renderRules } from '../../collector-config/prometheus/render-rules.mjs';
import { binary } from '../../scripts/stack/engines.mjs';
import { INSTALL_HINTS, requireTool, runTool } from '../helpers/prometheus.js';

const configDir = fileURLToPath(new URL('../../collector-config/', import.meta.url));
const promDir = join(configDir, 'prometheus');

/** promtool 3 from the engine cache; a missing build fails with `npm run stack -- build`. */
const promtool = (): string => binary('promtool');
const amtool = (): string => requireTool(['amtool'], INSTALL_HINTS.amtool);

describe('rules.yml and its source', () => {
  it('the committed rules.yml is byte for byte the renderer output for the production settings', () => {
    expect(readFileSync(join(promDir, 'rules.yml'), 'utf8')).toBe(renderRules(PRODUCTION_SETTINGS));
  });

  it('the production settings are the documented thresholds and windows', () => {
    expect(PRODUCTION_SETTINGS).toEqual({
      truncationWindow: '1h',
      truncationWarningRatio: 0.1,
      truncationCriticalRatio: 0.25,
      truncationWarningFor: '15m',
      truncationCriticalFor: '5m',
      truncationMinRuns: 20,
      mismatchWindow: '15m',
      malformedWindow: '1h',
      malformedMinFrames: 10,
    });
  });

  it('short windows change only durations and recording-rule names, never the expressions', () => {
    const short = renderRules({ truncationWindow: '10s', truncationWarningFor: '3s', truncationCriticalFor: '2s' });
    expect(short).toContain('(increase(subagent_runs_total[10s]) and subagent_runs_total offset 10s)');
    expect(short).toContain('job_gen_ai_agent_name:subagent_max_tokens_truncation:ratio10s > 0.25');
    expect(short).toContain('for: 3s');
    const normalize = (text: string): string =>
      text.replace(/(ratio|increase)\d+(ms|s|m|h)\b/g, '$1W').replace(/\b\d+(ms|s|m|h|d|w|y)\b/g, 'D');
    expect(normalize(short)).toBe(normalize(renderRules()));
  });

  it('refuses settings that would render a broken or meaningless rule', () => {
    expect(() => renderRules({ truncationWindow: '10 minutes' })).toThrow(TypeError);
    expect(() => renderRules({ truncationWarningRatio: 1.5 })).toThrow(/strictly between 0 and 1/);
    expect(() => renderRules({ truncationWarningRatio: 0.3, truncationCriticalRatio: 0.25 })).toThrow(/below/);
    expect(() => renderRules({ truncationMinRuns: 0 })).toThrow(/positive integer/);
  });
});

describe('promtool and amtool on the shipped files', () => {
  it('a missing tool fails with the command that installs it', () => {
    expect(() => requireTool(['amtool-not-installed'], INSTALL_HINTS.amtool)).toThrow(
      'amtool-not-installed not found: apt-get install -y --no-install-recommends prometheus-alertmanager',
    );
  });

  it('promtool check config accepts prometheus.yml and the rule file it loads', () => {
    const r = runTool(promtool(), ['check', 'config', 'prometheus.yml'], promDir);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('SUCCESS: 1 rule files found');
    expect(r.stdout).toContain('SUCCESS: 8 rules found');
  });

  it('promtool check rules accepts the 4 recording and 4 alerting rules', () => {
    const r = runTool(promtool(), ['check', 'rules', 'rules.yml'], promDir);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('SUCCESS: 8 rules found');
  });

  it('promtool test rules passes: fires, stays quiet below the threshold and the volume, resolves', () => {
    const r = runTool(promtool(), ['test', 'rules', 'rules.test.yml'], promDir);
    expect(r.stdout + r.stderr).toContain('SUCCESS');
    expect(r.status).toBe(0);
  });

  it('the same unit tests fail against rules rendered with a lower minimum volume and a shorter for', () => {
    const dir = mkdtempSync(join(tmpdir(), 'subagent-otel-rules-'));
    try {
      copyFileSync(join(promDir, 'rules.test.yml'), join(dir, 'rules.test.yml'));
      writeFileSync(join(dir, 'rules.yml'), renderRules({ truncationMinRuns: 10, truncationCriticalFor: '4m' }));
      const r = runTool(promtool(), ['test', 'rules', 'rules.test.yml'], dir);
      expect(r.status).toBe(1);
      expect(r.stdout + r.stderr).toContain('FAILED');
      expect(r.stdout + r.stderr).toContain('alertname: SubagentMaxTokensTruncationRateHigh, time: 9m');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('promtool check rules rejects a rule whose expression does not parse', () => {
    const dir = mkdtempSync(join(tmpdir(), 'subagent-otel-rules-'));
    try {
      const broken = renderRules().replace(
        '(increase(subagent_runs_total[1h]) and subagent_runs_total offset 1h)',
        'sum by (job (',
      );
      writeFileSync(join(dir, 'rules.yml'), broken);
      const r = runTool(promtool(), ['check', 'rules', 'rules.yml'], dir);
      expect(r.status).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('amtool check-config accepts alertmanager.yml with its route, receiver and inhibit rule', () => {
    const r = runTool(amtool(), ['check-config', 'alertmanager.yml'], join(configDir, 'alertmanager'));
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('SUCCESS');
    expect(r.stdout).toContain(' - 1 inhibit rules');
    expect(r.stdout).toContain(' - 1 receivers');
  });
});
