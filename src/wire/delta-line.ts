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
 * numbers in place, and its text is checked (string grammar, escapes,
 * UTF-8) without being decoded: `DeltaLineReader.read` allocates nothing,
 * and the text becomes a string only when someone asks for it
 * (`DeltaLine.text()`), which the trackers do only while streamed text can
 * still be selected as output (decision 0042). Anything else (another
 * layout, whitespace, a number with a sign, fraction or exponent, a session
 * id with escapes, a string with a raw control character or a bad escape,
 * invalid UTF-8, bytes after the last brace) is "not recognized", and the
 * caller parses the line in full, which then accepts or rejects it exactly as
 * before. Which fields the line has is this layout's; whether their values
 * are valid is the `assistant/chunk` schema's, through the plain check
 * derived from it (`wire/schema-check`, decision 0126): a field added to the
 * schema is checked here too, and a line the schema would reject is left to
 * the full parse. So the classifier never accepts what the full parse
 * rejects, never changes an error, and `toFrame()` yields the very frame the
 * full parse yields (property-tested against it). Owns this recognition only; knows
 * nothing of runs or output. Never throws.
 *
 * @module subagent-otel/wire/delta-line
 */
import { Buffer, isUtf8 } from 'node:buffer';
import { plainEventDataCheck } from './events.js';
import type { JsonRpcNotification } from './jsonrpc.js';
import { ANY_STRING } from './schema-check.js';

/**
 * A fixed part of the layout, prepared for comparing four bytes at a time:
 * its bytes as little-endian 32-bit words, then the one to three bytes left.
 */
interface Part {
  readonly length: number;
  readonly words: Int32Array;
  readonly rest: Uint8Array;
}

function partOf(text: string): Part {
  const bytes = Buffer.from(text, 'latin1');
  const count = bytes.length >> 2;
  const words = new Int32Array(count);
  for (let k = 0; k < count; k += 1) words[k] = bytes.readInt32LE(4 * k);
  return { length: bytes.length, words, rest: new Uint8Array(bytes.subarray(4 * count)) };
}

const HEAD = partOf('{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"');
const EVENT = partOf('","event":{"type":"assistant/chunk","seq":');
const TIME = partOf(',"time":');
const TURN = partOf(',"data":{"turn":');
const STEP = partOf(',"step":');
const CHUNK = partOf(',"chunk":{"type":"');
const TEXT_DELTA = partOf('text-delta');
const REASONING_DELTA = partOf('reasoning-delta');
const INDEX = partOf('","index":');
const TEXT = partOf(',"text":"');
const TAIL = partOf('}}}}}');

/** The `assistant/chunk` payload check derived from its schema (`wire/events`). */
const acceptsChunkData = plainEventDataCheck('assistant/chunk');

/** Node's own slice decoders (what `Buffer#toString` calls after checking its arguments; the ranges here are already checked). */
interface SliceDecoders {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}

const EMPTY_VIEW = new DataView(new ArrayBuffer(0));
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Digits of the longest number read in place: 15 always fit a safe integer exactly. */
const MAX_DIGITS = 15;

/**
 * What may follow a backslash in a JSON string: 1 for the one-character
 * escapes (`" \ / b f n r t`), 2 for `u` (four hex digits follow), 0 otherwise.
 */
const ESCAPES = new Uint8Array(256);
for (const c of '"\\/bfnrt') ESCAPES[c.charCodeAt(0)] = 1;
ESCAPES[0x75] = 2;
/** 1 for the ASCII hex digits. */
const HEX = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1;

/** Whether `part` occurs at `at` of the bytes `view` shows, wholly before `end`. */
function matchesAt(view: DataView, at: number, end: number, part: Part): boolean {
  if (at + part.length > end) return false;
  const words = part.words;
  let i = at;
  for (let k = 0; k < words.length; k += 1, i += 4) if (view.getInt32(i, true) !== words[k]) return false;
  const rest = part.rest;
  for (let k = 0; k < rest.length; k += 1, i += 1) if (view.getUint8(i) !== rest[k]) return false;
  return true;
}

/** Bit 7 of each byte of a 32-bit word. */
const HIGH_BITS = 0x80808080 | 0;
/**
 * Whether any of the four bytes of `w` (little-endian) ends or escapes a JSON
 * string or may not appear raw in it: a quote, a backslash, or a byte below
 * 0x20. Exact (no false positives): the classic "has a zero byte" and "has a
 * byte less than n" word tests.
 */
function hasSpecialByte(w: number): boolean {
  const quote = w ^ 0x22222222;
  const backslash = w ^ 0x5c5c5c5c;
  return (
    ((((quote - 0x01010101) & ~quote) | ((backslash - 0x01010101) & ~backslash) | ((w - 0x20202020) & ~w)) &
      HIGH_BITS) !==
    0
  );
}

/** The chunk types a delta line carries. */
export type DeltaChunkType = 'text-delta' | 'reasoning-delta';

/**
 * One recognized delta line, as its consumers see it: the event's numbers,
 * its session id and chunk type, and its text on demand. A view: valid only
 * during the call it is handed to (it reads the caller's chunk); copy what
 * must outlive the call.
 */
