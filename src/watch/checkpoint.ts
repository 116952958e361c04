/**
 * The checkpoint of `subagent-otel watch`: which runs it has reported (and
 * delivered), so that a restart neither loses nor repeats one. A JSON file in
 * the user's state directory, never in the watched agents' folders; written
 * whole to a temporary file beside it and renamed over it, so a killed watch
 * leaves the previous checkpoint or the new one, never half of one.
 *
 * Owns the file's shape (validated with zod when read: a damaged checkpoint is
 * an error naming the file, never silently replaced; a damaged entry of the
 * remembered file states, a cache, is dropped instead: that file, or all of
 * them when the field as a whole is damaged, is classified again), where it
 * lives by default, and the atomic write.
 *
 * @module subagent-otel/watch/checkpoint
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile, open } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import * as z from 'zod';
import type { TranscriptFileInfo } from '../transcripts/format.js';
import type { ReportedRun } from './continuation.js';

/** What a checkpoint holds. */
export interface Checkpoint {
  /** 2 since a reported run's output and empty messages are kept too; a version 1 file (end times only) is read as well. */
  readonly version: 2;
  /** The watched directories (resolved), for the reader of the file. */
  readonly dirs: readonly string[];
  /**
   * Runs that ended before this time (epoch ms) are history, not reported:
   * the time of the first start without `--history` (0 with it).
   */
  readonly since: number;
  /** Reported runs (history runs too): run id to what was reported of it, its end above all. */
  readonly reported: Readonly<Record<string, ReportedRun>>;
  /**
   * Per session read (the watch's read key): its files' signature (path,
   * size and mtime of each) and when it was read. A restart reads again only
   * the sessions whose files changed since, or that go quiet after that
   * read: not the whole history (decision 0120's update). Absent in
   * checkpoints written before it was kept: every session is read once.
   */
  readonly read?: Readonly<Record<string, SessionRead>>;
  /**
   * The listed files as last seen, so that a restart classifies again only
   * the files that changed since (decision 0134). Absent in checkpoints
   * written before it was kept, and ignored when `classifier` is not the
   * running build's: every file is classified again.
   */
  readonly files?: RememberedFiles;
}

/** The file states a checkpoint remembers, and the classifier that made them. */
export interface RememberedFiles {
  /** Which classification made `states` (the watch's classifier string); another one's are not reused. */
  readonly classifier: string;
  /** Per path: size, mtime and inode when listed, and what the file is (`null`: no transcript, or of kind `other`). */
  readonly states: Readonly<Record<string, RememberedFile>>;
}

/** One file as last listed and classified. */
export interface RememberedFile {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ino: number;
  readonly info: TranscriptFileInfo | null;
}

/** What the watch remembers of a session's last read. */
export interface SessionRead {
  readonly signature: string;
  /** The watch's clock at that read (epoch ms). */
  readonly at: number;
}

const ReportedRunSchema = z.object({
  end: z.number(),
  output: z.string().optional(),
  emptyMessages: z.number().int().nonnegative().optional(),
});

const TranscriptFileInfoSchema = z.object({
  format: z.enum(['claude-code', 'codex', 'gemini-cli']),
  kind: z.enum(['session', 'sidecar', 'other']),
  what: z.string().optional(),
  facts: z.record(z.string(), z.string()),
});

const RememberedFileSchema = z.object({
  size: z.number().nonnegative(),
  mtimeMs: z.number(),
  ino: z.number(),
  info: TranscriptFileInfoSchema.nullable(),
});

/**
 * The remembered file states: a cache, so a damaged entry is dropped (that
 * file is classified again) rather than making the whole checkpoint an error.
 */
const RememberedFilesSchema = z
  .object({ classifier: z.string(), states: z.record(z.string(), z.unknown()) })
  .transform(({ classifier, states }): RememberedFiles => {
    const kept: Record<string, RememberedFile> = {};
    for (const [path, state] of Object.entries(states)) {
      const parsed = RememberedFileSchema.safeParse(state);
      if (parsed.success) kept[path] = parsed.data;
    }
    return { classifier, states: kept };
  });

