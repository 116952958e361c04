/**
 * What a run's token usage cost, from a maintained price table: the
 * `@pydantic/genai-prices` package and the data it ships (never a table kept
 * here). Each model call is priced by the model it names, at the time it was
 * made (prices change over time, and tiers apply per request); a run without
 * per-call usage is priced by its own usage and model. A model the table does
 * not know leaves its calls unpriced and is named in the result: no cost is
 * ever invented.
 *
 * Owns the mapping of the project's usage buckets onto the table's usage
 * keys (input there is the total, uncached + cache read + cache write, as
 * `conventionTokenCounts` counts it), the provider ids, and a cache of
 * results. Pure apart from that cache; used by replay and watch of
 * transcripts, never on the proxy's path (the table is a large module).
 *
 * @module subagent-otel/pricing/run-cost
 */
import { calcPrice, type Usage } from '@pydantic/genai-prices';
import type { TokenUsage } from '../wire/content.js';
import { normalizeUsage } from '../wire/content.js';
import type { RunCost, RunRecord } from '../observe/run-record.js';

/** The table's currency. */
export const PRICE_CURRENCY = 'USD' as const;

/**
 * The price table's provider id for a `gen_ai.provider.name` (or a runtime's
 * provider string). @returns `undefined` when none is known: the table then
 * matches the provider from the model name.
 */
export function priceProviderId(provider: string | undefined): string | undefined {
  if (provider === undefined) return undefined;
  const name = provider.toLowerCase();
  if (name === 'anthropic' || name.startsWith('anthropic.')) return 'anthropic';
  if (name === 'openai' || name.startsWith('openai.') || name === 'azure.ai.openai') return 'openai';
  if (
    name === 'gcp.gemini' ||
    name === 'gcp.vertex_ai' ||
    name === 'gcp.gen_ai' ||
    name === 'google' ||
    name === 'gemini'
  )
    return 'google';
  if (name.startsWith('deepseek')) return 'deepseek';
  return undefined;
}

/** The table's usage keys for one call's usage: `input_tokens` is the total input, of which the cache keys are parts. */
export function priceUsage(raw: TokenUsage): Usage {
  const usage = normalizeUsage(raw);
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  const longWrite = Math.min(usage.cacheWrite1hTokens ?? 0, cacheWrite);
  return {
    input_tokens: usage.inputTokens + cacheRead + cacheWrite,
    output_tokens: usage.outputTokens,
    ...(cacheRead > 0 ? { cache_read_tokens: cacheRead } : {}),
    ...(cacheWrite > 0 ? { cache_write_tokens: cacheWrite } : {}),
    ...(longWrite > 0 ? { cache_write_1h_tokens: longWrite } : {}),
  };
}

/** Results kept for calls already priced (same model, provider, minute and usage): bounded. */
const CACHE_LIMIT = 4096;
const cache = new Map<string, number | null>();

/**
 * The price of one call in US dollars, or `null` when the table has no price
 * for `model` (with `provider`) at `time`. Never throws: a table that fails
 * on some input is reported as no price.
 */
export function callPrice(usage: TokenUsage, model: string, provider: string | undefined, time: number): number | null {
  const keys = priceUsage(usage);
  const providerId = priceProviderId(provider);
  // Prices depend on the date and, for some providers, the time of day (off-peak rates): key by the minute.
  const minute = Number.isFinite(time) ? new Date(time).toISOString().slice(0, 16) : 'now';
  const key = `${providerId ?? ''}\u0000${model}\u0000${minute}\u0000${keys['input_tokens'] ?? 0},${keys['output_tokens'] ?? 0},${keys['cache_read_tokens'] ?? 0},${keys['cache_write_tokens'] ?? 0},${keys['cache_write_1h_tokens'] ?? 0}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  let price: number | null;
  try {
    const result = calcPrice(keys, model, {
      ...(providerId !== undefined ? { providerId } : {}),
      ...(Number.isFinite(time) ? { timestamp: new Date(time) } : {}),
    });
    price = result === null || !Number.isFinite(result.total_price) ? null : result.total_price;
  } catch {
    // The table throws for price data it cannot apply (a malformed entry): that call is unpriced, not the run lost.
    price = null;
  }
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, price);
  return price;
}

/**
 * The cost of a finished run: the sum over its calls that reported usage,
 * each priced by its own model (else the run's) at its start time; a run
 * whose calls report no usage but whose totals are known is priced as one
 * call of its model. Calls without a model, and models the table does not
 * know, are listed in `unpricedModels` (`(no model)` for the former).
 *
 * @returns `undefined` when the run reported no usage at all; else the cost,
 *   whose `pricedCalls` is 0 when nothing could be priced (then `amount` is
 *   0 and means "unknown", not "free"). Never throws.
 */
export function runCost(
  record: Pick<RunRecord, 'steps' | 'usage' | 'model' | 'provider' | 'startTime'>,
): RunCost | undefined {
  let amount = 0;
  let pricedCalls = 0;
  const unpriced = new Set<string>();
  const price = (usage: TokenUsage, model: string | undefined, time: number): void => {
    if (model === undefined || model === '') {
      unpriced.add(NO_MODEL);
      return;
    }
    const value = callPrice(usage, model, record.provider, time);
    if (value === null) unpriced.add(model);
    else {
      amount += value;
      pricedCalls += 1;
    }
  };
  const calls = record.steps.filter((step) => step.usage !== undefined);
  if (calls.length > 0) {
    for (const step of calls)
      if (step.usage !== undefined) price(step.usage, step.model ?? record.model, step.startTime);
  } else if (record.usage.reported) {
    const { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, reasoningTokens } = record.usage;
    price(
      { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, reasoningTokens },
      record.model,
      record.startTime,
    );
  } else {
    return undefined;
  }
  return { amount, currency: PRICE_CURRENCY, unpricedModels: [...unpriced], pricedCalls };
}

/** How `unpricedModels` names calls that named no model. */
export const NO_MODEL = '(no model)';

/**
 * The sum of several runs' costs (a session and the runs nested under it).
 * @returns `undefined` when none of them has a cost. Never throws.
 */
export function sumCosts(costs: Iterable<RunCost | undefined>): RunCost | undefined {
  let amount = 0;
  let pricedCalls = 0;
  let any = false;
  const unpriced = new Set<string>();
  for (const cost of costs) {
    if (cost === undefined || cost.currency !== PRICE_CURRENCY) continue;
    any = true;
    amount += cost.amount;
    pricedCalls += cost.pricedCalls;
    for (const model of cost.unpricedModels) unpriced.add(model);
  }
  return any ? { amount, currency: PRICE_CURRENCY, unpricedModels: [...unpriced], pricedCalls } : undefined;
}
