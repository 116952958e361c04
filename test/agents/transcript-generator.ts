/**
 * Writes real transcripts of today's agents as test data: runs each
 * delegation scenario of the scripted model server against a real pinned ACP
 * agent (Claude Code under claude-agent-acp, Codex under codex-acp, Gemini
 * CLI), each in a fresh temporary home, then copies the transcript files the
 * agent wrote into `test/transcripts/<format>/generated/<scenario>/`, byte for
 * byte, under the same relative paths as in the agent's own folder
 * (Claude Code: `$CLAUDE_CONFIG_DIR/projects/`, Codex: `$CODEX_HOME/sessions/`,
 * Gemini CLI: `~/.gemini/tmp/`, chats only).
 *
 * Run by `scripts/generate-agent-transcripts.mjs`; never by the test suite
 * (the tests read the committed files and need no agent). Owns the temporary
 * homes it creates and the scenario folders it replaces.
 *
 * @module subagent-otel/test/agents/transcript-generator
 */
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { startPeer, type Turn } from './acp-driver.js';
import { launchSpec, type AgentName } from './agents.js';
import { startModelServer, type DelegationScenario, type ModelServer } from './model-server.js';

/** One generated session: which agent, which scenario of the model server, where it goes. */
export interface Plan {
  readonly agent: AgentName;
  readonly scenario: DelegationScenario;
  /** The folder under `test/transcripts/<format>/generated/`. */
  readonly folder: string;
  /** Sends `session/cancel` once the subagent's request is held open (the user's stop button). */
  readonly cancel?: boolean;
}

/** Every generated session, in the order they run. */
export const PLANS: readonly Plan[] = [
  { agent: 'claude', scenario: 'delegate', folder: 'foreground' },
  { agent: 'claude', scenario: 'delegate-bg', folder: 'background' },
  { agent: 'claude', scenario: 'delegate-bg-cut', folder: 'background-cut' },
  { agent: 'claude', scenario: 'delegate-cut', folder: 'foreground-cut' },
  { agent: 'claude', scenario: 'delegate-parent-cut', folder: 'parent-cut' },
  { agent: 'claude', scenario: 'delegate-hang', folder: 'interrupted', cancel: true },
  { agent: 'codex', scenario: 'delegate', folder: 'spawn' },
  { agent: 'codex', scenario: 'delegate-cut', folder: 'child-cut' },
  { agent: 'codex', scenario: 'delegate-parent-cut', folder: 'parent-cut' },
  { agent: 'codex', scenario: 'delegate-hang', folder: 'interrupted', cancel: true },
  { agent: 'gemini', scenario: 'delegate', folder: 'invoke' },
  { agent: 'gemini', scenario: 'delegate-cut', folder: 'child-cut' },
  { agent: 'gemini', scenario: 'delegate-hang', folder: 'interrupted', cancel: true },
];

/** The transcript format folder of each agent under `test/transcripts/`. */
export const FORMAT_DIR: Record<AgentName, string> = { claude: 'claude-code', codex: 'codex', gemini: 'gemini-cli' };

/** How long one scenario may take before the generator gives up on it. */
const SCENARIO_BUDGET_MS = 240_000;

async function until(what: string, condition: () => boolean, budgetMs: number): Promise<void> {
  const deadline = Date.now() + budgetMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Total size and count of the files under `dir` (0 when absent): changes while an agent still writes. */
function footprint(dir: string): string {
  if (!existsSync(dir)) return '0';
  let size = 0;
  let files = 0;
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        files += 1;
        size += statSync(p).size;
      }
    }
  };
  walk(dir);
  return `${files}:${size}`;
}

/** Waits until nothing under `dir` changed for `quietMs` (at most `budgetMs`). */
async function settled(dir: string, quietMs: number, budgetMs: number): Promise<void> {
  const deadline = Date.now() + budgetMs;
  let last = footprint(dir);
  let since = Date.now();
  while (Date.now() - since < quietMs && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = footprint(dir);
    if (now !== last) {
      last = now;
      since = Date.now();
    }
  }
}

/** Where the agent writes its transcripts under its temporary home, and what of it is copied. */
function transcriptRoot(agent: AgentName, home: string): string {
  if (agent === 'claude') return join(home, '.claude', 'projects');
  if (agent === 'codex') return join(home, '.codex', 'sessions');
  return join(home, '.gemini', 'tmp');
}

