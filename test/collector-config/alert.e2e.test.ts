/**
 * End to end on real processes: the truncation alert computed from the real
 * observer's own metrics. Two `subagent-otel proxy --prometheus-port <port>`
 * processes (the built CLI) each run the scripted SDK runtime
 * (`dist/fixtures/sdk-runtime.js`); the test speaks JSON-RPC to them over
 * their stdin and stdout, one `session/prompt` at a time, choosing each run's
 * scenario (`scenario:empty-message` stops at max-tokens,
 * `scenario:completed` completes). A real Prometheus server on loopback
 * scrapes both observers' `/metrics` every second, evaluates the rules every
 * second and sends alerts to a real Alertmanager running the shipped
 * alertmanager.yml. Everything is asserted through the servers' HTTP APIs.
 *
 * The rules are rendered from the same source as the committed rules.yml
 * (`render-rules.mjs`), with second-long `for` durations and the production
 * 1 h window: the window holds every run of the test however long the runs
 * take, so nothing waits for a live window to fill and no verdict depends on
 * the machine's speed. The production `for` durations are evaluated by
 * `promtool test rules` at explicit timestamps over the series this
 * Prometheus really scraped (`test/helpers/promtool-replay.ts`), and
 * promtool.test.ts proves them on hand-written series.
 *
 * A fixed number of runs go in step with the scrapes, without sleeping: after
 * each batch the driver polls Prometheus until the latest sample of
 * `subagent_runs_total` of both jobs counts every run answered so far, then
 * sends the next, {@link BATCHES} batches in all. Job `subagent-high` gets 3
 * max-tokens runs of every 4, job `subagent-low` 1 of every 20. Conditions are
 * awaited with budgets far above their normal time ({@link CONDITION_BUDGET_MS}).
 *
 * The observers listen on other loopback addresses than the default
 * 127.0.0.1, one set by `--prometheus-host`, one by
 * `SUBAGENT_OTEL_PROMETHEUS_HOST`, so a scrape succeeds only if the option
 * reached the endpoint (Linux routes all of 127.0.0.0/8 to the loopback).
 *
 * @module subagent-otel/test/collector-config/alert.e2e
 */

import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordNames, renderRules } from '../../collector-config/prometheus/render-rules.mjs';
import type { RuleSettings } from '../../collector-config/prometheus/render-rules.mjs';
import { finished, rpc, spawnCli } from '../helpers/cli.js';
import type { Finished } from '../helpers/cli.js';
import { FIXTURE_SDK_RUNTIME } from '../helpers/paths.js';
import {
  freePort,
  getJson,
  instantQuery,
  pollUntil,
  prometheusAlerts,
  startAlertmanager,
  startPrometheus,
} from '../helpers/prometheus.js';
import type { LocalServer } from '../helpers/prometheus.js';
import { gridSeries, rawSamples, runPromtoolTest } from '../helpers/promtool-replay.js';

const configDir = fileURLToPath(new URL('../../collector-config/', import.meta.url));

/** The shipped 1 h windows (they hold every run of the test), pending for 3 s (warning) / 2 s (critical) instead of minutes. */
const LIVE_SETTINGS: Partial<RuleSettings> = {
  truncationWarningFor: '3s',
  truncationCriticalFor: '2s',
};
const RECORDS = recordNames('1h');

/** Scenarios of the scripted SDK runtime used here (src/fixtures/README.md). */
type Scenario = 'empty-message' | 'completed';

/** Job `subagent-high`: 3 of 4 runs stop at max-tokens. */
const HIGH_BATCH: readonly Scenario[] = ['empty-message', 'empty-message', 'empty-message', 'completed'];
/** Job `subagent-low`: 1 of 20 runs stops at max-tokens. */
const LOW_BATCH: readonly Scenario[] = ['empty-message', ...Array.from({ length: 19 }, (): Scenario => 'completed')];

/** Batches sent to each runtime: job subagent-high gets 24 runs (18 max-tokens), subagent-low 120 (6 max-tokens). */
const BATCHES = 6;
/** How long any awaited condition may take: ten times and more what it takes on a loaded 2-core machine (a few seconds). */
const CONDITION_BUDGET_MS = 120_000;
/** Per-test budget: the driver's batches plus the conditions awaited after them. */
const TEST_BUDGET_MS = 300_000;

