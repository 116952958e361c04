/**
 * The files a replay reads: expanding directories into candidate files,
 * telling a file's format from its first line, and reading any NDJSON file
 * (plain or a concatenation of zstd frames) as lines with bounded memory.
 *
 * Owns file discovery and the line view of captures; the bytes are read by
 * the one byte reader (`wire/byte-lines`: format detection, bounded zstd
 * window, splitting, torn tails). Durable session logs are read by
 * `wire/durable-log` (through `observe/log-tracker`); what a line means is
 * the replay's business. Never throws or rejects for a
 * missing, unreadable, empty or binary file: each becomes a result saying so.
 *
 * @module subagent-otel/replay/input-files
 */
import { Buffer } from 'node:buffer';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import {
  ByteLineReader,
  FEED_SLICE_BYTES,
  detectCompression,
  type ByteLineItem,
  type LogCompression,
} from '../wire/byte-lines.js';
import { fileChunks } from '../wire/file-chunks.js';
import { isCaptureHeader } from '../wire/capture.js';
import { decodeUtf8Line } from '../wire/ndjson.js';
import { errorText } from '../wire/error-text.js';
import type { NativeTranscriptFormat } from '../observe/run-record.js';
import type { TranscriptFileInfo, TranscriptHead } from '../transcripts/format.js';

/** What a replayable file holds: a durable session log, a capture, raw NDJSON JSON-RPC, or a coding agent's transcript. */
export type InputFormat = 'log' | 'capture' | 'ndjson' | NativeTranscriptFormat;

/** File name endings a directory walk picks up; other files only when they start with zstd magic, or are transcript JSON ({@link isTranscriptJsonName}). */
export const REPLAY_FILE_SUFFIXES = ['.jsonl', '.jsonl.zstd', '.ndjson', '.zst', '.zstd'] as const;

/**
 * Whether a directory walk picks up a `.json` file as a possible transcript
 * file: Gemini CLI's legacy single-JSON chats (`session-<time>-<id>.json`,
 * and, given the folder it lies in, a 0.37/0.38 subagent's
 * `chats/<parentSessionId>/<sessionId>.json`) and Claude Code's subagent
 * sidecars (`agent-<id>.meta.json`). Other JSON files in a walked tree
 * (settings, indexes) are not inputs.
 */
export function isTranscriptJsonName(name: string, dir?: string): boolean {
  if (/^session-.+\.json$/.test(name) || /^agent-.+\.meta\.json$/.test(name)) return true;
  return dir !== undefined && name.endsWith('.json') && basename(dirname(dir)) === 'chats';
}

/** How much of line 1 (after decompression) format detection reads at most. */
export const SNIFF_MAX_BYTES = 64 * 1024;

/** A file found by {@link expandPaths}, with its size in bytes when it was listed. */
export interface InputFile {
  readonly path: string;
  readonly size: number;
  /** Last modification, epoch ms, when listed. */
  readonly mtimeMs: number;
  /** Inode number when listed: a file replaced under the same name (rotated) gets another. */
  readonly ino: number;
}

/** A path {@link expandPaths} could not use: `missing` (no such path), `unreadable`, or `no-files` (a directory without replayable files). */
export interface InputPathProblem {
  readonly path: string;
  readonly code: 'missing' | 'unreadable' | 'no-files';
  readonly message: string;
}

/** Options of {@link expandPaths}. */
export interface ExpandOptions {
  /** Directories never entered (e.g. the replay's own `--out` directory, whose `traces.jsonl` is no input). */
  readonly exclude?: readonly string[];
}

/**
 * Expands the command line's paths into files, in order: a regular file is
 * taken as given (whatever its name; pipes and devices are refused, since a
 * file is read twice); a directory is walked recursively in name
 * order (every entry of a directory measured before its subdirectories
 * are listed), following symbolic links but entering each real directory once,
 * and yields the files whose names end in one of {@link REPLAY_FILE_SUFFIXES}
 * or whose first four bytes are zstd magic. A file named twice is listed once.
 *
 * @returns the files, the paths that gave none, and every directory entered
 *   (as reached, each real directory once: what `watch` follows for
 *   changes). Never rejects.
 */
