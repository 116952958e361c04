/**
 * The OTLP exporters' outbox wrappers: an export the destination did not take
 * (a retryable failure after the exporter's own retries, or the destination
 * known to be down) is filed in the destination's outbox and reported to the
 * SDK as a success once it is on disk; a refusal for good settles as a
 * failure (`RefusedExportError`), counted and never retried; an export still
 * waiting for its answer can be filed at once (`spill`) when the process
 * must end or a checkpoint must be written (decision 0100).
 *
 * The outbox keeps exactly the bytes the exporter sent (remembered by the
 * exporter's serialiser, `RequestBodies`), or serialises the items itself
 * with the destination's serialiser when they never reached the wire.
 *
 * @module subagent-otel/telemetry/outbox/exporter
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { RequestBodies } from '../otlp-exporters.js';
import { describeError } from '../report-once.js';
import { ATTR_GEN_AI_OPERATION_NAME, GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT } from '../semconv.js';
import type { DestinationOutbox } from './destination.js';
import { isPermanentRefusal, RefusedExportError } from './refusal.js';
import { asError } from '../../wire/error-text.js';

/** What the wrappers tell their pipeline. */
export interface OutboxListener {
  /** `items` (spans or metric batches) holding `runs` runs are in the outbox on disk. */
  onOutboxed(items: number, runs: number): void;
  /** `items` were removed from the outbox to keep it within its bound. */
  onBoundDropped(items: number): void;
}

interface Pending<T> {
  readonly items: T;
  readonly callback: (result: ExportResult) => void;
  done: boolean;
  /** The outbox record of a spilled export, removed again when its late answer is a success. */
  spilled?: Promise<string | undefined>;
}

/** The shared part of the span and metric wrappers. */
class OutboxWrapper<T extends object> {
  readonly #outbox: DestinationOutbox;
  readonly #bodies: RequestBodies;
  readonly #serialize: () => Promise<(items: object) => Uint8Array | undefined>;
  readonly #listener: OutboxListener;
  readonly #count: (items: T) => { items: number; runs: number };
  readonly #pending = new Set<Pending<T>>();

  constructor(
    outbox: DestinationOutbox,
    bodies: RequestBodies,
    serialize: () => Promise<(items: object) => Uint8Array | undefined>,
    listener: OutboxListener,
    count: (items: T) => { items: number; runs: number },
  ) {
    this.#outbox = outbox;
    this.#bodies = bodies;
    this.#serialize = serialize;
    this.#listener = listener;
    this.#count = count;
  }

