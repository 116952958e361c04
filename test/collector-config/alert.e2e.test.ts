/**
 * End to end on real processes: a real Prometheus server on 127.0.0.1 scrapes
 * two real `@opentelemetry/exporter-prometheus` endpoints every second while
 * scripted runs go through them (75% max-tokens on one, 5% on the other),
 * evaluates the shipped rules every second, and sends alerts to a real
 * Alertmanager running the shipped alertmanager.yml. The rules are rendered
 * from the same source as the committed rules.yml (`render-rules.mjs`), with
 * second-long windows instead of hours; the production windows are proven by
 * `promtool test rules` (promtool.test.ts). Everything is asserted through the
 * servers' HTTP APIs.
 *
 * The metric-producing part, `startScriptedRuns`, stands in for the observer's
 * own endpoint: it records `subagent.runs` with the semconv constants on a
 * real MeterProvider, one batch of runs per scrape. Replace it with scripted
 * runs through the observer without touching the rest.
 *
 * @module subagent-otel/test/collector-config/alert.e2e
 */

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordNames, renderRules } from '../../collector-config/prometheus/render-rules.mjs';
import type { RuleSettings } from '../../collector-config/prometheus/render-rules.mjs';
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_SUBAGENT_OUTPUT_SOURCE,
  ATTR_SUBAGENT_STOP_REASON,
  METRIC_SUBAGENT_RUNS,
  OUTPUT_SOURCE_VALUE_MESSAGE,
  OUTPUT_SOURCE_VALUE_STREAM,
  STOP_REASON_VALUE_COMPLETED,
  STOP_REASON_VALUE_MAX_TOKENS,
  UNIT_RUNS,
} from '../../src/telemetry/semconv.js';
import { getJson, pollUntil, startAlertmanager, startPrometheus } from '../helpers/prometheus.js';
import type { LocalServer } from '../helpers/prometheus.js';

const configDir = fileURLToPath(new URL('../../collector-config/', import.meta.url));

/** The shipped windows, shortened: 10 s of data, pending for 3 s (warning) / 2 s (critical). */
const LIVE_SETTINGS: Partial<RuleSettings> = {
  truncationWindow: '10s',
  truncationWarningFor: '3s',
  truncationCriticalFor: '2s',
  mismatchWindow: '10s',
  malformedWindow: '10s',
};
const RATIO = recordNames('10s').ratio;

/** A metrics endpoint that finishes a scripted batch of runs on every scrape. */
interface ScriptedRuns {
  /** `127.0.0.1:<port>`, for a scrape config. */
  readonly target: string;
  /** Scrapes served so far. */
  scrapes(): number;
  stop(): Promise<void>;
}

/**
 * Serves `/metrics` from a real PrometheusExporter on a free loopback port and,
 * before answering each scrape, records one batch of finished runs:
 * `maxTokens` runs with stop reason max-tokens and `completed` completed ones,
 * for agent `agent`. Every series starts at 0 before the first scrape, so
 * Prometheus sees every increment.
 */
async function startScriptedRuns(batch: { agent: string; maxTokens: number; completed: number }): Promise<ScriptedRuns> {
  const exporter = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true });
  const provider = new MeterProvider({ readers: [exporter] });
  const runs = provider.getMeter('subagent-otel-e2e').createCounter(METRIC_SUBAGENT_RUNS, { unit: UNIT_RUNS });
  const maxTokens = {
    [ATTR_SUBAGENT_STOP_REASON]: STOP_REASON_VALUE_MAX_TOKENS,
    [ATTR_GEN_AI_AGENT_NAME]: batch.agent,
    [ATTR_SUBAGENT_OUTPUT_SOURCE]: OUTPUT_SOURCE_VALUE_STREAM,
  };
  const completed = {
    [ATTR_SUBAGENT_STOP_REASON]: STOP_REASON_VALUE_COMPLETED,
    [ATTR_GEN_AI_AGENT_NAME]: batch.agent,
    [ATTR_SUBAGENT_OUTPUT_SOURCE]: OUTPUT_SOURCE_VALUE_MESSAGE,
  };
  runs.add(0, maxTokens);
  runs.add(0, completed);
  let scrapes = 0;
  const server: Server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.statusCode = 404;
      res.end();
      return;
    }
    if (scrapes > 0) {
      runs.add(batch.maxTokens, maxTokens);
      runs.add(batch.completed, completed);
    }
    scrapes += 1;
    exporter.getMetricsRequestHandler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    target: `127.0.0.1:${port}`,
    scrapes: () => scrapes,
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await provider.shutdown();
    },
  };
}

