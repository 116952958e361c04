/**
 * `subagent-otel demo`: its entry of the command table (options, help page,
 * parser) and the lazy load of its module, `demo.ts`, when it runs.
 *
 * @module subagent-otel/cli/commands/demo-command
 */
import type { CommandSpec } from '../command-spec.js';
import { UsageError } from '../errors.js';
import { parseOptions, TELEMETRY_HELP, telemetryFlags, telemetryOptions, type TelemetryFlags } from '../options.js';

/** `subagent-otel demo [options]`. */
export interface DemoCommand extends TelemetryFlags {
  readonly name: 'demo';
  /** `--json`: the runs as JSON instead of a table. */
  readonly json: boolean;
  /** `--sessions <dir>`: also write the proxied runtime's durable session logs there. */
  readonly sessions?: string;
}

export const demoSpec: CommandSpec<DemoCommand> = {
  name: 'demo',
  synopsis: 'demo [options]',
  summary: 'run the bundled keyless scenarios and show what was observed',
  help: `Usage: subagent-otel demo [options]

Runs the bundled keyless scripted SDK runtime and ACP agent through every scenario (once
through the SDK backend, once through the stdio proxy, and the ACP agent through the ACP
backend), writes telemetry to the embedded default, and prints one row per run: stop
reason, output source, tokens and an output preview. Needs no network and no key.

Each run starts from empty files: the demo first removes the traces.jsonl and metrics.jsonl
an earlier run left in its output directory (and says so), then prints what it wrote.

Options:
  --json                      print the runs as JSON instead of a table
  --sessions <dir>            also write the durable session logs of the proxied runtime's
                              sessions to <dir> (parents as .jsonl.zstd, delegated children as
                              .jsonl), for 'subagent-otel replay <dir>'

${TELEMETRY_HELP}`,
  parse(argv) {
    const { values, positionals } = parseOptions(
      'demo',
      argv,
      { ...telemetryOptions, json: { type: 'boolean' }, sessions: { type: 'string' } },
      true,
    );
    if (values.help === true) return { name: 'help', topic: 'demo' };
    if (positionals.length > 0) throw new UsageError(`demo takes no arguments, got '${positionals[0]}'`);
    if (values.sessions === '') throw new UsageError('--sessions takes a directory, e.g. --sessions ./sessions');
    return {
      name: 'demo',
      json: values.json === true,
      ...(typeof values.sessions === 'string' ? { sessions: values.sessions } : {}),
      ...telemetryFlags(values),
    };
  },
  async run(cmd) {
    const { runDemo } = await import('./demo.js');
    return runDemo(cmd, { stdout: process.stdout, stderr: process.stderr, env: process.env });
  },
};
