/**
 * The transparent stdio bridge behind `subagent-otel proxy`: spawns the real
 * agent command, forwards stdin to it and its stdout and stderr back,
 * byte for byte and in order, with backpressure, forwards signals, and
 * reports how the child ended. The child's stdin and stdout are real pipes
 * (`os-pipes`), so EOF and broken pipes behave as without the proxy (a
 * reader that goes away gives the agent SIGPIPE), and on Linux the child
 * dies with the proxy (`backend/parent-death`). Observation is a side tap: every forwarded
 * chunk is also handed to `onChunk` after it was written, behind a guard, so
 * a failing observer never changes or delays what the peers see. The
 * child's stdout is read straight into a buffer of our own, without a stream
 * in between, and that memory is read into again once the write took the
 * bytes into the kernel and no observer keeps chunks (`borrowedChunks`):
 * no allocation, page faults or garbage per chunk (decision 0042). Owns no
 * protocol knowledge and no telemetry.
 *
 * @module subagent-otel/proxy/stdio-proxy
 */
import { spawn } from 'node:child_process';
import { Socket, type SocketConstructorOpts } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { withParentDeathSignal } from '../backend/parent-death.js';
import type { Direction } from '../observe/frame-observer.js';
import { createChildPipes, type ChildPipes } from './os-pipes.js';

/** Bytes read from the child's stdout at a time: what libuv reads per call for a stream. */
const READ_BYTES = 64 * 1024;

/** Signals the proxy passes on to the child instead of acting on them itself. */
export const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = [
  'SIGINT',
  'SIGTERM',
  'SIGHUP',
  'SIGQUIT',
  'SIGUSR1',
  'SIGUSR2',
];

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
  /**
   * `onChunk` keeps no chunk after it returns (it copies what it keeps), so
   * the memory of a forwarded chunk may be read into again. Default `false`:
   * every chunk is fresh memory. Without `onChunk` memory is always reused.
   */
  readonly borrowedChunks?: boolean;
  /** A direction ended (EOF). */
  readonly onEnd?: (direction: Direction) => void;
  /** Observation failed; forwarding goes on. */
  readonly onObserverError?: (error: unknown) => void;
  /**
   * Called once when the child closed its stdout and everything it wrote was
   * flushed to `stdout`, while the child may still run: the CLI closes its own
   * stdout there, so the client sees EOF when the bare command would give it.
   */
  readonly onStdoutEnd?: () => void;
  /** Signals to forward; default `FORWARDED_SIGNALS`. Pass `[]` when embedding. */
  readonly signals?: readonly NodeJS.Signals[];
  /**
   * The child's stdin and stdout pipes when made in advance (`prepareChildPipes`),
   * `null` when they could not be made (Node's socket pairs are used).
   * Default: made here, blocking (`createChildPipes`).
   */
  readonly pipes?: ChildPipes | null;
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
    const env = options.env ?? process.env;
    const pipes = options.pipes === undefined ? createChildPipes() : (options.pipes ?? undefined);
    const target = withParentDeathSignal(options.command, options.args, env, options.cwd);
    const child = spawn(target.command, [...target.args], {
      stdio: [pipes?.stdin.childFd ?? 'pipe', pipes?.stdout.childFd ?? 'pipe', 'pipe'],
      env,
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    });
    pipes?.closeChildEnds();
    // Our ends of the real pipes, or Node's socket pairs where pipes could not be made.
    const childStdin: Writable =
      pipes !== undefined
        ? new Socket({ fd: pipes.stdin.ownFd, readable: false, writable: true })
        : (child.stdin as Writable);
    const forwarding =
      pipes !== undefined
        ? directForwarding(
            stdout,
            (chunk) => observe('agent->client', chunk),
            options.onChunk === undefined || options.borrowedChunks === true,
          )
        : undefined;
    // `onread` is the option `net.connect` documents; the Socket constructor is what reads it (Node's typings omit it there).
    const childStdout: Readable =
      pipes !== undefined
        ? new Socket({
            fd: pipes.stdout.ownFd,
            readable: true,
            writable: false,
            onread: forwarding?.onread,
          } as SocketConstructorOpts)
        : (child.stdout as Readable);
    let exitStatus: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let isStdoutDone = false;
    const maybeFinish = (): void => {
      if (exitStatus !== undefined && isStdoutDone) finish({ ...exitStatus, pid: child.pid as number });
    };
    const handlers = new Map<NodeJS.Signals, () => void>();
    let settled = false;
    const finish = (exit: ProxyExit): void => {
      if (settled) return;
      settled = true;
      for (const [signal, handler] of handlers) process.off(signal, handler);
      stdin.unpipe(childStdin);
      stdin.off('data', onStdinData);
      stdin.off('end', onStdinEnd);
      stdin.pause();
      resolve(exit);
    };

    child.once('error', (err: NodeJS.ErrnoException) => {
      // Only a failed spawn reaches here before 'close'; later errors are per stream.
      if (child.pid === undefined)
        finish({ code: null, signal: null, spawnError: `${err.code ?? 'error'}: ${err.message}` });
    });
    if (child.pid === undefined) {
      childStdin.destroy();
      childStdout.destroy();
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
    childStdin.on('error', () => {
      // EPIPE/ECONNRESET: the child closed its stdin or died; what it no longer reads is not ours to keep.
    });
    stdin.pipe(childStdin);
    stdin.on('data', onStdinData);
    stdin.on('end', onStdinEnd);

    // Child -> parent, both output streams, with backpressure.
    forwardChildOutput(
      { childStdout, childStderr: child.stderr, stdout, stderr, forwarding, observe, ended, options },
      () => {
        isStdoutDone = true;
        maybeFinish();
      },
    );

    // 'close' also waits for stderr; stdout (ours when it is a real pipe) is awaited above.
    child.once('close', (code, signal) => {
      exitStatus = { code, signal };
      maybeFinish();
    });
  });
}