/** One `subagent-otel proxy` in front of the scripted runtime, with its stdin held open. */
interface ObservedRuntime {
  /** The Prometheus scrape job that reads it. */
  readonly job: string;
  /** `<host>:<port>` of its `/metrics` endpoint. */
  readonly target: string;
  /** Sends one JSON-RPC request; resolves with its `result`, rejects on an `error` answer or when the proxy exits first. */
  request(method: string, params?: unknown): Promise<unknown>;
  /** Runs the scenarios one after another, each prompt answered before the next is sent. */
  runBatch(batch: readonly Scenario[]): Promise<void>;
  /** `session/prompt` requests answered so far, per scenario. */
  readonly answered: Record<Scenario, number>;
  /** Ends its stdin (the runtime then exits once every prompt is answered). */
  endInput(): void;
  /** Resolves when the proxy exited and its streams closed. */
  readonly exited: Promise<Finished>;
  /** Ends it (SIGTERM, forwarded to the runtime) if it still runs and removes its output folder. */
  stop(): Promise<void>;
}

/**
 * Starts `node dist/cli/main.js proxy --prometheus-port <port> [--prometheus-host <host>]
 * --out <tmp> -- node dist/fixtures/sdk-runtime.js` and reads its stdout as
 * NDJSON, matching answers to requests by id.
 */
async function startObservedRuntime(
  job: string,
  host: { readonly flag: string } | { readonly env: string },
): Promise<ObservedRuntime> {
  const port = await freePort();
  const address = 'flag' in host ? host.flag : host.env;
  const out = mkdtempSync(join(tmpdir(), 'subagent-otel-alert-e2e-'));
  const child: ChildProcessWithoutNullStreams = spawnCli(
    [
      'proxy',
      '--prometheus-port',
      String(port),
      ...('flag' in host ? ['--prometheus-host', host.flag] : []),
      '--out',
      out,
      '--',
      process.execPath,
      FIXTURE_SDK_RUNTIME,
    ],
    'env' in host ? { SUBAGENT_OTEL_PROMETHEUS_HOST: host.env } : {},
  );
  const exited = finished(child);
  child.stdin.on('error', () => undefined); // EPIPE when the proxy died: the pending requests are rejected through `exited` instead

  const pending = new Map<number, { resolve(result: unknown): void; reject(error: Error): void }>();
  const idleWaiters = new Map<string, Array<() => void>>();
  const nextIdle = (sessionId: string): Promise<void> =>
    new Promise((resolve) => {
      const queue = idleWaiters.get(sessionId) ?? [];
      queue.push(resolve);
      idleWaiters.set(sessionId, queue);
    });
  let nextId = 1;
  let isClosed = false;
  const decoder = new StringDecoder('utf8');
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += decoder.write(chunk);
    let nl = buffered.indexOf('\n');
    while (nl !== -1) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      nl = buffered.indexOf('\n');
      let message: {
        id?: unknown;
        result?: unknown;
        error?: { code: number; message: string };
        method?: unknown;
        params?: { sessionId?: unknown; status?: unknown };
      };
      try {
        message = JSON.parse(line) as typeof message;
      } catch {
        // SyntaxError: the scripted scenarios used here write JSON only; anything else is not an answer.
        continue;
      }
      // The runtime answers a prompt on queueing; its run ends at the session's idle status.
      if (
        message.method === 'session.status' &&
        message.params?.status === 'idle' &&
        typeof message.params.sessionId === 'string'
      ) {
        idleWaiters.get(message.params.sessionId)?.shift()?.();
        continue;
      }
      if (typeof message.id !== 'number') continue;
      const waiter = pending.get(message.id);
      if (waiter === undefined) continue;
      pending.delete(message.id);
      if (message.error !== undefined)
        waiter.reject(new Error(`${job}: request ${message.id} failed: ${JSON.stringify(message.error)}`));
      else waiter.resolve(message.result);
    }
  });
  void exited.then((r) => {
    isClosed = true;
    for (const [id, waiter] of pending) {
      waiter.reject(
        new Error(
          `${job}: the proxy exited (code ${r.code}, signal ${r.signal}) before answering request ${id}: ${r.stderr.toString('utf8')}`,
        ),
      );
    }
    pending.clear();
  });

  const request = (method: string, params?: unknown): Promise<unknown> => {
    if (isClosed) return Promise.reject(new Error(`${job}: the proxy has exited; cannot send ${method}`));
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      child.stdin.write(rpc(id, method, params));
    });
  };
  const answered: Record<Scenario, number> = { 'empty-message': 0, completed: 0 };

  return {
    job,
    target: `${address}:${port}`,
    request,
    answered,
    async runBatch(batch) {
      for (const scenario of batch) {
        const idle = nextIdle(`${job}-session`);
        await request('session/prompt', {
          sessionId: `${job}-session`,
          contentBlocks: [{ type: 'text', text: `scenario:${scenario}` }],
        });
        await Promise.race([idle, exited.then(() => undefined)]);
        answered[scenario] += 1;
      }
    },
    endInput: () => child.stdin.end(),
    exited,
    async stop() {
      if (!isClosed) child.kill('SIGTERM');
      await exited;
      rmSync(out, { recursive: true, force: true });
    },
  };
}

