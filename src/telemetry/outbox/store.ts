/**
 * The outbox on disk, one folder per destination: OTLP export requests that
 * could not be delivered, kept as the exact request bodies the destination
 * expects (protobuf or JSON), one file per request, until a later drain
 * delivers them (decision 0100).
 *
 * A record is written to a temporary file (mode 0600), flushed to disk,
 * renamed to its final name and the folder flushed, so a record that exists
 * is whole: a process killed mid-write leaves at most a `.tmp` file, which
 * is removed by the next writer. The name carries what the record holds
 * (`<epoch ms>-<pid>-<seq>-<items>-<runs>.otlp`), so listing the folder is
 * enough to say how much waits and since when. The folder (mode 0700) is
 * bounded in bytes: after each write the oldest records go first until the
 * rest fits, and what they held is handed back to be counted as dropped.
 *
 * Owns the file layout, the bound, the destination's state file (last
 * error, refusals) and the drain lock; knows nothing of OTLP.
 *
 * @module subagent-otel/telemetry/outbox/store
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';

/** What a destination folder is for: written once, read by `check`. */
export interface OutboxDestination {
  readonly signal: 'traces' | 'metrics';
  readonly protocol: 'grpc' | 'http/protobuf' | 'http/json';
  /** The URL without credentials, query or fragment. */
  readonly url: string;
}

/** One waiting request. */
export interface OutboxRecord {
  readonly name: string;
  readonly path: string;
  /** When it was written (epoch ms). */
  readonly at: number;
  readonly bytes: number;
  /** Spans (traces) or metric batches (metrics) in it. */
  readonly items: number;
  /** `invoke_agent` spans in it (traces); 0 for metrics. */
  readonly runs: number;
}

/** The destination's running state, kept beside the records. */
export interface OutboxState {
  readonly lastError?: string;
  readonly lastErrorAt?: number;
  readonly lastDeliveredAt?: number;
  /** Requests the destination refused for good (never retried), and the items in them. */
  readonly refused: number;
  readonly refusedItems: number;
  /** Items dropped to keep the folder within its bound. */
  readonly droppedItems: number;
}

const StateSchema = z.object({
  lastError: z.string().optional(),
  lastErrorAt: z.number().optional(),
  lastDeliveredAt: z.number().optional(),
  refused: z.number().int().nonnegative().default(0),
  refusedItems: z.number().int().nonnegative().default(0),
  droppedItems: z.number().int().nonnegative().default(0),
});

const DestinationSchema = z.object({
  signal: z.enum(['traces', 'metrics']),
  protocol: z.enum(['grpc', 'http/protobuf', 'http/json']),
  url: z.string(),
});

const RECORD_NAME = /^(\d{13})-(\d+)-(\d+)-(\d+)-(\d+)\.otlp$/;
const EMPTY_STATE: OutboxState = { refused: 0, refusedItems: 0, droppedItems: 0 };

/** The folder name of a destination: a hash of signal, protocol and the full URL (credentials stay out of file names). */
export function destinationKey(signal: string, protocol: string, url: string): string {
  return createHash('sha256').update(`${signal}\u0000${protocol}\u0000${url}`).digest('hex').slice(0, 16);
}

/** What a write did. */
export interface WriteOutcome {
  /** Records removed (oldest first) to stay within the bound, this one included when it alone is over it. */
  readonly dropped: readonly OutboxRecord[];
  /** Whether the new record is kept. */
  readonly kept: boolean;
  /** The new record. */
  readonly record: OutboxRecord;
}

let sequence = 0;

/** The outbox folder of one destination. Methods never throw synchronously; they reject with the file system's error. */
export class OutboxStore {
  readonly dir: string;
  readonly maxBytes: number;
  readonly #destination: OutboxDestination | undefined;
  #prepared: Promise<void> | undefined;

  /**
   * @param dir the destination's folder (made with mode 0700 on first write).
   * @param maxBytes the bound on the records' bytes.
   * @param destination written to `destination.json` on first write (omit to only read).
   */
  constructor(dir: string, maxBytes: number, destination?: OutboxDestination) {
    this.dir = dir;
    this.maxBytes = maxBytes;
    this.#destination = destination;
  }

