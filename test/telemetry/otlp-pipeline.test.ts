/**
 * The OTLP exporter of one signal as its pipeline uses it: URLs in messages
 * lose their credentials, and an exporter that cannot be built is said once
 * and leaves the signal to the files (`attach` is never called).
 */
import { describe, expect, it } from 'vitest';
import { ExportAccounts } from '../../src/telemetry/export-accounts.js';
import { attachOtlpExporter, displayUrl, type OtlpSignalParts } from '../../src/telemetry/otlp-pipeline.js';
import type { PipelineContext } from '../../src/telemetry/pipeline-context.js';
import { planTelemetry } from '../../src/telemetry/setup.js';
import { OnceReporter } from '../../src/telemetry/report-once.js';

describe('displayUrl', () => {
  it('drops user, password, query and fragment', () => {
    expect(displayUrl('https://user:secret@collector.example:4318/v1/traces?token=abc#frag')).toBe(
      'https://collector.example:4318/v1/traces',
    );
  });

  it('shows a placeholder, never the text, for what is not a URL', () => {
    expect(displayUrl('not a url with secret')).toBe('(invalid URL)');
  });
});

function context(): PipelineContext {
  const reports = new OnceReporter();
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example:4318' };
  const plan = planTelemetry({ env }, reports);
  return {
    env,
    plan,
    reports,
    accounts: new ExportAccounts(reports, undefined),
    destinations: [],
    spillers: [],
    consoleStream: undefined,
  };
}

describe('attachOtlpExporter', () => {
  it('attaches the lazy exporter and adds the destination line', () => {
    const ctx = context();
    const attached: string[] = [];
    const parts: OtlpSignalParts<string> = {
      signal: 'traces',
      otlpSignal: 'TRACES',
      items: 'spans',
      load: () => Promise.resolve('loaded'),
      lazy: () => 'lazy',
      outbox: () => {
        throw new Error('the outbox is off');
      },
    };
    const otlp = ctx.plan.traces.otlp;
    expect(otlp).toBeDefined();
    expect(attachOtlpExporter(parts, otlp!, ctx, (exporter) => attached.push(exporter))).toBe(true);
    expect(attached).toEqual(['lazy']);
    expect(ctx.destinations).toEqual(['traces: OTLP/HTTP protobuf http://collector.example:4318/v1/traces']);
    expect(ctx.accounts.errors).toEqual([]);
  });

  it('says an exporter that cannot be built, adds no destination and returns false', () => {
    const ctx = context();
    const parts: OtlpSignalParts<string> = {
      signal: 'metrics',
      otlpSignal: 'METRICS',
      items: 'batches',
      load: () => {
        throw new Error('no such module');
      },
      lazy: () => 'lazy',
      outbox: () => 'outboxed' as never,
    };
    let attachCalls = 0;
    expect(attachOtlpExporter(parts, ctx.plan.metrics.otlp!, ctx, () => (attachCalls += 1))).toBe(false);
    expect(attachCalls).toBe(0);
    expect(ctx.destinations).toEqual([]);
    expect(ctx.accounts.errors).toEqual([
      'metrics: OTLP exporter could not be built (no such module); writing files instead',
    ]);
  });

  it('notes a load that fails later, naming the protocol', async () => {
    const ctx = context();
    const parts: OtlpSignalParts<string> = {
      signal: 'traces',
      otlpSignal: 'TRACES',
      items: 'spans',
      load: () => Promise.reject(new Error('chunk missing')),
      lazy: () => 'lazy',
      outbox: () => 'outboxed' as never,
    };
    expect(attachOtlpExporter(parts, ctx.plan.traces.otlp!, ctx, () => undefined)).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(ctx.accounts.errors).toEqual(['traces: OTLP/HTTP protobuf exporter could not be loaded (chunk missing)']);
  });
});