export async function expandPaths(
  paths: readonly string[],
  options: ExpandOptions = {},
): Promise<{ files: InputFile[]; problems: InputPathProblem[]; dirs: string[] }> {
  const files: InputFile[] = [];
  const entered: string[] = [];
  const problems: InputPathProblem[] = [];
  const seenFiles = new Set<string>();
  const seenDirs = new Set<string>();
  const excluded = new Set<string>();
  for (const dir of options.exclude ?? []) excluded.add(await realOrResolved(dir));
  /** Excluded directories the walk of the current command-line path met (and did not enter). */
  let excludedHits: string[] = [];

  const addFile = (path: string, info: { size: number; mtimeMs: number; ino: number }): void => {
    const key = resolve(path);
    if (seenFiles.has(key)) return;
    seenFiles.add(key);
    files.push({ path, size: info.size, mtimeMs: info.mtimeMs, ino: info.ino });
  };

  type Listed = { path: string; info: { size: number; mtimeMs: number; ino: number } };
  /** The inputs under `dir`, in name order. */
  const walk = async (dir: string): Promise<Listed[]> => {
    const real = await realOrResolved(dir);
    if (excluded.has(real)) {
      excludedHits.push(dir);
      return [];
    }
    if (seenDirs.has(real)) return [];
    seenDirs.add(real);
    entered.push(dir);
    let names: string[];
    try {
      names = (await readdir(dir)).sort();
    } catch (error) {
      problems.push({ path: dir, code: 'unreadable', message: `cannot list the directory: ${errorText(error)}` });
      return [];
    }
    // Every entry of a directory is looked at before any subdirectory is listed: a parent's
    // transcript is measured before its children's folder is, so whatever the parent's measured
    // bytes name was already on disk when the folder was listed (watch reads up to that size).
    const entries: (Listed | string)[] = [];
    for (const name of names) {
      const path = join(dir, name);
      let info;
      try {
        info = await stat(path);
      } catch {
        // ENOENT/ELOOP/EACCES: a dangling link or an entry removed during the walk is not an input.
        continue;
      }
      if (info.isDirectory()) {
        entries.push(path);
      } else if (
        info.isFile() &&
        (hasReplaySuffix(name) || isTranscriptJsonName(name, dir) || (await startsWithZstdMagic(path)))
      ) {
        entries.push({ path, info });
      }
    }
    const found: Listed[] = [];
    for (const entry of entries) {
      if (typeof entry === 'string') found.push(...(await walk(entry)));
      else found.push(entry);
    }
    return found;
  };

  for (const path of paths) {
    let info;
    try {
      info = await stat(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'unreadable';
      problems.push({
        path,
        code,
        message: code === 'missing' ? 'no such file or directory' : `cannot read: ${errorText(error)}`,
      });
      continue;
    }
    if (info.isFile()) {
      addFile(path, info);
      continue;
    }
    if (!info.isDirectory()) {
      // The format is told by reading the start of the file, then the file is read again from its beginning.
      problems.push({
        path,
        code: 'unreadable',
        message: 'not a regular file (a pipe or device cannot be read twice); save it to a file first',
      });
      continue;
    }
    excludedHits = [];
    const found = await walk(path);
    for (const file of found) addFile(file.path, file.info);
    if (found.length === 0 && !problems.some((p) => p.path === path)) {
      problems.push({ path, code: 'no-files', message: noFilesMessage(path, excludedHits) });
    }
  }
  return { files, problems, dirs: entered };
}

/**
 * Why a directory gave no input: when the walk skipped excluded directories
 * (the replay's own output directory), say so, because the files are there.
 */
function noFilesMessage(path: string, excludedHits: readonly string[]): string {
  const own =
    'is where this replay writes its own telemetry (traces.jsonl and metrics.jsonl hold OTLP JSON, not session logs), so its files are not read; replay session logs or captures, or give --out another directory';
  if (excludedHits.includes(path)) return `this directory ${own}`;
  const none = `no session logs, captures or transcripts (${REPLAY_FILE_SUFFIXES.join(', ')}, session-*.json, or zstd) in this directory`;
  if (excludedHits.length === 0) return none;
  return `${none} outside ${excludedHits.join(', ')}, which ${own}`;
}

/** What {@link sniffFile} found. */
export type SniffResult =
  | {
      readonly ok: true;
      readonly format: InputFormat;
      readonly compression: LogCompression;
      /** For a session log whose line 1 was read whole: its session id and parent session (when it names one). */
      readonly session?: { readonly id: string; readonly parentSessionId?: string };
      /** For a coding agent's transcript (`format` is its agent): what the file is, from `SniffOptions.classifyTranscript`. */
      readonly transcript?: TranscriptFileInfo;
    }
  | {
      readonly ok: false;
      readonly code: 'unreadable' | 'empty-file' | 'binary' | 'corrupt-zstd' | 'unrecognized';
      readonly message: string;
    };

/**
 * Tells a file's format from its first line (decompressed when the file
 * starts with zstd magic): a durable session log when it is a JSON object
 * with `type: 'session'`, a capture when it is a `subagent-otel-capture`
 * header, raw NDJSON JSON-RPC when it is an object with a `jsonrpc` member.
 * Reads at most {@link SNIFF_MAX_BYTES} of line 1; a longer line 1 is judged
 * by its beginning.
 *
 * @returns the format and compression, or why the file is none of them:
 *   `unreadable` (cannot open or read), `empty-file` (no bytes, or zstd
 *   frames holding none), `binary` (line 1 holds a NUL byte or is not
 *   UTF-8), `corrupt-zstd` (zstd magic, undecodable data), `unrecognized`
 *   (text of another kind). Never rejects; closes the file before resolving.
 */
export async function sniffFile(path: string, options: SniffOptions = {}): Promise<SniffResult> {
  let head: FirstLine;
  try {
    head = await readFirstLine(path, options);
  } catch (error) {
    return { ok: false, code: 'unreadable', message: `cannot read the file: ${errorText(error)}` };
  }
  const { bytes, compression } = head;
  if (bytes.length === 0) {
    if (head.corrupt !== undefined)
      return { ok: false, code: 'corrupt-zstd', message: `undecodable zstd data (${head.corrupt})` };
    return {
      ok: false,
      code: 'empty-file',
      message: compression === 'zstd' ? 'the zstd frames hold no data' : 'the file is empty',
    };
  }
  if (bytes.includes(0))
    return { ok: false, code: 'binary', message: 'binary data (a NUL byte in line 1): not a session log or capture' };
  const text = head.isComplete ? decodeUtf8Line(bytes) : decodeUtf8Prefix(bytes);
  if (!text.ok)
    return {
      ok: false,
      code: 'binary',
      message: 'binary data (line 1 is not UTF-8 text): not a session log or capture',
    };
  const line1 = head.isComplete ? parseLine(text.text) : undefined;
  const format = head.isComplete ? formatOfValue(line1) : formatOfPrefix(text.text);
  if (format !== undefined) {
    const session = format === 'log' ? sessionOf(line1) : undefined;
    return { ok: true, format, compression, ...(session !== undefined ? { session } : {}) };
  }
  let seen: readonly unknown[] = line1 !== undefined ? [line1] : [];
  if (options.classifyTranscript !== undefined && compression === 'plain') {
    // The first record that identifies a transcript need not be line 1 (Claude Code 2.1.8x starts with a
    // `permission-mode` record), and a document spanning lines (a pretty-printed JSON chat) needs more than
    // line 1: the formats see the file's first bytes (read in the same pass as line 1) and every whole JSON
    // line in them.
    const prefix = head.raw !== undefined ? textPrefixOf(head.raw) : { text: '', isWholeFile: false };
    const records = prefix.text === '' ? seen : prefixRecords(prefix.text, prefix.isWholeFile);
    seen = records;
    const transcript = options.classifyTranscript({
      path,
      firstLine: line1,
      prefix: prefix.text === '' ? text.text : prefix.text,
      records,
    });
    if (transcript !== undefined) return { ok: true, format: transcript.format, compression, transcript };
  }
  return { ok: false, code: 'unrecognized', message: unrecognizedMessage(seen) };
}

/** Most JSON lines of a file's first bytes the transcript formats are shown. */
export const SNIFF_MAX_RECORDS = 64;

/**
 * The whole JSON lines of a file's first bytes, parsed, in file order (at
 * most {@link SNIFF_MAX_RECORDS}): every line ended by a newline, and the
 * last one when `isWholeFile`. A line that is not JSON is left out.
 */
export function prefixRecords(prefix: string, isWholeFile: boolean): unknown[] {
  const lines = prefix.split('\n');
  if (!isWholeFile) lines.pop(); // cut by the window
  const records: unknown[] = [];
  for (const line of lines) {
    if (records.length >= SNIFF_MAX_RECORDS) break;
    const trimmed = line.trim();
    if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) continue;
    const value = parseLine(trimmed);
    if (value !== undefined) records.push(value);
  }
  return records;
}

