/**
 * The OTLP exporters of `createTelemetry`, one per signal and protocol
 * (`grpc`, `http/protobuf`, `http/json`), loaded by dynamic `import()` only
 * when chosen, so start-up pays for none it does not use. Each import has a
 * literal specifier, so a bundler can split it into its own chunk.
 *
 * The exporters read their own settings (endpoint, headers, compression,
 * timeout, certificates) from the environment, as the OpenTelemetry packages
 * do, and merge whatever is passed in with it (headers from both), so passing
 * configuration cannot keep `process.env` out; `withEnvironment` makes the
 * environment `createTelemetry` was given the one they read, for the length
 * of their synchronous constructors only (decision 0072). Nothing else in the
 * project swaps it.
 *
 * @module subagent-otel/telemetry/otlp-exporters
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { AggregationTemporality, InstrumentType, type AggregationTemporalitySelector, type PushMetricExporter, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { OtlpProtocol, TemporalityPreference } from './config.js';
import type { Environment } from './content-policy.js';

/** The signals the project exports. */
export type OtlpSignal = 'TRACES' | 'METRICS';


/**
 * Runs `build` with `process.env` standing for `env`, then restores it, so
 * OpenTelemetry constructors that read the process environment read `env`
 * instead. Synchronous: nothing else runs in between. When `env` is
 * `process.env` itself, just runs `build`.
 */
export function withEnvironment<T>(env: Environment, build: () => T): T {
  if (env === process.env) return build();
  const saved = process.env;
  // A copy: a constructor that writes to the environment must not write into the caller's object.
  process.env = { ...env };
  try {
    return build();
  } finally {
    process.env = saved;
  }
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

/** Loads and builds the span exporter of `protocol`, reading its settings from `env`. */
export async function loadSpanExporter(protocol: OtlpProtocol, env: Environment): Promise<SpanExporter> {
  switch (protocol) {
    case 'grpc': {
      const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-grpc');
      return withEnvironment(env, () => new OTLPTraceExporter());
    }
    case 'http/json': {
      const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
      return withEnvironment(env, () => new OTLPTraceExporter());
    }
    case 'http/protobuf': {
      const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
      return withEnvironment(env, () => new OTLPTraceExporter());
    }
  }
}

/**
 * Loads and builds the metric exporter of `protocol`, reading its settings
 * from `env`. Its own temporality choice is not used: the counting wrapper
 * in `setup.ts` gives every pushed stream the project's selector.
 */
export async function loadMetricExporter(protocol: OtlpProtocol, env: Environment): Promise<PushMetricExporter> {
  switch (protocol) {
    case 'grpc': {
      const { OTLPMetricExporter } = await import('@opentelemetry/exporter-metrics-otlp-grpc');
      return withEnvironment(env, () => new OTLPMetricExporter());
    }
    case 'http/json': {
      const { OTLPMetricExporter } = await import('@opentelemetry/exporter-metrics-otlp-http');
      return withEnvironment(env, () => new OTLPMetricExporter());
    }
    case 'http/protobuf': {
      const { OTLPMetricExporter } = await import('@opentelemetry/exporter-metrics-otlp-proto');
      return withEnvironment(env, () => new OTLPMetricExporter());
    }
  }
}

function failed(error: unknown): ExportResult {
  return { code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) };
}

/**
 * A span exporter that stands for one still loading: exports wait for it,
 * and fail (as a failed export, never a throw) when it could not be loaded.
 */
export class LazySpanExporter implements SpanExporter {
  readonly #ready: Promise<SpanExporter>;

  constructor(load: Promise<SpanExporter>) {
    this.#ready = load;
    // The failure is reported through the exports that meet it; keep the promise from being "unhandled".
    load.catch(() => undefined);
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.#ready.then(
      (inner) => {
        try {
          inner.export(spans, resultCallback);
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

/** The metric counterpart of `LazySpanExporter`. */
export class LazyMetricExporter implements PushMetricExporter {
  readonly #ready: Promise<PushMetricExporter>;

  constructor(load: Promise<PushMetricExporter>) {
    this.#ready = load;
    load.catch(() => undefined);
  }

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    this.#ready.then(
      (inner) => {
        try {
          inner.export(metrics, resultCallback);
        } catch (error) {
          resultCallback(failed(error));
        }
      },
      (error: unknown) => resultCallback(failed(error)),
    );
  }

  async forceFlush(): Promise<void> {
    const inner = await this.#ready.catch(() => undefined);
    await inner?.forceFlush();
  }

  async shutdown(): Promise<void> {
    const inner = await this.#ready.catch(() => undefined);
    await inner?.shutdown();
  }
}
