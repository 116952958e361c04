/**
 * Spawning and reaping the agent processes that backends drive over stdio:
 * a scrubbed environment, an exit promise that never rejects, and a
 * teardown that reaches quiescence in bounded steps (a graceful hook, stdin
 * EOF, SIGTERM, SIGKILL). Shared by every backend (ACP, SDK runtime); knows
 * no protocol and never reads or writes the child's stdio itself.
 *
 * @module subagent-otel/backend/child-process
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { withParentDeathSignal } from './parent-death.js';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { errorMessage } from '../wire/error-text.js';

/**
 * Names copied from the parent's environment into a child's, exactly.
 * Nothing else is inherited: credentials, API keys, OpenTelemetry settings
 * and proxy settings stay with the parent unless passed in `env`.
 */
export const INHERITED_ENV_NAMES: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TERM',
  'TZ',
  'TMPDIR',
  'TMP',
  'TEMP',
  // Windows needs these to start most programs.
  'SYSTEMROOT',
  'COMSPEC',
  'PATHEXT',
  'WINDIR',
];

/** Name prefixes copied from the parent's environment: locale (`LC_ALL`, `LC_CTYPE`, ...) and Node.js settings (`NODE_OPTIONS`, `NODE_EXTRA_CA_CERTS`, ...). */
export const INHERITED_ENV_PREFIXES: readonly string[] = ['LC_', 'NODE_'];

/** Inherited names are dropped anyway when they look like a secret (e.g. `NODE_AUTH_TOKEN`). */
const SECRET_NAME = /TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|API_?KEY|PRIVATE/i;

/**
 * Builds a child's environment: the allow-listed names of `parent`
 * ({@link INHERITED_ENV_NAMES}, {@link INHERITED_ENV_PREFIXES}, minus names
 * that look like secrets), then `additions` on top (a value of `undefined`
 * removes the name). @returns a new object; never mutates its inputs.
 */
