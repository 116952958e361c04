/**
 * zstd decompression through Node's own libzstd binding (`node:zlib`),
 * behind one asynchronous helper: {@link zstdInflater}. libzstd refuses
 * corrupt data instead of looping on it, so no thread, watchdog or timeout is
 * needed (decision 0062); its `ZSTD_d_windowLogMax` parameter bounds the
 * window a frame may make it allocate.
 *
 * Owns only the decompressor: which bytes are frames, where they end, and
 * where a failure is, are the frame scanner's (`wire/byte-lines`). Node's
 * stream stops at the end of a frame and drops the rest of that write, so
 * the caller writes each frame's bytes separately (a write never runs past
 * the end of a frame) and keeps skippable frames to itself.
 *
 * @module subagent-otel/wire/zstd
 */
import { Buffer } from 'node:buffer';
import { constants, createZstdDecompress } from 'node:zlib';

/** What one step of decompression gave: the output, in order, and the failure that ended the stream, if any. */
export interface ZstdStep {
  readonly output: readonly Buffer[];
  /** libzstd's reason (message and code) when it refused the data; the inflater is closed after it. */
  readonly failure?: string;
}

/** An incremental zstd decompressor of one stream of frames ({@link zstdInflater}). */
export interface ZstdInflater {
  /**
   * Decompresses `bytes`, which must not run past the end of a frame
   * (`endsFrame` says they end one). Steps must be awaited one at a time.
   * @returns the output these bytes completed, and libzstd's failure if it
   *   refused them. Never rejects; after a failure or `close` it returns no output.
   */
  write(bytes: Uint8Array): Promise<ZstdStep>;
  /** Frees the decompressor (idempotent). */
  close(): void;
}

/** libzstd's window log bounds: ZSTD_WINDOWLOG_ABSOLUTEMIN and the 64-bit ZSTD_WINDOWLOG_MAX. */
const WINDOW_LOG_MIN = 10;
const WINDOW_LOG_MAX = 31;

/**
 * A zstd decompressor that never lets a frame's window exceed
 * `maxWindowBytes` (rounded up to a power of two): a frame declaring more
 * fails with libzstd's `Frame requires too much memory for decoding`.
 */
export function zstdInflater(maxWindowBytes: number): ZstdInflater {
  const windowLog = Math.min(
    WINDOW_LOG_MAX,
    Math.max(WINDOW_LOG_MIN, Math.ceil(Math.log2(Math.max(1, maxWindowBytes)))),
  );
  const stream = createZstdDecompress({ params: { [constants.ZSTD_d_windowLogMax]: windowLog } });
  let output: Buffer[] = [];
  let failure: string | undefined;
  let isClosed = false;
  let settle: (() => void) | undefined;
  stream.on('data', (chunk: Buffer) => output.push(chunk));
  stream.on('error', (err: NodeJS.ErrnoException) => {
    failure ??= `libzstd: ${err.message}`;
    settle?.();
  });
  const take = (): ZstdStep => {
    const step = failure !== undefined ? { output, failure } : { output };
    output = [];
    return step;
  };
  return {
    write(bytes) {
      if (isClosed || failure !== undefined) return Promise.resolve({ output: [] });
      return new Promise<ZstdStep>((resolve) => {
        let done = false;
        settle = () => {
          if (done) return;
          done = true;
          settle = undefined;
          const step = take();
          if (step.failure !== undefined) closeStream();
          resolve(step);
        };
        // The callback runs once libzstd consumed these bytes, after the output they gave was emitted.
        stream.write(bytes, () => settle?.());
      });
    },
    close: closeStream,
  };
  function closeStream(): void {
    if (isClosed) return;
    isClosed = true;
    stream.destroy();
  }
}
