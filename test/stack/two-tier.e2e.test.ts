/**
 * The two-tier stack on the real engines (scripts/stack/stack.mjs with
 * `tiers: 2`): an agent collector (otelcol.agent.yaml) load-balancing by
 * trace id over two gateways (otelcol.gateway.yaml) that tail-sample into
 * Jaeger and expose metrics for Prometheus 3. Four proxies in front of the
 * scripted SDK runtime send 310 traces at once.
 *
 * Sampling: every trace holding a run that did not complete (max-tokens,
 * error) must be kept; completed-only traces at COMPLETED_TRACE_SAMPLING_PERCENTAGE,
 * 25 here. The probabilistic policy hashes the (random) trace id, so the kept
 * share of 240 completed traces is binomial (mean 60, standard deviation
 * 6.7); the bounds below are 4.5 standard deviations wide. Decisions are
 * awaited through the gateways' own tail-sampling counters, not with a clock.
 *
 * @module subagent-otel/test/stack/two-tier.e2e
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack } from '../../scripts/stack/stack.mjs';
import type { Stack } from '../../scripts/stack/stack.mjs';
import { jaegerTraces, promValue, runProxy, scrapeSum, tag, waitFor } from './observed.js';
import type { Scenario } from './observed.js';

const SERVICE = 'stack-e2e-two-tier';
const COMPLETED = 240;
const DELEGATIONS = 30; // parent completed, child max-tokens: kept
const MAX_TOKENS = 30; // kept
const ERRORS = 10; // kept
const TRACES = COMPLETED + DELEGATIONS + MAX_TOKENS + ERRORS;
const RUNS = COMPLETED + 2 * DELEGATIONS + MAX_TOKENS + ERRORS;
const PROXIES = 4;

let stack: Stack;
let dir: string;

function scenarios(): Scenario[] {
  const all: Scenario[] = [
    ...Array.from({ length: COMPLETED }, (): Scenario => 'completed'),
    ...Array.from({ length: DELEGATIONS }, (): Scenario => 'subagent'),
    ...Array.from({ length: MAX_TOKENS }, (): Scenario => 'empty-message'),
    ...Array.from({ length: ERRORS }, (): Scenario => 'error'),
  ];
  return all;
}

/** Sum over both gateways of one of their own metrics. */
async function gatewaysSum(name: string, labels: Record<string, string> = {}): Promise<number> {
  let sum = 0;
  for (const gw of ['gateway-1', 'gateway-2'])
    sum += await scrapeSum(stack.urls.collectors[gw]?.telemetry ?? '', name, labels);
  return sum;
}

/** Sum over both gateways of the series of `name` whose labels contain `fragment`. */
async function gatewaysSumWithLabel(name: string, fragment: string): Promise<number> {
  let sum = 0;
  for (const gw of ['gateway-1', 'gateway-2']) {
    const text = await (await fetch(stack.urls.collectors[gw]?.telemetry ?? '')).text();
    for (const line of text.split('\n'))
      if (line.startsWith(`${name}{`) && line.includes(fragment)) sum += Number(line.split(' ').at(-1));
  }
  return sum;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'subagent-otel-stack-two-'));
  stack = await startStack({
    dir,
    tiers: 2,
    ports: 'free',
    env: { COMPLETED_TRACE_SAMPLING_PERCENTAGE: '25', TAIL_SAMPLING_DECISION_WAIT: '2s' },
  });
  // Round-robin over the proxies, so each sends every kind of trace.
  const all = scenarios();
  const shares = Array.from({ length: PROXIES }, (_, p) => all.filter((_s, i) => i % PROXIES === p));
  const results = await Promise.all(
    shares.map((share, p) =>
      runProxy({
        otlpHttp: stack.urls.otlpHttp,
        service: SERVICE,
        scenarios: share,
        agentName: 'e2e-agent',
        sessionPrefix: `two-${p}`,
      }),
    ),
  );
  for (const r of results) {
    expect(r.code, r.stderr.toString('utf8')).toBe(0);
    expect(r.stderr.toString('utf8')).not.toContain('not delivered');
  }
}, 600_000);

