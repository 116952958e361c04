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
 * @module subagent-otel/cli/os-pipes
 */
import { execFileSync } from 'node:child_process';
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

/**
 * Makes the two pipes, or `undefined` where that is not possible (Windows,
 * no `mkfifo`, an unwritable temporary directory): the caller then uses
 * Node's socket pairs, as before. Never throws.
 */
export function createChildPipes(): ChildPipes | undefined {
  if (process.platform === 'win32') return undefined;
  let dir: string | undefined;
  const opened: number[] = [];
  try {
    dir = mkdtempSync(join(tmpdir(), 'subagent-otel-pipes-'));
    const inPath = join(dir, 'stdin');
    const outPath = join(dir, 'stdout');
    execFileSync('mkfifo', ['-m', '600', inPath, outPath], { stdio: 'ignore' });
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
    const [stdinRead, stdinWrite] = pair(inPath, constants.O_RDONLY, constants.O_WRONLY);
    const [stdoutWrite, stdoutRead] = pair(outPath, constants.O_WRONLY, constants.O_RDONLY);
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
    // No mkfifo, EACCES, EMFILE: fall back to socket pairs; close what was opened.
    for (const fd of opened) {
      try {
        closeSync(fd);
      } catch {
        // Already closed: nothing to release.
      }
    }
    return undefined;
  } finally {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}
