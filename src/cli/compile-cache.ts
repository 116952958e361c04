/**
 * Turns on Node's compile cache (`module.enableCompileCache`) for the CLI,
 * in the directory `SUBAGENT_OTEL_CODE_CACHE` names (default
 * `$XDG_CACHE_HOME/subagent-otel`, else `~/.cache/subagent-otel`; `off` for
 * none): later starts of the command skip parsing and compiling the modules
 * an earlier start compiled (decision 0061). Owns the directory policy; Node
 * owns the cache's format, its checks and its writing.
 *
 * Imports only the configuration table (which imports nothing at run time),
 * so it can run before the CLI loads.
 *
 * @module subagent-otel/cli/compile-cache
 */
import { lstatSync, mkdirSync } from 'node:fs';
import { enableCompileCache, flushCompileCache } from 'node:module';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { SETTINGS } from '../telemetry/config.js';

/**
 * The compile cache directory from `SUBAGENT_OTEL_CODE_CACHE`, or `false`
 * when it is off. Default: `$XDG_CACHE_HOME/subagent-otel` when that is an
 * absolute path, else `<home>/.cache/subagent-otel`; off when there is no
 * home directory. Pure but for reading the home directory.
 */
export function codeCacheDir(env: NodeJS.ProcessEnv): string | false {
  const raw = env[SETTINGS.codeCache.env];
  const setting = raw === undefined ? undefined : SETTINGS.codeCache.parse(raw);
  if (setting === false) return false;
  if (setting !== undefined) return resolve(setting);
  const xdg = env.XDG_CACHE_HOME;
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'subagent-otel');
  try {
    const home = homedir();
    return home === '' ? false : join(home, '.cache', 'subagent-otel');
  } catch {
    // No home directory (a user without a passwd entry): nowhere private to keep a cache.
    return false;
  }
}

/**
 * Whether `dir` may hold this process's compile cache: missing (it will be
 * made private), or a real directory owned by this user that nobody else can
 * write to. A compile cache is code: one that another user could have
 * written must never be run. @returns `undefined` when it may, else why not.
 */
export function unsafeCacheDir(dir: string): string | undefined {
  let stat;
  try {
    stat = lstatSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? undefined : `cache directory ${dir} unusable (${code ?? String(err)})`;
  }
  if (!stat.isDirectory()) return `cache directory ${dir} is not a directory`;
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) return `cache directory ${dir} belongs to another user`;
  if ((stat.mode & 0o022) !== 0) return `cache directory ${dir} is writable by others`;
  return undefined;
}

let note = 'compile cache: not enabled (not started through the bin)';

/**
 * Enables Node's compile cache for every module loaded from now on, in
 * {@link codeCacheDir}'s directory when {@link unsafeCacheDir} allows it
 * (made with mode 0700 when missing). Node's own `NODE_COMPILE_CACHE`, when
 * set, has already enabled it and wins. Never throws: what happened is a
 * line for the diagnostics log ({@link compileCacheNote}).
 */
export function enableCompileCacheFor(env: NodeJS.ProcessEnv): void {
  const dir = codeCacheDir(env);
  if (dir === false) {
    note = `compile cache: off (${SETTINGS.codeCache.env})`;
    return;
  }
  const unsafe = unsafeCacheDir(dir);
  if (unsafe !== undefined) {
    note = `compile cache: not used: ${unsafe}`;
    return;
  }
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const result = enableCompileCache(dir);
    note = `compile cache: ${result.directory ?? dir}${result.message !== undefined ? ` (${result.message})` : ''}`;
  } catch (err) {
    // A read-only home, a full disk: the command runs the same, compiled from source.
    // The error's text inline, not wire/error-text: the CLI's start path loads nothing of wire/ (test/cli/start-path.test.ts).
    note = `compile cache: not used: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** What {@link enableCompileCacheFor} did, in words, for the diagnostics log. */
export function compileCacheNote(): string {
  return note;
}

/**
 * Writes what was compiled so far to the compile cache now rather than at
 * exit. Call it before setting any V8 flag: V8 stamps a code cache with its
 * flags, and a cache written after a flag changed is refused by the next
 * start, which reads it before setting any. Never throws.
 */
export function flushCompileCacheNow(): void {
  try {
    flushCompileCache();
  } catch {
    // Nothing to flush to (the cache is off) or the directory went away: the next start compiles from source.
  }
}
