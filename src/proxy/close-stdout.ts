/**
 * Closing the proxy's own stdout when the agent closed its stdout, so the
 * client sees EOF then, as it would with the bare command, not only when
 * the proxy exits.
 *
 * Node cannot close `process.stdout` (its `destroy` is a no-op), so the
 * descriptor itself is closed and `/dev/null` takes its number at once (the
 * lowest free descriptor), so nothing else opened later lands on fd 1 and
 * stray writes go nowhere. Only for pipes and sockets: a terminal or a file
 * has no reader waiting for EOF.
 *
 * @module subagent-otel/proxy/close-stdout
 */
import { closeSync, fstatSync, openSync } from 'node:fs';

/**
 * Closes file descriptor 1 when it is a pipe or a socket. Call it only after
 * every byte written to `process.stdout` was flushed.
 * @returns whether it was closed. Never throws.
 */
export function closeProcessStdout(): boolean {
  try {
    const info = fstatSync(1);
    if (!info.isFIFO() && !info.isSocket()) return false;
    closeSync(1);
  } catch {
    // EBADF: already closed; nothing to signal.
    return false;
  }
  try {
    const fd = openSync('/dev/null', 'w');
    // Another descriptor won the race for number 1 (opened by a worker thread at this instant): keep it, drop ours.
    if (fd !== 1) closeSync(fd);
  } catch {
    // EMFILE/ENOENT: fd 1 stays free; nothing writes to stdout any more.
  }
  return true;
}
