/**
 * Reads dsh durable session logs (docs/PROTOCOLS.md section 5) at the wire layer: plain
 * `.jsonl` or a concatenation of independent zstd frames, one session per file.
 *
 * Gets its lines from the one byte reader (`wire/byte-lines`: compression
 * detection, bounded zstd decompression, NDJSON framing, torn tails) and owns
 * what a log line is: JSON parsing, a minimal check of the header
 * line, and the expansion of packed chunk rows (`text-chunks`,
 * `reasoning-chunks`, `tool-call-chunks`) into plain `assistant/chunk` event
 * objects. Event lines are yielded as parsed JSON, unvalidated: validating
 * them as session events is left to the caller (`wire/events`), and grouping
 * them into runs to `observe/`.
 *
 * Bad content never throws. Each defect becomes a `problem` record at its line
 * and reading goes on where it can (a torn last line, a torn last zstd frame,
 * a line that is not JSON); it stops only where resyncing is impossible (a
 * corrupt zstd frame) or the file is not a session log at all. Memory is
 * bounded by `maxLineBytes` plus what one small input slice decompresses to,
 * never by the file's size.
 *
 * @module subagent-otel/wire/durable-log
 */

import * as z from 'zod';
import {
  ByteLineReader,
  DEFAULT_MAX_ZSTD_WINDOW_BYTES,
  detectCompression,
  type ByteLineItem,
  type LogCompression,
} from './byte-lines.js';
import { fileChunks } from './file-chunks.js';
import { DEFAULT_MAX_LINE_BYTES, decodeUtf8Line } from './ndjson.js';
import type { SplitLine } from './ndjson.js';
import { errorMessage } from './error-text.js';
import { isJsonObject } from './json-values.js';

export { DEFAULT_MAX_ZSTD_WINDOW_BYTES, detectCompression, type LogCompression };

/** Input is handed to the reader in slices of this size, so records come in small batches. */
const FEED_SLICE_BYTES = 4096;

/**
 * The header line, checked minimally (`type: 'session'`, string `id`). Other
 * fields (`version`, `cwd`, `createdAt`, `parentSession`, `seedLength`,
 * `delegationDepth`, ...) pass through verbatim and unvalidated.
 */
export interface DurableLogHeader {
  readonly type: 'session';
  readonly id: string;
  readonly [field: string]: unknown;
}

/**
 * Why a line or a file could not be read.
 * - `unreadable`: the file could not be opened or read (file-level, line 0).
 * - `empty-file`: no bytes, or zstd frames that hold no data (line 0).
 * - `not-a-session-log`: line 1 is not a session header; reading stops.
 * - `not-json`, `not-object`, `invalid-utf8`, `oversized-line`: one line skipped.
 * - `bad-packed-row`: a packed chunk row that does not match docs/PROTOCOLS.md section 5; skipped.
 * - `corrupt-zstd`: undecodable zstd data; reading stops, earlier records stand.
 * - `torn-tail`: the file ends inside a line or a zstd frame (a crash mid-append).
 * - `too-many-problems`: {@link MAX_PROBLEMS_PER_FILE} defective lines; reading
 *   stops, earlier records stand (a garbage or decompression-bomb file cannot
 *   flood the caller with problem records).
 */
export const DURABLE_LOG_PROBLEM_CODES = [
  'unreadable',
  'empty-file',
  'not-a-session-log',
  'not-json',
  'not-object',
  'invalid-utf8',
  'oversized-line',
  'bad-packed-row',
  'corrupt-zstd',
  'torn-tail',
  'too-many-problems',
] as const;

/** Defective lines reported per file before reading stops with `too-many-problems`. */
export const MAX_PROBLEMS_PER_FILE = 1000;

/** One of {@link DURABLE_LOG_PROBLEM_CODES}. */
export type DurableLogProblemCode = (typeof DURABLE_LOG_PROBLEM_CODES)[number];

/** Line 1, a session header. */
export interface DurableLogHeaderRecord {
  readonly kind: 'header';
  readonly line: 1;
  readonly value: DurableLogHeader;
}

/**
 * One session event as parsed JSON: an event line verbatim, or one member of
 * an expanded packed row (then `member` is its index in the row, and `line`
 * is the row's line). `value` is always a plain JSON object, not yet
 * validated as a session event.
 */
export interface DurableLogEventRecord {
  readonly kind: 'event';
  readonly line: number;
  readonly value: Record<string, unknown>;
  readonly member?: number;
}

