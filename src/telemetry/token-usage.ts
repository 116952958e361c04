/**
 * The one mapping from a run's token counts to the numbers the OpenTelemetry
 * GenAI conventions report (docs/PROTOCOLS.md section 1). Every consumer of
 * token totals (span attributes, metrics, run tables, replay summaries, the
 * CLI summary) calls {@link conventionTokenCounts}; nothing else adds counts.
 *
 * The rule, as upstream DeepSeek Harness counts (`mapUsage` of its DeepSeek
 * adapter; its token meter sums steps "without adding reasoning twice"):
 * the three input buckets are disjoint (uncached input, cache read, cache
 * write), so the conventions' input is their sum; `outputTokens` already
 * contains the reasoning tokens (the provider's completion tokens), so the
 * conventions' output is `outputTokens` and reasoning is reported as its
 * share, never added. Attribute names are `semconv.ts`'s; this module owns
 * the numbers only.
 *
 * @module subagent-otel/telemetry/token-usage
 */

/** Token counts as runs carry them (`RunRecord['usage']`, a `TokenUsage`); absent parts count 0. */
export interface RunTokenCounts {
  /** Uncached input tokens. */
  readonly inputTokens: number;
  /** Output tokens, reasoning included. */
  readonly outputTokens: number;
  readonly cacheReadTokens?: number;
  readonly cacheWriteTokens?: number;
  /** The reasoning share of `outputTokens`. */
  readonly reasoningTokens?: number;
}

/** The conventions' numbers for one run. */
export interface ConventionTokenCounts {
  /** `gen_ai.usage.input_tokens`: uncached input + cache read + cache write. */
  readonly input: number;
  /** `gen_ai.usage.output_tokens`: `outputTokens` as reported (reasoning is inside it). */
  readonly output: number;
  /** The reasoning part of {@link ConventionTokenCounts.output}. */
  readonly reasoning: number;
  /** The cache-read part of {@link ConventionTokenCounts.input}. */
  readonly cacheRead: number;
  /** The cache-write part of {@link ConventionTokenCounts.input}. */
  readonly cacheWrite: number;
}

/**
 * Maps a run's token counts to the conventions' numbers.
 * @returns `input` = `inputTokens + cacheReadTokens + cacheWriteTokens`,
 *   `output` = `outputTokens`, and `reasoning`, `cacheRead`, `cacheWrite`
 *   as reported (0 when absent). Sums are capped at
 *   `Number.MAX_SAFE_INTEGER`. Pure; never throws.
 */
export function conventionTokenCounts(usage: RunTokenCounts): ConventionTokenCounts {
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  return {
    input: Math.min(Number.MAX_SAFE_INTEGER, usage.inputTokens + cacheRead + cacheWrite),
    output: usage.outputTokens,
    reasoning: usage.reasoningTokens ?? 0,
    cacheRead,
    cacheWrite,
  };
}
