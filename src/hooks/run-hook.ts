/**
 * `subagent-otel hook <agent>`: what the agents run at `SubagentStop`,
 * `Stop` and `SessionEnd` (installed by `setup`). Reads the payload on
 * stdin, keeps the fields that name the run's files, hands that message to
 * the running watcher over its socket, or, when none runs, starts one in
 * the background with the message; then exits 0 at once, printing nothing.
 * A hook must never make the agent wait or fail: every problem goes to the
 * watcher's log, and the exit code is always 0. Loaded directly by `cli/bin`
 * (not through `cli/main`), so the hook process loads as little as possible.
 *
 * @module subagent-otel/hooks/run-hook
 */
import { spawn } from 'node:child_process';
import { appendFileSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { endedTranscript, hookMessageOf } from './hook-message.js';
import { HOOK_EVENT_VARIABLE, hookFiles, isHookedAgent } from './locations.js';
import { ensurePrivateFolder } from './private-folder.js';
import { boundLog } from './log-bound.js';
import { sendToWatcher } from './hook-sender.js';
import { errorText } from '../wire/error-text.js';

/** The most of the payload read (a payload is a few KiB, more with a long last assistant message; the rest is dropped unread). */
const MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;
/** The longest the hook waits for a running watcher to take its message. */
const SEND_TIMEOUT_MS = 250;

/** What the hook reads and where it starts a watcher from. */
export interface HookIo {
  readonly stdin: NodeJS.ReadableStream;
  readonly env: NodeJS.ProcessEnv;
  /** The script of this command (`process.argv[1]`): the watcher is started with it. */
  readonly script: string;
}

/** Reads `stream` to its end, keeping at most `max` bytes. Never rejects. */
function readBounded(stream: NodeJS.ReadableStream, max: number): Promise<string> {
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      if (size >= max) return;
      const kept = chunk.subarray(0, max - size);
      chunks.push(kept);
      size += kept.length;
    });
    stream.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', () => done(Buffer.concat(chunks).toString('utf8')));
  });
}

/**
 * The environment the watcher is started with: where the user's files are
 * and how text is encoded, nothing of the agent's own (its keys, its
 * session): the watcher outlives the session that started it, and takes
 * its telemetry settings from `setup`'s file.
 */
export function watcherEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (
      /^(PATH|HOME|USER|LOGNAME|LANG|TZ|TMPDIR|SUBAGENT_OTEL_CODE_CACHE)$/.test(name) ||
      name.startsWith('LC_') ||
      name.startsWith('XDG_')
    )
      kept[name] = value;
  }
  return kept;
}

/** Appends one line to the watcher's log; a log that cannot be written is let go (a hook never fails). */
function log(path: string, line: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    appendFileSync(path, `${new Date().toISOString()} hook: ${line}\n`, { mode: 0o600 });
  } catch {
    // Nowhere else to say it: the agent must not see a failing hook.
  }
}

/**
 * Runs the hook for `args` (`[agent]`). @returns the exit code: always 0.
 * Never rejects.
 */
export async function runHook(args: readonly string[], io: HookIo): Promise<number> {
  const at = Date.now();
  const files = hookFiles(io.env);
  const agent = args[0] ?? '';
  const payload = await readBounded(io.stdin, MAX_PAYLOAD_BYTES);
  if (!isHookedAgent(agent)) {
    log(files.log, `unknown agent '${agent}' (expected claude-code or codex); run 'subagent-otel setup <agent>' again`);
    return 0;
  }
  const message = hookMessageOf(agent, payload, at);
  if (typeof message === 'string') {
    log(files.log, `${agent}: ${message}`);
    return 0;
  }
  // Events that end no run (an agent that fires a hook we did not ask for) need no watcher.
  if (endedTranscript(message) === undefined) return 0;
  const line = JSON.stringify(message);
  const sent = await sendToWatcher(files.socket, line, SEND_TIMEOUT_MS);
  if (sent.kind === 'sent') return 0;
  if (sent.kind === 'failed') {
    log(files.log, `${agent} ${message.event}: ${sent.why}`);
    return 0;
  }
  const problem = await ensurePrivateFolder(files.daemonDir);
  if (problem !== undefined) {
    log(files.log, problem);
    return 0;
  }
  const unbounded = boundLog(files.log);
  if (unbounded !== undefined) log(files.log, unbounded);
  try {
    const out = openSync(files.log, 'a', 0o600);
    const child = spawn(process.execPath, [io.script, 'watch', '--daemon'], {
      detached: true,
      stdio: ['ignore', out, out],
      cwd: files.daemonDir,
      env: { ...watcherEnvironment(io.env), [HOOK_EVENT_VARIABLE]: line },
    });
    child.on('error', (error) => log(files.log, `cannot start the watcher: ${error.message}`));
    child.unref();
    closeSync(out);
  } catch (error) {
    log(files.log, `cannot start the watcher: ${errorText(error)}`);
  }
  return 0;
}