/** Why no format claimed a file, naming what its first records were. */
function unrecognizedMessage(records: readonly unknown[]): string {
  const what =
    'neither a session log header, a capture header, a JSON-RPC message nor a Claude Code, Codex or Gemini CLI transcript record';
  if (records.length === 0) return `line 1 is ${what}: not a session log, capture or transcript`;
  const kinds = [...new Set(records.map(describeRecord))].slice(0, 8);
  return `no record of the ${records.length} JSON line(s) read from the file's start is ${what} (seen: ${kinds.join(', ')}): not a session log, capture or transcript`;
}

/** A record in a few words: its `type` when it has one, else its first keys. */
function describeRecord(value: unknown): string {
  if (value === null || typeof value !== 'object') return value === null ? 'null' : typeof value;
  if (Array.isArray(value)) return 'an array';
  const type = (value as Record<string, unknown>)['type'];
  if (typeof type === 'string') return `type ${JSON.stringify(type.slice(0, 40))}`;
  return `an object with ${
    Object.keys(value)
      .slice(0, 3)
      .map((k) => JSON.stringify(k.slice(0, 40)))
      .join(', ') || 'no keys'
  }`;
}

/** Options of {@link sniffFile}. */
export interface SniffOptions {
  /** Largest zstd window a frame may declare, in bytes (default 32 MiB); see `wire/byte-lines`. */
  readonly maxZstdWindowBytes?: number;
  /**
   * Asked about a plain-text file that is none of the project's own formats:
   * whether it is a coding agent's transcript (`transcripts/`). Default
   * none: such a file is `unrecognized`.
   */
  readonly classifyTranscript?: (head: TranscriptHead) => TranscriptFileInfo | undefined;
}

