/**
 * OTLP-JSON-lines exporters: each export appends one OTLP JSON export request
 * (exactly the body the OTLP/HTTP JSON exporter would POST) as one line, to
 * `traces.jsonl` or `metrics.jsonl` in a directory, or to a stream. This is
 * the format the OpenTelemetry Collector's `otlpjsonfile` receiver reads, and
 * the embedded default destination when no collector is configured.
 *
 * Each line is written with one append call, so a crash leaves complete
 * lines. Lines are written in export order. Owns serialization and writing
 * only; which exporters run is `setup.ts`'s decision.
 *
 * @module subagent-otel/telemetry/otlp-json-file-exporter
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { JsonMetricsSerializer, JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';

/** File name of the traces in an output directory. */
export const TRACES_FILE_NAME = 'traces.jsonl';
/** File name of the metrics in an output directory. */
export const METRICS_FILE_NAME = 'metrics.jsonl';

const NEWLINE = Buffer.from('\n');

/** Where lines go. */
export interface LineSink {
  /** Human-readable destination (a file path, `stderr`). */
  readonly description: string;
  /** Writes one complete line (the newline included) with a single write; rejects when it could not. */
  append(line: Uint8Array): Promise<void>;
}

/**
 * A sink appending to the file at `path`, creating its directory on the first
 * write (not before: nothing is created when nothing is exported). Each line
 * is one `appendFile` call. A failed directory creation is retried on the next
 * write.
 */
export function fileLineSink(path: string): LineSink {
  let ready: Promise<unknown> | undefined;
  return {
    description: path,
    async append(line) {
      ready ??= mkdir(dirname(path), { recursive: true }).catch((error: unknown) => {
        ready = undefined;
        throw error;
      });
      await ready;
      await appendFile(path, line);
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
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    },
  };
}

/** Serializes and appends in order; shared by the span and metric exporters. */
class LineWriter {
  readonly #sink: LineSink;
  #tail: Promise<void> = Promise.resolve();
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
        // The SDK's result callback does not throw; a throwing one must not break the write chain.
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
      report({ code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) });
      return;
    }
    this.#tail = this.#tail.then(
      () =>
        this.#sink.append(line).then(
          () => report({ code: ExportResultCode.SUCCESS }),
          (error: unknown) => report({ code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) }),
        ),
    );
  }

  /** Resolves when every accepted line is written or has failed; never rejects. */
  flush(): Promise<void> {
    return this.#tail;
  }

  shutdown(): Promise<void> {
    this.#isShutdown = true;
    return this.#tail;
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
