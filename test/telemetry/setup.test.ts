/**
 * createTelemetry end to end with the real SDK: a real OTLP/HTTP round trip
 * to a receiver on 127.0.0.1, the embedded OTLP-JSON-lines default, content
 * capture off, secrets in the environment, a dead collector, the metric
 * temporality of each destination, and the service name. The
 * environment-to-plan mapping is in test/telemetry/plan.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/observe/run-record.js';
import { createTelemetry } from '../../src/telemetry/setup.js';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_SUBAGENT_OUTPUT,
  ATTR_SUBAGENT_OUTPUT_LENGTH,
  ATTR_SUBAGENT_OUTPUT_SHA256,
  ATTR_SUBAGENT_OUTPUT_SOURCE,
  ATTR_SUBAGENT_STOP_REASON,
  ATTR_SUBAGENT_TELEMETRY_EXPORTER,
  ATTR_SUBAGENT_TELEMETRY_SIGNAL,
  METRIC_GEN_AI_CLIENT_OPERATION_DURATION,
  METRIC_SUBAGENT_RUNS,
  METRIC_SUBAGENT_TELEMETRY_DROPPED,
} from '../../src/telemetry/semconv.js';
import { freePort } from '../helpers/prometheus.js';

const T0 = 1_700_000_000_000;
const OUTPUT_TEXT = 'the partial answer about penguins';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'subagent-otel-setup-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A minimal OTLP/HTTP receiver: records each request and answers 200 `{}`. */
async function startReceiver(): Promise<{ endpoint: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** A port nothing listens on: bound, read, closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function record(overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    runId: 'run-1',
    source: 'sdk-subagent',
    agentName: 'reviewer',
    sessionId: 'ses-child',
    startTime: T0,
    provider: 'deepseek',
    model: 'deepseek-chat',
    endTime: T0 + 1500,
    stopReason: 'max-tokens',
    output: [{ type: 'text', text: OUTPUT_TEXT }],
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
    toolCalls: [{ callId: 'call-1', name: 'bash', startTime: T0 + 100, endTime: T0 + 200, isError: false }],
    ...overrides,
  };
}

type OtlpValue = {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
};
type OtlpAttribute = { key: string; value: OtlpValue };

function plain(value: OtlpValue): unknown {
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(plain);
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue;
}

function attributeMap(attributes: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((attributes ?? []).map((a) => [a.key, plain(a.value)]));
}

interface TraceRequest {
  resourceSpans: {
    resource: { attributes: OtlpAttribute[] };
    scopeSpans: { spans: { name: string; attributes: OtlpAttribute[]; status: { code?: number } }[] }[];
  }[];
}
interface MetricRequest {
  resourceMetrics: {
    scopeMetrics: {
      metrics: {
        name: string;
        sum?: {
          aggregationTemporality?: number;
          isMonotonic?: boolean;
          dataPoints: { attributes: OtlpAttribute[]; asInt?: number | string }[];
        };
        histogram?: { aggregationTemporality?: number; dataPoints: unknown[] };
      }[];
    }[];
  }[];
}

function spansOf(requests: TraceRequest[]) {
  return requests.flatMap((r) => r.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
}

/** Attribute maps and values of every data point of a sum metric, in the LAST request that has it. */
function sumPoints(requests: MetricRequest[], name: string): { attributes: Record<string, unknown>; value: number }[] {
  const withMetric = requests
    .flatMap((r) => r.resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics)))
    .filter((m) => m.name === name);
  const last = withMetric.at(-1);
  return (last?.sum?.dataPoints ?? []).map((p) => ({ attributes: attributeMap(p.attributes), value: Number(p.asInt) }));
}

/** Every exported instance of metric `name`, in export order: its OTLP `aggregationTemporality` (1 delta, 2 cumulative) and its point values. */
function exportsOf(requests: MetricRequest[], name: string): { temporality: number | undefined; values: number[] }[] {
  return requests
    .flatMap((r) => r.resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics)))
    .filter((m) => m.name === name)
    .map((m) => ({
      temporality: m.sum?.aggregationTemporality ?? m.histogram?.aggregationTemporality,
      values: (m.sum?.dataPoints ?? []).map((p) => Number(p.asInt)),
    }));
}

