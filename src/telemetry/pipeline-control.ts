/**
 * The bounded end of built pipelines: `flush` (export what is buffered),
 * `settle` (the checkpoint gate: flush, else spill into the outbox, and say
 * whether everything so far is safe) and `shutdown` (traces, then metrics,
 * then the outboxes and the Prometheus endpoint, within one bound). None of
 * them rejects.
 *
 * @module subagent-otel/telemetry/pipeline-control
 */
import { MAX_TIMER_MS, SETTINGS } from './config.js';
import { settleEach, within } from './bounded-wait.js';
import type { ExportAccounts, TelemetryShutdownReport } from './export-accounts.js';
import type { MetricPipelines } from './metric-pipelines.js';
import type { Spiller } from './pipeline-context.js';
import { describeError } from './report-once.js';
import type { TracePipelines } from './trace-pipelines.js';

/** Default bound of `shutdown`, in milliseconds. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = SETTINGS.shutdownTimeoutMs.default;

/** A requested bound as a Node timer holds it: clamped to 2^31-1; nonsense (negative, not finite) is the default. */
function clampTimeout(requestedMs: number): number {
  return Number.isFinite(requestedMs) && requestedMs >= 0
    ? Math.min(requestedMs, MAX_TIMER_MS)
    : DEFAULT_SHUTDOWN_TIMEOUT_MS;
}

/** Flush, settle and shutdown of one `createTelemetry`'s pipelines; the state between calls (shut down, the last settle). */
export class PipelineControl {
  readonly #traces: TracePipelines;
  readonly #metrics: MetricPipelines;
  readonly #accounts: ExportAccounts;
  readonly #spillers: readonly Spiller[];
  #shuttingDown: Promise<TelemetryShutdownReport> | undefined;
  #lossesAtLastSettle = 0;
  #gapAtLastSettle = 0;

  constructor(
    traces: TracePipelines,
    metrics: MetricPipelines,
    accounts: ExportAccounts,
    spillers: readonly Spiller[],
  ) {
    this.#traces = traces;
    this.#metrics = metrics;
    this.#accounts = accounts;
    this.#spillers = spillers;
  }

