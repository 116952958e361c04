/**
 * The problems of a telemetry configuration before anything is exported
 * (`configurationProblems`), one sentence each in a fixed order (exporter
 * names, endpoints, output files, the capture file), never naming a secret;
 * and whether a plan sends anything anywhere (`deliversAnything`).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configurationProblems, deliversAnything } from '../../src/telemetry/config-problems.js';
import { planTelemetry, type TelemetryOptions } from '../../src/telemetry/plan.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'config-problems-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const problemsOf = (options: TelemetryOptions, capture?: string) =>
  configurationProblems(options, planTelemetry(options), capture);

describe('configurationProblems', () => {
  it('finds none in a usable configuration, and creates the output directory', async () => {
    const out = join(root, 'new', 'out');
    expect(await problemsOf({ env: {}, out })).toEqual([]);
    expect(await problemsOf({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' } })).toEqual([]);
  });

  it('names unsupported exporters, then endpoints that are no URL, in that order', async () => {
    const problems = await problemsOf({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
        OTEL_TRACES_EXPORTER: 'otlp, Zipkin,jaeger',
        OTEL_METRICS_EXPORTER: 'none',
      },
      out: root,
    });
    expect(problems).toEqual([
      'OTEL_TRACES_EXPORTER names "zipkin", "jaeger", which is not supported (use otlp, console, none)',
      'OTEL_EXPORTER_OTLP_ENDPOINT is not a URL such as http://localhost:4318',
    ]);
  });

  it('takes a bare host:port for gRPC, by the per-signal protocol too', async () => {
    expect(
      await problemsOf({
        env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector:4317', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' },
        out: root,
      }),
    ).toEqual([]);
  });

  it('says once when the output directory cannot be made, and when a file in it is not a file', async () => {
    writeFileSync(join(root, 'blocker'), '');
    const blocked = join(root, 'blocker', 'out');
    expect(await problemsOf({ env: {}, out: blocked })).toEqual([
      `cannot create the output directory ${blocked} (ENOTDIR)`,
    ]);
    mkdirSync(join(root, 'out', 'traces.jsonl'), { recursive: true });
    expect(await problemsOf({ env: {}, out: join(root, 'out') })).toEqual([
      `${join(root, 'out', 'traces.jsonl')} exists and is not a regular file`,
    ]);
  });

  it('checks the capture file: a directory in its place, or a missing directory', async () => {
    const env = { OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' };
    expect(await problemsOf({ env }, join(root, 'capture.ndjson'))).toEqual([]);
    expect(await problemsOf({ env }, root)).toEqual([`the capture file ${root} exists and is not a regular file`]);
    const missing = join(root, 'no-such-dir', 'capture.ndjson');
    expect(await problemsOf({ env }, missing)).toEqual([`cannot write the capture file ${missing} (ENOENT)`]);
  });
});

describe('deliversAnything', () => {
  it('is true for any destination of either signal or a Prometheus endpoint, false for none at all', () => {
    const none = { OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' };
    expect(deliversAnything(planTelemetry({ env: none }))).toBe(false);
    expect(deliversAnything(planTelemetry({ env: { ...none, OTEL_METRICS_EXPORTER: 'console' } }))).toBe(true);
    expect(deliversAnything(planTelemetry({ env: none, prometheusPort: 9464 }))).toBe(true);
    expect(deliversAnything(planTelemetry({ env: {} }))).toBe(true);
  });
});
