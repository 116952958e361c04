/**
 * `subagent-otel watch`: its entry of the command table (options, help
 * page, parser) and the lazy load of its module, `watch.ts` (with
 * `watch-daemon.ts` for `--daemon`), when it runs. It stops on SIGINT,
 * SIGTERM or SIGHUP after flushing; a second signal while stopping exits at
 * once.
 *
 * @module subagent-otel/cli/commands/watch-command
 */
import { constants } from 'node:os';
import type { CommandSpec } from '../command-spec.js';
import { UsageError } from '../errors.js';
import {
  parseOptions,
  secondsFlag,
  TELEMETRY_HELP,
  telemetryFlags,
  telemetryOptions,
  type TelemetryFlags,
} from '../options.js';

/** `subagent-otel watch [options] <directory...>`. */
export interface WatchCommand extends TelemetryFlags {
  readonly name: 'watch';
  /** The directories to follow; empty with `--daemon`. */
  readonly dirs: readonly string[];
  readonly json: boolean;
  /** `--idle <seconds>` in ms. */
  readonly idleMs?: number;
  /** `--interval <seconds>` in ms. */
  readonly intervalMs?: number;
  readonly checkpoint?: string;
  readonly history: boolean;
  /** `--poll`: list the directories on every pass, without file-system notifications. */
  readonly poll: boolean;
  /**
   * `--daemon`: the watcher the agents' hooks start (decision 0123): the
   * folders and telemetry settings come from the file `setup` wrote,
   * the hooks' socket is heard, one per user; `dirs` is empty.
   */
  readonly daemon: boolean;
}

export const watchSpec: CommandSpec<WatchCommand> = {
  name: 'watch',
  synopsis: 'watch [options] <dir...>',
  summary: 'follow Claude Code, Codex and Gemini CLI transcripts as agents run',
  help: `Usage: subagent-otel watch [options] <directory...>

Follows the directories where Claude Code, Codex and Gemini CLI write their transcripts
(e.g. ~/.claude/projects ~/.codex/sessions ~/.gemini/tmp) while the agents run, and emits each
run once, when it has ended: when its files record the end (a subagent's result in its
parent), or after they have not grown for the idle time (closed as the files say). Prints one
row per run (or one JSON line with --json). A checkpoint in the user's state directory
remembers what was emitted, so a restart neither repeats nor loses a run; nothing is ever
written into the watched directories. Stops on Ctrl-C (SIGINT) or SIGTERM after flushing.

Options:
  --idle <seconds>            close a run without a recorded end after this long without
                              growth (default 600)
  --interval <seconds>        time between two looks at the directories (default 2); a look
                              lists them only after the system notified a change, and at
                              least every 60 s
  --poll                      list the directories on every look, without notifications
                              (for network file systems, where none arrive)
  --checkpoint <file>         where to keep the checkpoint (default
                              $XDG_STATE_HOME/subagent-otel/watch/<hash of the directories>.json)
  --history                   on the first start, also emit the runs that ended before it
                              (default: only runs that end from now on; use replay for history)
  --json                      one JSON line per run on stdout instead of a table row
  --daemon                    the watcher the agents' hooks start ('subagent-otel setup'): follows
                              the folders and uses the telemetry settings setup recorded, hears
                              the hooks, one per user; takes no directories

${TELEMETRY_HELP}`,
  parse(argv) {
    const { values, positionals } = parseOptions(
      'watch',
      argv,
      {
        ...telemetryOptions,
        json: { type: 'boolean' },
        idle: { type: 'string' },
        interval: { type: 'string' },
        checkpoint: { type: 'string' },
        history: { type: 'boolean' },
        poll: { type: 'boolean' },
        daemon: { type: 'boolean' },
      },
      true,
    );
    if (values.help === true) return { name: 'help', topic: 'watch' };
    const daemon = values.daemon === true;
    if (daemon && positionals.length > 0)
      throw new UsageError(
        `watch --daemon follows the folders 'subagent-otel setup' recorded; it takes no directories, got '${positionals[0]}'`,
      );
    if (!daemon && positionals.length === 0)
      throw new UsageError('watch needs at least one directory, e.g. subagent-otel watch ~/.claude/projects');
    if (values.checkpoint === '') throw new UsageError('--checkpoint takes a file, e.g. --checkpoint ./watch.json');
    const idleMs = secondsFlag('--idle', values.idle as string | undefined, 1, 86_400);
    const intervalMs = secondsFlag('--interval', values.interval as string | undefined, 0.1, 3_600);
    return {
      name: 'watch',
      dirs: positionals,
      json: values.json === true,
      ...(idleMs !== undefined ? { idleMs } : {}),
      ...(intervalMs !== undefined ? { intervalMs } : {}),
      ...(typeof values.checkpoint === 'string' ? { checkpoint: values.checkpoint } : {}),
      history: values.history === true,
      poll: values.poll === true,
      daemon,
      ...telemetryFlags(values),
    };
  },
  async run(cmd, context) {
    const { runWatch } = await import('./watch.js');
    const stop = new AbortController();
    // A second signal while stopping exits at once (the checkpoint keeps what was delivered).
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stop.signal.aborted) context.exitNow(128 + (constants.signals[signal] ?? 0));
      stop.abort();
    };
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onSignal);
    const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, signal: stop.signal };
    if (cmd.daemon) {
      const { runWatchDaemon } = await import('./watch-daemon.js');
      return runWatchDaemon(cmd, io);
    }
    return runWatch(cmd, io);
  },
};
