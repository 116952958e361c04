/**
 * `subagent-otel check`: its entry of the command table (options, help page,
 * parser) and the lazy load of its module, `check.ts`, when it runs.
 *
 * @module subagent-otel/cli/commands/check-command
 */
import type { CommandSpec } from '../command-spec.js';
import { UsageError } from '../errors.js';
import { parseOptions, TELEMETRY_HELP, telemetryFlags, telemetryOptions, type TelemetryFlags } from '../options.js';

/** `subagent-otel check [options]`. */
export interface CheckCommand extends TelemetryFlags {
  readonly name: 'check';
  /** `--json`: the report as JSON. */
  readonly json: boolean;
  /** `--deliver`: deliver what waits in the outbox for these destinations now. */
  readonly deliver: boolean;
}

export const checkSpec: CommandSpec<CheckCommand> = {
  name: 'check',
  synopsis: 'check [options]',
  summary: 'show where telemetry goes and send a test span and metric there',
  help: `Usage: subagent-otel check [options]

Shows where telemetry goes for the current environment and options (the same ones proxy,
replay and demo read): each exporter with its protocol and endpoint (credentials left out),
the output directory, the content policy and the Prometheus endpoint. Then sends one test
span and one test metric through exactly that configuration and reports, per destination,
whether it was delivered or the exact failure, and what waits in the outbox (exports a
destination did not take: how much, since when, the last error). Exit code 0: everything was
delivered; 1: some destination failed, or nothing would be delivered at all, or (--deliver)
something still waits; 2: usage error.

Options:
  --json                      print the report as JSON
  --deliver                   deliver what waits in the outbox for these destinations now

${TELEMETRY_HELP}`,
  parse(argv) {
    const { values, positionals } = parseOptions(
      'check',
      argv,
      { ...telemetryOptions, json: { type: 'boolean' }, deliver: { type: 'boolean' } },
      true,
    );
    if (values.help === true) return { name: 'help', topic: 'check' };
    if (positionals.length > 0) throw new UsageError(`check takes no arguments, got '${positionals[0]}'`);
    return { name: 'check', json: values.json === true, deliver: values.deliver === true, ...telemetryFlags(values) };
  },
  async run(cmd) {
    const { runCheck } = await import('./check.js');
    return runCheck(cmd, { stdout: process.stdout, stderr: process.stderr, env: process.env });
  },
};
