/**
 * The span processor of the file and console exporters: exports the spans
 * that end together as one batch, right after they ended. A run's spans (its
 * `chat` and `execute_tool` spans and the run span itself) end in one
 * synchronous call when the run ends, so a run becomes one export, one
 * OTLP-JSON line, instead of one per span, and it is handed to the exporter
 * as soon as that call returns (a microtask later): a crash keeps every
 * finished run, as the SDK's `SimpleSpanProcessor` does. Unlike the SDK's
 * `BatchSpanProcessor` it never drops a span for a queue bound and never
 * waits on a timer: the exporters it serves bound their own backlog and count
 * what they refuse (decision 0049). Owns only the batching.
 *
 * @module subagent-otel/telemetry/ended-together-span-processor
 */
import { context, TraceFlags } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace';

/** Most spans in one export: a burst of runs ending at once (an agent dying with thousands open) is written as several lines. */
export const MAX_SPANS_PER_EXPORT = 512;

/**
 * Exports sampled spans in batches of those that ended in the same
 * synchronous stretch of code, at most {@link MAX_SPANS_PER_EXPORT} each.
 */
export class EndedTogetherSpanProcessor implements SpanProcessor {
  readonly #exporter: SpanExporter;
  #pending: ReadableSpan[] = [];
  #isScheduled = false;
  #isShutdown = false;
  readonly #inFlight = new Set<Promise<void>>();

  constructor(exporter: SpanExporter) {
    this.#exporter = exporter;
  }

  /** Nothing happens when a span starts. */
  onStart(): void {
    // Batches are made of ended spans only.
  }

  /** Queues a sampled span for the export that follows the current synchronous code. Spans ending after shutdown are ignored. */
  onEnd(span: ReadableSpan): void {
    if (this.#isShutdown || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    this.#pending.push(span);
    if (this.#isScheduled) return;
    this.#isScheduled = true;
    queueMicrotask(() => this.#exportPending());
  }

  /**
   * Exports what is pending now and resolves once every export handed to the
   * exporter so far has reported its result, and the exporter flushed.
   * Never rejects on an export failure (the exporter counts those).
   */
  async forceFlush(): Promise<void> {
    this.#exportPending();
    await Promise.all([...this.#inFlight]);
    await this.#exporter.forceFlush?.();
  }

  /** Flushes, then shuts the exporter down. Idempotent. */
  async shutdown(): Promise<void> {
    if (this.#isShutdown) return;
    await this.forceFlush();
    this.#isShutdown = true;
    await this.#exporter.shutdown();
  }

  #exportPending(): void {
    this.#isScheduled = false;
    const spans = this.#pending;
    this.#pending = [];
    for (let at = 0; at < spans.length; at += MAX_SPANS_PER_EXPORT)
      this.#export(spans.slice(at, at + MAX_SPANS_PER_EXPORT));
  }

  #export(spans: ReadableSpan[]): void {
    const done = new Promise<void>((resolve) => {
      // Exporting must not itself be traced (an instrumented file system or HTTP client would loop back here).
      context.with(suppressTracing(context.active()), () => {
        try {
          this.#exporter.export(spans, () => resolve());
        } catch {
          // The exporters here report through the callback and count their failures; one that throws anyway
          // has failed this batch, and waiting on it would hang the flush.
          resolve();
        }
      });
    });
    this.#inFlight.add(done);
    void done.then(() => this.#inFlight.delete(done));
  }
}
