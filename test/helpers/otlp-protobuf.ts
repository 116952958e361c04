/**
 * Decodes OTLP protobuf export requests (`ExportTraceServiceRequest`,
 * `ExportMetricsServiceRequest`) into the OTLP JSON shape the other helpers
 * read, so receivers can check what a protobuf or gRPC exporter sent. A
 * plain protobuf wire-format reader plus the field numbers of the
 * opentelemetry-proto definitions (trace/v1, metrics/v1, common/v1,
 * resource/v1); fields the tests never read are skipped. Independent of the
 * code under test.
 *
 * @module subagent-otel/test/helpers/otlp-protobuf
 */

type Field = {
  readonly number: number;
  readonly wire: number;
  readonly varint?: bigint;
  readonly bytes?: Buffer;
  readonly fixed?: Buffer;
};

/** Splits one message into its fields, in order. Throws on malformed input. */
function fields(buffer: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (at >= buffer.length) throw new Error('truncated varint');
      const byte = buffer[at++] as number;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (at < buffer.length) {
    const tag = Number(varint());
    const number = tag >>> 3;
    const wire = tag & 7;
    if (wire === 0) out.push({ number, wire, varint: varint() });
    else if (wire === 1) {
      out.push({ number, wire, fixed: buffer.subarray(at, at + 8) });
      at += 8;
    } else if (wire === 2) {
      const length = Number(varint());
      out.push({ number, wire, bytes: buffer.subarray(at, at + length) });
      at += length;
    } else if (wire === 5) {
      out.push({ number, wire, fixed: buffer.subarray(at, at + 4) });
      at += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
    if (at > buffer.length) throw new Error('truncated field');
  }
  return out;
}

const all = (buffer: Buffer, number: number): Field[] => fields(buffer).filter((f) => f.number === number);
const one = (buffer: Buffer, number: number): Field | undefined => all(buffer, number).at(-1);
const str = (buffer: Buffer, number: number): string | undefined => one(buffer, number)?.bytes?.toString('utf8');
const hex = (buffer: Buffer, number: number): string | undefined => one(buffer, number)?.bytes?.toString('hex');
const fixed64 = (buffer: Buffer, number: number): string | undefined =>
  one(buffer, number)?.fixed?.readBigUInt64LE(0).toString();
const double = (buffer: Buffer, number: number): number | undefined => one(buffer, number)?.fixed?.readDoubleLE(0);
const int = (buffer: Buffer, number: number): number | undefined => {
  const v = one(buffer, number)?.varint;
  return v === undefined ? undefined : Number(BigInt.asIntN(64, v));
};

/** AnyValue: 1 string, 2 bool, 3 int, 4 double, 5 array (ArrayValue.values = 1), 7 bytes. */
function anyValue(buffer: Buffer): Record<string, unknown> {
  const f = fields(buffer)[0];
  if (f === undefined) return {};
  switch (f.number) {
    case 1:
      return { stringValue: f.bytes?.toString('utf8') ?? '' };
    case 2:
      return { boolValue: f.varint !== 0n };
    case 3:
      return { intValue: Number(BigInt.asIntN(64, f.varint ?? 0n)) };
    case 4:
      return { doubleValue: f.fixed?.readDoubleLE(0) };
    case 5:
      return {
        arrayValue: { values: all(f.bytes ?? Buffer.alloc(0), 1).map((v) => anyValue(v.bytes ?? Buffer.alloc(0))) },
      };
    default:
      return {};
  }
}

/** KeyValue list: KeyValue.key = 1, KeyValue.value = 2. */
function attributes(buffer: Buffer, number: number): Array<{ key: string; value: Record<string, unknown> }> {
  return all(buffer, number).map((f) => {
    const kv = f.bytes ?? Buffer.alloc(0);
    const value = one(kv, 2)?.bytes;
    return { key: str(kv, 1) ?? '', value: value === undefined ? {} : anyValue(value) };
  });
}

/** Resource.attributes = 1. */
const resource = (buffer: Buffer | undefined) => ({ attributes: buffer === undefined ? [] : attributes(buffer, 1) });

/** Span: 1 trace_id, 2 span_id, 4 parent_span_id, 5 name, 6 kind, 7 start, 8 end, 9 attributes, 15 status (2 message, 3 code). */
function span(buffer: Buffer): Record<string, unknown> {
  const status = one(buffer, 15)?.bytes;
  const parent = hex(buffer, 4);
  return {
    traceId: hex(buffer, 1),
    spanId: hex(buffer, 2),
    ...(parent !== undefined && parent !== '' ? { parentSpanId: parent } : {}),
    name: str(buffer, 5),
    kind: int(buffer, 6) ?? 0,
    startTimeUnixNano: fixed64(buffer, 7),
    endTimeUnixNano: fixed64(buffer, 8),
    attributes: attributes(buffer, 9),
    status:
      status === undefined
        ? {}
        : { code: int(status, 3) ?? 0, ...(str(status, 2) !== undefined ? { message: str(status, 2) } : {}) },
  };
}

/** Decodes an `ExportTraceServiceRequest` (resource_spans = 1; ResourceSpans: resource 1, scope_spans 2; ScopeSpans: spans 2). */
export function decodeTraceRequest(body: Buffer): { resourceSpans: unknown[] } {
  return {
    resourceSpans: all(body, 1).map((rs) => {
      const b = rs.bytes ?? Buffer.alloc(0);
      return {
        resource: resource(one(b, 1)?.bytes),
        scopeSpans: all(b, 2).map((ss) => ({
          spans: all(ss.bytes ?? Buffer.alloc(0), 2).map((s) => span(s.bytes ?? Buffer.alloc(0))),
        })),
      };
    }),
  };
}

/** NumberDataPoint: 7 attributes, 4 as_double, 6 as_int (sfixed64). */
function numberPoint(buffer: Buffer): Record<string, unknown> {
  const asInt = one(buffer, 6)?.fixed;
  return {
    attributes: attributes(buffer, 7),
    ...(asInt !== undefined ? { asInt: Number(asInt.readBigInt64LE(0)) } : { asDouble: double(buffer, 4) }),
  };
}

/** HistogramDataPoint: 9 attributes, 4 count (fixed64), 5 sum (double). */
function histogramPoint(buffer: Buffer): Record<string, unknown> {
  return { attributes: attributes(buffer, 9), count: Number(fixed64(buffer, 4) ?? 0), sum: double(buffer, 5) };
}

/** Metric: 1 name, 3 unit, 5 gauge, 7 sum, 9 histogram; Sum/Histogram: data_points 1, aggregation_temporality 2. */
function metric(buffer: Buffer): Record<string, unknown> {
  const out: Record<string, unknown> = { name: str(buffer, 1), unit: str(buffer, 3) ?? '' };
  const gauge = one(buffer, 5)?.bytes;
  const sum = one(buffer, 7)?.bytes;
  const histogram = one(buffer, 9)?.bytes;
  if (gauge !== undefined)
    out['gauge'] = { dataPoints: all(gauge, 1).map((p) => numberPoint(p.bytes ?? Buffer.alloc(0))) };
  if (sum !== undefined) {
    out['sum'] = {
      dataPoints: all(sum, 1).map((p) => numberPoint(p.bytes ?? Buffer.alloc(0))),
      aggregationTemporality: int(sum, 2),
      isMonotonic: one(sum, 3)?.varint === 1n,
    };
  }
  if (histogram !== undefined) {
    out['histogram'] = {
      dataPoints: all(histogram, 1).map((p) => histogramPoint(p.bytes ?? Buffer.alloc(0))),
      aggregationTemporality: int(histogram, 2),
    };
  }
  return out;
}

/** Decodes an `ExportMetricsServiceRequest` (resource_metrics = 1; ResourceMetrics: resource 1, scope_metrics 2; ScopeMetrics: metrics 2). */
export function decodeMetricsRequest(body: Buffer): { resourceMetrics: unknown[] } {
  return {
    resourceMetrics: all(body, 1).map((rm) => {
      const b = rm.bytes ?? Buffer.alloc(0);
      return {
        resource: resource(one(b, 1)?.bytes),
        scopeMetrics: all(b, 2).map((sm) => ({
          metrics: all(sm.bytes ?? Buffer.alloc(0), 2).map((m) => metric(m.bytes ?? Buffer.alloc(0))),
        })),
      };
    }),
  };
}
