/**
 * The headline alert for the agents people use: real codex-acp,
 * claude-agent-acp and gemini-cli processes, each behind `subagent-otel proxy
 * --protocol acp --agent-telemetry --prometheus-port <port>`, driven by the official ACP SDK client against
 * the scripted model server, most prompts cut at the output-token limit. A
 * real Prometheus on loopback scrapes both proxies every second and
 * evaluates the shipped rules (rendered from the same source as rules.yml,
 * with a 60 s window and 2 s `for` durations instead of an hour and minutes;
 * promtool.test.ts proves the production durations). The window must hold
 * the rule's 20 runs at the pace of the slower agent: claude, with its own
 * retries, answered about 0.6 prompts a second on a loaded CI machine, too
 * few for a 20 s window.
 * `SubagentMaxTokensTruncationRateHigh` must fire, warning and critical, for
 * all three: claude answers a truncated turn with a typed JSON-RPC error,
 * codex with a text chunk and `end_turn`, gemini with a plain `end_turn`
 * whose cause only its own telemetry (`--agent-telemetry`) reports.
 *
 * Runs go in step with the scrapes, without sleeping: after each batch the
 * driver polls Prometheus until both jobs' `subagent_runs_total` count every
 * answered turn, then sends the next, until the alerts fire or a deadline
 * passes. One agent process and one session per agent (claude takes seconds
 * to open a session); a prompt left unanswered for 30 s is given up and the
 * agent goes on in a new session (claude answers the turns after a failed one
 * out of step, see the README).
 *
 * Needs the agents (`npm ci --prefix test/agents/pinned`) and Prometheus
 * (`apt-get install prometheus`).
 *
 * @module subagent-otel/test/agents/truncation-alert.e2e
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderRules } from '../../collector-config/prometheus/render-rules.mjs';
import { CLI } from '../helpers/paths.js';
import { freePort, instantQuery, pollUntil, prometheusAlerts, startPrometheus, type LocalServer } from '../helpers/prometheus.js';
import { startPeer, type AcpPeer } from './acp-driver.js';
import { AGENT_NAMES, launchSpec, requireAgent, type AgentLaunch, type AgentName } from './agents.js';
import { startModelServer, TEXT, type ModelServer } from './model-server.js';

/** Of every four prompts, three stop at the output-token limit. */
const BATCH = ['max-tokens', 'max-tokens', 'max-tokens', 'normal'] as const;
const DRIVE_DEADLINE_MS = 90_000;
/** The label each agent's runs carry (its `initialize` `agentInfo.name`). */
const AGENT_LABEL: Record<AgentName, string> = { codex: '@agentclientprotocol/codex-acp', claude: '@agentclientprotocol/claude-agent-acp', gemini: 'gemini-cli' };

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
}

