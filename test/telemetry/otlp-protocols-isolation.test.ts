/**
 * The `env` option isolates the OTLP exporters from the process: real
 * exporters of every protocol against real receivers on loopback, with
 * `process.env` holding a host's own endpoint, headers and compression. The
 * request goes to the option's endpoint with the option's headers only, and
 * `process.env` is neither written nor replaced while the pipeline is built,
 * used and shut down. Also the specification's precedence (a signal-specific
 * variable over the generic one, alone) and endpoint path rules, and a TLS
 * file that cannot be read named in the shutdown report.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/observe/run-record.js';
import { grpcAddress, otlpExporterSettings } from '../../src/telemetry/otlp-exporters.js';
import { OnceReporter, type ReportLevel } from '../../src/telemetry/report-once.js';
import { createTelemetry, type TelemetryShutdownReport } from '../../src/telemetry/setup.js';
import { startOtlpGrpcReceiver } from '../helpers/otlp-grpc-receiver.js';
import { pointsOfMetricRequest, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { selfSignedCertificate, type TlsIdentity } from '../helpers/tls.js';

const T0 = 1_700_000_000_000;

function record(): RunRecord {
  return {
    runId: 'run-iso',
    source: 'sdk',
    agentName: 'isolated',
    sessionId: 'ses-iso',
    startTime: T0,
    provider: 'deepseek',
    endTime: T0 + 100,
    stopReason: 'completed',
    output: [{ type: 'text', text: 'done' }],
    outputSource: 'message',
    emptyMessages: 0,
    usage: {
      inputTokens: 1,
      outputTokens: 2,
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

async function runOnce(env: Record<string, string>): Promise<TelemetryShutdownReport> {
  const telemetry = createTelemetry({ env });
  telemetry.runs.onRunStart(record());
  telemetry.runs.onRunEnd(record());
  return telemetry.shutdown(10_000);
}

/**
 * Puts `host` into `process.env` behind a Proxy that records every write and
 * delete, and makes `process.env` an accessor that records every assignment;
 * restored after the test. Returns the records.
 */
function watchProcessEnv(host: Record<string, string>): { writes: string[]; assignments: number } {
  const seen = { writes: [] as string[], assignments: 0 };
  const saved = process.env;
  const watched = new Proxy<NodeJS.ProcessEnv>(
    { ...saved, ...host },
    {
      set(target, key, value) {
        seen.writes.push(`set ${String(key)}`);
        return Reflect.set(target, key, value);
      },
      deleteProperty(target, key) {
        seen.writes.push(`delete ${String(key)}`);
        return Reflect.deleteProperty(target, key);
      },
      defineProperty(target, key, descriptor) {
        seen.writes.push(`define ${String(key)}`);
        return Reflect.defineProperty(target, key, descriptor);
      },
    },
  );
  let current: NodeJS.ProcessEnv = watched;
  Object.defineProperty(process, 'env', {
    configurable: true,
    enumerable: true,
    get: () => current,
    set: (value: NodeJS.ProcessEnv) => {
      seen.assignments += 1;
      current = value;
    },
  });
  cleanups.push(() => {
    Object.defineProperty(process, 'env', { configurable: true, enumerable: true, writable: true, value: saved });
  });
  return seen;
}

describe('the env option against a host environment', () => {
  for (const protocol of ['http/protobuf', 'http/json'] as const) {
    it(`${protocol}: the request reaches the option's endpoint with its headers, never the host's; process.env untouched`, async () => {
      const host = await startOtlpReceiver();
      const caller = await startOtlpReceiver();
      cleanups.push(
        () => host.close(),
        () => caller.close(),
      );
      const seen = watchProcessEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: host.endpoint,
        OTEL_EXPORTER_OTLP_HEADERS: 'x-host=secret',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-host-traces=secret',
        OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      });
      const before = { ...process.env };
      const report = await runOnce({
        OTEL_EXPORTER_OTLP_ENDPOINT: caller.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_EXPORTER_OTLP_HEADERS: 'x-caller=given',
      });
      expect(report).toEqual({
        timedOut: false,
        errors: [],
        dropped: { traces: 0, metrics: 0 },
        refused: { traces: 0, metrics: 0 },
        outboxed: { traces: 0, metrics: 0, runs: 0 },
        fromOutbox: { requests: 0, items: 0, runs: 0 },
      });
      expect(host.requests).toEqual([]);
      expect(caller.requests.map((r) => r.path).sort()).toEqual(['/v1/metrics', '/v1/traces']);
      for (const request of caller.requests) {
        expect(request.headers['x-caller']).toBe('given');
        expect(request.headers['x-host']).toBeUndefined();
        expect(request.headers['x-host-traces']).toBeUndefined();
        expect(request.headers['content-encoding']).toBeUndefined();
        expect(request.headers['content-type']).toBe(
          protocol === 'http/json' ? 'application/json' : 'application/x-protobuf',
        );
      }
      expect(seen).toEqual({ writes: [], assignments: 0 });
      expect({ ...process.env }).toEqual(before);
    });
  }

  it("grpc: the option's endpoint gets the option's metadata, never the host's; process.env untouched", async () => {
    const host = await startOtlpGrpcReceiver();
    const caller = await startOtlpGrpcReceiver();
    cleanups.push(
      () => host.close(),
      () => caller.close(),
    );
    const seen = watchProcessEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: host.endpoint,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-host=secret',
      OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'x-host-metrics=secret',
    });
    const report = await runOnce({
      OTEL_EXPORTER_OTLP_ENDPOINT: caller.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-caller=given',
    });
    expect(report).toEqual({
      timedOut: false,
      errors: [],
      dropped: { traces: 0, metrics: 0 },
      refused: { traces: 0, metrics: 0 },
      outboxed: { traces: 0, metrics: 0, runs: 0 },
      fromOutbox: { requests: 0, items: 0, runs: 0 },
    });
    expect(host.exports).toEqual([]);
    expect(caller.exports.map((e) => e.service).sort()).toEqual(['metrics', 'traces']);
    for (const item of caller.exports) {
      expect(item.metadata['x-caller']).toBe('given');
      expect(item.metadata['x-host']).toBeUndefined();
      expect(item.metadata['x-host-metrics']).toBeUndefined();
    }
    expect(seen).toEqual({ writes: [], assignments: 0 });
  });
});

