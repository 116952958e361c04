/**
 * The outbox of one OTLP destination while a process runs: its folder
 * (`store.ts`), whether the destination is known to be down, and the
 * drainer that sends what waits, oldest first, with the destination's own
 * sender (same headers, compression, TLS, timeout and retries), backing off
 * while it stays down (decision 0100).
 *
 * "Down" is learnt from a send that failed with a retryable error (after
 * the exporter's own retries) and forgotten at the first success. While the
 * destination is down, new exports go straight to the outbox (the exporters
 * ask `isDown`), so an outage costs one exporter timeout, not one per batch.
 *
 * Owns the drain loop, its backoff and the delivery accounting; never throws
 * into its callers.
 *
 * @module subagent-otel/telemetry/outbox/destination
 */
import { ExportResultCode } from '@opentelemetry/core';
import type { RawSender } from '../otlp-exporters.js';
import { describeError } from '../report-once.js';
import { isPermanentRefusal } from './refusal.js';
import type { OutboxDestination, OutboxRecord, OutboxStore, WriteOutcome } from './store.js';

/** First wait after a failed drain; doubled after each failure up to {@link MAX_BACKOFF_MS}. */
export const INITIAL_BACKOFF_MS = 1000;
/** Longest wait between two drain attempts while the destination stays down. */
export const MAX_BACKOFF_MS = 60_000;

/** What the drains of this process did to this destination. */
export interface DrainAccount {
  /** Requests delivered from the outbox, and the items and runs in them. */
  readonly delivered: { readonly requests: number; readonly items: number; readonly runs: number };
  /** Requests refused for good (removed, never retried). */
  readonly refused: { readonly requests: number; readonly items: number };
  /** The last failure of a drain, when the last attempt failed. */
  readonly lastError?: string;
}

/** Settings of {@link DestinationOutbox}. */
export interface DestinationOutboxOptions {
  readonly store: OutboxStore;
  readonly destination: OutboxDestination;
  /** Builds the sender on first use. */
  readonly sender: () => Promise<RawSender>;
  /** Told once per request refused for good while draining (for reporting and counting). */
  readonly onRefused?: (items: number, error: unknown) => void;
  /** Told when a drain failed (the first failure after a success). */
  readonly onDrainFailed?: (error: unknown) => void;
}

/** One destination's outbox and drainer. */
export class DestinationOutbox {
  readonly store: OutboxStore;
  readonly destination: OutboxDestination;
  readonly #sender: () => Promise<RawSender>;
  readonly #onRefused: ((items: number, error: unknown) => void) | undefined;
  readonly #onDrainFailed: ((error: unknown) => void) | undefined;
  #loadedSender: Promise<RawSender> | undefined;
  #isDown = false;
  #delivered = { requests: 0, items: 0, runs: 0 };
  #refused = { requests: 0, items: 0 };
  #lastError: string | undefined;
  #round: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #backoffMs = INITIAL_BACKOFF_MS;
  #running = false;
  #writes = 0;

  constructor(options: DestinationOutboxOptions) {
    this.store = options.store;
    this.destination = options.destination;
    this.#sender = options.sender;
    this.#onRefused = options.onRefused;
    this.#onDrainFailed = options.onDrainFailed;
  }

  /** Whether the destination is known to be down (the last send to it failed and none succeeded since). */
  get isDown(): boolean {
    return this.#isDown;
  }

