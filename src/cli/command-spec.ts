/**
 * The shape of one entry of the command table (`command-table.ts`): what a
 * command declares so that the main help, `help <topic>`, the parse errors
 * and the dispatch can all be derived from the table. Types only: owns the
 * contract between `args.ts`/`main.ts` and the commands' modules.
 *
 * @module subagent-otel/cli/command-spec
 */

/** `subagent-otel help [topic]`, `--help`, `-h`, no arguments, or a command's own `--help`. */
export interface HelpCommand {
  readonly name: 'help';
  /** The command or topic to print the page of; absent: the main help. */
  readonly topic?: string;
}

/** A page `subagent-otel help <name>` prints. */
export interface HelpTopic {
  readonly name: string;
  /** The page, without a final newline. */
  readonly help: string;
}

/** What `run` gets from `main`, the one owner of the process's exit. */
export interface RunContext {
  /** Exits the process now with `code`, without draining (a second signal while stopping). */
  exitNow(code: number): never;
}

/**
 * One command of the table.
 *
 * @typeParam C the command's parsed options; `C['name']` is the command's name
 *   on the command line, and `parse` returns nothing of another name but help.
 */
export interface CommandSpec<C extends { readonly name: string }> extends HelpTopic {
  readonly name: C['name'];
  /** What follows `subagent-otel ` in the main help's list of commands, e.g. `demo [options]`. */
  readonly synopsis: string;
  /** The main help's one line about it, after the synopsis. */
  readonly summary: string;
  /**
   * Whether the command's stdout carries another program's bytes under that
   * program's flow control (the proxy): exiting then does not wait for stdout
   * to drain, and an error on it is not reported. Absent: both are done.
   */
  readonly forwardsStdout?: true;
  /**
   * Maps the arguments after the command's name to its options.
   *
   * @returns the options, or `{ name: 'help', topic: <its name> }` for `--help`/`-h`.
   * @throws UsageError naming the bad input and what to do.
   */
  parse(argv: readonly string[]): C | HelpCommand;
  /**
   * Runs the command, loading its module on first use (every command but the
   * proxy, whose spawn path is imported statically: decision 0039).
   *
   * @returns the process's exit code.
   * @throws UsageError or ExitError, which `main` maps to exit codes.
   */
  run(cmd: C, context: RunContext): Promise<number>;
}

/** The parsed options of a table entry. */
export type CommandOf<S> = S extends CommandSpec<infer C> ? C : never;