const CHECKPOINT_SCHEMAS = {
  2: z.object({
    version: z.literal(2),
    dirs: z.array(z.string()),
    since: z.number().nonnegative(),
    reported: z.record(z.string(), ReportedRunSchema),
    read: z.record(z.string(), z.object({ signature: z.string(), at: z.number() })).optional(),
    files: RememberedFilesSchema.optional().catch(undefined),
  }),
  // Version 1 kept each run's end time alone.
  1: z
    .object({
      version: z.literal(1),
      dirs: z.array(z.string()),
      since: z.number().nonnegative(),
      reported: z.record(z.string(), z.number()),
    })
    .transform((v1) => ({
      ...v1,
      version: 2 as const,
      reported: Object.fromEntries(Object.entries(v1.reported).map(([runId, end]) => [runId, { end }])),
    })),
} as const;

/**
 * The default checkpoint of a watch of `dirs`: one file per set of
 * directories in `$XDG_STATE_HOME/subagent-otel/watch/` (default
 * `~/.local/state/subagent-otel/watch/`), named by a hash of the resolved,
 * sorted directories.
 */
export function defaultCheckpointPath(dirs: readonly string[], env: NodeJS.ProcessEnv): string {
  const state =
    env['XDG_STATE_HOME'] !== undefined && env['XDG_STATE_HOME'] !== ''
      ? env['XDG_STATE_HOME']
      : join(homedir(), '.local', 'state');
  const key = createHash('sha256')
    .update(JSON.stringify([...dirs].map((dir) => resolve(dir)).sort()))
    .digest('hex')
    .slice(0, 16);
  return join(state, 'subagent-otel', 'watch', `${key}.json`);
}

/** What {@link loadCheckpoint} found. */
export type LoadedCheckpoint =
  { readonly ok: true; readonly checkpoint: Checkpoint | undefined } | { readonly ok: false; readonly message: string };

/**
 * Reads the checkpoint at `path` (version 2, or version 1 read as 2).
 * @returns `checkpoint: undefined` when there is none yet; an error message
 *   naming the file when it cannot be read or is not a valid checkpoint.
 *   Never rejects.
 */
export async function loadCheckpoint(path: string): Promise<LoadedCheckpoint> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ok: true, checkpoint: undefined };
    return { ok: false, message: `cannot read the checkpoint ${path}: ${(error as Error).message}` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      message: `the checkpoint ${path} is not JSON (${(error as Error).message}); move it away to start over, or give another with --checkpoint`,
    };
  }
  const version = value !== null && typeof value === 'object' ? (value as { version?: unknown }).version : undefined;
  const schema = version === 1 || version === 2 ? CHECKPOINT_SCHEMAS[version] : undefined;
  const parsed = schema?.safeParse(value);
  if (parsed === undefined || !parsed.success) {
    const issue = parsed?.error.issues[0];
    const why =
      parsed === undefined
        ? `version ${JSON.stringify(version) ?? 'missing'}, this subagent-otel reads 1 and 2`
        : `${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`;
    return {
      ok: false,
      message: `the checkpoint ${path} is not a subagent-otel watch checkpoint (${why}); move it away to start over, or give another with --checkpoint`,
    };
  }
  return { ok: true, checkpoint: parsed.data };
}

/**
 * Writes `checkpoint` to `path` atomically: a temporary file in the same
 * directory (made with mode 0700 when missing), flushed to disk, renamed over
 * `path`. Rejects with the file system's error when it cannot.
 */
export async function saveCheckpoint(path: string, checkpoint: Checkpoint): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(checkpoint)}\n`, { mode: 0o600 });
  const handle = await open(temporary, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, path);
}
