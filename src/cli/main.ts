/**
 * The `subagent-otel` command, loaded by `cli/bin` (the package's `bin`,
 * which checks the Node version first): parses argv, runs the command,
 * and maps its outcome and typed errors to an exit code in one place. The
 * only caller of `process.exit` in the project.
 *
 * Loads nothing but the command table (each command's parser and help, with
 * the configuration table flags are validated against) and the proxy's
 * spawn path before a command runs: the table's proxy entry imports its
 * handler statically (one chunk load less before its agent is spawned),
 * which loads the observation only after the spawn; every other entry's
 * handler is a dynamic `import()` (decisions 0033, 0039).
 *
 * @module subagent-otel/cli/main
 */
import { readFileSync } from 'node:fs';
import { helpText, parseCommandLine } from './args.js';
import { commandNamed, runCommand } from './command-table.js';
import { ExitError, UsageError } from './errors.js';

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Whether exiting waits for stdout to drain: for every command but those
 * whose table entry `forwardsStdout` (the proxy's: its stdout carries the
 * agent's bytes under their own flow control, and a client that stopped
 * reading must not keep the proxy alive).
 */
let waitForStdout = true;

async function main(argv: readonly string[]): Promise<number> {
  const cmd = parseCommandLine(argv);
  if (cmd.name !== 'help' && cmd.name !== 'version' && commandNamed(cmd.name)?.forwardsStdout === true)
    waitForStdout = false;
  else {
    // `replay ... | head`: a reader that goes away breaks the pipe (EPIPE). The command's output is then
    // unwanted, not its work: rows and the summary are dropped, telemetry is still delivered.
    process.stdout.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') process.stderr.write(`subagent-otel: stdout: ${error.message}\n`);
    });
  }
  if (cmd.name === 'help') {
    process.stdout.write(`${helpText(cmd.topic)}\n`);
    return 0;
  }
  if (cmd.name === 'version') {
    process.stdout.write(`subagent-otel ${version()}\n`);
    return 0;
  }
  return runCommand(cmd, { exitNow: (code) => process.exit(code) });
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
  process.stderr.write(
    `subagent-otel: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
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
