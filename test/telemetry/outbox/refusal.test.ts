/** The outbox's refusal rule (`isPermanentRefusal`): which export failures are refusals for good. */
import { OTLPExporterError } from '@opentelemetry/otlp-exporter-base';
import { describe, expect, it } from 'vitest';
import { isPermanentRefusal } from '../../../src/telemetry/outbox/refusal.js';

describe('refusals for good', () => {
  it('are HTTP 4xx but 408 and 429, and the permanent gRPC codes; everything else may pass later', () => {
    const http = (code: number) => new OTLPExporterError('x', code);
    expect([400, 401, 403, 404, 413].map((c) => isPermanentRefusal(http(c), 'http/json'))).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect([408, 429, 500, 502, 503].map((c) => isPermanentRefusal(http(c), 'http/protobuf'))).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    const grpc = (code: number) => Object.assign(new Error('x'), { code });
    expect([3, 7, 12, 16].map((c) => isPermanentRefusal(grpc(c), 'grpc'))).toEqual([true, true, true, true]);
    expect([1, 4, 8, 14].map((c) => isPermanentRefusal(grpc(c), 'grpc'))).toEqual([false, false, false, false]);
    expect(
      isPermanentRefusal(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 'http/json'),
    ).toBe(false);
  });
});