/**
 * A defect, at the 1-based `line` it concerns; `line` is 0 for problems about
 * the file as a whole (`unreadable`, `empty-file`). `message` describes it
 * without quoting the line's content.
 */
export interface DurableLogProblem {
  readonly kind: 'problem';
  readonly line: number;
  readonly code: DurableLogProblemCode;
  readonly message: string;
}

/** What reading a durable log yields, in file order. */
export type DurableLogRecord = DurableLogHeaderRecord | DurableLogEventRecord | DurableLogProblem;

/** Options of {@link readDurableLog}, {@link readDurableLogFile} and {@link DurableLogDecoder}. */
export interface ReadDurableLogOptions {
  /**
   * Longest line kept, in bytes (after decompression). Longer lines become an
   * `oversized-line` problem without ever being buffered whole.
   * Default 16 MiB ({@link DEFAULT_MAX_LINE_BYTES}).
   */
  readonly maxLineBytes?: number;
  /**
   * Largest zstd window a frame may declare, in bytes. A frame declaring more
   * is refused (`corrupt-zstd`) before anything is allocated for it: the
   * decompressor would otherwise reserve, and copy on every block, whatever
   * window a header claims (up to 2 GiB). Default 32 MiB
   * ({@link DEFAULT_MAX_ZSTD_WINDOW_BYTES}), above what every standard
   * compression level writes.
   */
  readonly maxZstdWindowBytes?: number;
  /** `'auto'` (default) detects by magic bytes with {@link detectCompression}. */
  readonly compression?: 'auto' | LogCompression;
  /**
   * For a scan that looks for a few events: a `\n`-terminated line after
   * line 1 for which it returns false is counted and passed over unparsed
   * (no record, no problem). Default: every line is read.
   */
  readonly lineFilter?: (bytes: Uint8Array) => boolean;
}

const headerSchema = z.looseObject({ type: z.literal('session'), id: z.string() });

/** The three packed chunk row tags of docs/PROTOCOLS.md section 5. */
export const PACKED_ROW_TYPES = ['text-chunks', 'reasoning-chunks', 'tool-call-chunks'] as const;

const safeInteger = z.int();
const runPosition = { turn: z.number(), step: z.number(), index: z.number(), dt: z.array(safeInteger) };
const textRowSchema = z.strictObject({
  type: z.enum(['text-chunks', 'reasoning-chunks']),
  seq0: safeInteger.nonnegative().optional(),
  time0: safeInteger.optional(),
  data: z.strictObject({ ...runPosition, texts: z.array(z.string()).min(1) }),
});
const toolRowSchema = z.strictObject({
  type: z.literal('tool-call-chunks'),
  seq0: safeInteger.nonnegative().optional(),
  time0: safeInteger.optional(),
  data: z.strictObject({
    ...runPosition,
    id: z.string(),
    name: z.string().optional(),
    args: z.array(z.string()).min(1),
  }),
});
const packedRowSchema = z.discriminatedUnion('type', [textRowSchema, toolRowSchema]);

type PackedRow = z.infer<typeof packedRowSchema>;

const TEXT_ROW_KEYS: ReadonlySet<string> = new Set(['type', 'seq0', 'time0', 'data']);
const TEXT_DATA_KEYS: ReadonlySet<string> = new Set(['turn', 'step', 'index', 'dt', 'texts']);
const TOOL_DATA_KEYS: ReadonlySet<string> = new Set(['turn', 'step', 'index', 'dt', 'id', 'name', 'args']);

/** Every own key of `value` is in `allowed` (what a strict object schema checks). */
function hasOnlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key of Object.keys(value)) if (!allowed.has(key)) return false;
  return true;
}

/** A non-empty array of strings, checked with a plain loop. */
function isStringList(value: unknown): value is string[] {
  if (!Array.isArray(value) || value.length === 0) return false;
  for (const item of value) if (typeof item !== 'string') return false;
  return true;
}

/** An array of safe integers, checked with a plain loop. */
function isSafeIntegerList(value: unknown): value is number[] {
  if (!Array.isArray(value)) return false;
  for (const item of value) if (!Number.isSafeInteger(item)) return false;
  return true;
}

/**
 * `packedRowSchema` without zod, whose per-element array checks cost more
 * than parsing the row: a sufficient condition only. It returns the row when
 * the schema surely accepts it, else `undefined` ("ask the schema", which
 * decides and words the problem), so it never accepts what the schema
 * rejects and never changes a message.
 */
