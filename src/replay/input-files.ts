/**
 * The files a replay reads: expanding directories into candidate files,
 * telling a file's format from its first line, and reading any NDJSON file
 * (plain or a concatenation of zstd frames) as lines with bounded memory.
 *
 * Owns file discovery and byte-to-line reading for captures. Durable session
 * logs are read by `wire/durable-log` (through `observe/log-tracker`); what
 * a line means is the replay's business. Never throws or rejects for a
 * missing, unreadable, empty or binary file: each becomes a result saying so.
 *
 * @module subagent-otel/replay/input-files
 */
import { Buffer } from 'node:buffer';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Decompress } from 'fzstd';
import { detectCompression, type LogCompression } from '../wire/durable-log.js';
import { fileChunks } from '../wire/file-chunks.js';
import { isCaptureHeader } from '../wire/capture.js';
import { DEFAULT_MAX_LINE_BYTES, LineSplitter, decodeUtf8Line } from '../wire/ndjson.js';

/** What a replayable file holds. */
export type InputFormat = 'log' | 'capture' | 'ndjson';

/** File name endings a directory walk picks up; other files only when they start with zstd magic. */
export const REPLAY_FILE_SUFFIXES = ['.jsonl', '.jsonl.zstd', '.ndjson', '.zst', '.zstd'] as const;

/** How much of line 1 (after decompression) format detection reads at most. */
export const SNIFF_MAX_BYTES = 64 * 1024;

/** Input is handed to the zstd decoder in slices of this size, bounding what one call decompresses. */
const FEED_SLICE_BYTES = 4096;
/** fzstd's error code for input that ends inside a frame. */
const ZSTD_UNEXPECTED_EOF = 5;
const LF = 0x0a;

/** A file found by {@link expandPaths}, with its size in bytes when it was listed. */
export interface InputFile {
  readonly path: string;
  readonly size: number;
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
 * order, following symbolic links but entering each real directory once,
 * and yields the files whose names end in one of {@link REPLAY_FILE_SUFFIXES}
 * or whose first four bytes are zstd magic. A file named twice is listed once.
 *
 * @returns the files and the paths that gave none. Never rejects.
 */
export async function expandPaths(
  paths: readonly string[],
  options: ExpandOptions = {},
): Promise<{ files: InputFile[]; problems: InputPathProblem[] }> {
  const files: InputFile[] = [];
  const problems: InputPathProblem[] = [];
  const seenFiles = new Set<string>();
  const seenDirs = new Set<string>();
  const excluded = new Set<string>();
  for (const dir of options.exclude ?? []) excluded.add(await realOrResolved(dir));
  /** Excluded directories the walk of the current command-line path met (and did not enter). */
  let excludedHits: string[] = [];

  const addFile = (path: string, size: number): void => {
    const key = resolve(path);
    if (seenFiles.has(key)) return;
    seenFiles.add(key);
    files.push({ path, size });
  };

  const walk = async (dir: string): Promise<number> => {
    const real = await realOrResolved(dir);
    if (excluded.has(real)) {
      excludedHits.push(dir);
      return 0;
    }
    if (seenDirs.has(real)) return 0;
    seenDirs.add(real);
    let names: string[];
    try {
      names = (await readdir(dir)).sort();
    } catch (error) {
      problems.push({ path: dir, code: 'unreadable', message: `cannot list the directory: ${errorText(error)}` });
      return 0;
    }
    let found = 0;
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
        found += await walk(path);
      } else if (info.isFile() && (hasReplaySuffix(name) || (await startsWithZstdMagic(path)))) {
        addFile(path, info.size);
        found += 1;
      }
    }
    return found;
  };

  for (const path of paths) {
    let info;
    try {
      info = await stat(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'unreadable';
      problems.push({ path, code, message: code === 'missing' ? 'no such file or directory' : `cannot read: ${errorText(error)}` });
      continue;
    }
    if (info.isFile()) {
      addFile(path, info.size);
      continue;
    }
    if (!info.isDirectory()) {
      // The format is told by reading the start of the file, then the file is read again from its beginning.
      problems.push({ path, code: 'unreadable', message: 'not a regular file (a pipe or device cannot be read twice); save it to a file first' });
      continue;
    }
    excludedHits = [];
    const found = await walk(path);
    if (found === 0 && !problems.some((p) => p.path === path)) {
      problems.push({ path, code: 'no-files', message: noFilesMessage(path, excludedHits) });
    }
  }
  return { files, problems };
}

