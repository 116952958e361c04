/**
 * Test helper: evaluates Prometheus rules at explicit timestamps over series a
 * live Prometheus really scraped, so an alert test's verdict does not depend
 * on how fast the machine produced them. Reads the raw samples of a selector
 * from a running server (`/api/v1/query` of a range selector at an explicit
 * `time=`), lays them out as a `promtool test rules` input on a fixed 15 s
 * grid (one grid step per scrape at which any series of the same job changed,
 * so waiting between runs adds no steps), holds the last values for a fixed
 * number of steps, and runs `promtool test rules` with the caller's
 * hand-written expectations at explicit `eval_time`s.
 *
 * Owns only its temporary directory (removed when the run ends).
 *
 * @module subagent-otel/test/helpers/promtool-replay
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { binary } from '../../scripts/stack/engines.mjs';
import { getJson, runTool, type LocalServer, type ToolRun } from './prometheus.js';

/** One series with its raw samples (`[unix seconds, value]`), as Prometheus returns a range selector. */
export interface RawSeries {
  readonly metric: Record<string, string>;
  readonly values: ReadonlyArray<[number, string]>;
}

/** Grid step of the promtool input, in seconds. */
export const GRID_STEP_SECONDS = 15;
/** Most data steps one job may need (30 min of grid): with the hold, everything stays inside a 1 h window. */
const MAX_DATA_STEPS = 120;

/**
 * The raw samples of `selector` over the last `range` before `time` (unix
 * seconds), exactly as stored. Throws on an HTTP error or a non-matrix answer.
 */
export async function rawSamples(
  prom: LocalServer,
  selector: string,
  time: number,
  range = '1h',
): Promise<RawSeries[]> {
  const query = encodeURIComponent(`${selector}[${range}]`);
  const body = (await getJson(`${prom.url}/api/v1/query?query=${query}&time=${time}`)) as {
    data: { resultType: string; result: RawSeries[] };
  };
  if (body.data.resultType !== 'matrix')
    throw new Error(`expected a matrix for ${selector}[${range}], got ${body.data.resultType}`);
  return body.data.result;
}

/** One `input_series` entry of a promtool test. */
export interface InputSeries {
  readonly series: string;
  readonly values: string;
}

/** What {@link gridSeries} laid out. */
export interface GridLayout {
  readonly inputSeries: InputSeries[];
  /** Grid steps holding data (the longest job's), before the hold. */
  readonly dataSteps: number;
  /** The last held step as a promtool duration (`<seconds>s`): evaluate there. */
  readonly end: string;
}

/**
 * Lays `series` out on the 15 s grid: per value of `groupLabel` (the job),
 * one step per distinct scrape time at which any of that group's series
 * changed, in time order, each series at its latest value then (`_` before
 * its first sample); then every
 * series keeps its last value for `holdSteps` more steps (all series end at
 * the same step). Label values are kept verbatim, `instance` dropped (its
 * port differs per run). Throws when a group needs more than 120 data steps.
 */
export function gridSeries(series: readonly RawSeries[], groupLabel: string, holdSteps: number): GridLayout {
  const groups = new Map<string, RawSeries[]>();
  for (const s of series) {
    const key = s.metric[groupLabel] ?? '';
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  const laidOut: Array<{ labels: string; values: string[] }> = [];
  let dataSteps = 0;
  for (const [group, members] of groups) {
    const times = [...new Set(members.flatMap((m) => m.values.map(([t]) => t)))].sort((a, b) => a - b);
    const kept: number[] = [];
    let previous = '';
    for (const t of times) {
      // A scrape that changed nothing adds no step: the layout does not depend on how long the runs took.
      const row = JSON.stringify(members.map((m) => latestAt(m, t)));
      if (row !== previous) kept.push(t);
      previous = row;
    }
    if (kept.length > MAX_DATA_STEPS)
      throw new Error(`job ${group} changed at ${kept.length} scrapes; at most ${MAX_DATA_STEPS} fit the 1 h window`);
    dataSteps = Math.max(dataSteps, kept.length);
    for (const m of members) {
      const values = kept.map((t) => latestAt(m, t) ?? '_');
      laidOut.push({ labels: seriesName(m.metric), values });
    }
  }
  const total = dataSteps + holdSteps;
  const inputSeries = laidOut.map(({ labels, values }) => {
    const last = [...values].reverse().find((v) => v !== '_') ?? '0';
    return { series: labels, values: [...values, `${last}+0x${total - values.length}`].join(' ') };
  });
  return { inputSeries, dataSteps, end: `${(total - 1) * GRID_STEP_SECONDS}s` };
}

/** The series' latest value at or before `t`, or `undefined` before its first sample. */
function latestAt(m: RawSeries, t: number): string | undefined {
  let value: string | undefined;
  for (const [time, v] of m.values) if (time <= t) value = v;
  return value;
}

function seriesName(metric: Record<string, string>): string {
  const { __name__: name, instance: _instance, ...labels } = metric;
  const inner = Object.entries(labels)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(', ');
  return `${name ?? ''}{${inner}}`;
}

/** A promtool `alert_rule_test` / `promql_expr_test` entry, written by the test. */
export type PromtoolCheck = Record<string, unknown>;

/**
 * Runs `promtool test rules` over `rules` (the rules file text) with one
 * test: `layout`'s input series on the 15 s grid and the given checks.
 * @returns promtool's outcome (status 0: every expectation held). Throws
 *   "promtool not found: ..." when it is missing.
 */
export function runPromtoolTest(
  rules: string,
  layout: GridLayout,
  checks: { readonly promql_expr_test?: PromtoolCheck[]; readonly alert_rule_test?: PromtoolCheck[] },
): ToolRun {
  const promtool = binary('promtool');
  const dir = mkdtempSync(join(tmpdir(), 'subagent-otel-promtool-'));
  try {
    writeFileSync(join(dir, 'rules.yml'), rules);
    const test = {
      rule_files: ['rules.yml'],
      evaluation_interval: `${GRID_STEP_SECONDS}s`,
      tests: [{ interval: `${GRID_STEP_SECONDS}s`, input_series: layout.inputSeries, ...checks }],
    };
    writeFileSync(join(dir, 'observed.test.yml'), stringify(test));
    return runTool(promtool, ['test', 'rules', 'observed.test.yml'], dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