interface AmAlert {
  labels: Record<string, string>;
  status: { state: string; inhibitedBy: string[] };
}

/** Runs being fed to the observers in step with Prometheus's scrapes. */
interface Driver {
  /** Batches sent and seen by Prometheus so far (per runtime). */
  batches(): number;
  /** `work`, unless the driver fails first: then rejects with the driver's error. */
  whileDriving<T>(work: Promise<T>): Promise<T>;
  /** Resolves once every batch was sent and scraped; rejects with the driver's error. */
  done(): Promise<void>;
}

/**
 * Sends one batch to every runtime at the same time, waits until
 * Prometheus's latest sample of `subagent_runs_total` of each job counts every
 * run answered so far, and repeats until {@link BATCHES} batches were seen.
 */
function startDriving(
  prom: LocalServer,
  feeds: readonly { runtime: ObservedRuntime; batch: readonly Scenario[] }[],
): Driver {
  let batches = 0;
  const selector = `job=~"${feeds.map((f) => f.runtime.job).join('|')}"`;
  const loop = (async () => {
    while (batches < BATCHES) {
      await Promise.all(feeds.map((f) => f.runtime.runBatch(f.batch)));
      await pollUntil(
        async () => {
          const totals = await instantQuery(prom, `sum by (job) (subagent_runs_total{${selector}})`);
          const seen = feeds.every(({ runtime }) => {
            const sent = runtime.answered['empty-message'] + runtime.answered.completed;
            return totals.some((t) => t.metric.job === runtime.job && Number(t.value[1]) === sent);
          });
          return seen ? true : undefined;
        },
        {
          what: `Prometheus to scrape batch ${batches + 1} from every observer`,
          timeoutMs: CONDITION_BUDGET_MS,
          intervalMs: 100,
        },
      );
      batches += 1;
    }
  })();
  // Marks a failure as handled here; it reaches the tests through whileDriving() and done().
  loop.catch(() => undefined);
  // Settles only when the driver fails: a driver that finished leaves the awaited work to decide.
  const failure = loop.then(() => new Promise<never>(() => undefined));
  return {
    batches: () => batches,
    whileDriving: (work) => Promise.race([work, failure]),
    done: () => loop,
  };
}

