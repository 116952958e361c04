/**
 * Reads dsh durable session logs (WIRE.md section 5) at the wire layer: plain
 * `.jsonl` or a concatenation of independent zstd frames, one session per file.
 *
 * Owns byte-level reading only: compression detection, streaming zstd
 * decompression, NDJSON framing, JSON parsing, a minimal check of the header
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

import { Buffer } from 'node:buffer';
import { Decompress } from 'fzstd';
import { fileChunks } from './file-chunks.js';
import * as z from 'zod';
import { DEFAULT_MAX_LINE_BYTES, LineSplitter, decodeUtf8Line } from './ndjson.js';
import type { SplitLine } from './ndjson.js';

/** How a durable log's bytes are stored. */
export type LogCompression = 'zstd' | 'plain';

const ZSTD_MAGIC = 0xfd2fb528;
const SKIPPABLE_MAGIC_MIN = 0x184d2a50;
const SKIPPABLE_MAGIC_MAX = 0x184d2a5f;
/** fzstd's error code for input that ends inside a frame. */
const ZSTD_UNEXPECTED_EOF = 5;
/**
 * Input is handed to the decoder in slices of this size, so the records (and
 * decompressed bytes) held at once stay proportional to one slice.
 */
const FEED_SLICE_BYTES = 4096;

/**
 * Tells a zstd stream from plain text by its first four bytes.
 *
 * @returns `'zstd'` when the bytes start with the zstd frame magic
 *   `28 B5 2F FD` or a skippable-frame magic (`0x184D2A50`..`0x184D2A5F`,
 *   little-endian); otherwise (fewer than four bytes included) `'plain'`.
 *   Never throws; looks only at the bytes, never at a file name.
 */
export function detectCompression(firstBytes: Uint8Array): LogCompression {
  if (firstBytes.length < 4) return 'plain';
  const magic =
    ((firstBytes[0] ?? 0) | ((firstBytes[1] ?? 0) << 8) | ((firstBytes[2] ?? 0) << 16) | ((firstBytes[3] ?? 0) << 24)) >>> 0;
  if (magic === ZSTD_MAGIC) return 'zstd';
  if (magic >= SKIPPABLE_MAGIC_MIN && magic <= SKIPPABLE_MAGIC_MAX) return 'zstd';
  return 'plain';
}

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
 * - `bad-packed-row`: a packed chunk row that does not match WIRE.md section 5; skipped.
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
}

const headerSchema = z.looseObject({ type: z.literal('session'), id: z.string() });

/** The three packed chunk row tags of WIRE.md section 5. */
export const PACKED_ROW_TYPES = ['text-chunks', 'reasoning-chunks', 'tool-call-chunks'] as const;