  /** Records a live export's outcome: a success ends "down", a retryable failure starts it. */
  noteSend(ok: boolean): void {
    if (ok) {
      if (this.#isDown) this.#schedule(0); // the backlog can go now
      this.#isDown = false;
      this.#backoffMs = INITIAL_BACKOFF_MS;
    } else this.#isDown = true;
  }

  /** Files a request body (see `OutboxStore.write`) and lets the drainer know. Rejects with the file system's error. */
  async write(body: Uint8Array, items: number, runs: number): Promise<WriteOutcome> {
    const outcome = await this.store.write(body, items, runs);
    this.#writes += 1;
    this.#schedule(this.#backoffMs); // while down this is the drain's next try; an attempt already planned stays
    return outcome;
  }

  /** What this process's drains did. */
  account(): DrainAccount {
    return {
      delivered: { ...this.#delivered },
      refused: { ...this.#refused },
      ...(this.#lastError !== undefined ? { lastError: this.#lastError } : {}),
    };
  }

  /** Requests this process filed. */
  get writes(): number {
    return this.#writes;
  }

  /** Starts draining now and keeps draining, with backoff, until {@link finish}. */
  start(): void {
    this.#running = true;
    this.#schedule(0);
  }

  #schedule(ms: number): void {
    if (!this.#running) return;
    if (this.#timer !== undefined) {
      if (ms > 0) return; // one attempt is already planned
      clearTimeout(this.#timer);
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.drain().then((left) => {
        if (left > 0) this.#schedule(this.#backoffMs);
      });
    }, ms);
    this.#timer.unref();
  }

  /**
   * One drain round: takes the folder's lock, sends each waiting request
   * oldest first, removes what was delivered or refused for good, and stops
   * at the first retryable failure (the destination is then down, and the
   * backoff doubles). A round already running is joined, not doubled.
   * @returns how many requests are left. Never rejects.
   */
  async drain(): Promise<number> {
    if (this.#round === undefined) {
      this.#round = this.#drainRound().finally(() => {
        this.#round = undefined;
      });
    }
    await this.#round;
    return (await this.store.list().catch(() => [])).length;
  }

  async #drainRound(): Promise<void> {
    let release: (() => Promise<void>) | undefined;
    try {
      release = await this.store.lock();
      if (release === undefined) return; // another process drains this destination now
      const records = await this.store.list();
      if (records.length === 0) return;
      this.#loadedSender ??= this.#sender();
      const sender = await this.#loadedSender;
      for (const record of records) {
        if (!(await this.#sendOne(sender, record))) break;
      }
    } catch (error) {
      await this.#failed(error);
    } finally {
      await release?.().catch(() => undefined);
    }
  }

  /** Sends one record. @returns whether the round may go on. */
  async #sendOne(sender: RawSender, record: OutboxRecord): Promise<boolean> {
    const body = await this.store.read(record);
    if (body === undefined) return true; // gone meanwhile
    const result = await sender.send(body);
    if (result.code === ExportResultCode.SUCCESS) {
      await this.store.remove(record);
      this.#delivered.requests += 1;
      this.#delivered.items += record.items;
      this.#delivered.runs += record.runs;
      this.#lastError = undefined;
      this.#isDown = false;
      this.#backoffMs = INITIAL_BACKOFF_MS;
      await this.store.updateState((state) => ({ ...state, lastDeliveredAt: Date.now() })).catch(() => undefined);
      return true;
    }
    if (isPermanentRefusal(result.error, this.destination.protocol)) {
      await this.store.remove(record);
      this.#refused.requests += 1;
      this.#refused.items += record.items;
      const message = describeError(result.error);
      await this.store
        .updateState((state) => ({
          ...state,
          refused: state.refused + 1,
          refusedItems: state.refusedItems + record.items,
          lastError: `refused: ${message}`,
          lastErrorAt: Date.now(),
        }))
        .catch(() => undefined);
      this.#onRefused?.(record.items, result.error);
      return true;
    }
    await this.#failed(result.error);
    return false;
  }

  /** Marks the destination down and records the error in its state file (awaited: `check` reads it right after a round). */
  async #failed(error: unknown): Promise<void> {
    const message = describeError(error);
    const first = this.#lastError === undefined;
    this.#lastError = message;
    this.#isDown = true;
    this.#backoffMs = Math.min(MAX_BACKOFF_MS, this.#backoffMs * 2);
    if (first) this.#onDrainFailed?.(error);
    await this.store
      .updateState((state) => ({ ...state, lastError: message, lastErrorAt: Date.now() }))
      .catch(() => undefined);
  }

  /**
   * Stops the loop. While `deadline` (epoch ms) allows and the destination
   * is not down, drains what is left (a round in progress is awaited first),
   * then shuts the sender down. Never rejects.
   */
  async finish(deadline: number): Promise<void> {
    this.#running = false;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const bounded = (work: Promise<unknown>): Promise<unknown> =>
      Promise.race([work, new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())).unref())]);
    await bounded(this.#round ?? Promise.resolve());
    while (!this.#isDown && Date.now() < deadline) {
      const before = this.#delivered.requests + this.#refused.requests;
      const left = await bounded(this.drain());
      if (typeof left !== 'number' || left === 0 || this.#delivered.requests + this.#refused.requests === before) break;
    }
    const sender = this.#loadedSender;
    if (sender !== undefined) await bounded(sender.then((s) => s.shutdown()).catch(() => undefined));
  }
}
