/**
 * `subagent-otel replay`: its entry of the command table (options, help
 * page, parser) and the lazy load of its module, `replay.ts`, when it runs.
 *
 * @module subagent-otel/cli/commands/replay-command
 */
import type { CommandSpec } from '../command-spec.js';
import { UsageError } from '../errors.js';
import {
  parseOptions,
  protocolOf,
  TELEMETRY_HELP,
  telemetryFlags,
  telemetryOptions,
  type Protocol,
  type TelemetryFlags,
} from '../options.js';

/** `subagent-otel replay [options] <file-or-directory...>`. */
export interface ReplayCommand extends TelemetryFlags {
  readonly name: 'replay';
  /** The files and directories to read (at least one). */
  readonly paths: readonly string[];
  /** `--json`: the summary as JSON on stdout, no run rows. */
  readonly json: boolean;
  /** `--no-progress`: false; absent: a progress bar on a terminal. */
  readonly progress?: boolean;
  /** `--no-runs`: no row per run before the summary. */
  readonly runs?: false;
  /** `--protocol`: of NDJSON captures without a header. */
  readonly protocol: Protocol;
  /** `--jobs`: threads reading transcripts; absent: {@link defaultReplayJobs}. */
  readonly jobs?: number;
}

/** Most threads `--jobs` takes: past this, threads cost memory and buy nothing on a machine that has them. */
export const MAX_REPLAY_JOBS = 64;

/** Threads when `--jobs` is not given: the cores Node may use, at most 4 (each worker holds its own heap). */
export function defaultReplayJobs(cores: number): number {
  return Math.max(1, Math.min(cores, 4));
}

/** `--jobs`'s value: a whole number from 1 to {@link MAX_REPLAY_JOBS}. @throws UsageError otherwise. */
export function parseReplayJobs(value: string): number {
  const jobs = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(jobs) || jobs < 1 || jobs > MAX_REPLAY_JOBS)
    throw new UsageError(
      `--jobs takes a number of threads from 1 to ${MAX_REPLAY_JOBS} (1: no worker threads), got '${value}'`,
    );
  return jobs;
}

export const replaySpec: CommandSpec<ReplayCommand> = {
  name: 'replay',
  synopsis: 'replay [options] <file-or-dir...>',
  summary: "turn captures, session logs and agents' transcripts into telemetry",
  help: `Usage: subagent-otel replay [options] <file-or-directory...>

Reads SDK and ACP captures (what 'proxy --capture' writes, or raw NDJSON JSON-RPC), dsh
durable session logs (.jsonl, .jsonl.zstd), and the transcripts Claude Code
(~/.claude/projects), Codex (~/.codex/sessions) and Gemini CLI (~/.gemini/tmp) write, each told
by its content. Emits the same spans and metrics as live observation, prints one row per run
as it is read, then a summary. Directories are searched recursively; child sessions and
subagents are nested under their parent's span. Exit code 0: everything read and delivered;
1: something was skipped (reported on stderr); 2: usage error or an unwritable --out;
3: telemetry not all delivered (counts on stderr).

Options:
  --json                      print the summary as JSON on stdout (no run rows)
  --no-runs                   print the summary only, no row per run
  --protocol <sdk|acp|auto>   protocol of NDJSON captures without a header (default auto)
  --jobs <n>                  threads reading transcripts, whole sessions each (default: the
                              cores available, at most 4; 1: no worker threads); the output is
                              the same whatever n
  --no-progress               no progress bar (it is shown only on a terminal anyway)

${TELEMETRY_HELP}`,
  parse(argv) {
    const { values, positionals } = parseOptions(
      'replay',
      argv,
      {
        ...telemetryOptions,
        json: { type: 'boolean' },
        'no-progress': { type: 'boolean' },
        'no-runs': { type: 'boolean' },
        protocol: { type: 'string' },
        jobs: { type: 'string' },
      },
      true,
    );
    if (values.help === true) return { name: 'help', topic: 'replay' };
    if (positionals.length === 0)
      throw new UsageError('replay needs at least one file or directory, e.g. subagent-otel replay ./sessions');
    return {
      name: 'replay',
      paths: positionals,
      json: values.json === true,
      ...(values['no-progress'] === true ? { progress: false } : {}),
      ...(values['no-runs'] === true ? { runs: false as const } : {}),
      protocol: protocolOf(values.protocol as string | undefined),
      ...(values.jobs !== undefined ? { jobs: parseReplayJobs(values.jobs as string) } : {}),
      ...telemetryFlags(values),
    };
  },
  async run(cmd) {
    const { runReplay } = await import('./replay.js');
    return runReplay(cmd, { stdout: process.stdout, stderr: process.stderr, env: process.env });
  },
};