/**
 * Why a directory gave no input: when the walk skipped excluded directories
 * (the replay's own output directory), say so, because the files are there.
 */
function noFilesMessage(path: string, excludedHits: readonly string[]): string {
  const own = 'is where this replay writes its own telemetry (traces.jsonl and metrics.jsonl hold OTLP JSON, not session logs), so its files are not read; replay session logs or captures, or give --out another directory';
  if (excludedHits.includes(path)) return `this directory ${own}`;
  const none = `no session logs or captures (${REPLAY_FILE_SUFFIXES.join(', ')} or zstd) in this directory`;
  if (excludedHits.length === 0) return none;
  return `${none} outside ${excludedHits.join(', ')}, which ${own}`;
}

/** What {@link sniffFile} found. */
export type SniffResult =
  | { readonly ok: true; readonly format: InputFormat; readonly compression: LogCompression }
  | { readonly ok: false; readonly code: 'unreadable' | 'empty-file' | 'binary' | 'corrupt-zstd' | 'unrecognized'; readonly message: string };

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
export async function sniffFile(path: string): Promise<SniffResult> {
  let head: { bytes: Uint8Array; compression: LogCompression; isComplete: boolean; corrupt?: string };
  try {
    head = await readFirstLine(path);
  } catch (error) {
    return { ok: false, code: 'unreadable', message: `cannot read the file: ${errorText(error)}` };
  }
  const { bytes, compression } = head;
  if (bytes.length === 0) {
    if (head.corrupt !== undefined) return { ok: false, code: 'corrupt-zstd', message: `undecodable zstd data (${head.corrupt})` };
    return { ok: false, code: 'empty-file', message: compression === 'zstd' ? 'the zstd frames hold no data' : 'the file is empty' };
  }
  if (bytes.includes(0)) return { ok: false, code: 'binary', message: 'binary data (a NUL byte in line 1): not a session log or capture' };
  const text = head.isComplete ? decodeUtf8Line(bytes) : decodeUtf8Prefix(bytes);
  if (!text.ok) return { ok: false, code: 'binary', message: 'binary data (line 1 is not UTF-8 text): not a session log or capture' };
  const format = head.isComplete ? formatOfLine(text.text) : formatOfPrefix(text.text);
  if (format !== undefined) return { ok: true, format, compression };
  return {
    ok: false,
    code: 'unrecognized',
    message: 'line 1 is neither a session log header, a capture header nor a JSON-RPC message: not a session log or capture',
  };
}

/** One line of {@link readLines}, or a defect. */
export type InputLine =
  | { readonly kind: 'line'; readonly line: number; readonly bytes: Uint8Array }
  | {
      readonly kind: 'problem';
      readonly line: number;
      readonly code: 'oversized-line' | 'torn-tail' | 'corrupt-zstd' | 'unreadable';
      readonly message: string;
    };

/** Options of {@link readLines}. */
export interface ReadLinesOptions {
  /** Longest line delivered, in bytes; longer ones become `oversized-line`. Default 16 MiB. */
  readonly maxLineBytes?: number;
}

/**
 * Reads NDJSON lines from bytes that are plain text or concatenated zstd
 * frames (detected by magic bytes). Yields each `\n`-terminated line with its
 * 1-based number (a trailing `\r` removed). A last line without `\n` is
 * yielded when it is a complete JSON value (only its newline is missing) and
 * is a `torn-tail` problem otherwise; input ending inside a zstd frame is a
 * `torn-tail` problem after the lines decoded before it. Undecodable zstd
 * data is `corrupt-zstd` and ends reading; an error thrown by `source`
 * becomes `unreadable` (line 0) and ends reading. Never throws; memory is
 * bounded by `maxLineBytes` plus one decompressed slice.
 */
