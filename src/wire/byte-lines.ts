/**
 * The one byte-level reader of NDJSON files and streams: tells plain text
 * from concatenated zstd frames by magic bytes, decompresses with a bounded
 * window (a frame header declaring more is refused before anything is
 * allocated), splits `\n`-terminated lines with bounded memory, and reports
 * how the input ended (a torn last line, a torn zstd frame, undecodable
 * data, no data at all).
 *
 * Used by every reader of files: durable session logs (`wire/durable-log`),
 * captures and raw NDJSON (`replay/input-files`), and format sniffing. Owns
 * bytes only: it never parses JSON and never decides what a line means.
 * Never throws on content.
 *
 * @module subagent-otel/wire/byte-lines
 */
import { Buffer } from 'node:buffer';
import { DEFAULT_MAX_LINE_BYTES, LineSplitter, type SplitLine } from './ndjson.js';
import { DEFAULT_ZSTD_STALL_TIMEOUT_MS, ZstdDecoder, type ZstdPushResult } from './zstd-decoder.js';

/** How a file's bytes are stored. */
export type LogCompression = 'zstd' | 'plain';

const ZSTD_MAGIC = 0xfd2fb528;
const SKIPPABLE_MAGIC_MIN = 0x184d2a50;
const SKIPPABLE_MAGIC_MAX = 0x184d2a5f;
/**
 * Compressed input is handed to the decoder in slices of this size, so what
 * one call decompresses (and the lines held at once) stays proportional to
 * one slice.
 */
export const FEED_SLICE_BYTES = 4096;

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

/** Default of {@link ByteLineReaderOptions.maxZstdWindowBytes}: 32 MiB (window log 25). */
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
 *
 * Also keeps the compressed offsets of the blocks the decompressor has not
 * finished yet (and of data after the frames that is not a frame), so a
 * failure can be placed at the block it happened in, whatever the chunking.
 */
class ZstdFrameScanner {
  readonly #maxWindow: number;
  #state: ScanState = 'magic';
  /** Compressed offset of the next byte scanned. */
  #position = 0;
  /** Offsets of block headers (and of non-frame data) not yet known to be decoded, in order. */
  #undecoded: number[] = [];
  /** Compressed offset just past the last block seen, while its data has not all been scanned. */
  #openBlockEnd: number | undefined;
  /** Blocks whose data was all scanned during the current `scan` call. */
  #completed = 0;
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
   * @returns `refusal` when `chunk` holds something refused: the offset in
   *   `chunk` where the refused structure starts (0 when it started in an
   *   earlier chunk) and why; after a refusal the scanner ignores all input.
   *   `completedBlocks`: how many blocks' data ends within `chunk` (the
   *   decompressor can finish no block without such bytes).
   */
  scan(chunk: Uint8Array): { readonly refusal?: { readonly at: number; readonly reason: string }; readonly completedBlocks: number } {
    const base = this.#position;
    this.#position += chunk.length;
    this.#completed = 0;
    if (this.#openBlockEnd !== undefined && this.#openBlockEnd <= this.#position) {
      this.#completed += 1;
      this.#openBlockEnd = undefined;
    }
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
      const reason = this.#advance(base + start);
      if (reason !== undefined) {
        this.#state = 'stopped';
        return { refusal: { at: Math.max(0, start), reason: `${reason}, at compressed byte ${base + start}` }, completedBlocks: this.#completed };
      }
    }
    return { completedBlocks: this.#completed };
  }

  /** True once the scanner no longer follows the structure (a refusal, or data that is not a frame). */
  get isStopped(): boolean {
    return this.#state === 'stopped';
  }

  /** Notes that the decompressor finished `count` more blocks. */
  decoded(count: number): void {
    if (count > 0) this.#undecoded.splice(0, count);
  }

  /** Compressed offset of the first block not decoded yet (else of the next byte), where a decoding failure is. */
  get failureOffset(): number {
    return this.#undecoded[0] ?? this.#position;
  }

  /**
   * Consumes `#held` when it completes a structure; returns a refusal reason,
   * if any. `start` is the compressed offset of `#held[0]`.
   */
  #advance(start: number): string | undefined {
    const held = this.#held;
    switch (this.#state) {
      case 'magic': {
        if (held.length < 4) return undefined;
        const magic = ((held[0] ?? 0) | ((held[1] ?? 0) << 8) | ((held[2] ?? 0) << 16) | ((held[3] ?? 0) << 24)) >>> 0;
        this.#held = [];
        if (magic === ZSTD_MAGIC) this.#state = 'frame-header';
        else if (magic >= SKIPPABLE_MAGIC_MIN && magic <= SKIPPABLE_MAGIC_MAX) this.#state = 'skippable-size';
        else {
          this.#state = 'stopped'; // not a frame: the decompressor reports it
          this.#undecoded.push(start);
        }
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
        this.#undecoded.push(start);
        const end = start + 3 + (type === 1 ? 1 : size);
        if (end <= this.#position) this.#completed += 1;
        else this.#openBlockEnd = end;
        this.#skip = (type === 1 ? 1 : size) + (isLast && this.#hasChecksum ? 4 : 0);
        if (isLast) this.#state = 'magic';
        return undefined;
      }
      default:
        return undefined;
    }
  }
}