/** How long one prompt may take before the driver gives up on it and opens a new session. */
const PROMPT_BOUND_MS = 30_000;

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
  const argv = [process.execPath, CLI, 'proxy', '--protocol', 'acp', '--agent-telemetry', '--prometheus-port', String(port), '--', ...spec.argv];
  // A generous bound on the wait for gemini's and claude's own records (released as soon as they are in).
  const env = agent === 'codex' ? spec.env : { ...spec.env, SUBAGENT_OTEL_AGENT_TELEMETRY_WAIT_MS: '60000' };
  const peer = await startPeer(argv, env, spec.cwd);
  const sessionId = await peer.newSession(spec.cwd);
  return { agent, job: `real-${agent}`, target: `127.0.0.1:${port}`, peer, sessionId, spec, answered: 0, maxTokensErrors: 0, stalled: 0 };
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
      files: { 'rules.yml': renderRules({ truncationWindow: '60s', truncationWarningFor: '2s', truncationCriticalFor: '2s' }) },
    });
    const p = prom;
    const deadline = Date.now() + DRIVE_DEADLINE_MS;
    driving = (async () => {
      while (!stopDriving) {
        if (Date.now() > deadline) throw new Error(`the runs were still needed after ${DRIVE_DEADLINE_MS} ms`);
        await Promise.all(
          observed.map(async (o) => {
            for (const scenario of BATCH) {
              if (stopDriving) return;
              nonce += 1;
              const turn = await answeredWithin(o.peer.prompt(o.sessionId, `scenario:${scenario}#alert${nonce} Please answer.`), PROMPT_BOUND_MS);
              if (turn === undefined) {
                // The agent never answered (no run ends, so nothing to count): go on in a new session.
                o.stalled += 1;
                o.sessionId = await o.peer.newSession(o.spec.cwd);
                continue;
              }
              o.answered += 1;
              // What the client saw of the limit: claude's error, codex's text chunk, gemini's cut text.
              if (/output token|max_output_tokens/.test(JSON.stringify(turn.error ?? turn.text)) || turn.text === TEXT.partial) o.maxTokensErrors += 1;
            }
          }),
        );
        await pollUntil(
          async () => {
            if (stopDriving) return true;
            const totals = await instantQuery(p, 'sum by (job) (subagent_runs_total)');
            const seen = observed.every((o) => totals.some((t) => t.metric.job === o.job && Number(t.value[1]) === o.answered));
            return seen ? true : undefined;
          },
          { what: 'Prometheus to scrape every answered run from every proxy', timeoutMs: 20_000, intervalMs: 100 },
        );
      }
    })();
    driving.catch(() => undefined); // reaches the tests through the race below
  }, 120_000);

  afterAll(async () => {
    stopDriving = true;
    // Close first: a prompt still in flight is then rejected instead of awaited
    // (claude answers turns after a failed one out of step, see the README).
    await Promise.all(observed.map((o) => o.peer.close()));
    await driving?.catch(() => undefined);
    for (const o of observed) o.spec.dispose();
    await prom?.stop();
    await server?.close();
  }, 120_000);

  const whileDriving = <T>(work: Promise<T>): Promise<T> =>
    Promise.race([
      work,
      (driving ?? Promise.reject(new Error('the driver did not start'))).then(() => {
        throw new Error('the runs stopped before the alert fired');
      }),
    ]);

  it('fires warning and critical for all three agents, labelled with the agent', async () => {
    if (prom === undefined) throw new Error('Prometheus did not start (see beforeAll)');
    const p = prom;
    const firing = await whileDriving(
      pollUntil(
        async () => {
          const mine = (await prometheusAlerts(p))
            .filter((a) => a.labels.alertname === 'SubagentMaxTokensTruncationRateHigh' && a.state === 'firing')
            .map((a) => `${a.labels.job} ${a.labels.gen_ai_agent_name} ${a.labels.severity}`)
            .sort();
          return mine.length === 6 ? mine : undefined;
        },
        { what: 'the truncation alerts of all three agents to fire', timeoutMs: 80_000, intervalMs: 250 },
      ),
    ).catch(async (error: unknown) => {
      // Say how far the runs got and what Prometheus computed, then fail as before.
      const ratios = await instantQuery(p, '{__name__=~"job_gen_ai_agent_name:subagent_.*"}').catch(() => []);
      const state = observed.map((o) => `${o.job}: ${o.answered} answered, ${o.maxTokensErrors} truncation errors, ${o.stalled} unanswered`).join('; ');
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
  }, 100_000);

  it('counted the agents’ own truncation errors as max-tokens runs', async () => {
    if (prom === undefined) throw new Error('Prometheus did not start (see beforeAll)');
    const series = await instantQuery(prom, 'sum by (job, gen_ai_agent_name, subagent_stop_reason) (subagent_runs_total)');
    const maxTokens = Object.fromEntries(series.filter((s) => s.metric.subagent_stop_reason === 'max-tokens').map((s) => [s.metric.job, Number(s.value[1])]));
    for (const o of observed) {
      // The agents really did answer with their truncation errors (claude
      // answers the prompt after one with an empty turn, so fewer than 3 in 4).
      expect(o.maxTokensErrors).toBeGreaterThan(0);
      expect(maxTokens[o.job]).toBeGreaterThan(0);
    }
    expect(series.filter((s) => s.metric.subagent_stop_reason === 'error').map((s) => s.metric.job)).toEqual([]);
  });
});
