/**
 * A real ACP agent on the real engines, the way users run it: the
 * single-tier stack (scripts/stack/stack.mjs on free loopback ports: the
 * project's collector, Jaeger 2.13.0, Prometheus 3.16.0, Alertmanager) and
 * the built CLI's `subagent-otel proxy --protocol acp` in front of
 * claude-agent-acp 0.101 (test/agents/pinned) against the scripted model
 * server, its OTLP/HTTP endpoint the stack's collector. The official ACP SDK
 * client sends a fixed set of prompts, each in a session of its own (claude
 * answers the turn after a failed one out of step): two answered normally,
 * two cut at the output-token limit (claude answers those with a typed
 * JSON-RPC error). A second proxy with content capture off plays one of each.
 * Then gemini-cli 0.61 behind `proxy --protocol acp --agent-telemetry`, one
 * of each: gemini answers a cut turn with a plain `end_turn`, so only its own
 * telemetry (`gemini_cli.api_response` finish reasons) makes it a max-tokens
 * run.
 *
 * Asserted on the engines' own APIs: one Jaeger trace per prompt, its
 * `invoke_agent` span naming the agent, with the stop reason (the truncated
 * ones found by the tag search `subagent.stop_reason=max-tokens`) and the
 * text the client received as `subagent.output` (capture on) or only as its
 * SHA-256 and length (capture off); exact `subagent_runs_total` per stop
 * reason in Prometheus. The proxies stay up until every condition was seen
 * (metrics exported every second, cumulative, so the counts are exact); the
 * test waits for conditions, it never sleeps.
 *
 * Needs the agents (`npm ci --no-audit --no-fund --prefix test/agents/pinned`)
 * and the engines (`npm run stack -- build`).
 *
 * @module subagent-otel/test/stack/real-agent.e2e
 */

import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack } from '../../scripts/stack/stack.mjs';
import type { Stack } from '../../scripts/stack/stack.mjs';
import { startPeer, type AcpPeer, type Turn } from '../agents/acp-driver.js';
import { launchSpec, type AgentLaunch, type AgentName } from '../agents/agents.js';
import { startModelServer, type ModelServer } from '../agents/model-server.js';
import { CLI } from '../helpers/paths.js';
import { jaegerTraces, promQuery, tag, waitFor } from './observed.js';
import type { JaegerSpan, JaegerTrace } from './observed.js';

/** The label claude-agent-acp's runs carry (its `initialize` `agentInfo.name`). */
const AGENT = '@agentclientprotocol/claude-agent-acp';
/** gemini-cli's label. */
const GEMINI = 'gemini-cli';
/** What the client receives for `normal` (the model server's text). */
const NORMAL_TEXT = 'The answer is 42.';
/** What the client receives for `max-tokens`: claude retries three times (the partial text four times), then sends its error as text. */
const MAX_TOKENS_TEXT =
  'Here is the first part of a long'.repeat(4) +
  "API Error: Claude's response exceeded the 128000 output token maximum. To configure this behavior, set the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable.";

type Prompted = 'normal' | 'max-tokens';

/** One proxy in front of one agent, and what its client saw. */
interface Observed {
  readonly service: string;
  readonly spec: AgentLaunch;
  readonly out: string;
  readonly peer: AcpPeer;
  readonly turns: Array<{ scenario: Prompted; turn: Turn }>;
}

const CAPTURE_ON = {
  service: 'stack-e2e-claude',
  scenarios: ['normal', 'max-tokens', 'normal', 'max-tokens'] as const,
};
const CAPTURE_OFF = { service: 'stack-e2e-claude-nocontent', scenarios: ['normal', 'max-tokens'] as const };
const GEMINI_RUNS = { service: 'stack-e2e-gemini', scenarios: ['normal', 'max-tokens'] as const };

let stack: Stack;
let dir: string;
let server: ModelServer;
const observed: Observed[] = [];
let nonce = 0;

/** Starts the proxy (with `proxyArgs`) in front of `agent` with the stack's collector as OTLP endpoint, and plays `scenarios`, each in a new session. */
async function play(
  agent: AgentName,
  service: string,
  scenarios: readonly Prompted[],
  env: NodeJS.ProcessEnv = {},
  proxyArgs: readonly string[] = [],
): Promise<Observed> {
  const spec = launchSpec(agent, server.origin);
  const out = mkdtempSync(join(tmpdir(), 'subagent-otel-stack-agent-out-'));
  const argv = [process.execPath, CLI, 'proxy', '--protocol', 'acp', ...proxyArgs, '--', ...spec.argv];
  const peer = await startPeer(
    argv,
    {
      ...spec.env,
      OTEL_SERVICE_NAME: service,
      OTEL_EXPORTER_OTLP_ENDPOINT: stack.urls.otlpHttp,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_METRIC_EXPORT_INTERVAL: '1000',
      SUBAGENT_OTEL_OUT: out,
      ...env,
    },
    spec.cwd,
  );
  const o: Observed = { service, spec, out, peer, turns: [] };
  observed.push(o);
  for (const scenario of scenarios) {
    nonce += 1;
    const sessionId = await peer.newSession(spec.cwd);
    const turn = await peer.prompt(sessionId, `scenario:${scenario}#stack${nonce} Please answer.`);
    o.turns.push({ scenario, turn });
  }
  return o;
}

