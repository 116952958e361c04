/**
 * Creating a directory and its missing parents, one level at a time.
 *
 * Node's `mkdir(path, { recursive: true })` never settles for some paths
 * (under `/proc`, where `mkdir` answers ENOENT for a parent that exists) and
 * spins a core meanwhile; this walks up to the nearest existing ancestor and
 * creates each missing level with a plain `mkdir`, so every failure is an
 * error at once.
 *
 * @module subagent-otel/telemetry/make-directory
 */
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * Creates `path` and its missing parents (like `mkdir -p`).
 * @returns resolves when `path` is a directory; rejects with the first
 *   error (ENOTDIR, EACCES, ENOENT, EEXIST for a file in the way, ...).
 */
export async function makeDirectory(path: string): Promise<void> {
  const missing: string[] = [];
  let current = resolve(path);
  for (;;) {
    try {
      const info = await stat(current);
      if (!info.isDirectory())
        throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${current}'`), { code: 'ENOTDIR' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      const parent = dirname(current);
      missing.push(current);
      if (parent === current) break;
      current = parent;
    }
  }
  for (const dir of missing.reverse()) {
    try {
      await mkdir(dir);
    } catch (error) {
      // Created meanwhile by another writer (several proxies sharing an output directory): fine.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !(await stat(dir)).isDirectory()) throw error;
    }
  }
}