/** Options of a {@link ByteLineReader}. */
export interface ByteLineReaderOptions {
  /**
   * Longest line kept, in bytes (after decompression). Longer lines are
   * reported as `oversized` without ever being buffered whole.
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
   * Longest time, in ms, zstd decoding may go without finishing a block
   * before the input is given up as `corrupt-zstd` (corrupt frames can make
   * the decoder loop forever). Default 10 s
   * ({@link DEFAULT_ZSTD_STALL_TIMEOUT_MS}); see `wire/zstd-decoder`.
   */
  readonly zstdStallTimeoutMs?: number;
}

/**
 * What the reader delivers, in input order.
 * - `line`: a `\n`-terminated line (a trailing `\r` removed).
 * - `oversized`: a `\n`-terminated line over `maxLineBytes`; its content was dropped.
 * - `corrupt-zstd`: undecodable or refused zstd data, or data the decoder
 *   made no progress on within the stall timeout; the reader stopped.
 *   `reason` ends with `at compressed byte N`: the block (or structure) it
 *   concerns, the same for any chunking.
 * Only from {@link ByteLineReader.end}:
 * - `tail`: bytes after the last `\n` (the caller decides whether they are a
 *   complete record); `isTornFrame` when the input also ended inside a zstd frame.
 * - `torn-frame`: the input ended inside a zstd frame, after the last complete line.
 * - `empty`: no line at all; `hadBytes` false for zero bytes of input, true for zstd frames holding no data.
 */
export type ByteLineItem =
  | { readonly kind: 'line'; readonly bytes: Uint8Array }
  | { readonly kind: 'oversized'; readonly length: number }
  | { readonly kind: 'corrupt-zstd'; readonly reason: string }
  | { readonly kind: 'tail'; readonly line: SplitLine; readonly isTornFrame: boolean }
  | { readonly kind: 'torn-frame' }
  | { readonly kind: 'empty'; readonly hadBytes: boolean };

/**
 * Incremental, synchronous byte reader: push the input's bytes in order,
 * then call `end()` once. The items of any chunking of the same bytes are
 * the same. Memory is bounded by `maxLineBytes` (one unfinished line), one
 * zstd window of at most `maxZstdWindowBytes`, and what one 4 KiB input
 * slice decompresses to; never by the input's size. Never throws on
 * content, and never blocks longer than the stall timeout on zstd data that
 * does not decode. Pushed chunks may be held until more input arrives, so a
 * caller must not modify a chunk after pushing it.
 *
 * zstd is decoded in a worker thread (`wire/zstd-decoder`), started on the
 * first zstd bytes and held until `end()`, `stop()` or `corrupt-zstd`;
 * plain input never starts one. The thread decodes one step ahead of the
 * caller, so the lines of a zstd block may come from the push after the one
 * that completed the block (or from `end()`): which push, depends only on
 * the bytes and their chunking.
 */
