/**
 * The watcher's end of the hooks: a Unix socket in its private folder that
 * takes newline-separated {@link HookMessage} lines, validates each, and
 * hands the valid ones on. Bounded: a connection may send at most 64 KiB.
 *
 * @module subagent-otel/hooks/hook-listener
 */
import { chmod, unlink } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { errorText } from '../wire/error-text.js';
import type { HookMessage } from './hook-message.js';
import { parseHookMessage } from './hook-message-schema.js';

/** The most one connection may send (a message is a few hundred bytes). */
const MAX_CONNECTION_BYTES = 64 * 1024;

/** A listening socket. */
export interface HookListener {
  /** Stops listening and removes the socket file. Never rejects. */
  close(): Promise<void>;
}

/**
 * Listens on `socketPath` (a stale socket file there is replaced: call it
 * holding the watcher lock, in a private folder).
 * @param onMessage hears each valid message; must not throw.
 * @param onProblem hears each refused line or connection, in a sentence; must not throw.
 * @throws when the socket cannot be made (path too long, folder missing).
 */
export async function listenForHooks(
  socketPath: string,
  onMessage: (message: HookMessage) => void,
  onProblem: (problem: string) => void,
): Promise<HookListener> {
  await unlink(socketPath).catch(() => undefined);
  const server: Server = createServer((connection) => {
    let buffered = '';
    let received = 0;
    connection.setEncoding('utf8');
    const take = (line: string): void => {
      if (line.trim() === '') return;
      const message = parseHookMessage(line);
      if (typeof message === 'string') onProblem(`refused a line on the hooks' socket: ${message}`);
      else onMessage(message);
    };
    connection.on('data', (chunk: string) => {
      received += Buffer.byteLength(chunk);
      if (received > MAX_CONNECTION_BYTES) {
        onProblem(`refused a connection on the hooks' socket: more than ${MAX_CONNECTION_BYTES} bytes`);
        buffered = '';
        connection.destroy();
        return;
      }
      buffered += chunk;
      let newline = buffered.indexOf('\n');
      while (newline !== -1) {
        take(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf('\n');
      }
    });
    connection.on('end', () => {
      take(buffered);
      buffered = '';
    });
    connection.on('error', (error) => onProblem(`a hook's connection failed: ${errorText(error)}`));
  });
  await new Promise<void>((listening, failed) => {
    server.once('error', failed);
    server.listen(socketPath, () => {
      server.off('error', failed);
      listening();
    });
  });
  server.on('error', (error) => onProblem(`the hooks' socket failed: ${errorText(error)}`));
  await chmod(socketPath, 0o600).catch(() => undefined);
  return {
    close: () =>
      new Promise<void>((closed) => {
        server.close(() => closed());
        // close() waits for open connections: a hook holds one for a moment only.
      }).then(() => unlink(socketPath).catch(() => undefined)),
  };
}