/** Copies the transcript files (Gemini CLI: only those under a `chats` folder) keeping their relative paths. */
function copyTranscripts(agent: AgentName, from: string, to: string): string[] {
  const copied: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const rel = relative(from, p);
        if (agent === 'gemini' && !rel.split('/').includes('chats')) continue;
        mkdirSync(join(to, rel, '..'), { recursive: true });
        cpSync(p, join(to, rel));
        copied.push(rel);
      }
    }
  };
  if (existsSync(from)) walk(from);
  return copied.sort();
}

/** What one run produced (for the generator's log). */
export interface PlanResult {
  readonly plan: Plan;
  readonly files: string[];
  readonly turn: Pick<Turn, 'response' | 'error' | 'text'>;
  readonly answered: string[];
}

/**
 * Runs one plan and writes its files under `<outRoot>/<format>/generated/<folder>/` (the folder is replaced).
 * `debugDir`, when given, receives the model server's request log of the run as JSON.
 */
export async function runPlan(plan: Plan, outRoot: string, debugDir?: string): Promise<PlanResult> {
  const server: ModelServer = await startModelServer();
  const spec = launchSpec(plan.agent, server.origin);
  const home = spec.env.HOME!;
  if (plan.agent === 'claude') {
    // Background subagents and the Agent tool without the auto-mode classifier's model calls (root: IS_SANDBOX=1).
    writeFileSync(
      join(home, '.claude', 'settings.json'),
      `${JSON.stringify({ permissions: { allow: ['Agent', 'Task'], defaultMode: 'bypassPermissions' } }, null, 2)}\n`,
    );
  }
  if (plan.agent === 'gemini') {
    // Gemini CLI 0.61 checks the subagent itself as a tool named after the agent (`generalist`), which no default
    // policy rule names, so under ACP it is denied ("Tool execution for \"Generalist Agent\" denied by policy.").
    mkdirSync(join(home, '.gemini', 'policies'), { recursive: true });
    writeFileSync(
      join(home, '.gemini', 'policies', 'subagents.toml'),
      ['[[rule]]', 'toolName = "generalist"', 'decision = "allow"', 'priority = 100', ''].join('\n'),
    );
  }
  const nonce = `gen-${plan.folder}`;
  const root = transcriptRoot(plan.agent, home);
  try {
    const peer = await startPeer(spec.argv, spec.env, spec.cwd);
    let turn: Turn;
    try {
      const sessionId = await peer.newSession(spec.cwd);
      const prompt = peer.prompt(sessionId, `scenario:${plan.scenario}#${nonce} Please delegate this to a subagent.`);
      if (plan.cancel === true) {
        await until(
          'the held subagent request',
          () => server.requests.some((r) => r.answered === 'hang'),
          SCENARIO_BUDGET_MS,
        );
        await peer.cancel(sessionId);
      }
      turn = await prompt;
      if (plan.scenario === 'delegate-bg' || plan.scenario === 'delegate-bg-cut') {
        // The background subagent's notification starts the parent's last answer after the prompt's own answer.
        await until(
          "the parent's answer after the task notification",
          () =>
            server.requests.some(
              (r) => r.nonce === nonce && (r.answered === 'delegated' || r.answered === 'truncated'),
            ),
          SCENARIO_BUDGET_MS,
        );
      }
      await settled(root, 3000, 60_000);
    } finally {
      await peer.close();
    }
    const answered = server.requests.map((r) => `${r.dialect} ${r.scenario ?? '-'} ${r.nonce ?? '-'} ${r.answered}`);
    if (debugDir !== undefined) {
      mkdirSync(debugDir, { recursive: true });
      writeFileSync(
        join(debugDir, `${plan.agent}-${plan.folder}.json`),
        JSON.stringify({ answered, requests: server.requests, turn }, null, 1),
      );
    }
    const target = join(outRoot, FORMAT_DIR[plan.agent], 'generated', plan.folder);
    rmSync(target, { recursive: true, force: true });
    const files = copyTranscripts(plan.agent, root, target);
    return { plan, files, turn: { response: turn.response, error: turn.error, text: turn.text }, answered };
  } finally {
    await server.close();
    spec.dispose();
  }
}
