/**
 * OTLP/HTTP JSON export requests as an agent's own OpenTelemetry SDK sends
 * them (`/v1/traces`, `/v1/logs`, `/v1/metrics`): zod schemas for the parts
 * the proxy reads (resources, spans' ids and times, log records'
 * attributes), everything else kept as sent (`passthrough`), so a request
 * can be forwarded with only its ids rewritten. Attribute values are read
 * with {@link attributeValue}. Never throws on malformed input: `parse*`
 * return a result.
 *
 * @module subagent-otel/wire/otlp-json
 */
import * as z from 'zod';

/** An OTLP `AnyValue` as JSON (one of its fields set). */
export interface OtlpAnyValue {
  readonly stringValue?: string;
  readonly boolValue?: boolean;
  readonly intValue?: string | number;
  readonly doubleValue?: number;
  readonly arrayValue?: { readonly values?: readonly OtlpAnyValue[] };
  readonly kvlistValue?: { readonly values?: readonly OtlpKeyValue[] };
}

export interface OtlpKeyValue {
  readonly key: string;
  readonly value?: OtlpAnyValue;
}

const anyValue: z.ZodType<OtlpAnyValue> = z.lazy(() =>
  z
    .object({
      stringValue: z.string().optional(),
      boolValue: z.boolean().optional(),
      intValue: z.union([z.string(), z.number()]).optional(),
      doubleValue: z.number().optional(),
      arrayValue: z.object({ values: z.array(anyValue).optional() }).optional(),
      kvlistValue: z.object({ values: z.array(keyValue).optional() }).optional(),
    })
    .passthrough(),
);
const keyValue: z.ZodType<OtlpKeyValue> = z.lazy(() =>
  z.object({ key: z.string(), value: anyValue.optional() }).passthrough(),
);

const attributes = z.array(keyValue).optional();
const resource = z.object({ attributes }).passthrough().optional();
/** Nanoseconds since the epoch: JSON exporters send strings, some numbers. */
const nanos = z.union([z.string().regex(/^[0-9]+$/), z.number().nonnegative()]).optional();
const hexId = (bytes: number): z.ZodString => z.string().regex(new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`));

const span = z
  .object({
    traceId: hexId(16),
    spanId: hexId(8),
    parentSpanId: z.union([hexId(8), z.literal('')]).optional(),
    name: z.string(),
    startTimeUnixNano: nanos,
    endTimeUnixNano: nanos,
    attributes,
  })
  .passthrough();

const logRecord = z
  .object({
    timeUnixNano: nanos,
    observedTimeUnixNano: nanos,
    attributes,
    traceId: z.string().optional(),
    spanId: z.string().optional(),
  })
  .passthrough();

const tracesRequest = z
  .object({
    resourceSpans: z
      .array(
        z
          .object({
            resource,
            scopeSpans: z.array(z.object({ spans: z.array(span).optional() }).passthrough()).optional(),
          })
          .passthrough(),
      )
      .optional(),
  })
  .passthrough();

const logsRequest = z
  .object({
    resourceLogs: z
      .array(
        z
          .object({
            resource,
            scopeLogs: z.array(z.object({ logRecords: z.array(logRecord).optional() }).passthrough()).optional(),
          })
          .passthrough(),
      )
      .optional(),
  })
  .passthrough();

const metricsRequest = z
  .object({ resourceMetrics: z.array(z.object({ resource }).passthrough()).optional() })
  .passthrough();

export type OtlpJsonSpan = z.infer<typeof span>;
export type OtlpJsonLogRecord = z.infer<typeof logRecord>;
export type OtlpJsonTracesRequest = z.infer<typeof tracesRequest>;
export type OtlpJsonLogsRequest = z.infer<typeof logsRequest>;
export type OtlpJsonMetricsRequest = z.infer<typeof metricsRequest>;

/** The signals an OTLP/HTTP receiver takes, by path. */
export type OtlpSignal = 'traces' | 'logs' | 'metrics';

/** One decoded export request. */
export type OtlpJsonRequest =
  | { readonly signal: 'traces'; readonly body: OtlpJsonTracesRequest }
  | { readonly signal: 'logs'; readonly body: OtlpJsonLogsRequest }
  | { readonly signal: 'metrics'; readonly body: OtlpJsonMetricsRequest };

/**
 * Validates a parsed JSON body as the export request of `signal`.
 * @returns the request, or the first problem in words (path and issue).
 */
export function parseOtlpJsonRequest(
  signal: OtlpSignal,
  json: unknown,
): { ok: true; value: OtlpJsonRequest } | { ok: false; error: string } {
  const schema = signal === 'traces' ? tracesRequest : signal === 'logs' ? logsRequest : metricsRequest;
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      error: `${signal} request: ${issue !== undefined ? `${issue.path.join('.') || '(body)'}: ${issue.message}` : 'invalid'}`,
    };
  }
  return { ok: true, value: { signal, body: parsed.data } as OtlpJsonRequest };
}

/**
 * The plain value of an OTLP attribute: string, number (an `intValue` string
 * becomes a number when it is a safe integer), boolean, or an array of those;
 * `undefined` for kvlists and empty values.
 */
export function attributeValue(
  value: OtlpAnyValue | undefined,
): string | number | boolean | Array<string | number | boolean> | undefined {
  if (value === undefined) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.intValue !== undefined) {
    const n = typeof value.intValue === 'number' ? value.intValue : Number(value.intValue);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  if (value.arrayValue !== undefined) {
    const out: Array<string | number | boolean> = [];
    for (const item of value.arrayValue.values ?? []) {
      const plain = attributeValue(item);
      if (plain !== undefined && !Array.isArray(plain)) out.push(plain);
    }
    return out;
  }
  return undefined;
}

/** The attributes of a record as a plain map (later keys win). */
export function attributeMap(
  list: readonly OtlpKeyValue[] | undefined,
): Map<string, ReturnType<typeof attributeValue>> {
  const map = new Map<string, ReturnType<typeof attributeValue>>();
  for (const { key, value } of list ?? []) map.set(key, attributeValue(value));
  return map;
}

/** Milliseconds since the epoch of an OTLP nanosecond time, or `undefined`. */
export function millisOf(nanosValue: string | number | undefined): number | undefined {
  if (nanosValue === undefined) return undefined;
  const ms = typeof nanosValue === 'number' ? nanosValue / 1e6 : Number(BigInt(nanosValue) / 1_000_000n);
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}
