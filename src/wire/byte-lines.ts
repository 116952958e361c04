/**
 * The one byte-level reader of NDJSON files and streams: tells plain text
 * from concatenated zstd frames by magic bytes, decompresses with a bounded
 * window (a frame header declaring more is refused before anything is
 * allocated), splits `\n`-terminated lines with bounded memory, and reports
 * how the input ended (a torn last line, a torn zstd frame, undecodable
 * data, no data at all). zstd goes through Node's libzstd (`wire/zstd`), fed
 * frame by frame as the scanner here finds the frames' ends.
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
import { zstdInflater, type ZstdInflater } from './zstd.js';

/** How a file's bytes are stored. */
export type LogCompression = 'zstd' | 'plain';

const ZSTD_MAGIC = 0xfd2fb528;
const SKIPPABLE_MAGIC_MIN = 0x184d2a50;
const SKIPPABLE_MAGIC_MAX = 0x184d2a5f;
/**
 * Compressed input is handed to the decompressor in slices of this size, so
 * what one step decompresses (and the lines held at once) stays proportional
 * to one slice.
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
    ((firstBytes[0] ?? 0) |
      ((firstBytes[1] ?? 0) << 8) |
      ((firstBytes[2] ?? 0) << 16) |
      ((firstBytes[3] ?? 0) << 24)) >>>
    0;
  if (magic === ZSTD_MAGIC) return 'zstd';
  if (magic >= SKIPPABLE_MAGIC_MIN && magic <= SKIPPABLE_MAGIC_MAX) return 'zstd';
  return 'plain';
}

/** Default of {@link ByteLineReaderOptions.maxZstdWindowBytes}: 32 MiB (window log 25). */
export const DEFAULT_MAX_ZSTD_WINDOW_BYTES = 32 * 1024 * 1024;
/** The zstd format's largest block (Block_Maximum_Size is the smaller of this and the window). */
const ZSTD_MAX_BLOCK_BYTES = 128 * 1024;

type ScanState =
  'magic' | 'skippable-size' | 'skippable-body' | 'frame-header' | 'block-header' | 'block-body' | 'stopped';

/** Bytes of one zstd frame for the decompressor, and whether they end it. */
interface FramePart {
  readonly bytes: Uint8Array;
  readonly endsFrame: boolean;
  /** Compressed offset just past these bytes. */
  readonly end: number;
}

/** What one {@link ZstdFrameScanner.scan} found. */
interface ScanResult {
  /** The bytes of zstd frames in the chunk (skippable frames left out), cut at the ends of frames. */
  readonly parts: readonly FramePart[];
  /** Something refused (a window over the limit, a bad block, data that is not a frame), with where it is. */
  readonly refusal?: string;
}

/**
 * Walks the structure of concatenated zstd frames as bytes arrive, without
 * decompressing: frame and skippable-frame headers, block headers, block
 * bodies, checksums. Hands back the bytes of each zstd frame, cut where a
 * frame ends (the decompressor must never be given bytes past a frame's end
 * in one write), and leaves skippable frames out. Refuses what the format
 * forbids or this reader will not afford, before the decompressor sees it: a
 * declared window over the limit, a block larger than `min(window, 128 KiB)`,
 * the reserved block type or header bit, data after a frame that is not a
 * frame. Leaves
 * every other defect (corrupt block content) to the decompressor.
 *
 * Keeps the compressed offsets and ends of the blocks the decompressor has
 * not been seen to finish, so a failure can be placed at the block it
 * happened in, whatever the chunking.
 */
class ZstdFrameScanner {
  readonly #maxWindow: number;
  #state: ScanState = 'magic';
  /** Compressed offset of the next byte scanned. */
  #position = 0;
  /** Blocks written to the decompressor whose end it has not yet been given without failing. */
  #blocks: Array<{ readonly start: number; readonly end: number }> = [];
  /** Bytes of the structure being read (magic, header, block header). */
  #held: number[] = [];
  /** Bytes still to skip (block body, skippable payload, checksum). */
  #skip = 0;
  /** Whether the block being skipped is the frame's last (its end, after the checksum, ends the frame). */
  #isLastBlock = false;
  #window = 0;
  #hasChecksum = false;

  constructor(maxWindow: number) {
    this.#maxWindow = maxWindow;
  }