describe("the specification's precedence and endpoint paths", () => {
  it('a signal-specific endpoint is used as given, the generic one gets /v1/<signal>; signal-specific headers and compression replace the generic ones', async () => {
    const generic = await startOtlpReceiver();
    const specific = await startOtlpReceiver();
    cleanups.push(
      () => generic.close(),
      () => specific.close(),
    );
    const report = await runOnce({
      OTEL_EXPORTER_OTLP_ENDPOINT: `${generic.endpoint}/base/`,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${specific.endpoint}/custom/traces`,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-generic=g,x-both=generic',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-traces=t,x-both=traces',
      OTEL_EXPORTER_OTLP_METRICS_COMPRESSION: 'gzip',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    });
    expect(report).toEqual({
      timedOut: false,
      errors: [],
      dropped: { traces: 0, metrics: 0 },
      refused: { traces: 0, metrics: 0 },
      outboxed: { traces: 0, metrics: 0, runs: 0 },
      fromOutbox: { requests: 0, items: 0, runs: 0 },
    });
    expect(specific.requests.map((r) => r.path)).toEqual(['/custom/traces']);
    expect(specific.requests[0]?.headers).toMatchObject({ 'x-traces': 't', 'x-both': 'traces' });
    expect(specific.requests[0]?.headers['x-generic']).toBeUndefined();
    expect(specific.requests[0]?.headers['content-encoding']).toBeUndefined();
    expect(generic.requests.length).toBeGreaterThanOrEqual(1);
    for (const request of generic.requests) {
      expect(request.path).toBe('/base/v1/metrics');
      expect(request.headers).toMatchObject({ 'x-generic': 'g', 'x-both': 'generic', 'content-encoding': 'gzip' });
      expect(request.headers['x-traces']).toBeUndefined();
    }
    // Gzipped OTLP JSON at the generic endpoint's path: decodable, with the run counted.
    expect(
      generic.requests
        .flatMap((r) => pointsOfMetricRequest(r))
        .filter((p) => p.name === 'subagent.runs')
        .map((p) => p.value),
    ).toEqual([1]);
  });

  it('a TLS file that cannot be read fails the exporter, named in the report, and its data is counted as dropped', async () => {
    const report = await runOnce({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://127.0.0.1:9',
      OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: '/nonexistent/subagent-otel-ca.pem',
      OTEL_METRICS_EXPORTER: 'none',
    });
    expect(report.errors).toContain(
      'traces: OTLP/HTTP protobuf exporter could not be loaded (OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: cannot read /nonexistent/subagent-otel-ca.pem (ENOENT); set it to a readable PEM file)',
    );
    expect(report.dropped).toEqual({ traces: 1, metrics: 0 });
  });
});

/** A reporter that keeps what it would log. */
class KeptReports extends OnceReporter {
  readonly messages: string[] = [];
  override report(level: ReportLevel, kind: string, message: string): boolean {
    const first = super.report(level, kind, message);
    if (first) this.messages.push(message);
    return first;
  }
}

describe('the OTLP exporter settings read from the given environment', () => {
  const destination = { protocol: 'http/protobuf', url: 'http://collector:4318/v1/traces' } as const;

  it("has the specification's defaults when nothing is set", () => {
    expect(otlpExporterSettings('TRACES', destination, 'delta', {}, new OnceReporter())).toEqual({
      signal: 'TRACES',
      protocol: 'http/protobuf',
      url: 'http://collector:4318/v1/traces',
      headers: {},
      compression: 'none',
      timeoutMillis: 10000,
      insecure: false,
      temporality: 'delta',
    });
  });

  it('takes each signal-specific variable over the generic one, and the generic one for the other signal', () => {
    const env = {
      OTEL_EXPORTER_OTLP_HEADERS: 'a=1',
      OTEL_EXPORTER_OTLP_METRICS_HEADERS: ' b = two%20words ,empty=',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
      OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: '700',
      OTEL_EXPORTER_OTLP_CERTIFICATE: 'ca.pem',
      OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: 'traces-ca.pem',
      OTEL_EXPORTER_OTLP_METRICS_INSECURE: 'TRUE',
    };
    const traces = otlpExporterSettings('TRACES', destination, 'cumulative', env, new OnceReporter());
    const metrics = otlpExporterSettings('METRICS', destination, 'cumulative', env, new OnceReporter());
    expect([traces.headers, traces.timeoutMillis, traces.certificate, traces.insecure]).toEqual([
      { a: '1' },
      2500,
      { variable: 'OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE', path: 'traces-ca.pem' },
      false,
    ]);
    expect([metrics.headers, metrics.timeoutMillis, metrics.certificate, metrics.insecure]).toEqual([
      { b: 'two words' },
      700,
      { variable: 'OTEL_EXPORTER_OTLP_CERTIFICATE', path: 'ca.pem' },
      true,
    ]);
  });

  it('reports a bad value once and uses the default, never quoting a header value', () => {
    const reports = new KeptReports();
    const settings = otlpExporterSettings(
      'TRACES',
      destination,
      'delta',
      {
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%zzsecret',
        OTEL_EXPORTER_OTLP_COMPRESSION: 'brotli',
        OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '0',
      },
      reports,
    );
    expect([settings.headers, settings.compression, settings.timeoutMillis]).toEqual([{}, 'none', 10000]);
    expect(reports.messages).toEqual([
      'OTEL_EXPORTER_OTLP_HEADERS (value not shown) is not a comma-separated list of key=value pairs with percent-encoded values; using no headers',
      'OTEL_EXPORTER_OTLP_COMPRESSION="brotli" is not gzip or none; using none',
      'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT="0" is not an integer 1..2147483647 (ms); using 10000',
    ]);
  });

  it('derives the gRPC target as the gRPC exporter does', () => {
    expect(grpcAddress('http://collector:4317')).toBe('collector:4317');
    expect(grpcAddress('collector:4317')).toBe('collector:4317');
    expect(grpcAddress('https://[::1]:4317/')).toBe('[::1]:4317');
  });
});

/** A self-signed certificate for 127.0.0.1 and localhost in a fresh directory, removed after the test. */
function selfSigned(): TlsIdentity & { dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'otlp-tls-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, ...selfSignedCertificate(dir) };
}

describe('TLS settings from the given environment', () => {
  it("http/protobuf over https trusts the option's certificate, not the host's", async () => {
    const tls = selfSigned();
    const receiver = await startOtlpReceiver({ kind: 'healthy' }, { tls });
    cleanups.push(() => receiver.close());
    const seen = watchProcessEnv({ OTEL_EXPORTER_OTLP_CERTIFICATE: join(tls.dir, 'host-ca-that-does-not-exist.pem') });
    const report = await runOnce({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_CERTIFICATE: tls.cert,
    });
    expect(receiver.endpoint).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(report).toEqual({
      timedOut: false,
      errors: [],
      dropped: { traces: 0, metrics: 0 },
      refused: { traces: 0, metrics: 0 },
      outboxed: { traces: 0, metrics: 0, runs: 0 },
      fromOutbox: { requests: 0, items: 0, runs: 0 },
    });
    expect([...new Set(receiver.requests.map((r) => r.path))].sort()).toEqual(['/v1/metrics', '/v1/traces']);
    expect(seen).toEqual({ writes: [], assignments: 0 });
  });

  it("grpc over TLS trusts the option's certificate", async () => {
    const tls = selfSigned();
    const receiver = await startOtlpGrpcReceiver({ tls });
    cleanups.push(() => receiver.close());
    // A host name, not 127.0.0.1: grpc-js 1.14 sets the TLS server name to the endpoint's host, and Node 26
    // refuses an IP address there (ERR_INVALID_ARG_VALUE), so gRPC over TLS to an IP endpoint fails on Node 26
    // (docs/TELEMETRY.md says so). `localhost` resolves to the loopback the server listens on (127.0.0.1).
    expect(receiver.endpoint).toMatch(/^https:\/\/localhost:\d+$/);
    const report = await runOnce({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_CERTIFICATE: tls.cert,
    });
    expect(report).toEqual({
      timedOut: false,
      errors: [],
      dropped: { traces: 0, metrics: 0 },
      refused: { traces: 0, metrics: 0 },
      outboxed: { traces: 0, metrics: 0, runs: 0 },
      fromOutbox: { requests: 0, items: 0, runs: 0 },
    });
    expect([...new Set(receiver.exports.map((e) => e.service))].sort()).toEqual(['metrics', 'traces']);
    expect(receiver.acceptedSpans().map((span) => span.name)).toEqual(['invoke_agent isolated']);
  });
});
