/**
 * What the agents' hooks told a running `watch`: which transcript files hold
 * a run that just ended (a subagent's file at `SubagentStop`, the session's
 * at `Stop` and `SessionEnd`), and when. The watch wakes when a notice comes
 * and reads those files once they have settled ({@link HOOK_SETTLE_MS}),
 * instead of waiting for the idle bound. The files still say what the run
 * was: a notice only says when to look (decision 0123).
 *
 * Owns the notices and the wake-up; bounded (the oldest notices go first).
 *
 * @module subagent-otel/watch/end-notices
 */
import { resolve } from 'node:path';
import { HOOK_LATE_WRITE_MS, HOOK_SETTLE_MS } from '../transcripts/format.js';

/** At most this many files' notices are kept; a notice older than the idle bound is useless anyway. */
const MAX_NOTICES = 4096;

/**
 * When a file notified at `ended` and last changed at `mtimeMs` counts as
 * settled (the first time `isQuietFile` says quiet by the notice), or
 * `undefined` when it grew later than {@link HOOK_LATE_WRITE_MS} after the
 * notice (then the idle bound decides). Pure.
 */
export function settlePoint(ended: number, mtimeMs: number): number | undefined {
  return mtimeMs <= ended + HOOK_LATE_WRITE_MS ? Math.max(ended, mtimeMs) + HOOK_SETTLE_MS : undefined;
}

/** The notices a watch holds, and its wake-up. */
export class EndNotices {
  readonly #ends = new Map<string, number>();
  #wake: (() => void) | undefined;
  #fresh = false;

  /**
   * Records that the run in the file at `path` ended at `at` (epoch ms), and
   * wakes the watch. A repeated notice for the same file keeps the later
   * time (agents may fire an end hook twice: the run is reported once anyway).
   */
  add(path: string, at: number): void {
    const key = resolve(path);
    const before = this.#ends.get(key);
    this.#ends.delete(key);
    this.#ends.set(key, Math.max(at, before ?? at));
    while (this.#ends.size > MAX_NOTICES) {
      const oldest = this.#ends.keys().next().value;
      if (oldest === undefined) break;
      this.#ends.delete(oldest);
    }
    this.#fresh = true;
    this.#wake?.();
  }

  /** When the run in the file at `path` (resolved) ended, as notified; `undefined` without a notice. */
  endedAt(path: string): number | undefined {
    return this.#ends.get(path);
  }

  /**
   * Forgets the notice for `path` (resolved) once the run it announced was
   * read as closed, unless a later notice (time after `at`) replaced it:
   * what the file gains afterwards is the run taken up again, which waits
   * for its own hook or the idle bound.
   */
  settled(path: string, at: number): void {
    const ended = this.#ends.get(path);
    if (ended !== undefined && ended <= at) this.#ends.delete(path);
  }

  /** Whether a notice came since the previous call (the watch then lists, for files it has not seen yet); clears the mark. */
  takeFresh(): boolean {
    const fresh = this.#fresh;
    this.#fresh = false;
    return fresh;
  }

  /** Forgets notices older than `before` (epoch ms): past the idle bound, they change nothing. */
  prune(before: number): void {
    for (const [path, at] of this.#ends) if (at < before) this.#ends.delete(path);
  }

  /**
   * Waits up to `ms`, less when a notice comes or `signal` aborts. One waiter
   * at a time (the watch's loop). Never rejects.
   */
  wait(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((done) => {
      if (this.#fresh || signal.aborted) {
        done();
        return;
      }
      const finish = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', finish);
        this.#wake = undefined;
        done();
      };
      const timer = setTimeout(finish, Math.max(0, ms));
      signal.addEventListener('abort', finish, { once: true });
      this.#wake = finish;
    });
  }
}
