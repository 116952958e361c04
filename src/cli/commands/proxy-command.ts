/**
 * `subagent-otel proxy`: its entry of the command table (help page, parser)
 * and the thin command around the proxy's machinery in `src/proxy/`: it
 * starts the agent's pipes, runs `runProxy` with V8's start-time settings,
 * and turns the agent's end into the proxy's exit code (its code, or its
 * signal raised again).
 *
 * The command stays here, in the CLI, because what it owns is the
 * command line's part: options, help and the process's exit; what runs an
 * agent behind the bridge is `src/proxy/` and is shared with `demo`.
 * Unlike every other command, its handler is imported statically: the
 * table loads it with `main`, so spawning the agent waits for no further
 * chunk, and everything imported here is on the path to the spawn, which
 * `test/cli/start-path.test.ts` keeps free of the observation (decisions
 * 0039, 0122).
 *
 * @module subagent-otel/cli/commands/proxy-command
 */
import { constants } from 'node:os';
import { flushCompileCacheNow } from '../compile-cache.js';
import type { CommandSpec } from '../command-spec.js';
import { UsageError } from '../errors.js';
import { parseOptions, protocolOf, TELEMETRY_HELP, telemetryFlags, telemetryOptions } from '../options.js';
import { favourSmallHeap, holdOptimizationDuringStart } from '../../proxy/heap-settings.js';
import { prepareChildPipes } from '../../proxy/os-pipes.js';
import type { ProxyCommand } from '../../proxy/proxy-observation.js';
import { runProxy } from '../../proxy/run-proxy.js';

export const proxySpec: CommandSpec<ProxyCommand> = {
  name: 'proxy',
  synopsis: 'proxy [options] -- <command> [args...]',
  summary: 'run an agent behind a transparent stdio proxy and observe it',
  help: `Usage: subagent-otel proxy [options] -- <command> [args...]

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
  forwardsStdout: true,
  parse(argv) {
    const dash = argv.indexOf('--');
    const own = dash === -1 ? argv : argv.slice(0, dash);
    const child = dash === -1 ? [] : argv.slice(dash + 1);
    const { values, positionals } = parseOptions(
      'proxy',
      own,
      {
        ...telemetryOptions,
        protocol: { type: 'string' },
        capture: { type: 'string' },
        'agent-telemetry': { type: 'boolean' },
      },
      true,
    );
    if (values.help === true) return { name: 'help', topic: 'proxy' };
    if (positionals.length > 0) {
      throw new UsageError(
        `unexpected '${positionals[0]}' before '--': put the agent command after '--', e.g. subagent-otel proxy -- ${positionals.join(' ')}`,
      );
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
  },
  async run(cmd) {
    // The agent's pipes take a mkfifo process: started now, awaited just before the spawn (decision 0039).
    const pipes = prepareChildPipes();
    // TurboFan is held from when the observation loads until the session is no longer short: a short session's
    // first optimization (Node's path helpers, hot from loading modules) costs about 5 MiB of RSS it never gets
    // back (decisions 0039, 0122). The hold starts after the observation's Node built-ins loaded: with any V8 flag
    // set, V8 refuses Node's code cache of its built-ins and compiles them from source.
    let releaseOptimization = (): void => undefined;
    const exit = await runProxy(cmd, {
      env: process.env,
      stderr: process.stderr,
      pipes,
      onLoadingObservation: () => {
        releaseOptimization = holdOptimizationDuringStart();
      },
      onObserving: () => {
        // V8 stamps a code cache with its flags: what the start compiled is written before the heap flag is set.
        flushCompileCacheNow();
        favourSmallHeap();
      },
      onShortSessionOver: () => releaseOptimization(),
    });
    if (exit.spawnError !== undefined) return 127;
    if (exit.signal !== null) {
      // Re-raise the child's signal so our parent sees the same kind of death. Delivery is
      // asynchronous: wait for it rather than exit first; the code is only a fallback.
      process.removeAllListeners(exit.signal);
      process.kill(process.pid, exit.signal);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      return 128 + (constants.signals[exit.signal] ?? 0);
    }
    return exit.code ?? 1;
  },
};