const safeInteger = z.int();
const runPosition = { turn: z.number(), step: z.number(), index: z.number(), dt: z.array(safeInteger) };
const textRowSchema = z.strictObject({
  type: z.enum(['text-chunks', 'reasoning-chunks']),
  seq0: safeInteger.nonnegative(),
  time0: safeInteger,
  data: z.strictObject({ ...runPosition, texts: z.array(z.string()).min(1) }),
});
const toolRowSchema = z.strictObject({
  type: z.literal('tool-call-chunks'),
  seq0: safeInteger.nonnegative(),
  time0: safeInteger,
  data: z.strictObject({ ...runPosition, id: z.string(), name: z.string().optional(), args: z.array(z.string()).min(1) }),
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
  if (!isPlainObject(row) || !hasOnlyKeys(row, TEXT_ROW_KEYS)) return undefined;
  const { type, seq0, time0, data } = row;
  if (!Number.isSafeInteger(seq0) || (seq0 as number) < 0 || !Number.isSafeInteger(time0) || !isPlainObject(data)) return undefined;
  if (!Number.isFinite(data['turn']) || !Number.isFinite(data['step']) || !Number.isFinite(data['index']) || !isSafeIntegerList(data['dt'])) {
    return undefined;
  }
  if (type === 'text-chunks' || type === 'reasoning-chunks') {
    return hasOnlyKeys(data, TEXT_DATA_KEYS) && isStringList(data['texts']) ? (row as PackedRow) : undefined;
  }
  if (type === 'tool-call-chunks') {
    const name = data['name'];
    const ok = hasOnlyKeys(data, TOOL_DATA_KEYS) && typeof data['id'] === 'string' && (name === undefined || typeof name === 'string') && isStringList(data['args']);
    return ok ? (row as PackedRow) : undefined;
  }
  return undefined;
}

/** Result of {@link expandPackedRow}. */
export type PackedRowExpansion =
  | { readonly ok: true; readonly events: Record<string, unknown>[] }
  | { readonly ok: false; readonly message: string };

/**
 * @returns whether `value` is an object whose `type` is one of the
 *   {@link PACKED_ROW_TYPES} (its shape is checked by {@link expandPackedRow}).
 *   Never throws.
 */
export function isPackedRow(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  const type = value['type'];
  return PACKED_ROW_TYPES.some((tag) => tag === type);
}

/**
 * Expands a packed chunk row into its member events, exactly as WIRE.md
 * section 5 says: member k is
 * `{ type: 'assistant/chunk', seq: seq0 + k, time: time0 + dt[0] + ... + dt[k-1], data: { turn, step, chunk } }`
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
      const tag = isPlainObject(row) && typeof row['type'] === 'string' ? row['type'] : 'packed';
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
  if (!Number.isSafeInteger(packed.seq0 + members.length - 1)) {
    return { ok: false, message: `malformed ${packed.type} row: member seqs leave the safe integer range` };
  }
  const events: Record<string, unknown>[] = [];
  let time = packed.time0;
  for (let k = 0; k < members.length; k += 1) {
    if (k > 0) time += dt[k - 1] ?? 0;
    if (!Number.isSafeInteger(time)) {
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
    events.push({ type: 'assistant/chunk', seq: packed.seq0 + k, time, data: { turn, step, chunk } });
  }
  return { ok: true, events };
}

/** Default of {@link ReadDurableLogOptions.maxZstdWindowBytes}: 32 MiB (window log 25). */
export const DEFAULT_MAX_ZSTD_WINDOW_BYTES = 32 * 1024 * 1024;
/** The zstd format's largest block (Block_Maximum_Size is the smaller of this and the window). */
const ZSTD_MAX_BLOCK_BYTES = 128 * 1024;

type ScanState = 'magic' | 'skippable-size' | 'frame-header' | 'block-header' | 'stopped';

/**
 * Walks the structure of concatenated zstd frames as bytes arrive, without
 * decompressing: frame and skippable-frame headers, block headers, block
 * bodies, checksums. Refuses what the format forbids or this reader will not
 * afford, before the decompressor sees it: a declared window over the limit,
 * a block larger than `min(window, 128 KiB)`, the reserved block type. Leaves
 * every other defect (a bad magic, corrupt block content) to the decompressor.
 */
class ZstdFrameScanner {
  readonly #maxWindow: number;
  #state: ScanState = 'magic';
  /** Bytes of the structure being read (magic, header, block header). */
  #held: number[] = [];
  /** Bytes still to skip (block body, skippable payload, checksum). */
  #skip = 0;
  #window = 0;
  #hasChecksum = false;

  constructor(maxWindow: number) {
    this.#maxWindow = maxWindow;
  }

  /**
   * @returns `undefined` when `chunk` holds nothing refused, else the offset
   *   in `chunk` where the refused structure starts (0 when it started in an
   *   earlier chunk) and why. After a refusal the scanner ignores all input.
   */
  scan(chunk: Uint8Array): { readonly at: number; readonly reason: string } | undefined {
    let i = 0;
    while (i < chunk.length && this.#state !== 'stopped') {
      if (this.#skip > 0) {
        const step = Math.min(this.#skip, chunk.length - i);
        this.#skip -= step;
        i += step;
        continue;
      }
      const start = i - this.#held.length;
      this.#held.push(chunk[i] ?? 0);
      i += 1;
      const reason = this.#advance();
      if (reason !== undefined) {
        this.#state = 'stopped';
        return { at: Math.max(0, start), reason };
      }
    }
    return undefined;
  }

  /** Consumes `#held` when it completes a structure; returns a refusal reason, if any. */
  #advance(): string | undefined {
    const held = this.#held;
    switch (this.#state) {
      case 'magic': {
        if (held.length < 4) return undefined;
        const magic = ((held[0] ?? 0) | ((held[1] ?? 0) << 8) | ((held[2] ?? 0) << 16) | ((held[3] ?? 0) << 24)) >>> 0;
        this.#held = [];
        if (magic === ZSTD_MAGIC) this.#state = 'frame-header';
        else if (magic >= SKIPPABLE_MAGIC_MIN && magic <= SKIPPABLE_MAGIC_MAX) this.#state = 'skippable-size';
        else this.#state = 'stopped'; // not a frame: the decompressor reports it
        return undefined;
      }
      case 'skippable-size': {
        if (held.length < 4) return undefined;
        this.#skip = ((held[0] ?? 0) | ((held[1] ?? 0) << 8) | ((held[2] ?? 0) << 16) | ((held[3] ?? 0) << 24)) >>> 0;
        this.#held = [];
        this.#state = 'magic';
        return undefined;
      }
      case 'frame-header': {
        const descriptor = held[0] ?? 0;
        const isSingleSegment = (descriptor & 0x20) !== 0;
        const sizeFlag = descriptor >> 6;
        const dictionaryBytes = [0, 1, 2, 4][descriptor & 3] ?? 0;
        const sizeBytes = sizeFlag === 0 ? (isSingleSegment ? 1 : 0) : (1 << sizeFlag);
        const length = 1 + (isSingleSegment ? 0 : 1) + dictionaryBytes + sizeBytes;
        if (held.length < length) return undefined;
        let window: number;
        if (isSingleSegment) {
          // The window is the content size (little-endian; 2-byte sizes are offset by 256).
          window = 0;
          for (let k = sizeBytes - 1; k >= 0; k -= 1) window = window * 256 + (held[length - sizeBytes + k] ?? 0);
          if (sizeBytes === 2) window += 256;
        } else {
          const windowDescriptor = held[1] ?? 0;
          const base = 2 ** (10 + (windowDescriptor >> 3));
          window = base + (base / 8) * (windowDescriptor & 7);
        }
        this.#held = [];
        if (window > this.#maxWindow) {
          return `a zstd frame declares a ${window}-byte window, over the ${this.#maxWindow}-byte limit`;
        }
        this.#window = window;
        this.#hasChecksum = (descriptor & 0x04) !== 0;
        this.#state = 'block-header';
        return undefined;
      }
      case 'block-header': {
        if (held.length < 3) return undefined;
        const header = (held[0] ?? 0) | ((held[1] ?? 0) << 8) | ((held[2] ?? 0) << 16);
        this.#held = [];
        const isLast = (header & 1) === 1;
        const type = (header >> 1) & 3;
        const size = header >>> 3;
        if (type === 3) return 'a zstd block has the reserved block type';
        // Block_Maximum_Size: the smaller of the window and 128 KiB, for the stored size of every block type.
        const maxBlock = Math.min(this.#window, ZSTD_MAX_BLOCK_BYTES);
        if (size > maxBlock) return `a zstd block of ${size} bytes exceeds the ${maxBlock}-byte block limit of its frame`;
        this.#skip = (type === 1 ? 1 : size) + (isLast && this.#hasChecksum ? 4 : 0);
        if (isLast) this.#state = 'magic';
        return undefined;
      }
      default:
        return undefined;
    }
  }
}

/**
 * Incremental, synchronous form of {@link readDurableLog}: push the file's
 * bytes in order, then call `end()` once. Both return the records completed so
 * far, in file order. The records of any chunking of the same bytes are the same.
 *
 * Never throws on content. After a `not-a-session-log` or `corrupt-zstd`
 * problem it is stopped ({@link DurableLogDecoder.isStopped}) and ignores
 * further input. Pushed chunks may be held (not copied) until more input
 * arrives, so a caller must not modify a chunk after pushing it.
 */
export class DurableLogDecoder {
  readonly #maxLineBytes: number;
  readonly #splitter: LineSplitter;
  #compression: LogCompression | undefined;
  #head: Uint8Array[] = [];
  #headLength = 0;
  #zstd: Decompress | undefined;
  #zstdScanner: ZstdFrameScanner | undefined;
  readonly #maxZstdWindowBytes: number;
  #zstdOutput: Uint8Array[] = [];
  #problemCount = 0;
  #lineCount = 0;
  #isStopped = false;
  #isEnded = false;

  /** @throws RangeError when `maxLineBytes` is not a non-negative integer (a programming error). */
  constructor(options: ReadDurableLogOptions = {}) {
    this.#maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.#maxZstdWindowBytes = options.maxZstdWindowBytes ?? DEFAULT_MAX_ZSTD_WINDOW_BYTES;
    this.#splitter = new LineSplitter({ maxLineBytes: this.#maxLineBytes });
    const compression = options.compression ?? 'auto';
    if (compression !== 'auto') this.#start(compression);
  }

  /** True once reading cannot go on (`not-a-session-log`, `corrupt-zstd`). */
  get isStopped(): boolean {
    return this.#isStopped;
  }

  /**
   * Adds the next bytes of the file.
   * @returns the records these bytes complete (possibly none); `[]` once stopped or ended.
   */
  push(chunk: Uint8Array): DurableLogRecord[] {
    const records: DurableLogRecord[] = [];
    if (this.#isStopped || this.#isEnded || chunk.length === 0) return records;
    if (this.#compression !== undefined) {
      this.#consume(chunk, records);
      return records;
    }
    this.#head.push(chunk);
    this.#headLength += chunk.length;
    if (this.#headLength >= 4) this.#consumeHead(records);
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
  end(): DurableLogRecord[] {
    const records: DurableLogRecord[] = [];
    if (this.#isEnded || this.#isStopped) {
      this.#isEnded = true;
      return records;
    }
    this.#isEnded = true;
    if (this.#compression === undefined) {
      if (this.#headLength === 0) {
        records.push(problem(0, 'empty-file', 'the file is empty'));
        return records;
      }
      this.#consumeHead(records);
    }
    let isTornFrame = false;
    if (this.#zstd !== undefined && !this.#isStopped) {
      try {
        this.#zstd.push(new Uint8Array(0), true);
      } catch (error) {
        this.#drainZstd(records);
        if (zstdErrorCode(error) !== ZSTD_UNEXPECTED_EOF) {
          if (!this.#isStopped) records.push(this.#corrupt(error));
          return records;
        }
        isTornFrame = true;
      }
      this.#drainZstd(records);
    }
    if (this.#isStopped) return records;
    const tail = this.#splitter.end();
    if (tail !== undefined) {
      this.#interpretTail(tail, isTornFrame, records);
    } else if (isTornFrame) {
      records.push(problem(this.#lineCount + 1, 'torn-tail', 'the file ends inside a zstd frame'));
    } else if (this.#lineCount === 0) {
      records.push(problem(0, 'empty-file', 'the zstd frames hold no data'));
    }
    return records;
  }

  #start(compression: LogCompression): void {
    this.#compression = compression;
    if (compression === 'zstd') {
      this.#zstdScanner = new ZstdFrameScanner(this.#maxZstdWindowBytes);
      this.#zstd = new Decompress((data) => {
        if (data.length > 0) this.#zstdOutput.push(data);
      });
    }
  }

  #consumeHead(out: DurableLogRecord[]): void {
    const head = Buffer.concat(this.#head, this.#headLength);
    this.#head = [];
    this.#headLength = 0;
    this.#start(detectCompression(head));
    this.#consume(head, out);
  }

  #consume(chunk: Uint8Array, out: DurableLogRecord[]): void {
    if (this.#zstd === undefined) {
      this.#interpretAll(this.#splitter.push(chunk), out);
      return;
    }
    // Refused structure (a huge window, an oversized block): decode what precedes it, then stop.
    const refusal = this.#zstdScanner?.scan(chunk);
    const accepted = refusal === undefined ? chunk : chunk.subarray(0, refusal.at);
    try {
      if (accepted.length > 0) this.#zstd.push(accepted);
    } catch (error) {
      // fzstd throws for undecodable data; blocks it decoded before that still count.
      this.#drainZstd(out);
      if (!this.#isStopped) out.push(this.#corrupt(error));
      return;
    }
    this.#drainZstd(out);
    if (refusal !== undefined && !this.#isStopped) out.push(this.#corrupt(new Error(refusal.reason)));
  }

  #drainZstd(out: DurableLogRecord[]): void {
    const output = this.#zstdOutput;
    this.#zstdOutput = [];
    for (const block of output) {
      if (this.#isStopped) return;
      this.#interpretAll(this.#splitter.push(block), out);
    }
  }

  #corrupt(error: unknown): DurableLogProblem {
    this.#isStopped = true;
    const reason = error instanceof Error ? error.message : String(error);
    return problem(
      this.#lineCount + 1,
      'corrupt-zstd',
      `undecodable zstd data after line ${this.#lineCount} (${reason}); the rest of the file is not read`,
    );
  }

  #interpretAll(lines: readonly SplitLine[], out: DurableLogRecord[]): void {
    for (const item of lines) {
      if (this.#isStopped) return;
      const before = out.length;
      this.#interpret(item, out);
      for (let i = before; i < out.length; i += 1) if (out[i]?.kind === 'problem') this.#problemCount += 1;
      if (this.#problemCount >= MAX_PROBLEMS_PER_FILE && !this.#isStopped) {
        this.#isStopped = true;
        out.push(problem(this.#lineCount, 'too-many-problems', `${MAX_PROBLEMS_PER_FILE} defective lines by line ${this.#lineCount}; the rest of the file is not read`));
      }
    }
  }

  /** A `\n`-terminated line. */
  #interpret(item: SplitLine, out: DurableLogRecord[]): void {
    const line = ++this.#lineCount;
    if (item.kind === 'oversized') {
      const why = `line ${line} is ${item.length} bytes, over the ${this.#maxLineBytes}-byte line limit`;
      out.push(line === 1 ? this.#notALog(`${why}; expected a session header`) : problem(line, 'oversized-line', `${why}; skipped`));
      return;
    }
    const decoded = decodeUtf8Line(item.bytes);
    if (!decoded.ok) {
      out.push(line === 1 ? this.#notALog('line 1 is not valid UTF-8') : problem(line, 'invalid-utf8', `line ${line} is not valid UTF-8`));
      return;
    }
    const parsed = parseJson(decoded.text);
    if (!parsed.ok) {
      const what = `line ${line} is ${decoded.text.trim() === '' ? 'blank' : 'not valid JSON'}`;
      out.push(line === 1 ? this.#notALog(what) : problem(line, 'not-json', what));
      return;
    }
    if (!isPlainObject(parsed.value)) {
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
      if (parsed?.ok === true && isPlainObject(parsed.value)) {
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
    out.push(problem(line, 'torn-tail', `line ${line} is incomplete: ${length} bytes without a final newline${frameNote}`));
  }

  #notALog(message: string): DurableLogProblem {
    this.#isStopped = true;
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
      const batch = decoder.push(chunk.subarray(offset, offset + FEED_SLICE_BYTES));
      if (batch.length > 0) yield batch;
      if (decoder.isStopped) return;
    }
  }
  const tail = decoder.end();
  if (tail.length > 0) yield tail;
}

/** Marks an error thrown while reading the file, as opposed to one of ours. */
class FileReadError extends Error {
  constructor(readonly original: unknown) {
    super(original instanceof Error ? original.message : String(original));
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

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function zstdErrorCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
}

/** At most three zod issues, as `path: message`; paths of JSON data hold only keys and indexes. */
function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length === 0 ? '(value)' : issue.path.map(String).join('.')}: ${issue.message}`)
    .join('; ');
}
