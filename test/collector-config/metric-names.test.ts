/**
 * One source of truth for metric and label names: every Prometheus metric
 * name and label name that the shipped rules (`collector-config/prometheus/
 * rules.yml`) and the Grafana dashboard (`collector-config/grafana/dashboards/
 * subagent-runs.json`) use must be derived from a constant in
 * `src/telemetry/semconv.ts`, or be a recording rule defined in rules.yml, or
 * the collector's span-derived run counter defined in `otelcol.yaml`.
 *
 * The conversion mirrors what both exporters do (the observer's
 * `@opentelemetry/exporter-prometheus` and the collector's prometheus exporter
 * with the unit clearing in otelcol.yaml): every character outside
 * `[a-zA-Z0-9_:]` becomes `_`; counters get `_total`; histograms are exposed
 * as `_bucket`, `_sum` and `_count`; units are never appended.
 *
 * @module subagent-otel/test/collector-config/metric-names
 */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { DataPoint, Histogram } from '@opentelemetry/sdk-metrics';
import type { RunRecord } from '../../src/observe/run-record.js';
import * as semconv from '../../src/telemetry/semconv.js';
import type { SemconvStability } from '../../src/telemetry/semconv.js';
import { telemetryHarness } from '../helpers/telemetry-harness.js';

const configDir = fileURLToPath(new URL('../../collector-config/', import.meta.url));
const read = (rel: string): string => readFileSync(configDir + rel, 'utf8');

/** Instrument kind of every METRIC_* constant; a new constant must be added here. */
const INSTRUMENTS: Readonly<Record<string, 'counter' | 'histogram'>> = {
  [semconv.METRIC_SUBAGENT_RUNS]: 'counter',
  [semconv.METRIC_SUBAGENT_FRAMES_MALFORMED]: 'counter',
  [semconv.METRIC_SUBAGENT_OUTPUT_MISMATCHES]: 'counter',
  [semconv.METRIC_SUBAGENT_TELEMETRY_DROPPED]: 'counter',
  [semconv.METRIC_SUBAGENT_CHECKS]: 'counter',
  [semconv.METRIC_SUBAGENT_COST_USD]: 'counter',
  // Previous GenAI names only (OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_previous, for one release: decision 0121).
  [semconv.METRIC_GEN_AI_CLIENT_TOKEN_USAGE]: 'histogram',
  [semconv.METRIC_GEN_AI_INVOKE_AGENT_DURATION]: 'histogram',
  [semconv.METRIC_GEN_AI_EXECUTE_TOOL_DURATION]: 'histogram',
  // GenAI names of semantic-conventions-genai v0.1.0, the default (decisions 0070, 0121).
  [semconv.METRIC_GEN_AI_CLIENT_OPERATION_DURATION]: 'histogram',
  [semconv.METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_INPUT_TOKENS]: 'counter',
  [semconv.METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_OUTPUT_TOKENS]: 'counter',
  [semconv.METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_CACHE_READ_INPUT_TOKENS]: 'counter',
  [semconv.METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_CACHE_WRITE_INPUT_TOKENS]: 'counter',
  [semconv.METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_REASONING_OUTPUT_TOKENS]: 'counter',
  [semconv.METRIC_GEN_AI_CLIENT_INFERENCE_OPERATION_INPUT_TOKENS]: 'histogram',
  [semconv.METRIC_GEN_AI_CLIENT_INFERENCE_OPERATION_OUTPUT_TOKENS]: 'histogram',
  [semconv.METRIC_GEN_AI_INVOKE_AGENT_INFERENCE_CALLS]: 'histogram',
  [semconv.METRIC_GEN_AI_INVOKE_AGENT_TOOL_CALLS]: 'histogram',
};

/** OpenTelemetry name -> Prometheus name body (dots, hyphens, ... to `_`). */
function sanitize(name: string): string {
  return name.replace(/[^a-zA-Z0-9_:]/g, '_');
}

