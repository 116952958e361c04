/**
 * The corpus check's own reading of transcript files: every line of a JSON
 * lines file parsed on its own, or a whole `.json` document. Deliberately
 * minimal and independent of the project's readers (`src/corpus/` imports
 * nothing of the project): the check exists to catch their defects, so it
 * must not share their parsing. Lines that do not parse are kept as
 * `undefined` values, so callers can tell "nothing parsed" from "no line".
 *
 * @module subagent-otel/corpus/records
 */
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

/** One line of a file: its 1-based number and its JSON value (`undefined` when it is not JSON). */
export interface Line {
  readonly n: number;
  readonly value: unknown;
}

/** A file as the check read it. */
export interface ReadFile {
  readonly path: string;
  readonly name: string;
  /** JSON lines: one entry per non-empty line. A `.json` document: one entry, line 1, the whole document. */
  readonly lines: readonly Line[];
  /** True for a `.json` file read as one document. */
  readonly isDocument: boolean;
}

/** A plain object, or undefined. */
export type Obj = Record<string, unknown>;

/** `v` when it is a plain (non-array) object. */
export function obj(v: unknown): Obj | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined;
}

/** `v` when it is a string. */
export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** `v` when it is a finite number, else 0. */
export function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** `v` when it is an array, else an empty one. */
export function arr(v: unknown): readonly unknown[] {
  return Array.isArray(v) ? v : [];
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined; // not JSON: kept as a line without value (counted by callers, never fatal)
  }
}

/** Reads one file: `.json` as one document, anything else as JSON lines. */
export function readTranscriptFile(path: string): ReadFile {
  const text = readFileSync(path, 'utf8');
  const name = basename(path);
  if (name.endsWith('.json')) return { path, name, lines: [{ n: 1, value: parse(text) }], isDocument: true };
  const lines: Line[] = [];
  const raw = text.split('\n');
  for (let i = 0; i < raw.length; i += 1) {
    const line = (raw[i] ?? '').replace(/\r$/, '');
    if (line.trim() === '') continue;
    lines.push({ n: i + 1, value: parse(line) });
  }
  return { path, name, lines, isDocument: false };
}

/**
 * Every `.jsonl` and `.json` file under `paths`, symbolic links followed (files named directly are taken
 * whatever their name), sorted. Each file is later read whole: meant for folders of sessions, not archives
 * of many gigabytes.
 */
export function listFiles(paths: readonly string[], exclude: readonly string[] = []): string[] {
  const out: string[] = [];
  const seen = new Set<string>(); // real paths of the directories walked: a link back up is not walked again
  const walk = (dir: string): void => {
    const real = realpathSync(dir);
    if (exclude.includes(dir) || seen.has(real)) return;
    seen.add(real);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const isDir =
        entry.isDirectory() ||
        (entry.isSymbolicLink() && statSync(path, { throwIfNoEntry: false })?.isDirectory() === true);
      if (isDir) walk(path);
      else if (entry.name.endsWith('.jsonl') || entry.name.endsWith('.json')) {
        if (entry.isFile() || statSync(path, { throwIfNoEntry: false })?.isFile() === true) out.push(path);
      }
    }
  };
  for (const p of paths) {
    if (statSync(p).isDirectory()) walk(p);
    else out.push(p);
  }
  return [...new Set(out)].sort();
}
