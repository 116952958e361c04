/**
 * A zstd stream decompressor that cannot hang its caller: fzstd runs in a
 * worker thread, fed one request at a time, and the reading thread waits for
 * each answer with a watchdog. When the decoder makes no progress (no block
 * finished) for `stallTimeoutMs`, the thread is terminated and the push
 * fails as `stalled`. Corrupt input can otherwise make fzstd 0.1.1 loop
 * forever (or for minutes) inside one synchronous call.
 *
 * The interface stays synchronous, like the decompressor it wraps: when
 * the reading thread needs an answer it blocks in `Atomics.wait` and takes
 * the answer with `receiveMessageOnPort`, so callers keep their
 * push-and-get-items shape (decision 0045). It needs the answer to a
 * request only at the next one, so the worker decodes while the caller
 * works on the previous output.
 *
 * Threads are started only when a zstd stream is read (never by the proxy or
 * for plain files), lent to one stream at a time, and kept (at most
 * {@link MAX_IDLE_THREADS}, not holding the process open) for the next
 * stream. Owns the threads and the waiting; knows nothing of frames or lines.
 *
 * @module subagent-otel/wire/zstd-decoder
 */
import { createRequire } from 'node:module';
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import {
  CONTROL_FLAGS,
  CONTROL_LENGTH,
  CONTROL_PROGRESS,
  CONTROL_READY,
  CONTROL_REPLIES,
  CONTROL_REQUESTS,
  CONTROL_SLOTS,
  FLAG_FINAL,
  FLAG_RESET,
  ZSTD_WORKER_SOURCE,
  type ZstdBlockMessage,
  type ZstdReply,
  type ZstdWorkerData,
} from './zstd-worker-source.js';

/**
 * Default of {@link ZstdDecoderOptions.stallTimeoutMs}: 10 s without a
 * decoded block. A valid block (at most 128 KiB of output) takes well under
 * 10 ms to decode, even on a loaded machine.
 */
export const DEFAULT_ZSTD_STALL_TIMEOUT_MS = 10_000;
/** Idle decoding threads kept for later streams; more are terminated when released. */
export const MAX_IDLE_THREADS = 2;
/** fzstd's error code for input that ends inside a frame. */
const ZSTD_UNEXPECTED_EOF = 5;
/** Longest single wait before the watchdog looks at the progress counter again. */
const POLL_MS = 250;
/**
 * Longest wait for a new thread to load the decoder. Not part of the stall
 * timeout: on a loaded machine a thread can take long to start without the
 * decoder being stuck; a thread that never starts fails the stream as stalled.
 */
const START_TIMEOUT_MS = 60_000;
/**
 * Longest wait, when a stream is closed early, for the answer nobody will
 * read (so the thread can serve the next stream); a thread still busy then
 * is terminated instead.
 */
const CLOSE_WAIT_MS = 1_000;
/** Longest wait for a reply the thread has counted to become readable on the port; past it the thread is stopped. */
const REPLY_VISIBLE_MS = 1_000;
/** Most compressed bytes held back by `mayHold` pushes (one largest block and its headers fit). */
const MAX_HELD_BYTES = 160 * 1024;
/** Size of a thread's shared request buffer; larger pushes go over in several requests. */
const INPUT_BYTES = 256 * 1024;

/** Options of a {@link ZstdDecoder}. */
export interface ZstdDecoderOptions {
  /**
   * Longest time, in ms, the decoder may go without finishing a block
   * before the stream is abandoned as `stalled`. Default 10 s
   * ({@link DEFAULT_ZSTD_STALL_TIMEOUT_MS}). Measured on a monotonic clock,
   * with a resolution of about 250 ms.
   */
  readonly stallTimeoutMs?: number;
}

/**
 * What one push gave: the decoded blocks, and how the push ended when it
 * did not end well.
 * - `corrupt`: fzstd refused the data (`message` is its reason);
 * - `torn`: the input ended inside a frame (only from {@link ZstdDecoder.end});
 * - `stalled`: no block finished within the stall timeout; the decoding
 *   thread was terminated.
 * After any `failure` the decoder is closed.
 */
export interface ZstdPushResult {
  readonly blocks: readonly Uint8Array[];
  readonly failure?: { readonly kind: 'corrupt' | 'torn' | 'stalled'; readonly message: string };
}

