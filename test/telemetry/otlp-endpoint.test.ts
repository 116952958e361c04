/**
 * One endpoint validation: the configuration check (`configurationProblems`)
 * and the telemetry plan (`planTelemetry`) accept and refuse the same OTLP
 * endpoints, as the exporter specification asks (http(s) URL for OTLP/HTTP;
 * also `host:port` for gRPC).
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configurationProblems } from '../../src/telemetry/config-problems.js';
import { planTelemetry } from '../../src/telemetry/setup.js';
import { isOtlpEndpoint } from '../../src/telemetry/otlp-endpoint.js';

describe('isOtlpEndpoint', () => {
  it('takes http(s) URLs with a host for every protocol', () => {
    for (const protocol of ['http/protobuf', 'http/json', 'grpc'] as const) {
      expect(isOtlpEndpoint('http://localhost:4318', protocol)).toBe(true);
      expect(isOtlpEndpoint(' https://collector.example:443/otlp ', protocol)).toBe(true);
      expect(isOtlpEndpoint('ftp://localhost:4318', protocol)).toBe(false);
      expect(isOtlpEndpoint('http://', protocol)).toBe(false);
      expect(isOtlpEndpoint('not a url', protocol)).toBe(false);
    }
  });

  it('refuses a bare host:port for OTLP/HTTP and takes it for gRPC', () => {
    expect(isOtlpEndpoint('localhost:4318', 'http/protobuf')).toBe(false);
    expect(isOtlpEndpoint('localhost:4318', 'http/json')).toBe(false);
    expect(isOtlpEndpoint('localhost:4317', 'grpc')).toBe(true);
    expect(isOtlpEndpoint('[::1]:4317', 'grpc')).toBe(true);
    expect(isOtlpEndpoint('localhost', 'grpc')).toBe(false);
  });
});

describe('the check and the plan agree', () => {
  const cases: Array<{ env: Record<string, string>; usable: boolean }> = [
    { env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318' }, usable: false },
    { env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' }, usable: true },
    { env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, usable: true },
    {
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'localhost:4317', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' },
      usable: true,
    },
    {
      env: {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'localhost:4317',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      },
      usable: false,
    },
  ];
  it.each(cases)('$env', async ({ env, usable }) => {
    const dir = mkdtempSync(join(tmpdir(), 'subagent-otel-endpoint-'));
    try {
      const options = { env: { ...env, SUBAGENT_OTEL_OUT: dir } };
      const plan = planTelemetry(options);
      const problems = (await configurationProblems(options, plan)).filter((p) => p.includes('ENDPOINT'));
      expect({ problems: problems.length === 0, traces: plan.traces.otlp !== undefined }).toEqual({
        problems: usable,
        traces: usable,
      });
      if (!usable)
        expect(problems[0]).toMatch(
          /^OTEL_EXPORTER_OTLP_(TRACES_)?ENDPOINT is not a URL such as http:\/\/localhost:431[78]$/,
        );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
