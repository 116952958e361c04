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
 * Protocol (one request in flight at a time):
 * - the reading thread posts a {@link ZstdRequest} to the worker (the
 *   compressed bytes are a fresh buffer, transferred);
 * - the thread decodes; every block it completes is posted at once on the
 *   reply port as a {@link ZstdBlockMessage} (a copy, transferred: fzstd
 *   still reads the block after handing it out), and counted in
 *   `control[PROGRESS]` (no notification: the reading thread polls it);
 * - when done it posts one {@link ZstdReply}, then adds 1 to
 *   `control[REPLIES]` and notifies it. The reading thread waits on
 *   `control[REPLIES]` and takes the messages synchronously
 *   (`receiveMessageOnPort`). Blocks posted before a stall are therefore
 *   still there when the thread is given up.
 *
 * @module subagent-otel/wire/zstd-worker-source
 */
import type { MessagePort } from 'node:worker_threads';

/** Index in the shared control array counting replies posted. */
export const CONTROL_REPLIES = 0;
/** Index in the shared control array counting blocks decoded (progress). */
export const CONTROL_PROGRESS = 1;

/** What the thread is started with (`workerData`). */
export interface ZstdWorkerData {
  /** Absolute path of fzstd's CommonJS entry. */
  readonly fzstdPath: string;
  /** Two `Int32` counters over a `SharedArrayBuffer`: {@link CONTROL_REPLIES}, {@link CONTROL_PROGRESS}. */
  readonly control: Int32Array;
  /** The port replies are posted on (the reading thread holds the other end). */
  readonly replyPort: MessagePort;
}

/** One step of decoding, from the reading thread. */
export interface ZstdRequest {
  /** Start a new stream: the previous decompressor (another stream's) is dropped first. */
  readonly reset: boolean;
  /** The next compressed bytes (possibly empty). */
  readonly chunk: Uint8Array<ArrayBuffer>;
  /** True when the stream ends after `chunk`. */
  readonly final: boolean;
}

/** One decoded block (empty blocks included, so messages count blocks). */
export interface ZstdBlockMessage {
  readonly block: Uint8Array;
}

/** The end of one {@link ZstdRequest}: after all its blocks. */
export interface ZstdReply {
  readonly done: true;
  /** fzstd's error, when it threw: its numeric `code` (5: input ends inside a frame) and message. */
  readonly error?: { readonly code: number | undefined; readonly message: string };
}

/**
 * The thread's program (CommonJS, run with `eval: true`). Kept as plain
 * JavaScript text because it runs outside this module system; it is short
 * on purpose and every path of it is exercised by `test/wire/zstd-decoder.test.ts`.
 */
export const ZSTD_WORKER_SOURCE = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { Decompress } = require(workerData.fzstdPath);
const control = workerData.control;
const replyPort = workerData.replyPort;
let decompress;
const onData = (block, isFinal) => {
  if (isFinal) return;
  const copy = block.slice();
  replyPort.postMessage({ block: copy }, [copy.buffer]);
  Atomics.add(control, ${CONTROL_PROGRESS}, 1);
};
parentPort.on('message', (request) => {
  let error;
  try {
    if (request.reset || decompress === undefined) decompress = new Decompress(onData);
    decompress.push(request.chunk, request.final);
  } catch (thrown) {
    const code = thrown !== null && typeof thrown === 'object' && typeof thrown.code === 'number' ? thrown.code : undefined;
    error = { code, message: thrown instanceof Error ? thrown.message : String(thrown) };
  }
  replyPort.postMessage(error === undefined ? { done: true } : { done: true, error });
  Atomics.add(control, ${CONTROL_REPLIES}, 1);
  Atomics.notify(control, ${CONTROL_REPLIES});
});
`;