export async function* readLines(source: AsyncIterable<Uint8Array>, options: ReadLinesOptions = {}): AsyncGenerator<InputLine, void, undefined> {
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const splitter = new LineSplitter({ maxLineBytes });
  let lineCount = 0;
  const toLines = (pieces: readonly Uint8Array[]): InputLine[] => {
    const out: InputLine[] = [];
    for (const piece of pieces) {
      for (const item of splitter.push(piece)) {
        lineCount += 1;
        out.push(
          item.kind === 'line'
            ? { kind: 'line', line: lineCount, bytes: item.bytes }
            : { kind: 'problem', line: lineCount, code: 'oversized-line', message: `line of ${item.length} bytes exceeds the ${maxLineBytes}-byte limit; skipped` },
        );
      }
    }
    return out;
  };

  let compression: LogCompression | undefined;
  let zstd: Decompress | undefined;
  let output: Uint8Array[] = [];
  const head: Uint8Array[] = [];
  let headLength = 0;
  const drain = (): Uint8Array[] => {
    const taken = output;
    output = [];
    return taken;
  };
  const corrupt = (error: unknown): InputLine => ({
    kind: 'problem',
    line: lineCount + 1,
    code: 'corrupt-zstd',
    message: `undecodable zstd data after line ${lineCount} (${errorText(error)}); the rest of the file is not read`,
  });
  /** Feeds bytes; @returns the lines they complete, and whether reading must stop. */
  const feed = (chunk: Uint8Array): { lines: InputLine[]; stop: boolean } => {
    if (zstd === undefined) return { lines: toLines([chunk]), stop: false };
    const lines: InputLine[] = [];
    for (let offset = 0; offset < chunk.length; offset += FEED_SLICE_BYTES) {
      try {
        zstd.push(chunk.subarray(offset, offset + FEED_SLICE_BYTES));
      } catch (error) {
        // fzstd throws for undecodable data; blocks it decoded before that still count.
        lines.push(...toLines(drain()), corrupt(error));
        return { lines, stop: true };
      }
      lines.push(...toLines(drain()));
    }
    return { lines, stop: false };
  };
  const start = (bytes: Uint8Array): void => {
    compression = detectCompression(bytes);
    if (compression === 'zstd') {
      zstd = new Decompress((data) => {
        if (data.length > 0) output.push(data);
      });
    }
  };

  try {
    for await (const chunk of source) {
      if (chunk.length === 0) continue;
      let bytes = chunk;
      if (compression === undefined) {
        head.push(chunk);
        headLength += chunk.length;
        if (headLength < 4) continue;
        bytes = Buffer.concat(head, headLength);
        start(bytes);
      }
      const { lines, stop } = feed(bytes);
      yield* lines;
      if (stop) return;
    }
  } catch (error) {
    yield { kind: 'problem', line: 0, code: 'unreadable', message: `reading stopped: ${errorText(error)}` };
    return;
  }
  if (compression === undefined && headLength > 0) {
    const bytes = Buffer.concat(head, headLength);
    start(bytes);
    const { lines, stop } = feed(bytes);
    yield* lines;
    if (stop) return;
  }
  let isTornFrame = false;
  if (zstd !== undefined) {
    try {
      zstd.push(new Uint8Array(0), true);
    } catch (error) {
      const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
      if (code !== ZSTD_UNEXPECTED_EOF) {
        yield* toLines(drain());
        yield corrupt(error);
        return;
      }
      isTornFrame = true;
    }
    yield* toLines(drain());
  }
  const tail = splitter.end();
  if (tail !== undefined) {
    lineCount += 1;
    if (tail.kind === 'line' && isCompleteJson(tail.bytes)) {
      yield { kind: 'line', line: lineCount, bytes: tail.bytes };
    } else {
      const length = tail.kind === 'line' ? tail.bytes.length : tail.length;
      yield { kind: 'problem', line: lineCount, code: 'torn-tail', message: `line ${lineCount} is incomplete: ${length} bytes without a final newline; skipped` };
    }
  }
  if (isTornFrame) yield { kind: 'problem', line: lineCount + 1, code: 'torn-tail', message: 'the file ends inside a zstd frame' };
}


