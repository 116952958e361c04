/**
 * Pricing runs from the maintained table (`@pydantic/genai-prices`): the
 * expected amounts are worked out by hand from Anthropic's and OpenAI's
 * published per-million-token rates for the models named (the table's data
 * for those models), so a wrong mapping of the project's usage buckets onto
 * the table's keys fails here.
 */
import { describe, expect, it } from 'vitest';
import { callPrice, NO_MODEL, priceProviderId, priceUsage, runCost, sumCosts } from '../../src/pricing/run-cost.js';
import type { RunRecord, StepRecord } from '../../src/observe/run-record.js';

const T = Date.parse('2026-02-11T21:24:52Z');
const usage = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  reported: true,
};

function record(
  steps: StepRecord[],
  over: Partial<RunRecord> = {},
): Pick<RunRecord, 'steps' | 'usage' | 'model' | 'provider' | 'startTime'> {
  return { steps, usage, provider: 'anthropic', startTime: T, ...over };
}

describe("the table's usage keys", () => {
  it('gives the total input, of which cache reads and writes (and the one-hour writes) are parts', () => {
    expect(
      priceUsage({
        inputTokens: 6,
        outputTokens: 997,
        cacheReadTokens: 22041,
        cacheWriteTokens: 20135,
        cacheWrite1hTokens: 20135,
      }),
    ).toEqual({
      input_tokens: 42182,
      output_tokens: 997,
      cache_read_tokens: 22041,
      cache_write_tokens: 20135,
      cache_write_1h_tokens: 20135,
    });
    expect(priceUsage({ inputTokens: 10, outputTokens: 2 })).toEqual({ input_tokens: 10, output_tokens: 2 });
  });

  it("maps the conventions' provider names onto the table's ids", () => {
    expect([
      priceProviderId('anthropic'),
      priceProviderId('openai'),
      priceProviderId('gcp.gemini'),
      priceProviderId('deepseek-official'),
      priceProviderId('acme'),
      priceProviderId(undefined),
    ]).toEqual(['anthropic', 'openai', 'google', 'deepseek', undefined, undefined]);
  });
});

describe('runCost', () => {
  it('prices a Claude Sonnet 4.5 call at $3 in, $6 one-hour cache write, $0.30 cache read, $15 out per million', () => {
    // 6 × 3 + 20135 × 6 + 22041 × 0.30 + 997 × 15 = 142395.3 millionths of a dollar.
    const step: StepRecord = {
      step: 0,
      startTime: T,
      endTime: T,
      model: 'claude-sonnet-4-5-20250929',
      usage: {
        inputTokens: 6,
        outputTokens: 997,
        cacheReadTokens: 22041,
        cacheWriteTokens: 20135,
        cacheWrite1hTokens: 20135,
      },
    };
    const cost = runCost(record([step]));
    expect(cost?.currency).toBe('USD');
    expect(cost?.pricedCalls).toBe(1);
    expect(cost?.unpricedModels).toEqual([]);
    expect(cost?.amount).toBeCloseTo(0.1423953, 10);
  });

  it('prices five-minute cache writes at $3.75 per million', () => {
    // 1000 × 3 + 1000 × 3.75 + 100 × 15 = 8250 millionths.
    const step: StepRecord = {
      step: 0,
      startTime: T,
      endTime: T,
      model: 'claude-sonnet-4-5',
      usage: { inputTokens: 1000, outputTokens: 100, cacheWriteTokens: 1000 },
    };
    expect(runCost(record([step]))?.amount).toBeCloseTo(0.00825, 12);
  });

  it('sums calls of different models, each by its own, and names a model the table does not know', () => {
    const steps: StepRecord[] = [
      {
        step: 0,
        startTime: T,
        endTime: T,
        model: 'claude-sonnet-4-5',
        usage: { inputTokens: 1000, outputTokens: 100 },
      },
      {
        step: 1,
        startTime: T,
        endTime: T,
        model: 'claude-imaginary-9',
        usage: { inputTokens: 1000, outputTokens: 100 },
      },
      { step: 2, startTime: T, endTime: T, usage: { inputTokens: 5, outputTokens: 5 } },
    ];
    const cost = runCost(record(steps));
    // Only the first call: 1000 × 3 + 100 × 15 = 4500 millionths.
    expect(cost?.amount).toBeCloseTo(0.0045, 12);
    expect(cost?.pricedCalls).toBe(1);
    expect(cost?.unpricedModels).toEqual(['claude-imaginary-9', NO_MODEL]);
  });

  it('prices a run without per-call usage as one call of its model', () => {
    const cost = runCost(
      record([], { model: 'claude-sonnet-4-5', usage: { ...usage, inputTokens: 1000, outputTokens: 100 } }),
    );
    expect(cost?.amount).toBeCloseTo(0.0045, 12);
  });

  it('gives no cost for a run that reported no usage, and an unknown amount (no priced call) for an unknown model', () => {
    expect(runCost(record([], { usage: { ...usage, reported: false } }))).toBeUndefined();
    const unknown = runCost(
      record([
        { step: 0, startTime: T, endTime: T, model: 'nobody-knows', usage: { inputTokens: 1, outputTokens: 1 } },
      ]),
    );
    expect(unknown).toEqual({ amount: 0, currency: 'USD', unpricedModels: ['nobody-knows'], pricedCalls: 0 });
  });

  it('is the same for the same call asked twice (the cache)', () => {
    const u = { inputTokens: 1234, outputTokens: 56 };
    const first = callPrice(u, 'gpt-5', 'openai', T);
    expect(first).not.toBeNull();
    expect(callPrice(u, 'gpt-5', 'openai', T)).toBe(first);
  });
});

describe('sumCosts', () => {
  it('adds amounts and priced calls and unites the unpriced models', () => {
    expect(
      sumCosts([
        { amount: 1.5, currency: 'USD', unpricedModels: ['a'], pricedCalls: 2 },
        undefined,
        { amount: 0.25, currency: 'USD', unpricedModels: ['a', 'b'], pricedCalls: 1 },
      ]),
    ).toEqual({ amount: 1.75, currency: 'USD', unpricedModels: ['a', 'b'], pricedCalls: 3 });
    expect(sumCosts([undefined])).toBeUndefined();
  });
});
