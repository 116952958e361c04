/**
 * EndedTogetherSpanProcessor inside a real tracer provider: which spans go
 * out together, when, and what flush and shutdown wait for. The exporter is
 * a recording peer that answers when the test lets it.
 */
import { TraceFlags, trace, type Tracer } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { TracerProvider, AlwaysOffSampler, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { EndedTogetherSpanProcessor, MAX_SPANS_PER_EXPORT } from '../../src/telemetry/ended-together-span-processor.js';

class RecordingExporter implements SpanExporter {
  readonly batches: string[][] = [];
  readonly waiting: Array<(result: ExportResult) => void> = [];
  shutdowns = 0;
  answerAtOnce = true;
  throws = false;

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    if (this.throws) throw new Error('exporter broke');
    this.batches.push(spans.map((s) => s.name));
    if (this.answerAtOnce) resultCallback({ code: ExportResultCode.SUCCESS });
    else this.waiting.push(resultCallback);
  }

  async shutdown(): Promise<void> {
    this.shutdowns += 1;
  }
}

function setup(sampled = true) {
  const exporter = new RecordingExporter();
  const processor = new EndedTogetherSpanProcessor(exporter);
  const provider = new TracerProvider({
    spanProcessors: [processor],
    ...(sampled ? {} : { sampler: new AlwaysOffSampler() }),
  });
  const tracer: Tracer = provider.getTracer('test');
  return { exporter, processor, provider, tracer };
}

const endNow = (tracer: Tracer, name: string): void => tracer.startSpan(name).end();
const nextTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('EndedTogetherSpanProcessor', () => {
  it('exports the spans that ended in one synchronous stretch as one batch, as soon as it returns', async () => {
    const { exporter, tracer } = setup();
    endNow(tracer, 'chat a');
    endNow(tracer, 'execute_tool b');
    endNow(tracer, 'invoke_agent run-1');
    expect(exporter.batches).toEqual([]);
    await Promise.resolve();
    expect(exporter.batches).toEqual([['chat a', 'execute_tool b', 'invoke_agent run-1']]);
    endNow(tracer, 'invoke_agent run-2');
    await nextTick();
    expect(exporter.batches).toEqual([['chat a', 'execute_tool b', 'invoke_agent run-1'], ['invoke_agent run-2']]);
  });

  it('splits a burst of spans ending together into exports of at most 512', async () => {
    const { exporter, tracer } = setup();
    for (let i = 0; i < 1100; i += 1) endNow(tracer, `s${i}`);
    await nextTick();
    expect(MAX_SPANS_PER_EXPORT).toBe(512);
    expect(exporter.batches.map((b) => b.length)).toEqual([512, 512, 76]);
    expect(exporter.batches.flat()[1099]).toBe('s1099');
  });

  it('exports no span the sampler did not sample', async () => {
    const { exporter, tracer } = setup(false);
    const span = tracer.startSpan('unsampled');
    expect(span.spanContext().traceFlags & TraceFlags.SAMPLED).toBe(0);
    span.end();
    await nextTick();
    expect(exporter.batches).toEqual([]);
  });

  it('flushes pending spans at once and resolves only when the exporter answered', async () => {
    const { exporter, processor, tracer } = setup();
    exporter.answerAtOnce = false;
    endNow(tracer, 'a');
    let flushed = false;
    const flushing = processor.forceFlush().then(() => {
      flushed = true;
    });
    expect(exporter.batches).toEqual([['a']]);
    await nextTick();
    expect(flushed).toBe(false);
    exporter.waiting.shift()?.({ code: ExportResultCode.FAILED, error: new Error('disk full') });
    await flushing;
    expect(flushed).toBe(true);
  });

  it('shuts down after flushing, once, and ignores spans that end afterwards', async () => {
    const { exporter, processor, tracer } = setup();
    endNow(tracer, 'before');
    await processor.shutdown();
    await processor.shutdown();
    expect([exporter.batches, exporter.shutdowns]).toEqual([[['before']], 1]);
    endNow(tracer, 'after');
    await nextTick();
    expect(exporter.batches).toEqual([['before']]);
  });

  it('does not hang a flush when the exporter throws', async () => {
    const { exporter, processor, tracer } = setup();
    exporter.throws = true;
    endNow(tracer, 'lost');
    await processor.forceFlush();
    expect(exporter.batches).toEqual([]);
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});
