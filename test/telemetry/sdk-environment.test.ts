/**
 * The SDK variables handed to OpenTelemetry constructors explicitly: the
 * resource attributes and the batch span processor limits come from the
 * given environment only, never from `process.env`.
 */
import { describe, expect, it } from 'vitest';
import { batchSpanProcessorConfig, resourceAttributesOf } from '../../src/telemetry/sdk-environment.js';
import { OnceReporter } from '../../src/telemetry/report-once.js';

describe('resourceAttributesOf', () => {
  it('reads key=value pairs, percent-decoded, and OTEL_SERVICE_NAME over service.name', () => {
    expect(
      resourceAttributesOf(
        { OTEL_RESOURCE_ATTRIBUTES: ' team = obs%20team ,deployment.environment=prod' },
        new OnceReporter(),
      ),
    ).toEqual({
      team: 'obs team',
      'deployment.environment': 'prod',
    });
    expect(
      resourceAttributesOf({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=b', OTEL_SERVICE_NAME: 'a' }, new OnceReporter()),
    ).toEqual({ 'service.name': 'a' });
  });

  it('discards the whole variable when one entry does not parse', () => {
    expect(resourceAttributesOf({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=b,broken' }, new OnceReporter())).toEqual({});
    expect(resourceAttributesOf({ OTEL_RESOURCE_ATTRIBUTES: 'a=%E0%A4%A' }, new OnceReporter())).toEqual({});
    expect(resourceAttributesOf({ OTEL_RESOURCE_ATTRIBUTES: '=x' }, new OnceReporter())).toEqual({});
  });

  it('reads nothing from process.env', () => {
    const saved = process.env['OTEL_SERVICE_NAME'];
    process.env['OTEL_SERVICE_NAME'] = 'from-process';
    try {
      expect(resourceAttributesOf({}, new OnceReporter())).toEqual({});
    } finally {
      if (saved === undefined) delete process.env['OTEL_SERVICE_NAME'];
      else process.env['OTEL_SERVICE_NAME'] = saved;
    }
  });
});

describe('batchSpanProcessorConfig', () => {
  it('gives the specification defaults for an empty environment', () => {
    expect(batchSpanProcessorConfig({}, new OnceReporter())).toEqual({
      maxQueueSize: 2048,
      maxExportBatchSize: 512,
      scheduledDelayMillis: 5000,
      exportTimeoutMillis: 30000,
    });
  });

  it('takes whole numbers in range, falls back for the rest, and keeps the batch within the queue', () => {
    expect(
      batchSpanProcessorConfig(
        {
          OTEL_BSP_MAX_QUEUE_SIZE: '100',
          OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '500',
          OTEL_BSP_SCHEDULE_DELAY: '20',
          OTEL_BSP_EXPORT_TIMEOUT: 'soon',
        },
        new OnceReporter(),
      ),
    ).toEqual({ maxQueueSize: 100, maxExportBatchSize: 100, scheduledDelayMillis: 20, exportTimeoutMillis: 30000 });
    expect(batchSpanProcessorConfig({ OTEL_BSP_MAX_QUEUE_SIZE: '0' }, new OnceReporter()).maxQueueSize).toBe(2048);
  });
});
