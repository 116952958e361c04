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
 * (`render-rules.mjs`) with second-long windows instead of hours; the
 * production windows and `for` durations are proven by `promtool test rules`
 * (promtool.test.ts).
 *
 * Runs go in step with the scrapes, without sleeping: after each batch the
 * driver polls Prometheus until the latest sample of `subagent_runs_total` of
 * both jobs counts every run answered so far, then sends the next batch, until
 * the last test stops it (or an overall deadline passes). Job `subagent-high`
 * gets 3 max-tokens runs of every 4, job `subagent-low` 1 of every 20.
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
import { freePort, getJson, instantQuery, pollUntil, prometheusAlerts, startAlertmanager, startPrometheus } from '../helpers/prometheus.js';
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
const RECORDS = recordNames('10s');

/** Scenarios of the scripted SDK runtime used here (src/fixtures/README.md). */
type Scenario = 'empty-message' | 'completed';

/** Job `subagent-high`: 3 of 4 runs stop at max-tokens. */
const HIGH_BATCH: readonly Scenario[] = ['empty-message', 'empty-message', 'empty-message', 'completed'];
/** Job `subagent-low`: 1 of 20 runs stops at max-tokens. */
const LOW_BATCH: readonly Scenario[] = ['empty-message', ...Array.from({ length: 19 }, (): Scenario => 'completed')];

