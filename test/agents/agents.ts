/**
 * How the real-agent tests launch each pinned ACP agent offline: the command
 * line (from this folder's own `node_modules`, installed by
 * `npm ci --prefix test/agents/pinned`), and a throw-away home with the
 * configuration and environment that point it at the scripted model server
 * and switch off updates, telemetry and retries.
 *
 * Owns only the temporary directories it creates (`dispose()` removes them).
 *
 * @module subagent-otel/test/agents/agents
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The agents' own npm package (`test/agents/pinned`): a folder below this one,
 * so that these test modules still resolve the project's own dependencies
 * (the agents' packages bring older copies of some of them).
 */
export const AGENTS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'pinned');
/** The command that installs the agents (what `.ci/run` does). */
export const INSTALL_AGENTS = 'npm ci --no-audit --no-fund --prefix test/agents/pinned';

export type AgentName = 'claude' | 'codex' | 'gemini';
export const AGENT_NAMES: readonly AgentName[] = ['claude', 'codex', 'gemini'];

const MODULES = join(AGENTS_DIR, 'node_modules');
const ENTRY: Record<AgentName, string> = {
  claude: join(MODULES, '@agentclientprotocol', 'claude-agent-acp', 'dist', 'index.js'),
  codex: join(MODULES, '@agentclientprotocol', 'codex-acp', 'dist', 'index.js'),
  gemini: join(MODULES, '@google', 'gemini-cli', 'bundle', 'gemini.js'),
};

/**
 * Throws, naming the install command, when an agent's entry point is missing.
 * Never installs anything itself.
 */
export function requireAgent(name: AgentName): string {
  const entry = ENTRY[name];
  if (!existsSync(entry))
    throw new Error(`${name} ACP agent not installed (${entry} is missing): run '${INSTALL_AGENTS}'`);
  return entry;
}

/** One agent ready to spawn. */
export interface AgentLaunch {
  readonly name: AgentName;
  /** argv of the agent itself (argv[0] is the executable). */
  readonly argv: readonly string[];
  /** The full environment to spawn it with. */
  readonly env: NodeJS.ProcessEnv;
  /** Working directory for sessions (empty, temporary). */
  readonly cwd: string;
  dispose(): void;
}

/** Environment every agent gets: the parent's PATH and nothing that would reach a real service. */
function baseEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    CI: '1',
  };
  return env;
}

/**
 * Prepares a temporary home for `name` pointed at the model server on
 * `origin` (`http://127.0.0.1:PORT`).
 */
export function launchSpec(name: AgentName, origin: string): AgentLaunch {
  const entry = requireAgent(name);
  const root = mkdtempSync(join(tmpdir(), `real-agent-${name}-`));
  const home = join(root, 'home');
  const cwd = join(root, 'work');
  mkdirSync(home, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  const env = baseEnv(home);
  let argv: string[];
  if (name === 'codex') {
    const codexHome = join(home, '.codex');
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(
      join(codexHome, 'config.toml'),
      [
        'model = "gpt-5.5"',
        'model_provider = "fixture"',
        '',
        '[model_providers.fixture]',
        'name = "fixture"',
        `base_url = "${origin}/v1"`,
        'wire_api = "responses"',
        'env_key = "FIXTURE_OPENAI_KEY"',
        'request_max_retries = 0',
        'stream_max_retries = 0',
        '',
        '[analytics]',
        'enabled = false',
        '',
      ].join('\n'),
    );
    // codex-acp 2.6 starts in its `agent` mode, whose automatic reviewer (a model call) answers permission requests: the tests want them asked.
    Object.assign(env, {
      CODEX_HOME: codexHome,
      FIXTURE_OPENAI_KEY: 'dummy',
      RUST_LOG: 'error',
      INITIAL_AGENT_MODE: 'workspace-write',
    });
    argv = [process.execPath, entry];
  } else if (name === 'claude') {
    // claude-agent-acp 0.101 starts sessions in Claude Code's `auto` mode, whose classifier asks the model
    // about each tool call (and warns in the chat about a gateway): the tests want the permission request.
    const claudeDir = join(home, '.claude');
    mkdirSync(claudeDir, { recursive: true });
    writeFileSync(
      join(claudeDir, 'settings.json'),
      `${JSON.stringify({ permissions: { defaultMode: 'default' } }, null, 2)}\n`,
    );
    Object.assign(env, {
      ANTHROPIC_BASE_URL: origin,
      ANTHROPIC_API_KEY: 'dummy',
      CLAUDE_CONFIG_DIR: claudeDir,
      IS_SANDBOX: '1',
      CLAUDE_CODE_MAX_RETRIES: '0',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
    });
    // Another Claude Code under the pinned claude-agent-acp (its own variable), for a version check:
    // CLAUDE_CODE_EXECUTABLE=/path/to/claude node scripts/generate-agent-transcripts.mjs claude
    const executable = process.env.CLAUDE_CODE_EXECUTABLE;
    if (executable !== undefined && executable !== '') env.CLAUDE_CODE_EXECUTABLE = executable;
    argv = [process.execPath, entry];
  } else {
    const gdir = join(home, '.gemini');
    mkdirSync(gdir, { recursive: true });
    writeFileSync(
      join(gdir, 'settings.json'),
      `${JSON.stringify(
        {
          general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
          privacy: { usageStatisticsEnabled: false },
          telemetry: { enabled: false },
          security: { auth: { selectedType: 'gemini-api-key' } },
        },
        null,
        2,
      )}\n`,
    );
    Object.assign(env, { GEMINI_API_KEY: 'dummy', GOOGLE_GEMINI_BASE_URL: origin, GEMINI_CLI_NO_RELAUNCH: 'true' });
    argv = [process.execPath, entry, '--acp'];
  }
  return { name, argv, env, cwd, dispose: () => rmSync(root, { recursive: true, force: true, maxRetries: 5 }) };
}
