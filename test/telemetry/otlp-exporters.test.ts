/**
 * The exporters that stand for one still loading (`LazySpanExporter`,
 * `LazyMetricExporter`, one generic class): exports wait for the load and
 * reach the loaded exporter; a failed load or a throwing exporter becomes a
 * failed export, never a throw; flush and shutdown reach it, or do nothing.
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { LazyMetricExporter, LazySpanExporter } from '../../src/telemetry/otlp-exporters.js';

function exportOnce<B>(
  exporter: { export(batch: B, done: (result: ExportResult) => void): void },
  batch: B,
): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(batch, resolve));
}

function recordingSpanExporter(calls: string[]): SpanExporter {
  return {
    export: (spans, done) => {
      calls.push(`export ${spans.length}`);
      done({ code: ExportResultCode.SUCCESS });
    },
    forceFlush: () => {
      calls.push('flush');
      return Promise.resolve();
    },
    shutdown: () => {
      calls.push('shutdown');
      return Promise.resolve();
    },
  };
}

describe('LazySpanExporter', () => {
  it('hands exports, flush and shutdown to the exporter once it loaded', async () => {
    const calls: string[] = [];
    let loaded: (exporter: SpanExporter) => void = () => undefined;
    const lazy = new LazySpanExporter(new Promise((resolve) => (loaded = resolve)));
    const result = exportOnce(lazy, [{} as ReadableSpan, {} as ReadableSpan]);
    expect(calls).toEqual([]);
    loaded(recordingSpanExporter(calls));
    expect((await result).code).toBe(ExportResultCode.SUCCESS);
    await lazy.forceFlush();
    await lazy.shutdown();
    expect(calls).toEqual(['export 2', 'flush', 'shutdown']);
  });

  it('fails each export with the load error when the load failed, and flushes and shuts down quietly', async () => {
    const lazy = new LazySpanExporter(Promise.reject(new Error('cannot import')));
    const result = await exportOnce(lazy, []);
    expect(result.code).toBe(ExportResultCode.FAILED);
    expect(result.error?.message).toBe('cannot import');
    await expect(lazy.forceFlush()).resolves.toBeUndefined();
    await expect(lazy.shutdown()).resolves.toBeUndefined();
  });

  it('turns an exporter that throws into a failed export', async () => {
    const throwing: SpanExporter = {
      export: () => {
        throw new Error('boom');
      },
      shutdown: () => Promise.resolve(),
    };
    const result = await exportOnce(new LazySpanExporter(Promise.resolve(throwing)), []);
    expect(result.code).toBe(ExportResultCode.FAILED);
    expect(result.error?.message).toBe('boom');
  });
});

describe('LazyMetricExporter', () => {
  it('hands a batch to the loaded exporter, and wraps a non-Error load failure in an Error', async () => {
    const batches: ResourceMetrics[] = [];
    const inner: PushMetricExporter = {
      export: (metrics, done) => {
        batches.push(metrics);
        done({ code: ExportResultCode.SUCCESS });
      },
      forceFlush: () => Promise.resolve(),
      shutdown: () => Promise.resolve(),
    };
    const batch = { resource: {}, scopeMetrics: [] } as unknown as ResourceMetrics;
    expect((await exportOnce(new LazyMetricExporter(Promise.resolve(inner)), batch)).code).toBe(
      ExportResultCode.SUCCESS,
    );
    expect(batches).toEqual([batch]);
    const failed = await exportOnce(new LazyMetricExporter(Promise.reject('offline')), batch);
    expect(failed.code).toBe(ExportResultCode.FAILED);
    expect(failed.error).toBeInstanceOf(Error);
    expect(failed.error?.message).toBe('offline');
  });
});
