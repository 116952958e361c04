/**
 * Span and trace ids derived from stable names, for runs read from files that
 * are read again: a replay of the same transcript, or a `watch` restarted
 * from its checkpoint, gives every span the same ids, so a child emitted
 * before a restart still nests under its parent's tool span emitted after it
 * (decision 0093). Owns the derivation and the id generator the tracer
 * provider of `createTelemetry` uses; which runs get stable ids is
 * `run-telemetry`'s business (runs whose start names a `traceKey`).
 *
 * The generator hands out a planned id for the one span being started when
 * one was planned (`withPlannedIds`), else random ids exactly as the SDK's
 * own generator does. Planning is synchronous and scoped to one call, so no
 * planned id can leak to another span.
 *
 * @module subagent-otel/telemetry/stable-ids
 */
import { createHash } from 'node:crypto';
import { RandomIdGenerator, type IdGenerator } from '@opentelemetry/sdk-trace';

/** Ids planned for the next span started. */
export interface PlannedIds {
  readonly spanId: string;
  /** Used only when the span starts a trace (no valid parent). */
  readonly traceId?: string;
}

/** Hex digest of `name` (SHA-256), `length` hex characters; never all zeros (an invalid id). */
function digest(name: string, length: number): string {
  const hex = createHash('sha256').update(name).digest('hex').slice(0, length);
  return /^0+$/.test(hex) ? `${hex.slice(0, -1)}1` : hex;
}

/** The trace id of a trace named `traceKey` (32 hex characters). Pure. */
export function stableTraceId(traceKey: string): string {
  return digest(`subagent-otel/trace/${traceKey}`, 32);
}

/** The span id of a run's `invoke_agent` span (16 hex characters). Pure. */
export function stableRunSpanId(runId: string): string {
  return digest(`subagent-otel/run/${runId}`, 16);
}

/** The span id of a run's `execute_tool` span for tool call `callId` (16 hex characters). Pure. */
export function stableToolSpanId(runId: string, callId: string): string {
  return digest(`subagent-otel/tool/${runId}/${callId}`, 16);
}

/** The span id of a run's `chat` span number `index` (0-based, in the record's order). Pure. */
export function stableChatSpanId(runId: string, index: number): string {
  return digest(`subagent-otel/chat/${runId}/${index}`, 16);
}

/**
 * An `IdGenerator` for the tracer provider that takes planned ids for the
 * span being started inside {@link StableIdGenerator.withPlannedIds}, and
 * random ids otherwise.
 */
export class StableIdGenerator implements IdGenerator {
  readonly #random = new RandomIdGenerator();
  #planned: PlannedIds | undefined;

  /**
   * Runs `start` (which must start exactly one span, synchronously) with
   * `ids` planned for it. @returns what `start` returns. The plan is cleared
   * afterwards whether or not `start` used it or threw.
   */
  withPlannedIds<T>(ids: PlannedIds, start: () => T): T {
    this.#planned = ids;
    try {
      return start();
    } finally {
      this.#planned = undefined;
    }
  }

  generateTraceId(): string {
    return this.#planned?.traceId ?? this.#random.generateTraceId();
  }

  generateSpanId(): string {
    return this.#planned?.spanId ?? this.#random.generateSpanId();
  }
}
