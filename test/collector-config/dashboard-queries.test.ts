/**
 * The dashboard's GenAI panels under both naming modes (decisions 0095, 0121): the
 * token and run-duration queries of `grafana/dashboards/subagent-runs.json`,
 * taken from the file and evaluated by promtool 3 (`promql_expr_test`)
 * against series named as the observer names them under the previous names,
 * the latest names, and a fleet where one service switched and one did not.
 * Each scenario carries the same tokens and the same run durations, so each
 * must give the same answer: a service on either mode is counted, and
 * nothing is hidden or counted twice while a fleet upgrades.
 *
 * @module subagent-otel/test/collector-config/dashboard-queries
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { binary } from '../../scripts/stack/engines.mjs';
import { AGENT_DURATION_BUCKETS } from '../../src/telemetry/semconv.js';
import { runTool } from '../helpers/prometheus.js';

const dashboardPath = fileURLToPath(
  new URL('../../collector-config/grafana/dashboards/subagent-runs.json', import.meta.url),
);

interface Panel {
  readonly title: string;
  readonly targets?: ReadonlyArray<{ readonly expr?: string; readonly legendFormat?: string }>;
}

/** The panel's PromQL target with the given legend, the dashboard variables filled in for "all". */
function query(title: string, legend?: string): string {
  const panels = (JSON.parse(readFileSync(dashboardPath, 'utf8')) as { panels: Panel[] }).panels;
  const target = panels
    .find((p) => p.title === title)
    ?.targets?.find((t) => legend === undefined || t.legendFormat === legend);
  if (target?.expr === undefined) throw new Error(`no query ${legend ?? ''} in the dashboard panel "${title}"`);
  return target.expr.replaceAll('$job', '.*').replaceAll('$agent', '.*').replaceAll('$__rate_interval', '5m');
}

/** One input series of a promtool test: a counter that grows by `perMinute` every minute for 10 minutes. */
interface Series {
  readonly series: string;
  readonly values: string;
}

function counter(name: string, labels: Record<string, string>, perMinute: number): Series {
  const text = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  return { series: `${name}{${text}}`, values: `0+${perMinute}x10` };
}

/**
 * The buckets of a run-duration histogram as the observer exports them (the
 * code's layout, `AGENT_DURATION_BUCKETS`): `fast` runs per minute between
 * 0.8 and 1.6 s, as many again between 1.6 and 3.2 s.
 */
function runDurations(name: string, labels: Record<string, string>, fast: number): Series[] {
  const le = [...AGENT_DURATION_BUCKETS.map(String), '+Inf'];
  return le.map((bound) => {
    const upper = bound === '+Inf' ? Number.POSITIVE_INFINITY : Number(bound);
    const cumulative = upper < 1.6 ? 0 : upper < 3.2 ? fast : 2 * fast;
    return counter(`${name}_bucket`, { ...labels, le: bound }, cumulative);
  });
}

const previousService = {
  job: 'previous-names',
  gen_ai_operation_name: 'invoke_agent',
  gen_ai_provider_name: 'deepseek',
};
const latestService = { job: 'latest-names', gen_ai_operation_name: 'invoke_agent', gen_ai_provider_name: 'deepseek' };

/** Tokens: 60 input and 30 output per minute per service (1 and 0.5 per second). */
const tokens = {
  previous: (labels: Record<string, string>) => [
    counter('gen_ai_client_token_usage_sum', { ...labels, gen_ai_token_type: 'input' }, 60),
    counter('gen_ai_client_token_usage_sum', { ...labels, gen_ai_token_type: 'output' }, 30),
  ],
  latest: (labels: Record<string, string>) => [
    counter(
      'gen_ai_client_inference_usage_input_tokens_total',
      { ...labels, gen_ai_operation_name: 'chat', gen_ai_token_modality: 'unknown' },
      60,
    ),
    counter(
      'gen_ai_client_inference_usage_output_tokens_total',
      { ...labels, gen_ai_operation_name: 'chat', gen_ai_token_modality: 'unknown' },
      30,
    ),
  ],
};

/**
 * Run durations of 240 runs a minute, half of them at most 1.6 s long, so the
 * median is 1.6 s exactly. Previous names: every run in
 * gen_ai.invoke_agent.duration. Latest names: in-process runs there, runs in
 * another process in gen_ai.client.operation.duration.
 */
