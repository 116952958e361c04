/**
 * One watcher per user for the hooks: a lock file created exclusively,
 * holding the owner's process id. A lock whose process is gone (a killed
 * watcher) is taken over. POSIX semantics (`O_EXCL`, signal 0 to test a process).
 *
 * @module subagent-otel/hooks/watcher-lock
 */
import { open, readFile, unlink } from 'node:fs/promises';

/** What {@link takeWatcherLock} got. */
export type WatcherLock =
  { readonly ok: true; readonly release: () => Promise<void> } | { readonly ok: false; readonly holder: number };

/** Whether process `pid` exists (this user's or not). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the lock at `path` for this process.
 * @returns `ok` with its release, or the process id of the live holder.
 * @throws for a lock file that cannot be created or read (the folder is checked before).
 */
export async function takeWatcherLock(path: string): Promise<WatcherLock> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const handle = await open(path, 'wx', 0o600);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return {
        ok: true,
        release: async () => {
          // Only our own lock is removed (a successor may hold it after a takeover).
          const text = await readFile(path, 'utf8').catch(() => '');
          if (Number.parseInt(text, 10) === process.pid) await unlink(path).catch(() => undefined);
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder))
      return { ok: false, holder };
    // A lock left by a process that is gone (or half written): take it over.
    await unlink(path).catch(() => undefined);
  }
  return { ok: false, holder: 0 };
}

/**
 * Asks the watcher holding the lock at `path` to stop (SIGTERM), so that
 * the next hook starts one with the settings `setup` just wrote.
 * @returns the process id asked, or `undefined` when none runs. Never rejects.
 */
export async function stopWatcher(path: string): Promise<number | undefined> {
  const holder = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
  if (!Number.isInteger(holder) || holder <= 0 || holder === process.pid || !isAlive(holder)) return undefined;
  try {
    process.kill(holder, 'SIGTERM');
    return holder;
  } catch {
    return undefined; // another user's process under a reused id: not ours to stop
  }
}