/** The single run span of a trace (the proxy's `invoke_agent` span; an agent's own spans forwarded into the trace carry no stop reason). */
function runSpan(trace: JaegerTrace): JaegerSpan {
  const runs = trace.spans.filter(
    (s) => tag(s, 'gen_ai.operation.name') === 'invoke_agent' && tag(s, 'subagent.stop_reason') !== undefined,
  );
  expect(runs, `trace ${trace.traceID}`).toHaveLength(1);
  return runs[0] as JaegerSpan;
}

/** The `subagent.output` JSON of one text block (written by hand from the content policy's contract). */
function outputJson(text: string): string {
  return JSON.stringify([{ type: 'text', text }]);
}

/** Waits for exactly `count` traces of `service` (optionally matching `tags`). */
async function traces(service: string, count: number, tags: Record<string, string> = {}): Promise<JaegerTrace[]> {
  return waitFor(`${count} traces of ${service} ${JSON.stringify(tags)} in Jaeger`, async () => {
    const t = await jaegerTraces(stack.urls.jaeger, service, tags);
    // Every span of each trace in (the run span and what the proxy hangs below it).
    return t.length === count &&
      t.every((tr) =>
        tr.spans.some(
          (s) => tag(s, 'gen_ai.operation.name') === 'invoke_agent' && tag(s, 'subagent.stop_reason') !== undefined,
        ),
      )
      ? t
      : undefined;
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'subagent-otel-stack-agent-'));
  stack = await startStack({ dir, tiers: 1, ports: 'free' });
  server = await startModelServer();
  await play('claude', CAPTURE_ON.service, CAPTURE_ON.scenarios);
  await play('claude', CAPTURE_OFF.service, CAPTURE_OFF.scenarios, {
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'false',
  });
  // A generous bound on the wait for gemini's own records (released as soon as they are in).
  await play('gemini', GEMINI_RUNS.service, GEMINI_RUNS.scenarios, { SUBAGENT_OTEL_AGENT_TELEMETRY_WAIT_MS: '60000' }, [
    '--agent-telemetry',
  ]);
}, 600_000);

afterAll(async () => {
  for (const o of observed) {
    await o.peer.close();
    o.spec.dispose();
    rmSync(o.out, { recursive: true, force: true });
  }
  await server?.close();
  await stack?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
}, 120_000);

