/**
 * Runs read from coding agents' transcripts, on the real engines: the
 * single-tier stack (the project's collector, Jaeger 2, Prometheus 3,
 * Alertmanager on free loopback ports) fed by the built CLI's `replay` of a
 * Claude Code history over OTLP/HTTP JSON, as a user would send
 * `~/.claude/projects`.
 *
 * The history is made of copies (fresh session and agent ids, times moved to
 * now, so Jaeger's recent-trace search finds them) of the synthetic
 * sessions in test/transcripts/claude-code/synthetic/ (their README says
 * what each is built from): 10 of the 2.1 session with subagents (a Task
 * child cut off at `max_output_tokens` and one that completed, both
 * `Explore`; a `rate_limit` child; a workflow agent), 10 of the 2.0 session
 * with a sibling `Plan` child, and 4 of the 2.0 session cut off at its own
 * output limit. So, by agent: `Explore` 20 runs, 10 at max-tokens (50%:
 * the critical alert); `claude-code` 24 runs, 4 at max-tokens (16.7%: the
 * warning only). Rules are rendered with `for: 1s` (render-rules.mjs, same
 * expressions); every figure is exact; the test waits for conditions.
 *
 * @module subagent-otel/test/stack/transcripts.e2e
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeClaudeHistory } from '../../bench/lib/claude-history.mjs';
import { renderRules } from '../../collector-config/prometheus/render-rules.mjs';
import { startStack } from '../../scripts/stack/stack.mjs';
import type { Stack } from '../../scripts/stack/stack.mjs';
import { runCli } from '../helpers/cli.js';
import { ROOT } from '../helpers/paths.js';
import { getJson, jaegerTraces, promQuery, promValue, tag, waitFor } from './observed.js';

const SERVICE = 'stack-e2e-transcripts';
const SYNTHETIC = join(ROOT, 'test', 'transcripts', 'claude-code', 'synthetic');

let stack: Stack;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'subagent-otel-stack-transcripts-'));
  const history = join(dir, 'claude');
  const now = Date.now() - 60_000;
  writeClaudeHistory(join(SYNTHETIC, 'subagents-2.1'), join(history, 'a'), { copies: 10, latestTime: now });
  writeClaudeHistory(join(SYNTHETIC, 'sibling-2.0'), join(history, 'b'), { copies: 10, latestTime: now });
  writeClaudeHistory(join(SYNTHETIC, 'inline-2.0'), join(history, 'c'), { copies: 4, latestTime: now });
  stack = await startStack({
    dir: join(dir, 'stack'),
    tiers: 1,
    ports: 'free',
    rules: renderRules({ truncationWarningFor: '1s', truncationCriticalFor: '1s' }),
  });
  const r = await runCli(['replay', '--no-progress', '--json', history], '', {
    OTEL_SERVICE_NAME: SERVICE,
    OTEL_EXPORTER_OTLP_ENDPOINT: stack.urls.otlpHttp,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    TRACEPARENT: '',
    SUBAGENT_OTEL_OUT: join(dir, 'unused-out'),
  });
  expect(r.code, r.stderr.toString('utf8')).toBe(0);
  const summary = JSON.parse(r.stdout.toString('utf8')) as {
    runs: number;
    stopReasons: Array<{ stopReason: string; runs: number }>;
  };
  expect(summary.runs).toBe(78);
  expect(summary.stopReasons.find((s) => s.stopReason === 'max-tokens')?.runs).toBe(14);
}, 600_000);

afterAll(async () => {
  await stack?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('transcript runs in Jaeger', () => {
  it('one trace per session, each subagent under the Task call that delegated it', async () => {
    const traces = await waitFor('the 24 session traces', async () => {
      const t = await jaegerTraces(stack.urls.jaeger, SERVICE);
      return t.length === 24 ? t : undefined;
    });
    expect(traces).toHaveLength(24);
    const withChildren = traces.filter(
      (trace) => trace.spans.filter((s) => tag(s, 'gen_ai.operation.name') === 'invoke_agent').length > 1,
    );
    // The 2.1 sessions (4 subagents each) and the 2.0 sessions with a sibling or inline child.
    expect(withChildren).toHaveLength(24);
    for (const trace of withChildren) {
      const ids = new Map(trace.spans.map((s) => [s.spanID, s]));
      const roots = trace.spans.filter((s) => !s.references.some((r) => r.refType === 'CHILD_OF' && ids.has(r.spanID)));
      expect(roots.map((s) => tag(s, 'gen_ai.agent.name'))).toEqual(['claude-code']);
      for (const child of trace.spans.filter(
        (s) => tag(s, 'gen_ai.operation.name') === 'invoke_agent' && s !== roots[0],
      )) {
        const parent = ids.get(child.references.find((r) => r.refType === 'CHILD_OF')?.spanID ?? '');
        expect(tag(parent!, 'gen_ai.operation.name')).toBe('execute_tool');
        expect(String(tag(parent!, 'gen_ai.tool.name'))).toMatch(/^(Task|Agent|Workflow)$/);
      }
    }
  }, 330_000);

  it('finds the cut-off runs by subagent.stop_reason=max-tokens, each with its partial output and the record that says so', async () => {
    const cut = await waitFor('the max-tokens traces', async () => {
      const t = await jaegerTraces(stack.urls.jaeger, SERVICE, { 'subagent.stop_reason': 'max-tokens' });
      return t.length === 14 ? t : undefined;
    });
    expect(cut).toHaveLength(14);
    const spans = cut.flatMap((t) => t.spans).filter((s) => tag(s, 'subagent.stop_reason') === 'max-tokens');
    expect(spans).toHaveLength(14);
    expect(new Set(spans.map((s) => tag(s, 'subagent.stop_reason.inferred_from')))).toEqual(
      new Set(['claude-code:api-error:max_output_tokens']),
    );
    expect(spans.every((s) => String(tag(s, 'subagent.output')).length > 2)).toBe(true);
  }, 330_000);
});

describe('transcript runs in Prometheus 3', () => {
  const sel = (agent: string): string => `{job="${SERVICE}", gen_ai_agent_name="${agent}"}`;

  it('counts the runs by agent and stop reason, exactly', async () => {
    const q = `sum(subagent_runs_total{job="${SERVICE}"})`;
    // 10 × (session, 4 subagents) + 10 × (session, Plan) + 4 × (session, child).
    const total = await waitFor(`${q} = 78`, async () =>
      (await promValue(stack.urls.prometheus, q)) === 78 ? 78 : undefined,
    );
    expect(total).toBe(78);
    expect(await promValue(stack.urls.prometheus, `sum(subagent_runs_total${sel('Explore')})`)).toBe(20);
    expect(
      await promValue(
        stack.urls.prometheus,
        `sum(subagent_runs_total{job="${SERVICE}", gen_ai_agent_name="Explore", subagent_stop_reason="max-tokens"})`,
      ),
    ).toBe(10);
    expect(await promValue(stack.urls.prometheus, `sum(subagent_runs_total${sel('claude-code')})`)).toBe(24);
    expect(
      await promValue(
        stack.urls.prometheus,
        `sum(subagent_runs_total{job="${SERVICE}", gen_ai_agent_name="claude-code", subagent_stop_reason="max-tokens"})`,
      ),
    ).toBe(4);
  }, 330_000);

  it("records what the runs cost, by agent and stop reason, and the dashboard's cost panel has data", async () => {
    const q = `job_gen_ai_agent_name_subagent_stop_reason:subagent_cost_usd:increase1h{job="${SERVICE}", gen_ai_agent_name="Explore", subagent_stop_reason="max-tokens"}`;
    const cost = await waitFor('the cost recording rule', async () => {
      const v = await promValue(stack.urls.prometheus, q);
      return v !== undefined && v > 0 ? v : undefined;
    });
    expect(cost).toBeGreaterThan(0);
    const panel = await promQuery(
      stack.urls.prometheus,
      `sum by (gen_ai_agent_name, subagent_stop_reason) (job_gen_ai_agent_name_subagent_stop_reason:subagent_cost_usd:increase1h{job=~"${SERVICE}", gen_ai_agent_name=~".*"})`,
    );
    expect(panel.map((s) => `${s.metric['gen_ai_agent_name']}/${s.metric['subagent_stop_reason']}`)).toContain(
      'claude-code/max-tokens',
    );
  }, 330_000);

  it('fires the truncation alert: critical for Explore (50%), warning for claude-code (16.7%), and Alertmanager receives them', async () => {
    const ratio = await waitFor('the claude-code truncation ratio', async () =>
      promValue(
        stack.urls.prometheus,
        `job_gen_ai_agent_name:subagent_max_tokens_truncation:ratio1h${sel('claude-code')}`,
      ),
    );
    expect(ratio).toBeCloseTo(4 / 24, 12);
    const firing = await waitFor('the alerts to fire', async () => {
      const body = (await getJson(`${stack.urls.prometheus}/api/v1/alerts`)) as {
        data: { alerts: Array<{ labels: Record<string, string>; state: string }> };
      };
      const a = body.data.alerts.filter(
        (x) =>
          x.labels.alertname === 'SubagentMaxTokensTruncationRateHigh' &&
          x.labels.job === SERVICE &&
          x.state === 'firing',
      );
      return a.length === 3 ? a : undefined;
    });
    expect(firing.map((a) => `${a.labels.gen_ai_agent_name}/${a.labels.severity}`).sort()).toEqual([
      'Explore/critical',
      'Explore/warning',
      'claude-code/warning',
    ]);
    const received = await waitFor('the alerts in Alertmanager', async () => {
      const alerts = (await getJson(`${stack.urls.alertmanager}/api/v2/alerts`)) as Array<{
        labels: Record<string, string>;
        status: { state: string };
      }>;
      const mine = alerts.filter(
        (a) => a.labels.alertname === 'SubagentMaxTokensTruncationRateHigh' && a.labels.job === SERVICE,
      );
      return mine.length === 3 ? mine : undefined;
    });
    const states = Object.fromEntries(
      received.map((a) => [`${a.labels.gen_ai_agent_name}/${a.labels.severity}`, a.status.state]),
    );
    // The shipped inhibit rule: a critical alert silences the warning of the same agent only.
    expect(states).toEqual({
      'Explore/critical': 'active',
      'Explore/warning': 'suppressed',
      'claude-code/warning': 'active',
    });
  }, 330_000);
});
