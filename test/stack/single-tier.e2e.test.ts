/**
 * The single-tier stack on the real engines, started by the same code as
 * `npm run stack -- up` (scripts/stack/stack.mjs) on free loopback ports: the
 * project's collector (otelcol.yaml), Jaeger 2.13.0 (jaeger.yaml),
 * Prometheus 3.16.0 (a copy of prometheus.yml) and Debian's Alertmanager
 * (alertmanager.yml). Telemetry comes from the product as users run it: the
 * built CLI's proxy in front of the scripted SDK runtime, over OTLP/HTTP JSON,
 * and the demo.
 *
 * Rules: rules.yml rendered from the production settings with `for: 1s`
 * instead of 15m/5m (render-rules.mjs; same expressions and names), so the
 * alert fires after two evaluations instead of minutes. The runs are a fixed
 * set finished long before the 1h window ends, so every figure is exact; the
 * test waits for each condition, it never sleeps.
 *
 * @module subagent-otel/test/stack/single-tier.e2e
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderRules } from '../../collector-config/prometheus/render-rules.mjs';
import { startStack } from '../../scripts/stack/stack.mjs';
import type { Stack } from '../../scripts/stack/stack.mjs';
import { runCli } from '../helpers/cli.js';
import { CONFIG_DIR } from './engines.js';
import { getJson, jaegerTraces, promQuery, promValue, runProxy, scrapeSum, tag, waitFor } from './observed.js';
import type { Scenario } from './observed.js';

const SERVICE = 'stack-e2e-single';
const AGENT = 'e2e-agent';

/** 16 max-tokens, 8 completed, 2 delegations (parent completed, child max-tokens), 1 wrong report, 1 malformed. */
const SCENARIOS: readonly Scenario[] = [
  ...Array.from({ length: 16 }, (): Scenario => 'empty-message'),
  ...Array.from({ length: 8 }, (): Scenario => 'completed'),
  'subagent',
  'subagent',
  'subagent-wrong-report',
  'malformed',
];
/** invoke_agent spans: 28 prompted runs + 3 child runs. */
const RUNS = 31;
/** 16 empty-message runs + the 3 children of the delegations. */
const MAX_TOKENS_RUNS = 19;

let stack: Stack;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'subagent-otel-stack-single-'));
  stack = await startStack({
    dir,
    tiers: 1,
    ports: 'free',
    rules: renderRules({ truncationWarningFor: '1s', truncationCriticalFor: '1s' }),
  });
  const proxy = await runProxy({
    otlpHttp: stack.urls.otlpHttp,
    service: SERVICE,
    scenarios: SCENARIOS,
    agentName: AGENT,
    sessionPrefix: 'single',
  });
  expect(proxy.code, proxy.stderr.toString('utf8')).toBe(0);
}, 600_000);