/** The two ends of the child's output and what `runStdioProxy` forwards them with. */
interface ChildOutput {
  readonly childStdout: Readable;
  readonly childStderr: Readable | null;
  readonly stdout: Writable;
  readonly stderr: Writable;
  /** The direct forwarding of real pipes; `undefined`: Node's socket pairs, piped. */
  readonly forwarding: ReturnType<typeof directForwarding> | undefined;
  readonly observe: (direction: Direction, chunk: Buffer) => void;
  readonly ended: (direction: Direction) => void;
  readonly options: Pick<StdioProxyOptions, 'onStdoutEnd' | 'onObserverError'>;
}

/**
 * Child -> parent: the child's stdout onto `stdout` (each chunk observed
 * after it was written) and its stderr onto `stderr`, with backpressure;
 * `onStdoutEnd` once all of the child's output was handed on; a parent that
 * stops reading closes our read end. Calls `onClosed` when the child's stdout
 * closed. Never throws.
 */
function forwardChildOutput(io: ChildOutput, onClosed: () => void): void {
  const { childStdout, stdout, observe, options } = io;
  if (io.forwarding !== undefined) io.forwarding.start(childStdout);
  else {
    childStdout.pipe(stdout, { end: false });
    childStdout.on('data', (chunk: Buffer) => observe('agent->client', chunk));
  }
  childStdout.on('end', () => {
    io.ended('agent->client');
    if (options.onStdoutEnd === undefined) return;
    const onStdoutEnd = options.onStdoutEnd;
    // An empty write completes after every earlier one: then all of the child's output was handed on.
    stdout.write('', () => {
      try {
        onStdoutEnd();
      } catch (err) {
        options.onObserverError?.(err);
      }
    });
  });
  childStdout.on('error', () => {
    // EIO/ECONNRESET on our read end: the output ends here, as a closed pipe would.
  });
  childStdout.once('close', onClosed);
  io.childStderr?.pipe(io.stderr, { end: false });
  stdout.on('error', () => {
    // EPIPE: the parent stopped reading. Close our read end so the child gets SIGPIPE, as it would without us.
    childStdout.destroy();
  });
}

/**
 * Forwarding of the child's stdout without a stream: the socket reads into a
 * buffer (`onread`), each chunk is written to `stdout` and then observed;
 * a `false` from `write` pauses reading until `drain`. The next read goes
 * into the same memory when `mayReuse` and the write left nothing queued
 * (a socket that took the bytes into the kernel at once: a pipe, a TTY, a
 * socket), else into fresh memory, as a stream would read.
 */
function directForwarding(
  stdout: Writable,
  observe: (chunk: Buffer) => void,
  mayReuse: boolean,
): {
  readonly onread: { buffer: () => Buffer; callback: (bytes: number, buffer: Buffer) => boolean };
  start(source: Readable): void;
} {
  // Only a socket's write that completed synchronously is done with the bytes; other writables may queue them.
  const canReuse = mayReuse && stdout instanceof Socket;
  let source: Readable | undefined;
  let current: Buffer | undefined;
  let isFree = false;
  const resume = (): void => {
    source?.resume();
  };
  return {
    onread: {
      buffer: () => {
        if (current === undefined || !isFree) current = Buffer.allocUnsafe(READ_BYTES);
        return current;
      },
      callback: (bytes, buffer) => {
        const chunk = buffer.subarray(0, bytes);
        const flushed = stdout.write(chunk);
        isFree = canReuse && stdout.writableLength === 0;
        observe(chunk);
        if (flushed) return true;
        stdout.once('drain', resume);
        return false; // pauses the socket until the parent has taken what is queued
      },
    },
    start(readable) {
      source = readable;
    },
  };
}
