/**
 * The program of the zstd decoding thread, and the messages it exchanges
 * with the reading thread (`wire/zstd-decoder` starts it and is its only
 * user).
 *
 * The thread runs fzstd's streaming decompressor and nothing else. It is
 * started with `eval: true` from this source text rather than from a file
 * beside the module, so the same code runs from the TypeScript sources (the
 * tests), from the compiled library (`dist/`) and from the bundled CLI, whose
 * chunks live elsewhere; it loads fzstd by the absolute path the reading
 * thread resolved.
 *
 * Protocol (one request in flight at a time), over shared memory for the
 * requests (a message per request cost more than decoding a small one) and
 * a message port for the answers:
 * - the reading thread copies the compressed bytes into the shared `input`
 *   buffer, sets `control[LENGTH]` and `control[FLAGS]`
 *   ({@link FLAG_RESET}, {@link FLAG_FINAL}), then adds 1 to
 *   `control[REQUESTS]` and notifies it; the thread waits on that counter
 *   (`Atomics.wait`: an idle thread uses no CPU, and termination wakes it);
 * - the thread sets `control[READY]` once it has loaded fzstd (starting a
 *   thread on a loaded machine is not the decoder being stuck);
 * - the thread counts the request in `control[PROGRESS]` when it takes it
 *   up, then decodes; every block it completes is posted at once on the
 *   reply port as a {@link ZstdBlockMessage} (a copy, transferred: fzstd
 *   still reads the block after handing it out), and counted in
 *   `control[PROGRESS]` (no notification: the reading thread polls it);
 * - when done it posts one {@link ZstdReply}, then adds 1 to
 *   `control[REPLIES]` and notifies it. The reading thread waits on
 *   `control[REPLIES]` and takes the messages synchronously
 *   (`receiveMessageOnPort`). Blocks posted before a stall are therefore
 *   still there when the thread is given up. Every message carries the
 *   number of its request, so an answer can never be taken for another
 *   request's, and the reading thread waits (bounded) for a counted reply
 *   that is not yet readable instead of leaving it for the next request.
 *
 * @module subagent-otel/wire/zstd-worker-source
 */
import type { MessagePort } from 'node:worker_threads';

/** Index in the shared control array counting replies posted. */
export const CONTROL_REPLIES = 0;
/** Index in the shared control array counting blocks decoded (progress). */
export const CONTROL_PROGRESS = 1;
/** Index in the shared control array counting requests made. */
export const CONTROL_REQUESTS = 2;
/** Index in the shared control array: bytes of the request in `input`. */
export const CONTROL_LENGTH = 3;
/** Index in the shared control array: the request's flags. */
export const CONTROL_FLAGS = 4;
/** Index in the shared control array: 1 once the thread has loaded fzstd and waits for requests. */
export const CONTROL_READY = 5;
/** Slots of the shared control array. */
export const CONTROL_SLOTS = 6;
/** Flag: start a new stream (the previous stream's decompressor is dropped first). */
export const FLAG_RESET = 1;
/** Flag: the stream ends after these bytes. */
export const FLAG_FINAL = 2;

/** What the thread is started with (`workerData`). */
export interface ZstdWorkerData {
  /** Absolute path of fzstd's CommonJS entry. */
  readonly fzstdPath: string;
  /** {@link CONTROL_SLOTS} `Int32` slots over a `SharedArrayBuffer`. */
  readonly control: Int32Array;
  /** The request bytes, over a `SharedArrayBuffer`. */
  readonly input: Uint8Array;
  /** The port answers are posted on (the reading thread holds the other end). */
  readonly replyPort: MessagePort;
}

/** One decoded block (empty blocks included, so messages count blocks). */
export interface ZstdBlockMessage {
  readonly block: Uint8Array;
  /** The number of the request it belongs to (the value `control[REQUESTS]` took when it was made). */
  readonly request: number;
}

/** The end of one request: after all its blocks. */
export interface ZstdReply {
  readonly done: true;
  /** The number of the request it answers. */
  readonly request: number;
  /** fzstd's error, when it threw: its numeric `code` (5: input ends inside a frame) and message. */
  readonly error?: { readonly code: number | undefined; readonly message: string };
}

/**
 * The thread's program (CommonJS, run with `eval: true`). Kept as plain
 * JavaScript text because it runs outside this module system; it is short
 * on purpose and every path of it is exercised by `test/wire/zstd-decoder.test.ts`.
 * It never returns to its event loop: it waits for requests in `Atomics.wait`.
 */
export const ZSTD_WORKER_SOURCE = `
'use strict';
const { workerData } = require('node:worker_threads');
const { Decompress } = require(workerData.fzstdPath);
const { control, input, replyPort } = workerData;
let decompress;
let request = 0;
const onData = (block, isFinal) => {
  if (isFinal) return;
  const copy = block.slice();
  replyPort.postMessage({ block: copy, request }, [copy.buffer]);
  Atomics.add(control, ${CONTROL_PROGRESS}, 1);
};
Atomics.store(control, ${CONTROL_READY}, 1);
for (let seen = 0; ; seen = request) {
  // Only a request counted since the last one is taken, and it is named by the counter itself,
  // so a wake-up without a new request can never answer for one.
  while (Atomics.load(control, ${CONTROL_REQUESTS}) === seen) Atomics.wait(control, ${CONTROL_REQUESTS}, seen);
  request = Atomics.load(control, ${CONTROL_REQUESTS});
  Atomics.add(control, ${CONTROL_PROGRESS}, 1);
  const flags = Atomics.load(control, ${CONTROL_FLAGS});
  // A copy: fzstd keeps unfinished input between pushes, and the shared buffer is reused.
  const chunk = input.slice(0, Atomics.load(control, ${CONTROL_LENGTH}));
  let error;
  try {
    if ((flags & ${FLAG_RESET}) !== 0 || decompress === undefined) decompress = new Decompress(onData);
    decompress.push(chunk, (flags & ${FLAG_FINAL}) !== 0);
  } catch (thrown) {
    const code = thrown !== null && typeof thrown === 'object' && typeof thrown.code === 'number' ? thrown.code : undefined;
    error = { code, message: thrown instanceof Error ? thrown.message : String(thrown) };
  }
  replyPort.postMessage(error === undefined ? { done: true, request } : { done: true, request, error });
  Atomics.add(control, ${CONTROL_REPLIES}, 1);
  Atomics.notify(control, ${CONTROL_REPLIES});
}
`;
