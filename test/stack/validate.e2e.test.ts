/**
 * Every shipped config on the real engines: the project's collector
 * distribution (`subagent-otelcol validate`), Jaeger 2.13.0 (`jaeger
 * validate`) and promtool 3.16.0 (`check config`, `check rules`, `test
 * rules`), all built from Go modules by `npm run stack -- build`. Also proves
 * the decoder is strict enough to have caught the old agent config (a number
 * where the load-balancing resolver wants a string).
 *
 * @module subagent-otel/test/stack/validate.e2e
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_DIR, runEngine } from './engines.js';

const PROM_DIR = join(CONFIG_DIR, 'prometheus');
const COLLECTOR_CONFIGS = ['otelcol.yaml', 'otelcol.agent.yaml', 'otelcol.gateway.yaml'] as const;

/** Loopback addresses as scripts/stack.mjs sets them (any free ports would do for validate). */
const LOOPBACK_ENV = {
  STACK_OTLP_GRPC_ENDPOINT: '127.0.0.1:24317',
  STACK_OTLP_HTTP_ENDPOINT: '127.0.0.1:24318',
  STACK_HEALTH_CHECK_ENDPOINT: '127.0.0.1:23133',
  STACK_PROMETHEUS_EXPORTER_ENDPOINT: '127.0.0.1:28889',
  STACK_TELEMETRY_HOST: '127.0.0.1',
  STACK_TELEMETRY_PORT: '28888',
  STACK_JAEGER_OTLP_ENDPOINT: '127.0.0.1:34317',
  STACK_GATEWAY_1_ENDPOINT: '127.0.0.1:44317',
  STACK_GATEWAY_2_ENDPOINT: '127.0.0.1:54317',
};

function withTempFile<T>(name: string, text: string, use: (path: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'subagent-otel-validate-'));
  try {
    const path = join(dir, name);
    writeFileSync(path, text);
    return use(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the collector distribution (subagent-otelcol)', () => {
  it('is the core/contrib release the compose file pins', () => {
    const r = runEngine('subagent-otelcol', ['--version']);
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe('subagent-otelcol version 0.161.0');
    const compose = parse(readFileSync(join(CONFIG_DIR, 'docker-compose.yml'), 'utf8')) as {
      services: Record<string, { image?: string }>;
    };
    for (const name of ['otel-collector', 'otel-agent', 'otel-gateway-1', 'otel-gateway-2']) {
      expect(compose.services[name]?.image).toBe('otel/opentelemetry-collector-contrib:0.161.0');
    }
  });

  it.each(COLLECTOR_CONFIGS)('accepts %s with the compose defaults of its ${env:...} addresses', (file) => {
    const r = runEngine('subagent-otelcol', ['validate', `--config=${file}`]);
    expect(r.stderr).not.toMatch(/error|deprecated/i);
    expect(r.status).toBe(0);
  });

  it.each(COLLECTOR_CONFIGS)('accepts %s with loopback addresses from the environment', (file) => {
    const r = runEngine('subagent-otelcol', ['validate', `--config=${file}`], { env: LOOPBACK_ENV });
    expect(r.status).toBe(0);
  });

  it('merges the file overlay into the single-tier config; only its receiver type is missing from this distribution', () => {
    const r = runEngine('subagent-otelcol', ['validate', '--config=otelcol.yaml', '--config=otelcol.files.yaml']);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('otlp_json_file');
    expect(r.stderr).toMatch(/unknown type/);
  });

  it('refuses a number where the load-balancing resolver wants a string (the agent config that could not start)', () => {
    const agent = readFileSync(join(CONFIG_DIR, 'otelcol.agent.yaml'), 'utf8');
    const broken = agent.replace(
      /static:\n\s+hostnames:\n\s+- \$\{env:STACK_GATEWAY_1_ENDPOINT:-otel-gateway-1:4317\}\n\s+- \$\{env:STACK_GATEWAY_2_ENDPOINT:-otel-gateway-2:4317\}/,
      'dns:\n        hostname: otel-gateway\n        port: 4317',
    );
    expect(broken).not.toBe(agent);
    withTempFile('agent.yaml', broken, (path) => {
      const r = runEngine('subagent-otelcol', ['validate', `--config=${path}`]);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain("'port' expected type 'string'");
    });
  });

  it('refuses a component type it does not include', () => {
    const single = readFileSync(join(CONFIG_DIR, 'otelcol.yaml'), 'utf8');
    withTempFile(
      'debug.yaml',
      single.replace('exporters: [prometheus]', 'exporters: [prometheus, debug]') + '\n',
      (path) => {
        const r = runEngine('subagent-otelcol', ['validate', `--config=${path}`]);
        expect(r.status).not.toBe(0);
        expect(r.stderr).toContain('debug');
      },
    );
  });
});

describe('Jaeger 2.13.0 (jaeger)', () => {
  it('accepts jaeger.yaml with the compose defaults and with loopback addresses', () => {
    expect(runEngine('jaeger', ['validate', '--config=jaeger.yaml']).status).toBe(0);
    const r = runEngine('jaeger', ['validate', '--config=jaeger.yaml'], {
      env: { JAEGER_OTLP_GRPC_ENDPOINT: '127.0.0.1:34317', JAEGER_QUERY_HTTP_ENDPOINT: '127.0.0.1:36686' },
    });
    expect(r.status).toBe(0);
  });

  it('listens on none of the ports a collector on the same host uses by default', () => {
    const text = readFileSync(join(CONFIG_DIR, 'jaeger.yaml'), 'utf8');
    const defaults = [...text.matchAll(/\$\{env:JAEGER_[A-Z_]+:-(?:[0-9.]+:)?(\d+)\}/g)].map((m) => Number(m[1]));
    expect(defaults.sort((a, b) => a - b)).toEqual([8887, 13134, 14317, 16685, 16686, 100000].sort((a, b) => a - b));
    for (const collectorPort of [4317, 4318, 8888, 8889, 13133]) expect(defaults).not.toContain(collectorPort);
  });
});

describe('promtool 3.16.0 on the shipped Prometheus files', () => {
  it('is Prometheus 3', () => {
    const r = runEngine('promtool', ['--version']);
    expect(r.stdout + r.stderr).toMatch(/promtool, version 3\.16\.0/);
  });

  it('check config accepts prometheus.yml and the rule file it loads', () => {
    const r = runEngine('promtool', ['check', 'config', 'prometheus.yml'], { cwd: PROM_DIR });
    expect(r.stdout + r.stderr).toContain('SUCCESS: 1 rule files found');
    expect(r.status).toBe(0);
  });

  it('check rules accepts the 4 recording and 4 alerting rules', () => {
    const r = runEngine('promtool', ['check', 'rules', 'rules.yml'], { cwd: PROM_DIR });
    expect(r.stdout).toContain('SUCCESS: 8 rules found');
    expect(r.status).toBe(0);
  });

  it('test rules passes every case under Prometheus 3 semantics (left-open range selectors)', () => {
    const r = runEngine('promtool', ['test', 'rules', 'rules.test.yml'], { cwd: PROM_DIR });
    expect(r.stdout + r.stderr).toContain('SUCCESS');
    expect(r.status).toBe(0);
  });
});
