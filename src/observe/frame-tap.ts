/**
 * Turns the bytes of one JSON-RPC stdio conversation (both directions) into
 * validated frames for a `FrameObserver`. Shared by the stdio proxy, the
 * backends and the replay of captures, so every path observes the same way.
 * Owns: splitting, strict UTF-8 decoding, frame classification, counting
 * and reporting rejected lines, handing observed lines to an optional capture.
 * Never writes to the observed streams and never throws on bad input.
 *
 * Streamed deltas, most of a runtime's bytes, take a fast path
 * (`wire/delta-line.ts`): recognized in place without `JSON.parse` of the
 * line (decision 0034) and handed to the observer's `observeDelta` as a view
 * whose text is decoded only if the observer asks (decision 0042), or, for an
 * observer without it, as the same frame the full parse gives. Every other
 * line, and any delta line not in the exact expected layout, is decoded and
 * parsed in full, so what is counted and rejected is unchanged.
 *
 * @module subagent-otel/observe/frame-tap
 */
import { Buffer } from 'node:buffer';
import { decodeUtf8Line, LineSplitter } from '../wire/ndjson.js';
import { parseFrame } from '../wire/jsonrpc.js';
import { DeltaLineReader } from '../wire/delta-line.js';
import type { Direction, FrameObserver } from './frame-observer.js';

/** Why a line was not observed. */
export type TapRejection = 'not-utf8' | 'oversized' | 'not-json' | 'not-object' | 'not-jsonrpc' | 'torn-tail';

/** Options of `FrameTap`. */
export interface FrameTapOptions {
  /** Called for each rejected line with a one-line reason. Must not throw. */
  readonly onRejected?: (direction: Direction, kind: TapRejection, message: string) => void;
  /** Called with every complete line (valid or not) in arrival order, e.g. to write a capture. Must not throw. */
  readonly onLine?: (direction: Direction, line: Uint8Array, time: number) => void;
  /** Longest line kept, in bytes; default 16 MiB. Longer lines are counted, not buffered. */
  readonly maxLineBytes?: number;
  /** Clock; default `Date.now`. */
  readonly now?: () => number;
}

/** Counts of what a tap saw, per direction. */
export interface TapCounts {
  lines: number;
  frames: number;
  rejected: number;
}

/**
 * Observes a bidirectional NDJSON JSON-RPC conversation. Feed each
 * direction's chunks in order with `push`, then `end` each direction.
 */
export class FrameTap {
  readonly #observer: FrameObserver;
  readonly #options: FrameTapOptions;
  readonly #now: () => number;
  readonly #splitters: Record<Direction, LineSplitter>;
  readonly #delta = new DeltaLineReader();
  readonly counts: Record<Direction, TapCounts> = {
    'client->agent': { lines: 0, frames: 0, rejected: 0 },
    'agent->client': { lines: 0, frames: 0, rejected: 0 },
  };

  constructor(observer: FrameObserver, options: FrameTapOptions = {}) {
    this.#observer = observer;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    const splitterOptions = options.maxLineBytes !== undefined ? { maxLineBytes: options.maxLineBytes } : {};
    this.#splitters = {
      'client->agent': new LineSplitter(splitterOptions),
      'agent->client': new LineSplitter(splitterOptions),
    };
  }

  /**
   * Observes one chunk of `direction`. Never throws on any bytes; never retains `chunk`.
   * @param time epoch ms the chunk arrived; default now (a queued chunk passes its arrival time).
   */
  push(direction: Direction, chunk: Uint8Array, time: number = this.#now()): void {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.#splitters[direction].pushEach(buffer, {
      line: (bytes, start, end) => this.#observeRange(direction, bytes, start, end, time),
      oversized: (length) =>
        this.#reject(direction, 'oversized', `line of ${length} bytes exceeds the line limit; skipped`),
    });
    this.#delta.release(); // the reader keeps no chunk alive
  }

  /** Ends `direction`: an unterminated last line is reported as a torn tail, never observed. */
  end(direction: Direction): void {
    const tail = this.#splitters[direction].end();
    if (tail === undefined) return;
    const length = tail.kind === 'line' ? tail.bytes.length : tail.length;
    this.#reject(direction, 'torn-tail', `stream ended inside a line (${length} bytes without a newline); skipped`);
  }

  /**
   * Observes one complete line (without its newline). Used directly by replay of captures.
   * @param time epoch ms the line was seen.
   */
  observeLine(direction: Direction, bytes: Uint8Array, time: number): void {
    const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#observeRange(direction, buffer, 0, buffer.length, time);
    this.#delta.release();
  }

  #observeRange(direction: Direction, buffer: Buffer, start: number, end: number, time: number): void {
    const counts = this.counts[direction];
    counts.lines += 1;
    this.#options.onLine?.(direction, buffer.subarray(start, end), time);
    if (end === start) return; // blank lines carry nothing and are not errors
    const delta = this.#delta;
    if (delta.read(buffer, start, end)) {
      counts.frames += 1;
      const observer = this.#observer;
      if (observer.observeDelta !== undefined) observer.observeDelta(direction, delta, time);
      else observer.observeFrame(direction, delta.toFrame(), time);
      return;
    }
    const bytes = buffer.subarray(start, end);
    const decoded = decodeUtf8Line(bytes);
    if (!decoded.ok) return this.#reject(direction, 'not-utf8', 'line is not valid UTF-8; skipped');
    const parsed = parseFrame(decoded.text);
    if (!parsed.ok) return this.#reject(direction, parsed.error.code as TapRejection, parsed.error.message);
    counts.frames += 1;
    this.#observer.observeFrame(direction, parsed.frame, time);
  }

  #reject(direction: Direction, kind: TapRejection, message: string): void {
    this.counts[direction].rejected += 1;
    this.#options.onRejected?.(direction, kind, message);
  }
}
