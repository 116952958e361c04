/**
 * A cheap classifier for the one line shape that carries most of the bytes a
 * dsh runtime writes: a `session.event` notification whose event is an
 * `assistant/chunk` with a `text-delta` or `reasoning-delta` chunk, laid out
 * byte for byte as the runtime's `JSON.stringify` writes it (key order as in
 * captures of the real runtime):
 *
 * ```
 * {"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"S","event":{"type":"assistant/chunk",
 *  "seq":N,"time":N,"data":{"turn":N,"step":N,"chunk":{"type":"text-delta","index":N,"text":"..."}}}}}
 * ```
 *
 * Such a line is recognized by comparing its fixed parts and reading its
 * numbers and two strings in place, without `JSON.parse` of the line and
 * without decoding the rest of it. Anything else (another layout, whitespace,
 * a number with a sign, fraction or exponent, a session id with escapes, a
 * string with a raw control character, bytes after the last brace) is "not
 * recognized", and the caller parses the line in full, which then accepts or
 * rejects it exactly as before. So the classifier never accepts what the full
 * parse rejects, never changes an error, and yields the very frame the full
 * parse yields (property-tested against it). Owns this recognition only; knows
 * nothing of runs or output. Never throws.
 *
 * @module subagent-otel/wire/delta-line
 */
import { Buffer, isUtf8 } from 'node:buffer';
import type { JsonRpcNotification } from './jsonrpc.js';

const bytesOf = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'latin1'));

const HEAD = bytesOf('{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"');
const EVENT = bytesOf('","event":{"type":"assistant/chunk","seq":');
const TIME = bytesOf(',"time":');
const TURN = bytesOf(',"data":{"turn":');
const STEP = bytesOf(',"step":');
const CHUNK = bytesOf(',"chunk":{"type":"');
const TEXT_DELTA = bytesOf('text-delta');
const REASONING_DELTA = bytesOf('reasoning-delta');
const INDEX = bytesOf('","index":');
const TEXT = bytesOf(',"text":"');
const TAIL = bytesOf('}}}}}');

