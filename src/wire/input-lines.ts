/**
 * Any NDJSON file (plain, or a concatenation of zstd frames) as numbered
 * lines with bounded memory: the line view every file reader shares
 * (captures, raw NDJSON, coding agents' transcripts), with one policy for
 * what cannot be a line (oversized, torn tail, corrupt zstd, unreadable).
 *
 * @module subagent-otel/wire/input-lines
 */
import { ByteLineReader, FEED_SLICE_BYTES, type ByteLineItem } from './byte-lines.js';
import { DEFAULT_MAX_LINE_BYTES, decodeUtf8Line } from './ndjson.js';
import { errorText } from './error-text.js';

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
 * bounded by `maxLineBytes` plus one decompressed slice. Yields the lines of
 * each slice read as one batch (a line per step of an async iteration costs
 * as much as splitting it).
 */
export async function* readLineBatches(
  source: AsyncIterable<Uint8Array>,
  options: ReadLinesOptions = {},
): AsyncGenerator<readonly InputLine[], void, undefined> {
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const reader = new ByteLineReader({ maxLineBytes });
  let lineCount = 0;
  /** The items as input lines and problems; `stop` once reading must end. */
  const toLines = (items: readonly ByteLineItem[]): { lines: InputLine[]; stop: boolean } => {
    const lines: InputLine[] = [];
    for (const item of items) {
      switch (item.kind) {
        case 'line':
          lineCount += 1;
          lines.push({ kind: 'line', line: lineCount, bytes: item.bytes });
          break;
        case 'oversized':
          lineCount += 1;
          lines.push({
            kind: 'problem',
            line: lineCount,
            code: 'oversized-line',
            message: `line of ${item.length} bytes exceeds the ${maxLineBytes}-byte limit; skipped`,
          });
          break;
        case 'corrupt-zstd':
          lines.push({
            kind: 'problem',
            line: lineCount + 1,
            code: 'corrupt-zstd',
            message: `undecodable zstd data after line ${lineCount} (${item.reason}); the rest of the file is not read`,
          });
          return { lines, stop: true };
        case 'tail': {
          lineCount += 1;
          const tail = item.line;
          if (tail.kind === 'line' && isCompleteJson(tail.bytes)) {
            lines.push({ kind: 'line', line: lineCount, bytes: tail.bytes });
          } else {
            const length = tail.kind === 'line' ? tail.bytes.length : tail.length;
            lines.push({
              kind: 'problem',
              line: lineCount,
              code: 'torn-tail',
              message: `line ${lineCount} is incomplete: ${length} bytes without a final newline; skipped`,
            });
          }
          if (item.isTornFrame)
            lines.push({
              kind: 'problem',
              line: lineCount + 1,
              code: 'torn-tail',
              message: 'the file ends inside a zstd frame',
            });
          break;
        }
        case 'torn-frame':
          lines.push({
            kind: 'problem',
            line: lineCount + 1,
            code: 'torn-tail',
            message: 'the file ends inside a zstd frame',
          });
          break;
        case 'empty':
          break;
      }
    }
    return { lines, stop: false };
  };

  try {
    for await (const chunk of source) {
      for (let offset = 0; offset < chunk.length; offset += FEED_SLICE_BYTES) {
        const { lines, stop } = toLines(await reader.push(chunk.subarray(offset, offset + FEED_SLICE_BYTES)));
        if (lines.length > 0) yield lines;
        if (stop) return;
      }
    }
  } catch (error) {
    yield [{ kind: 'problem', line: 0, code: 'unreadable', message: `reading stopped: ${errorText(error)}` }];
    return;
  }
  const rest = toLines(await reader.end()).lines;
  if (rest.length > 0) yield rest;
}

/**
 * {@link readLineBatches} one line at a time: the same lines and problems, in
 * the same order. Never throws.
 */
export async function* readLines(
  source: AsyncIterable<Uint8Array>,
  options: ReadLinesOptions = {},
): AsyncGenerator<InputLine, void, undefined> {
  for await (const batch of readLineBatches(source, options)) yield* batch;
}

/** Whether a line without its newline is a whole JSON value (a last line whose newline is missing) rather than a cut one. */
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