export class ByteLineReader {
  readonly #splitter: LineSplitter;
  readonly #maxZstdWindowBytes: number;
  readonly #zstdStallTimeoutMs: number;
  #compression: LogCompression | undefined;
  #head: Uint8Array[] = [];
  #headLength = 0;
  #zstd: ZstdDecoder | undefined;
  #scanner: ZstdFrameScanner | undefined;
  #hadBytes = false;
  #lines = 0;
  #isStopped = false;
  #isEnded = false;

  /** @throws RangeError when `maxLineBytes` is not a non-negative integer (a programming error). */
  constructor(options: ByteLineReaderOptions = {}) {
    this.#splitter = new LineSplitter({ maxLineBytes: options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES });
    this.#maxZstdWindowBytes = options.maxZstdWindowBytes ?? DEFAULT_MAX_ZSTD_WINDOW_BYTES;
    this.#zstdStallTimeoutMs = options.zstdStallTimeoutMs ?? DEFAULT_ZSTD_STALL_TIMEOUT_MS;
    const compression = options.compression ?? 'auto';
    if (compression !== 'auto') this.#start(compression);
  }

  /** The detected (or given) compression; `undefined` until four bytes arrived. */
  get compression(): LogCompression | undefined {
    return this.#compression;
  }

  /** True after `corrupt-zstd` or {@link ByteLineReader.stop}: further input is ignored. */
  get isStopped(): boolean {
    return this.#isStopped;
  }

  /** Bytes of the unfinished line held now. */
  get bufferedBytes(): number {
    return this.#splitter.bufferedBytes;
  }

  /** A copy of the unfinished line held now (for sniffing a long first line by its beginning). */
  pendingBytes(): Uint8Array {
    return this.#splitter.pending();
  }

  /**
   * Stops reading: later pushes and `end()` deliver nothing (the caller
   * decided the input is not worth reading). Frees the zstd decoding thread.
   */
  stop(): void {
    this.#isStopped = true;
    this.#zstd?.close();
  }

