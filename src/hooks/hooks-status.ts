/**
 * What `check` shows of the hooks' side: whether `setup` ran, the agents and
 * folders it recorded, the watcher's telemetry settings (credential values
 * left out), and whether a watcher runs. Reads only.
 *
 * @module subagent-otel/hooks/hooks-status
 */
import { readFile, stat } from 'node:fs/promises';
import { loadHooksConfig } from './hooks-config.js';
import { hookFiles, isHookedAgent, settingsFile } from './locations.js';
import { isOurHook } from './settings-hooks.js';
import { isAlive } from './watcher-lock.js';

/** The words of a command as a POSIX shell splits plain and single-quoted words (the form `setup` writes). Pure. */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  for (const match of command.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g))
    words.push(match[1] !== undefined ? match[1].replaceAll("'\\''", "'") : (match[2] ?? ''));
  return words;
}

/**
 * What is wrong with our hook in the settings `file`: not there (removed by
 * hand), or running a Node or a script that is gone (Node upgraded, the
 * package moved). `undefined` when it is in place. Never rejects.
 */
async function hookProblem(file: string): Promise<string | undefined> {
  let settings: unknown;
  try {
    settings = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return "not there (the file is missing or not JSON): run 'subagent-otel setup' again";
  }
  const hooks = (settings as { hooks?: Record<string, Array<{ hooks?: unknown[] }>> }).hooks ?? {};
  const ours = Object.values(hooks)
    .flatMap((groups) => (Array.isArray(groups) ? groups : []))
    .flatMap((group) => (Array.isArray(group.hooks) ? group.hooks : []))
    .filter(isOurHook) as Array<{ command: string }>;
  if (ours.length === 0) return "not there (removed?): run 'subagent-otel setup' again";
  const [node, script] = shellWords(ours[0]?.command ?? '');
  for (const path of [node, script]) {
    if (
      path !== undefined &&
      path.startsWith('/') &&
      !(await stat(path).then(
        () => true,
        () => false,
      ))
    )
      return `it runs ${path}, which is gone: run 'subagent-otel setup' again`;
  }
  return undefined;
}

/** The hooks' side, as `check` reports it. */
export interface HooksStatus {
  /** The file `setup` wrote. */
  readonly config: string;
  /** Why it cannot be used, when it cannot. */
  readonly problem?: string;
  /** Agent to the folder its watcher follows. */
  readonly agents: Readonly<Record<string, string>>;
  /** Per agent set up: its user settings file, and what is wrong with our hook there (absent when it is in place). */
  readonly hooks: Readonly<Record<string, { readonly file: string; readonly problem?: string }>>;
  /** `--out` of the watcher. */
  readonly out?: string;
  /** The recorded variables: a value, or `null` where it may hold a credential. */
  readonly variables: Readonly<Record<string, string | null>>;
  /** The running watcher's process id, when one runs. */
  readonly watcher?: number;
  readonly log: string;
}

/** Names whose values are not shown. */
const SECRET = /HEADERS|KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL/i;

/** The status for this environment; `undefined` when `setup` never ran. Never rejects. */
export async function hooksStatus(env: NodeJS.ProcessEnv): Promise<HooksStatus | undefined> {
  const files = hookFiles(env);
  const loaded = await loadHooksConfig(files.config);
  if (loaded.ok && loaded.config === undefined) return undefined;
  const pid = Number.parseInt(await readFile(files.lock, 'utf8').catch(() => ''), 10);
  const watcher = Number.isInteger(pid) && pid > 0 && isAlive(pid) ? { watcher: pid } : {};
  if (!loaded.ok)
    return {
      config: files.config,
      problem: loaded.message,
      agents: {},
      hooks: {},
      variables: {},
      log: files.log,
      ...watcher,
    };
  const config = loaded.config;
  const agents: Record<string, string> = {};
  const hooks: Record<string, { file: string; problem?: string }> = {};
  for (const [agent, entry] of Object.entries(config?.agents ?? {})) {
    if (entry === undefined || !isHookedAgent(agent)) continue;
    agents[agent] = entry.folder;
    const file = settingsFile(agent, env);
    const problem = await hookProblem(file);
    hooks[agent] = { file, ...(problem !== undefined ? { problem } : {}) };
  }
  const variables: Record<string, string | null> = {};
  for (const [name, value] of Object.entries(config?.env ?? {})) variables[name] = SECRET.test(name) ? null : value;
  return {
    config: files.config,
    agents,
    hooks,
    variables,
    log: files.log,
    ...(config?.out !== undefined ? { out: config.out } : {}),
    ...watcher,
  };
}

/** The status in words, for `check`. Pure. */
export function hooksStatusText(status: HooksStatus | undefined): string[] {
  if (status === undefined)
    return ["Agents' hooks: not set up ('subagent-otel setup claude-code' or codex reports each run when it ends)"];
  const lines = [`Agents' hooks: ${status.config}`];
  if (status.problem !== undefined) lines.push(`  problem: ${status.problem}`);
  const agents = Object.entries(status.agents);
  if (agents.length === 0 && status.problem === undefined) lines.push('  no agent set up (all removed)');
  for (const [agent, folder] of agents) {
    const hook = status.hooks[agent];
    lines.push(
      `  ${agent}: follows ${folder}; hook in ${hook?.file ?? '?'}${hook?.problem !== undefined ? `: ${hook.problem}` : ''}`,
    );
  }
  if (status.out !== undefined) lines.push(`  watcher's output directory: ${status.out}`);
  const variables = Object.entries(status.variables);
  if (variables.length > 0)
    lines.push(
      `  watcher's variables: ${variables.map(([name, value]) => (value === null ? `${name} (value not shown)` : `${name}=${value}`)).join(', ')}`,
    );
  lines.push(
    `  watcher: ${status.watcher !== undefined ? `running (process ${status.watcher})` : 'not running (the next hook starts it)'}; log ${status.log}`,
  );
  return lines;
}
