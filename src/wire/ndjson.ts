/**
 * Streaming NDJSON framing: splits a byte stream into `\n`-terminated lines
 * with bounded memory, and decodes one line as strict UTF-8.
 *
 * Owns framing only. It never parses JSON, never writes to any stream, never
 * throws on malformed input, and never alters the caller's bytes: the stdio
 * proxy forwards its original chunks and hands the same chunks here only to
 * observe lines, so the `\r` stripping below touches the observed copy, never
 * the forwarded bytes. What a line means is left to the callers
 * (JSON-RPC classification, durable-log reading).
 *
 * @module subagent-otel/wire/ndjson
 */

import { Buffer, isUtf8 } from 'node:buffer';

/** Default cap on one line's length in bytes (16 MiB); see {@link LineSplitterOptions.maxLineBytes}. */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

const LF = 0x0a;
const CR = 0x0d;

/** Options of a {@link LineSplitter}. */
export interface LineSplitterOptions {
  /**
   * Longest line, in bytes, that is delivered whole. The length counts every
   * byte before the `\n`, a trailing `\r` included. A longer line is never
   * buffered whole: it is reported as `{ kind: 'oversized', length }` with its
   * content dropped, and splitting resumes after its `\n`.
   * Default {@link DEFAULT_MAX_LINE_BYTES} (16 MiB). Must be a non-negative integer.
   */
  readonly maxLineBytes?: number;
  /**
   * Whether one trailing `\r` is removed from each delivered line (CRLF input).
   * Default `true`. With `false`, the delivered lines joined with `\n` separators
   * reproduce the input exactly (when no line is oversized).
   */
  readonly stripCarriageReturn?: boolean;
}

/**
 * One framed line.
 * - `line`: the bytes before the `\n` (a trailing `\r` removed unless
 *   `stripCarriageReturn: false`).
 * - `oversized`: a line longer than `maxLineBytes`; `length` is its byte count
 *   (the `\n` excluded), its content was dropped.
 */
export type SplitLine =
  { readonly kind: 'line'; readonly bytes: Uint8Array } | { readonly kind: 'oversized'; readonly length: number };

/**
 * Incremental `\n` line splitter with bounded memory and constant work per byte.
 *
 * Feed chunks in order with {@link LineSplitter.push}; call
 * {@link LineSplitter.end} once at end of input to get an unterminated tail.
 * The splitter keeps at most `maxLineBytes` bytes of one unfinished line
 * (plus nothing else): each input byte is scanned once and copied at most twice.
 */
export class LineSplitter {
  readonly #maxLineBytes: number;
  readonly #stripCarriageReturn: boolean;
  /** Copies of the pieces of the unfinished line (empty while skipping). */
  #parts: Uint8Array[] = [];
  /** Length so far of the unfinished line, skipped bytes included. */
  #pendingLength = 0;
  /** True while inside an oversized line: its bytes are counted, not kept. */
  #isSkipping = false;

  /** @throws RangeError when `maxLineBytes` is not a non-negative integer (a programming error, not input). */
  constructor(options: LineSplitterOptions = {}) {
    const max = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    if (!Number.isSafeInteger(max) || max < 0) {
      throw new RangeError(`maxLineBytes must be a non-negative integer, got ${String(max)}`);
    }
    this.#maxLineBytes = max;
    this.#stripCarriageReturn = options.stripCarriageReturn ?? true;
  }

  /** Bytes currently held for the unfinished line; never more than `maxLineBytes`. */
  get bufferedBytes(): number {
    return this.#isSkipping ? 0 : this.#pendingLength;
  }

  /** A copy of the unfinished line held now (empty while skipping an oversized line). Never throws. */
  pending(): Uint8Array {
    return this.#isSkipping ? new Uint8Array(0) : Buffer.concat(this.#parts, this.#pendingLength);
  }

  /**
   * Adds the next chunk of input.
   *
   * @returns the lines completed by this chunk, in order (possibly none).
   *   A line that lies wholly inside `chunk` is a view of `chunk` (no copy);
   *   a line that spans chunks is a fresh buffer. Never throws, never modifies
   *   `chunk`, and never retains it after returning (an unfinished tail is copied).
   */
  push(chunk: Uint8Array): SplitLine[] {
    const lines: SplitLine[] = [];
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(LF, start);
      if (newline === -1) break;
      lines.push(this.#finish(chunk.subarray(start, newline)));
      start = newline + 1;
    }
    if (start < chunk.length) this.#hold(chunk.subarray(start));
    return lines;
  }