/** Every series name an instrument appears under in Prometheus. */
function prometheusNames(name: string, kind: 'counter' | 'histogram'): string[] {
  const base = sanitize(name);
  return kind === 'counter' ? [`${base}_total`] : [`${base}_bucket`, `${base}_sum`, `${base}_count`];
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${what} is not a mapping`);
  return value as Record<string, unknown>;
}

function list(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`${what} is not a list`);
  return value;
}

const semconvMetricConstants = Object.entries(semconv).filter(([key]) => key.startsWith('METRIC_'));
const semconvAttributeKeys = Object.entries(semconv)
  .filter(([key]) => key.startsWith('ATTR_'))
  .map(([, value]) => String(value));

/** Metric names the span-derived counter of the collector's count connector defines. */
function countConnectorMetrics(configFile: string): string[] {
  const cfg = record(parse(read(configFile)), configFile);
  const connectors = record(cfg.connectors, `${configFile} connectors`);
  const names: string[] = [];
  for (const [id, def] of Object.entries(connectors)) {
    if (id.split('/')[0] !== 'count') continue;
    names.push(...Object.keys(record(record(def, id).spans, `${id}.spans`)));
  }
  return names;
}

const allowedMetrics = new Set<string>([
  ...semconvMetricConstants.flatMap(([, name]) => {
    const kind = INSTRUMENTS[String(name)];
    return kind === undefined ? [] : prometheusNames(String(name), kind);
  }),
  ...countConnectorMetrics('otelcol.yaml').flatMap((name) => prometheusNames(name, 'counter')),
]);
const allowedLabels = new Set<string>([...semconvAttributeKeys.map(sanitize), 'job', 'instance', 'le']);

/** Names found in one PromQL expression (or one Grafana `label_values(...)` query). */
interface Names {
  metrics: string[];
  recorded: string[];
  labels: string[];
}

/**
 * Pulls metric names, recording-rule names (they contain `:`) and label names
 * out of a PromQL expression with regular expressions: enough for the
 * expressions this project writes (selectors, aggregations with by/on lists,
 * functions, Grafana variables).
 */
function extractNames(expression: string): Names {
  const labels: string[] = [];
  let expr = expression.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const labelValues = /^\s*label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$/s.exec(expr);
  if (labelValues !== null) {
    labels.push(labelValues[2] ?? '');
    expr = labelValues[1] ?? '';
  }
  expr = expr.replace(/\{([^}]*)\}/g, (_m, inner: string) => {
    for (const m of inner.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)) labels.push(m[1] ?? '');
    return ' ';
  });
  expr = expr.replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (_m, inner: string) => {
    for (const l of inner.split(',')) if (l.trim() !== '') labels.push(l.trim());
    return ' ';
  });
  expr = expr.replace(/\$\{?[a-zA-Z_][a-zA-Z0-9_]*\}?/g, ' ').replace(/\[[^\]]*\]/g, ' ');
  const idents = [...expr.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map((m) => m[0]);
  return {
    metrics: idents.filter((i) => !i.includes(':') && (i.startsWith('subagent_') || i.startsWith('gen_ai_'))),
    recorded: idents.filter((i) => i.includes(':')),
    labels,
  };
}

function rulesDocument(): Record<string, unknown> {
  return record(parse(read('prometheus/rules.yml')), 'rules.yml');
}

function ruleList(): Record<string, unknown>[] {
  return list(rulesDocument().groups, 'groups').flatMap((g, i) =>
    list(record(g, `group ${i}`).rules, `group ${i} rules`).map((r, j) => record(r, `rule ${i}.${j}`)),
  );
}

function dashboard(): Record<string, unknown> {
  return record(JSON.parse(read('grafana/dashboards/subagent-runs.json')) as unknown, 'dashboard');
}

/** Every PromQL string in the dashboard: panel targets and query variables. */
function dashboardQueries(): string[] {
  const d = dashboard();
  const out: string[] = [];
  for (const p of list(d.panels, 'panels')) {
    for (const t of list(record(p, 'panel').targets ?? [], 'targets')) {
      const expr = record(t, 'target').expr;
      if (typeof expr === 'string') out.push(expr);
    }
  }
  for (const v of list(record(d.templating, 'templating').list, 'templating.list')) {
    const variable = record(v, 'variable');
    if (variable.type === 'query') out.push(String(record(variable.query, 'variable query').query));
  }
  return out;
}

function collect(expressions: readonly string[]): Names {
  const all: Names = { metrics: [], recorded: [], labels: [] };
  for (const e of expressions) {
    const n = extractNames(e);
    all.metrics.push(...n.metrics);
    all.recorded.push(...n.recorded);
    all.labels.push(...n.labels);
  }
  const uniq = (xs: string[]): string[] => [...new Set(xs)].sort();
  return { metrics: uniq(all.metrics), recorded: uniq(all.recorded), labels: uniq(all.labels) };
}

describe('metric names in the rules and the dashboard', () => {
  it('converts the semconv metric constants to the Prometheus names both exporters expose', () => {
    expect(prometheusNames(semconv.METRIC_SUBAGENT_RUNS, 'counter')).toEqual(['subagent_runs_total']);
    expect(prometheusNames(semconv.METRIC_SUBAGENT_OUTPUT_MISMATCHES, 'counter')).toEqual([
      'subagent_output_mismatches_total',
    ]);
    expect(prometheusNames(semconv.METRIC_SUBAGENT_FRAMES_MALFORMED, 'counter')).toEqual([
      'subagent_frames_malformed_total',
    ]);
    expect(prometheusNames(semconv.METRIC_GEN_AI_INVOKE_AGENT_DURATION, 'histogram')).toEqual([
      'gen_ai_invoke_agent_duration_bucket',
      'gen_ai_invoke_agent_duration_sum',
      'gen_ai_invoke_agent_duration_count',
    ]);
    expect(sanitize(semconv.ATTR_SUBAGENT_STOP_REASON)).toBe('subagent_stop_reason');
    expect(sanitize(semconv.ATTR_GEN_AI_TOKEN_TYPE)).toBe('gen_ai_token_type');
  });

  it('knows the instrument kind of every METRIC_ constant in semconv.ts', () => {
    const unknownKinds = semconvMetricConstants
      .map(([, name]) => String(name))
      .filter((name) => INSTRUMENTS[name] === undefined);
    expect(unknownKinds).toEqual([]);
  });

  it('finds metric, recording-rule and label names in a PromQL expression', () => {
    expect(
      extractNames(
        'sum by (job, gen_ai_agent_name) (rate(subagent_runs_total{subagent_stop_reason="max-tokens", job=~"$job"}[$__rate_interval]))' +
          ' / on (job) job_gen_ai_agent_name:subagent_runs:increase1h',
      ),
    ).toEqual({
      metrics: ['subagent_runs_total'],
      recorded: ['job_gen_ai_agent_name:subagent_runs:increase1h'],
      labels: ['subagent_stop_reason', 'job', 'job', 'gen_ai_agent_name', 'job'],
    });
    expect(extractNames('label_values(subagent_runs_total{job=~"$job"}, gen_ai_agent_name)')).toEqual({
      metrics: ['subagent_runs_total'],
      recorded: [],
      labels: ['gen_ai_agent_name', 'job'],
    });
  });

  it('the span-derived run counter of the collector is named after subagent.runs', () => {
    expect(countConnectorMetrics('otelcol.yaml')).toEqual([`${semconv.METRIC_SUBAGENT_RUNS}.from_spans`]);
    expect(countConnectorMetrics('otelcol.agent.yaml')).toEqual([`${semconv.METRIC_SUBAGENT_RUNS}.from_spans`]);
  });

  it('the rules use only metric names the code emits', () => {
    const names = collect(ruleList().map((r) => String(r.expr)));
    expect(names.metrics).toEqual([
      'subagent_cost_usd_total',
      'subagent_frames_malformed_total',
      'subagent_output_mismatches_total',
      'subagent_runs_from_spans_total',
      'subagent_runs_total',
    ]);
    expect(names.metrics.filter((m) => !allowedMetrics.has(m))).toEqual([]);
  });

  it('the rules use only label names derived from semconv attributes', () => {
    const names = collect(ruleList().map((r) => String(r.expr)));
    const templated = ruleList().flatMap((r) =>
      Object.values(record(r.annotations ?? {}, 'annotations')).flatMap((text) =>
        [...String(text).matchAll(/\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)/g)].map((m) => m[1] ?? ''),
      ),
    );
    expect(names.labels).toEqual(['gen_ai_agent_name', 'job', 'subagent_frame_origin', 'subagent_stop_reason']);
    expect([...names.labels, ...templated].filter((l) => !allowedLabels.has(l))).toEqual([]);
  });

  it('every recording rule the rules read is defined in rules.yml', () => {
    const defined = new Set(ruleList().flatMap((r) => (typeof r.record === 'string' ? [r.record] : [])));
    const used = collect(ruleList().map((r) => String(r.expr))).recorded;
    expect(used.length).toBeGreaterThan(0);
    expect(used.filter((r) => !defined.has(r))).toEqual([]);
  });

  it('the dashboard uses only metric names the code emits and recording rules that exist', () => {
    const names = collect(dashboardQueries());
    expect(names.metrics).toEqual([
      'gen_ai_client_inference_usage_input_tokens_total',
      'gen_ai_client_inference_usage_output_tokens_total',
      'gen_ai_client_operation_duration_bucket',
      'gen_ai_client_token_usage_sum',
      'gen_ai_invoke_agent_duration_bucket',
      'subagent_frames_malformed_total',
      'subagent_output_mismatches_total',
      'subagent_runs_from_spans_total',
      'subagent_runs_total',
    ]);
    expect(names.metrics.filter((m) => !allowedMetrics.has(m))).toEqual([]);
    const defined = new Set(ruleList().flatMap((r) => (typeof r.record === 'string' ? [r.record] : [])));
    expect(names.recorded).toEqual([
      'job_gen_ai_agent_name:subagent_max_tokens_truncation:ratio1h',
      'job_gen_ai_agent_name:subagent_runs:increase1h',
      'job_gen_ai_agent_name_subagent_stop_reason:subagent_cost_usd:increase1h',
    ]);
    expect(names.recorded.filter((r) => !defined.has(r))).toEqual([]);
  });

  it('the dashboard groups and filters only by label names derived from semconv attributes', () => {
    const names = collect(dashboardQueries());
    expect(names.labels.filter((l) => !allowedLabels.has(l))).toEqual([]);
    expect(names.labels).toContain('subagent_output_source');
    expect(names.labels).toContain('gen_ai_token_type');
  });
});

/**
 * What the observer really exports under one naming mode, in Prometheus form:
 * the series names and label names of a max-tokens run with a model call and a
 * tool call, a run in process, a mismatch, a priced run and malformed frames,
 * through a real SDK pipeline.
 */
async function emitted(mode: SemconvStability): Promise<{ metrics: Set<string>; labels: Set<string> }> {
  const h = telemetryHarness({ capture: false }, mode);
  const T0 = 1_700_000_000_000;
  const run: RunRecord = {
    runId: 'run-1',
    source: 'sdk-subagent',
    agentName: 'reviewer',
    provider: 'deepseek',
    model: 'deepseek-chat',
    startTime: T0,
    endTime: T0 + 2000,
    stopReason: 'max-tokens',
    output: [{ type: 'text', text: 'partial' }],
    outputSource: 'stream',
    emptyMessages: 0,
    usage: {
      inputTokens: 10,
      outputTokens: 5,
      cacheReadTokens: 2,
      cacheWriteTokens: 1,
      reasoningTokens: 1,
      reported: true,
    },
    steps: [
      {
        step: 0,
        startTime: T0 + 10,
        endTime: T0 + 900,
        usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 2, cacheWriteTokens: 1, reasoningTokens: 1 },
        finishReason: 'max-tokens',
      },
    ],
    toolCalls: [{ callId: 'call-1', name: 'read', startTime: T0 + 950, endTime: T0 + 1000, isError: false }],
    reported: { output: [{ type: 'text', text: 'something else' }] },
    cost: { amount: 0.01, currency: 'USD', unpricedModels: [], pricedCalls: 1 },
  };
  h.runs.onRunEnd(run);
  h.runs.onRunEnd({ ...run, runId: 'run-2', inProcess: true, stopReason: 'completed' });
  h.runs.onMalformed('agent->client', { code: 'not-json', message: 'Unexpected token' });
  await h.reader.forceFlush();
  const metrics = new Set<string>();
  const labels = new Set<string>();
  for (const metric of h.metricExporter
    .getMetrics()
    .at(-1)
    ?.scopeMetrics.flatMap((m) => m.metrics) ?? []) {
    const points = metric.dataPoints as DataPoint<number | Histogram>[];
    const histogram = points.some((p) => typeof p.value !== 'number');
    for (const name of prometheusNames(metric.descriptor.name, histogram ? 'histogram' : 'counter')) metrics.add(name);
    for (const p of points) for (const key of Object.keys(p.attributes)) labels.add(sanitize(key));
  }
  await h.tracerProvider.shutdown();
  await h.meterProvider.shutdown();
  return { metrics, labels };
}

describe('the rules and the dashboard read both GenAI naming modes (decision 0121)', () => {
  const collectorMetrics = new Set(
    countConnectorMetrics('otelcol.yaml').flatMap((name) => prometheusNames(name, 'counter')),
  );
  const scrapeLabels = new Set(['job', 'instance', 'le']);

  it.each(['latest', 'previous'] as const)(
    '%s names: every series and label the rules read is exported',
    async (mode) => {
      const out = await emitted(mode);
      const names = collect(ruleList().map((r) => String(r.expr)));
      expect(names.metrics.filter((m) => !out.metrics.has(m) && !collectorMetrics.has(m))).toEqual([]);
      expect(names.labels.filter((l) => !out.labels.has(l) && !scrapeLabels.has(l))).toEqual([]);
    },
  );

  it.each(['latest', 'previous'] as const)(
    '%s names: the dashboard reads a token series and a run-duration series of the mode',
    async (mode) => {
      const out = await emitted(mode);
      const read = collect(dashboardQueries()).metrics.filter((m) => m.startsWith('gen_ai_'));
      const tokens = read.filter((m) => m.includes('token'));
      const durations = read.filter((m) => m.endsWith('duration_bucket'));
      expect(
        tokens.filter((m) => out.metrics.has(m)).length,
        `${mode}: token series the dashboard reads`,
      ).toBeGreaterThan(0);
      expect(
        durations.filter((m) => out.metrics.has(m)).length,
        `${mode}: duration series the dashboard reads`,
      ).toBeGreaterThan(0);
    },
  );

  it('every GenAI series the dashboard reads is exported by one mode or the other', async () => {
    const latest = await emitted('latest');
    const previous = await emitted('previous');
    const read = collect(dashboardQueries()).metrics.filter((m) => m.startsWith('gen_ai_'));
    expect(read.filter((m) => !latest.metrics.has(m) && !previous.metrics.has(m))).toEqual([]);
    // Each mode has series of its own there: a dashboard reading one mode only would fail one of these.
    expect(read.filter((m) => latest.metrics.has(m) && !previous.metrics.has(m))).toEqual([
      'gen_ai_client_inference_usage_input_tokens_total',
      'gen_ai_client_inference_usage_output_tokens_total',
      'gen_ai_client_operation_duration_bucket',
    ]);
    expect(read.filter((m) => previous.metrics.has(m) && !latest.metrics.has(m))).toEqual([
      'gen_ai_client_token_usage_sum',
    ]);
  });
});