const durations = {
  previous: (labels: Record<string, string>, fast: number) =>
    runDurations('gen_ai_invoke_agent_duration', { ...labels, gen_ai_agent_name: 'reviewer' }, fast),
  latest: (labels: Record<string, string>, fast: number) => [
    ...runDurations('gen_ai_invoke_agent_duration', { ...labels, gen_ai_agent_name: 'local' }, fast / 2),
    ...runDurations('gen_ai_client_operation_duration', { ...labels, gen_ai_agent_name: 'reviewer' }, fast / 2),
  ],
};

const scenarios: ReadonlyArray<{ readonly name: string; readonly series: Series[]; readonly services: number }> = [
  {
    name: 'previous names only',
    series: [...tokens.previous(previousService), ...durations.previous(previousService, 120)],
    services: 1,
  },
  {
    name: 'latest names only',
    series: [...tokens.latest(latestService), ...durations.latest(latestService, 120)],
    services: 1,
  },
  {
    name: 'one service switched, one not',
    series: [
      ...tokens.previous(previousService),
      ...tokens.latest(latestService),
      ...durations.previous(previousService, 60),
      ...durations.latest(latestService, 60),
    ],
    services: 2,
  },
];

const dir = mkdtempSync(join(tmpdir(), 'subagent-otel-dashboard-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes one promtool unit-test file for `scenario` and runs it. */
function promtoolTest(
  file: string,
  series: Series[],
  tests: Array<{ expr: string; samples: Array<{ labels: string; value: number }> }>,
) {
  const yaml = [
    'evaluation_interval: 1m',
    'tests:',
    '  - interval: 1m',
    '    input_series:',
    ...series.flatMap((s) => [`      - series: '${s.series}'`, `        values: '${s.values}'`]),
    '    promql_expr_test:',
    ...tests.flatMap((t) => [
      `      - expr: ${JSON.stringify(t.expr)}`,
      '        eval_time: 10m',
      '        exp_samples:',
      ...t.samples.flatMap((s) => [`          - labels: '${s.labels}'`, `            value: ${s.value}`]),
    ]),
  ].join('\n');
  writeFileSync(join(dir, file), `${yaml}\n`);
  return runTool(binary('promtool'), ['test', 'rules', file], dir);
}

describe('the dashboard reads both GenAI naming modes (decision 0095)', () => {
  it.each(scenarios)('tokens by type count every service: $name', ({ name, series, services }) => {
    const r = promtoolTest(`tokens-${name.replaceAll(' ', '-')}.yml`, series, [
      {
        expr: query('Tokens by type'),
        samples: [
          { labels: '{gen_ai_token_type="input"}', value: services },
          { labels: '{gen_ai_token_type="output"}', value: services / 2 },
        ],
      },
    ]);
    expect(r.stdout + r.stderr).toContain('SUCCESS');
    expect(r.status).toBe(0);
  });

  it.each(scenarios)('the run-duration median adds both histograms bucket by bucket: $name', ({ name, series }) => {
    const r = promtoolTest(`durations-${name.replaceAll(' ', '-')}.yml`, series, [
      { expr: query('Run duration', 'p50'), samples: [{ labels: '{}', value: 1.6 }] },
    ]);
    expect(r.stdout + r.stderr).toContain('SUCCESS');
    expect(r.status).toBe(0);
  });

  it('the check has teeth: the token query before decision 0095 hid the switched service while the other reported', () => {
    const before =
      'sum by (gen_ai_token_type) (rate(gen_ai_client_token_usage_sum[5m])) or label_replace(sum(rate(gen_ai_client_inference_usage_input_tokens_total[5m])), "gen_ai_token_type", "input", "", "") or label_replace(sum(rate(gen_ai_client_inference_usage_output_tokens_total[5m])), "gen_ai_token_type", "output", "", "")';
    const mixed = scenarios[2]!;
    const r = promtoolTest('tokens-before.yml', mixed.series, [
      {
        expr: before,
        samples: [
          { labels: '{gen_ai_token_type="input"}', value: 2 },
          { labels: '{gen_ai_token_type="output"}', value: 1 },
        ],
      },
    ]);
    expect(r.status).toBe(1);
    expect(r.stdout + r.stderr).toContain('FAILED');
  });
});
