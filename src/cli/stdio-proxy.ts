/**
 * The transparent stdio bridge behind `subagent-otel proxy`: spawns the real
 * agent command, forwards stdin to it and its stdout and stderr back,
 * byte for byte and in order, with backpressure, forwards signals, and
 * reports how the child ended. Observation is a side tap: every forwarded
 * chunk is also handed to `onChunk` after it was written, behind a guard, so
 * a failing observer never changes or delays what the peers see. Owns no
 * protocol knowledge and no telemetry.
 *
 * @module subagent-otel/cli/stdio-proxy
 */
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { Direction } from '../observe/frame-observer.js';

/** Signals the proxy passes on to the child instead of acting on them itself. */
export const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];

/** Options of `runStdioProxy`. */
export interface StdioProxyOptions {
  readonly command: string;
  readonly args: readonly string[];
  /** Environment of the child; default: the proxy's own, unchanged (the proxy is transparent). */
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Streams of the parent side; default `process.stdin/stdout/stderr`. */
  readonly stdin?: Readable;
  readonly stdout?: Writable;
  readonly stderr?: Writable;
  /** Receives each chunk after it was handed to the other side. Errors it throws are passed to `onObserverError`. */
  readonly onChunk?: (direction: Direction, chunk: Buffer) => void;
  /** A direction ended (EOF). */
  readonly onEnd?: (direction: Direction) => void;
  /** Observation failed; forwarding goes on. */
  readonly onObserverError?: (error: unknown) => void;
  /** Signals to forward; default `FORWARDED_SIGNALS`. Pass `[]` when embedding. */
  readonly signals?: readonly NodeJS.Signals[];
}

/** How the child ended. Exactly one of `code` and `signal` is set unless it never started. */
export interface ProxyExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the command could not be started (e.g. `ENOENT`). */
  readonly spawnError?: string;
  readonly pid?: number;
}

/**
 * Runs the command behind the bridge until it exits and its output streams close.
 *
 * @returns how the child ended; never rejects (a command that cannot be
 *   started resolves with `spawnError`). Never writes anything of its own to
 *   the parent's stdout or stderr.
 */
export function runStdioProxy(options: StdioProxyOptions): Promise<ProxyExit> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const signals = options.signals ?? FORWARDED_SIGNALS;

  const observe = (direction: Direction, chunk: Buffer): void => {
    if (options.onChunk === undefined) return;
    try {
      options.onChunk(direction, chunk);
    } catch (err) {
      options.onObserverError?.(err);
    }
  };
  const ended = (direction: Direction): void => {
    try {
      options.onEnd?.(direction);
    } catch (err) {
      options.onObserverError?.(err);
    }
  };

  const onStdinData = (chunk: Buffer): void => observe('client->agent', chunk);
  const onStdinEnd = (): void => ended('client->agent');

  return new Promise<ProxyExit>((resolve) => {
    const child = spawn(options.command, [...options.args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: options.env ?? process.env,
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    });
    const handlers = new Map<NodeJS.Signals, () => void>();
    let settled = false;
    const finish = (exit: ProxyExit): void => {
      if (settled) return;
      settled = true;
      for (const [signal, handler] of handlers) process.off(signal, handler);
      stdin.unpipe(child.stdin);
      stdin.off('data', onStdinData);
      stdin.off('end', onStdinEnd);
      stdin.pause();
      resolve(exit);
    };

    child.once('error', (err: NodeJS.ErrnoException) => {
      // Only a failed spawn reaches here before 'close'; later errors are per stream.
      if (child.pid === undefined) finish({ code: null, signal: null, spawnError: `${err.code ?? 'error'}: ${err.message}` });
    });
    if (child.pid === undefined) {
      child.stdin.destroy();
      return;
    }

    for (const signal of signals) {
      const handler = (): void => {
        child.kill(signal);
      };
      handlers.set(signal, handler);
      process.on(signal, handler);
    }

    // Parent -> child. `pipe` writes first (it was attached first), then the tap observes the same chunk.
    child.stdin.on('error', () => {
      // EPIPE/ECONNRESET: the child closed its stdin or died; what it no longer reads is not ours to keep.
    });
    stdin.pipe(child.stdin);
    stdin.on('data', onStdinData);
    stdin.on('end', onStdinEnd);

    // Child -> parent, both output streams, with backpressure.
    child.stdout.pipe(stdout, { end: false });
    child.stdout.on('data', (chunk: Buffer) => observe('agent->client', chunk));
    child.stdout.on('end', () => ended('agent->client'));
    child.stderr.pipe(stderr, { end: false });
    stdout.on('error', () => {
      // EPIPE: the parent stopped reading. Close our read end so the child sees the broken pipe, as it would without us.
      child.stdout.destroy();
    });

    child.once('close', (code, signal) => finish({ code, signal, pid: child.pid as number }));
  });
}
