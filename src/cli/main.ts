/**
 * The `subagent-otel` command, loaded by `cli/bin` (the package's `bin`,
 * which checks the Node version first): parses argv, runs the command,
 * and maps its outcome and typed errors to an exit code in one place. The
 * only caller of `process.exit` in the project.
 *
 * Loads nothing but the argument parser (with the configuration table it
 * validates flags against) and the proxy's spawn path before a command runs:
 * the proxy command is imported statically (one chunk load less before its
 * agent is spawned) and loads its observation only after the spawn; every
 * other command is a dynamic `import()` (decisions 0033, 0039).
 *
 * @module subagent-otel/cli/main
 */
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { helpText, parseCommandLine } from './args.js';
import { ExitError, UsageError } from './errors.js';
import { flushCompileCacheNow } from './compile-cache.js';
import { favourSmallHeap, holdOptimizationDuringStart } from '../proxy/heap-settings.js';
import { prepareChildPipes } from '../proxy/os-pipes.js';
import { runProxy } from '../proxy/run-proxy.js';

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Whether exiting waits for stdout to drain: every command but the proxy,
 * whose stdout carries the agent's bytes under its own flow control (a
 * client that stopped reading must not keep the proxy alive).
 */
let waitForStdout = true;

async function main(argv: readonly string[]): Promise<number> {
  const cmd = parseCommandLine(argv);
  if (cmd.name === 'proxy') waitForStdout = false;
  else {
    // `replay ... | head`: a reader that goes away breaks the pipe (EPIPE). The command's output is then
    // unwanted, not its work: rows and the summary are dropped, telemetry is still delivered.
    process.stdout.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') process.stderr.write(`subagent-otel: stdout: ${error.message}\n`);
    });
  }
  switch (cmd.name) {
    case 'help':
      process.stdout.write(`${helpText(cmd.topic)}\n`);
      return 0;
    case 'version':
      process.stdout.write(`subagent-otel ${version()}\n`);
      return 0;
    case 'proxy': {
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
    }
    case 'replay': {
      const { runReplay } = await import('./commands/replay.js');
      return runReplay(cmd, { stdout: process.stdout, stderr: process.stderr, env: process.env });
    }
    case 'watch': {
      const { runWatch } = await import('./commands/watch.js');
      const stop = new AbortController();
      // A second signal while stopping exits at once (the checkpoint keeps what was delivered).
      const onSignal = (signal: NodeJS.Signals): void => {
        if (stop.signal.aborted) process.exit(128 + (constants.signals[signal] ?? 0));
        stop.abort();
      };
      for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onSignal);
      const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, signal: stop.signal };
      if (cmd.daemon) {
        const { runWatchDaemon } = await import('./commands/watch-daemon.js');
        return runWatchDaemon(cmd, io);
      }
      return runWatch(cmd, io);
    }
    case 'setup': {
      const { runSetup } = await import('./commands/setup.js');
      return runSetup(cmd, { stdout: process.stdout, stderr: process.stderr, env: process.env, script: process.argv[1] ?? '' });
    }
    case 'check': {
      const { runCheck } = await import('./commands/check.js');
      return runCheck(cmd, { stdout: process.stdout, stderr: process.stderr, env: process.env });
    }
    case 'view': {
      const { runView } = await import('./commands/view.js');
      const stop = new AbortController();
      for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stop.abort());
      return runView(cmd, { stdout: process.stdout, stderr: process.stderr, env: process.env, signal: stop.signal });
    }
    case 'demo': {
      const { runDemo } = await import('./commands/demo.js');
      return runDemo(cmd, { stdout: process.stdout, stderr: process.stderr, env: process.env });
    }
  }
}

function exitCodeOf(err: unknown): number {
  if (err instanceof UsageError) {
    process.stderr.write(`subagent-otel: ${err.message}\n`);
    return 2;
  }
  if (err instanceof ExitError) {
    process.stderr.write(`subagent-otel: ${err.message}\n`);
    return err.code;
  }
  process.stderr.write(`subagent-otel: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return 70;
}

/**
 * Resolves once everything written to `stream` so far has been handed to the
 * operating system (or the reader went away: EPIPE). `process.exit` does not
 * wait for a pipe's pending writes, so `replay --json | reader` would lose
 * all but the first 64 KiB without this.
 */
function drained(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) {
      resolve();
      return;
    }
    // Writes complete in order: the callback of an empty write runs after every earlier one.
    const done = (): void => resolve();
    stream.once('error', done);
    stream.write('', () => {
      stream.off('error', done);
      resolve();
    });
  });
}

/** Exits with `code` after stdout and stderr drained. */
async function exitAfterDrain(code: number): Promise<never> {
  if (waitForStdout) await Promise.all([drained(process.stdout), drained(process.stderr)]);
  process.exit(code);
}

// Exit explicitly: a proxied stdin or a lingering socket must not keep the process alive after the work is done.
main(process.argv.slice(2)).then(
  (code) => exitAfterDrain(code),
  (err: unknown) => exitAfterDrain(exitCodeOf(err)),
);
