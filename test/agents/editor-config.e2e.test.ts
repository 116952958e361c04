/**
 * The per-agent editor configurations of docs/AGENTS.md, run as written: each Zed
 * `agent_servers` block of its "Editor configuration, per agent" section is spawned the way
 * an editor would (its `command`, `args` and `env`), with `subagent-otel`
 * being the built CLI and the pinned agents' commands on `PATH`. Only the
 * OTLP endpoint is pointed at a real OTLP/HTTP receiver on loopback, and the
 * agent gets the offline home and model-server settings of the other
 * real-agent tests. One prompt each must reach the client and arrive at the
 * receiver as an `invoke_agent` span with that text as output.
 * Needs the agents installed: `npm ci --prefix test/agents/pinned`.
 *
 * @module subagent-otel/test/agents/editor-config.e2e
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attributes } from '../helpers/cli.js';
import { startOtlpReceiver, spansOfTraceBody, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { CLI, ROOT } from '../helpers/paths.js';
import { startPeer } from './acp-driver.js';
import { AGENTS_DIR, launchSpec, requireAgent, type AgentName } from './agents.js';
import { startModelServer, TEXT, type ModelServer } from './model-server.js';
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_SUBAGENT_OUTPUT,
  ATTR_SUBAGENT_STOP_REASON,
} from '../../src/telemetry/semconv.js';

interface EditorAgent {
  readonly title: string;
  readonly type?: string;
  readonly command: string;
  readonly args: string[];
  readonly env: Record<string, string>;
}

/** The `agent_servers` entries of the editor configurations in docs/AGENTS.md, in order. */
function readmeAgents(): EditorAgent[] {
  const readme = readFileSync(join(ROOT, 'docs', 'AGENTS.md'), 'utf8');
  const start = readme.indexOf('\n## Editor configuration, per agent\n');
  if (start === -1) throw new Error('docs/AGENTS.md has no "## Editor configuration, per agent" section');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/```json\n([\s\S]*?)```/g)].flatMap((m) => {
    const parsed = JSON.parse(m[1]!) as { agent_servers: Record<string, Omit<EditorAgent, 'title'>> };
    return Object.entries(parsed.agent_servers).map(([title, entry]) => ({ title, ...entry }));
  });
}

/** Which pinned agent an entry runs: the command after the proxy's `--`. */
function agentOf(entry: EditorAgent): AgentName {
  const command = entry.args[entry.args.indexOf('--') + 1];
  const byCommand: Record<string, AgentName> = { 'claude-agent-acp': 'claude', 'codex-acp': 'codex', gemini: 'gemini' };
  const agent = command !== undefined ? byCommand[command] : undefined;
  if (agent === undefined) throw new Error(`${entry.title}: no pinned agent runs as "${String(command)}"`);
  return agent;
}

const entries = readmeAgents();

describe("docs/AGENTS.md's editor configurations, run as an editor would", () => {
  let receiver: OtlpReceiver;
  let server: ModelServer;
  let binDir: string;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    server = await startModelServer();
    // `subagent-otel` as `npm install -g subagent-otel` would put it on PATH: the built CLI.
    binDir = mkdtempSync(join(tmpdir(), 'editor-config-bin-'));
    const launcher = join(binDir, 'subagent-otel');
    writeFileSync(launcher, `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    chmodSync(launcher, 0o755);
  });

  afterAll(async () => {
    await receiver?.close();
    await server?.close();
    if (binDir !== undefined) rmSync(binDir, { recursive: true, force: true });
  });

  it('has one configuration per pinned agent, each the proxy in front of it', () => {
    expect(entries.map((e) => [e.type, e.command, e.args.slice(0, 4), agentOf(e)])).toEqual([
      ['custom', 'subagent-otel', ['proxy', '--protocol', 'acp', '--'], 'claude'],
      ['custom', 'subagent-otel', ['proxy', '--protocol', 'acp', '--'], 'codex'],
      ['custom', 'subagent-otel', ['proxy', '--protocol', 'acp', '--'], 'gemini'],
    ]);
    for (const e of entries)
      expect(e.env).toEqual({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      });
  });

  it.each(entries.map((e) => [e.title, e] as const))(
    '%s answers a prompt and exports its span',
    async (_title, entry) => {
      const agent = agentOf(entry);
      requireAgent(agent);
      const spec = launchSpec(agent, server.origin);
      try {
        const env: NodeJS.ProcessEnv = {
          ...spec.env,
          ...entry.env,
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          OTEL_BSP_SCHEDULE_DELAY: '200', // export each run soon after it ends, not at the default 5 s
          PATH: [binDir, join(AGENTS_DIR, 'node_modules', '.bin'), process.env.PATH ?? ''].join(delimiter),
        };
        const peer = await startPeer([entry.command, ...entry.args], env, spec.cwd);
        const sessionId = await peer.newSession(spec.cwd);
        const turn = await peer.prompt(sessionId, `scenario:normal#editor-${agent} Please answer.`);
        const request = await receiver.waitFor(
          (r) =>
            r.path === '/v1/traces' &&
            spansOfTraceBody(r.body).some((s) => attributes(s)[ATTR_GEN_AI_CONVERSATION_ID] === sessionId),
        );
        await peer.close();
        expect(turn.text).toBe(TEXT.normal);
        const run = spansOfTraceBody(request.body).find(
          (s) => attributes(s)[ATTR_GEN_AI_CONVERSATION_ID] === sessionId,
        );
        expect(run?.name.startsWith('invoke_agent')).toBe(true);
        expect(attributes(run!)).toMatchObject({
          [ATTR_SUBAGENT_OUTPUT]: JSON.stringify([{ type: 'text', text: TEXT.normal }]),
          [ATTR_SUBAGENT_STOP_REASON]: 'completed',
        });
      } finally {
        spec.dispose();
      }
    },
    120_000,
  );
});