function readLines<T>(path: string): T[] {
  const text = readFileSync(path, 'utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as T);
}

describe('createTelemetry over OTLP/HTTP', () => {
  it('sends the run span and metrics as OTLP JSON, with the resource from the environment and headers only on the request', async () => {
    const { endpoint, received } = await startReceiver();
    const telemetry = createTelemetry({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=sk-secret-123',
        OTEL_SERVICE_NAME: 'subagent-otel-test',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test,team=obs%20team',
        MY_API_KEY: 'sk-secret-456',
      },
    });
    expect(telemetry.describeDestinations()).toEqual([
      `traces: OTLP/HTTP JSON ${endpoint}/v1/traces`,
      `metrics: OTLP/HTTP JSON ${endpoint}/v1/metrics`,
    ]);
    expect(telemetry.outDir).toBeUndefined();
    telemetry.runs.onRunStart(record());
    telemetry.runs.onRunEnd(record());
    expect(await telemetry.shutdown(5000)).toEqual({
      timedOut: false,
      errors: [],
      dropped: { traces: 0, metrics: 0 },
      refused: { traces: 0, metrics: 0 },
      outboxed: { traces: 0, metrics: 0, runs: 0 },
      fromOutbox: { requests: 0, items: 0, runs: 0 },
    });

    const traces = received.filter((r) => r.path === '/v1/traces');
    const metrics = received.filter((r) => r.path === '/v1/metrics');
    expect(traces.length).toBeGreaterThanOrEqual(1);
    expect(metrics.length).toBeGreaterThanOrEqual(1);
    for (const request of received) {
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['x-api-key']).toBe('sk-secret-123');
      expect(request.body).not.toContain('sk-secret');
    }
    const traceBodies = traces.map((r) => JSON.parse(r.body) as TraceRequest);
    const spans = spansOf(traceBodies);
    expect(spans.map((s) => s.name).sort()).toEqual(['execute_tool bash', 'invoke_agent reviewer']);
    const run = spans.find((s) => s.name === 'invoke_agent reviewer');
    expect(run?.status.code).toBe(2);
    expect(attributeMap(run?.attributes)).toMatchObject({
      [ATTR_SUBAGENT_STOP_REASON]: 'max-tokens',
      [ATTR_ERROR_TYPE]: 'max-tokens',
      [ATTR_SUBAGENT_OUTPUT]: `[{"type":"text","text":"${OUTPUT_TEXT}"}]`,
      [ATTR_SUBAGENT_OUTPUT_SOURCE]: 'stream',
    });
    expect(attributeMap(traceBodies[0]?.resourceSpans[0]?.resource.attributes)).toEqual({
      'service.name': 'subagent-otel-test',
      'deployment.environment': 'test',
      team: 'obs team',
      'telemetry.sdk.language': 'nodejs',
      'telemetry.sdk.name': 'opentelemetry',
      'telemetry.sdk.version': expect.stringMatching(/^\d+\.\d+\.\d+/),
    });
    expect(
      sumPoints(
        metrics.map((r) => JSON.parse(r.body) as MetricRequest),
        METRIC_SUBAGENT_RUNS,
      ),
    ).toEqual([
      {
        attributes: {
          [ATTR_GEN_AI_AGENT_NAME]: 'reviewer',
          [ATTR_GEN_AI_PROVIDER_NAME]: 'deepseek',
          [ATTR_SUBAGENT_STOP_REASON]: 'max-tokens',
          [ATTR_SUBAGENT_OUTPUT_SOURCE]: 'stream',
        },
        value: 1,
      },
    ]);
  });

  it('also writes the OTLP-JSON-lines files when out is given with an endpoint', async () => {
    const { endpoint, received } = await startReceiver();
    const out = tempDir();
    const telemetry = createTelemetry({
      out,
      env: {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/custom/traces`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      },
    });
    expect(telemetry.outDir).toBe(out);
    expect(telemetry.describeDestinations()).toEqual([
      `traces: OTLP/HTTP JSON ${endpoint}/custom/traces`,
      `traces: file ${join(out, 'traces.jsonl')}`,
      `metrics: file ${join(out, 'metrics.jsonl')}`,
    ]);
    telemetry.runs.onRunEnd(record());
    await telemetry.shutdown();
    expect(received.map((r) => r.path)).toEqual(['/custom/traces']);
    const fileSpans = spansOf(readLines<TraceRequest>(join(out, 'traces.jsonl')));
    expect(fileSpans.map((s) => s.name).sort()).toEqual(['execute_tool bash', 'invoke_agent reviewer']);
  });
});

describe('createTelemetry embedded default', () => {
  it('writes complete OTLP-JSON lines to SUBAGENT_OTEL_OUT when no endpoint is configured, and no environment secret', async () => {
    const out = join(tempDir(), 'telemetry');
    const telemetry = createTelemetry({
      env: { SUBAGENT_OTEL_OUT: out, MY_API_KEY: 'sk-secret-123', AWS_SECRET_ACCESS_KEY: 'sk-secret-456' },
    });
    expect(telemetry.outDir).toBe(out);
    telemetry.runs.onRunStart(record());
    telemetry.runs.onRunEnd(record());
    telemetry.runs.onMalformed('agent->client', { code: 'not-json', message: 'Unexpected token' });
    expect(await telemetry.shutdown()).toEqual({
      timedOut: false,
      errors: [],
      dropped: { traces: 0, metrics: 0 },
      refused: { traces: 0, metrics: 0 },
      outboxed: { traces: 0, metrics: 0, runs: 0 },
      fromOutbox: { requests: 0, items: 0, runs: 0 },
    });

    const traceText = readFileSync(join(out, 'traces.jsonl'), 'utf8');
    const metricText = readFileSync(join(out, 'metrics.jsonl'), 'utf8');
    expect(traceText.endsWith('\n') && metricText.endsWith('\n')).toBe(true);
    expect(`${traceText}${metricText}`).not.toContain('sk-secret');
    const spans = spansOf(readLines<TraceRequest>(join(out, 'traces.jsonl')));
    const run = spans.find((s) => s.name === 'invoke_agent reviewer');
    expect(attributeMap(run?.attributes)).toMatchObject({
      [ATTR_SUBAGENT_STOP_REASON]: 'max-tokens',
      [ATTR_SUBAGENT_OUTPUT]: `[{"type":"text","text":"${OUTPUT_TEXT}"}]`,
    });
    const metrics = readLines<MetricRequest>(join(out, 'metrics.jsonl'));
    expect(sumPoints(metrics, METRIC_SUBAGENT_RUNS).map((p) => p.value)).toEqual([1]);
  });

  it('leaves every trace of the output text out of the exported data when capture is off, keeping hash and length', async () => {
    const out = tempDir();
    const telemetry = createTelemetry({
      env: { SUBAGENT_OTEL_OUT: out, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'false' },
    });
    telemetry.runs.onRunEnd(record());
    await telemetry.shutdown();
    const exported = readFileSync(join(out, 'traces.jsonl'), 'utf8') + readFileSync(join(out, 'metrics.jsonl'), 'utf8');
    expect(exported).not.toContain('penguins');
    const run = spansOf(readLines<TraceRequest>(join(out, 'traces.jsonl'))).find(
      (s) => s.name === 'invoke_agent reviewer',
    );
    const attributes = attributeMap(run?.attributes);
    expect(attributes[ATTR_SUBAGENT_OUTPUT_SHA256]).toMatch(/^[0-9a-f]{64}$/);
    expect(attributes[ATTR_SUBAGENT_OUTPUT_LENGTH]).toBe(60);
    expect(attributes[ATTR_SUBAGENT_OUTPUT]).toBeUndefined();
  });

  it('exports nothing and creates no directory when both exporters are none', async () => {
    const out = join(tempDir(), 'never');
    const telemetry = createTelemetry({
      env: { SUBAGENT_OTEL_OUT: out, OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' },
    });
    expect(telemetry.describeDestinations()).toEqual(['traces: none', 'metrics: none']);
    telemetry.runs.onRunEnd(record());
    await telemetry.shutdown();
    expect(existsSync(out)).toBe(false);
  });
});

describe('createTelemetry metric temporality', () => {
  it('exports subagent.runs as a monotonic delta sum over OTLP and to the file when the preference is unset', async () => {
    const { endpoint, received } = await startReceiver();
    const out = tempDir();
    const telemetry = createTelemetry({
      out,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
    });
    telemetry.runs.onRunEnd(record());
    await telemetry.shutdown(5000);

    const otlp = received.filter((r) => r.path === '/v1/metrics').map((r) => JSON.parse(r.body) as MetricRequest);
    const runs = otlp
      .flatMap((r) => r.resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics)))
      .find((m) => m.name === METRIC_SUBAGENT_RUNS);
    expect(runs?.sum?.aggregationTemporality).toBe(1);
    expect(runs?.sum?.isMonotonic).toBe(true);
    // A run in another process (the default names of v0.1.0): its duration as the client operation's (decision 0121).
    expect(exportsOf(otlp, METRIC_GEN_AI_CLIENT_OPERATION_DURATION)).toEqual([{ temporality: 1, values: [] }]);
    expect(exportsOf(readLines<MetricRequest>(join(out, 'metrics.jsonl')), METRIC_SUBAGENT_RUNS)).toEqual([
      { temporality: 1, values: [1] },
    ]);
  });

  it('exports cumulative sums over OTLP and to the file when the environment asks for cumulative', async () => {
    const { endpoint, received } = await startReceiver();
    const out = tempDir();
    const telemetry = createTelemetry({
      out,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'cumulative',
      },
    });
    telemetry.runs.onRunEnd(record());
    await telemetry.shutdown(5000);

    const otlp = received.filter((r) => r.path === '/v1/metrics').map((r) => JSON.parse(r.body) as MetricRequest);
    expect(exportsOf(otlp, METRIC_SUBAGENT_RUNS)).toEqual([{ temporality: 2, values: [1] }]);
    expect(exportsOf(readLines<MetricRequest>(join(out, 'metrics.jsonl')), METRIC_SUBAGENT_RUNS)).toEqual([
      { temporality: 2, values: [1] },
    ]);
  });

  it('writes each export interval its own runs to the file, while the Prometheus endpoint keeps counting from the start', async () => {
    const out = tempDir();
    const port = await freePort();
    const telemetry = createTelemetry({ env: { SUBAGENT_OTEL_OUT: out }, prometheusPort: port });
    cleanups.push(() => telemetry.shutdown());
    const url = await telemetry.prometheus?.ready;
    expect(url).toBe(`http://127.0.0.1:${port}/metrics`);
    telemetry.runs.onRunEnd(record());
    await telemetry.meterProvider.forceFlush();
    telemetry.runs.onRunEnd(record());
    telemetry.runs.onRunEnd(record());
    const scraped = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(scraped).toMatch(/^subagent_runs_total\{[^}]*subagent_stop_reason="max-tokens"[^}]*\} 3$/m);
    await telemetry.shutdown();

    expect(exportsOf(readLines<MetricRequest>(join(out, 'metrics.jsonl')), METRIC_SUBAGENT_RUNS)).toEqual([
      { temporality: 1, values: [1] },
      { temporality: 1, values: [2] },
    ]);
  });
});