  /** `Telemetry.shutdown`: the first call's report for every call (idempotent); never rejects. */
  shutdown(timeoutMs: number = DEFAULT_SHUTDOWN_TIMEOUT_MS): Promise<TelemetryShutdownReport> {
    this.#shuttingDown ??= this.#shutdown(timeoutMs).catch((error: unknown) => {
      const books = this.#accounts.snapshot();
      return { timedOut: false, ...books, errors: [...books.errors, `shutdown failed: ${describeError(error)}`] };
    });
    return this.#shuttingDown;
  }

  /** `Telemetry.flush`: `false` when the bound passed first; `true` at once after `shutdown`. Never rejects. */
  async flush(requestedMs: number): Promise<boolean> {
    if (this.#shuttingDown !== undefined) return true;
    const timeoutMs = clampTimeout(requestedMs);
    const deadline = Date.now() + timeoutMs;
    const traced = await within(
      () => settleEach(this.#traces.spanProcessors.map((processor) => () => processor.forceFlush())),
      timeoutMs,
    );
    if (traced.status === 'timeout') return false;
    const metered = await within(
      () =>
        settleEach(
          this.#metrics.readers.map(
            (reader) => () => reader.forceFlush({ timeoutMillis: Math.max(1, deadline - Date.now()) }),
          ),
        ),
      Math.max(0, deadline - Date.now()),
    );
    return metered.status !== 'timeout';
  }

  /** `Telemetry.settle`: what was lost since the previous call, and whether all so far is safe. Never rejects. */
  async settle(requestedMs: number): Promise<{ safe: boolean; lost: number }> {
    const done = await this.flush(requestedMs);
    if (!done) await this.#spill();
    const { ended, counted } = this.#traces;
    // Spans that ended but no exporter settled after a whole flush (and spill) were lost on the way (a full queue).
    const gap = Math.max(0, ...counted.map((pipeline) => ended.count - pipeline.settled));
    const unsafeLosses = this.#accounts.unsafeLosses;
    const lost = unsafeLosses - this.#lossesAtLastSettle + Math.max(0, gap - this.#gapAtLastSettle);
    this.#lossesAtLastSettle = unsafeLosses;
    this.#gapAtLastSettle = gap;
    return { safe: lost === 0 && (done || this.#spillers.length > 0), lost };
  }

  /** Puts every export still waiting for an answer into the outbox. Never rejects. */
  async #spill(): Promise<void> {
    await Promise.all(this.#spillers.map((s) => s.spill().catch(() => undefined)));
  }

  async #shutdown(requestedMs: number): Promise<TelemetryShutdownReport> {
    const timeoutMs = clampTimeout(requestedMs);
    const deadline = Date.now() + timeoutMs;
    const tracesTimedOut = await this.#shutdownTraces(Math.floor(timeoutMs * 0.6));
    const metricsTimedOut = await this.#shutdownMetrics(Math.max(0, deadline - Date.now()), deadline);
    // The outbox last: what this process filed, and what earlier ones left, while the destination takes it.
    await within(
      () => Promise.all(this.#accounts.outboxes.map((box) => box.finish(deadline))),
      Math.max(0, deadline - Date.now()),
    );
    const prometheus = this.#metrics.prometheus;
    if (prometheus !== undefined) await within(() => prometheus.close(), Math.max(0, deadline - Date.now()));
    return { timedOut: tracesTimedOut || metricsTimedOut, ...this.#accounts.snapshot() };
  }

  /** With an outbox, part of each budget is kept for filing what has no answer yet (a write and an fsync). */
  #reserve(budget: number): number {
    return this.#spillers.length > 0 ? Math.min(1000, Math.floor(budget * 0.3)) : 0;
  }

  /** Shuts the span pipelines down within `traceBudget`, then closes their books. @returns whether it timed out with spans unconfirmed. */
  async #shutdownTraces(traceBudget: number): Promise<boolean> {
    const { ended, counted, spanProcessors } = this.#traces;
    const reserve = this.#reserve(traceBudget);
    // Each pipeline is flushed on its own: the provider's shutdown rejects as
    // soon as one exporter fails (a collector answering 500), and returning
    // then would exit before the other pipelines (the file) finished writing.
    const traced = await within(
      () => settleEach(spanProcessors.map((processor) => () => processor.shutdown())),
      traceBudget - reserve,
    );
    if (traced.status === 'timeout' && this.#spillers.length > 0) {
      await within(() => this.#spill(), reserve);
      // What is still unconfirmed now is counted below; the spilled batches were confirmed by the outbox.
    }
    let timedOut = false;
    if (traced.status === 'timeout' && counted.some((pipeline) => pipeline.settled < ended.count)) {
      timedOut = true;
      this.#accounts.note(`traces: shutdown did not finish within ${traceBudget} ms`);
    } else if (traced.status === 'failed' && this.#accounts.dropped.traces === 0) {
      // A failed final export rejects the shutdown too; the drop line already says so.
      this.#accounts.note(`traces: shutdown failed: ${describeError(traced.error)}`);
    }
    for (const pipeline of counted) pipeline.closeAccounts(ended.count);
    return timedOut;
  }

  /** Shuts the metric readers down within `metricBudget` (spilling until `deadline`). @returns whether it timed out without an outbox. */
  async #shutdownMetrics(metricBudget: number, deadline: number): Promise<boolean> {
    const reserve = this.#reserve(metricBudget);
    // Readers on their own for the same reason (the provider's shutdown is a Promise.all).
    const metered = await within(
      () =>
        settleEach(
          this.#metrics.readers.map(
            (reader) => () => reader.shutdown({ timeoutMillis: Math.max(1, metricBudget - reserve) }),
          ),
        ),
      metricBudget - reserve,
    );
    if (metered.status === 'timeout' && this.#spillers.length > 0)
      await within(() => this.#spill(), Math.max(0, deadline - Date.now()));
    if (metered.status === 'timeout' && this.#spillers.length === 0) {
      this.#accounts.note(`metrics: shutdown did not finish within ${metricBudget} ms`);
      return true;
    }
    if (metered.status === 'failed' && this.#accounts.dropped.metrics === 0)
      this.#accounts.note(`metrics: shutdown failed: ${describeError(metered.error)}`);
    return false;
  }
}