  export(
    items: T,
    callback: (result: ExportResult) => void,
    inner: (items: T, done: (result: ExportResult) => void) => void,
  ): void {
    const pending: Pending<T> = { items, callback, done: false };
    if (this.#outbox.isDown) {
      void this.#file(pending, undefined);
      return;
    }
    this.#pending.add(pending);
    const settle = (result: ExportResult): void => {
      if (pending.done) {
        // Spilled before this answer came: a delivery makes the outbox copy redundant.
        if (result.code === ExportResultCode.SUCCESS)
          void pending.spilled?.then((name) => (name !== undefined ? this.#removeRecord(name) : undefined));
        return;
      }
      this.#pending.delete(pending);
      if (result.code === ExportResultCode.SUCCESS) {
        pending.done = true;
        this.#outbox.noteSend(true);
        callback(result);
        return;
      }
      if (isPermanentRefusal(result.error, this.#outbox.destination.protocol)) {
        pending.done = true;
        callback({
          code: ExportResultCode.FAILED,
          error: new RefusedExportError(`refused by the destination: ${describeError(result.error)}`),
        });
        return;
      }
      this.#outbox.noteSend(false);
      void this.#file(pending, result.error);
    };
    try {
      inner(items, settle);
    } catch (error) {
      settle({ code: ExportResultCode.FAILED, error: asError(error) });
    }
  }

  async #removeRecord(name: string): Promise<void> {
    await this.#outbox.store.removeNamed(name).catch(() => undefined);
  }

  /** Files `pending` in the outbox and settles it: success once on disk, failure when it cannot be written. @returns the record's name. */
  async #file(pending: Pending<T>, cause: unknown): Promise<string | undefined> {
    pending.done = true;
    this.#pending.delete(pending);
    try {
      let body = this.#bodies.get(pending.items);
      if (body === undefined) body = (await this.#serialize())(pending.items);
      if (body === undefined) throw new Error('nothing to send');
      const { items, runs } = this.#count(pending.items);
      const outcome = await this.#outbox.write(body, items, runs);
      const boundDropped = outcome.dropped.reduce((sum, r) => sum + r.items, 0);
      if (boundDropped > 0) this.#listener.onBoundDropped(boundDropped);
      if (!outcome.kept) {
        pending.callback({
          code: ExportResultCode.FAILED,
          error: new Error(
            `larger than the outbox bound of ${this.#outbox.store.maxBytes} bytes${cause !== undefined ? ` (${describeError(cause)})` : ''}`,
          ),
        });
        return undefined;
      }
      this.#listener.onOutboxed(items, runs);
      pending.callback({ code: ExportResultCode.SUCCESS });
      return outcome.record.name;
    } catch (error) {
      pending.callback({
        code: ExportResultCode.FAILED,
        error: new Error(
          `could not be written to the outbox ${this.#outbox.store.dir}: ${describeError(error)}${cause !== undefined ? ` (export: ${describeError(cause)})` : ''}`,
        ),
      });
      return undefined;
    }
  }

  /** Files every export still waiting for its answer. Resolves when each is on disk (or failed to be). Never rejects. */
  async spill(): Promise<void> {
    const waiting = [...this.#pending];
    await Promise.all(
      waiting.map((pending) => {
        pending.spilled = this.#file(pending, new Error('no answer before the bound'));
        return pending.spilled;
      }),
    );
  }

  /** Exports still waiting for an answer. */
  get waiting(): number {
    return this.#pending.size;
  }
}

function countSpans(spans: ReadableSpan[]): { items: number; runs: number } {
  let runs = 0;
  for (const span of spans)
    if (span.attributes[ATTR_GEN_AI_OPERATION_NAME] === GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT) runs += 1;
  return { items: spans.length, runs };
}

/** A span exporter whose undelivered batches go to the outbox. Never throws. */
export class OutboxSpanExporter implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #wrapper: OutboxWrapper<ReadableSpan[]>;

  constructor(
    inner: SpanExporter,
    outbox: DestinationOutbox,
    bodies: RequestBodies,
    serialize: () => Promise<(items: object) => Uint8Array | undefined>,
    listener: OutboxListener,
  ) {
    this.#inner = inner;
    this.#wrapper = new OutboxWrapper(outbox, bodies, serialize, listener, countSpans);
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.#wrapper.export(spans, resultCallback, (items, done) => this.#inner.export(items, done));
  }

  /** Files every batch still waiting for an answer (see `OutboxWrapper.spill`). */
  spill(): Promise<void> {
    return this.#wrapper.spill();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }
}

/** A metric exporter whose undelivered batches go to the outbox. Never throws. */
export class OutboxMetricExporter implements PushMetricExporter {
  readonly #inner: PushMetricExporter;
  readonly #wrapper: OutboxWrapper<ResourceMetrics>;

  constructor(
    inner: PushMetricExporter,
    outbox: DestinationOutbox,
    bodies: RequestBodies,
    serialize: () => Promise<(items: object) => Uint8Array | undefined>,
    listener: OutboxListener,
  ) {
    this.#inner = inner;
    this.#wrapper = new OutboxWrapper(outbox, bodies, serialize, listener, () => ({ items: 1, runs: 0 }));
  }

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    this.#wrapper.export(metrics, resultCallback, (items, done) => this.#inner.export(items, done));
  }

  /** Files every batch still waiting for an answer. */
  spill(): Promise<void> {
    return this.#wrapper.spill();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }
}
