/**
 * Real operating-system pipes for the proxied agent's stdin and stdout.
 *
 * Node gives a child's `'pipe'` stdio as UNIX socket pairs, which do not
 * behave like the pipes a shell gives: closing the read end of a socket with
 * unread data resets the connection (`yes` then fails with "Connection reset
 * by peer") where a pipe sends SIGPIPE, and `S_ISFIFO` tells the agent it is
 * not on a pipe. Node has no `pipe(2)`, so each pipe is made as a FIFO in a
 * private temporary directory (mode 0600), opened at both ends and unlinked
 * at once: what remains is an anonymous pipe pair, identical to `pipe(2)`'s.
 *
 * Making the FIFOs takes a `mkfifo` process. `prepareChildPipes` runs it
 * without blocking, so the proxy starts it first and loads the rest of its
 * start path while it runs (decision 0039); `createChildPipes` is the
 * blocking form for callers with nothing to overlap.
 *
 * @module subagent-otel/proxy/os-pipes
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One pipe: the descriptor the child gets, and ours. */
export interface PipePair {
  /** The end handed to the child (read end for its stdin, write end for its stdout). */
  readonly childFd: number;
  /** Our end (write end of its stdin, read end of its stdout), non-blocking. */
  readonly ownFd: number;
}

/** The child's stdin and stdout pipes. */
export interface ChildPipes {
  readonly stdin: PipePair;
  readonly stdout: PipePair;
  /** Closes the child's ends in this process (after spawning: the child holds its own copies). */
  closeChildEnds(): void;
}

/** Where the two FIFOs are made: a private directory, removed once they are open. */
interface FifoPlace {
  readonly dir: string;
  readonly stdin: string;
  readonly stdout: string;
  /** `mkfifo` arguments making both, readable and writable by the owner only. */
  readonly args: readonly string[];
}

function fifoPlace(): FifoPlace {
  const dir = mkdtempSync(join(tmpdir(), 'subagent-otel-pipes-'));
  const stdin = join(dir, 'stdin');
  const stdout = join(dir, 'stdout');
  return { dir, stdin, stdout, args: ['-m', '600', stdin, stdout] };
}

/**
 * Opens both FIFOs of `place` at both ends and removes the directory.
 * @returns the pipes, or `undefined` (everything opened closed again). Never throws.
 */
function openPipes(place: FifoPlace): ChildPipes | undefined {
  const opened: number[] = [];
  try {
    // Both ends are opened without waiting: a transient read-write descriptor (Linux opens a FIFO
    // with O_RDWR at once) stands in for the missing peer, then is closed. The child's ends stay
    // blocking, as a shell's pipes are; ours are non-blocking for the event loop.
    const pair = (path: string, childFlags: number, ownFlags: number): [number, number] => {
      const standIn = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
      opened.push(standIn);
      const childFd = openSync(path, childFlags);
      opened.push(childFd);
      const ownFd = openSync(path, ownFlags | constants.O_NONBLOCK);
      opened.push(ownFd);
      closeSync(standIn);
      opened.splice(opened.indexOf(standIn), 1);
      return [childFd, ownFd];
    };
    const [stdinRead, stdinWrite] = pair(place.stdin, constants.O_RDONLY, constants.O_WRONLY);
    const [stdoutWrite, stdoutRead] = pair(place.stdout, constants.O_WRONLY, constants.O_RDONLY);
    let isClosed = false;
    return {
      stdin: { childFd: stdinRead, ownFd: stdinWrite },
      stdout: { childFd: stdoutWrite, ownFd: stdoutRead },
      closeChildEnds() {
        if (isClosed) return;
        isClosed = true;
        closeSync(stdinRead);
        closeSync(stdoutWrite);
      },
    };
  } catch {
    // EACCES, EMFILE, a FIFO that was not made: fall back to socket pairs; close what was opened.
    for (const fd of opened) {
      try {
        closeSync(fd);
      } catch {
        // Already closed: nothing to release.
      }
    }
    return undefined;
  } finally {
    removePlace(place.dir);
  }
}

function removePlace(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // A temporary directory we cannot remove holds nothing but unlinked FIFO names; leave it.
  }
}

/**
 * Makes the two pipes, or `undefined` where that is not possible (Windows,
 * no `mkfifo`, an unwritable temporary directory): the caller then uses
 * Node's socket pairs, as before. Blocks while `mkfifo` runs. Never throws.
 */
export function createChildPipes(): ChildPipes | undefined {
  if (process.platform === 'win32') return undefined;
  let place: FifoPlace;
  try {
    place = fifoPlace();
  } catch {
    // No writable temporary directory: socket pairs.
    return undefined;
  }
  try {
    execFileSync('mkfifo', [...place.args], { stdio: 'ignore' });
  } catch {
    // No mkfifo, or it failed: socket pairs.
    removePlace(place.dir);
    return undefined;
  }
  return openPipes(place);
}

/**
 * `createChildPipes` without blocking: starts `mkfifo` at once and resolves
 * with the opened pipes once it exited, or with `undefined` where pipes
 * cannot be made (then Node's socket pairs are used). Call it as early as
 * possible and await it just before spawning. Never rejects.
 */
export function prepareChildPipes(): Promise<ChildPipes | undefined> {
  if (process.platform === 'win32') return Promise.resolve(undefined);
  let place: FifoPlace;
  try {
    place = fifoPlace();
  } catch {
    // No writable temporary directory: socket pairs.
    return Promise.resolve(undefined);
  }
  return new Promise((resolve) => {
    const maker = spawn('mkfifo', [...place.args], { stdio: 'ignore' });
    maker.once('error', () => {
      // ENOENT (no mkfifo) or EAGAIN: socket pairs. 'exit' may not follow a failed spawn.
      removePlace(place.dir);
      resolve(undefined);
    });
    maker.once('exit', (code) => {
      if (code === 0) resolve(openPipes(place));
      else {
        removePlace(place.dir);
        resolve(undefined);
      }
    });
  });
}