afterAll(async () => {
  await stack?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('traces in Jaeger', () => {
  it('every run is in Jaeger, and the max-tokens ones are found by subagent.stop_reason=max-tokens', async () => {
    const found = await waitFor('the max-tokens runs in Jaeger', async () => {
      const traces = await jaegerTraces(stack.urls.jaeger, SERVICE, { 'subagent.stop_reason': 'max-tokens' });
      return traces.length === 16 + 3 ? traces : undefined;
    });
    // 16 empty-message traces and the 3 delegation traces whose child hit the limit.
    expect(found).toHaveLength(19);
    const all = await waitFor('all 28 traces in Jaeger', async () => {
      const traces = await jaegerTraces(stack.urls.jaeger, SERVICE);
      return traces.length === 28 ? traces : undefined;
    });
    expect(all).toHaveLength(28);
  }, 330_000);

  it('a delegation is one whole trace: parent run, child run, tool and chat spans, linked parent to child', async () => {
    const traces = await waitFor('the delegation traces', async () => {
      const t = (await jaegerTraces(stack.urls.jaeger, SERVICE)).filter(
        (tr) => tr.spans.filter((s) => tag(s, 'gen_ai.operation.name') === 'invoke_agent').length === 2,
      );
      return t.length === 3 ? t : undefined;
    });
    for (const trace of traces) {
      const ops = trace.spans.map((s) => String(tag(s, 'gen_ai.operation.name'))).sort();
      expect(ops).toContain('execute_tool');
      expect(ops).toContain('chat');
      const runs = trace.spans.filter((s) => tag(s, 'gen_ai.operation.name') === 'invoke_agent');
      const child = runs.find((s) => tag(s, 'subagent.stop_reason') === 'max-tokens');
      const parent = runs.find((s) => tag(s, 'subagent.stop_reason') === 'completed');
      expect(child).toBeDefined();
      expect(parent).toBeDefined();
      // The child's run hangs below the parent's (through the delegating tool span): every span's parent is in the trace.
      const ids = new Set(trace.spans.map((s) => s.spanID));
      const roots = trace.spans.filter((s) => !s.references.some((r) => r.refType === 'CHILD_OF' && ids.has(r.spanID)));
      expect(roots.map((s) => s.spanID)).toEqual([parent?.spanID]);
    }
  }, 330_000);

  it("the demo's runs arrive too", async () => {
    const r = await runCli(['demo'], '', {
      OTEL_SERVICE_NAME: `${SERVICE}-demo`,
      OTEL_EXPORTER_OTLP_ENDPOINT: stack.urls.otlpHttp,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      SUBAGENT_OTEL_OUT: join(dir, 'demo-out'),
    });
    expect(r.code, r.stderr.toString('utf8')).toBe(0);
    const traces = await waitFor('the demo traces in Jaeger', async () => {
      const t = await jaegerTraces(stack.urls.jaeger, `${SERVICE}-demo`, { 'subagent.stop_reason': 'max-tokens' });
      return t.length > 0 ? t : undefined;
    });
    expect(traces.length).toBeGreaterThan(0);
  }, 330_000);
});

describe('metrics in Prometheus 3', () => {
  it("has the observer's run counters, exactly", async () => {
    const q = `sum(subagent_runs_total{job="${SERVICE}"})`;
    const total = await waitFor(`${q} = ${RUNS}`, async () =>
      (await promValue(stack.urls.prometheus, q)) === RUNS ? RUNS : undefined,
    );
    expect(total).toBe(RUNS);
    expect(
      await promValue(
        stack.urls.prometheus,
        `sum(subagent_runs_total{job="${SERVICE}", subagent_stop_reason="max-tokens"})`,
      ),
    ).toBe(MAX_TOKENS_RUNS);
  }, 330_000);

  it('has the run counter the count connector derives from the spans, exactly', async () => {
    const q = `sum(subagent_runs_from_spans_total{job="${SERVICE}"})`;
    const total = await waitFor(`${q} = ${RUNS}`, async () =>
      (await promValue(stack.urls.prometheus, q)) === RUNS ? RUNS : undefined,
    );
    expect(total).toBe(RUNS);
  }, 330_000);

  it('evaluates the recording rules over these runs', async () => {
    const sel = `{job="${SERVICE}", gen_ai_agent_name="${AGENT}"}`;
    const runs = await waitFor('the runs recording rule', async () => {
      const v = await promValue(stack.urls.prometheus, `job_gen_ai_agent_name:subagent_runs:increase1h${sel}`);
      return v === RUNS ? v : undefined;
    });
    expect(runs).toBe(RUNS);
    expect(
      await promValue(stack.urls.prometheus, `job_gen_ai_agent_name:subagent_runs_max_tokens:increase1h${sel}`),
    ).toBe(MAX_TOKENS_RUNS);
    const ratio = await promValue(
      stack.urls.prometheus,
      `job_gen_ai_agent_name:subagent_max_tokens_truncation:ratio1h${sel}`,
    );
    expect(ratio).toBeCloseTo(MAX_TOKENS_RUNS / RUNS, 12);
  }, 330_000);

  it('fires the truncation alert (critical) and Alertmanager receives it', async () => {
    const firing = await waitFor('the critical truncation alert to fire', async () => {
      const body = (await getJson(`${stack.urls.prometheus}/api/v1/alerts`)) as {
        data: { alerts: Array<{ labels: Record<string, string>; state: string }> };
      };
      const a = body.data.alerts.filter(
        (x) =>
          x.labels.alertname === 'SubagentMaxTokensTruncationRateHigh' &&
          x.labels.job === SERVICE &&
          x.state === 'firing',
      );
      return a.some((x) => x.labels.severity === 'critical') ? a : undefined;
    });
    expect(firing.map((a) => a.labels.severity).sort()).toEqual(['critical', 'warning']);
    const received = await waitFor('the alert in Alertmanager', async () => {
      const alerts = (await getJson(`${stack.urls.alertmanager}/api/v2/alerts`)) as Array<{
        labels: Record<string, string>;
        status: { state: string; inhibitedBy: string[] };
      }>;
      const mine = alerts.filter(
        (a) => a.labels.alertname === 'SubagentMaxTokensTruncationRateHigh' && a.labels.job === SERVICE,
      );
      return mine.length === 2 ? mine : undefined;
    });
    const bySeverity = Object.fromEntries(received.map((a) => [a.labels.severity, a.status.state]));
    // The shipped inhibit rule: the critical alert silences the warning of the same agent.
    expect(bySeverity).toEqual({ critical: 'active', warning: 'suppressed' });
  }, 330_000);

  it("every Grafana panel's query returns data for these runs", async () => {
    const dashboard = JSON.parse(readFileSync(join(CONFIG_DIR, 'grafana/dashboards/subagent-runs.json'), 'utf8')) as {
      panels: Array<{
        title: string;
        targets?: Array<{ expr?: string; tags?: string; service?: string; datasource?: { uid?: string } }>;
      }>;
    };
    // Wait until the counters are complete (first test of this block), then run every query once.
    await waitFor('the runs recording rule', async () =>
      (await promValue(
        stack.urls.prometheus,
        `sum(job_gen_ai_agent_name:subagent_runs:increase1h{job="${SERVICE}"})`,
      )) === RUNS
        ? true
        : undefined,
    );
    const empty: string[] = [];
    let checked = 0;
    for (const panel of dashboard.panels) {
      // Only transcript runs carry a cost: that panel is checked by the transcript stack test (transcripts.e2e.test.ts).
      if (panel.title.startsWith('Cost by agent')) continue;
      for (const target of panel.targets ?? []) {
        checked += 1;
        if (target.expr !== undefined) {
          const expr = target.expr
            .replaceAll('$job', SERVICE)
            // The dashboard's default for the agent variable: All (allValue ".*"). The token
            // histogram has no gen_ai_agent_name label, so one chosen agent would empty that panel.
            .replaceAll('$agent', '.*')
            .replaceAll('$__rate_interval', '1h')
            .replaceAll('$__range', '1h');
          const r = await promQuery(stack.urls.prometheus, expr);
          if (r.length === 0) empty.push(`${panel.title}: ${expr}`);
        } else {
          // A Jaeger search panel: tags in logfmt (key="value").
          const m = /^([\w.]+)="([^"]*)"$/.exec(target.tags ?? '');
          expect(m, `${panel.title}: tags ${target.tags}`).not.toBeNull();
          const traces = await jaegerTraces(stack.urls.jaeger, SERVICE, { [m?.[1] ?? '']: m?.[2] ?? '' }, 20);
          if (traces.length === 0) empty.push(`${panel.title}: Jaeger ${target.tags}`);
        }
      }
    }
    expect(checked).toBe(10);
    expect(empty).toEqual([]);
  }, 330_000);

  it('the collector counted every span it took, and lost none', async () => {
    const url = stack.urls.collectors.collector?.telemetry ?? '';
    const accepted = await scrapeSum(url, 'otelcol_receiver_accepted_spans');
    expect(accepted).toBeGreaterThan(0);
    // Everything taken was sent on to Jaeger.
    expect(
      await waitFor('the collector to send every span to Jaeger', async () => {
        const sent = await scrapeSum(url, 'otelcol_exporter_sent_spans', { exporter: 'otlp_grpc/jaeger' });
        return sent === accepted ? sent : undefined;
      }),
    ).toBe(accepted);
    expect(await scrapeSum(url, 'otelcol_receiver_refused_spans')).toBe(0);
    expect(await scrapeSum(url, 'otelcol_exporter_send_failed_spans')).toBe(0);
  }, 60_000);
});
