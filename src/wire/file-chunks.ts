/**
 * Reading a file as a stream of byte chunks, the one way every file reader in
 * the project gets its bytes (durable logs, captures, replay sniffing).
 *
 * @module subagent-otel/wire/file-chunks
 */
import { createReadStream } from 'node:fs';

/**
 * The bytes of the file at `path` in 64 KiB chunks, each reported to
 * `onBytes` as it is read; with `limit`, only its first `limit` bytes (what
 * a growing file held when it was listed). Errors (missing file, a
 * directory, EACCES, EIO) are thrown from the iteration; the file is closed
 * when iteration ends, also when the consumer stops early.
 */
export async function* fileChunks(
  path: string,
  onBytes?: (bytes: number) => void,
  limit?: number,
): AsyncGenerator<Uint8Array, void, undefined> {
  if (limit !== undefined && limit <= 0) return;
  const stream = createReadStream(path, {
    highWaterMark: 64 * 1024,
    ...(limit !== undefined ? { end: limit - 1 } : {}),
  });
  try {
    for await (const chunk of stream) {
      const bytes = chunk as Buffer;
      onBytes?.(bytes.length);
      yield bytes;
    }
  } finally {
    stream.destroy();
  }
}