interface ApiAlert {
  labels: Record<string, string>;
  state: string;
  value: string;
}

async function prometheusAlerts(prom: LocalServer): Promise<ApiAlert[]> {
  const body = (await getJson(`${prom.url}/api/v1/alerts`)) as { data: { alerts: ApiAlert[] } };
  return body.data.alerts;
}

async function instantQuery(prom: LocalServer, query: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const body = (await getJson(`${prom.url}/api/v1/query?query=${encodeURIComponent(query)}`)) as {
    status: string;
    data: { result: { metric: Record<string, string>; value: [number, string] }[] };
  };
  return body.data.result;
}

interface AmAlert {
  labels: Record<string, string>;
  status: { state: string; inhibitedBy: string[] };
}

describe('the truncation alert on a live Prometheus server', () => {
  const started: { stop(): Promise<void> }[] = [];
  let prom: LocalServer;
  let am: LocalServer;

  beforeAll(async () => {
    const high = await startScriptedRuns({ agent: 'deepseek', maxTokens: 6, completed: 2 });
    started.push(high);
    const low = await startScriptedRuns({ agent: 'deepseek', maxTokens: 1, completed: 19 });
    started.push(low);
    am = await startAlertmanager({ config: readFileSync(`${configDir}alertmanager/alertmanager.yml`, 'utf8') });
    started.push(am);
    prom = await startPrometheus({
      config: [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'rule_files: [rules.yml]',
        'alerting:',
        '  alertmanagers:',
        `    - static_configs: [{ targets: ["${am.url.replace('http://', '')}"] }]`,
        'scrape_configs:',
        '  - job_name: subagent-high',
        `    static_configs: [{ targets: ["${high.target}"] }]`,
        '  - job_name: subagent-low',
        `    static_configs: [{ targets: ["${low.target}"] }]`,
        '',
      ].join('\n'),
      files: { 'rules.yml': renderRules(LIVE_SETTINGS) },
    });
    started.push(prom);
  });

  afterAll(async () => {
    for (const s of started.reverse()) await s.stop();
  });

  it('scrapes subagent.runs as subagent_runs_total with the stop reason as a label', async () => {
    const series = await pollUntil(
      async () => {
        const r = await instantQuery(prom, 'subagent_runs_total{job="subagent-high"}');
        return r.length === 2 ? r : undefined;
      },
      { what: 'both subagent_runs_total series of job subagent-high' },
    );
    expect(series.map((s) => s.metric.subagent_stop_reason).sort()).toEqual(['completed', 'max-tokens']);
    expect(series.map((s) => s.metric.gen_ai_agent_name)).toEqual(['deepseek', 'deepseek']);
    expect(series.map((s) => s.metric.subagent_output_source).sort()).toEqual(['message', 'stream']);
  });

  it('fires SubagentMaxTokensTruncationRateHigh, warning and critical, for a 75% max-tokens share', async () => {
    const firing = await pollUntil(
      async () => {
        const mine = (await prometheusAlerts(prom)).filter(
          (a) => a.labels.alertname === 'SubagentMaxTokensTruncationRateHigh' && a.labels.job === 'subagent-high' && a.state === 'firing',
        );
        return mine.length === 2 ? mine : undefined;
      },
      { what: 'both truncation alerts of job subagent-high to fire', timeoutMs: 40_000 },
    );
    expect(firing.map((a) => a.labels.severity).sort()).toEqual(['critical', 'warning']);
    for (const a of firing) {
      expect(a.labels.gen_ai_agent_name).toBe('deepseek');
      expect(Number(a.value)).toBeCloseTo(0.75, 6);
    }
  });

  it('keeps the alert inactive for a 5% share that Prometheus has recorded long enough', async () => {
    // The high-share alerts fired after the same windows and `for` durations,
    // so by now the low-share service had every chance to fire as well.
    await pollUntil(
      async () => {
        const states = (await prometheusAlerts(prom))
          .filter((a) => a.labels.job === 'subagent-high' && a.labels.alertname === 'SubagentMaxTokensTruncationRateHigh')
          .map((a) => a.state);
        return states.length === 2 && states.every((s) => s === 'firing') ? true : undefined;
      },
      { what: 'the high-share alerts to fire first', timeoutMs: 40_000 },
    );
    const ratio = await instantQuery(prom, `${RATIO}{job="subagent-low"}`);
    expect(ratio).toHaveLength(1);
    expect(Number(ratio[0]?.value[1])).toBeCloseTo(0.05, 6);
    const volume = await instantQuery(prom, `${recordNames('10s').runs}{job="subagent-low"}`);
    expect(Number(volume[0]?.value[1])).toBeGreaterThanOrEqual(20);
    const lowAlerts = (await prometheusAlerts(prom)).filter((a) => a.labels.job === 'subagent-low');
    expect(lowAlerts).toEqual([]);
  });

  it('reaches Alertmanager, where the critical alert inhibits the warning of the same service and agent', async () => {
    const alerts = await pollUntil(
      async () => {
        const all = (await getJson(`${am.url}/api/v2/alerts?filter=alertname%3D%22SubagentMaxTokensTruncationRateHigh%22`)) as AmAlert[];
        const mine = all.filter((a) => a.labels.job === 'subagent-high');
        const warning = mine.find((a) => a.labels.severity === 'warning');
        return mine.length === 2 && warning !== undefined && warning.status.state === 'suppressed' ? mine : undefined;
      },
      { what: 'Alertmanager to hold both alerts with the warning inhibited', timeoutMs: 40_000 },
    );
    const critical = alerts.find((a) => a.labels.severity === 'critical');
    const warning = alerts.find((a) => a.labels.severity === 'warning');
    expect(critical?.status.state).toBe('active');
    expect(warning?.status.inhibitedBy.length).toBe(1);
    expect(alerts.filter((a) => a.labels.job === 'subagent-low')).toEqual([]);
  });

  it('accepts every query of the shipped Grafana dashboard', async () => {
    const dashboard = JSON.parse(readFileSync(`${configDir}grafana/dashboards/subagent-runs.json`, 'utf8')) as {
      panels: { targets?: { expr?: string }[] }[];
    };
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).flatMap((t) => (t.expr === undefined ? [] : [t.expr])));
    expect(exprs.length).toBe(8);
    for (const expr of exprs) {
      const query = expr
        .replaceAll('$__rate_interval', '4s')
        .replaceAll('$__range', '1m')
        .replaceAll('$job', '.*')
        .replaceAll('$agent', '.*')
        // The dashboard's 1h recording rule is named for the production window.
        .replaceAll(recordNames('1h').ratio, RATIO)
        .replaceAll(recordNames('1h').runs, recordNames('10s').runs);
      const res = await fetch(`${prom.url}/api/v1/query?query=${encodeURIComponent(query)}`);
      const body = (await res.json()) as { status: string; error?: string };
      expect({ query, status: body.status, error: body.error }).toEqual({ query, status: 'success', error: undefined });
    }
    const byStopReason = await instantQuery(
      prom,
      'sum by (subagent_stop_reason) (increase(subagent_runs_total{job=~"subagent-high"}[4s]))',
    );
    expect(byStopReason.map((r) => r.metric.subagent_stop_reason).sort()).toEqual(['completed', 'max-tokens']);
  });
});
