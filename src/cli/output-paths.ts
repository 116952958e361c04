/**
 * Checks that an output path can be written before a command starts its
 * work, so a mistyped `--out` or `--capture` fails at once with a clear
 * reason instead of losing everything at the end (or spinning on an
 * unwritable directory). Used by `replay` and `demo` (a failure is a usage
 * error, exit 2) and available to the proxy (which keeps forwarding and
 * warns instead).
 *
 * @module subagent-otel/cli/output-paths
 */
import { constants } from 'node:fs';
import { access, open, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { makeDirectory } from '../telemetry/make-directory.js';
import { errorMessage } from '../wire/error-text.js';

/**
 * Makes sure `dir` is a directory this process can create files in,
 * creating it (and its parents) when missing.
 *
 * @returns `undefined` when it is, else why not, in words (e.g. `it is a
 *   regular file, not a directory`, `cannot create it: EACCES ...`). Never rejects.
 */
export async function checkOutputDirectory(dir: string): Promise<string | undefined> {
  try {
    const info = await stat(dir);
    if (!info.isDirectory()) return 'it exists and is not a directory';
  } catch (error) {
    if (codeOf(error) !== 'ENOENT') return `cannot use it: ${errorMessage(error)}`;
    try {
      await makeDirectory(dir);
    } catch (created) {
      return `cannot create it: ${errorMessage(created)}`;
    }
  }
  try {
    await access(dir, constants.W_OK | constants.X_OK);
  } catch (error) {
    return `cannot write in it: ${errorMessage(error)}`;
  }
  return undefined;
}

/**
 * Makes sure `path` is a file this process can append to: an existing
 * regular file opened for appending (never truncated), or a new file in an
 * existing directory (created empty).
 *
 * @returns `undefined` when it is, else why not, in words. Never rejects.
 */
export async function checkOutputFile(path: string): Promise<string | undefined> {
  try {
    const info = await stat(path);
    if (!info.isFile()) return 'it exists and is not a regular file';
  } catch (error) {
    if (codeOf(error) !== 'ENOENT') return `cannot use it: ${errorMessage(error)}`;
    try {
      if (!(await stat(dirname(path))).isDirectory()) return `${dirname(path)} is not a directory`;
    } catch (parent) {
      return `its directory cannot be used: ${errorMessage(parent)}`;
    }
  }
  try {
    const handle = await open(path, 'a');
    await handle.close();
  } catch (error) {
    return `cannot append to it: ${errorMessage(error)}`;
  }
  return undefined;
}

function codeOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error
    ? String((error as { code: unknown }).code)
    : undefined;
}