/** One worker thread and its channel. */
class DecodingThread {
  readonly #worker: Worker;
  readonly #replies: MessagePort;
  readonly #control: Int32Array;
  readonly #input: Uint8Array;
  #isDead = false;
  #isBusy = false;
  #repliesBefore = 0;
  /** Number of the request sent last (`control[REQUESTS]` after it was counted). */
  #request = 0;

  constructor(fzstdPath: string) {
    const control = new Int32Array(new SharedArrayBuffer(CONTROL_SLOTS * Int32Array.BYTES_PER_ELEMENT));
    const input = new Uint8Array(new SharedArrayBuffer(INPUT_BYTES));
    const { port1, port2 } = new MessageChannel();
    const workerData: ZstdWorkerData = { fzstdPath, control, input, replyPort: port2 };
    this.#worker = new Worker(ZSTD_WORKER_SOURCE, { eval: true, workerData, transferList: [port2] });
    // Idle threads must not keep the process alive; replies are taken synchronously, never by listening.
    this.#worker.unref();
    port1.unref();
    // A crash (out of memory) would otherwise be an unhandled 'error' event; the watchdog reports the silence.
    this.#worker.on('error', () => {
      this.#isDead = true;
    });
    this.#worker.on('exit', () => {
      this.#isDead = true;
    });
    this.#replies = port1;
    this.#control = control;
    this.#input = input;
  }

  /** False once the thread exited or was terminated. */
  get isAlive(): boolean {
    return !this.#isDead;
  }

  /** True while a request was sent and its reply not collected. */
  get isBusy(): boolean {
    return this.#isBusy;
  }

  /**
   * Hands `parts` (at most {@link INPUT_BYTES} in all, copied) to the
   * thread, which starts decoding them; returns at once. Only when not busy.
   */
  send(parts: readonly Uint8Array[], flags: number): void {
    const control = this.#control;
    let length = 0;
    for (const part of parts) {
      this.#input.set(part, length);
      length += part.length;
    }
    Atomics.store(control, CONTROL_LENGTH, length);
    Atomics.store(control, CONTROL_FLAGS, flags);
    this.#repliesBefore = Atomics.load(control, CONTROL_REPLIES);
    this.#isBusy = true;
    this.#request = Atomics.add(control, CONTROL_REQUESTS, 1) + 1;
    Atomics.notify(control, CONTROL_REQUESTS);
  }

  /**
   * Blocks until the reply to the request sent last.
   * @returns the blocks decoded, and the reply, or no reply when no block
   *   finished for `stallTimeoutMs` (the thread is then terminated; the
   *   blocks it finished before are returned).
   */
  collect(stallTimeoutMs: number): { readonly blocks: Uint8Array[]; readonly reply: ZstdReply | undefined } {
    const control = this.#control;
    const replies = this.#repliesBefore;
    this.#isBusy = false;
    let progress = Atomics.load(control, CONTROL_PROGRESS);
    let lastProgressAt = performance.now();
    for (;;) {
      const isReady = Atomics.load(control, CONTROL_READY) === 1;
      const limit = isReady ? stallTimeoutMs : START_TIMEOUT_MS;
      const waitMs = Math.max(1, Math.min(POLL_MS, limit - (performance.now() - lastProgressAt)));
      Atomics.wait(control, CONTROL_REPLIES, replies, waitMs);
      if (Atomics.load(control, CONTROL_REPLIES) !== replies) break;
      const now = Atomics.load(control, CONTROL_PROGRESS);
      if (now !== progress || (!isReady && Atomics.load(control, CONTROL_READY) === 1)) {
        // A block finished, the request was taken up, or the thread just started.
        progress = now;
        lastProgressAt = performance.now();
      } else if (performance.now() - lastProgressAt >= limit) {
        const { blocks } = this.#receive();
        this.terminate();
        return { blocks, reply: undefined };
      }
    }
    // The thread posts before it counts the reply; should the message still be on its way, wait for it
    // (bounded), so that no answer is ever left behind for the next request to read.
    const blocks: Uint8Array[] = [];
    const deadline = performance.now() + REPLY_VISIBLE_MS;
    for (;;) {
      const received = this.#receive();
      blocks.push(...received.blocks);
      if (received.reply !== undefined) return { blocks, reply: received.reply };
      if (performance.now() >= deadline) break;
      Atomics.wait(control, CONTROL_REPLIES, Atomics.load(control, CONTROL_REPLIES), 1); // a 1 ms pause
    }
    this.terminate();
    return { blocks, reply: undefined };
  }

  /**
   * Takes the messages of the request sent last posted so far: blocks, up
   * to its reply if it came. A message of an earlier request (never expected:
   * each is collected before the next is sent) is dropped, never taken for
   * this one's.
   */
  #receive(): { blocks: Uint8Array[]; reply: ZstdReply | undefined } {
    const blocks: Uint8Array[] = [];
    for (let received = receiveMessageOnPort(this.#replies); received !== undefined; received = receiveMessageOnPort(this.#replies)) {
      const message = received.message as ZstdBlockMessage | ZstdReply;
      if (message.request !== this.#request) continue;
      if ('done' in message) return { blocks, reply: message };
      blocks.push(message.block);
    }
    return { blocks, reply: undefined };
  }

  /** Stops the thread (idempotent). */
  terminate(): void {
    if (this.#isDead) return;
    this.#isDead = true;
    this.#replies.close();
    // terminate() interrupts even a tight loop; its promise only reports the exit code.
    void this.#worker.terminate();
  }
}

const idleThreads: DecodingThread[] = [];
let fzstdPath: string | undefined;
let threadsStarted = 0;

/**
 * Decoding threads of this process: how many were ever started and how many
 * wait idle now. For diagnostics and tests (plain input starts none; streams
 * read one after another share one).
 */
export function zstdThreadStats(): { readonly started: number; readonly idle: number } {
  return { started: threadsStarted, idle: idleThreads.length };
}

/** A thread for a new stream: an idle one, else a new one. */
function borrowThread(): DecodingThread {
  for (let thread = idleThreads.pop(); thread !== undefined; thread = idleThreads.pop()) {
    if (thread.isAlive) return thread;
  }
  fzstdPath ??= createRequire(import.meta.url).resolve('fzstd');
  threadsStarted += 1;
  return new DecodingThread(fzstdPath);
}

/** Takes back a thread whose stream is over (one still decoding for a dropped stream is terminated). */
function returnThread(thread: DecodingThread): void {
  if (!thread.isAlive || idleThreads.includes(thread)) return;
  if (!thread.isBusy && idleThreads.length < MAX_IDLE_THREADS) idleThreads.push(thread);
  else thread.terminate();
}

/** Returns the thread of a decoder its owner dropped without ending it. */
const abandoned = new FinalizationRegistry<{ thread: DecodingThread | undefined }>((lease) => {
  if (lease.thread !== undefined) returnThread(lease.thread);
});

/**
 * Incremental zstd decompression of one stream (concatenated frames,
 * skippable frames included) that never blocks its caller longer than the
 * stall timeout per block. Push compressed bytes in order, then call
 * `end()`; call `close()` to stop early. Each call is synchronous.
 *
 * Decoding runs one request behind, so the thread decodes while the caller
 * works on what the previous push returned: a push hands its bytes over and
 * returns the blocks of the request before it (and `flush()` or `end()`
 * the rest). Which push returns which block depends only on the pushes,
 * never on timing.
 *
 * A decoder holds a worker thread from its first push until `end()`,
 * `close()`, a failure, or (for a dropped decoder) garbage collection.
 * Never throws on content.
 */
export class ZstdDecoder {
  readonly #stallTimeoutMs: number;
  readonly #lease: { thread: DecodingThread | undefined } = { thread: undefined };
  #isStarted = false;
  #isClosed = false;
  #held: Uint8Array[] = [];
  #heldBytes = 0;

  /** @throws RangeError when `stallTimeoutMs` is not a positive number (a programming error). */
  constructor(options: ZstdDecoderOptions = {}) {
    const stallTimeoutMs = options.stallTimeoutMs ?? DEFAULT_ZSTD_STALL_TIMEOUT_MS;
    if (!(stallTimeoutMs > 0)) throw new RangeError(`stallTimeoutMs must be a positive number of ms, got ${stallTimeoutMs}`);
    this.#stallTimeoutMs = stallTimeoutMs;
  }

  /** True after `end()`, `close()` or a failure. */
  get isClosed(): boolean {
    return this.#isClosed;
  }

  /**
   * Hands the next compressed bytes over (copied; the caller keeps `chunk`;
   * any size: more than 256 KiB goes over in several steps).
   * With `mayHold` (the caller knows these bytes finish no block, so they
   * can produce no output) the decoder may keep them, up to 160 KiB, and
   * hand them over with a later push: no thread round trip.
   *
   * @returns the blocks of the requests before this one, in order, and
   *   their failure if any (then the decoder is closed and `chunk` ignored).
   */
  push(chunk: Uint8Array, options: { readonly mayHold?: boolean } = {}): ZstdPushResult {
    if (this.#isClosed) return { blocks: [] };
    if (options.mayHold === true && this.#heldBytes + chunk.length <= MAX_HELD_BYTES) {
      // A copy of its own (`Buffer#slice` would share the caller's memory).
      this.#held.push(new Uint8Array(chunk));
      this.#heldBytes += chunk.length;
      return { blocks: [] };
    }
    return this.#request(chunk, false);
  }

  /**
   * Waits for the request in progress. @returns its blocks (and failure);
   * bytes held back stay held.
   */
  flush(): ZstdPushResult {
    if (this.#isClosed) return { blocks: [] };
    return this.#settle();
  }

  /** Ends the stream: every block left, and a `torn` failure when it ends inside a frame. Closes the decoder. */
  end(): ZstdPushResult {
    if (this.#isClosed) return { blocks: [] };
    const sent = this.#request(new Uint8Array(0), true);
    if (sent.failure !== undefined) return sent;
    const last = this.#settle();
    this.close();
    return { blocks: [...sent.blocks, ...last.blocks], ...(last.failure !== undefined ? { failure: last.failure } : {}) };
  }

  /** Stops decoding and frees the thread, after its request in progress (idempotent). */
  close(): void {
    if (this.#isClosed) return;
    this.#isClosed = true;
    this.#held = [];
    this.#heldBytes = 0;
    const thread = this.#lease.thread;
    this.#lease.thread = undefined;
    abandoned.unregister(this);
    if (thread === undefined) return;
    // The answer nobody wants: waited for briefly so the thread is idle when lent again (else terminated).
    if (thread.isBusy) thread.collect(Math.min(this.#stallTimeoutMs, CLOSE_WAIT_MS));
    returnThread(thread);
  }

  /**
   * Collects the request in progress, then sends the held bytes and `chunk`
   * (in steps of at most {@link INPUT_BYTES}, all but the last collected at
   * once). @returns the blocks collected.
   */
  #request(chunk: Uint8Array, final: boolean): ZstdPushResult {
    const blocks: Uint8Array[] = [];
    let parts: Uint8Array[] = this.#held;
    let length = this.#heldBytes;
    this.#held = [];
    this.#heldBytes = 0;
    for (let offset = 0; ; ) {
      const settled = this.#settle();
      blocks.push(...settled.blocks);
      if (settled.failure !== undefined) return { blocks, failure: settled.failure };
      const piece = chunk.subarray(offset, offset + (INPUT_BYTES - length));
      offset += piece.length;
      const isLast = offset >= chunk.length;
      this.#send([...parts, piece], final && isLast);
      if (isLast) return { blocks };
      parts = [];
      length = 0;
    }
  }

  /** Sends one request to the thread (borrowed on the first). */
  #send(parts: readonly Uint8Array[], final: boolean): void {
    let thread = this.#lease.thread;
    if (thread === undefined) {
      thread = borrowThread();
      this.#lease.thread = thread;
      abandoned.register(this, this.#lease, this);
    }
    const flags = (this.#isStarted ? 0 : FLAG_RESET) | (final ? FLAG_FINAL : 0);
    this.#isStarted = true;
    thread.send(parts, flags);
  }

  /** Collects the request in progress, if any; a failure closes the decoder. */
  #settle(): ZstdPushResult {
    const thread = this.#lease.thread;
    if (thread === undefined || !thread.isBusy) return { blocks: [] };
    const { blocks, reply } = thread.collect(this.#stallTimeoutMs);
    if (reply === undefined) {
      this.#lease.thread = undefined;
      this.close();
      const seconds = this.#stallTimeoutMs / 1000;
      return { blocks, failure: { kind: 'stalled', message: `the zstd decoder made no progress for ${seconds} s and was stopped` } };
    }
    if (reply.error === undefined) return { blocks };
    this.close();
    const kind = reply.error.code === ZSTD_UNEXPECTED_EOF ? 'torn' : 'corrupt';
    return { blocks, failure: { kind, message: reply.error.message } };
  }
}
