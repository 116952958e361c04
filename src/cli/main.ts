#!/usr/bin/env node
/**
 * Entry point of the `subagent-otel` command: parses argv, runs the command,
 * and maps its outcome and typed errors to an exit code in one place. The
 * only caller of `process.exit` in the project.
 *
 * @module subagent-otel/cli/main
 */
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { helpText, parseCommandLine } from './args.js';
import { ExitError, UsageError } from './errors.js';
import { favourSmallHeap } from './heap-settings.js';

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

async function main(argv: readonly string[]): Promise<number> {
  const cmd = parseCommandLine(argv);
  switch (cmd.name) {
    case 'help':
      process.stdout.write(`${helpText(cmd.topic)}\n`);
      return 0;
    case 'version':
      process.stdout.write(`subagent-otel ${version()}\n`);
      return 0;
    case 'proxy': {
      favourSmallHeap();
      const { runProxy } = await import('./commands/proxy.js');
      const exit = await runProxy(cmd, { env: process.env, stderr: process.stderr });
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

// Exit explicitly: a proxied stdin or a lingering socket must not keep the process alive after the work is done.
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => process.exit(exitCodeOf(err)),
);
