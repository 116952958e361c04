/**
 * The exporters' books: wrappers that pass spans and metric batches through
 * to the real exporter and tell a `DropListener` what it failed to deliver,
 * and the span processor that counts every sampled span that ended (what
 * the pipelines should eventually have handed on).
 *
 * @module subagent-otel/telemetry/counting-exporters
 */
import { TraceFlags, type Context } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace';
import type {
  AggregationTemporalitySelector,
  InstrumentType,
  PushMetricExporter,
  ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import type { TelemetrySignal } from './run-telemetry.js';
import {
  TELEMETRY_EXPORTER_VALUE_CONSOLE,
  TELEMETRY_EXPORTER_VALUE_FILE,
  TELEMETRY_EXPORTER_VALUE_OTLP,
  TELEMETRY_SIGNAL_VALUE_METRICS,
  TELEMETRY_SIGNAL_VALUE_TRACES,
} from './semconv.js';
import { asError } from '../wire/error-text.js';

/** The kind of a pipeline's exporter, as `subagent.telemetry.dropped` names it. */
export type ExporterKind =
  typeof TELEMETRY_EXPORTER_VALUE_OTLP | typeof TELEMETRY_EXPORTER_VALUE_FILE | typeof TELEMETRY_EXPORTER_VALUE_CONSOLE;

/** Counts sampled spans as they end: what every pipeline should eventually hand its exporter. */
export class EndedSpanCounter implements SpanProcessor {
  count = 0;
  onStart(_span: Span, _parentContext: Context): void {}
  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0) this.count += 1;
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Told of `count` spans or batches of `signal` that the `exporter` pipeline could not deliver, and why. */
export type DropListener = (signal: TelemetrySignal, exporter: ExporterKind, count: number, error: unknown) => void;

/** Passes spans through and counts what the inner exporter failed to deliver. Never throws. */
export class CountingSpanExporter implements SpanExporter {
  /** Spans whose export finished, delivered or failed (failures are counted as they settle). */
  settled = 0;
  readonly #inner: SpanExporter;
  readonly #kind: ExporterKind;
  readonly #onDrop: DropListener;
  #isClosed = false;

  constructor(inner: SpanExporter, kind: ExporterKind, onDrop: DropListener) {
    this.#inner = inner;
    this.#kind = kind;
    this.#onDrop = onDrop;
  }

  /**
   * Closes the books at shutdown: every span that ended but whose export was
   * never confirmed (still queued, dropped by a full queue, or in flight to a
   * collector that has not answered) is counted as dropped now, because the
   * process may exit before it settles. Results arriving later are not counted again.
   */
  closeAccounts(ended: number): void {
    if (this.#isClosed) return;
    this.#isClosed = true;
    const unconfirmed = ended - this.settled;
    if (unconfirmed > 0)
      this.#onDrop(
        TELEMETRY_SIGNAL_VALUE_TRACES,
        this.#kind,
        unconfirmed,
        new Error('spans not confirmed delivered by shutdown'),
      );
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    const settle = (result: ExportResult): void => {
      if (!this.#isClosed) {
        this.settled += spans.length;
        if (result.code !== ExportResultCode.SUCCESS)
          this.#onDrop(TELEMETRY_SIGNAL_VALUE_TRACES, this.#kind, spans.length, result.error);
      }
      resultCallback(result);
    };
    try {
      this.#inner.export(spans, settle);
    } catch (error) {
      settle({ code: ExportResultCode.FAILED, error: asError(error) });
    }
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }
}

/**
 * Passes metric batches through and counts failed ones. Keeps the inner
 * exporter's aggregation choice, and its temporality choice unless
 * `temporality` is given (then that selector decides, whatever the inner
 * exporter says). Never throws.
 */
export class CountingMetricExporter implements PushMetricExporter {
  readonly #inner: PushMetricExporter;
  readonly #kind: ExporterKind;
  readonly #onDrop: DropListener;
  readonly selectAggregationTemporality?: PushMetricExporter['selectAggregationTemporality'];
  readonly selectAggregation?: PushMetricExporter['selectAggregation'];

  constructor(
    inner: PushMetricExporter,
    kind: ExporterKind,
    onDrop: DropListener,
    temporality?: AggregationTemporalitySelector,
  ) {
    this.#inner = inner;
    this.#kind = kind;
    this.#onDrop = onDrop;
    const own = inner.selectAggregationTemporality;
    if (temporality !== undefined) this.selectAggregationTemporality = temporality;
    else if (own !== undefined) this.selectAggregationTemporality = (type: InstrumentType) => own.call(inner, type);
    const aggregation = inner.selectAggregation;
    if (aggregation !== undefined) this.selectAggregation = (type: InstrumentType) => aggregation.call(inner, type);
  }

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    const settle = (result: ExportResult): void => {
      if (result.code !== ExportResultCode.SUCCESS)
        this.#onDrop(TELEMETRY_SIGNAL_VALUE_METRICS, this.#kind, 1, result.error);
      resultCallback(result);
    };
    try {
      this.#inner.export(metrics, settle);
    } catch (error) {
      settle({ code: ExportResultCode.FAILED, error: asError(error) });
    }
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }
}
