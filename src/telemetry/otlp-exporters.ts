/**
 * The OTLP exporters of `createTelemetry`, one per signal and protocol
 * (`grpc`, `http/protobuf`, `http/json`), loaded by dynamic `import()` only
 * when chosen, so start-up pays for none it does not use. Each import has a
 * literal specifier, so a bundler can split it into its own chunk.
 *
 * Every setting of an exporter (endpoint, headers, compression, timeout,
 * certificates, insecure, temporality) is read here from the environment
 * `createTelemetry` was given, through the configuration table
 * (`OTLP_EXPORTER_SETTINGS` in `config.ts`), and the exporter is assembled
 * from the export delegates of `@opentelemetry/otlp-exporter-base` and
 * `@opentelemetry/otlp-grpc-exporter-base` with that complete configuration.
 * The exporter classes' own constructors are not used: they merge what they
 * are given with `process.env` key by key (decision 0072). So nothing here
 * reads or changes `process.env`.
 *
 * @module subagent-otel/telemetry/otlp-exporters
 */
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import {
  AggregationTemporality,
  InstrumentType,
  type AggregationTemporalitySelector,
  type PushMetricExporter,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import {
  OTLP_EXPORTER_SETTINGS,
  readOtlpSetting,
  type Environment,
  type OtlpProtocol,
  type TemporalityPreference,
} from './config.js';
import type { OnceReporter } from './report-once.js';
import { asError } from '../wire/error-text.js';

/** The signals the project exports. */
export type OtlpSignal = 'TRACES' | 'METRICS';

/** Everything an OTLP exporter is built with; nothing else is read. */
export interface OtlpExporterSettings {
  readonly signal: OtlpSignal;
  readonly protocol: OtlpProtocol;
  /** The endpoint as the plan resolved it (`/v1/<signal>` already appended to the generic HTTP endpoint). */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly compression: 'gzip' | 'none';
  readonly timeoutMillis: number;
  /** Files (paths as given, relative to the working directory) of the TLS root, client key and client certificate. */
  readonly certificate?: { readonly variable: string; readonly path: string };
  readonly clientKey?: { readonly variable: string; readonly path: string };
  readonly clientCertificate?: { readonly variable: string; readonly path: string };
  /** gRPC to an endpoint without a scheme only: plaintext instead of TLS. */
  readonly insecure: boolean;
  /** Metrics only: the temporality the exporter is built with. */
  readonly temporality: TemporalityPreference;
}

/**
 * The exporter settings of `signal` from `env`, each signal-specific variable
 * over the generic one (`readOtlpSetting`), with the specification's defaults
 * (no headers, no compression, 10000 ms). Bad values are reported once
 * through `reports` (header values never quoted). Never throws.
 */
export function otlpExporterSettings(
  signal: OtlpSignal,
  destination: { readonly protocol: OtlpProtocol; readonly url: string },
  temporality: TemporalityPreference,
  env: Environment,
  reports: OnceReporter,
): OtlpExporterSettings {
  const table = OTLP_EXPORTER_SETTINGS;
  const file = (setting: typeof table.certificate): { variable: string; path: string } | undefined => {
    const path = readOtlpSetting(setting, signal, env, reports);
    if (path === undefined) return undefined;
    const specific = `OTEL_EXPORTER_OTLP_${signal}_${setting.suffix}`;
    return { variable: env[specific]?.trim() ? specific : setting.env, path };
  };
  const settings: { -readonly [K in keyof OtlpExporterSettings]: OtlpExporterSettings[K] } = {
    signal,
    protocol: destination.protocol,
    url: destination.url.trim(),
    headers: readOtlpSetting(table.headers, signal, env, reports),
    compression: readOtlpSetting(table.compression, signal, env, reports),
    timeoutMillis: readOtlpSetting(table.timeoutMs, signal, env, reports),
    insecure: readOtlpSetting(table.insecure, signal, env, reports),
    temporality,
  };
  const certificate = file(table.certificate);
  const clientKey = file(table.clientKey);
  const clientCertificate = file(table.clientCertificate);
  if (certificate !== undefined) settings.certificate = certificate;
  if (clientKey !== undefined) settings.clientKey = clientKey;
  if (clientCertificate !== undefined) settings.clientCertificate = clientCertificate;
  return settings;
}

/** The TLS files of `settings`, read now. Throws naming the variable and file when one cannot be read or the client pair is incomplete. */
function tlsFiles(settings: OtlpExporterSettings): { ca?: Buffer; key?: Buffer; cert?: Buffer } {
  const read = (file: { variable: string; path: string } | undefined): Buffer | undefined => {
    if (file === undefined) return undefined;
    try {
      return readFileSync(resolvePath(file.path));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new Error(`${file.variable}: cannot read ${file.path} (${code}); set it to a readable PEM file`);
    }
  };
  if ((settings.clientKey === undefined) !== (settings.clientCertificate === undefined)) {
    const missing = settings.clientKey === undefined ? 'CLIENT_KEY' : 'CLIENT_CERTIFICATE';
    throw new Error(
      `OTLP ${settings.signal.toLowerCase()}: a client key and a client certificate go together; set OTEL_EXPORTER_OTLP_${missing} (or its ${settings.signal} form) too`,
    );
  }
  const files: { ca?: Buffer; key?: Buffer; cert?: Buffer } = {};
  const ca = read(settings.certificate);
  const key = read(settings.clientKey);
  const cert = read(settings.clientCertificate);
  if (ca !== undefined) files.ca = ca;
  if (key !== undefined) files.key = key;
  if (cert !== undefined) files.cert = cert;
  return files;
}

/** The delegate configuration of the OTLP/HTTP exporters, complete. */
async function httpConfiguration(settings: OtlpExporterSettings, contentType: string) {
  const { httpAgentFactoryFromOptions } = await import('@opentelemetry/otlp-exporter-base/node-http');
  const headers = { ...settings.headers, 'Content-Type': contentType };
  return {
    url: new URL(settings.url).href,
    headers: () => Promise.resolve({ ...headers }),
    compression: settings.compression,
    timeoutMillis: settings.timeoutMillis,
    concurrencyLimit: 30,
    agentFactory: httpAgentFactoryFromOptions({ keepAlive: true, ...tlsFiles(settings) }),
  };
}

/**
 * The gRPC target of an endpoint, as the gRPC exporter derives it: `host:port`
 * (a URL without a scheme is taken as `https://`), `unix:` URLs unchanged.
 */
export function grpcAddress(url: string): string {
  const text = /^\w{1,8}:\/\//.test(url) ? url : `https://${url}`;
  const target = new URL(text);
  return target.protocol === 'unix:' ? text : target.host;
}

/** The delegate configuration of the OTLP/gRPC exporters, complete. */
async function grpcConfiguration(settings: OtlpExporterSettings) {
  const grpc = await import('@opentelemetry/otlp-grpc-exporter-base');
  const plaintext = settings.url.startsWith('http://') || (!settings.url.startsWith('https://') && settings.insecure);
  const files = plaintext ? {} : tlsFiles(settings);
  const credentials = plaintext
    ? grpc.createInsecureCredentials()
    : grpc.createSslCredentials(files.ca, files.key, files.cert);
  return {
    grpc,
    configuration: {
      url: grpcAddress(settings.url),
      metadata: () => {
        const metadata = grpc.createEmptyMetadata();
        for (const [key, value] of Object.entries(settings.headers)) metadata.set(key, value);
        return metadata;
      },
      credentials: () => credentials,
      compression: settings.compression,
      timeoutMillis: settings.timeoutMillis,
      concurrencyLimit: 30,
    },
  };
}

/**
 * The per-instrument temporality of a preference, the table the OTLP metric
 * exporters apply (OpenTelemetry OTLP exporter specification): `delta` gives
 * delta counters, histograms and gauges (up-down counters stay cumulative),
 * `lowmemory` delta synchronous counters and histograms only, `cumulative`
 * cumulative everything.
 */
export function temporalitySelector(preference: TemporalityPreference): AggregationTemporalitySelector {
  return (type: InstrumentType) => {
    if (preference === 'cumulative') return AggregationTemporality.CUMULATIVE;
    if (type === InstrumentType.COUNTER || type === InstrumentType.HISTOGRAM) return AggregationTemporality.DELTA;
    if (preference === 'lowmemory') return AggregationTemporality.CUMULATIVE;
    return type === InstrumentType.UP_DOWN_COUNTER || type === InstrumentType.OBSERVABLE_UP_DOWN_COUNTER
      ? AggregationTemporality.CUMULATIVE
      : AggregationTemporality.DELTA;
  };
}

/**
 * The request bodies an exporter serialised, by the items they were made
 * from (the span array or the `ResourceMetrics` handed to `export`): the
 * outbox keeps exactly the bytes that were sent (decision 0100).
 */
export type RequestBodies = WeakMap<object, Uint8Array>;

interface Serializer<Request, Response> {
  serializeRequest(request: Request): Uint8Array | undefined;
  deserializeResponse(data: Uint8Array): Response;
}

/** `serializer`, remembering each body it made in `bodies` (when given). */
function remembering<Request extends object, Response>(
  serializer: Serializer<Request, Response>,
  bodies: RequestBodies | undefined,
): Serializer<Request, Response> {
  if (bodies === undefined) return serializer;
  return {
    serializeRequest(request: Request): Uint8Array | undefined {
      const body = serializer.serializeRequest(request);
      if (body !== undefined) bodies.set(request, body);
      return body;
    },
    deserializeResponse: (data: Uint8Array) => serializer.deserializeResponse(data),
  };
}

/**
 * The serialiser of a signal for a protocol: protobuf for `grpc` and
 * `http/protobuf`, JSON for `http/json`, as the exporters use it.
 */
export async function requestSerializer(
  signal: OtlpSignal,
  protocol: OtlpProtocol,
): Promise<(items: object) => Uint8Array | undefined> {
  const transformer = await import('@opentelemetry/otlp-transformer');
  const json = protocol === 'http/json';
  if (signal === 'TRACES') {
    const serializer = json ? transformer.JsonTraceSerializer : transformer.ProtobufTraceSerializer;
    return (items) => serializer.serializeRequest(items as ReadableSpan[]);
  }
  const serializer = json ? transformer.JsonMetricsSerializer : transformer.ProtobufMetricsSerializer;
  return (items) => serializer.serializeRequest(items as ResourceMetrics);
}

/** Sends request bodies as they are to one destination. */
export interface RawSender {
  /** Sends `body` with the destination's headers, compression, timeout and retries. Never rejects. */
  send(body: Uint8Array): Promise<ExportResult>;
  shutdown(): Promise<void>;
}

/**
 * A sender of already-serialised request bodies to the destination of
 * `settings`, built from the same export delegates as the exporters (so the
 * same headers, compression, TLS, timeout and retries), with a serialiser
 * that passes the bytes through. Rejects when a TLS file cannot be read.
 */
export async function loadRawSender(settings: OtlpExporterSettings): Promise<RawSender> {
  const transformer = await import('@opentelemetry/otlp-transformer');
  const traces = settings.signal === 'TRACES';
  const json = settings.protocol === 'http/json';
  const real = traces
    ? json
      ? transformer.JsonTraceSerializer
      : transformer.ProtobufTraceSerializer
    : json
      ? transformer.JsonMetricsSerializer
      : transformer.ProtobufMetricsSerializer;
  const passThrough = {
    serializeRequest: (body: Uint8Array) => body,
    deserializeResponse: (data: Uint8Array) => real.deserializeResponse(data) as unknown,
  };
  const helper = {
    ...(traces ? transformer.TraceExporterMetricsHelper : transformer.MetricsExporterMetricsHelper),
    countItems: () => 1,
  };
  let delegate;
  if (settings.protocol === 'grpc') {
    const { grpc, configuration } = await grpcConfiguration(settings);
    delegate = traces
      ? grpc.createOtlpGrpcExportDelegate(
          configuration,
          passThrough,
          'otlp_grpc_span_exporter',
          helper,
          undefined,
          'TraceExportService',
          '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
        )
      : grpc.createOtlpGrpcExportDelegate(
          configuration,
          passThrough,
          'otlp_grpc_metric_exporter',
          helper,
          undefined,
          'MetricsExportService',
          '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
        );
  } else {
    const { createOtlpHttpExportDelegate } = await import('@opentelemetry/otlp-exporter-base/node-http');
    const configuration = await httpConfiguration(settings, json ? 'application/json' : 'application/x-protobuf');
    delegate = createOtlpHttpExportDelegate(
      configuration,
      passThrough,
      traces ? 'otlp_http_span_exporter' : 'otlp_http_metric_exporter',
      helper,
      undefined,
    );
  }
  const ready = delegate;
  return {
    send: (body) =>
      new Promise<ExportResult>((resolve) => {
        try {
          ready.export(body, resolve);
        } catch (error) {
          resolve(failed(error));
        }
      }),
    shutdown: () => ready.shutdown(),
  };
}

/**
 * Loads and builds the span exporter of `settings.protocol` with exactly
 * `settings`, remembering each request body in `bodies` when given. Rejects
 * when a TLS file cannot be read.
 */
export async function loadSpanExporter(settings: OtlpExporterSettings, bodies?: RequestBodies): Promise<SpanExporter> {
  const [{ OTLPExporterBase }, transformer] = await Promise.all([
    import('@opentelemetry/otlp-exporter-base'),
    import('@opentelemetry/otlp-transformer'),
  ]);
  if (settings.protocol === 'grpc') {
    const { grpc, configuration } = await grpcConfiguration(settings);
    const delegate = grpc.createOtlpGrpcExportDelegate(
      configuration,
      remembering(transformer.ProtobufTraceSerializer, bodies),
      'otlp_grpc_span_exporter',
      transformer.TraceExporterMetricsHelper,
      undefined,
      'TraceExportService',
      '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
    );
    return new OTLPExporterBase(delegate);
  }
  const json = settings.protocol === 'http/json';
  const { createOtlpHttpExportDelegate } = await import('@opentelemetry/otlp-exporter-base/node-http');
  const configuration = await httpConfiguration(settings, json ? 'application/json' : 'application/x-protobuf');
  const serializer = remembering(json ? transformer.JsonTraceSerializer : transformer.ProtobufTraceSerializer, bodies);
  return new OTLPExporterBase(
    createOtlpHttpExportDelegate(
      configuration,
      serializer,
      'otlp_http_span_exporter',
      transformer.TraceExporterMetricsHelper,
      undefined,
    ),
  );
}

/**
 * Loads and builds the metric exporter of `settings.protocol` with exactly
 * `settings` (remembering each request body in `bodies` when given), its temporality included (the counting wrapper in `setup.ts`
 * gives every pushed stream the same selector). Rejects when a TLS file
 * cannot be read.
 */
export async function loadMetricExporter(
  settings: OtlpExporterSettings,
  bodies?: RequestBodies,
): Promise<PushMetricExporter> {
  const [{ OTLPMetricExporterBase, AggregationTemporalityPreference }, transformer] = await Promise.all([
    import('@opentelemetry/exporter-metrics-otlp-http'),
    import('@opentelemetry/otlp-transformer'),
  ]);
  const options = {
    temporalityPreference:
      settings.temporality === 'delta'
        ? AggregationTemporalityPreference.DELTA
        : settings.temporality === 'lowmemory'
          ? AggregationTemporalityPreference.LOWMEMORY
          : AggregationTemporalityPreference.CUMULATIVE,
  };
  if (settings.protocol === 'grpc') {
    const { grpc, configuration } = await grpcConfiguration(settings);
    const delegate = grpc.createOtlpGrpcExportDelegate(
      configuration,
      remembering(transformer.ProtobufMetricsSerializer, bodies),
      'otlp_grpc_metric_exporter',
      transformer.MetricsExporterMetricsHelper,
      undefined,
      'MetricsExportService',
      '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
    );
    return new OTLPMetricExporterBase(delegate, options);
  }
  const json = settings.protocol === 'http/json';
  const { createOtlpHttpExportDelegate } = await import('@opentelemetry/otlp-exporter-base/node-http');
  const configuration = await httpConfiguration(settings, json ? 'application/json' : 'application/x-protobuf');
  const serializer = remembering(
    json ? transformer.JsonMetricsSerializer : transformer.ProtobufMetricsSerializer,
    bodies,
  );
  return new OTLPMetricExporterBase(
    createOtlpHttpExportDelegate(
      configuration,
      serializer,
      'otlp_http_metric_exporter',
      transformer.MetricsExporterMetricsHelper,
      undefined,
    ),
    options,
  );
}

function failed(error: unknown): ExportResult {
  return { code: ExportResultCode.FAILED, error: asError(error) };
}

/** What `LazyExporter` needs of the exporter it stands for: span and metric exporters alike. */
interface BatchExporter<Batch> {
  export(batch: Batch, resultCallback: (result: ExportResult) => void): void;
  forceFlush?(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * An exporter that stands for one still loading: exports wait for it, and
 * fail (as a failed export, never a throw) when it could not be loaded;
 * flush and shutdown then do nothing. Never throws.
 */
class LazyExporter<Batch> implements BatchExporter<Batch> {
  readonly #ready: Promise<BatchExporter<Batch>>;

  constructor(load: Promise<BatchExporter<Batch>>) {
    this.#ready = load;
    // The failure is reported through the exports that meet it; keep the promise from being "unhandled".
    load.catch(() => undefined);
  }

  export(batch: Batch, resultCallback: (result: ExportResult) => void): void {
    this.#ready.then(
      (inner) => {
        try {
          inner.export(batch, resultCallback);
        } catch (error) {
          resultCallback(failed(error));
        }
      },
      (error: unknown) => resultCallback(failed(error)),
    );
  }

  async forceFlush(): Promise<void> {
    const inner = await this.#ready.catch(() => undefined);
    await inner?.forceFlush?.();
  }

  async shutdown(): Promise<void> {
    const inner = await this.#ready.catch(() => undefined);
    await inner?.shutdown();
  }
}

/** A `LazyExporter` of spans: stands for the `SpanExporter` its `load` gives. */
export class LazySpanExporter extends LazyExporter<ReadableSpan[]> implements SpanExporter {}

/** A `LazyExporter` of metric batches: stands for the `PushMetricExporter` its `load` gives. */
export class LazyMetricExporter extends LazyExporter<ResourceMetrics> implements PushMetricExporter {}
