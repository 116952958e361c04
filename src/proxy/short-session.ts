/**
 * Tells when a proxied session stops being a short one: the moment the
 * proxy lets V8 optimize again (decision 0122). A short session (a few
 * frames, spawn to exit in well under a second) gains nothing from
 * TurboFan, and its first optimization costs about 5 MiB of resident memory
 * that is never given back (decision 0039); a long or busy one needs
 * optimized code for its throughput. Owns only that rule, not the V8 flags.
 *
 * @module subagent-otel/proxy/short-session
 */

/** A session is no longer short once this many bytes were forwarded in all, or this many ms after the observation was built. */
export const SHORT_SESSION_LIMITS = { bytes: 1024 * 1024, ms: 1000 } as const;

/** The timer functions the watch uses (injectable for tests). */
export interface WatchTimers {
  setTimeout(callback: () => void, ms: number): { unref?(): unknown };
  clearTimeout(handle: unknown): void;
}

/**
 * Calls `onOver` once, at the first of: `forwarded` bytes reaching
 * `limits.bytes`, `limits.ms` after `observing()`, or `ended()`. Never
 * throws unless `onOver` does; the timer never keeps the process alive.
 */
export class ShortSessionWatch {
  readonly #onOver: () => void;
  readonly #limits: { readonly bytes: number; readonly ms: number };
  readonly #timers: WatchTimers;
  #bytes = 0;
  #timer: unknown;
  #over = false;

  constructor(
    onOver: () => void,
    limits: { readonly bytes: number; readonly ms: number } = SHORT_SESSION_LIMITS,
    timers: WatchTimers = globalThis,
  ) {
    this.#onOver = onOver;
    this.#limits = limits;
    this.#timers = timers;
  }

  /** Whether `onOver` was called. */
  get over(): boolean {
    return this.#over;
  }

  /** Counts bytes forwarded (either direction). Cheap: one addition per chunk until the limit. */
  forwarded(bytes: number): void {
    if (this.#over) return;
    this.#bytes += bytes;
    if (this.#bytes >= this.#limits.bytes) this.ended();
  }

  /** The observation is built: the time limit starts now. Idempotent. */
  observing(): void {
    if (this.#over || this.#timer !== undefined) return;
    const timer = this.#timers.setTimeout(() => this.ended(), this.#limits.ms);
    timer.unref?.();
    this.#timer = timer;
  }

  /** The session is over (the agent exited) or a limit was reached: calls `onOver` unless it was called. */
  ended(): void {
    if (this.#over) return;
    this.#over = true;
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#onOver();
  }
}