function plainPackedRow(row: unknown): PackedRow | undefined {
  if (!isJsonObject(row) || !hasOnlyKeys(row, TEXT_ROW_KEYS)) return undefined;
  const { type, seq0, time0, data } = row;
  if (seq0 !== undefined && (!Number.isSafeInteger(seq0) || (seq0 as number) < 0)) return undefined;
  if ((time0 !== undefined && !Number.isSafeInteger(time0)) || !isJsonObject(data)) return undefined;
  if (
    !Number.isFinite(data['turn']) ||
    !Number.isFinite(data['step']) ||
    !Number.isFinite(data['index']) ||
    !isSafeIntegerList(data['dt'])
  ) {
    return undefined;
  }
  if (type === 'text-chunks' || type === 'reasoning-chunks') {
    return hasOnlyKeys(data, TEXT_DATA_KEYS) && isStringList(data['texts']) ? (row as PackedRow) : undefined;
  }
  if (type === 'tool-call-chunks') {
    const name = data['name'];
    const ok =
      hasOnlyKeys(data, TOOL_DATA_KEYS) &&
      typeof data['id'] === 'string' &&
      (name === undefined || typeof name === 'string') &&
      isStringList(data['args']);
    return ok ? (row as PackedRow) : undefined;
  }
  return undefined;
}

/** Result of {@link expandPackedRow}. */
export type PackedRowExpansion =
  { readonly ok: true; readonly events: Record<string, unknown>[] } | { readonly ok: false; readonly message: string };

/**
 * @returns whether `value` is an object whose `type` is one of the
 *   {@link PACKED_ROW_TYPES} (its shape is checked by {@link expandPackedRow}).
 *   Never throws.
 */
export function isPackedRow(value: unknown): boolean {
  if (!isJsonObject(value)) return false;
  const type = value['type'];
  return PACKED_ROW_TYPES.some((tag) => tag === type);
}

/**
 * Expands a packed chunk row into its member events, exactly as docs/PROTOCOLS.md
 * section 5 says: member k is
 * `{ type: 'assistant/chunk', seq: seq0 + k, time: time0 + dt[0] + ... + dt[k-1], data: { turn, step, chunk } }`
 * (`seq0` and `time0` are each optional, as upstream's recorded snapshots omit
 * them: without `seq0` the members have no `seq`, without `time0` no `time`;
 * a reader then takes their times from the log's other records, as for events)
 * with chunk `{ type: 'text-delta' | 'reasoning-delta', index, text: texts[k] }` or
 * `{ type: 'tool-call-delta', index, id, name?, argumentsDelta: args[k] }` (`name` only when the row has one).
 * So member 0 has `time0`, and `dt` has one entry fewer than the members.
 *
 * @returns `{ ok: true, events }` (at least one event), or `{ ok: false, message }`
 *   when `row` is not a well-formed packed row: an unknown or missing key,
 *   a non-string member, no members, `dt` not one shorter than the members,
 *   a non-integer `seq0`/`time0`/`dt`, or a member seq/time outside the safe
 *   integer range. Never throws, never mutates `row`.
 */
export function expandPackedRow(row: unknown): PackedRowExpansion {
  let packed = plainPackedRow(row);
  if (packed === undefined) {
    const parsed = packedRowSchema.safeParse(row);
    if (!parsed.success) {
      const tag = isJsonObject(row) && typeof row['type'] === 'string' ? row['type'] : 'packed';
      return { ok: false, message: `malformed ${tag} row: ${describeIssues(parsed.error)}` };
    }
    packed = parsed.data;
  }
  const { turn, step, index, dt } = packed.data;
  const members = packed.type === 'tool-call-chunks' ? packed.data.args : packed.data.texts;
  if (dt.length !== members.length - 1) {
    return {
      ok: false,
      message: `malformed ${packed.type} row: dt has ${dt.length} entries for ${members.length} members (expected ${members.length - 1})`,
    };
  }
  const { seq0, time0 } = packed;
  if (seq0 !== undefined && !Number.isSafeInteger(seq0 + members.length - 1)) {
    return { ok: false, message: `malformed ${packed.type} row: member seqs leave the safe integer range` };
  }
  const events: Record<string, unknown>[] = [];
  let time = time0;
  for (let k = 0; k < members.length; k += 1) {
    if (k > 0 && time !== undefined) time += dt[k - 1] ?? 0;
    if (time !== undefined && !Number.isSafeInteger(time)) {
      return { ok: false, message: `malformed ${packed.type} row: member times leave the safe integer range` };
    }
    const member = members[k] ?? '';
    let chunk: Record<string, unknown>;
    if (packed.type === 'tool-call-chunks') {
      const { id, name } = packed.data;
      chunk = { type: 'tool-call-delta', index, id, ...(name === undefined ? {} : { name }), argumentsDelta: member };
    } else {
      chunk = { type: packed.type === 'text-chunks' ? 'text-delta' : 'reasoning-delta', index, text: member };
    }
    // Without `seq0`/`time0` (upstream's recorded snapshots) the members carry no seq/time, as such events do.
    events.push({
      type: 'assistant/chunk',
      ...(seq0 !== undefined ? { seq: seq0 + k } : {}),
      ...(time !== undefined ? { time } : {}),
      data: { turn, step, chunk },
    });
  }
  return { ok: true, events };
}