/** What {@link readFirstLine} read. */
interface FirstLine {
  /** Line 1, decompressed (up to {@link SNIFF_MAX_BYTES} when `isComplete` is false). */
  readonly bytes: Uint8Array;
  readonly compression: LogCompression;
  readonly isComplete: boolean;
  readonly corrupt?: string;
  /**
   * A plain file's first bytes: its first {@link SNIFF_MAX_BYTES}, or all of
   * it when shorter (`isWholeFile`). Absent for zstd (the formats read plain
   * text only).
   */
  readonly raw?: { readonly bytes: Uint8Array; readonly isWholeFile: boolean };
}

/** Line 1 of a file, decompressed, up to its newline or {@link SNIFF_MAX_BYTES}, and the file's first bytes. Throws only for I/O errors. */
async function readFirstLine(path: string, options: SniffOptions): Promise<FirstLine> {
  const reader = new ByteLineReader(options);
  const rawChunks: Uint8Array[] = [];
  let rawLength = 0;
  let first: Uint8Array | undefined;
  let isComplete = true;
  let corrupt: string | undefined;
  /** Looks at new items; @returns true once line 1 is known (or reading cannot go on). */
  const look = (items: readonly ByteLineItem[]): boolean => {
    for (const item of items) {
      if (item.kind === 'line') first = item.bytes;
      else if (item.kind === 'oversized') {
        first = new Uint8Array(0);
        isComplete = false;
      } else if (item.kind === 'tail') first = item.line.kind === 'line' ? item.line.bytes : new Uint8Array(0);
      else if (item.kind === 'corrupt-zstd') corrupt = item.reason;
      else if (item.kind === 'torn-frame') corrupt = 'the file ends inside its first zstd frame';
      if (first !== undefined || corrupt !== undefined) return true;
    }
    if (reader.bufferedBytes >= SNIFF_MAX_BYTES) {
      // A line 1 longer than the sniff window: judged by its beginning.
      first = reader.pendingBytes().subarray(0, SNIFF_MAX_BYTES);
      isComplete = false;
      return true;
    }
    return false;
  };
  let isDone = false;
  for await (const chunk of fileChunks(path)) {
    rawChunks.push(chunk.subarray(0, SNIFF_MAX_BYTES - rawLength));
    rawLength += Math.min(chunk.length, SNIFF_MAX_BYTES - rawLength);
    for (let offset = 0; offset < chunk.length && !isDone; offset += FEED_SLICE_BYTES)
      isDone = look(await reader.push(chunk.subarray(offset, offset + FEED_SLICE_BYTES)));
    // Once line 1 is known, a plain file's first bytes are still read up to the window: the formats' head.
    if (isDone && (reader.compression === 'zstd' || rawLength >= SNIFF_MAX_BYTES)) break;
  }
  if (!isDone) look(await reader.end());
  else reader.stop(); // frees the zstd decompressor
  const compression = reader.compression ?? 'plain';
  const bytes = first ?? new Uint8Array(0);
  // Fewer bytes than the window: the loop ran out of chunks, so they are the whole file.
  const raw = { bytes: Buffer.concat(rawChunks, rawLength), isWholeFile: rawLength < SNIFF_MAX_BYTES };
  return {
    bytes,
    compression,
    isComplete,
    ...(corrupt !== undefined && first === undefined ? { corrupt } : {}),
    ...(compression === 'plain' ? { raw } : {}),
  };
}

