/**
 * The headline alert for the agents people use: real codex-acp,
 * claude-agent-acp and gemini-cli processes, each behind `subagent-otel proxy
 * --protocol acp --agent-telemetry --prometheus-port <port>`, driven by the official ACP SDK client against
 * the scripted model server, most prompts cut at the output-token limit. A
 * real Prometheus on loopback scrapes the three proxies every second and
 * evaluates the shipped rules (rendered from the same source as rules.yml,
 * with the production 1 h window and 2 s `for` durations instead of minutes).
 * `SubagentMaxTokensTruncationRateHigh` must fire, warning and critical, for
 * all three: claude answers a truncated turn with a typed JSON-RPC error,
 * codex with a text chunk and `end_turn`, gemini with a plain `end_turn`
 * whose cause only its own telemetry (`--agent-telemetry`) reports.
 *
 * No verdict depends on the agents' pace: each agent answers a fixed number
 * of prompts ({@link ANSWERS}), all of which the 1 h window holds, so the
 * rule sees every run however slowly they came (the test used to need 20
 * runs inside a 60 s window, and a busy machine gave claude 20 answers in
 * more than that). The production `for` durations are then evaluated by
 * `promtool test rules` at explicit timestamps over the series Prometheus
 * really scraped (`test/helpers/promtool-replay.ts`).
 *
 * Runs go in step with the scrapes, without sleeping: after each batch the
 * driver polls Prometheus until every job's `subagent_runs_total` count every
 * answered turn, then sends the next. One agent process and one session per
 * agent (claude takes seconds to open a session); a prompt left unanswered
 * for {@link PROMPT_BOUND_MS} is given up (it counts toward no run) and the
 * agent goes on in a new session (claude answers the turns after a failed
 * one out of step, see the README).
 *
 * Needs the agents (`npm ci --prefix test/agents/pinned`) and Prometheus
 * (the stack's Prometheus 3 engine: `npm run stack -- build`).
 *
 * @module subagent-otel/test/agents/truncation-alert.e2e
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderRules } from '../../collector-config/prometheus/render-rules.mjs';
import { CLI, ROOT } from '../helpers/paths.js';
import {
  freePort,
  instantQuery,
  pollUntil,
  prometheusAlerts,
  startPrometheus,
  type LocalServer,
} from '../helpers/prometheus.js';
import { gridSeries, rawSamples, runPromtoolTest } from '../helpers/promtool-replay.js';
import { startPeer, type AcpPeer } from './acp-driver.js';
import { AGENT_NAMES, launchSpec, requireAgent, type AgentLaunch, type AgentName } from './agents.js';
import { startModelServer, TEXT, type ModelServer } from './model-server.js';

/** Of every four prompts, three stop at the output-token limit. */
const BATCH = ['max-tokens', 'max-tokens', 'max-tokens', 'normal'] as const;
/**
 * Prompts each agent answers: above the rule's 20-run minimum with room for
 * claude's empty turns after a failed one (it answered 8 truncation errors in
 * 20 prompts on a busy machine: 40%, above both thresholds).
 */
const ANSWERS = 28;
/** Prompts sent at most per agent, unanswered ones included, so a broken agent cannot keep the driver going. */
const MAX_PROMPTS = 2 * ANSWERS;
/** How long any awaited condition may take: ten times what it takes on a loaded machine. */
const CONDITION_BUDGET_MS = 120_000;
/** Per-test budget: every answer of the slower agent (about 2 s each on a busy machine) plus the conditions after them. */
const TEST_BUDGET_MS = 900_000;
/** The label each agent's runs carry (its `initialize` `agentInfo.name`). */
const AGENT_LABEL: Record<AgentName, string> = {
  codex: '@agentclientprotocol/codex-acp',
  claude: '@agentclientprotocol/claude-agent-acp',
  gemini: 'gemini-cli',
};