/**
 * Incremental form of {@link readDurableLog}: push the file's bytes in
 * order (awaiting each push), then call `end()` once. Both return the records completed so
 * far, in file order. The records of any chunking of the same bytes are the same.
 *
 * Never throws on content. After a `not-a-session-log` or `corrupt-zstd`
 * problem it is stopped ({@link DurableLogDecoder.isStopped}) and ignores
 * further input. Pushed chunks may be held (not copied) until more input
 * arrives, so a caller must not modify a chunk after pushing it.
 */
export class DurableLogDecoder {
  readonly #maxLineBytes: number;
  readonly #reader: ByteLineReader;
  readonly #lineFilter: ((bytes: Uint8Array) => boolean) | undefined;
  #problemCount = 0;
  #lineCount = 0;
  #isStopped = false;
  #isEnded = false;

  /** @throws RangeError when `maxLineBytes` is not a non-negative integer (a programming error). */
  constructor(options: ReadDurableLogOptions = {}) {
    this.#maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.#lineFilter = options.lineFilter;
    this.#reader = new ByteLineReader({
      maxLineBytes: this.#maxLineBytes,
      maxZstdWindowBytes: options.maxZstdWindowBytes ?? DEFAULT_MAX_ZSTD_WINDOW_BYTES,
      compression: options.compression ?? 'auto',
    });
  }

  /** True once reading cannot go on (`not-a-session-log`, `corrupt-zstd`, `too-many-problems`). */
  get isStopped(): boolean {
    return this.#isStopped;
  }

  /**
   * Adds the next bytes of the file.
   * @returns the records these bytes complete (possibly none); `[]` once stopped or ended.
   */
  async push(chunk: Uint8Array): Promise<DurableLogRecord[]> {
    const records: DurableLogRecord[] = [];
    if (this.#isStopped || this.#isEnded) return records;
    this.#interpretItems(await this.#reader.push(chunk), records);
    return records;
  }

  /**
   * Ends the file.
   * @returns the last records: an unterminated last line that is a complete
   *   JSON object (kept as a record), a `torn-tail` problem when the file ends
   *   inside a line or a zstd frame, `corrupt-zstd` for undecodable trailing
   *   data, or `empty-file` when there were no lines at all. `[]` when called
   *   again, or after the decoder stopped.
   */
  async end(): Promise<DurableLogRecord[]> {
    const records: DurableLogRecord[] = [];
    if (this.#isEnded || this.#isStopped) {
      this.#isEnded = true;
      return records;
    }
    this.#isEnded = true;
    this.#interpretItems(await this.#reader.end(), records);
    return records;
  }

  #interpretItems(items: readonly ByteLineItem[], out: DurableLogRecord[]): void {
    for (const item of items) {
      if (this.#isStopped) return;
      switch (item.kind) {
        case 'line':
        case 'oversized': {
          const before = out.length;
          this.#interpret(
            item.kind === 'line' ? { kind: 'line', bytes: item.bytes } : { kind: 'oversized', length: item.length },
            out,
          );
          for (let i = before; i < out.length; i += 1) if (out[i]?.kind === 'problem') this.#problemCount += 1;
          if (this.#problemCount >= MAX_PROBLEMS_PER_FILE && !this.#isStopped) {
            this.#stop();
            out.push(
              problem(
                this.#lineCount,
                'too-many-problems',
                `${MAX_PROBLEMS_PER_FILE} defective lines by line ${this.#lineCount}; the rest of the file is not read`,
              ),
            );
          }
          break;
        }
        case 'corrupt-zstd':
          this.#isStopped = true;
          out.push(
            problem(
              this.#lineCount + 1,
              'corrupt-zstd',
              `undecodable zstd data after line ${this.#lineCount} (${item.reason}); the rest of the file is not read`,
            ),
          );
          break;
        case 'tail':
          this.#interpretTail(item.line, item.isTornFrame, out);
          break;
        case 'torn-frame':
          out.push(problem(this.#lineCount + 1, 'torn-tail', 'the file ends inside a zstd frame'));
          break;
        case 'empty':
          out.push(problem(0, 'empty-file', item.hadBytes ? 'the zstd frames hold no data' : 'the file is empty'));
          break;
      }
    }
  }

  #stop(): void {
    this.#isStopped = true;
    this.#reader.stop();
  }

  /** A `\n`-terminated line. */
  #interpret(item: SplitLine, out: DurableLogRecord[]): void {
    const line = ++this.#lineCount;
    if (item.kind === 'oversized') {
      const why = `line ${line} is ${item.length} bytes, over the ${this.#maxLineBytes}-byte line limit`;
      out.push(
        line === 1
          ? this.#notALog(`${why}; expected a session header`)
          : problem(line, 'oversized-line', `${why}; skipped`),
      );
      return;
    }
    if (line > 1 && this.#lineFilter?.(item.bytes) === false) return;
    const decoded = decodeUtf8Line(item.bytes);
    if (!decoded.ok) {
      out.push(
        line === 1
          ? this.#notALog('line 1 is not valid UTF-8')
          : problem(line, 'invalid-utf8', `line ${line} is not valid UTF-8`),
      );
      return;
    }
    const parsed = parseJson(decoded.text);
    if (!parsed.ok) {
      const what = `line ${line} is ${decoded.text.trim() === '' ? 'blank' : 'not valid JSON'}`;
      out.push(line === 1 ? this.#notALog(what) : problem(line, 'not-json', what));
      return;
    }
    if (!isJsonObject(parsed.value)) {
      const what = `line ${line} is JSON ${jsonKind(parsed.value)}, not an object`;
      out.push(line === 1 ? this.#notALog(what) : problem(line, 'not-object', what));
      return;
    }
    this.#interpretObject(line, parsed.value, out);
  }

  #interpretObject(line: number, value: Record<string, unknown>, out: DurableLogRecord[]): void {
    if (line === 1) {
      const header = headerSchema.safeParse(value);
      out.push(
        header.success
          ? { kind: 'header', line: 1, value: header.data }
          : this.#notALog(`line 1 is not a session header (${describeIssues(header.error)})`),
      );
      return;
    }
    if (!isPackedRow(value)) {
      out.push({ kind: 'event', line, value });
      return;
    }
    const expansion = expandPackedRow(value);
    if (!expansion.ok) {
      out.push(problem(line, 'bad-packed-row', `line ${line}: ${expansion.message}`));
      return;
    }
    expansion.events.forEach((event, member) => out.push({ kind: 'event', line, value: event, member }));
  }

  /** The unterminated last line. A complete JSON object is kept: only its newline is missing. */
  #interpretTail(tail: SplitLine, isTornFrame: boolean, out: DurableLogRecord[]): void {
    const line = ++this.#lineCount;
    if (tail.kind === 'line') {
      const decoded = decodeUtf8Line(tail.bytes);
      const parsed = decoded.ok ? parseJson(decoded.text) : undefined;
      if (parsed?.ok === true && isJsonObject(parsed.value)) {
        this.#interpretObject(line, parsed.value, out);
        if (isTornFrame && !this.#isStopped) {
          out.push(problem(line + 1, 'torn-tail', 'the file ends inside a zstd frame'));
        }
        return;
      }
      const isJsonStart = decoded.ok && decoded.text.trimStart().startsWith('{');
      if (line === 1 && !isJsonStart) {
        out.push(this.#notALog('line 1 is not a session header'));
        return;
      }
    }
    const length = tail.kind === 'line' ? tail.bytes.length : tail.length;
    const frameNote = isTornFrame ? ', and the file ends inside a zstd frame' : '';
    out.push(
      problem(line, 'torn-tail', `line ${line} is incomplete: ${length} bytes without a final newline${frameNote}`),
    );
  }

  #notALog(message: string): DurableLogProblem {
    this.#stop();
    return problem(1, 'not-a-session-log', `${message}; not a session log, the file is not read further`);
  }
}