/** Line 1 of a file, decompressed, up to its newline or {@link SNIFF_MAX_BYTES}. Throws only for I/O errors. */
async function readFirstLine(path: string): Promise<{ bytes: Uint8Array; compression: LogCompression; isComplete: boolean; corrupt?: string }> {
  const collected: Uint8Array[] = [];
  let length = 0;
  let compression: LogCompression | undefined;
  let zstd: Decompress | undefined;
  let corrupt: string | undefined;
  const take = (data: Uint8Array): void => {
    if (length < SNIFF_MAX_BYTES && data.length > 0) {
      collected.push(data);
      length += data.length;
    }
  };
  const hasLine = (): boolean => collected.some((piece) => piece.includes(LF)) || length >= SNIFF_MAX_BYTES;
  const pending: Uint8Array[] = [];
  let pendingLength = 0;
  for await (const chunk of fileChunks(path)) {
    let bytes: Uint8Array = chunk;
    if (compression === undefined) {
      pending.push(chunk);
      pendingLength += chunk.length;
      if (pendingLength < 4) continue;
      bytes = Buffer.concat(pending, pendingLength);
      compression = detectCompression(bytes);
      if (compression === 'zstd') zstd = new Decompress(take);
    }
    if (zstd === undefined) {
      take(bytes);
    } else {
      try {
        for (let offset = 0; offset < bytes.length && !hasLine(); offset += FEED_SLICE_BYTES) zstd.push(bytes.subarray(offset, offset + FEED_SLICE_BYTES));
      } catch (error) {
        // Undecodable zstd data: judge what decoded before it.
        corrupt = errorText(error);
        break;
      }
    }
    if (hasLine()) break;
  }
  if (zstd !== undefined && corrupt === undefined && !hasLine()) {
    // End of file before a newline: a final push tells a clean end from a torn or undecodable frame.
    try {
      zstd.push(new Uint8Array(0), true);
    } catch (error) {
      const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
      if (code !== ZSTD_UNEXPECTED_EOF) corrupt = errorText(error);
      else if (length === 0) corrupt = 'the file ends inside its first zstd frame';
    }
  }
  if (compression === undefined) {
    compression = 'plain';
    take(Buffer.concat(pending, pendingLength));
  }
  const all = Buffer.concat(collected, length);
  const newline = all.indexOf(LF);
  const isComplete = newline !== -1 || length < SNIFF_MAX_BYTES;
  let line = newline === -1 ? all.subarray(0, Math.min(all.length, SNIFF_MAX_BYTES)) : all.subarray(0, newline);
  if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
  return { bytes: line, compression, isComplete, ...(corrupt !== undefined ? { corrupt } : {}) };
}

function formatOfLine(text: string): InputFormat | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // SyntaxError: line 1 is not JSON, so the file is none of the known formats.
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  if (isCaptureHeader(value)) return 'capture';
  const record = value as Record<string, unknown>;
  if (record['type'] === 'session') return 'log';
  if ('jsonrpc' in record) return 'ndjson';
  return undefined;
}

/** A line 1 longer than the sniff window: judged by the markers its beginning holds. */
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

function isCompleteJson(bytes: Uint8Array): boolean {
  const decoded = decodeUtf8Line(bytes);
  if (!decoded.ok) return false;
  try {
    JSON.parse(decoded.text);
    return true;
  } catch {
    // SyntaxError: the line was cut before its end.
    return false;
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

function errorText(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== undefined && !error.message.startsWith(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
