/**
 * The `subagent-otel` command line: maps argv to a command by the command
 * table (`command-table.ts`) and gives the help pages, the main help's
 * list of commands built from the table. Owns the words before a command's
 * name (`help`, `--help`, `-h`, `--version`, `-v`) and the errors for an
 * unknown command or topic; each command's options are parsed by its entry.
 * No command runs here. Errors are `UsageError`s that name the bad input and
 * say what to do.
 *
 * @module subagent-otel/cli/args
 */
import type { HelpCommand } from './command-spec.js';
import { COMMANDS, commandNamed, HELP_TOPICS, type TableCommand } from './command-table.js';
import { UsageError } from './errors.js';

/** Every command line: help, the version, or a command of the table with its options. */
export type Command = HelpCommand | { readonly name: 'version' } | TableCommand;

/** Width of the main help's synopsis column (the longest synopsis, the proxy's). */
const SYNOPSIS_WIDTH = 38;

/** One line of the main help's list: the synopsis, padded, then what it does. */
function usageLine(synopsis: string, summary: string): string {
  return `  subagent-otel ${synopsis.padEnd(SYNOPSIS_WIDTH)} ${summary}`;
}

/** The main help: the table's commands, in its order, with their one-line summaries. */
function mainHelp(): string {
  const list = [
    ...COMMANDS.map((spec) => usageLine(spec.synopsis, spec.summary)),
    usageLine('help <command>', 'help for one command'),
  ].join('\n');
  return `subagent-otel: OpenTelemetry for delegated agent runs (subagents)

Usage:
${list}
  subagent-otel --version

Every run's output is selected by one rule (last non-empty assistant message, else the
streamed text, else nothing), so telemetry matches SubagentResult.output.

'subagent-otel check' shows where telemetry goes and tests it; the proxy keeps its
diagnostics in the file named by SUBAGENT_OTEL_LOG_FILE.`;
}

/**
 * Maps argv (without `node` and the script) to a command.
 *
 * @returns the command with normalized options; `help` for `--help`,
 *   `-h`, `help [topic]` or no arguments. Everything after `--` is the
 *   child command of `proxy`, passed through verbatim.
 * @throws UsageError naming the bad input and the help to read.
 */
export function parseCommandLine(argv: readonly string[]): Command {
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h') return { name: 'help' };
  if (first === '--version' || first === '-v') return { name: 'version' };
  if (first === 'help') return rest[0] !== undefined ? { name: 'help', topic: rest[0] } : { name: 'help' };
  const spec = commandNamed(first);
  if (spec === undefined) {
    throw new UsageError(
      `unknown command '${first}'; commands: ${COMMANDS.map((entry) => entry.name).join(', ')} (see 'subagent-otel --help')`,
    );
  }
  return spec.parse(rest);
}

/** Help text for a topic (a command, or `hook`); the main help without one. @throws UsageError for an unknown topic. */
export function helpText(topic?: string): string {
  if (topic === undefined) return mainHelp();
  const page = HELP_TOPICS.find((entry) => entry.name === topic);
  if (page === undefined)
    throw new UsageError(`no help for '${topic}'; commands: ${HELP_TOPICS.map((entry) => entry.name).join(', ')}`);
  return page.help;
}