export function scrubbedEnv(
  parent: NodeJS.ProcessEnv,
  additions: Readonly<Record<string, string | undefined>> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined || SECRET_NAME.test(name)) continue;
    const upper = name.toUpperCase();
    if (INHERITED_ENV_NAMES.includes(upper) || INHERITED_ENV_PREFIXES.some((prefix) => upper.startsWith(prefix)))
      env[name] = value;
  }
  for (const [name, value] of Object.entries(additions)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** How a child ended. */
export interface ExitInfo {
  /** Exit code, `null` when a signal ended it or it never ran. */
  readonly code: number | null;
  /** Name of the signal that ended it (`SIGKILL`), else `null`. */
  readonly signal: string | null;
  /** Why it could not be started or reaped (e.g. `spawn nope ENOENT`); absent after a normal exit. */
  readonly error?: string;
}

/** Options of {@link spawnChild}. */
export interface SpawnChildOptions {
  /** Program to run (looked up in the scrubbed `PATH` when not a path). */
  readonly command: string;
  readonly args?: readonly string[];
  /** Added to the scrubbed environment (see {@link scrubbedEnv}); `undefined` removes a name. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Working directory. Default: the parent's. */
  readonly cwd?: string;
  /** The child's stderr: discarded (`ignore`, the default), shared with the parent (`inherit`), or handed over chunk by chunk. */
  readonly stderr?: 'ignore' | 'inherit' | ((chunk: Buffer) => void);
  /**
   * Start the child in a process group of its own, so teardown signals reach
   * its descendants too. Default `true` on POSIX (ignored on Windows).
   */
  readonly processGroup?: boolean;
}

/** Bounds of the teardown steps, in milliseconds. */
export interface DisposeOptions {
  /** Asks the child to stop in its own protocol (e.g. sends `shutdown`). Runs first; a rejection counts as done. */
  readonly graceful?: () => Promise<void>;
  /** How long to wait for an exit after `graceful`. Default 2000. */
  readonly gracefulMs?: number;
  /** How long to wait for an exit after closing stdin. Default 1000. */
  readonly eofMs?: number;
  /** How long to wait for an exit after SIGTERM. Default 1000. */
  readonly termMs?: number;
  /** How long to wait for an exit after SIGKILL before giving up. Default 2000. */
  readonly killMs?: number;
}

/** A spawned child. */
export interface ChildHandle {
  /** Process id; `undefined` when the spawn failed. */
  readonly pid: number | undefined;
  /** The child's stdin. Write errors (EPIPE after it exits) are absorbed; watch `exited` instead. */
  readonly stdin: Writable;
  /** The child's stdout. Read errors are absorbed; the stream then ends. */
  readonly stdout: Readable;
  /** Resolves once the child has exited (or could not be started). Never rejects. */
  readonly exited: Promise<ExitInfo>;
  /** The exit, once known; `undefined` while the child runs. */
  readonly exitInfo: ExitInfo | undefined;
  /**
   * Brings the child down in bounded steps, each skipped once it has exited:
   * `graceful` (bounded by `gracefulMs`), then stdin EOF (`eofMs`), then
   * SIGTERM (`termMs`), then SIGKILL (`killMs`); signals go to its process
   * group when it has one. Idempotent: every call returns the first call's
   * promise (later options are ignored).
   * @returns the exit; when even SIGKILL did not reap it in time, an exit
   *   with `error` saying so. Never rejects.
   */
  dispose(options?: DisposeOptions): Promise<ExitInfo>;
}

/**
 * Spawns `command` with a scrubbed environment and piped stdin/stdout.
 *
 * @returns a handle at once. A spawn failure (missing program, bad cwd) does
 *   not throw: `exited` resolves with `code: null` and `error` describing it,
 *   and the handle's streams are empty.
 */
export function spawnChild(options: SpawnChildOptions): ChildHandle {
  const stderrOption = options.stderr ?? 'ignore';
  const isGroup = (options.processGroup ?? true) && process.platform !== 'win32';
  let child: ChildProcess;
  let exitInfo: ExitInfo | undefined;
  let resolveExited: (info: ExitInfo) => void = () => undefined;
  const exited = new Promise<ExitInfo>((resolve) => {
    resolveExited = (info) => {
      if (exitInfo !== undefined) return;
      exitInfo = info;
      resolve(info);
    };
  });
  try {
    const env = scrubbedEnv(process.env, options.env);
    // On Linux the child gets a parent-death signal: it does not outlive a killed parent.
    const target = withParentDeathSignal(options.command, options.args ?? [], env, options.cwd);
    child = spawn(target.command, [...target.args], {
      cwd: options.cwd,
      env,
      stdio: [
        'pipe',
        'pipe',
        stderrOption === 'inherit' ? 'inherit' : typeof stderrOption === 'function' ? 'pipe' : 'ignore',
      ],
      detached: isGroup,
      windowsHide: true,
    });
  } catch (error) {
    // spawn throws synchronously only for invalid arguments (bad types, NUL bytes); report it as a failed start.
    const info: ExitInfo = { code: null, signal: null, error: `spawn ${options.command}: ${errorMessage(error)}` };
    resolveExited(info);
    return failedHandle(info);
  }
  child.on('error', (error) => {
    // 'error' means the spawn failed, or a kill could not be delivered; only the first case ends the child.
    if (child.pid === undefined) resolveExited({ code: null, signal: null, error: errorMessage(error) });
  });
  child.on('exit', (code, signal) => resolveExited({ code, signal }));
  const stdin = child.stdin as Writable;
  const stdout = child.stdout as Readable;
  // EPIPE/ECONNRESET once the child is gone: the exit promise reports the end, nothing else should.
  stdin.on('error', () => undefined);
  stdout.on('error', () => undefined);
  if (typeof stderrOption === 'function' && child.stderr !== null) {
    child.stderr.on('data', (chunk: Buffer) => stderrOption(chunk));
    child.stderr.on('error', () => undefined); // same as above: the child went away
  }

  const signal = (name: NodeJS.Signals): void => {
    if (exitInfo !== undefined || child.pid === undefined) return;
    try {
      if (isGroup) process.kill(-child.pid, name);
      else child.kill(name);
    } catch {
      // ESRCH: the group is already gone (it exited between the check and the kill); fall back to the pid.
      try {
        child.kill(name);
      } catch {
        // ESRCH again: nothing left to signal; `exited` settles from the exit event.
      }
    }
  };

  let disposing: Promise<ExitInfo> | undefined;
  const dispose = (opts: DisposeOptions = {}): Promise<ExitInfo> => {
    disposing ??= (async () => {
      if (exitInfo === undefined && opts.graceful !== undefined) {
        await gracefulStep(opts.graceful, exited, opts.gracefulMs ?? 2000);
      }
      if (exitInfo === undefined) {
        stdin.end();
        await waitFor(exited, opts.eofMs ?? 1000);
      }
      if (exitInfo === undefined) {
        signal('SIGTERM');
        await waitFor(exited, opts.termMs ?? 1000);
      }
      if (exitInfo === undefined) {
        signal('SIGKILL');
        await waitFor(exited, opts.killMs ?? 2000);
      }
      if (exitInfo !== undefined) return exitInfo;
      return { code: null, signal: null, error: `process ${String(child.pid)} did not exit after SIGKILL` };
    })();
    return disposing;
  };

  return {
    pid: child.pid,
    stdin,
    stdout,
    exited,
    get exitInfo() {
      return exitInfo;
    },
    dispose,
  };
}

/** Resolves when `done` settles or after `ms`, whichever comes first. */
async function waitFor(done: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([done, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs the graceful hook, then waits for the exit; the whole step is bounded
 * by `ms`. A hook that throws or rejects ends the step at once (the child
 * cannot be asked; the next step takes over).
 */
async function gracefulStep(hook: () => Promise<void>, exited: Promise<unknown>, ms: number): Promise<void> {
  const asked = Promise.resolve()
    .then(hook)
    .then(
      () => exited,
      () => undefined,
    );
  await waitFor(Promise.race([exited, asked]), ms);
}

/** The handle of a child that could not be spawned at all: empty streams, already exited. */
function failedHandle(info: ExitInfo): ChildHandle {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  stdout.end();
  const exited = Promise.resolve(info);
  return { pid: undefined, stdin, stdout, exited, exitInfo: info, dispose: () => exited };
}
