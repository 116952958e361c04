/**
 * Whether anything changed under the watched directories since the last
 * look, from the platform's file-system notifications: one `fs.watch` per
 * directory the last listing entered (inotify on Linux, FSEvents on macOS,
 * ReadDirectoryChangesW on Windows). A directory's watch reports files
 * created, written, renamed and deleted in it; a new subdirectory is a
 * change too, and the listing that follows adds its watch. Lets `watch`
 * skip listing and `stat`ing a whole history on a pass when nothing moved
 * (decision 0120).
 *
 * A feed never decides alone that nothing changed: notifications can be
 * lost (a directory reached through a symbolic link that another path
 * changes, a network file system), so the watch still lists everything at a
 * bounded interval; and a feed that cannot watch (the system's limit on
 * watches, on open files) says so (`watching` false), ends every watch, and
 * the watch lists on every pass, as without one.
 *
 * Owns the `fs.watch` handles; `close()` ends them.
 *
 * @module subagent-otel/watch/change-feed
 */
import { existsSync, watch, type FSWatcher } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { errorMessage } from '../wire/error-text.js';

/** A running feed. */
export interface ChangeFeed {
  /** False once watching failed for good: every pass must list. */
  readonly watching: boolean;
  /** Why watching stopped, when it did. */
  readonly failure: string | undefined;
  /**
   * Watches exactly `dirs` from now on (the directories a listing entered),
   * plus, for each root that does not exist yet, its nearest existing
   * parent (so its creation is a change). Call after every listing.
   */
  follow(dirs: readonly string[]): void;
  /** Whether a change was notified since the previous call (true before the first `follow`); clears the mark. */
  takeChanged(): boolean;
  /** Ends every watch. Idempotent. */
  close(): void;
}

/** Error codes of a directory that went away between the listing and its watch: a change, not a failure. */
const GONE = new Set(['ENOENT', 'ENOTDIR', 'EPERM', 'EACCES']);

/**
 * A feed for the watched `roots`; it watches nothing until the first
 * {@link ChangeFeed.follow}. `onFailure` hears, once, why watching stopped
 * (it must not throw). Never throws.
 */
export function startChangeFeed(
  roots: readonly string[],
  onFailure: (message: string) => void = () => undefined,
): ChangeFeed {
  const absoluteRoots = roots.map((root) => resolve(root));
  const watchers = new Map<string, FSWatcher>();
  let changed = true;
  let failure: string | undefined;

  const closeAll = (): void => {
    for (const w of watchers.values()) w.close();
    watchers.clear();
  };
  const fail = (dir: string, error: unknown): void => {
    if (failure !== undefined) return;
    const limit =
      (error as NodeJS.ErrnoException).code === 'ENOSPC'
        ? ' (raise fs.inotify.max_user_watches to follow them, or give --poll)'
        : '';
    failure = `cannot follow ${dir} by notifications (${errorMessage(error)}); listing the directories every pass instead${limit}`;
    closeAll();
    onFailure(failure);
  };
  const unwatch = (dir: string): void => {
    watchers.get(dir)?.close();
    watchers.delete(dir);
  };
  const add = (dir: string): void => {
    try {
      const w = watch(dir, { persistent: false }, () => {
        changed = true;
      });
      w.on('error', (error: NodeJS.ErrnoException) => {
        if (!GONE.has(error.code ?? '')) return fail(dir, error);
        unwatch(dir);
        changed = true;
      });
      watchers.set(dir, w);
      // A file written between the listing's look at this directory and now was not notified: list once more.
      changed = true;
    } catch (error) {
      if (GONE.has((error as NodeJS.ErrnoException).code ?? '')) changed = true;
      else fail(dir, error);
    }
  };

  return {
    get watching() {
      return failure === undefined;
    },
    get failure() {
      return failure;
    },
    follow(dirs) {
      if (failure !== undefined) return;
      const wanted = new Set(dirs.map((dir) => resolve(dir)));
      for (const root of absoluteRoots) {
        if (existsSync(root)) continue;
        let parent = dirname(root);
        while (!existsSync(parent) && dirname(parent) !== parent) parent = dirname(parent);
        wanted.add(parent);
      }
      for (const dir of [...watchers.keys()]) if (!wanted.has(dir)) unwatch(dir);
      for (const dir of wanted) {
        if (failure !== undefined) return;
        if (!watchers.has(dir)) add(dir);
      }
    },
    takeChanged() {
      const was = changed;
      changed = false;
      return was;
    },
    close: closeAll,
  };
}
