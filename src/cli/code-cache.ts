/**
 * Runs a CommonJS bundle through `vm.Script` with a V8 code cache kept in a
 * file, so that a process that loads the same bundle again skips parsing and
 * compiling it: V8 deserializes the bytecode of every function the earlier
 * process had compiled, including those compiled lazily as they were first
 * called (the cache is made after the run, `persist`). Node 20 has no code
 * cache for ES modules, and Node 22's compile cache keeps only what is
 * compiled before a module runs (decision 0040).
 *
 * Owns the cache file's format and its safety; nothing else. The file is
 * the magic `SOTCC001`, the SHA-256 of the payload, then V8's payload. A file
 * that is missing, short, or whose digest does not match is ignored (V8
 * checks its version, its flags and the source's length, but not the bytes
 * of the payload, in release builds); a payload V8 rejects is replaced once
 * the run is over. Files are written to a temporary name and renamed, so
 * concurrent processes never see a partial file. Never throws because of the
 * cache: every failure is an outcome in words, for the diagnostics log.
 *
 * @module subagent-otel/cli/code-cache
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';

/** First bytes of every cache file of this format. */
const MAGIC = Buffer.from('SOTCC001', 'latin1');
const DIGEST_BYTES = 32;
const HEADER_BYTES = MAGIC.length + DIGEST_BYTES;

/** What became of the cache when the bundle was loaded. */
export type CodeCacheStatus =
  /** V8 used the cache: nothing was parsed or compiled that the cache held. */
  | 'accepted'
  /** V8 refused the cache (another V8, other flags, another source): compiled from source; `persist` replaces it. */
  | 'rejected'
  /** No usable file (missing, short, wrong magic or digest, unreadable): compiled from source; `persist` writes one. */
  | 'absent';

/** A loaded bundle and what became of its cache. */
export interface CachedBundle<T> {
  /** The bundle's `module.exports`. */
  readonly exports: T;
  readonly status: CodeCacheStatus;
  /** Why the cache was `absent` when a file was there but unusable; for the diagnostics log. */
  readonly detail?: string;
  /**
   * Writes the code cache of everything compiled so far, unless the cache
   * was `accepted` (then nothing changed that is worth the write). Call it
   * once the work is done, so that lazily compiled functions are in it.
   * Never throws. @returns what happened, in words.
   */
  persist(): string;
}

/** The CommonJS wrapper Node puts around a module, so the bundle sees `require`, `module` and `exports`. */
const WRAP_START = '(function (exports, require, module, __filename, __dirname) { ';
const WRAP_END = '\n})';

function sha256(data: Uint8Array): Buffer {
  return createHash('sha256').update(data).digest();
}

/** The payload of a cache file, or why there is none. */
function readCache(file: string): { data: Buffer } | { why: string } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { why: code === 'ENOENT' ? 'no cache file yet' : `cache file unreadable (${code ?? String(err)})` };
  }
  if (bytes.length <= HEADER_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return { why: 'cache file is not a code cache of this format' };
  const data = bytes.subarray(HEADER_BYTES);
  if (!sha256(data).equals(bytes.subarray(MAGIC.length, HEADER_BYTES))) return { why: 'cache file is damaged (digest mismatch)' };
  return { data };
}

/**
 * Writes `data` as the cache file at `file`: the directory is made (mode
 * 0700) when missing, the bytes go to a temporary file beside it, which is
 * then renamed over `file`. @returns what happened, in words. Never throws.
 */
export function writeCacheFile(file: string, data: Uint8Array): string {
  const temporary = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(temporary, Buffer.concat([MAGIC, sha256(data), data]), { mode: 0o600 });
    renameSync(temporary, file);
    return `code cache written (${data.length} bytes) to ${file}`;
  } catch (err) {
    rmSync(temporary, { force: true });
    return `code cache not written to ${file}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/**
 * Loads the CommonJS bundle `bundle` with the code cache in `cacheFile`.
 * The bundle is run as Node would run a CommonJS module (its own `require`,
 * `module`, `exports`, `__filename`, `__dirname`). It must not use a dynamic
 * `import()`: Node 20 loses a script's dynamic-import callback when the
 * script comes from a code cache (the build turns them into `require`).
 * Throws only what loading the bundle itself throws (a
 * missing bundle, an error while it runs), never because of the cache.
 * @param cacheFile the cache's path; name it after everything V8 checks
 *   (Node version, V8 flags) and the bundle's content, so processes that
 *   differ use different files instead of replacing each other's.
 */
export function loadWithCodeCache<T>(bundle: string, cacheFile: string): CachedBundle<T> {
  const source = readFileSync(bundle, 'utf8');
  const cached = readCache(cacheFile);
  const script = new Script(WRAP_START + source + WRAP_END, {
    filename: bundle,
    ...('data' in cached ? { cachedData: cached.data } : {}),
  });
  const status: CodeCacheStatus = 'data' in cached ? (script.cachedDataRejected === true ? 'rejected' : 'accepted') : 'absent';
  const wrapper = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: { exports: unknown }, filename: string, dirname: string) => void;
  const module = { exports: {} as unknown };
  wrapper.call(module.exports, module.exports, createRequire(bundle), module, bundle, dirname(bundle));
  let persisted = false;
  return {
    exports: module.exports as T,
    status,
    ...('why' in cached ? { detail: cached.why } : {}),
    persist() {
      if (status === 'accepted') return 'code cache unchanged';
      if (persisted) return 'code cache already written';
      persisted = true;
      let data: Buffer;
      try {
        data = script.createCachedData();
      } catch (err) {
        return `code cache not made: ${err instanceof Error ? err.message : String(err)}`;
      }
      return writeCacheFile(cacheFile, data);
    },
  };
}

/** The name of a cache file for `bundle` under `dir`: the bundle's name (which carries its content hash), Node's version and architecture, and a hash of the V8 flags this process was started with. */
export function cacheFileFor(dir: string, bundleName: string, flags: readonly string[]): string {
  const flagHash = createHash('sha256').update(flags.join('\0')).digest('hex').slice(0, 12);
  return join(dir, `${bundleName}-${process.version}-${process.arch}-${flagHash}.v8cache`);
}
