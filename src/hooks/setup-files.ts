/**
 * `setup`'s changes to an agent's settings file, and their undoing, on disk.
 * Reads the file (absent: an empty object; invalid JSON, or a top level that
 * is no object: an error naming the file, which is left untouched), edits it
 * with `hooks/settings-hooks`, keeps the file's indentation and final
 * newline, writes it whole (a temporary file beside it, same mode, then a
 * rename) and refuses a file the user made read-only.
 *
 * The first change of a file keeps a backup of its bytes and a record in
 * the state folder; `remove` restores those bytes exactly when the file is
 * still as `setup` left it, and otherwise takes out only our hooks.
 *
 * @module subagent-otel/hooks/setup-files
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, copyFile, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import * as z from 'zod';
import { errorText } from '../wire/error-text.js';
import { SettingsShapeError, withOurHooks, withoutOurHooks } from './settings-hooks.js';

/** A change `setup` would make or made to one file. */
export interface SettingsChange {
  readonly file: string;
  /** The file's text before (`undefined`: it did not exist). */
  readonly before: string | undefined;
  /** Its text after (`undefined`: removed, restoring its absence). */
  readonly after: string | undefined;
  readonly changed: boolean;
  /** Hooks taken out (`remove`). */
  readonly removed?: number;
  /** Where the original bytes are kept (the first change of the file). */
  readonly backup?: string;
}

/** A refusal that leaves the file untouched: the message names the file and what to do. */
export class SetupError extends Error {}

const RecordSchema = z.object({
  file: z.string(),
  existed: z.boolean(),
  backup: z.string().optional(),
  writtenSha256: z.string(),
});
type SetupRecord = z.infer<typeof RecordSchema>;

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function recordPath(setupDir: string, file: string): string {
  return join(setupDir, `${sha256(file).slice(0, 16)}.json`);
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SetupError(`cannot read ${file}: ${errorText(error)}`);
  }
}

