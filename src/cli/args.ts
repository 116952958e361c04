/**
 * Every command and option of the `subagent-otel` command line, declared in
 * one place, parsed with `node:util` `parseArgs` (strict) and normalized once
 * into typed options. Owns argv-to-options mapping and help text only: no
 * command runs here. Errors are `UsageError`s that name the bad input and say
 * what to do.
 *
 * @module subagent-otel/cli/args
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors.js';
import { SETTINGS, type Setting } from '../telemetry/config.js';

/** Options every telemetry-emitting command takes. */
export interface TelemetryFlags {
  /** `--out <dir>`: also write OTLP-JSON lines files there. */
  readonly out?: string;
  /** `--prometheus-port <port>`: serve `/metrics` on 127.0.0.1 (or `--prometheus-host`). */
  readonly prometheusPort?: number;
  /**
   * `--prometheus-host <host>`: listen address of the `/metrics` endpoint.
   * Absent when not given; the environment (`SUBAGENT_OTEL_PROMETHEUS_HOST`)
   * and the default (`127.0.0.1`) are applied in `telemetry-options.ts`.
   */
  readonly prometheusHost?: string;
  /** `--no-content`: never record output text. */
  readonly captureContent?: false;
  /** `--max-content-length <n>`: cap on recorded output JSON. */
  readonly maxContentLength?: number;
  /** `--agent-name <name>`: `gen_ai.agent.name` of the runs. */
  readonly agentName?: string;
}

export type Protocol = 'sdk' | 'acp' | 'auto';