/** Raw first bytes as the text the transcript formats see (a cut character dropped; empty when not UTF-8). */
function textPrefixOf(raw: { bytes: Uint8Array; isWholeFile: boolean }): { text: string; isWholeFile: boolean } {
  const decoded = decodeUtf8Prefix(raw.bytes);
  return { text: decoded.ok ? decoded.text : '', isWholeFile: raw.isWholeFile };
}

function parseLine(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // SyntaxError: line 1 is not JSON, so the file is none of the known formats.
    return undefined;
  }
}

function sessionOf(value: unknown): { id: string; parentSessionId?: string } | undefined {
  const record = value as Record<string, unknown>;
  const id = record['id'];
  const parent = record['parentSession'];
  if (typeof id !== 'string') return undefined;
  return typeof parent === 'string' && parent !== '' ? { id, parentSessionId: parent } : { id };
}

function formatOfValue(value: unknown): InputFormat | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  if (isCaptureHeader(value)) return 'capture';
  const record = value as Record<string, unknown>;
  if (record['type'] === 'session') return 'log';
  if ('jsonrpc' in record) return 'ndjson';
  return undefined;
}

/** A line 1 longer than the sniff window, which cannot be parsed (its end is past the window): judged by the markers its beginning holds. */
function formatOfPrefix(text: string): InputFormat | undefined {
  if (!text.trimStart().startsWith('{')) return undefined;
  if (/"type"\s*:\s*"subagent-otel-capture"/.test(text)) return 'capture';
  if (/"type"\s*:\s*"session"/.test(text)) return 'log';
  if (/"jsonrpc"\s*:/.test(text)) return 'ndjson';
  return undefined;
}

/** Strict UTF-8 of a prefix that may end inside a character. */
function decodeUtf8Prefix(bytes: Uint8Array): { ok: true; text: string } | { ok: false } {
  try {
    return { ok: true, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true }) };
  } catch {
    // TypeError from the fatal decoder: invalid UTF-8 before the cut.
    return { ok: false };
  }
}

function hasReplaySuffix(name: string): boolean {
  return REPLAY_FILE_SUFFIXES.some((suffix) => name.endsWith(suffix));
}

async function startsWithZstdMagic(path: string): Promise<boolean> {
  try {
    const handle = await open(path, 'r');
    try {
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(4), 0, 4, 0);
      return bytesRead === 4 && detectCompression(buffer) === 'zstd';
    } finally {
      await handle.close();
    }
  } catch {
    // EACCES/EIO while peeking: not picked up by the walk (a named file would be reported instead).
    return false;
  }
}

async function realOrResolved(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    // ENOENT: the directory does not exist (yet); compare by its resolved path.
    return resolve(path);
  }
}