function parseSettings(file: string, text: string | undefined): Record<string, unknown> {
  if (text === undefined || text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SetupError(`${file} is not valid JSON (${errorText(error)}); fix it first, nothing was changed`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new SetupError(`${file} does not hold a JSON object; fix it first, nothing was changed`);
  return value as Record<string, unknown>;
}

/** The settings as text in the file's own style: its indentation (default two spaces) and its final newline (default one). */
function render(settings: Record<string, unknown>, before: string | undefined): string {
  const indent = /\n([ \t]+)"/.exec(before ?? '')?.[1] ?? '  ';
  const newline = before === undefined || before.endsWith('\n') ? '\n' : '';
  return `${JSON.stringify(settings, null, indent)}${newline}`;
}

async function readRecord(setupDir: string, file: string): Promise<SetupRecord | undefined> {
  const text = await readText(recordPath(setupDir, file));
  if (text === undefined) return undefined;
  try {
    const parsed = RecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined; // a damaged record: `remove` then takes out our hooks alone
  }
}

/**
 * Refuses a file the user made read-only: no write bit for its owner (which
 * even root is refused on), or no write access for this user.
 */
async function assertWritable(file: string): Promise<void> {
  const info = await stat(file).catch(() => undefined);
  if (info === undefined) return;
  const writable =
    (info.mode & 0o200) !== 0 &&
    (await access(file, constants.W_OK).then(
      () => true,
      () => false,
    ));
  if (!writable)
    throw new SetupError(
      `${file} is read-only; make it writable (chmod u+w '${file}') and run this again, nothing was changed`,
    );
}

/** Writes `text` to `file` whole, keeping its mode (0644 for a new file); refuses a read-only file. */
async function writeWhole(file: string, text: string): Promise<void> {
  await assertWritable(file);
  const info = await stat(file).catch(() => undefined);
  try {
    await mkdir(dirname(file), { recursive: true });
    const temporary = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
    await writeFile(temporary, text, { mode: info !== undefined ? info.mode & 0o7777 : 0o644 });
    await rename(temporary, file);
  } catch (error) {
    throw new SetupError(`cannot write ${file}: ${errorText(error)}`);
  }
}

/**
 * Adds our hook (running `command`) to the settings `file`.
 * @param write false: compute the change only (`--dry-run`).
 * @throws SetupError for a file that cannot be read, parsed, followed or written (left untouched).
 */
export async function addHooksToFile(
  file: string,
  command: string,
  setupDir: string,
  write: boolean,
): Promise<SettingsChange> {
  const before = await readText(file);
  let edited: ReturnType<typeof withOurHooks>;
  try {
    edited = withOurHooks(parseSettings(file, before), command, file);
  } catch (error) {
    if (error instanceof SettingsShapeError) throw new SetupError(error.message);
    throw error;
  }
  if (!edited.changed) return { file, before, after: before, changed: false };
  const after = render(edited.settings, before);
  if (!write) return { file, before, after, changed: true };
  await assertWritable(file);
  const existing = await readRecord(setupDir, file);
  let backup = existing?.backup;
  if (existing === undefined && before !== undefined) {
    backup = join(setupDir, 'backups', `${basename(file)}.${sha256(file).slice(0, 16)}.${Date.now()}`);
    await mkdir(dirname(backup), { recursive: true, mode: 0o700 });
    await copyFile(file, backup);
  }
  await writeWhole(file, after);
  const record: SetupRecord = {
    file,
    existed: existing?.existed ?? before !== undefined,
    ...(backup !== undefined ? { backup } : {}),
    writtenSha256: sha256(after),
  };
  await mkdir(setupDir, { recursive: true, mode: 0o700 });
  await writeFile(recordPath(setupDir, file), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  return { file, before, after, changed: true, ...(backup !== undefined ? { backup } : {}) };
}

/**
 * Takes our hooks out of `file`: the bytes from before the first setup when
 * the file is as setup left it (or no file, when there was none), else the
 * file without our hooks.
 * @throws SetupError for a file that cannot be read, parsed, followed or written (left untouched).
 */
export async function removeHooksFromFile(file: string, setupDir: string, write: boolean): Promise<SettingsChange> {
  const before = await readText(file);
  const record = await readRecord(setupDir, file);
  const untouched = record !== undefined && before !== undefined && sha256(before) === record.writtenSha256;
  let after: string | undefined;
  let removed: number;
  if (untouched && !record.existed) {
    after = undefined;
    removed = withoutOurHooks(parseSettings(file, before), file).removed;
  } else if (untouched && record.backup !== undefined && (await readText(record.backup)) !== undefined) {
    after = await readText(record.backup);
    removed = withoutOurHooks(parseSettings(file, before), file).removed;
  } else {
    let edited: ReturnType<typeof withoutOurHooks>;
    try {
      edited = withoutOurHooks(parseSettings(file, before), file);
    } catch (error) {
      if (error instanceof SettingsShapeError) throw new SetupError(error.message);
      throw error;
    }
    removed = edited.removed;
    after = removed > 0 ? render(edited.settings, before) : before;
  }
  const changed = after !== before;
  if (write) {
    if (changed && after === undefined) await rm(file, { force: true });
    else if (changed && after !== undefined) await writeWhole(file, after);
    await rm(recordPath(setupDir, file), { force: true });
    if (record?.backup !== undefined) await rm(record.backup, { force: true });
  }
  return { file, before, after, changed, removed };
}

/** A short line diff of a change (lines only in `before` with `-`, only in `after` with `+`, around the first and last difference). Pure. */
export function diffLines(before: string | undefined, after: string | undefined): string {
  const a = before === undefined ? [] : before.split('\n');
  const b = after === undefined ? [] : after.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const lines = [`@@ line ${start + 1} @@`];
  for (const line of a.slice(start, endA)) lines.push(`-${line}`);
  for (const line of b.slice(start, endB)) lines.push(`+${line}`);
  return lines.join('\n');
}
