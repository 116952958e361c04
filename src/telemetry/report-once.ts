/**
 * Reports a problem of the telemetry layer through the OpenTelemetry diag
 * logger once per kind, so a dead collector or a broken hook is said once
 * instead of once per span. Owns only the "once" bookkeeping; what counts as
 * a kind is the caller's key.
 *
 * @module subagent-otel/telemetry/report-once
 */
import { diag, type DiagLogger } from '@opentelemetry/api';
import { errorMessage } from '../wire/error-text.js';

/** The diag logger every module of `telemetry/` writes through (messages are prefixed `subagent-otel`). */
export const telemetryDiag: DiagLogger = diag.createComponentLogger({ namespace: 'subagent-otel' });

/** Severity of a reported problem. */
export type ReportLevel = 'error' | 'warn' | 'info';

/**
 * Remembers which kinds were reported. Never throws (a throwing diag logger is
 * contained), never keeps more than `maxKinds` keys (later kinds are then
 * reported every time rather than remembered without bound).
 */
export class OnceReporter {
  readonly #seen = new Set<string>();
  readonly #maxKinds: number;

  constructor(maxKinds = 256) {
    this.#maxKinds = maxKinds;
  }

  /**
   * Logs `message` at `level` unless `kind` was reported before.
   * @returns `true` when this call logged, `false` when the kind was already reported.
   */
  report(level: ReportLevel, kind: string, message: string): boolean {
    if (this.#seen.has(kind)) return false;
    if (this.#seen.size < this.#maxKinds) this.#seen.add(kind);
    try {
      telemetryDiag[level](message);
    } catch {
      // A host-installed diag logger that throws must not take the telemetry layer down with it.
    }
    return true;
  }
}

/** `error.message` for an `Error`, else the value as text; never throws. */
export function describeError(error: unknown): string {
  try {
    return errorMessage(error);
  } catch {
    // String() of an exotic object (throwing toString) fails: say so rather than fail.
    return 'unprintable error';
  }
}