describe('claude-agent-acp behind subagent-otel proxy --protocol acp, on the stack', () => {
  it("the client got the agent's answers: normal text with end_turn, the truncated text with claude's limit error", () => {
    expect(observed.map((o) => o.turns.length)).toEqual([4, 2, 2]);
    for (const o of observed.slice(0, 2)) {
      for (const { scenario, turn } of o.turns) {
        if (scenario === 'normal') {
          expect(turn.text).toBe(NORMAL_TEXT);
          expect(turn.response).toMatchObject({ stopReason: 'end_turn' });
        } else {
          expect(turn.text).toBe(MAX_TOKENS_TEXT);
          expect(turn.error?.code).toBe(-32603);
        }
      }
    }
  });

  it('Jaeger has one trace per prompt, the truncated ones found by subagent.stop_reason=max-tokens', async () => {
    const truncated = await traces(CAPTURE_ON.service, 2, { 'subagent.stop_reason': 'max-tokens' });
    expect(truncated).toHaveLength(2);
    const all = await traces(CAPTURE_ON.service, 4);
    expect(all).toHaveLength(4);
    const runs = all.map(runSpan);
    expect(runs.map((s) => tag(s, 'gen_ai.agent.name'))).toEqual([AGENT, AGENT, AGENT, AGENT]);
    expect(runs.map((s) => String(tag(s, 'subagent.stop_reason'))).sort()).toEqual([
      'completed',
      'completed',
      'max-tokens',
      'max-tokens',
    ]);
    // Each prompt's session is its own conversation, one per trace.
    const conversations = runs.map((s) => tag(s, 'gen_ai.conversation.id'));
    const sessions = (observed[0]?.turns ?? []).map((t) => t.turn.sessionId);
    expect([...conversations].sort()).toEqual([...sessions].sort());
  }, 330_000);

  it("with capture on, each run span's subagent.output is the text its client received", async () => {
    const all = await traces(CAPTURE_ON.service, 4);
    const bySession = new Map(all.map((t) => [String(tag(runSpan(t), 'gen_ai.conversation.id')), runSpan(t)]));
    const o = observed[0];
    expect(o?.turns).toHaveLength(4);
    for (const { scenario, turn } of o?.turns ?? []) {
      const span = bySession.get(turn.sessionId);
      expect(span, turn.sessionId).toBeDefined();
      if (span === undefined) continue;
      expect(tag(span, 'subagent.stop_reason')).toBe(scenario === 'normal' ? 'completed' : 'max-tokens');
      expect(tag(span, 'subagent.output')).toBe(outputJson(turn.text));
      expect(tag(span, 'subagent.output.sha256')).toBe(
        createHash('sha256').update(outputJson(turn.text)).digest('hex'),
      );
    }
  }, 330_000);

  it("with capture off, the run spans carry only the output's SHA-256 and length, matching the client's text", async () => {
    const truncated = await traces(CAPTURE_OFF.service, 1, { 'subagent.stop_reason': 'max-tokens' });
    expect(truncated).toHaveLength(1);
    const all = await traces(CAPTURE_OFF.service, 2);
    const bySession = new Map(all.map((t) => [String(tag(runSpan(t), 'gen_ai.conversation.id')), runSpan(t)]));
    const o = observed[1];
    expect(o?.turns).toHaveLength(2);
    for (const { scenario, turn } of o?.turns ?? []) {
      const span = bySession.get(turn.sessionId);
      expect(span, turn.sessionId).toBeDefined();
      if (span === undefined) continue;
      expect(tag(span, 'gen_ai.agent.name')).toBe(AGENT);
      expect(tag(span, 'subagent.stop_reason')).toBe(scenario === 'normal' ? 'completed' : 'max-tokens');
      expect(span.tags.map((t) => t.key)).not.toContain('subagent.output');
      expect(span.tags.map((t) => t.key)).not.toContain('gen_ai.output.messages');
      const json = outputJson(turn.text);
      expect(tag(span, 'subagent.output.sha256')).toBe(createHash('sha256').update(json).digest('hex'));
      expect(tag(span, 'subagent.output.length')).toBe(json.length);
    }
  }, 330_000);

  it('gemini-cli with --agent-telemetry: a cut turn looks finished on the wire, its own telemetry makes it a max-tokens run', async () => {
    const o = observed[2];
    expect(
      o?.turns.map((t) => [t.turn.text, (t.turn.response as { stopReason?: string } | undefined)?.stopReason]),
    ).toEqual([
      [NORMAL_TEXT, 'end_turn'],
      ['Here is the first part of a long', 'end_turn'],
    ]);
    const truncated = await traces(GEMINI_RUNS.service, 1, { 'subagent.stop_reason': 'max-tokens' });
    const cut = runSpan(truncated[0] as JaegerTrace);
    expect(tag(cut, 'gen_ai.agent.name')).toBe(GEMINI);
    expect(tag(cut, 'subagent.stop_reason.inferred_from')).toBe(
      'agent-telemetry:gemini_cli.api_response.finish_reasons',
    );
    expect(tag(cut, 'subagent.output')).toBe(outputJson('Here is the first part of a long'));
    const all = await traces(GEMINI_RUNS.service, 2);
    const bySession = new Map(all.map((t) => [String(tag(runSpan(t), 'gen_ai.conversation.id')), runSpan(t)]));
    for (const { scenario, turn } of o?.turns ?? []) {
      const span = bySession.get(turn.sessionId);
      expect(span, turn.sessionId).toBeDefined();
      if (span === undefined) continue;
      expect(tag(span, 'gen_ai.agent.name')).toBe(GEMINI);
      expect(tag(span, 'subagent.stop_reason')).toBe(scenario === 'normal' ? 'completed' : 'max-tokens');
      expect(tag(span, 'subagent.output')).toBe(outputJson(turn.text));
    }
  }, 330_000);

  it('Prometheus 3 has subagent_runs_total for the agent, exactly, per stop reason', async () => {
    for (const [service, agent, want] of [
      [CAPTURE_ON.service, AGENT, { completed: 2, 'max-tokens': 2 }],
      [CAPTURE_OFF.service, AGENT, { completed: 1, 'max-tokens': 1 }],
      [GEMINI_RUNS.service, GEMINI, { completed: 1, 'max-tokens': 1 }],
    ] as const) {
      const q = `sum by (gen_ai_agent_name, subagent_stop_reason) (subagent_runs_total{job="${service}"})`;
      const counts = await waitFor(`${q} = ${JSON.stringify(want)}`, async () => {
        const r = await promQuery(stack.urls.prometheus, q);
        const got = Object.fromEntries(
          r.map((s) => [`${s.metric.gen_ai_agent_name} ${s.metric.subagent_stop_reason}`, Number(s.value[1])]),
        );
        const expected = { [`${agent} completed`]: want.completed, [`${agent} max-tokens`]: want['max-tokens'] };
        const same =
          Object.keys(got).length === Object.keys(expected).length &&
          Object.entries(expected).every(([k, v]) => got[k] === v);
        return same ? got : undefined;
      });
      expect(counts).toEqual({ [`${agent} completed`]: want.completed, [`${agent} max-tokens`]: want['max-tokens'] });
    }
  }, 330_000);
});
