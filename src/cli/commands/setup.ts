/**
 * `subagent-otel setup <agent>`: adds (or with `--remove` takes out) the
 * hooks that tell the background watcher when a run ends, and records the
 * watcher's folders and telemetry settings (`hooks/hooks-config`). Owns
 * presentation and the order of the steps; the edits are `hooks/setup-files`'.
 *
 * @module subagent-otel/cli/commands/setup
 */
import { isAbsolute, join, resolve } from 'node:path';
import { END_EVENTS } from '../../hooks/hook-message.js';
import { loadHooksConfig, saveHooksConfig, telemetryEnvironment, type HooksConfig } from '../../hooks/hooks-config.js';
import { hookFiles, settingsFile, stateRoot, transcriptFolder } from '../../hooks/locations.js';
import { hookCommand } from '../../hooks/settings-hooks.js';
import {
  SetupError,
  addHooksToFile,
  diffLines,
  removeHooksFromFile,
  type SettingsChange,
} from '../../hooks/setup-files.js';
import { stopWatcher } from '../../hooks/watcher-lock.js';
import { errorText } from '../../wire/error-text.js';
import type { SetupCommand } from './setup-command.js';

export type { SetupCommand };

/** What the command writes to and reads. */
export interface SetupIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly env: NodeJS.ProcessEnv;
  /** The command's own script, which the hook runs (`process.argv[1]`). */
  readonly script: string;
  /** Clock, epoch ms (default `Date.now`). */
  readonly now?: () => number;
}

/** Whether the environment names an OTLP destination (else the runs go to files). */
function hasEndpoint(env: Readonly<Record<string, string>>): boolean {
  return ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'].some((name) => (env[name] ?? '') !== '');
}

/**
 * Runs the command.
 * @returns 0 when done (or, with `--dry-run`, when the change could be
 *   made); 1 when a file could not be read, followed or written (named on
 *   stderr, left untouched). Never rejects for bad input.
 */
export async function runSetup(cmd: SetupCommand, io: SetupIo): Promise<number> {
  const files = hookFiles(io.env);
  const file = settingsFile(cmd.agent, io.env, cmd.project);
  const say = (line: string): void => {
    io.stdout.write(`${line}\n`);
  };
  let change: SettingsChange;
  try {
    change = cmd.remove
      ? await removeHooksFromFile(file, files.setupDir, !cmd.dryRun)
      : await addHooksToFile(
          file,
          hookCommand(process.execPath, resolve(io.script), cmd.agent),
          files.setupDir,
          !cmd.dryRun,
        );
  } catch (error) {
    io.stderr.write(`subagent-otel setup: ${error instanceof SetupError ? error.message : errorText(error)}\n`);
    return 1;
  }
  if (cmd.dryRun) {
    say(
      change.changed
        ? `subagent-otel setup: would change ${file}:\n${diffLines(change.before, change.after)}`
        : `subagent-otel setup: ${file} needs no change`,
    );
    return 0;
  }

  const loaded = await loadHooksConfig(files.config);
  const previous = loaded.ok ? loaded.config : undefined;
  if (!loaded.ok) io.stderr.write(`subagent-otel setup: ${loaded.message}; writing a new one\n`);
  let config: HooksConfig | undefined;
  if (cmd.remove) {
    say(
      change.changed
        ? `subagent-otel setup: took ${change.removed ?? 0} hook(s) out of ${file}${change.after === undefined ? ' (removed the file setup had created)' : ''}`
        : `subagent-otel setup: ${file} holds no hook of subagent-otel`,
    );
    if (previous !== undefined && cmd.project === undefined) {
      const { [cmd.agent]: _gone, ...agents } = previous.agents;
      config = { ...previous, agents };
    }
  } else {
    const env = telemetryEnvironment(io.env);
    if (cmd.team === true) env['SUBAGENT_OTEL_TEAM_ATTRIBUTES'] = 'true';
    const out = env['SUBAGENT_OTEL_OUT'];
    if (out !== undefined && out !== '' && !isAbsolute(out)) env['SUBAGENT_OTEL_OUT'] = resolve(out); // the watcher runs elsewhere
    const outDir =
      cmd.out !== undefined
        ? resolve(cmd.out)
        : hasEndpoint(env) || (out ?? '') !== ''
          ? undefined
          : join(stateRoot(io.env), 'telemetry');
    config = {
      version: 1,
      since: previous?.since ?? (io.now ?? Date.now)(),
      agents: { ...previous?.agents, [cmd.agent]: { folder: transcriptFolder(cmd.agent, io.env) } },
      env,
      ...(outDir !== undefined ? { out: outDir } : {}),
      ...(cmd.captureContent === false ? { noContent: true as const } : {}),
    };
    say(
      change.changed
        ? `subagent-otel setup: added the hook to ${END_EVENTS.join(', ')} in ${file}${change.backup !== undefined ? ` (backup: ${change.backup})` : change.before === undefined ? ' (new file)' : ''}`
        : `subagent-otel setup: ${file} already has the hook`,
    );
    say(
      `  the watcher follows ${config.agents[cmd.agent]?.folder ?? ''}; runs that end from now on are reported when their hook fires`,
    );
    say(
      `  telemetry: ${outDir !== undefined ? `OTLP JSON files in ${outDir} (see them: subagent-otel view ${outDir})` : (env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] ?? env['OTEL_EXPORTER_OTLP_ENDPOINT'] ?? `files in ${env['SUBAGENT_OTEL_OUT'] ?? ''}`)}`,
    );
    say(`  settings kept in ${files.config}; the watcher's log: ${files.log}`);
    if (cmd.agent === 'codex')
      say('  Codex runs a new hook once you have reviewed and trusted it: open /hooks in Codex');
    say(
      `  undo: subagent-otel setup ${cmd.agent} --remove${cmd.project !== undefined ? ` --project ${cmd.project}` : ''}`,
    );
  }
  if (config !== undefined) {
    try {
      await saveHooksConfig(files.config, config);
    } catch (error) {
      io.stderr.write(`subagent-otel setup: cannot write ${files.config}: ${errorText(error)}\n`);
      return 1;
    }
  }
  // A running watcher has the old settings: stopped, the next hook starts one with these.
  const stopped = await stopWatcher(files.lock);
  if (stopped !== undefined) say(`  stopped the running watcher (process ${stopped}); the next hook starts it again`);
  return 0;
}