/**
 * Reads one durable session log from a byte stream (plain JSONL or
 * concatenated zstd frames, detected by magic bytes unless
 * `options.compression` says).
 *
 * Yields, in file order: `{ kind: 'header', line: 1, value }`; one
 * `{ kind: 'event', line, value }` per event line (parsed JSON, unvalidated)
 * and per member of an expanded packed row; a `{ kind: 'problem', line, code,
 * message }` for each defect (see {@link DURABLE_LOG_PROBLEM_CODES}). All
 * complete records before a torn tail or a corrupt zstd frame are yielded.
 *
 * Never throws for bad content: only errors thrown by iterating `source`
 * (the caller's I/O) propagate. Stops pulling from `source` (and returns it)
 * after `not-a-session-log` or `corrupt-zstd`. Memory is bounded by
 * `maxLineBytes` plus what a 4 KiB slice of input decompresses to (blocks
 * are at most 128 KiB, so at most 128 MiB for a slice of repeated-byte
 * blocks), plus one zstd window of at most `maxZstdWindowBytes`; never by
 * the file size.
 */
export async function* readDurableLog(
  source: AsyncIterable<Uint8Array>,
  options: ReadDurableLogOptions = {},
): AsyncGenerator<DurableLogRecord, void, undefined> {
  for await (const batch of readDurableLogBatches(source, options)) yield* batch;
}