interface Observed {
  readonly agent: AgentName;
  readonly job: string;
  readonly target: string;
  readonly peer: AcpPeer;
  readonly spec: AgentLaunch;
  sessionId: string;
  answered: number;
  maxTokensErrors: number;
  /** Prompts left unanswered after {@link PROMPT_BOUND_MS}. */
  stalled: number;
  /** Turns answered with an error that is no truncation (e.g. a busy machine's timeout in the agent): error runs. */
  otherErrors: number;
}

/** How long one prompt may take before the driver gives up on it and opens a new session (claude answers in about 2 s). */
const PROMPT_BOUND_MS = 60_000;

/** `work`'s value, or `undefined` when it has not settled within `ms`. */
async function answeredWithin<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([work, bound]);
  } finally {
    clearTimeout(timer);
  }
}

async function startObserved(agent: AgentName, server: ModelServer): Promise<Observed> {
  const port = await freePort();
  const spec = launchSpec(agent, server.origin);
  const argv = [
    process.execPath,
    CLI,
    'proxy',
    '--protocol',
    'acp',
    '--agent-telemetry',
    '--prometheus-port',
    String(port),
    '--',
    ...spec.argv,
  ];
  // A generous bound on the wait for gemini's and claude's own records (released as soon as they are in).
  const env = agent === 'codex' ? spec.env : { ...spec.env, SUBAGENT_OTEL_AGENT_TELEMETRY_WAIT_MS: '60000' };
  const peer = await startPeer(argv, env, spec.cwd);
  const sessionId = await peer.newSession(spec.cwd);
  return {
    agent,
    job: `real-${agent}`,
    target: `127.0.0.1:${port}`,
    peer,
    sessionId,
    spec,
    answered: 0,
    maxTokensErrors: 0,
    stalled: 0,
    otherErrors: 0,
  };
}

it('has codex, claude and gemini installed in test/agents/pinned', () => {
  expect(AGENT_NAMES.map(requireAgent)).toHaveLength(3);
});

