/**
 * The command table: every command of `subagent-otel`, one line each, in
 * the order the main help lists them. The main help's list, `help <topic>`,
 * the parse errors that name the commands, and the dispatch in `main` all
 * read it; a new command is one module under `commands/` (its
 * `CommandSpec`, which loads its handler lazily) and one line here.
 *
 * @module subagent-otel/cli/command-table
 */
import type { CommandOf, CommandSpec, HelpTopic, RunContext } from './command-spec.js';
import { checkSpec } from './commands/check-command.js';
import { demoSpec } from './commands/demo-command.js';
import { hookTopic } from './commands/hook-command.js';
import { proxySpec } from './commands/proxy-command.js';
import { replaySpec } from './commands/replay-command.js';
import { setupSpec } from './commands/setup-command.js';
import { viewSpec } from './commands/view-command.js';
import { watchSpec } from './commands/watch-command.js';

/** The commands `main` runs, in the main help's order. */
export const COMMANDS = [demoSpec, proxySpec, replaySpec, watchSpec, setupSpec, checkSpec, viewSpec] as const;

/** The pages of `help <topic>`: every command's, then `hook`'s (run by `cli/bin`, not `main`). */
export const HELP_TOPICS: readonly HelpTopic[] = [...COMMANDS, hookTopic];

/** The parsed options of any command of the table. */
export type TableCommand = CommandOf<(typeof COMMANDS)[number]>;

/** The table's entry named `name`, if any. */
export function commandNamed(name: string): (typeof COMMANDS)[number] | undefined {
  return COMMANDS.find((spec) => spec.name === name);
}

/**
 * Runs a parsed command with its table entry.
 *
 * @returns the exit code the command's `run` resolves to.
 */
export function runCommand(cmd: TableCommand, context: RunContext): Promise<number> {
  // Each entry's `parse` returns only options of its own name, so the entry of that name takes them.
  const spec = commandNamed(cmd.name) as CommandSpec<TableCommand>;
  return spec.run(cmd, context);
}