describe('the truncation alert on a live Prometheus server scraping the observer', () => {
  const started: { stop(): Promise<void> }[] = [];
  let high: ObservedRuntime;
  let low: ObservedRuntime;
  let prom: LocalServer;
  let am: LocalServer;
  let driver: Driver | undefined;

  beforeAll(async () => {
    high = await startObservedRuntime('subagent-high', { flag: '127.0.0.2' });
    started.push(high);
    low = await startObservedRuntime('subagent-low', { env: '127.0.0.3' });
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
    for (const runtime of [high, low]) {
      await runtime.request('initialize', { cwd: '/', provider: 'deepseek', model: 'deepseek-chat' });
    }
    driver = startDriving(prom, [
      { runtime: high, batch: HIGH_BATCH },
      { runtime: low, batch: LOW_BATCH },
    ]);
  }, TEST_BUDGET_MS);

  afterAll(async () => {
    try {
      await driver?.done();
    } catch {
      // The driver's failure has already failed the tests that waited on it; the servers still have to go.
    }
    for (const s of started.reverse()) await s.stop();
  }, TEST_BUDGET_MS);

  const driving = <T>(work: Promise<T>): Promise<T> => {
    if (driver === undefined) throw new Error('the driver did not start (see beforeAll)');
    return driver.whileDriving(work);
  };

  /** Waits until every batch was sent and scraped. */
  const allRunsScraped = async (): Promise<void> => {
    if (driver === undefined) throw new Error('the driver did not start (see beforeAll)');
    await driver.done();
  };

  it(
    'scrapes each observer on the address its --prometheus-host flag or SUBAGENT_OTEL_PROMETHEUS_HOST names',
    async () => {
      const up = await driving(
        pollUntil(
          async () => {
            const r = await instantQuery(prom, 'up{job=~"subagent-high|subagent-low"} == 1');
            return r.length === 2 ? r : undefined;
          },
          { what: 'both observers to be up', timeoutMs: CONDITION_BUDGET_MS },
        ),
      );
      const instances = Object.fromEntries(up.map((s) => [s.metric.job, s.metric.instance]));
      expect(instances['subagent-high']).toMatch(/^127\.0\.0\.2:[0-9]+$/);
      expect(instances['subagent-low']).toMatch(/^127\.0\.0\.3:[0-9]+$/);
    },
    TEST_BUDGET_MS,
  );

  it(
    'exposes the proxied runs as subagent_runs_total with stop reason, agent, provider and output source labels',
    async () => {
      const series = await driving(
        pollUntil(
          async () => {
            const r = await instantQuery(prom, 'subagent_runs_total{job="subagent-high"}');
            return r.length === 2 ? r : undefined;
          },
          { what: 'both subagent_runs_total series of job subagent-high', timeoutMs: CONDITION_BUDGET_MS },
        ),
      );
      const labels = series
        .map((s) => ({
          stop: s.metric.subagent_stop_reason,
          source: s.metric.subagent_output_source,
          agent: s.metric.gen_ai_agent_name,
          provider: s.metric.gen_ai_provider_name,
        }))
        .sort((a, b) => String(a.stop).localeCompare(String(b.stop)));
      expect(labels).toEqual([
        { stop: 'completed', source: 'message', agent: 'deepseek', provider: 'deepseek' },
        { stop: 'max-tokens', source: 'stream', agent: 'deepseek', provider: 'deepseek' },
      ]);
    },
    TEST_BUDGET_MS,
  );

  it(
    'fires SubagentMaxTokensTruncationRateHigh, warning and critical, for a 75% max-tokens share',
    async () => {
      await allRunsScraped();
      // Every run is in the 1 h window: once the rules have evaluated the last scrape, the share is exactly 18 of 24.
      const firing = await pollUntil(
        async () => {
          const mine = (await prometheusAlerts(prom)).filter(
            (a) =>
              a.labels.alertname === 'SubagentMaxTokensTruncationRateHigh' &&
              a.labels.job === 'subagent-high' &&
              a.state === 'firing',
          );
          return mine.length === 2 && mine.every((a) => Number(a.value) === 0.75) ? mine : undefined;
        },
        { what: 'both truncation alerts of job subagent-high to fire at a 0.75 share', timeoutMs: CONDITION_BUDGET_MS },
      );
      expect(firing.map((a) => a.labels.severity).sort()).toEqual(['critical', 'warning']);
      for (const a of firing) expect(a.labels.gen_ai_agent_name).toBe('deepseek');
    },
    TEST_BUDGET_MS,
  );

  it(
    'keeps the alert inactive for a 5% share of 120 runs',
    async () => {
      await allRunsScraped();
      // The high-share alerts fire after the same `for` durations, so by then
      // the low-share service had every chance to fire as well.
      await pollUntil(
        async () => {
          const states = (await prometheusAlerts(prom))
            .filter(
              (a) => a.labels.job === 'subagent-high' && a.labels.alertname === 'SubagentMaxTokensTruncationRateHigh',
            )
            .map((a) => a.state);
          return states.length === 2 && states.every((s) => s === 'firing') ? true : undefined;
        },
        { what: 'the high-share alerts to fire first', timeoutMs: CONDITION_BUDGET_MS },
      );
      const volume = await pollUntil(
        async () => {
          const r = await instantQuery(prom, `${RECORDS.runs}{job="subagent-low"} == ${20 * BATCHES}`);
          return r.length === 1 ? r : undefined;
        },
        {
          what: `the recorded run volume of job subagent-low to reach all ${20 * BATCHES} runs`,
          timeoutMs: CONDITION_BUDGET_MS,
        },
      );
      expect(volume[0]?.metric.gen_ai_agent_name).toBe('deepseek');
      const ratio = await instantQuery(prom, `${RECORDS.ratio}{job="subagent-low"}`);
      expect(ratio.map((r) => Number(r.value[1]))).toEqual([0.05]);
      expect((await prometheusAlerts(prom)).filter((a) => a.labels.job === 'subagent-low')).toEqual([]);
      expect(await instantQuery(prom, 'max_over_time(ALERTS{job="subagent-low",alertstate="firing"}[1h])')).toEqual([]);
    },
    TEST_BUDGET_MS,
  );

  it(
    'reaches Alertmanager, where the critical alert inhibits the warning of the same service and agent',
    async () => {
      const alerts = await driving(
        pollUntil(
          async () => {
            const all = (await getJson(
              `${am.url}/api/v2/alerts?filter=alertname%3D%22SubagentMaxTokensTruncationRateHigh%22`,
            )) as AmAlert[];
            const mine = all.filter((a) => a.labels.job === 'subagent-high');
            const warning = mine.find((a) => a.labels.severity === 'warning');
            return mine.length === 2 && warning !== undefined && warning.status.state === 'suppressed'
              ? all
              : undefined;
          },
          { what: 'Alertmanager to hold both alerts with the warning inhibited', timeoutMs: CONDITION_BUDGET_MS },
        ),
      );
      const critical = alerts.find((a) => a.labels.job === 'subagent-high' && a.labels.severity === 'critical');
      const warning = alerts.find((a) => a.labels.job === 'subagent-high' && a.labels.severity === 'warning');
      expect(critical?.status.state).toBe('active');
      expect(warning?.status.inhibitedBy.length).toBe(1);
      expect(alerts.filter((a) => a.labels.job === 'subagent-low')).toEqual([]);
    },
    TEST_BUDGET_MS,
  );

  it(
    'accepts every query of the shipped Grafana dashboard',
    async () => {
      await allRunsScraped();
      const dashboard = JSON.parse(readFileSync(`${configDir}grafana/dashboards/subagent-runs.json`, 'utf8')) as {
        panels: { targets?: { expr?: string }[] }[];
      };
      const exprs = dashboard.panels.flatMap((p) =>
        (p.targets ?? []).flatMap((t) => (t.expr === undefined ? [] : [t.expr])),
      );
      expect(exprs.length).toBe(9);
      for (const expr of exprs) {
        const query = expr
          .replaceAll('$__rate_interval', '4s')
          .replaceAll('$__range', '1m')
          .replaceAll('$job', '.*')
          .replaceAll('$agent', '.*');
        const res = await fetch(`${prom.url}/api/v1/query?query=${encodeURIComponent(query)}`);
        const body = (await res.json()) as { status: string; error?: string };
        expect({ query, status: body.status, error: body.error }).toEqual({
          query,
          status: 'success',
          error: undefined,
        });
      }
      // Over the whole test (1 h), not a few seconds: a slow scrape cannot leave the window without two samples.
      const byStopReason = await instantQuery(
        prom,
        'sum by (subagent_stop_reason) (increase(subagent_runs_total{job=~"subagent-high"}[1h]))',
      );
      expect(byStopReason.map((r) => r.metric.subagent_stop_reason).sort()).toEqual(['completed', 'max-tokens']);
    },
    TEST_BUDGET_MS,
  );

  it(
    'fires the production rules (1 h window, 5 and 15 min) at explicit times over the series Prometheus scraped',
    async () => {
      await allRunsScraped();
      const observed = await rawSamples(
        prom,
        'subagent_runs_total{job=~"subagent-high|subagent-low"}',
        Date.now() / 1000,
      );
      // 25 min of the final counts after the data: longer than the 15 min warning `for`.
      const layout = gridSeries(observed, 'job', 100);
      const note = (ratio: string) =>
        `More than ${ratio} of at least 20 runs in the last 1h ended at their token limit, so the parent got partial output. Search Jaeger for subagent.stop_reason=max-tokens to see the runs.`;
      const summary = '75% of the runs of agent deepseek in subagent-high stopped at max-tokens';
      const run = runPromtoolTest(readFileSync(`${configDir}prometheus/rules.yml`, 'utf8'), layout, {
        promql_expr_test: [
          {
            expr: 'job_gen_ai_agent_name:subagent_runs:increase1h',
            eval_time: layout.end,
            exp_samples: [
              {
                labels:
                  'job_gen_ai_agent_name:subagent_runs:increase1h{job="subagent-high", gen_ai_agent_name="deepseek"}',
                value: 24,
              },
              {
                labels:
                  'job_gen_ai_agent_name:subagent_runs:increase1h{job="subagent-low", gen_ai_agent_name="deepseek"}',
                value: 120,
              },
            ],
          },
          {
            expr: 'job_gen_ai_agent_name:subagent_max_tokens_truncation:ratio1h',
            eval_time: layout.end,
            exp_samples: [
              {
                labels:
                  'job_gen_ai_agent_name:subagent_max_tokens_truncation:ratio1h{job="subagent-high", gen_ai_agent_name="deepseek"}',
                value: 0.75,
              },
              {
                labels:
                  'job_gen_ai_agent_name:subagent_max_tokens_truncation:ratio1h{job="subagent-low", gen_ai_agent_name="deepseek"}',
                value: 0.05,
              },
            ],
          },
        ],
        alert_rule_test: [
          {
            eval_time: layout.end,
            alertname: 'SubagentMaxTokensTruncationRateHigh',
            exp_alerts: [
              {
                exp_labels: { severity: 'critical', job: 'subagent-high', gen_ai_agent_name: 'deepseek' },
                exp_annotations: { summary, description: note('25%') },
              },
              {
                exp_labels: { severity: 'warning', job: 'subagent-high', gen_ai_agent_name: 'deepseek' },
                exp_annotations: { summary, description: note('10%') },
              },
            ],
          },
        ],
      });
      expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toMatchObject({ status: 0 });
    },
    TEST_BUDGET_MS,
  );

  it(
    'counts every answered run exactly once, then both proxies answer shutdown and exit 0',
    async () => {
      if (driver === undefined) throw new Error('the driver did not start (see beforeAll)');
      await driver.done();
      expect(driver.batches()).toBe(BATCHES);
      const counts = await instantQuery(prom, 'subagent_runs_total{job=~"subagent-high|subagent-low"}');
      const byJobAndReason = Object.fromEntries(
        counts.map((s) => [`${s.metric.job} ${s.metric.subagent_stop_reason}`, Number(s.value[1])]),
      );
      expect(byJobAndReason).toEqual({
        'subagent-high max-tokens': 18,
        'subagent-high completed': 6,
        'subagent-low max-tokens': 6,
        'subagent-low completed': 114,
      });
      for (const runtime of [high, low]) {
        expect(await runtime.request('shutdown')).toEqual({});
        runtime.endInput();
        const exit = await runtime.exited;
        expect({ job: runtime.job, code: exit.code, signal: exit.signal }).toEqual({
          job: runtime.job,
          code: 0,
          signal: null,
        });
      }
    },
    TEST_BUDGET_MS,
  );
});