describe('SubagentMaxTokensTruncationRateHigh for real codex, claude and gemini runs cut at the token limit', () => {
  let server: ModelServer;
  let prom: LocalServer | undefined;
  const observed: Observed[] = [];
  let stopDriving = false;
  let driving: Promise<void> | undefined;
  let nonce = 0;

  /** Sends prompts to `o` in the {@link BATCH} pattern until it answered `count` more of them (at most {@link MAX_PROMPTS} sent). */
  const answer = async (o: Observed, count: number, sent: { n: number }): Promise<void> => {
    const goal = o.answered + count;
    while (o.answered < goal && !stopDriving) {
      if (sent.n >= MAX_PROMPTS)
        throw new Error(
          `${o.job}: ${sent.n} prompts sent, ${o.answered} answered, ${o.stalled} unanswered: the agent does not answer`,
        );
      const scenario = BATCH[sent.n % BATCH.length] ?? 'normal';
      sent.n += 1;
      nonce += 1;
      const turn = await answeredWithin(
        o.peer.prompt(o.sessionId, `scenario:${scenario}#alert${nonce} Please answer.`),
        PROMPT_BOUND_MS,
      );
      if (turn === undefined) {
        // The agent never answered (no run ends, so nothing to count): go on in a new session.
        o.stalled += 1;
        o.sessionId = await o.peer.newSession(o.spec.cwd);
        continue;
      }
      o.answered += 1;
      // What the client saw of the limit: claude's error, codex's text chunk, gemini's cut text.
      if (/output token|max_output_tokens/.test(JSON.stringify(turn.error ?? turn.text)) || turn.text === TEXT.partial)
        o.maxTokensErrors += 1;
      else if (turn.error !== undefined) o.otherErrors += 1;
    }
  };

  beforeAll(async () => {
    server = await startModelServer();
    for (const agent of AGENT_NAMES) observed.push(await startObserved(agent, server));
    prom = await startPrometheus({
      config: [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'rule_files: [rules.yml]',
        'scrape_configs:',
        ...observed.flatMap((o) => [`  - job_name: ${o.job}`, `    static_configs: [{ targets: ["${o.target}"] }]`]),
        '',
      ].join('\n'),
      files: { 'rules.yml': renderRules({ truncationWarningFor: '2s', truncationCriticalFor: '2s' }) },
    });
    const p = prom;
    driving = (async () => {
      const sent = observed.map(() => ({ n: 0 }));
      while (!stopDriving && observed.some((o) => o.answered < ANSWERS)) {
        await Promise.all(
          observed.map((o, i) => answer(o, Math.min(BATCH.length, ANSWERS - o.answered), sent[i] ?? { n: 0 })),
        );
        await pollUntil(
          async () => {
            if (stopDriving) return true;
            const totals = await instantQuery(p, 'sum by (job) (subagent_runs_total)');
            const seen = observed.every((o) =>
              totals.some((t) => t.metric.job === o.job && Number(t.value[1]) === o.answered),
            );
            return seen ? true : undefined;
          },
          {
            what: 'Prometheus to scrape every answered run from every proxy',
            timeoutMs: CONDITION_BUDGET_MS,
            intervalMs: 100,
          },
        );
      }
    })();
    driving.catch(() => undefined); // reaches the tests through allAnswered()
  }, TEST_BUDGET_MS);

  afterAll(async () => {
    stopDriving = true;
    // Close first: each agent's input ends and it exits, so a prompt still in flight
    // is rejected instead of awaited (claude answers turns after a failed one out of step, see the README).
    await Promise.all(observed.map((o) => o.peer.close()));
    await driving?.catch(() => undefined);
    for (const o of observed) o.spec.dispose();
    await prom?.stop();
    await server?.close();
  }, TEST_BUDGET_MS);

  /** Waits until every agent answered {@link ANSWERS} prompts and Prometheus scraped every run. @returns the server. */
  const allAnswered = async (): Promise<LocalServer> => {
    if (prom === undefined || driving === undefined)
      throw new Error('Prometheus or the driver did not start (see beforeAll)');
    await driving;
    return prom;
  };

  it(
    'fires warning and critical for all three agents, labelled with the agent',
    async () => {
      const p = await allAnswered();
      const firing = await pollUntil(
        async () => {
          const mine = (await prometheusAlerts(p))
            .filter((a) => a.labels.alertname === 'SubagentMaxTokensTruncationRateHigh' && a.state === 'firing')
            .map((a) => `${a.labels.job} ${a.labels.gen_ai_agent_name} ${a.labels.severity}`)
            .sort();
          return mine.length === 6 ? mine : undefined;
        },
        { what: 'the truncation alerts of all three agents to fire', timeoutMs: CONDITION_BUDGET_MS, intervalMs: 250 },
      ).catch(async (error: unknown) => {
        // Say how far the runs got and what Prometheus computed, then fail as before.
        const ratios = await instantQuery(p, '{__name__=~"job_gen_ai_agent_name:subagent_.*"}').catch(() => []);
        const state = observed
          .map(
            (o) => `${o.job}: ${o.answered} answered, ${o.maxTokensErrors} truncation errors, ${o.stalled} unanswered`,
          )
          .join('; ');
        const computed = ratios.map((r) => `${r.metric.__name__}{${r.metric.job}}=${r.value[1]}`).join(', ');
        throw new Error(`${error instanceof Error ? error.message : String(error)} (${state}; ${computed})`);
      });
      expect(firing).toEqual([
        `real-claude ${AGENT_LABEL.claude} critical`,
        `real-claude ${AGENT_LABEL.claude} warning`,
        `real-codex ${AGENT_LABEL.codex} critical`,
        `real-codex ${AGENT_LABEL.codex} warning`,
        `real-gemini ${AGENT_LABEL.gemini} critical`,
        `real-gemini ${AGENT_LABEL.gemini} warning`,
      ]);
    },
    TEST_BUDGET_MS,
  );

  it(
    'counted every answered turn once, the agents’ own truncation errors as max-tokens runs',
    async () => {
      const p = await allAnswered();
      const totals = await instantQuery(p, 'sum by (job) (subagent_runs_total)');
      expect(Object.fromEntries(totals.map((t) => [t.metric.job, Number(t.value[1])]))).toEqual({
        'real-codex': ANSWERS,
        'real-claude': ANSWERS,
        'real-gemini': ANSWERS,
      });
      const series = await instantQuery(
        p,
        'sum by (job, gen_ai_agent_name, subagent_stop_reason) (subagent_runs_total)',
      );
      const maxTokens = Object.fromEntries(
        series
          .filter((s) => s.metric.subagent_stop_reason === 'max-tokens')
          .map((s) => [s.metric.job, Number(s.value[1])]),
      );
      for (const o of observed) {
        // The agents really did answer with their truncation errors (claude
        // answers the prompt after one with an empty turn, so fewer than 3 in 4).
        expect(o.maxTokensErrors, o.job).toBeGreaterThan(0);
        expect(
          maxTokens[o.job],
          `${o.job}: max-tokens runs in Prometheus against truncated turns the client saw`,
        ).toBeGreaterThanOrEqual(o.maxTokensErrors);
      }
      // An error run only for a turn the client saw answered with another error (none on an idle machine): telemetry agrees with the client.
      const errors = Object.fromEntries(
        series.filter((s) => s.metric.subagent_stop_reason === 'error').map((s) => [s.metric.job, Number(s.value[1])]),
      );
      expect(Object.fromEntries(observed.map((o) => [o.job, errors[o.job] ?? 0]))).toEqual(
        Object.fromEntries(observed.map((o) => [o.job, o.otherErrors])),
      );
    },
    TEST_BUDGET_MS,
  );

  it(
    'fires both severities for all three agents under the production rules, evaluated at explicit times over the scraped series',
    async () => {
      const p = await allAnswered();
      const scraped = await rawSamples(
        p,
        'subagent_runs_total{job=~"real-codex|real-claude|real-gemini"}',
        Date.now() / 1000,
      );
      // 25 min of the final counts after the data: longer than the 15 min warning `for`.
      const layout = gridSeries(scraped, 'job', 100);
      const alert = (job: string, agent: string, severity: string) => ({
        labels: `ALERTS{alertname="SubagentMaxTokensTruncationRateHigh", alertstate="firing", job="${job}", gen_ai_agent_name="${agent}", severity="${severity}"}`,
        value: 1,
      });
      const run = runPromtoolTest(
        readFileSync(join(ROOT, 'collector-config', 'prometheus', 'rules.yml'), 'utf8'),
        layout,
        {
          promql_expr_test: [
            {
              expr: 'ALERTS{alertname="SubagentMaxTokensTruncationRateHigh", alertstate="firing"}',
              eval_time: layout.end,
              exp_samples: [
                alert('real-claude', AGENT_LABEL.claude, 'critical'),
                alert('real-claude', AGENT_LABEL.claude, 'warning'),
                alert('real-codex', AGENT_LABEL.codex, 'critical'),
                alert('real-codex', AGENT_LABEL.codex, 'warning'),
                alert('real-gemini', AGENT_LABEL.gemini, 'critical'),
                alert('real-gemini', AGENT_LABEL.gemini, 'warning'),
              ],
            },
            {
              expr: 'job_gen_ai_agent_name:subagent_runs:increase1h',
              eval_time: layout.end,
              exp_samples: [
                {
                  labels: `job_gen_ai_agent_name:subagent_runs:increase1h{job="real-claude", gen_ai_agent_name="${AGENT_LABEL.claude}"}`,
                  value: ANSWERS,
                },
                {
                  labels: `job_gen_ai_agent_name:subagent_runs:increase1h{job="real-codex", gen_ai_agent_name="${AGENT_LABEL.codex}"}`,
                  value: ANSWERS,
                },
                {
                  labels: `job_gen_ai_agent_name:subagent_runs:increase1h{job="real-gemini", gen_ai_agent_name="${AGENT_LABEL.gemini}"}`,
                  value: ANSWERS,
                },
              ],
            },
          ],
        },
      );
      expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toMatchObject({ status: 0 });
    },
    TEST_BUDGET_MS,
  );
});
