/**
 * `RunTelemetry` inside a host that runs the OpenTelemetry Node SDK
 * (`@opentelemetry/sdk-node`), with no arguments: spans land in the host's
 * exporter under the host's active span, metrics in the host's reader, even
 * when the `RunTelemetry` was built before the host's SDK started.
 */
import { context, trace } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SdkTracker } from '../../src/observe/sdk-tracker.js';
import { RunTelemetry } from '../../src/telemetry/run-telemetry.js';
import { events, step, text, turnEnd, turnStart, usage } from '../helpers/events.js';

/** A pull reader the test collects on demand: the host's own metric pipeline. */
class HostReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

function feedRun(tracker: SdkTracker, sessionId: string, answer: string, time0: number): void {
  for (const event of events(
    [turnStart(), step('embedded', { content: [text(answer)], usage: usage(10, 2) }), turnEnd('completed')],
    0,
    time0,
  )) {
    tracker.onNotification('session.event', { sessionId, event });
  }
}

function sumOf(collected: ResourceMetrics, name: string): number {
  const metric = collected.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
  return (metric?.dataPoints ?? []).reduce((sum, point) => sum + (point.value as number), 0);
}

describe('RunTelemetry in a host running NodeSDK', () => {
  const spans = new InMemorySpanExporter();
  const reader = new HostReader();
  // Built before the host's SDK starts: the global meter is still the no-op one here.
  const early = new RunTelemetry();
  let sdk: NodeSDK;

  beforeAll(() => {
    sdk = new NodeSDK({
      serviceName: 'host-app',
      spanProcessors: [new SimpleSpanProcessor({ exporter: spans })],
      metricReaders: [reader],
      logRecordProcessors: [],
      instrumentations: [],
      resourceDetectors: [],
    });
    sdk.start();
  });

  afterAll(async () => {
    await sdk.shutdown();
  });

  const runSpan = (sessionId: string): ReadableSpan => {
    const found = spans
      .getFinishedSpans()
      .find((s) => s.name.startsWith('invoke_agent') && s.attributes['gen_ai.conversation.id'] === sessionId);
    if (found === undefined) throw new Error(`no invoke_agent span for ${sessionId}`);
    return found;
  };

  it('puts the run span under the host span active where the tracker is called', () => {
    const host = trace.getTracer('host-app');
    let loopSpanId = '';
    let loopTraceId = '';
    host.startActiveSpan('agent-loop', (loop) => {
      loopSpanId = loop.spanContext().spanId;
      loopTraceId = loop.spanContext().traceId;
      const tracker = new SdkTracker(early, { agentName: 'researcher' });
      feedRun(tracker, 'host-s1', 'Done.', 1_700_000_000_000);
      loop.end();
    });
    const span = runSpan('host-s1');
    expect(span.spanContext().traceId).toBe(loopTraceId);
    expect(span.parentSpanContext?.spanId).toBe(loopSpanId);
    expect(span.name).toBe('invoke_agent researcher');
    expect(span.resource.attributes['service.name']).toBe('host-app');
    expect(span.instrumentationScope.name).toBe('subagent-otel');
    // The loop span went to the same exporter: one pipeline, one trace.
    expect(spans.getFinishedSpans().map((s) => s.name)).toContain('agent-loop');
  });

  it('records metrics in the host reader although built before the SDK started', async () => {
    const { resourceMetrics, errors } = await reader.collect();
    expect(errors).toEqual([]);
    expect(sumOf(resourceMetrics, 'subagent.runs')).toBe(1);
    expect(resourceMetrics.resource.attributes['service.name']).toBe('host-app');
  });

  it('nests a tracker under the context it was given, whatever is active when it is fed', async () => {
    const runs = new RunTelemetry();
    const host = trace.getTracer('host-app');
    const parent = host.startSpan('delegation');
    const tracker = new SdkTracker(runs.withParent(trace.setSpan(context.active(), parent)), { agentName: 'coder' });
    // Fed outside any active span (e.g. from a stdio callback).
    feedRun(tracker, 'host-s2', 'Patched.', 1_700_000_001_000);
    parent.end();
    const span = runSpan('host-s2');
    expect(span.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(span.spanContext().traceId).toBe(parent.spanContext().traceId);
    const { resourceMetrics } = await reader.collect();
    expect(sumOf(resourceMetrics, 'subagent.runs')).toBe(2);
  });

  it('starts a new trace when nothing is active and no parent was given', () => {
    const tracker = new SdkTracker(new RunTelemetry(), { agentName: 'solo' });
    feedRun(tracker, 'host-s3', 'Alone.', 1_700_000_002_000);
    const span = runSpan('host-s3');
    expect(span.parentSpanContext).toBeUndefined();
  });
});