/**
 * {@link readDurableLog} in batches: the same records in the same order,
 * yielded as one array per 4 KiB slice of input (empty batches are skipped),
 * so a consumer that handles records synchronously pays one asynchronous
 * step per slice instead of one per record. Same contract otherwise.
 */
export async function* readDurableLogBatches(
  source: AsyncIterable<Uint8Array>,
  options: ReadDurableLogOptions = {},
): AsyncGenerator<DurableLogRecord[], void, undefined> {
  const decoder = new DurableLogDecoder(options);
  for await (const chunk of source) {
    for (let offset = 0; offset < chunk.length; offset += FEED_SLICE_BYTES) {
      const batch = await decoder.push(chunk.subarray(offset, offset + FEED_SLICE_BYTES));
      if (batch.length > 0) yield batch;
      if (decoder.isStopped) return;
    }
  }
  const tail = await decoder.end();
  if (tail.length > 0) yield tail;
}

/** Marks an error thrown while reading the file, as opposed to one of ours. */
class FileReadError extends Error {
  constructor(readonly original: unknown) {
    super(errorMessage(original));
  }
}

async function* fileChunksOf(path: string): AsyncGenerator<Uint8Array, void, undefined> {
  try {
    yield* fileChunks(path);
  } catch (error) {
    throw new FileReadError(error);
  }
}

/**
 * Reads the durable session log at `path`: {@link readDurableLog} over a file
 * stream. Compression is chosen by the file's magic bytes, never by its
 * extension (a `.jsonl.zstd` that holds plain text is read as plain text).
 *
 * A file that cannot be opened or read (missing, a directory, no permission,
 * an I/O error part-way) yields one `{ kind: 'problem', code: 'unreadable',
 * line: 0, message }` (after any records already read) instead of throwing.
 * Never throws or rejects for a missing file or bad content; the file is
 * closed when iteration ends, early `return()` included.
 */
export async function* readDurableLogFile(
  path: string,
  options: ReadDurableLogOptions = {},
): AsyncGenerator<DurableLogRecord, void, undefined> {
  try {
    yield* readDurableLog(fileChunksOf(path), options);
  } catch (error) {
    if (!(error instanceof FileReadError)) throw error;
    yield problem(0, 'unreadable', `cannot read ${path}: ${error.message}`);
  }
}

function problem(line: number, code: DurableLogProblemCode, message: string): DurableLogProblem {
  return { kind: 'problem', line, code, message };
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    // JSON.parse throws only SyntaxError: the line is not JSON, reported by the caller.
    return { ok: false };
  }
}

function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** At most three zod issues, as `path: message`; paths of JSON data hold only keys and indexes. */
function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length === 0 ? '(value)' : issue.path.map(String).join('.')}: ${issue.message}`)
    .join('; ');
}
