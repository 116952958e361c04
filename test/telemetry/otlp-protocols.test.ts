/**
 * Every OTLP protocol of the specification, per signal, against real local
 * receivers that decode what they get: `http/protobuf` (the default) and
 * `http/json` over `node:http`, `grpc` with a real gRPC server. Also: the
 * `env` option isolates from `process.env`, and exporters are imported only
 * when chosen.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/observe/run-record.js';
import { createTelemetry } from '../../src/telemetry/setup.js';
import { attributes } from '../helpers/cli.js';
import { startOtlpGrpcReceiver } from '../helpers/otlp-grpc-receiver.js';
import { decodeMetricsRequest, decodeTraceRequest } from '../helpers/otlp-protobuf.js';
import { pointsOfMetricBody, spansOfTraceBody, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { ROOT } from '../helpers/paths.js';

const T0 = 1_700_000_000_000;

function record(): RunRecord {
  return {
    runId: 'run-p',
    source: 'sdk',
    agentName: 'reviewer',
    sessionId: 'ses-p',
    startTime: T0,
    provider: 'deepseek',
    endTime: T0 + 1500,
    stopReason: 'max-tokens',
    output: [{ type: 'text', text: 'partial' }],
    outputSource: 'stream',
    emptyMessages: 1,
    usage: {
      inputTokens: 10,
      outputTokens: 20,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      reported: true,
    },
    steps: [],
    toolCalls: [],
  };
}

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function runOnce(env: Record<string, string>): Promise<string[]> {
  const telemetry = createTelemetry({ env });
  telemetry.runs.onRunStart(record());
  telemetry.runs.onRunEnd(record());
  const report = await telemetry.shutdown(10_000);
  expect(report).toEqual({
    timedOut: false,
    errors: [],
    dropped: { traces: 0, metrics: 0 },
    refused: { traces: 0, metrics: 0 },
    outboxed: { traces: 0, metrics: 0, runs: 0 },
    fromOutbox: { requests: 0, items: 0, runs: 0 },
  });
  return telemetry.describeDestinations();
}

describe('OTLP protocols', () => {
  it('sends http/protobuf when no protocol is set, decodable with the OTLP protobuf definitions', async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    const destinations = await runOnce({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
    expect(destinations).toEqual([
      `traces: OTLP/HTTP protobuf ${receiver.endpoint}/v1/traces`,
      `metrics: OTLP/HTTP protobuf ${receiver.endpoint}/v1/metrics`,
    ]);
    const traces = receiver.requests.filter((r) => r.path === '/v1/traces');
    const metrics = receiver.requests.filter((r) => r.path === '/v1/metrics');
    expect(traces.length).toBeGreaterThanOrEqual(1);
    expect(metrics.length).toBeGreaterThanOrEqual(1);
    for (const request of receiver.requests) expect(request.headers['content-type']).toBe('application/x-protobuf');
    const spans = traces.flatMap((r) => spansOfTraceBody(JSON.stringify(decodeTraceRequest(r.body))));
    expect(spans.map((s) => s.name)).toEqual(['invoke_agent reviewer']);
    expect(spans[0]?.status).toEqual({ code: 2, message: 'stop reason: max-tokens' });
    expect(attributes(spans[0]!)).toMatchObject({
      'subagent.stop_reason': 'max-tokens',
      'gen_ai.usage.input_tokens': 10,
      'subagent.empty_messages': 1,
    });
    const runs = metrics
      .flatMap((r) => pointsOfMetricBody(JSON.stringify(decodeMetricsRequest(r.body))))
      .filter((p) => p.name === 'subagent.runs');
    expect(runs).toEqual([
      {
        name: 'subagent.runs',
        attributes: {
          'gen_ai.agent.name': 'reviewer',
          'gen_ai.provider.name': 'deepseek',
          'subagent.stop_reason': 'max-tokens',
          'subagent.output.source': 'stream',
        },
        value: 1,
      },
    ]);
  });

  it('sends http/json when asked', async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    await runOnce({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    for (const request of receiver.requests) expect(request.headers['content-type']).toBe('application/json');
    expect(receiver.acceptedSpans().map((s) => s.name)).toEqual(['invoke_agent reviewer']);
    expect(
      receiver
        .acceptedMetricPoints()
        .filter((p) => p.name === 'subagent.runs')
        .map((p) => p.value),
    ).toEqual([1]);
  });

  it('sends both signals to a real gRPC server with grpc, with the headers as metadata', async () => {
    const receiver = await startOtlpGrpcReceiver();
    cleanups.push(() => receiver.close());
    const destinations = await runOnce({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=t1',
    });
    expect(destinations).toEqual([
      `traces: OTLP/gRPC ${receiver.endpoint}/`,
      `metrics: OTLP/gRPC ${receiver.endpoint}/`,
    ]);
    const traces = receiver.exports.filter((e) => e.service === 'traces');
    const metrics = receiver.exports.filter((e) => e.service === 'metrics');
    const spans = traces.flatMap((e) => spansOfTraceBody(JSON.stringify(decodeTraceRequest(e.body))));
    expect(spans.map((s) => s.name)).toEqual(['invoke_agent reviewer']);
    expect(attributes(spans[0]!)['gen_ai.agent.id']).toBe('run-p');
    const runs = metrics
      .flatMap((e) => pointsOfMetricBody(JSON.stringify(decodeMetricsRequest(e.body))))
      .filter((p) => p.name === 'subagent.runs');
    expect(runs.map((p) => p.value)).toEqual([1]);
    expect(traces[0]?.metadata['x-tenant']).toBe('t1');
  });

  it('chooses the protocol per signal: traces over gRPC, metrics as http/json', async () => {
    const grpc = await startOtlpGrpcReceiver();
    const http = await startOtlpReceiver();
    cleanups.push(
      () => grpc.close(),
      () => http.close(),
    );
    await runOnce({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: grpc.endpoint,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${http.endpoint}/v1/metrics`,
      OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json',
    });
    expect(grpc.exports.map((e) => e.service)).toEqual(['traces']);
    expect(http.requests.map((r) => r.path).every((p) => p === '/v1/metrics')).toBe(true);
    expect(http.acceptedMetricPoints().some((p) => p.name === 'subagent.runs')).toBe(true);
  });

  it('reads nothing from process.env when an env option is given: no foreign headers, no foreign compression', async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    const saved = { ...process.env };
    cleanups.push(() => {
      process.env = saved;
    });
    process.env['OTEL_EXPORTER_OTLP_HEADERS'] = 'x-leaked=from-process';
    process.env['OTEL_EXPORTER_OTLP_COMPRESSION'] = 'gzip';
    process.env['OTEL_SERVICE_NAME'] = 'leaked-service';
    await runOnce({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-own=given',
    });
    expect(receiver.requests.length).toBeGreaterThanOrEqual(2);
    for (const request of receiver.requests) {
      expect(request.headers['x-own']).toBe('given');
      expect(request.headers['x-leaked']).toBeUndefined();
      expect(request.headers['content-encoding']).toBeUndefined();
      expect(request.body.toString()).not.toContain('leaked-service');
    }
    // process.env was not touched.
    expect(process.env['OTEL_EXPORTER_OTLP_HEADERS']).toBe('x-leaked=from-process');
  });
});

describe('exporter loading', () => {
  /** Loads the built package in a fresh process, builds a pipeline with `env`, and lists the OTLP exporter packages it loaded. */
  function loadedExporters(env: Record<string, string>): string[] {
    // Every module resolved, ES modules (the OpenTelemetry 3.x packages ship them) and CommonJS alike.
    const script = `
      import { registerHooks } from 'node:module';
      const loaded = [];
      registerHooks({ resolve: (specifier, context, next) => { const result = next(specifier, context); loaded.push(result.url); return result; } });
      const { createTelemetry } = await import(${JSON.stringify(join(ROOT, 'dist', 'index.js'))});
      const telemetry = createTelemetry({ env: ${JSON.stringify(env)} });
      await telemetry.shutdown(3000);
      const names = new Set(loaded.map((p) => /@opentelemetry\\/(exporter-(?:trace|metrics)-otlp-[a-z]+|otlp-(?:grpc-)?exporter-base)\\//.exec(p)?.[1] ?? (p.includes('/@grpc/grpc-js/') ? 'grpc-js' : undefined)).filter(Boolean));
      process.stdout.write(JSON.stringify([...names].sort()));
    `;
    return JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
    ) as string[];
  }

  it('imports no OTLP exporter for the file default, and only the chosen ones otherwise', () => {
    const out = mkdtempSync(join(tmpdir(), 'lazy-'));
    cleanups.push(() => rmSync(out, { recursive: true, force: true }));
    expect(loadedExporters({ SUBAGENT_OTEL_OUT: out })).toEqual([]);
    // A closed port: nothing is delivered, but the exporters are loaded and tried. They are built
    // from the export delegates (decision 0072); the metric exporter's base class comes from the
    // http metrics package. gRPC only when chosen.
    expect(
      loadedExporters({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_EXPORTER_OTLP_TIMEOUT: '200',
      }),
    ).toEqual(['exporter-metrics-otlp-http', 'grpc-js', 'otlp-exporter-base', 'otlp-grpc-exporter-base']);
    expect(
      loadedExporters({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
        OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TIMEOUT: '200',
      }),
    ).toEqual(['exporter-metrics-otlp-http', 'otlp-exporter-base']);
  });
});