export interface DeltaLine {
  readonly sessionId: string;
  readonly seq: number;
  readonly time: number;
  readonly turn: number;
  readonly step: number;
  readonly chunkType: DeltaChunkType;
  readonly index: number;
  /** The chunk's text, decoded now (a fresh string; the line's buffer is not retained). Never throws. */
  text(): string;
  /** The notification frame the full parse of the line yields (fresh objects and strings). */
  toFrame(): JsonRpcNotification;
}

/**
 * Recognizes delta lines (see the module header) without allocating: one
 * reader is reused for every line of a stream, and its fields describe the
 * last line `read` accepted until the next `read` or `release`. Keeps the
 * last session id as a string, so consecutive lines of one session share it.
 */
export class DeltaLineReader implements DeltaLine {
  sessionId = '';
  seq = 0;
  time = 0;
  turn = 0;
  step = 0;
  chunkType: DeltaChunkType = 'text-delta';
  index = 0;
  #buffer: Buffer | undefined;
  /** The buffer `#view` shows: consecutive lines of one chunk share it. */
  #viewBuffer: Buffer | undefined;
  #view: DataView = EMPTY_VIEW;
  #textStart = 0;
  #textEnd = 0;
  #escaped = false;
  #nonAscii = false;
  /** End of the number `#readNat` read last. */
  #numberEnd = 0;
  /** The last session id, as bytes and as a string: consecutive lines nearly always repeat it. */
  #sessionBytes: Uint8Array = new Uint8Array(0);
  /** The payload of the line being read, for the schema's check: the text is not decoded, so it stands as any string. */
  readonly #data = { turn: 0, step: 0, chunk: { type: 'text-delta' as DeltaChunkType, index: 0, text: ANY_STRING } };

