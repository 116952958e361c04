/**
 * `createTelemetry` is the standalone pipeline: it registers no global
 * provider, so a host's own SDK (or its absence) is left as it was.
 */
import { metrics, trace, ProxyTracerProvider } from '@opentelemetry/api';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTelemetry } from '../../src/telemetry/setup.js';

describe('createTelemetry', () => {
  it('registers no global tracer or meter provider', async () => {
    const meterBefore = metrics.getMeterProvider();
    const telemetry = createTelemetry({ env: {}, out: mkdtempSync(join(tmpdir(), 'standalone-')) });
    expect(metrics.getMeterProvider()).toBe(meterBefore);
    const global = trace.getTracerProvider();
    expect(global).toBeInstanceOf(ProxyTracerProvider);
    // No delegate was installed: the proxy still hands out no-op tracers.
    expect((global as ProxyTracerProvider).getDelegate()).not.toBe(telemetry.tracerProvider);
    expect(global.getTracer('x').startSpan('probe').spanContext().traceId).toBe('00000000000000000000000000000000');
    const report = await telemetry.shutdown(2000);
    expect(report.errors).toEqual([]);
  });
});
