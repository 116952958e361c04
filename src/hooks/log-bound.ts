/**
 * Keeps the watcher's log (`daemon/watch.log`) bounded: a watcher started
 * by the hooks runs for as long as the machine does and writes a line per
 * run it reports, so its log would grow without end. Past `LOG_LIMIT_BYTES`
 * the log is copied to `watch.log.1` (replacing the previous one) and
 * emptied in place: the watcher and the hooks write it in append mode, so
 * their next lines land at the start of the emptied file, and no process
 * has to reopen it. Owns that bound only; who writes the log is
 * `run-hook`'s and the daemon's.
 *
 * @module subagent-otel/hooks/log-bound
 */
import { copyFileSync, fstatSync, statSync, truncateSync } from 'node:fs';
import { errorText } from '../wire/error-text.js';

/** The size past which the log is moved aside: weeks of runs, a few seconds to read. */
export const LOG_LIMIT_BYTES = 8 * 1024 * 1024;
/** How often a running watcher looks at its log's size (one `fstat`). */
export const LOG_CHECK_MS = 10 * 60 * 1000;

/**
 * Moves `path` aside to `<path>.1` and empties it when it is larger than
 * `limit` bytes. Lines appended between the copy and the emptying are lost
 * (a few at most: the log is written a line at a time).
 * @returns what went wrong, or undefined (also when the log is small or absent).
 */
export function boundLog(path: string, limit = LOG_LIMIT_BYTES): string | undefined {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    return undefined; // no log yet: nothing to bound
  }
  if (size <= limit) return undefined;
  try {
    copyFileSync(path, `${path}.1`);
    truncateSync(path, 0);
    return undefined;
  } catch (error) {
    return `cannot move the log ${path} (${size} bytes) aside to ${path}.1: ${errorText(error)}`;
  }
}

/** Whether file descriptor `fd` is the file at `path` (the daemon's output is its log only when a hook started it). */
export function isFileAt(fd: number, path: string): boolean {
  try {
    const open = fstatSync(fd);
    const named = statSync(path);
    return open.dev === named.dev && open.ino === named.ino;
  } catch {
    return false;
  }
}

/**
 * Bounds `path` now and every `everyMs` while the process runs (an unref'd
 * timer: it never keeps the process alive). @returns a stop function.
 */
export function keepLogBounded(
  path: string,
  say: (problem: string) => void,
  everyMs = LOG_CHECK_MS,
  limit = LOG_LIMIT_BYTES,
): () => void {
  const check = (): void => {
    const problem = boundLog(path, limit);
    if (problem !== undefined) say(problem);
  };
  check();
  const timer = setInterval(check, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