  /** True when the input so far ends inside a frame (a zstd or skippable frame, or its magic): torn there. Not after a refusal. */
  get isInsideFrame(): boolean {
    if (this.#state === 'stopped') return false;
    return this.#state !== 'magic' || this.#held.length > 0;
  }

  /** Scans the next bytes. After a refusal the scanner ignores all input. */
  scan(chunk: Uint8Array): ScanResult {
    const parts: FramePart[] = [];
    const base = this.#position;
    this.#position += chunk.length;
    /** Start, in `chunk`, of the frame bytes not yet in `parts`; -1 outside a zstd frame. */
    let runStart = this.#isInZstdFrame() ? 0 : -1;
    const cut = (end: number, endsFrame: boolean): void => {
      if (runStart >= 0 && (end > runStart || endsFrame))
        parts.push({ bytes: chunk.subarray(runStart, end), endsFrame, end: base + end });
      runStart = endsFrame ? -1 : end;
    };
    let i = 0;
    while (i < chunk.length && this.#state !== 'stopped') {
      if (this.#skip > 0) {
        const step = Math.min(this.#skip, chunk.length - i);
        this.#skip -= step;
        i += step;
        if (this.#skip === 0) this.#skipped(i, cut);
        continue;
      }
      const start = base + i - this.#held.length;
      this.#held.push(chunk[i] ?? 0);
      i += 1;
      const before = this.#state;
      const reason = this.#advance(start, base + i);
      if (reason !== undefined) {
        cut(Math.max(0, start - base), false);
        this.#state = 'stopped';
        return { parts, refusal: `${reason}, at compressed byte ${start}` };
      }
      if (before === 'magic' && this.#state === 'frame-header') {
        // The magic may have begun in an earlier chunk: its four bytes go over as a part of their own.
        parts.push({ bytes: Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd), endsFrame: false, end: base + i });
        runStart = i;
      } else if (this.#state === 'magic' && before === 'block-header' && this.#skip === 0) {
        cut(i, true); // an empty last block without a checksum ends the frame at its header
      }
    }
    if (this.#state !== 'stopped') cut(chunk.length, false);
    return { parts };
  }

  /** Notes that the decompressor was given everything up to `end` without failing. */
  decodedUpTo(end: number): void {
    let drop = 0;
    while (drop < this.#blocks.length && (this.#blocks[drop]?.end ?? 0) <= end) drop += 1;
    if (drop > 0) this.#blocks.splice(0, drop);
  }

  /** Compressed offset of the first block not seen decoded, where a decoding failure is (else `fallback`). */
  failureOffset(fallback: number): number {
    return this.#blocks[0]?.start ?? fallback;
  }

  #isInZstdFrame(): boolean {
    return this.#state === 'frame-header' || this.#state === 'block-header' || this.#state === 'block-body';
  }

  /** A body (block, checksum, skippable payload) was skipped to its end at `i`. */
  #skipped(i: number, cut: (end: number, endsFrame: boolean) => void): void {
    if (this.#state === 'skippable-body') {
      this.#state = 'magic';
    } else if (this.#isLastBlock) {
      cut(i, true);
      this.#state = 'magic';
    } else {
      this.#state = 'block-header';
    }
  }

  /**
   * Consumes `#held` when it completes a structure; returns a refusal reason,
   * if any. `start` is the compressed offset of `#held[0]`, `next` of the byte after it.
   */
  #advance(start: number, next: number): string | undefined {
    const held = this.#held;
    const u32 = (): number =>
      ((held[0] ?? 0) | ((held[1] ?? 0) << 8) | ((held[2] ?? 0) << 16) | ((held[3] ?? 0) << 24)) >>> 0;
    switch (this.#state) {
      case 'magic': {
        if (held.length < 4) return undefined;
        const magic = u32();
        this.#held = [];
        if (magic === ZSTD_MAGIC) this.#state = 'frame-header';
        else if (magic >= SKIPPABLE_MAGIC_MIN && magic <= SKIPPABLE_MAGIC_MAX) this.#state = 'skippable-size';
        else return 'data that is not a zstd frame (no frame magic number)';
        return undefined;
      }
      case 'skippable-size': {
        if (held.length < 4) return undefined;
        this.#skip = u32();
        this.#held = [];
        this.#state = this.#skip > 0 ? 'skippable-body' : 'magic';
        return undefined;
      }
      case 'frame-header': {
        const descriptor = held[0] ?? 0;
        if ((descriptor & 0x08) !== 0) return 'a zstd frame header has its reserved bit set';
        const isSingleSegment = (descriptor & 0x20) !== 0;
        const sizeFlag = descriptor >> 6;
        const dictionaryBytes = [0, 1, 2, 4][descriptor & 3] ?? 0;
        const sizeBytes = sizeFlag === 0 ? (isSingleSegment ? 1 : 0) : 1 << sizeFlag;
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
        if (size > maxBlock)
          return `a zstd block of ${size} bytes exceeds the ${maxBlock}-byte block limit of its frame`;
        const body = type === 1 ? 1 : size;
        this.#blocks.push({ start, end: next + body });
        this.#isLastBlock = isLast;
        this.#skip = body + (isLast && this.#hasChecksum ? 4 : 0);
        this.#state = this.#skip > 0 ? 'block-body' : isLast ? 'magic' : 'block-header';
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
   * decompressor would otherwise reserve whatever window a header claims (up
   * to 2 GiB). Default 32 MiB ({@link DEFAULT_MAX_ZSTD_WINDOW_BYTES}), above
   * what every standard compression level writes.
   */
  readonly maxZstdWindowBytes?: number;
  /** `'auto'` (default) detects by magic bytes with {@link detectCompression}. */
  readonly compression?: 'auto' | LogCompression;
}

/**
 * What the reader delivers, in input order.
 * - `line`: a `\n`-terminated line (a trailing `\r` removed).
 * - `oversized`: a `\n`-terminated line over `maxLineBytes`; its content was dropped.
 * - `corrupt-zstd`: undecodable or refused zstd data; the reader stopped.
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
 * Incremental byte reader: push the input's bytes in order (awaiting each
 * push), then call `end()` once. The items of any chunking of the same bytes
 * are the same. Memory is bounded by `maxLineBytes` (one unfinished line),
 * one zstd window of at most `maxZstdWindowBytes`, and what one 4 KiB input
 * slice decompresses to; never by the input's size. Never rejects on
 * content. Plain input is split at once (the promise is already settled
 * when returned); zstd input is decompressed by libzstd off the main thread.
 * Pushed chunks may be held until more input arrives, so a caller must not
 * modify a chunk after pushing it.
 */
export class ByteLineReader {
  readonly #splitter: LineSplitter;
  readonly #maxZstdWindowBytes: number;
  #compression: LogCompression | undefined;
  #head: Uint8Array[] = [];
  #headLength = 0;
  #zstd: ZstdInflater | undefined;
  #scanner: ZstdFrameScanner | undefined;
  #hadBytes = false;
  #lines = 0;
  #isStopped = false;
  #isEnded = false;

  /** @throws RangeError when `maxLineBytes` is not a non-negative integer (a programming error). */
  constructor(options: ByteLineReaderOptions = {}) {
    this.#splitter = new LineSplitter({ maxLineBytes: options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES });
    this.#maxZstdWindowBytes = options.maxZstdWindowBytes ?? DEFAULT_MAX_ZSTD_WINDOW_BYTES;
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
   * decided the input is not worth reading). Frees the zstd decompressor.
   */
  stop(): void {
    this.#isStopped = true;
    this.#zstd?.close();
  }

  /**
   * Adds the next bytes. @returns the items they completed (possibly none);
   * `[]` once stopped or ended. Await each push before the next.
   */
  async push(chunk: Uint8Array): Promise<ByteLineItem[]> {
    const items: ByteLineItem[] = [];
    if (this.#isStopped || this.#isEnded || chunk.length === 0) return items;
    this.#hadBytes = true;
    if (this.#compression !== undefined) {
      await this.#consume(chunk, items);
      return items;
    }
    this.#head.push(chunk);
    this.#headLength += chunk.length;
    if (this.#headLength >= 4) await this.#consumeHead(items);
    return items;
  }

  /**
   * Ends the input. @returns the last items: at most one of `tail`,
   * `torn-frame`, `corrupt-zstd`, `empty`. `[]` when called again or after
   * the reader stopped.
   */
  async end(): Promise<ByteLineItem[]> {
    const items: ByteLineItem[] = [];
    if (this.#isEnded || this.#isStopped) {
      this.#isEnded = true;
      return items;
    }
    this.#isEnded = true;
    if (this.#compression === undefined && this.#headLength > 0) await this.#consumeHead(items);
    if (this.#isStopped) return items;
    const isTornFrame = this.#scanner?.isInsideFrame ?? false;
    this.#zstd?.close();
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
      this.#zstd = zstdInflater(this.#maxZstdWindowBytes);
    }
  }

  async #consumeHead(items: ByteLineItem[]): Promise<void> {
    const head = Buffer.concat(this.#head, this.#headLength);
    this.#head = [];
    this.#headLength = 0;
    this.#start(detectCompression(head));
    await this.#consume(head, items);
  }

  async #consume(chunk: Uint8Array, items: ByteLineItem[]): Promise<void> {
    if (this.#zstd === undefined) {
      this.#split(chunk, items);
      return;
    }
    for (let offset = 0; offset < chunk.length && !this.#isStopped; offset += FEED_SLICE_BYTES) {
      await this.#consumeZstd(chunk.subarray(offset, offset + FEED_SLICE_BYTES), items);
    }
  }

  async #consumeZstd(slice: Uint8Array, items: ByteLineItem[]): Promise<void> {
    const zstd = this.#zstd;
    const scanner = this.#scanner;
    if (zstd === undefined || scanner === undefined) return;
    const { parts, refusal } = scanner.scan(slice);
    // The frames (and blocks) before a refused structure are decoded first.
    for (const part of parts) {
      const step = await zstd.write(part.bytes);
      for (const output of step.output) if (output.length > 0) this.#split(output, items);
      if (step.failure !== undefined) {
        this.#corrupt(
          `${step.failure}, at compressed byte ${scanner.failureOffset(part.end - part.bytes.length)}`,
          items,
        );
        return;
      }
      scanner.decodedUpTo(part.end);
    }
    if (refusal !== undefined) this.#corrupt(refusal, items);
  }

  #split(bytes: Uint8Array, items: ByteLineItem[]): void {
    for (const line of this.#splitter.push(bytes)) {
      this.#lines += 1;
      items.push(
        line.kind === 'line' ? { kind: 'line', bytes: line.bytes } : { kind: 'oversized', length: line.length },
      );
    }
  }

  /** Stops on undecodable data; `reason` names where it is. */
  #corrupt(reason: string, items: ByteLineItem[]): void {
    if (this.#isStopped) return;
    this.#isStopped = true;
    this.#zstd?.close();
    items.push({ kind: 'corrupt-zstd', reason });
  }
}
