/**
 * OTLP-JSON-lines exporters: each export appends one OTLP JSON export request
 * (exactly the body the OTLP/HTTP JSON exporter would POST) as one line, to
 * `traces.jsonl` or `metrics.jsonl` in a directory, or to a stream. This is
 * the format the OpenTelemetry Collector's `otlp_json_file` receiver reads, and
 * the embedded default destination when no collector is configured.
 *
 * Each line is written with one `write(2)` call on a file opened for
 * appending, so the lines of several writers sharing one file (proxies with
 * the same output directory) never interleave, and a crash leaves complete
 * lines but for the one a `SIGKILL` cut mid-write (the kernel ends a write
 * at a fatal signal); the next writer ends that one first. Lines are written in export order. Owns serialization and writing
 * only; which exporters run is `setup.ts`'s decision.
 *
 * @module subagent-otel/telemetry/otlp-json-file-exporter
 */
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { JsonMetricsSerializer, JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { makeDirectory } from './make-directory.js';
import { asError } from '../wire/error-text.js';

/** File name of the traces in an output directory. */
export const TRACES_FILE_NAME = 'traces.jsonl';
/** File name of the metrics in an output directory. */
export const METRICS_FILE_NAME = 'metrics.jsonl';

const NEWLINE = Buffer.from('\n');

/**
 * Lines accepted but not yet written, per writer. Past this (or
 * {@link MAX_PENDING_BYTES}) an export fails at once (counted as dropped)
 * instead of growing memory without bound when the disk is slower than the
 * runs. Large enough for the burst of a proxied agent that dies with
 * thousands of open runs (each closed at once, a line per 512 spans); replay and
 * demo never come near it, since they wait for the writer (backpressure).
 */
export const MAX_PENDING_LINES = 65_536;
/** Bytes of lines accepted but not yet written, per writer; same rule as {@link MAX_PENDING_LINES}. */
export const MAX_PENDING_BYTES = 64 * 1024 * 1024;
/** Most bytes handed to the sink in one write (at least one whole line is always written). */
const MAX_GROUP_BYTES = 8 * 1024 * 1024;

/** Where lines go. */
export interface LineSink {
  /** Human-readable destination (a file path, `stderr`). */
  readonly description: string;
  /** Writes one or more complete lines (each with its newline) with a single write; rejects when it could not. */
  append(lines: Uint8Array): Promise<void>;
}

/**
 * A sink appending to the file at `path`, creating its directory on the first
 * write (not before: nothing is created when nothing is exported). Each
 * append (whole lines) is one write call on the file opened in append mode:
 * not `appendFile`, which splits data over 512 KiB into several writes that
 * another appender's line can land between. A failed directory creation is
 * retried on the next write.
 */
export function fileLineSink(path: string): LineSink {
  let ready: Promise<unknown> | undefined;
  return {
    description: path,
    async append(lines) {
      ready ??= makeDirectory(dirname(path)).catch((error: unknown) => {
        ready = undefined;
        throw error;
      });
      await ready;
      const file = await open(path, 'a+');
      try {
        // A crash mid-write by an earlier process can leave a torn last line: end it first, so our
        // lines never glue onto it (the torn one stays unreadable on its own, the others stay intact).
        const { size } = await file.stat();
        if (size > 0) {
          const last = Buffer.alloc(1);
          await file.read(last, 0, 1, size - 1);
          if (last[0] !== 0x0a) lines = Buffer.concat([Buffer.from('\n'), lines]);
        }
        // A regular file takes the whole buffer in one write; the loop only guards a short write (disk full, a signal).
        let offset = 0;
        while (offset < lines.length) {
          const { bytesWritten } = await file.write(lines, offset, lines.length - offset);
          offset += bytesWritten;
        }
      } finally {
        await file.close();
      }
    },
  };
}

/** A sink writing to a stream (the `console` exporter uses stderr: stdout may be a protocol). */
export function streamLineSink(stream: NodeJS.WritableStream, description: string): LineSink {
  return {
    description,
    append(line) {
      return new Promise((resolve, reject) => {
        try {
          stream.write(line, (error) => (error ? reject(error) : resolve()));
        } catch (error) {
          reject(asError(error));
        }
      });
    },
  };
}

/**
 * Serializes and appends in order; shared by the span and metric exporters.
 * Group commit: lines accepted while a write is in flight are written
 * together by the next write (whole lines only, up to 8 MiB), so the file
 * keeps up with bursts of runs. The backlog is bounded by
 * {@link MAX_PENDING_LINES} and {@link MAX_PENDING_BYTES}.
 */
class LineWriter {
  readonly #sink: LineSink;
  #pending: Array<{ readonly line: Buffer; readonly report: (result: ExportResult) => void }> = [];
  #pendingBytes = 0;
  #draining: Promise<void> | undefined;
  #isShutdown = false;

  constructor(sink: LineSink) {
    this.#sink = sink;
  }

  get description(): string {
    return this.#sink.description;
  }

  write(serialize: () => Uint8Array | undefined, done: (result: ExportResult) => void): void {
    const report = (result: ExportResult): void => {
      try {
        done(result);
      } catch {
        // The SDK's result callback does not throw; a throwing one must not break the write loop.
      }
    };
    if (this.#isShutdown) {
      report({ code: ExportResultCode.FAILED, error: new Error('exporter is shut down') });
      return;
    }
    let line: Buffer;
    try {
      const body = serialize();
      if (body === undefined) throw new Error('OTLP JSON serialization produced nothing');
      line = Buffer.concat([body, NEWLINE]);
    } catch (error) {
      report({ code: ExportResultCode.FAILED, error: asError(error) });
      return;
    }
    if (this.#pending.length >= MAX_PENDING_LINES || this.#pendingBytes + line.length > MAX_PENDING_BYTES) {
      report({
        code: ExportResultCode.FAILED,
        error: new Error(`${this.#sink.description}: write backlog full, line dropped`),
      });
      return;
    }
    this.#pending.push({ line, report });
    this.#pendingBytes += line.length;
    this.#draining ??= this.#drain();
  }

  /** Writes pending lines, a group per write, until none are left; never rejects. */
  async #drain(): Promise<void> {
    while (this.#pending.length > 0) {
      let bytes = 0;
      let count = 0;
      while (
        count < this.#pending.length &&
        (count === 0 || bytes + (this.#pending[count]?.line.length ?? 0) <= MAX_GROUP_BYTES)
      ) {
        bytes += this.#pending[count]?.line.length ?? 0;
        count += 1;
      }
      const group = this.#pending.splice(0, count);
      this.#pendingBytes -= bytes;
      let result: ExportResult;
      try {
        await this.#sink.append(
          group.length === 1
            ? group[0]!.line
            : Buffer.concat(
                group.map((item) => item.line),
                bytes,
              ),
        );
        result = { code: ExportResultCode.SUCCESS };
      } catch (error) {
        result = { code: ExportResultCode.FAILED, error: asError(error) };
      }
      for (const item of group) item.report(result);
    }
    this.#draining = undefined;
  }

  /** Resolves when every accepted line is written or has failed; never rejects. */
  flush(): Promise<void> {
    return this.#draining ?? Promise.resolve();
  }

  shutdown(): Promise<void> {
    this.#isShutdown = true;
    return this.flush();
  }
}

/**
 * A `SpanExporter` writing one OTLP JSON `ExportTraceServiceRequest` per
 * export as one line. Export failures (serialization, I/O, use after
 * shutdown) resolve the callback with `FAILED` and the error; it never throws.
 */
export class OtlpJsonLinesSpanExporter implements SpanExporter {
  readonly #writer: LineWriter;

  constructor(sink: LineSink) {
    this.#writer = new LineWriter(sink);
  }

  /** Where the lines go. */
  get description(): string {
    return this.#writer.description;
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.#writer.write(() => JsonTraceSerializer.serializeRequest(spans), resultCallback);
  }

  /** Resolves when every accepted line is written; never rejects. */
  forceFlush(): Promise<void> {
    return this.#writer.flush();
  }

  /** Refuses later exports and resolves when pending lines are written; never rejects. */
  shutdown(): Promise<void> {
    return this.#writer.shutdown();
  }
}

/**
 * A `PushMetricExporter` writing one OTLP JSON `ExportMetricsServiceRequest`
 * per export as one line (cumulative temporality, the SDK default). Export
 * failures resolve the callback with `FAILED`; it never throws.
 */
export class OtlpJsonLinesMetricExporter implements PushMetricExporter {
  readonly #writer: LineWriter;

  constructor(sink: LineSink) {
    this.#writer = new LineWriter(sink);
  }

  /** Where the lines go. */
  get description(): string {
    return this.#writer.description;
  }

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    this.#writer.write(() => JsonMetricsSerializer.serializeRequest(metrics), resultCallback);
  }

  /** Resolves when every accepted line is written; never rejects. */
  forceFlush(): Promise<void> {
    return this.#writer.flush();
  }

  /** Refuses later exports and resolves when pending lines are written; never rejects. */
  shutdown(): Promise<void> {
    return this.#writer.shutdown();
  }
}

/** Span exporter appending to `<dir>/traces.jsonl` (directory created on first export). */
export function createTraceFileExporter(dir: string): OtlpJsonLinesSpanExporter {
  return new OtlpJsonLinesSpanExporter(fileLineSink(join(dir, TRACES_FILE_NAME)));
}

/** Metric exporter appending to `<dir>/metrics.jsonl` (directory created on first export). */
export function createMetricFileExporter(dir: string): OtlpJsonLinesMetricExporter {
  return new OtlpJsonLinesMetricExporter(fileLineSink(join(dir, METRICS_FILE_NAME)));
}
