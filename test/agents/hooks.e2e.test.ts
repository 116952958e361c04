/**
 * The hooks with the real Claude Code: claude-agent-acp 0.101 (Claude Code
 * 2.1.318) against the scripted model server, in a temporary home where
 * `subagent-otel setup claude-code` installed its hooks into the user
 * settings Claude Code reads. One session delegates in two turns; Claude
 * Code itself runs the hook at each subagent's end and each turn's end; the
 * watcher the first hook starts reports the runs. The idle bound is the
 * default (10 minutes): a run that arrives came by its hook.
 * Needs the agents installed: `npm ci --prefix test/agents/pinned`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSpans, runCli, type OtlpSpan } from '../helpers/cli.js';
import { startPeer, type AcpPeer } from './acp-driver.js';
import { launchSpec, requireAgent, type AgentLaunch } from './agents.js';
import { startModelServer, TEXT, type ModelServer } from './model-server.js';

let server: ModelServer;
let spec: AgentLaunch;
let env: NodeJS.ProcessEnv;
let peer: AcpPeer | undefined;
let out: string;
let stateDir: string;

const runs = (): OtlpSpan[] => readSpans(out).filter((span) => span.name.startsWith('invoke_agent'));
const withText = (text: string): OtlpSpan[] => runs().filter((span) => JSON.stringify(span.attributes).includes(text));
const log = (): string => {
  const file = join(stateDir, 'subagent-otel', 'daemon', 'watch.log');
  return existsSync(file) ? readFileSync(file, 'utf8') : '(no log)';
};

async function until(what: string, condition: () => boolean, budgetMs = 120_000): Promise<void> {
  const deadline = Date.now() + budgetMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; watcher log:\n${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

it('claude is installed in test/agents/pinned', () => {
  expect(requireAgent('claude')).toMatch(/node_modules/);
});

describe('setup claude-code with the real Claude Code', () => {
  beforeAll(async () => {
    server = await startModelServer();
    spec = launchSpec('claude', server.origin);
    const home = spec.env.HOME ?? '';
    stateDir = join(home, 'state');
    out = join(home, 'telemetry');
    // What the delegation scenarios need (test/agents/transcript-generator.ts): the Agent tool allowed without asking.
    writeFileSync(
      join(home, '.claude', 'settings.json'),
      `${JSON.stringify({ permissions: { allow: ['Agent', 'Task'], defaultMode: 'bypassPermissions' } }, null, 2)}\n`,
    );
    env = { ...spec.env, XDG_STATE_HOME: stateDir, XDG_CONFIG_HOME: join(home, 'config') };
    const setup = await runCli(['setup', 'claude-code', '--out', out], '', env);
    expect(setup.stderr.toString()).toBe('');
    expect(setup.code).toBe(0);
  }, 120_000);

  afterAll(async () => {
    await peer?.close();
    const lock = join(stateDir, 'subagent-otel', 'daemon', 'watch.lock');
    const pid = existsSync(lock) ? Number.parseInt(readFileSync(lock, 'utf8'), 10) : NaN;
    if (Number.isInteger(pid)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await server?.close();
    spec?.dispose();
  });

  it('reports each subagent and each turn of the session when Claude Code runs the hooks', async () => {
    peer = await startPeer(spec.argv, env, spec.cwd);
    const sessionId = await peer.newSession(spec.cwd);
    const first = await peer.prompt(sessionId, 'scenario:delegate#hooks-one Please delegate this to a subagent.');
    expect(first.text).toContain(TEXT.delegated);
    await until(
      'the first subagent and the first turn',
      () => withText(TEXT.child).length === 1 && withText(TEXT.delegated).length === 1,
    );
    const second = await peer.prompt(sessionId, 'scenario:delegate#hooks-two Please delegate this to a subagent.');
    expect(second.text).toContain(TEXT.delegated);
    // The second turn is the session's run taken up again: reported as its later part (decision 0098), whose output is
    // none here because the selection did not change (the same closing text as the first turn's).
    const continuation = (): OtlpSpan[] =>
      runs().filter((span) => span.attributes.some((a) => a.key === 'subagent.run.continues'));
    await until(
      'the second subagent and the second turn',
      () => withText(TEXT.child).length === 2 && continuation().length === 1,
    );

    const children = withText(TEXT.child);
    const [firstTurn] = withText(TEXT.delegated);
    expect(children).toHaveLength(2);
    expect(runs()).toHaveLength(4);
    // Each run closed whole: the second turn, begun soon after the first turn's hook, was not closed in its middle
    // by that hook's notice (it would be an `unknown` part ending at the tool call).
    const stopReason = (span: OtlpSpan): string | undefined =>
      span.attributes.find((a) => a.key === 'subagent.stop_reason')?.value.stringValue;
    expect(runs().map(stopReason)).toEqual(['completed', 'completed', 'completed', 'completed']);
    // Everything in the session's one trace.
    expect(new Set(runs().map((span) => span.traceId)).size).toBe(1);
    expect(continuation()[0]?.attributes.find((a) => a.key === 'subagent.run.continues')?.value.stringValue).toBe(
      firstTurn?.attributes.find((a) => a.key === 'gen_ai.agent.id')?.value.stringValue,
    );
    expect(log()).toContain('subagent-otel watch --daemon: started');
    expect(log()).not.toMatch(/refused|cannot|outside the folders/);
  }, 300_000);
});
