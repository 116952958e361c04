/**
 * A real OpenTelemetry SDK pipeline for assertions: spans through a
 * `SimpleSpanProcessor` into an `InMemorySpanExporter`, metrics into an
 * `InMemoryMetricExporter` collected on demand, and a `RunTelemetry` on top.
 */
import { TracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import type { ContentPolicy } from '../../src/telemetry/content-policy.js';
import { RunTelemetry } from '../../src/telemetry/run-telemetry.js';
import type { SemconvStability } from '../../src/telemetry/semconv.js';

export function telemetryHarness(content: ContentPolicy = { capture: true }, semconv: SemconvStability = 'latest') {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] });
  const metrics = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metrics, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const runs = new RunTelemetry({
    tracer: tracerProvider.getTracer('test'),
    meter: meterProvider.getMeter('test'),
    content,
    semconv,
  });
  return {
    runs,
    spanExporter: spans,
    metricExporter: metrics,
    reader,
    tracerProvider,
    meterProvider,
    /** Finished `invoke_agent` spans. */
    runSpans: (): ReadableSpan[] => spans.getFinishedSpans().filter((s) => s.name.startsWith('invoke_agent')),
    /** Sum of a counter's data points, optionally filtered by one attribute. */
    async counter(name: string, where?: [string, unknown]): Promise<number> {
      await reader.forceFlush();
      const all =
        metrics
          .getMetrics()
          .at(-1)
          ?.scopeMetrics.flatMap((s) => s.metrics) ?? [];
      const metric = all.find((m) => m.descriptor.name === name);
      return (metric?.dataPoints ?? [])
        .filter((p) => where === undefined || p.attributes[where[0]] === where[1])
        .reduce((sum, p) => sum + (p.value as number), 0);
    },
  };
}
