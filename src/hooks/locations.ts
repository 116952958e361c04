/**
 * Where the hooks' parts live on the user's machine: the agents' settings
 * files and transcript folders, and this project's own files for the hooks
 * (the setup's configuration, the watcher's private folder with its socket,
 * lock and log, the setup records and backups). Pure functions of the
 * environment; nothing is created here.
 *
 * @module subagent-otel/hooks/locations
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** The agents whose hooks `setup` installs. */
export const HOOKED_AGENTS = ['claude-code', 'codex'] as const;
export type HookedAgent = (typeof HOOKED_AGENTS)[number];

/** The variable through which a hook hands its message to the watcher it starts (never copied into the config). */
export const HOOK_EVENT_VARIABLE = 'SUBAGENT_OTEL_HOOK_EVENT';

/** Whether `name` is one of {@link HOOKED_AGENTS}. */
export function isHookedAgent(name: string): name is HookedAgent {
  return (HOOKED_AGENTS as readonly string[]).includes(name);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value !== '' ? value : undefined;
}

/** `$XDG_STATE_HOME/subagent-otel`, else `~/.local/state/subagent-otel`. */
export function stateRoot(env: NodeJS.ProcessEnv): string {
  return join(nonEmpty(env['XDG_STATE_HOME']) ?? join(homedir(), '.local', 'state'), 'subagent-otel');
}

/** `$XDG_CONFIG_HOME/subagent-otel`, else `~/.config/subagent-otel`. */
export function configRoot(env: NodeJS.ProcessEnv): string {
  return join(nonEmpty(env['XDG_CONFIG_HOME']) ?? join(homedir(), '.config'), 'subagent-otel');
}

/** The files of the hooks' side of this project. */
export interface HookFiles {
  /** What `setup` wrote for the watcher the hooks start: folders, telemetry settings (private, 0600). */
  readonly config: string;
  /** The watcher's private folder (0700): only its owner may reach the socket in it. */
  readonly daemonDir: string;
  /** The Unix socket the hooks write to. */
  readonly socket: string;
  /** Held by the one running watcher (its process id inside). */
  readonly lock: string;
  /** The watcher's output when a hook started it. */
  readonly log: string;
  /** One record per settings file `setup` changed: how to undo it. */
  readonly setupDir: string;
}

/** The hooks' files for this environment. */
export function hookFiles(env: NodeJS.ProcessEnv): HookFiles {
  const state = stateRoot(env);
  const daemonDir = join(state, 'daemon');
  return {
    config: join(configRoot(env), 'hooks.json'),
    daemonDir,
    socket: join(daemonDir, 'hooks.sock'),
    lock: join(daemonDir, 'watch.lock'),
    log: join(daemonDir, 'watch.log'),
    setupDir: join(state, 'setup'),
  };
}

/** The agent's own folder: `$CLAUDE_CONFIG_DIR` or `~/.claude`; `$CODEX_HOME` or `~/.codex`. */
export function agentHome(agent: HookedAgent, env: NodeJS.ProcessEnv): string {
  if (agent === 'claude-code') return resolve(nonEmpty(env['CLAUDE_CONFIG_DIR']) ?? join(homedir(), '.claude'));
  return resolve(nonEmpty(env['CODEX_HOME']) ?? join(homedir(), '.codex'));
}

/** Where the agent writes its transcripts: Claude Code `<home>/projects`, Codex `<home>/sessions`. */
export function transcriptFolder(agent: HookedAgent, env: NodeJS.ProcessEnv): string {
  return join(agentHome(agent, env), agent === 'claude-code' ? 'projects' : 'sessions');
}

/**
 * The settings file that holds the agent's hooks: the user's
 * (`~/.claude/settings.json`, `~/.codex/hooks.json`), or with `project` that
 * project's (`<project>/.claude/settings.json`, `<project>/.codex/hooks.json`).
 */
export function settingsFile(agent: HookedAgent, env: NodeJS.ProcessEnv, project?: string): string {
  const name = agent === 'claude-code' ? 'settings.json' : 'hooks.json';
  if (project !== undefined) return join(resolve(project), agent === 'claude-code' ? '.claude' : '.codex', name);
  return join(agentHome(agent, env), name);
}