/** The runs stop coming after this long at the latest, so a stuck test cannot drive forever. */
const DRIVE_DEADLINE_MS = 50_000;

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
async function startObservedRuntime(job: string, host: { readonly flag: string } | { readonly env: string }): Promise<ObservedRuntime> {
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
      let message: { id?: unknown; result?: unknown; error?: { code: number; message: string }; method?: unknown; params?: { sessionId?: unknown; status?: unknown } };
      try {
        message = JSON.parse(line) as typeof message;
      } catch {
        // SyntaxError: the scripted scenarios used here write JSON only; anything else is not an answer.
        continue;
      }
      // The runtime answers a prompt on queueing; its run ends at the session's idle status.
      if (message.method === 'session.status' && message.params?.status === 'idle' && typeof message.params.sessionId === 'string') {
        idleWaiters.get(message.params.sessionId)?.shift()?.();
        continue;
      }
      if (typeof message.id !== 'number') continue;
      const waiter = pending.get(message.id);
      if (waiter === undefined) continue;
      pending.delete(message.id);
      if (message.error !== undefined) waiter.reject(new Error(`${job}: request ${message.id} failed: ${JSON.stringify(message.error)}`));
      else waiter.resolve(message.result);
    }
  });
  void exited.then((r) => {
    isClosed = true;
    for (const [id, waiter] of pending) {
      waiter.reject(new Error(`${job}: the proxy exited (code ${r.code}, signal ${r.signal}) before answering request ${id}: ${r.stderr.toString('utf8')}`));
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
        await request('session/prompt', { sessionId: `${job}-session`, contentBlocks: [{ type: 'text', text: `scenario:${scenario}` }] });
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
  /** Sends no further batch; resolves once the last one was scraped, rejects with the driver's error. */
  stop(): Promise<void>;
}

/**
 * Sends one batch to every runtime at the same time, waits until
 * Prometheus's latest sample of `subagent_runs_total` of each job counts every
 * run answered so far, and repeats until `stop()` or `DRIVE_DEADLINE_MS`.
 */
function startDriving(prom: LocalServer, feeds: readonly { runtime: ObservedRuntime; batch: readonly Scenario[] }[]): Driver {
  const deadline = Date.now() + DRIVE_DEADLINE_MS;
  let isStopping = false;
  let batches = 0;
  const selector = `job=~"${feeds.map((f) => f.runtime.job).join('|')}"`;
  const loop = (async () => {
    while (!isStopping) {
      if (Date.now() > deadline) throw new Error(`the runs were still needed after ${DRIVE_DEADLINE_MS} ms`);
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
        { what: `Prometheus to scrape batch ${batches + 1} from every observer`, timeoutMs: 15_000, intervalMs: 100 },
      );
      batches += 1;
    }
  })();
  // Marks a failure as handled here; it reaches the tests through whileDriving() and stop().
  loop.catch(() => undefined);
  return {
    batches: () => batches,
    whileDriving: (work) =>
      Promise.race([
        work,
        loop.then(() => {
          throw new Error('the runs stopped before the awaited condition held');
        }),
      ]),
    stop: () => {
      isStopping = true;
      return loop;
    },
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
  });

  afterAll(async () => {
    try {
      await driver?.stop();
    } catch {
      // The driver's failure has already failed the tests that waited on it; the servers still have to go.
    }
    for (const s of started.reverse()) await s.stop();
  });

  const driving = <T>(work: Promise<T>): Promise<T> => {
    if (driver === undefined) throw new Error('the driver did not start (see beforeAll)');
    return driver.whileDriving(work);
  };

  it('scrapes each observer on the address its --prometheus-host flag or SUBAGENT_OTEL_PROMETHEUS_HOST names', async () => {
    const up = await driving(
      pollUntil(
        async () => {
          const r = await instantQuery(prom, 'up{job=~"subagent-high|subagent-low"} == 1');
          return r.length === 2 ? r : undefined;
        },
        { what: 'both observers to be up' },
      ),
    );
    const instances = Object.fromEntries(up.map((s) => [s.metric.job, s.metric.instance]));
    expect(instances['subagent-high']).toMatch(/^127\.0\.0\.2:[0-9]+$/);
    expect(instances['subagent-low']).toMatch(/^127\.0\.0\.3:[0-9]+$/);
  });

  it('exposes the proxied runs as subagent_runs_total with stop reason, agent, provider and output source labels', async () => {
    const series = await driving(
      pollUntil(
        async () => {
          const r = await instantQuery(prom, 'subagent_runs_total{job="subagent-high"}');
          return r.length === 2 ? r : undefined;
        },
        { what: 'both subagent_runs_total series of job subagent-high' },
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
  });

  it('fires SubagentMaxTokensTruncationRateHigh, warning and critical, for a 75% max-tokens share', async () => {
    const firing = await driving(
      pollUntil(
        async () => {
          const mine = (await prometheusAlerts(prom)).filter(
            (a) => a.labels.alertname === 'SubagentMaxTokensTruncationRateHigh' && a.labels.job === 'subagent-high' && a.state === 'firing',
          );
          return mine.length === 2 ? mine : undefined;
        },
        { what: 'both truncation alerts of job subagent-high to fire', timeoutMs: 40_000 },
      ),
    );
    expect(firing.map((a) => a.labels.severity).sort()).toEqual(['critical', 'warning']);
    for (const a of firing) {
      expect(a.labels.gen_ai_agent_name).toBe('deepseek');
      // 3 of 4 per batch; a scrape in the middle of a batch moves the share
      // within the window a little, never down to the critical threshold.
      expect(Number(a.value)).toBeGreaterThan(0.5);
      expect(Number(a.value)).toBeLessThan(1);
    }
  });

  it('keeps the alert inactive for a 5% share once the rules have evaluated enough of its runs', async () => {
    // The high-share alerts fired after the same windows and `for` durations,
    // so by then the low-share service had every chance to fire as well.
    await driving(
      pollUntil(
        async () => {
          const states = (await prometheusAlerts(prom))
            .filter((a) => a.labels.job === 'subagent-high' && a.labels.alertname === 'SubagentMaxTokensTruncationRateHigh')
            .map((a) => a.state);
          return states.length === 2 && states.every((s) => s === 'firing') ? true : undefined;
        },
        { what: 'the high-share alerts to fire first', timeoutMs: 40_000 },
      ),
    );
    const volume = await driving(
      pollUntil(
        async () => {
          const r = await instantQuery(prom, `${RECORDS.runs}{job="subagent-low"} >= 20`);
          return r.length === 1 ? r : undefined;
        },
        { what: 'the recorded run volume of job subagent-low to reach the minimum of 20' },
      ),
    );
    expect(volume[0]?.metric.gen_ai_agent_name).toBe('deepseek');
    const ratio = await instantQuery(prom, `${RECORDS.ratio}{job="subagent-low"}`);
    expect(ratio).toHaveLength(1);
    // 1 of 20 per batch; a scrape in the middle of a batch moves it a little.
    expect(Number(ratio[0]?.value[1])).toBeGreaterThan(0.02);
    expect(Number(ratio[0]?.value[1])).toBeLessThan(0.1);
    expect((await prometheusAlerts(prom)).filter((a) => a.labels.job === 'subagent-low')).toEqual([]);
    expect(await instantQuery(prom, 'max_over_time(ALERTS{job="subagent-low",alertstate="firing"}[5m])')).toEqual([]);
  });

  it('reaches Alertmanager, where the critical alert inhibits the warning of the same service and agent', async () => {
    const alerts = await driving(
      pollUntil(
        async () => {
          const all = (await getJson(`${am.url}/api/v2/alerts?filter=alertname%3D%22SubagentMaxTokensTruncationRateHigh%22`)) as AmAlert[];
          const mine = all.filter((a) => a.labels.job === 'subagent-high');
          const warning = mine.find((a) => a.labels.severity === 'warning');
          return mine.length === 2 && warning !== undefined && warning.status.state === 'suppressed' ? all : undefined;
        },
        { what: 'Alertmanager to hold both alerts with the warning inhibited', timeoutMs: 40_000 },
      ),
    );
    const critical = alerts.find((a) => a.labels.job === 'subagent-high' && a.labels.severity === 'critical');
    const warning = alerts.find((a) => a.labels.job === 'subagent-high' && a.labels.severity === 'warning');
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
        // The dashboard's 1h recording rules are named for the production window.
        .replaceAll(recordNames('1h').ratio, RECORDS.ratio)
        .replaceAll(recordNames('1h').runs, RECORDS.runs);
      const res = await fetch(`${prom.url}/api/v1/query?query=${encodeURIComponent(query)}`);
      const body = (await res.json()) as { status: string; error?: string };
      expect({ query, status: body.status, error: body.error }).toEqual({ query, status: 'success', error: undefined });
    }
    const byStopReason = await instantQuery(prom, 'sum by (subagent_stop_reason) (increase(subagent_runs_total{job=~"subagent-high"}[4s]))');
    expect(byStopReason.map((r) => r.metric.subagent_stop_reason).sort()).toEqual(['completed', 'max-tokens']);
  });

  it('counts every answered run exactly once, then both proxies answer shutdown and exit 0', async () => {
    if (driver === undefined) throw new Error('the driver did not start (see beforeAll)');
    await driver.stop();
    const batches = driver.batches();
    expect(batches).toBeGreaterThanOrEqual(6);
    const counts = await instantQuery(prom, 'subagent_runs_total{job=~"subagent-high|subagent-low"}');
    const byJobAndReason = Object.fromEntries(counts.map((s) => [`${s.metric.job} ${s.metric.subagent_stop_reason}`, Number(s.value[1])]));
    expect(byJobAndReason).toEqual({
      'subagent-high max-tokens': 3 * batches,
      'subagent-high completed': 1 * batches,
      'subagent-low max-tokens': 1 * batches,
      'subagent-low completed': 19 * batches,
    });
    for (const runtime of [high, low]) {
      expect(await runtime.request('shutdown')).toEqual({});
      runtime.endInput();
      const exit = await runtime.exited;
      expect({ job: runtime.job, code: exit.code, signal: exit.signal }).toEqual({ job: runtime.job, code: 0, signal: null });
    }
  });
});
