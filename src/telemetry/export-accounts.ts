/**
 * The books of one telemetry pipeline set: what its exporters dropped,
 * what a destination refused for good, what went into the outbox and what
 * came out of it, and the problem lines `shutdown` reports. Owns the outbox
 * of each OTLP destination and the listener that tells these books what
 * happened there.
 *
 * @module subagent-otel/telemetry/export-accounts
 */
import type { DropListener } from './counting-exporters.js';
import type { otlpExporterSettings } from './otlp-exporters.js';
import type { DestinationOutbox } from './outbox/destination.js';
import type { OutboxListener } from './outbox/exporter.js';
import { openDestinationOutbox, type OutboxPlace } from './outbox/outboxes.js';
import { RefusedExportError } from './outbox/refusal.js';
import { describeError, type OnceReporter } from './report-once.js';
import type { RunTelemetry, TelemetrySignal } from './run-telemetry.js';
import { TELEMETRY_EXPORTER_VALUE_OTLP } from './semconv.js';

/** At most this many problem lines are kept for `shutdown`'s report. */
const MAX_REPORTED_ERRORS = 32;

/** Counts per signal. */
interface SignalCounts {
  traces: number;
  metrics: number;
}

/** What `shutdown` accomplished: the books, and whether the bound passed first. */
export interface TelemetryShutdownReport {
  /** Whether some flush did not finish within the bound (then `errors` says which). */
  readonly timedOut: boolean;
  /** One line per problem: timeouts, export failures (first of each kind), listen errors. Never holds headers. */
  readonly errors: readonly string[];
  /** Spans and metric batches this pipeline could not deliver, over its whole lifetime (`refused` and outbox bound drops included). */
  readonly dropped: { readonly traces: number; readonly metrics: number };
  /** Of `dropped`: what a destination refused for good (HTTP 4xx other than 408/429, the permanent gRPC codes). */
  readonly refused: { readonly traces: number; readonly metrics: number };
  /** Spans and metric batches put into the outbox instead of being delivered, and the runs (run spans) among them. */
  readonly outboxed: { readonly traces: number; readonly metrics: number; readonly runs: number };
  /** What this process delivered from the outbox (left there by earlier processes, or by itself during an outage). */
  readonly fromOutbox: { readonly requests: number; readonly items: number; readonly runs: number };
}

/** A copy of the books: the report of `shutdown` but for `timedOut`. */
export type AccountsSnapshot = Omit<TelemetryShutdownReport, 'timedOut'>;

/**
 * The books. Problems are said through `reports` once per kind; each line
 * said is also kept (`note`, distinct lines, at most 32). Never throws.
 */
export class ExportAccounts {
  /** The problem lines kept so far, in order. */
  readonly errors: string[] = [];
  readonly dropped: SignalCounts = { traces: 0, metrics: 0 };
  readonly refused: SignalCounts = { traces: 0, metrics: 0 };
  readonly outboxed: SignalCounts & { runs: number } = { traces: 0, metrics: 0, runs: 0 };
  /** Losses that make a checkpoint unsafe: not refusals, not the outbox bound (old data). */
  unsafeLosses = 0;
  /** The outbox of each OTLP destination opened through `outboxFor`, in order. */
  readonly outboxes: DestinationOutbox[] = [];
  /** The run listener once it is built: drops are counted into its `subagent.telemetry.dropped` too. */
  runs: RunTelemetry | undefined;
  readonly #reports: OnceReporter;
  readonly #outbox: OutboxPlace | undefined;

  /** @param outbox where the OTLP destinations' outboxes live; `undefined` when the outbox is off. */
  constructor(reports: OnceReporter, outbox: OutboxPlace | undefined) {
    this.#reports = reports;
    this.#outbox = outbox;
  }

  /** Keeps `message` for the shutdown report, unless kept already or 32 lines are. */
  note(message: string): void {
    if (this.errors.length < MAX_REPORTED_ERRORS && !this.errors.includes(message)) this.errors.push(message);
  }

  /**
   * Counts a drop (as refused when `error` is a `RefusedExportError`, else as
   * an unsafe loss) and says the first of each signal and exporter once.
   */
  readonly onDrop: DropListener = (signal, exporter, count, error) => {
    this.dropped[signal] += count;
    this.runs?.recordDropped(signal, exporter, count);
    if (error instanceof RefusedExportError) this.refused[signal] += count;
    else this.unsafeLosses += count;
    const message = `${signal}: ${exporter} export failed, ${count} ${signal === 'traces' ? 'span(s)' : 'metric batch(es)'} dropped: ${describeError(error)}`;
    if (
      this.#reports.report(
        'warn',
        `drop:${signal}:${exporter}`,
        `${message} (further failures of this exporter are counted in subagent.telemetry.dropped, not logged)`,
      )
    )
      this.note(message);
  };

  /**
   * Opens the outbox of one OTLP destination, and the listener its exporter
   * tells what it filed there and what the outbox's bound dropped.
   * @returns `undefined` when the outbox is off.
   */
  outboxFor(
    signal: TelemetrySignal,
    settings: ReturnType<typeof otlpExporterSettings>,
    url: string,
  ): { box: DestinationOutbox; listener: OutboxListener } | undefined {
    if (this.#outbox === undefined) return undefined;
    const place = this.#outbox;
    const box = openDestinationOutbox(place, settings, url, {
      onRefused: (items, error) =>
        this.onDrop(
          signal,
          TELEMETRY_EXPORTER_VALUE_OTLP,
          items,
          new RefusedExportError(`refused by the destination while delivering the outbox: ${describeError(error)}`),
        ),
    });
    this.outboxes.push(box);
    const listener: OutboxListener = {
      onOutboxed: (items, runCount) => {
        this.outboxed[signal] += items;
        this.outboxed.runs += runCount;
        this.#reports.report(
          'warn',
          `outbox:${signal}`,
          `${signal}: the destination did not take them; kept in the outbox ${box.store.dir} for delivery by the next command (or: subagent-otel check --deliver)`,
        );
      },
      onBoundDropped: (items) => {
        this.dropped[signal] += items;
        this.runs?.recordDropped(signal, TELEMETRY_EXPORTER_VALUE_OTLP, items);
        const message = `${signal}: the outbox ${box.store.dir} is full (${place.maxBytes} bytes, SUBAGENT_OTEL_OUTBOX_MAX_BYTES): its oldest ${items} ${signal === 'traces' ? 'span(s)' : 'metric batch(es)'} dropped`;
        if (this.#reports.report('warn', `outbox-full:${signal}`, message)) this.note(message);
      },
    };
    return { box, listener };
  }

  /** A copy of the books now, with what the outboxes delivered summed over them. */
  snapshot(): AccountsSnapshot {
    const fromOutbox = { requests: 0, items: 0, runs: 0 };
    for (const box of this.outboxes) {
      const account = box.account().delivered;
      fromOutbox.requests += account.requests;
      fromOutbox.items += account.items;
      fromOutbox.runs += account.runs;
    }
    return {
      errors: [...this.errors],
      dropped: { ...this.dropped },
      refused: { ...this.refused },
      outboxed: { ...this.outboxed },
      fromOutbox,
    };
  }
}