export type Command =
  | { readonly name: 'help'; readonly topic?: string }
  | { readonly name: 'version' }
  | ({
      readonly name: 'proxy';
      readonly protocol: Protocol;
      readonly capture?: string;
      /** `--agent-telemetry`: receive the agent's own OpenTelemetry (docs/AGENTS.md); absent: the agent's environment is untouched. */
      readonly agentTelemetry?: true;
      readonly command: string;
      readonly args: readonly string[];
    } & TelemetryFlags)
  | ({
      readonly name: 'replay';
      readonly paths: readonly string[];
      readonly json: boolean;
      readonly progress?: boolean;
      /** `--no-runs`: no row per run before the summary. */
      readonly runs?: false;
      readonly protocol: Protocol;
    } & TelemetryFlags)
  | ({
      readonly name: 'watch';
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
    } & TelemetryFlags)
  | {
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
  | ({ readonly name: 'demo'; readonly json: boolean; readonly sessions?: string } & TelemetryFlags)
  | ({ readonly name: 'check'; readonly json: boolean; readonly deliver: boolean } & TelemetryFlags)
  | {
      readonly name: 'view';
      /** OTLP JSON files, directories holding `traces.jsonl`, or agents' transcript folders; empty: the default output directory. */
      readonly paths: readonly string[];
      /** `--port <port>`; absent: a free port. */
      readonly port?: number;
      /** `--host <host>`; absent: 127.0.0.1. */
      readonly host?: string;
    };

const telemetryOptions = {
  out: { type: 'string' },
  'prometheus-port': { type: 'string' },
  'prometheus-host': { type: 'string' },
  'no-content': { type: 'boolean' },
  'max-content-length': { type: 'string' },
  'agent-name': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

const TELEMETRY_HELP = `Telemetry options:
  --out <dir>                 also write traces.jsonl and metrics.jsonl (OTLP JSON lines) to <dir>,
                              even when an OTLP endpoint is configured
                              (default without an endpoint: $SUBAGENT_OTEL_OUT or ./subagent-otel-out)
  --prometheus-port <port>    serve Prometheus metrics on http://<host>:<port>/metrics
                              (env SUBAGENT_OTEL_PROMETHEUS_PORT; suggested 9464)
  --prometheus-host <host>    listen address of that endpoint (env SUBAGENT_OTEL_PROMETHEUS_HOST;
                              default 127.0.0.1); e.g. the Docker bridge address for a container
  --no-content                record no output text (hash and length only); same as
                              OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=false
  --max-content-length <n>    cap recorded output JSON at <n> characters, 0 for none (OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT)
  --agent-name <name>         gen_ai.agent.name of the runs (default: the provider, or the protocol)

Environment (OpenTelemetry standard): OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
  OTEL_EXPORTER_OTLP_ENDPOINT (e.g. http://localhost:4318), OTEL_EXPORTER_OTLP_PROTOCOL
  (grpc, http/protobuf (default), http/json; per signal with _TRACES_/_METRICS_),
  OTEL_EXPORTER_OTLP_HEADERS, OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER.`;

export const HELP: Record<'main' | 'proxy' | 'replay' | 'watch' | 'demo' | 'check' | 'view' | 'setup' | 'hook', string> = {
  main: `subagent-otel: OpenTelemetry for delegated agent runs (subagents)

Usage:
  subagent-otel demo [options]                         run the bundled keyless scenarios and show what was observed
  subagent-otel proxy [options] -- <command> [args...] run an agent behind a transparent stdio proxy and observe it
  subagent-otel replay [options] <file-or-dir...>      turn captures, session logs and agents' transcripts into telemetry
  subagent-otel watch [options] <dir...>               follow Claude Code, Codex and Gemini CLI transcripts as agents run
  subagent-otel setup <claude-code|codex> [options]    add hooks so each subagent's run is reported when it ends
  subagent-otel check [options]                        show where telemetry goes and send a test span and metric there
  subagent-otel view [options] [path...]               see the runs on a local page (table, waterfall, charts)
  subagent-otel help <command>                         help for one command
  subagent-otel --version

Every run's output is selected by one rule (last non-empty assistant message, else the
streamed text, else nothing), so telemetry matches SubagentResult.output.

'subagent-otel check' shows where telemetry goes and tests it; the proxy keeps its
diagnostics in the file named by SUBAGENT_OTEL_LOG_FILE.`,
  proxy: `Usage: subagent-otel proxy [options] -- <command> [args...]

Put this where the parent spawns the agent runtime (or an ACP agent). The proxy starts
<command>, forwards stdin, stdout and stderr byte for byte, forwards signals, exits with the
child's exit code (or its signal), and emits one invoke_agent span per run. A TRACEPARENT
environment variable parents its spans.

What it prints of its own: nothing on stdout (that is the agent's protocol). On stderr, one
line when the agent cannot be started, one line when the telemetry configuration is unusable
(e.g. an --out directory that cannot be written; the agent is forwarded untouched anyway),
and the telemetry itself with OTEL_TRACES_EXPORTER=console or OTEL_METRICS_EXPORTER=console.
Its diagnostics (export failures, dropped telemetry) go to the file named by
SUBAGENT_OTEL_LOG_FILE, when set, and nowhere else.

Check the configuration first with the same options and environment:
  subagent-otel check [telemetry options]

Options:
  --protocol <sdk|acp|auto>   protocol spoken on stdio (default auto: decided from the first frames)
  --capture <file>            also record the observed lines as NDJSON for 'subagent-otel replay'
  --agent-telemetry           point the agent's own OpenTelemetry at a loopback receiver of the proxy:
                              complete runs from what it reports, forward its spans, metrics and logs
                              (changes the agent's environment; docs/AGENTS.md). Late records are
                              awaited up to SUBAGENT_OTEL_AGENT_TELEMETRY_WAIT_MS (default 10000) per run,
                              2000 once the input ended, never past the agent's exit or a signal

${TELEMETRY_HELP}

Example:
  subagent-otel proxy --out ./telemetry -- deepseek-harness-runtime --stdio

Environment of its own:
  SUBAGENT_OTEL_LOG_FILE              file for the proxy's diagnostics (default: none kept)
  SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS   bound on the final telemetry flush (default 2000)
  SUBAGENT_OTEL_CODE_CACHE            directory of Node's compile cache of the command, or off
                                      (default ~/.cache/subagent-otel)`,
  replay: `Usage: subagent-otel replay [options] <file-or-directory...>

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
  --no-progress               no progress bar (it is shown only on a terminal anyway)

${TELEMETRY_HELP}`,
  watch: `Usage: subagent-otel watch [options] <directory...>

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
  setup: `Usage: subagent-otel setup <claude-code|codex> [options]

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
  hook: `Usage: subagent-otel hook <claude-code|codex>

What the agents run at SubagentStop, Stop and SessionEnd once 'subagent-otel setup' added it:
reads the hook's JSON on stdin, tells the background watcher which transcript holds a run that
just ended (starting the watcher when none runs), prints nothing and exits 0 at once, whatever
happens (problems go to $XDG_STATE_HOME/subagent-otel/daemon/watch.log).`,
  demo: `Usage: subagent-otel demo [options]

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
  check: `Usage: subagent-otel check [options]

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
  view: `Usage: subagent-otel view [options] [path...]

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
};

/** A flag's value parsed by its row of the configuration table; a value out of its range is a usage error. */
function settingFlag<T>(setting: Setting<T>, value: string | undefined): T | undefined {
  if (value === undefined) return undefined;
  const parsed = value.trim() === '' ? undefined : setting.parse(value);
  if (parsed === undefined) throw new UsageError(`${setting.flag ?? setting.env} takes ${setting.range}, got '${value}'`);
  return parsed;
}

function hostOf(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value === '' || /\s/.test(value)) throw new UsageError(`${flag} takes a host name or IP address such as 127.0.0.1, got '${value}'`);
  return value;
}

/** A `--idle`/`--interval` value in seconds, as milliseconds; a value that is no number in `min..max` is a usage error. */
function secondsFlag(flag: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value.trim());
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds < min || seconds > max) {
    throw new UsageError(`${flag} takes seconds from ${min} to ${max}, got '${value}'`);
  }
  return Math.round(seconds * 1000);
}

/** A `--port` value: an integer 1..65535. */
function portOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value.trim());
  if (value.trim() === '' || !Number.isInteger(port) || port < 1 || port > 65_535) throw new UsageError(`--port takes a port from 1 to 65535, got '${value}'`);
  return port;
}

function agentNameOf(value: string): string {
  if (value.trim() === '') throw new UsageError(`--agent-name takes a non-empty name such as 'coder', got '${value}'`);
  return value;
}

function protocolOf(value: string | undefined): Protocol {
  if (value === undefined) return 'auto';
  if (value === 'sdk' || value === 'acp' || value === 'auto') return value;
  throw new UsageError(`--protocol takes sdk, acp or auto, got '${value}'`);
}

function telemetryFlags(values: Values): TelemetryFlags {
  const prometheusPort = settingFlag(SETTINGS.prometheusPort, values['prometheus-port'] as string | undefined);
  const prometheusHost = hostOf('--prometheus-host', values['prometheus-host'] as string | undefined);
  const maxContentLength = settingFlag(SETTINGS.maxContentLength, values['max-content-length'] as string | undefined);
  return {
    ...(typeof values.out === 'string' ? { out: values.out } : {}),
    ...(prometheusPort !== undefined ? { prometheusPort } : {}),
    ...(prometheusHost !== undefined ? { prometheusHost } : {}),
    ...(values['no-content'] === true ? { captureContent: false as const } : {}),
    ...(maxContentLength !== undefined ? { maxContentLength } : {}),
    ...(typeof values['agent-name'] === 'string' ? { agentName: agentNameOf(values['agent-name']) } : {}),
  };
}

type Values = Record<string, string | boolean | undefined>;

function parse(
  command: string,
  argv: readonly string[],
  options: ParseArgsConfig['options'],
  allowPositionals: boolean,
): { values: Values; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options, strict: true, allowPositionals });
    return { values: values as Values, positionals };
  } catch (err) {
    // parseArgs throws TypeError with code ERR_PARSE_ARGS_* for unknown options and missing values.
    const message = err instanceof Error ? err.message : String(err);
    throw new UsageError(`${message.replace(/\. To specify a positional argument.*$/s, '')} (see 'subagent-otel help ${command}')`);
  }
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
  switch (first) {
    case 'proxy': {
      const dash = rest.indexOf('--');
      const own = dash === -1 ? rest : rest.slice(0, dash);
      const child = dash === -1 ? [] : rest.slice(dash + 1);
      const { values, positionals } = parse(
        'proxy',
        own,
        { ...telemetryOptions, protocol: { type: 'string' }, capture: { type: 'string' }, 'agent-telemetry': { type: 'boolean' } },
        true,
      );
      if (values.help === true) return { name: 'help', topic: 'proxy' };
      if (positionals.length > 0) {
        throw new UsageError(`unexpected '${positionals[0]}' before '--': put the agent command after '--', e.g. subagent-otel proxy -- ${positionals.join(' ')}`);
      }
      const [command, ...args] = child;
      if (command === undefined || command === '') {
        throw new UsageError("proxy needs the agent command after '--', e.g. subagent-otel proxy -- node runtime.js");
      }
      return {
        name: 'proxy',
        protocol: protocolOf(values.protocol as string | undefined),
        ...(typeof values.capture === 'string' ? { capture: values.capture } : {}),
        ...(values['agent-telemetry'] === true ? { agentTelemetry: true as const } : {}),
        command,
        args,
        ...telemetryFlags(values),
      };
    }
    case 'replay': {
      const { values, positionals } = parse(
        'replay',
        rest,
        { ...telemetryOptions, json: { type: 'boolean' }, 'no-progress': { type: 'boolean' }, 'no-runs': { type: 'boolean' }, protocol: { type: 'string' } },
        true,
      );
      if (values.help === true) return { name: 'help', topic: 'replay' };
      if (positionals.length === 0) throw new UsageError('replay needs at least one file or directory, e.g. subagent-otel replay ./sessions');
      return {
        name: 'replay',
        paths: positionals,
        json: values.json === true,
        ...(values['no-progress'] === true ? { progress: false } : {}),
        ...(values['no-runs'] === true ? { runs: false as const } : {}),
        protocol: protocolOf(values.protocol as string | undefined),
        ...telemetryFlags(values),
      };
    }
    case 'watch': {
      const { values, positionals } = parse(
        'watch',
        rest,
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
      if (daemon && positionals.length > 0) throw new UsageError(`watch --daemon follows the folders 'subagent-otel setup' recorded; it takes no directories, got '${positionals[0]}'`);
      if (!daemon && positionals.length === 0) throw new UsageError('watch needs at least one directory, e.g. subagent-otel watch ~/.claude/projects');
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
    }
    case 'demo': {
      const { values, positionals } = parse('demo', rest, { ...telemetryOptions, json: { type: 'boolean' }, sessions: { type: 'string' } }, true);
      if (values.help === true) return { name: 'help', topic: 'demo' };
      if (positionals.length > 0) throw new UsageError(`demo takes no arguments, got '${positionals[0]}'`);
      if (values.sessions === '') throw new UsageError('--sessions takes a directory, e.g. --sessions ./sessions');
      return {
        name: 'demo',
        json: values.json === true,
        ...(typeof values.sessions === 'string' ? { sessions: values.sessions } : {}),
        ...telemetryFlags(values),
      };
    }
    case 'setup': {
      const { values, positionals } = parse(
        'setup',
        rest,
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
        throw new UsageError(`setup needs the agent: claude-code or codex${agent !== undefined ? `, got '${agent}'` : ''} (Gemini CLI has no subagent hooks: follow it with 'subagent-otel watch ~/.gemini/tmp')`);
      }
      if (extra !== undefined) throw new UsageError(`setup takes one agent, got '${extra}' too`);
      if (values.project === '') throw new UsageError('--project takes a directory, e.g. --project .');
      if (values.out === '') throw new UsageError('--out takes a directory, e.g. --out ~/subagent-otel-out');
      if (values.remove === true && (values.out !== undefined || values['no-content'] === true || values.team === true)) throw new UsageError('--remove takes no telemetry options');
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
    }
    case 'check': {
      const { values, positionals } = parse('check', rest, { ...telemetryOptions, json: { type: 'boolean' }, deliver: { type: 'boolean' } }, true);
      if (values.help === true) return { name: 'help', topic: 'check' };
      if (positionals.length > 0) throw new UsageError(`check takes no arguments, got '${positionals[0]}'`);
      return { name: 'check', json: values.json === true, deliver: values.deliver === true, ...telemetryFlags(values) };
    }
    case 'view': {
      const { values, positionals } = parse('view', rest, { port: { type: 'string' }, host: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, true);
      if (values.help === true) return { name: 'help', topic: 'view' };
      const port = portOf(values.port as string | undefined);
      const host = hostOf('--host', values.host as string | undefined);
      return { name: 'view', paths: positionals, ...(port !== undefined ? { port } : {}), ...(host !== undefined ? { host } : {}) };
    }
    default:
      throw new UsageError(`unknown command '${first}'; commands: demo, proxy, replay, watch, setup, check, view (see 'subagent-otel --help')`);
  }
}

/** Help text for a topic. @throws UsageError for an unknown topic. */
export function helpText(topic?: string): string {
  if (topic === undefined) return HELP.main;
  if (topic === 'proxy' || topic === 'replay' || topic === 'watch' || topic === 'demo' || topic === 'check' || topic === 'view' || topic === 'setup' || topic === 'hook') return HELP[topic];
  throw new UsageError(`no help for '${topic}'; commands: demo, proxy, replay, watch, setup, check, view, hook`);
}