describe('createTelemetry with a dead collector', () => {
  it('resolves shutdown by itself (not at its bound), counts the dropped spans and batches, and throws nothing', async () => {
    const port = await closedPort();
    const out = tempDir();
    const telemetry = createTelemetry({
      out,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TIMEOUT: '300',
      },
    });
    telemetry.runs.onRunEnd(record());
    // A bound far above the refused exports' time: had shutdown waited for it, `timedOut` would say so.
    const report = await telemetry.shutdown(30_000);
    expect(report.timedOut).toBe(false);
    expect(report.dropped).toEqual({ traces: 2, metrics: 1 });
    expect(report.errors).toEqual([
      expect.stringMatching(/^traces: otlp export failed, 2 span\(s\) dropped: .*ECONNREFUSED/),
      expect.stringMatching(/^metrics: otlp export failed, 1 metric batch\(es\) dropped: /),
    ]);
    const metrics = readLines<MetricRequest>(join(out, 'metrics.jsonl'));
    expect(sumPoints(metrics, METRIC_SUBAGENT_TELEMETRY_DROPPED)).toContainEqual({
      attributes: { [ATTR_SUBAGENT_TELEMETRY_SIGNAL]: 'traces', [ATTR_SUBAGENT_TELEMETRY_EXPORTER]: 'otlp' },
      value: 2,
    });
    expect(await telemetry.shutdown()).toBe(report);
  });
});

describe('createTelemetry service name', () => {
  it('names the service from OTEL_SERVICE_NAME, then OTEL_RESOURCE_ATTRIBUTES, then the option, then subagent-otel', async () => {
    const name = async (env: Record<string, string>, serviceName?: string): Promise<unknown> => {
      const telemetry = createTelemetry({
        env: { ...env, OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' },
        ...(serviceName !== undefined ? { serviceName } : {}),
      });
      await telemetry.shutdown(1000);
      const span = telemetry.tracerProvider.getTracer('t').startSpan('probe') as unknown as {
        resource: { attributes: Record<string, unknown> };
      };
      return span.resource.attributes['service.name'];
    };
    expect(await name({ OTEL_SERVICE_NAME: 'a', OTEL_RESOURCE_ATTRIBUTES: 'service.name=b' }, 'c')).toBe('a');
    expect(await name({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=b' }, 'c')).toBe('b');
    expect(await name({}, 'c')).toBe('c');
    expect(await name({})).toBe('subagent-otel');
    // The resource detector's own rule: a malformed entry discards the whole variable.
    expect(await name({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=b,broken' })).toBe('subagent-otel');
  });
});
