/**
 * `subagent-otel setup`: its entry of the command table (options, help
 * page, parser) and the lazy load of its module, `setup.ts`, when it runs.
 *
 * @module subagent-otel/cli/commands/setup-command
 */
import type { CommandSpec } from '../command-spec.js';
import { UsageError } from '../errors.js';
import { parseOptions } from '../options.js';

/** `subagent-otel setup <claude-code|codex> [options]`. */
export interface SetupCommand {
  readonly name: 'setup';
  readonly agent: 'claude-code' | 'codex';
  /** `--remove`: take out what setup added. */
  readonly remove: boolean;
  readonly dryRun: boolean;
  /** `--project <dir>`: that project's settings instead of the user's. */
  readonly project?: string;
  /** `--out <dir>`: where the watcher writes OTLP JSON files. */
  readonly out?: string;
  readonly captureContent?: false;
  /** `--team`: the watcher adds repository, branch and user to each run (decision 0124). */
  readonly team?: true;
}

export const setupSpec: CommandSpec<SetupCommand> = {
  name: 'setup',
  synopsis: 'setup <claude-code|codex> [options]',
  summary: "add hooks so each subagent's run is reported when it ends",
  help: `Usage: subagent-otel setup <claude-code|codex> [options]

Adds a hook to the agent's settings that runs when a subagent ends (SubagentStop), when the
agent ends a turn (Stop) and when the session ends (SessionEnd). The hook tells a watcher in
the background, which it starts when none runs (one per user; its log in
$XDG_STATE_HOME/subagent-otel/daemon/watch.log), and the watcher reports that run from the
agent's transcript at once, instead of after the idle time. Runs that end from now on are
reported; nothing is ever written into the agent's folders but its settings file.

Merges with the hooks already there and never changes one it did not write; running it again
changes nothing. The first change keeps a backup of the settings file; --remove takes out
exactly what setup added (the original bytes, when the file was not edited since).

The telemetry settings of the watcher are taken from this environment (OTEL_* and
SUBAGENT_OTEL_* variables, e.g. OTEL_EXPORTER_OTLP_ENDPOINT) and the options below, and kept in
$XDG_CONFIG_HOME/subagent-otel/hooks.json (private): the agents run hooks without your OTEL_*
variables. Without an endpoint, the runs go to OTLP JSON files in
$XDG_STATE_HOME/subagent-otel/telemetry ('subagent-otel view' that folder). Run setup again after
changing them; 'subagent-otel check' shows them.

Settings files: Claude Code $CLAUDE_CONFIG_DIR/settings.json (default ~/.claude/settings.json);
Codex $CODEX_HOME/hooks.json (default ~/.codex/hooks.json; Codex runs a new hook once you have
reviewed and trusted it in its /hooks list). Gemini CLI has no subagent hooks: use watch.

Options:
  --dry-run                   print the change to the settings file, change nothing
  --remove                    take out the hooks setup added
  --project <dir>             that project's settings (<dir>/.claude/settings.json,
                              <dir>/.codex/hooks.json) instead of the user's
  --out <dir>                 where the watcher writes traces.jsonl and metrics.jsonl
  --no-content                record no output text (hash and length only)
  --team                      add the repository (vcs.repository.url.full), branch (vcs.ref.head.name)
                              and your user name (user.name) to each run and its run and cost metrics,
                              to break cost and truncation down per repository and person; they name
                              people and repositories to whoever reads the telemetry (off by default;
                              SUBAGENT_OTEL_TEAM_ATTRIBUTES=true does the same for every command)`,
  parse(argv) {
    const { values, positionals } = parseOptions(
      'setup',
      argv,
      {
        remove: { type: 'boolean' },
        'dry-run': { type: 'boolean' },
        project: { type: 'string' },
        out: { type: 'string' },
        'no-content': { type: 'boolean' },
        team: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      true,
    );
    if (values.help === true) return { name: 'help', topic: 'setup' };
    const [agent, extra] = positionals;
    if (agent !== 'claude-code' && agent !== 'codex') {
      throw new UsageError(
        `setup needs the agent: claude-code or codex${agent !== undefined ? `, got '${agent}'` : ''} (Gemini CLI has no subagent hooks: follow it with 'subagent-otel watch ~/.gemini/tmp')`,
      );
    }
    if (extra !== undefined) throw new UsageError(`setup takes one agent, got '${extra}' too`);
    if (values.project === '') throw new UsageError('--project takes a directory, e.g. --project .');
    if (values.out === '') throw new UsageError('--out takes a directory, e.g. --out ~/subagent-otel-out');
    if (values.remove === true && (values.out !== undefined || values['no-content'] === true || values.team === true))
      throw new UsageError('--remove takes no telemetry options');
    return {
      name: 'setup',
      agent,
      remove: values.remove === true,
      dryRun: values['dry-run'] === true,
      ...(typeof values.project === 'string' ? { project: values.project } : {}),
      ...(typeof values.out === 'string' ? { out: values.out } : {}),
      ...(values['no-content'] === true ? { captureContent: false as const } : {}),
      ...(values.team === true ? { team: true as const } : {}),
    };
  },
  async run(cmd) {
    const { runSetup } = await import('./setup.js');
    return runSetup(cmd, {
      stdout: process.stdout,
      stderr: process.stderr,
      env: process.env,
      script: process.argv[1] ?? '',
    });
  },
};