/** Node's own slice decoders (what `Buffer#toString` calls after checking its arguments; the ranges here are already checked). */
interface SliceDecoders {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Digits of the longest number read in place: 15 always fit a safe integer exactly. */
const MAX_DIGITS = 15;

/** Whether `part` occurs in `line` at `at`, wholly before `end`. */
function matchesAt(line: Uint8Array, at: number, end: number, part: Uint8Array): boolean {
  if (at + part.length > end) return false;
  for (let i = 0; i < part.length; i += 1) if (line[at + i] !== part[i]) return false;
  return true;
}

/**
 * Reads a JSON non-negative integer at `at` (`0`, or a nonzero digit and up to
 * 14 more digits), before `end`. Sets `numberEnd` and returns the value, or
 * returns -1 for anything else (no digit, a leading zero before a digit, too
 * many digits).
 */
let numberEnd = 0;
function readNat(line: Uint8Array, at: number, end: number): number {
  let value = 0;
  let i = at;
  while (i < end && i - at <= MAX_DIGITS) {
    const digit = (line[i] as number) - 0x30;
    if (digit < 0 || digit > 9) break;
    value = value * 10 + digit;
    i += 1;
  }
  const digits = i - at;
  if (digits === 0 || digits > MAX_DIGITS || (digits > 1 && line[at] === 0x30)) return -1;
  numberEnd = i;
  return value;
}

/** The last session id seen, as bytes and as a string: consecutive lines nearly always repeat it. */
let lastSessionBytes: Uint8Array = new Uint8Array(0);
let lastSessionId = '';

function sessionIdOf(buffer: Buffer, start: number, end: number): string {
  const length = end - start;
  if (length === lastSessionBytes.length) {
    let same = true;
    for (let i = 0; i < length; i += 1) {
      if (buffer[start + i] !== lastSessionBytes[i]) {
        same = false;
        break;
      }
    }
    if (same) return lastSessionId;
  }
  lastSessionBytes = new Uint8Array(buffer.subarray(start, end));
  lastSessionId = (buffer as unknown as SliceDecoders).latin1Slice(start, end);
  return lastSessionId;
}

/**
 * Recognizes a text-delta or reasoning-delta `session.event` line (see the
 * module header).
 *
 * @param buffer bytes holding the line at `[start, end)`, without its newline
 *   (any trailing `\r` already removed), e.g. a chunk as it was read.
 * @returns the notification frame, equal to what `parseFrame` returns for the
 *   decoded line, with fresh strings (nothing retains `buffer`); or
 *   `undefined` when the line is not exactly of that shape, in which case the
 *   caller parses it in full. Never throws; never modifies `buffer`.
 */
export function parseDeltaLine(buffer: Buffer, start = 0, end: number = buffer.length): JsonRpcNotification | undefined {
  if (buffer[start] !== 0x7b || !matchesAt(buffer, start, end, HEAD)) return undefined;
  // The session id: printable ASCII without quote or backslash (anything else goes the full way).
  const sessionStart = start + HEAD.length;
  let sessionEnd = sessionStart;
  for (; sessionEnd < end; sessionEnd += 1) {
    const b = buffer[sessionEnd] as number;
    if (b === QUOTE) break;
    if (b < 0x20 || b > 0x7e || b === BACKSLASH) return undefined;
  }
  if (!matchesAt(buffer, sessionEnd, end, EVENT)) return undefined;
  const seq = readNat(buffer, sessionEnd + EVENT.length, end);
  if (seq < 0 || !matchesAt(buffer, numberEnd, end, TIME)) return undefined;
  const time = readNat(buffer, numberEnd + TIME.length, end);
  if (time < 0 || !matchesAt(buffer, numberEnd, end, TURN)) return undefined;
  const turn = readNat(buffer, numberEnd + TURN.length, end);
  if (turn < 0 || !matchesAt(buffer, numberEnd, end, STEP)) return undefined;
  const step = readNat(buffer, numberEnd + STEP.length, end);
  if (step < 0 || !matchesAt(buffer, numberEnd, end, CHUNK)) return undefined;
  let at = numberEnd + CHUNK.length;
  let chunkType: 'text-delta' | 'reasoning-delta';
  if (matchesAt(buffer, at, end, TEXT_DELTA)) {
    chunkType = 'text-delta';
    at += TEXT_DELTA.length;
  } else if (matchesAt(buffer, at, end, REASONING_DELTA)) {
    chunkType = 'reasoning-delta';
    at += REASONING_DELTA.length;
  } else {
    return undefined;
  }
  if (!matchesAt(buffer, at, end, INDEX)) return undefined;
  const index = readNat(buffer, at + INDEX.length, end);
  if (index < 0 || !matchesAt(buffer, numberEnd, end, TEXT)) return undefined;
  // The text ends at the first unescaped quote, which must be the one before the closing braces.
  // Scanned here, never past it: native searches would run on to the end of a whole chunk.
  const textStart = numberEnd + TEXT.length;
  let escaped = false;
  let nonAscii = 0;
  let textEnd = textStart;
  for (; textEnd < end; textEnd += 1) {
    const b = buffer[textEnd] as number;
    if (b === QUOTE) break;
    if (b === BACKSLASH) {
      escaped = true;
      textEnd += 1;
      continue;
    }
    if (b < 0x20) return undefined; // raw control characters are not JSON; the full parse rejects the line
    nonAscii |= b;
  }
  if (textEnd + 1 + TAIL.length !== end || !matchesAt(buffer, textEnd + 1, end, TAIL)) return undefined;
  if (nonAscii >= 0x80 && !isUtf8(buffer.subarray(textStart, textEnd))) return undefined;
  let text: string;
  if (escaped) {
    try {
      text = JSON.parse(buffer.toString('utf8', textStart - 1, textEnd + 1)) as string;
    } catch {
      // SyntaxError: a bad escape; the full parse decides what the line is and says why.
      return undefined;
    }
  } else {
    const decoders = buffer as unknown as SliceDecoders;
    text = nonAscii >= 0x80 ? decoders.utf8Slice(textStart, textEnd) : decoders.latin1Slice(textStart, textEnd);
  }
  return {
    kind: 'notification',
    method: 'session.event',
    params: {
      sessionId: sessionIdOf(buffer, sessionStart, sessionEnd),
      event: { type: 'assistant/chunk', seq, time, data: { turn, step, chunk: { type: chunkType, index, text } } },
    },
  };
}