  /**
   * Recognizes `buffer[start, end)`, a line without its newline (any trailing
   * `\r` already removed). @returns `true` when it is a delta line in the
   * exact layout and the full parse would accept it; the reader then
   * describes it and holds `buffer` until the next `read` of another buffer
   * or `release`.
   * `false` for anything else (the caller parses the line in full). Never
   * throws; never modifies `buffer`.
   */
  read(buffer: Buffer, start = 0, end: number = buffer.length): boolean {
    if (buffer[start] !== 0x7b) return false;
    let view = this.#view;
    if (buffer !== this.#viewBuffer) {
      view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
      this.#view = view;
      this.#viewBuffer = buffer;
    }
    if (!matchesAt(view, start, end, HEAD)) return false;
    // The session id: printable ASCII without quote or backslash (anything else goes the full way).
    const sessionStart = start + HEAD.length;
    let sessionEnd = sessionStart;
    for (; sessionEnd < end; sessionEnd += 1) {
      const b = buffer[sessionEnd] as number;
      if (b === QUOTE) break;
      if (b < 0x20 || b > 0x7e || b === BACKSLASH) return false;
    }
    if (!matchesAt(view, sessionEnd, end, EVENT)) return false;
    const seq = this.#readNat(buffer, sessionEnd + EVENT.length, end);
    if (seq < 0 || !matchesAt(view, this.#numberEnd, end, TIME)) return false;
    const time = this.#readNat(buffer, this.#numberEnd + TIME.length, end);
    if (time < 0 || !matchesAt(view, this.#numberEnd, end, TURN)) return false;
    const turn = this.#readNat(buffer, this.#numberEnd + TURN.length, end);
    if (turn < 0 || !matchesAt(view, this.#numberEnd, end, STEP)) return false;
    const step = this.#readNat(buffer, this.#numberEnd + STEP.length, end);
    if (step < 0 || !matchesAt(view, this.#numberEnd, end, CHUNK)) return false;
    let at = this.#numberEnd + CHUNK.length;
    let chunkType: DeltaChunkType;
    if (matchesAt(view, at, end, TEXT_DELTA)) {
      chunkType = 'text-delta';
      at += TEXT_DELTA.length;
    } else if (matchesAt(view, at, end, REASONING_DELTA)) {
      chunkType = 'reasoning-delta';
      at += REASONING_DELTA.length;
    } else {
      return false;
    }
    if (!matchesAt(view, at, end, INDEX)) return false;
    const index = this.#readNat(buffer, at + INDEX.length, end);
    if (index < 0 || !matchesAt(view, this.#numberEnd, end, TEXT)) return false;
    // The text ends at the first unescaped quote, which must be the one before the closing braces.
    // Scanned here, never past it: native searches would run on to the end of a whole chunk.
    // Four bytes at a time while none of them is special; byte by byte around the special ones.
    const textStart = this.#numberEnd + TEXT.length;
    let escaped = false;
    let high = 0;
    let textEnd = textStart;
    for (;;) {
      if (textEnd + 4 <= end) {
        const w = view.getInt32(textEnd, true);
        if (!hasSpecialByte(w)) {
          high |= w;
          textEnd += 4;
          continue;
        }
      } else if (textEnd >= end) {
        break;
      }
      const b = buffer[textEnd] as number;
      if (b === QUOTE) break;
      if (b === BACKSLASH) {
        // Only JSON's escapes; a bad one (or one cut off by the line's end) is the full parse's to reject.
        const kind = textEnd + 1 < end ? (ESCAPES[buffer[textEnd + 1] as number] as number) : 0;
        if (kind === 0) return false;
        if (kind === 2) {
          if (textEnd + 5 >= end) return false;
          if (
            (HEX[buffer[textEnd + 2] as number] as number) +
              (HEX[buffer[textEnd + 3] as number] as number) +
              (HEX[buffer[textEnd + 4] as number] as number) +
              (HEX[buffer[textEnd + 5] as number] as number) !==
            4
          )
            return false;
          textEnd += 6;
        } else {
          textEnd += 2;
        }
        escaped = true;
        continue;
      }
      if (b < 0x20) return false; // raw control characters are not JSON; the full parse rejects the line
      high |= b;
      textEnd += 1;
    }
    if (textEnd + 1 + TAIL.length !== end || !matchesAt(view, textEnd + 1, end, TAIL)) return false;
    const nonAscii = (high & HIGH_BITS) !== 0;
    if (nonAscii && !isUtf8(buffer.subarray(textStart, textEnd))) return false;
    // The layout says which fields there are; whether they are valid is the event schema's to say (decision 0126).
    const data = this.#data;
    data.turn = turn;
    data.step = step;
    data.chunk.type = chunkType;
    data.chunk.index = index;
    if (!acceptsChunkData(data)) return false;
    this.sessionId = this.#sessionIdOf(buffer, sessionStart, sessionEnd);
    this.seq = seq;
    this.time = time;
    this.turn = turn;
    this.step = step;
    this.chunkType = chunkType;
    this.index = index;
    this.#buffer = buffer;
    this.#textStart = textStart;
    this.#textEnd = textEnd;
    this.#escaped = escaped;
    this.#nonAscii = nonAscii;
    return true;
  }

  /** Drops every reference to the buffers read so far (call when done with a chunk, so it is not kept alive). */
  release(): void {
    this.#buffer = undefined;
    this.#viewBuffer = undefined;
    this.#view = EMPTY_VIEW;
  }

  /** {@inheritDoc DeltaLine.text} @throws Error when no line is held (after `release`): a programming error. */
  text(): string {
    const buffer = this.#buffer;
    if (buffer === undefined) throw new Error('DeltaLineReader.text() called without a line');
    // Escapes were checked in `read`, so this parse of the string literal cannot fail.
    if (this.#escaped) return JSON.parse(buffer.toString('utf8', this.#textStart - 1, this.#textEnd + 1)) as string;
    const decoders = buffer as unknown as SliceDecoders;
    return this.#nonAscii
      ? decoders.utf8Slice(this.#textStart, this.#textEnd)
      : decoders.latin1Slice(this.#textStart, this.#textEnd);
  }

  /** {@inheritDoc DeltaLine.toFrame} */
  toFrame(): JsonRpcNotification {
    return {
      kind: 'notification',
      method: 'session.event',
      params: {
        sessionId: this.sessionId,
        event: {
          type: 'assistant/chunk',
          seq: this.seq,
          time: this.time,
          data: {
            turn: this.turn,
            step: this.step,
            chunk: { type: this.chunkType, index: this.index, text: this.text() },
          },
        },
      },
    };
  }

  /**
   * Reads a JSON non-negative integer at `at` (`0`, or a nonzero digit and up
   * to 14 more digits), before `end`. Sets `#numberEnd` and returns the value,
   * or returns -1 for anything else (no digit, a leading zero before a digit,
   * too many digits).
   */
  #readNat(line: Uint8Array, at: number, end: number): number {
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
    this.#numberEnd = i;
    return value;
  }

  #sessionIdOf(buffer: Buffer, start: number, end: number): string {
    const known = this.#sessionBytes;
    const length = end - start;
    if (length === known.length) {
      let same = true;
      for (let i = 0; i < length; i += 1) {
        if (buffer[start + i] !== known[i]) {
          same = false;
          break;
        }
      }
      if (same) return this.sessionId;
    }
    this.#sessionBytes = new Uint8Array(buffer.subarray(start, end));
    return (buffer as unknown as SliceDecoders).latin1Slice(start, end);
  }
}

const shared = new DeltaLineReader();

/**
 * Recognizes a text-delta or reasoning-delta `session.event` line (see the
 * module header) and builds its frame: `DeltaLineReader.read` plus `toFrame`.
 *
 * @param buffer bytes holding the line at `[start, end)`, without its newline
 *   (any trailing `\r` already removed), e.g. a chunk as it was read.
 * @returns the notification frame, equal to what `parseFrame` returns for the
 *   decoded line, with fresh strings (nothing retains `buffer`); or
 *   `undefined` when the line is not exactly of that shape, in which case the
 *   caller parses it in full. Never throws; never modifies `buffer`.
 */
export function parseDeltaLine(
  buffer: Buffer,
  start = 0,
  end: number = buffer.length,
): JsonRpcNotification | undefined {
  if (!shared.read(buffer, start, end)) return undefined;
  const frame = shared.toFrame();
  shared.release();
  return frame;
}
