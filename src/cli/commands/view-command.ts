/**
 * `subagent-otel view`: its entry of the command table (options, help page,
 * parser) and the lazy load of its module, `view.ts`, when it runs: it
 * serves until SIGINT, SIGTERM or SIGHUP.
 *
 * @module subagent-otel/cli/commands/view-command
 */
import type { CommandSpec } from '../command-spec.js';
import { hostOf, parseOptions, portOf } from '../options.js';

/** `subagent-otel view [options] [path...]`. */
export interface ViewCommand {
  readonly name: 'view';
  /** OTLP JSON files, directories holding `traces.jsonl`, or agents' transcript folders; empty: the default output directory. */
  readonly paths: readonly string[];
  /** `--port <port>`; absent: a free port. */
  readonly port?: number;
  /** `--host <host>`; absent: 127.0.0.1. */
  readonly host?: string;
}

export const viewSpec: CommandSpec<ViewCommand> = {
  name: 'view',
  synopsis: 'view [options] [path...]',
  summary: 'see the runs on a local page (table, waterfall, charts)',
  help: `Usage: subagent-otel view [options] [path...]

Serves a local page over the runs: a table with search, filters and sorting, each run's
session as a waterfall (subagents under the tool call that delegated them) with its
attributes, whole output and whether the parent received the same, and charts by day.
Reads the OTLP JSON lines files the commands write (traces.jsonl: a file, or a directory
holding it; default: $SUBAGENT_OTEL_OUT or ./subagent-otel-out), and agents' transcript
folders (e.g. ~/.claude/projects), replayed in process first. Prints the page's URL and
opens nothing; read-only; stops on Ctrl-C. Exit code 2: usage error, a port in use, or a
file that is not OTLP JSON.

Options:
  --port <port>               port to listen on (default: a free one)
  --host <host>               address to listen on (default 127.0.0.1, this machine only);
                              another address shows your runs to whoever can reach it`,
  parse(argv) {
    const { values, positionals } = parseOptions(
      'view',
      argv,
      { port: { type: 'string' }, host: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      true,
    );
    if (values.help === true) return { name: 'help', topic: 'view' };
    const port = portOf(values.port as string | undefined);
    const host = hostOf('--host', values.host as string | undefined);
    return {
      name: 'view',
      paths: positionals,
      ...(port !== undefined ? { port } : {}),
      ...(host !== undefined ? { host } : {}),
    };
  },
  async run(cmd) {
    const { runView } = await import('./view.js');
    const stop = new AbortController();
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stop.abort());
    return runView(cmd, { stdout: process.stdout, stderr: process.stderr, env: process.env, signal: stop.signal });
  },
};