  #prepare(): Promise<void> {
    this.#prepared ??= (async () => {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      if (this.#destination !== undefined) {
        const path = join(this.dir, 'destination.json');
        await writeFile(path, `${JSON.stringify(this.#destination)}\n`, { mode: 0o600, flag: 'wx' }).catch(
          (error: NodeJS.ErrnoException) => {
            if (error.code !== 'EEXIST') throw error;
          },
        );
      }
    })();
    this.#prepared.catch(() => {
      this.#prepared = undefined; // tried again on the next write
    });
    return this.#prepared;
  }

  /**
   * Writes one request body durably (flushed, renamed, folder flushed), then
   * removes the oldest records until the folder fits `maxBytes`.
   * @param at the time it is filed under (default now).
   */
  async write(body: Uint8Array, items: number, runs: number, at: number = Date.now()): Promise<WriteOutcome> {
    await this.#prepare();
    sequence += 1;
    const name = `${String(Math.max(0, Math.floor(at))).padStart(13, '0')}-${process.pid}-${sequence}-${items}-${runs}.otlp`;
    const record: OutboxRecord = { name, path: join(this.dir, name), at, bytes: body.byteLength, items, runs };
    if (body.byteLength > this.maxBytes) return { dropped: [record], kept: false, record };
    const temporary = `${record.path}.tmp`;
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(body);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, record.path);
    await syncDir(this.dir);
    const dropped = await this.#enforceBound();
    return { dropped, kept: !dropped.some((r) => r.name === name), record };
  }

  /** Removes the oldest records until the rest fit the bound. @returns what was removed. */
  async #enforceBound(): Promise<OutboxRecord[]> {
    const records = await this.list();
    let total = records.reduce((sum, r) => sum + r.bytes, 0);
    const dropped: OutboxRecord[] = [];
    for (const record of records) {
      if (total <= this.maxBytes) break;
      if (await removeIfThere(record.path)) dropped.push(record);
      total -= record.bytes;
    }
    if (dropped.length > 0) {
      const items = dropped.reduce((sum, r) => sum + r.items, 0);
      await this.updateState((state) => ({ ...state, droppedItems: state.droppedItems + items }));
    }
    return dropped;
  }

  /**
   * The waiting records, oldest first. Removes `.tmp` files older than a
   * minute (left by a killed writer). Resolves `[]` when the folder is missing.
   */
  async list(): Promise<OutboxRecord[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const records: OutboxRecord[] = [];
    for (const name of names) {
      const path = join(this.dir, name);
      if (name.endsWith('.tmp')) {
        const info = await stat(path).catch(() => undefined);
        if (info !== undefined && info.mtimeMs < Date.now() - 60_000) await removeIfThere(path);
        continue;
      }
      const match = RECORD_NAME.exec(name);
      if (match === null) continue;
      const info = await stat(path).catch(() => undefined);
      if (info === undefined) continue; // delivered by another process meanwhile
      records.push({
        name,
        path,
        at: Number(match[1]),
        bytes: info.size,
        items: Number(match[4]),
        runs: Number(match[5]),
      });
    }
    return records.sort((a, b) => a.at - b.at || a.name.localeCompare(b.name));
  }

  /** The body of `record`, or `undefined` when it is gone (delivered by another process). */
  async read(record: OutboxRecord): Promise<Buffer | undefined> {
    try {
      return await readFile(record.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** Removes a delivered or refused record. @returns whether it was still there. */
  remove(record: OutboxRecord): Promise<boolean> {
    return removeIfThere(record.path);
  }

  /** Removes the record named `name` (a record file name of this folder only). @returns whether it was there. */
  removeNamed(name: string): Promise<boolean> {
    return RECORD_NAME.test(name) ? removeIfThere(join(this.dir, name)) : Promise.resolve(false);
  }

  /** The state file, or the empty state when there is none or it is damaged (it is advisory). */
  async state(): Promise<OutboxState> {
    try {
      const parsed = StateSchema.safeParse(JSON.parse(await readFile(join(this.dir, 'state.json'), 'utf8')));
      return parsed.success ? parsed.data : EMPTY_STATE;
    } catch {
      // Missing or not JSON: no state yet (a torn state file is rewritten whole by the next update).
      return EMPTY_STATE;
    }
  }

  /** Rewrites the state file atomically with `change(current)`. */
  async updateState(change: (state: OutboxState) => OutboxState): Promise<void> {
    await this.#prepare();
    const next = change(await this.state());
    const path = join(this.dir, 'state.json');
    const temporary = `${path}.${process.pid}.${++sequence}.tmp`;
    await writeFile(temporary, `${JSON.stringify(next)}\n`, { mode: 0o600 });
    await rename(temporary, path);
  }

  /** `destination.json`, when the folder has one. */
  async destination(): Promise<OutboxDestination | undefined> {
    try {
      const parsed = DestinationSchema.safeParse(
        JSON.parse(await readFile(join(this.dir, 'destination.json'), 'utf8')),
      );
      return parsed.success ? parsed.data : undefined;
    } catch {
      // No destination file: a folder from a writer that was killed before writing it, shown by its key only.
      return undefined;
    }
  }

  /**
   * Takes the folder's drain lock (`drain.lock`, holding this pid), so two
   * processes do not send the same records at once. A lock whose process is
   * gone is taken over. @returns a release function, or `undefined` when
   * another live process holds it.
   */
  async lock(): Promise<(() => Promise<void>) | undefined> {
    await this.#prepare();
    const path = join(this.dir, 'drain.lock');
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        await writeFile(path, String(process.pid), { flag: 'wx', mode: 0o600 });
        return async () => {
          await removeIfThere(path);
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const holder = Number((await readFile(path, 'utf8').catch(() => '')).trim());
        if (holder === process.pid || !isAlive(holder)) await removeIfThere(path);
        else return undefined;
      }
    }
    return undefined;
  }
}

/** Whether a process with this pid exists. */
function isAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function removeIfThere(path: string): Promise<boolean> {
  try {
    await unlink(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** Flushes a folder's entries (the rename) to disk; a file system that cannot is left as it is. */
async function syncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Some file systems refuse fsync on a directory (EINVAL/EISDIR); the record itself is flushed.
  } finally {
    await handle?.close();
  }
}

/** The destination folders under an outbox root, each as a store (read-only use). */
export async function outboxFolders(root: string, maxBytes: number): Promise<OutboxStore[]> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return names
    .filter((name) => /^[0-9a-f]{16}$/.test(name))
    .sort()
    .map((name) => new OutboxStore(join(root, name), maxBytes));
}
