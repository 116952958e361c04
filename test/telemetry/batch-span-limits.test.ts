/**
 * `batchSpanLimits`: the `OTEL_BSP_*` variables become the batch span
 * processor's options (the OpenTelemetry 3.x processor no longer reads the
 * environment); values that are not positive numbers are left to the SDK.
 */
import { describe, expect, it } from 'vitest';
import { batchSpanLimits } from '../../src/telemetry/setup.js';

describe('batchSpanLimits', () => {
  it('maps each OTEL_BSP_* variable to its processor option', () => {
    expect(
      batchSpanLimits({ OTEL_BSP_SCHEDULE_DELAY: '20', OTEL_BSP_EXPORT_TIMEOUT: '400', OTEL_BSP_MAX_QUEUE_SIZE: ' 4 ', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2' }),
    ).toEqual({ scheduledDelayMillis: 20, exportTimeoutMillis: 400, maxQueueSize: 4, maxExportBatchSize: 2 });
  });

  it('leaves out what is unset, blank, not a number, zero or negative', () => {
    expect(batchSpanLimits({})).toEqual({});
    expect(batchSpanLimits({ OTEL_BSP_SCHEDULE_DELAY: '', OTEL_BSP_EXPORT_TIMEOUT: 'soon', OTEL_BSP_MAX_QUEUE_SIZE: '0', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '-8' })).toEqual({});
  });
});
