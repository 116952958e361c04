/**
 * The watcher's private folder: created with mode 0700 and checked to be
 * the user's own, a real folder (no symbolic link), and closed to the group
 * and others, before a socket is put in it. That check is what keeps other
 * local users from writing to the socket (decision 0123). POSIX only.
 *
 * @module subagent-otel/hooks/private-folder
 */
import { chmod, lstat, mkdir } from 'node:fs/promises';
import { errorText } from '../wire/error-text.js';

/**
 * Makes `path` (and its parents) if needed, and makes sure only its owner,
 * this user, can enter it.
 * @returns `undefined` when it is private; else a sentence naming the folder
 *   and what is wrong (owned by another user, a link, not a folder). Never rejects.
 */
export async function ensurePrivateFolder(path: string): Promise<string | undefined> {
  try {
    await mkdir(path, { recursive: true, mode: 0o700 });
    const info = await lstat(path);
    if (info.isSymbolicLink())
      return `${path} is a symbolic link; the watcher's folder must be a real folder: remove the link`;
    if (!info.isDirectory()) return `${path} is not a folder: remove it`;
    const uid = process.getuid?.();
    if (uid !== undefined && info.uid !== uid)
      return `${path} belongs to user ${info.uid}, not to you (${uid}): remove it or set XDG_STATE_HOME elsewhere`;
    if ((info.mode & 0o077) !== 0) await chmod(path, 0o700);
    return undefined;
  } catch (error) {
    return `cannot make the private folder ${path}: ${errorText(error)}`;
  }
}