  /**
   * Adds the next bytes. @returns the items completed so far and not yet
   * returned (possibly none; zstd lines may come one step late, see above);
   * `[]` once stopped or ended.
   */
  push(chunk: Uint8Array): ByteLineItem[] {
    const items: ByteLineItem[] = [];
    if (this.#isStopped || this.#isEnded || chunk.length === 0) return items;
    this.#hadBytes = true;
    if (this.#compression !== undefined) {
      this.#consume(chunk, items);
      return items;
    }
    this.#head.push(chunk);
    this.#headLength += chunk.length;
    if (this.#headLength >= 4) this.#consumeHead(items);
    return items;
  }

  /**
   * Ends the input. @returns the last items: lines a final zstd flush
   * completes, then at most one of `tail`, `torn-frame`, `corrupt-zstd`,
   * `empty`. `[]` when called again or after the reader stopped.
   */
  end(): ByteLineItem[] {
    const items: ByteLineItem[] = [];
    if (this.#isEnded || this.#isStopped) {
      this.#isEnded = true;
      return items;
    }
    this.#isEnded = true;
    if (this.#compression === undefined && this.#headLength > 0) this.#consumeHead(items);
    if (this.#isStopped) return items;
    let isTornFrame = false;
    if (this.#zstd !== undefined) {
      const result = this.#zstd.end();
      this.#deliver(result, items);
      if (result.failure !== undefined && result.failure.kind !== 'torn') {
        this.#corrupt(result.failure, items);
        return items;
      }
      isTornFrame = result.failure !== undefined;
    }
    const tail = this.#splitter.end();
    if (tail !== undefined) items.push({ kind: 'tail', line: tail, isTornFrame });
    else if (isTornFrame) items.push({ kind: 'torn-frame' });
    else if (this.#lines === 0) items.push({ kind: 'empty', hadBytes: this.#hadBytes });
    return items;
  }

  #start(compression: LogCompression): void {
    this.#compression = compression;
    if (compression === 'zstd') {
      this.#scanner = new ZstdFrameScanner(this.#maxZstdWindowBytes);
      this.#zstd = new ZstdDecoder({ stallTimeoutMs: this.#zstdStallTimeoutMs });
    }
  }

  #consumeHead(items: ByteLineItem[]): void {
    const head = Buffer.concat(this.#head, this.#headLength);
    this.#head = [];
    this.#headLength = 0;
    this.#start(detectCompression(head));
    this.#consume(head, items);
  }

  #consume(chunk: Uint8Array, items: ByteLineItem[]): void {
    if (this.#zstd === undefined) {
      this.#split(chunk, items);
      return;
    }
    for (let offset = 0; offset < chunk.length && !this.#isStopped; offset += FEED_SLICE_BYTES) {
      this.#consumeZstd(chunk.subarray(offset, offset + FEED_SLICE_BYTES), items);
    }
  }

  #consumeZstd(slice: Uint8Array, items: ByteLineItem[]): void {
    const zstd = this.#zstd;
    if (zstd === undefined) return;
    // Refused structure (a huge window, an oversized block): decode what precedes it, then stop.
    const scanner = this.#scanner;
    if (scanner === undefined) return;
    const { refusal, completedBlocks } = scanner.scan(slice);
    const accepted = refusal === undefined ? slice : slice.subarray(0, refusal.at);
    if (accepted.length > 0) {
      // Bytes that complete no block cannot produce output: the decoder may hold them (no thread round trip).
      const result = zstd.push(accepted, { mayHold: completedBlocks === 0 && !scanner.isStopped });
      // Blocks decoded before a failure still count.
      this.#deliver(result, items);
      if (result.failure !== undefined) {
        this.#corrupt(result.failure, items);
        return;
      }
    }
    if (refusal === undefined) return;
    // The blocks before the refused structure come first.
    const rest = zstd.flush();
    this.#deliver(rest, items);
    this.#corrupt(rest.failure ?? { kind: 'refused', message: refusal.reason }, items);
  }

  #deliver(result: ZstdPushResult, items: ByteLineItem[]): void {
    this.#scanner?.decoded(result.blocks.length);
    for (const block of result.blocks) if (block.length > 0) this.#split(block, items);
  }

  #split(bytes: Uint8Array, items: ByteLineItem[]): void {
    for (const line of this.#splitter.push(bytes)) {
      this.#lines += 1;
      items.push(line.kind === 'line' ? { kind: 'line', bytes: line.bytes } : { kind: 'oversized', length: line.length });
    }
  }

  /** Stops on undecodable data; the reason names where it is (already part of a scanner refusal). */
  #corrupt(failure: { readonly kind: string; readonly message: string }, items: ByteLineItem[]): void {
    if (this.#isStopped) return;
    this.#isStopped = true;
    this.#zstd?.close();
    if (failure.kind === 'refused') {
      items.push({ kind: 'corrupt-zstd', reason: failure.message });
      return;
    }
    const at = this.#scanner?.failureOffset ?? 0;
    const reason =
      failure.kind === 'stalled'
        ? `the zstd decoder made no progress for ${this.#zstdStallTimeoutMs / 1000} s on the block at compressed byte ${at} and was stopped: ` +
          'the data is corrupt or made to decode slowly; check the file with `zstd -t`'
        : `${failure.message}, at compressed byte ${at}`;
    items.push({ kind: 'corrupt-zstd', reason });
  }
}
