/**
 * Loads the proxy's observation (`proxy-observation.ts`) after the agent was
 * spawned, from V8's code cache when it can (decision 0040). The bundled CLI
 * ships the observation twice: as ES module chunks, and as one CommonJS file
 * (`dist/cli/chunks/observation-<hash>.cjs`) that `code-cache.ts` runs with
 * a code cache kept per user. Which one is used:
 * - the CommonJS file with its cache, when the bundle names it (the build
 *   defines `SUBAGENT_OTEL_OBSERVATION_BUNDLE`), `SUBAGENT_OTEL_CODE_CACHE`
 *   is not `off` and the cache directory is safe to use;
 * - else the ES module chunks (also when run from the tsc output or the
 *   sources, and when loading the CommonJS file failed).
 * Either way the same code observes, and nothing is printed: what happened
 * is a line for the diagnostics log (`SUBAGENT_OTEL_LOG_FILE`).
 *
 * @module subagent-otel/cli/commands/observation-loader
 */
import { lstatSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SETTINGS } from '../../telemetry/config.js';

type ObservationModule = typeof import('./proxy-observation.js');

/** File name of the CommonJS observation bundle beside this chunk; defined by `scripts/bundle-cli.mjs`, absent in the tsc output. */
declare const SUBAGENT_OTEL_OBSERVATION_BUNDLE: string | undefined;

/** The observation module and what became of its code cache. */
export interface LoadedObservation {
  readonly module: ObservationModule;
  /** One line for the diagnostics log: where the module came from and what became of the cache. */
  readonly note: string;
  /** Whether a code cache is to be written (`persist`): it was missing or refused. */
  readonly pending: boolean;
  /**
   * Writes the code cache when it is `pending`, of everything compiled so
   * far. V8 stamps it with its flags: call it before any V8 flag is set, so
   * the next start, which loads it before setting any, accepts it.
   * @returns a line for the log, or `undefined` when there is nothing to say. Never throws.
   */
  persist(): string | undefined;
}

/**
 * The code cache directory from `SUBAGENT_OTEL_CODE_CACHE`, or `false` when
 * it is off. Default: `$XDG_CACHE_HOME/subagent-otel` when that is an
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
 * Whether `dir` may hold code caches of this process: missing (it will be
 * made private), or a real directory owned by this user that nobody else can
 * write to. A code cache is code: one that another user could have written
 * must never be run. @returns `undefined` when it may, else why not.
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

const fromChunks = async (note: string): Promise<LoadedObservation> => ({ module: await import('./proxy-observation.js'), note, pending: false, persist: () => undefined });

/**
 * Loads the observation. Never fails because of the cache; rejects only
 * when the observation's own ES module chunks cannot be loaded.
 * @param beforeCodeCacheLoad called just before the observation is loaded
 *   from the code cache, not before the ES module chunks: the moment to
 *   clear V8 flags, which would make V8 refuse the cache.
 */
export async function loadObservation(env: NodeJS.ProcessEnv, beforeCodeCacheLoad?: () => void): Promise<LoadedObservation> {
  const bundleName = typeof SUBAGENT_OTEL_OBSERVATION_BUNDLE === 'string' ? SUBAGENT_OTEL_OBSERVATION_BUNDLE : undefined;
  if (bundleName === undefined) return fromChunks('code cache: not used (not the bundled CLI)');
  const dir = codeCacheDir(env);
  if (dir === false) return fromChunks(`code cache: off (${SETTINGS.codeCache.env})`);
  const unsafe = unsafeCacheDir(dir);
  if (unsafe !== undefined) return fromChunks(`code cache: not used: ${unsafe}`);
  const bundle = join(dirname(fileURLToPath(import.meta.url)), bundleName);
  let cacheFile = '';
  let loaded;
  beforeCodeCacheLoad?.();
  try {
    // Imported only now: the built-in modules it needs (`node:crypto`, `node:vm`) compile from Node's own
    // code cache only when no V8 flag is set (decision 0040).
    const { cacheFileFor, loadWithCodeCache } = await import('../code-cache.js');
    cacheFile = cacheFileFor(dir, bundleName, [...process.execArgv, env.NODE_OPTIONS ?? '']);
    loaded = loadWithCodeCache<ObservationModule>(bundle, cacheFile);
  } catch (err) {
    return fromChunks(`code cache: not used: loading ${bundle} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  const { status, detail } = loaded;
  return {
    module: loaded.exports,
    note: `code cache: ${status} ${cacheFile}${detail !== undefined ? ` (${detail})` : ''}`,
    pending: status !== 'accepted',
    persist: () => (status === 'accepted' ? undefined : loaded.persist()),
  };
}
