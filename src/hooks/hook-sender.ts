/**
 * The hook's end: hands one message line to the running watcher over its
 * Unix socket, within a bound, and says whether a watcher took it.
 *
 * @module subagent-otel/hooks/hook-sender
 */
import { createConnection } from 'node:net';

/** What happened to a message: taken by a watcher, no watcher there, or another failure (named). */
export type SendOutcome =
  { readonly kind: 'sent' } | { readonly kind: 'absent' } | { readonly kind: 'failed'; readonly why: string };

/** Errors that mean no watcher listens on the socket. */
const ABSENT = new Set(['ENOENT', 'ECONNREFUSED', 'ENOTSOCK']);

/**
 * Writes `line` (one JSON message, no newline) to the socket at `socketPath`.
 * @returns once the watcher has the bytes, none listens, or `timeoutMs`
 *   passed. Never rejects.
 */
export function sendToWatcher(socketPath: string, line: string, timeoutMs: number): Promise<SendOutcome> {
  return new Promise((done) => {
    let settled = false;
    const finish = (outcome: SendOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      done(outcome);
    };
    const socket = createConnection(socketPath);
    const timer = setTimeout(
      () => finish({ kind: 'failed', why: `the watcher did not take the message within ${timeoutMs} ms` }),
      timeoutMs,
    );
    socket.on('error', (error: NodeJS.ErrnoException) => {
      finish(ABSENT.has(error.code ?? '') ? { kind: 'absent' } : { kind: 'failed', why: error.message });
    });
    socket.on('connect', () => {
      socket.end(`${line}\n`, () => finish({ kind: 'sent' }));
    });
  });
}
