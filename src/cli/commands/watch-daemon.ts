/**
 * `subagent-otel watch --daemon`: the watcher the agents' hooks start
 * (decision 0123). One per user (a lock in its private folder); the
 * folders, since when, and the telemetry settings come from the file
 * `setup` wrote; it hears the hooks on a Unix socket in that folder and
 * closes each notified run as soon as its files settle, through the same
 * watch as `watch <dir...>`. A second one started while one runs hands its
 * hook's message to the first and exits. Owns that start and the socket's
 * lifetime; the watch itself is `commands/watch`'s.
 *
 * @module subagent-otel/cli/commands/watch-daemon
 */
import { join } from 'node:path';
import { endedTranscript, type HookMessage } from '../../hooks/hook-message.js';
import { parseHookMessage } from '../../hooks/hook-message-schema.js';
import { listenForHooks } from '../../hooks/hook-listener.js';
import { sendToWatcher } from '../../hooks/hook-sender.js';
import { loadHooksConfig } from '../../hooks/hooks-config.js';
import { isFileAt, keepLogBounded } from '../../hooks/log-bound.js';
import { HOOK_EVENT_VARIABLE, hookFiles } from '../../hooks/locations.js';
import { ensurePrivateFolder } from '../../hooks/private-folder.js';
import { takeWatcherLock } from '../../hooks/watcher-lock.js';
import { EndNotices } from '../../watch/end-notices.js';
import { errorText } from '../../wire/error-text.js';
import { runWatch, type WatchCommand, type WatchIo } from './watch.js';

/** How long a second watcher tries to hand its hook's message to the first (which may still be starting). */
const HANDOVER_MS = 10_000;

/**
 * Runs the daemon until `io.signal` aborts.
 * @returns the watch's exit code; 0 when another watcher runs (the message
 *   handed over); 2 when there is no setup, its file is invalid, or the
 *   private folder is not private. Never rejects for bad input.
 */
export async function runWatchDaemon(cmd: WatchCommand, io: WatchIo): Promise<number> {
  const say = (line: string): void => {
    io.stderr.write(`${new Date().toISOString()} subagent-otel watch --daemon: ${line}\n`);
  };
  const files = hookFiles(io.env);
  const initial = io.env[HOOK_EVENT_VARIABLE];
  const unsafe = await ensurePrivateFolder(files.daemonDir);
  if (unsafe !== undefined) {
    say(unsafe);
    return 2;
  }
  let lock: Awaited<ReturnType<typeof takeWatcherLock>>;
  try {
    lock = await takeWatcherLock(files.lock);
  } catch (error) {
    say(`cannot take the lock ${files.lock}: ${errorText(error)}`);
    return 2;
  }
  if (!lock.ok) {
    if (initial !== undefined) await handOver(files.socket, initial, say);
    return 0;
  }
  // Started by a hook, the daemon writes its log through its standard output: kept bounded while it runs.
  const stopBounding = isFileAt(1, files.log) ? keepLogBounded(files.log, say) : undefined;
  try {
    const loaded = await loadHooksConfig(files.config);
    if (!loaded.ok || loaded.config === undefined) {
      say(
        loaded.ok
          ? `no setup in ${files.config}: run 'subagent-otel setup claude-code' (or codex) first`
          : loaded.message,
      );
      return 2;
    }
    const config = loaded.config;
    const dirs = Object.values(config.agents).flatMap((agent) => (agent !== undefined ? [agent.folder] : []));
    if (dirs.length === 0) {
      say(`no agent is set up in ${files.config} (all removed): nothing to watch`);
      return 0;
    }
    const notices = new EndNotices();
    let outside = 0;
    const onMessage = (message: HookMessage): void => {
      const path = endedTranscript(message);
      if (path === undefined) return;
      if (!dirs.some((dir) => path.startsWith(`${dir}/`))) {
        outside += 1;
        say(
          `${message.agent} ${message.event}: ${path} is outside the folders set up (${dirs.join(', ')}); its run closes by the idle rule (${outside} such hook(s))`,
        );
      }
      // From when the watcher heard it, not when the hook started: the agent writes the turn's closing lines
      // after its hook returns, and on a busy machine the hook's own start can take seconds.
      notices.add(path, Date.now());
    };
    const listener = await listenForHooks(files.socket, onMessage, say).catch((error: unknown) => {
      say(`cannot listen on ${files.socket}: ${errorText(error)}`);
      return undefined;
    });
    if (listener === undefined) return 2;
    if (initial !== undefined) {
      const message = parseHookMessage(initial);
      if (typeof message === 'string') say(`the starting hook's message was refused: ${message}`);
      else onMessage(message);
    }
    const { [HOOK_EVENT_VARIABLE]: _started, ...own } = io.env;
    const env = { ...own, ...config.env };
    say(`started (process ${process.pid}) for ${dirs.join(', ')}; hooks on ${files.socket}`);
    const code = await runWatch(
      {
        ...cmd,
        dirs,
        checkpoint: cmd.checkpoint ?? join(files.daemonDir, 'checkpoint.json'),
        ...(config.out !== undefined ? { out: config.out } : {}),
        ...(config.noContent === true ? { captureContent: false as const } : {}),
      },
      { ...io, env },
      { notices, since: config.since, allowMissing: true },
    );
    await listener.close();
    say(`stopped (exit code ${code})`);
    return code;
  } finally {
    stopBounding?.();
    await lock.release();
  }
}

/** Hands `line` to the watcher that holds the lock, retrying while it starts. */
async function handOver(socket: string, line: string, say: (line: string) => void): Promise<void> {
  const deadline = Date.now() + HANDOVER_MS;
  for (;;) {
    const sent = await sendToWatcher(socket, line, 1000);
    if (sent.kind === 'sent') return;
    if (Date.now() > deadline) {
      say(
        `another watcher holds the lock but did not take a hook's message within ${HANDOVER_MS / 1000} s; its run closes by the idle rule`,
      );
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