afterAll(async () => {
  await stack?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('two tiers: agent + two tail-sampling gateways', () => {
  it('both gateways take a share of the traces, and together decide on every one of them', async () => {
    const decided = await waitFor(`${TRACES} sampling decisions`, async () => {
      const n = await gatewaysSum('otelcol_processor_tail_sampling_global_count_traces_sampled');
      return n >= TRACES ? n : undefined;
    });
    expect(decided).toBe(TRACES);
    for (const gw of ['gateway-1', 'gateway-2']) {
      expect(
        await scrapeSum(stack.urls.collectors[gw]?.telemetry ?? '', 'otelcol_receiver_accepted_spans'),
      ).toBeGreaterThan(0);
    }
  }, 330_000);

  it('keeps every max-tokens and error trace, whole', async () => {
    const maxTokens = await waitFor('the max-tokens traces in Jaeger', async () => {
      const t = await jaegerTraces(stack.urls.jaeger, SERVICE, { 'subagent.stop_reason': 'max-tokens' });
      return t.length === DELEGATIONS + MAX_TOKENS ? t : undefined;
    });
    expect(maxTokens).toHaveLength(DELEGATIONS + MAX_TOKENS);
    const errors = await waitFor('the error traces in Jaeger', async () => {
      const t = await jaegerTraces(stack.urls.jaeger, SERVICE, { 'subagent.stop_reason': 'error' });
      return t.length === ERRORS ? t : undefined;
    });
    expect(errors).toHaveLength(ERRORS);
    // A delegation's spans reached one gateway: had they been split, the half
    // holding only the completed parent could have been dropped.
    const delegations = maxTokens.filter(
      (t) => t.spans.filter((s) => tag(s, 'gen_ai.operation.name') === 'invoke_agent').length === 2,
    );
    expect(delegations).toHaveLength(DELEGATIONS);
    for (const trace of delegations) {
      const ids = new Set(trace.spans.map((s) => s.spanID));
      const roots = trace.spans.filter((s) => !s.references.some((r) => r.refType === 'CHILD_OF' && ids.has(r.spanID)));
      expect(roots).toHaveLength(1);
      expect(tag(roots[0] ?? trace.spans[0]!, 'subagent.stop_reason')).toBe('completed');
    }
    const sizes = new Set(delegations.map((t) => t.spans.length));
    expect(sizes.size).toBe(1);
  }, 330_000);

  it('keeps about the configured 25% of the completed-only traces', async () => {
    await waitFor(`${TRACES} sampling decisions`, async () =>
      (await gatewaysSum('otelcol_processor_tail_sampling_global_count_traces_sampled')) >= TRACES ? true : undefined,
    );
    const kept = await gatewaysSum('otelcol_processor_tail_sampling_global_count_traces_sampled', { sampled: 'true' });
    const keptCompleted = kept - (DELEGATIONS + MAX_TOKENS + ERRORS);
    expect(keptCompleted).toBeGreaterThanOrEqual(30);
    expect(keptCompleted).toBeLessThanOrEqual(90);
    // Jaeger holds exactly what the gateways kept.
    const inJaeger = await waitFor(`${kept} traces in Jaeger`, async () => {
      const t = await jaegerTraces(stack.urls.jaeger, SERVICE, {}, 2000);
      return t.length === kept ? t : undefined;
    });
    expect(inJaeger).toHaveLength(kept);
  }, 330_000);

  it('samples no metrics: every run is counted, or the gateway counts the data points it dropped', async () => {
    // Four proxies write one series (the observer sets no service.instance.id), and the
    // agent's count connector emits deltas without a start time: delta_to_cumulative
    // drops a point that starts before, or ends no later than, the series it joins, and
    // counts it in otelcol_deltatocumulative_datapoints{error=...} (job otelcol-telemetry).
    const dropped = (): Promise<number> => gatewaysSumWithLabel('otelcol_deltatocumulative_datapoints', 'error=');
    for (const family of ['subagent_runs_total', 'subagent_runs_from_spans_total']) {
      const q = `sum(${family}{job="${SERVICE}"})`;
      const total = await waitFor(`${q} = ${RUNS}, or dropped data points counted`, async () => {
        const v = (await promValue(stack.urls.prometheus, q)) ?? 0;
        if (v === RUNS) return v;
        if (v > 0 && (await dropped()) > 0) return v;
        throw new Error(`${q} is ${v}, no dropped data point counted`);
      });
      console.log(
        `two tiers: ${family} ${total} of ${RUNS}; data points dropped by delta_to_cumulative so far: ${await dropped()}`,
      );
      expect(total).toBeLessThanOrEqual(RUNS);
      if (total < RUNS) expect(await dropped()).toBeGreaterThan(0);
    }
  }, 330_000);
});