  /**
   * Adds the next chunk of input, like {@link LineSplitter.push}, but hands
   * each completed line to `visitor` as a byte range instead of building a
   * view and a record per line: `visitor.line(buffer, start, end)` where
   * `buffer` is `chunk` itself for a line that lies wholly inside it, or a
   * fresh buffer for a line that spans chunks; `visitor.oversized(length)`
   * for a line past the limit. Same lines, same order, same limits and `\r`
   * handling as `push`. The visitor must not retain `buffer` (it may be the
   * caller's chunk). Never throws unless the visitor does.
   */
  pushEach(chunk: Buffer, visitor: LineVisitor): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(LF, start);
      if (newline === -1) break;
      if (this.#pendingLength === 0) {
        let end = newline;
        if (newline - start > this.#maxLineBytes) visitor.oversized(newline - start);
        else {
          if (this.#stripCarriageReturn && end > start && chunk[end - 1] === CR) end -= 1;
          visitor.line(chunk, start, end);
        }
      } else {
        const line = this.#finish(chunk.subarray(start, newline));
        if (line.kind === 'oversized') visitor.oversized(line.length);
        else {
          const bytes = Buffer.from(line.bytes.buffer, line.bytes.byteOffset, line.bytes.byteLength);
          visitor.line(bytes, 0, bytes.length);
        }
      }
      start = newline + 1;
    }
    if (start < chunk.length) this.#hold(chunk.subarray(start));
  }

  /**
   * Ends the input.
   *
   * @returns the unterminated last line (bytes after the last `\n`), as a
   *   `line` or, when it exceeded `maxLineBytes`, an `oversized` entry; or
   *   `undefined` when the input ended with `\n` (or was empty). The splitter
   *   is reset and can be reused. Never throws.
   */
  end(): SplitLine | undefined {
    if (this.#pendingLength === 0) return undefined;
    return this.#finish(new Uint8Array(0));
  }

  #finish(lastPiece: Uint8Array): SplitLine {
    const length = this.#pendingLength + lastPiece.length;
    const isOversized = this.#isSkipping || length > this.#maxLineBytes;
    const parts = this.#parts;
    this.#parts = [];
    this.#pendingLength = 0;
    this.#isSkipping = false;
    if (isOversized) return { kind: 'oversized', length };
    const bytes = parts.length === 0 ? lastPiece : Buffer.concat([...parts, lastPiece], length);
    return { kind: 'line', bytes: this.#stripCr(bytes) };
  }

  #hold(piece: Uint8Array): void {
    this.#pendingLength += piece.length;
    if (this.#isSkipping) return;
    if (this.#pendingLength > this.#maxLineBytes) {
      this.#isSkipping = true;
      this.#parts = [];
      return;
    }
    this.#parts.push(new Uint8Array(piece)); // a copy: the caller's chunk is not retained
  }

  #stripCr(bytes: Uint8Array): Uint8Array {
    if (this.#stripCarriageReturn && bytes.length > 0 && bytes[bytes.length - 1] === CR) {
      return bytes.subarray(0, bytes.length - 1);
    }
    return bytes;
  }
}

/** Receives the lines of {@link LineSplitter.pushEach}. */
export interface LineVisitor {
  /** One complete line: `buffer[start..end)`, without its `\n` (and `\r`, unless kept). */
  line(buffer: Buffer, start: number, end: number): void;
  /** A line longer than the limit, `length` bytes (the `\n` excluded); its content was dropped. */
  oversized(length: number): void;
}

/** Result of {@link decodeUtf8Line}. */
export type Utf8LineResult = { readonly ok: true; readonly text: string } | { readonly ok: false };

/**
 * Decodes one line as strict UTF-8.
 *
 * @returns `{ ok: true, text }` for well-formed UTF-8 (a leading byte order
 *   mark is dropped, as a `TextDecoder` does), or `{ ok: false }` when the
 *   bytes are not valid UTF-8. Invalid sequences are reported, never replaced
 *   by U+FFFD. Never throws.
 */
export function decodeUtf8Line(bytes: Uint8Array): Utf8LineResult {
  // Validate natively, then decode without a fatal decoder: both are single native passes.
  if (!isUtf8(bytes)) return { ok: false };
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  return { ok: true, text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text };
}
