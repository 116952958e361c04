/**
 * The standard SDK variables this project hands to OpenTelemetry
 * constructors explicitly, read from the environment `createTelemetry` was
 * given (never from `process.env` behind the caller's back): the resource
 * (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`) and the batch span
 * processor's limits (`OTEL_BSP_*`), with the specification's defaults.
 *
 * @module subagent-otel/telemetry/sdk-environment
 */
import type { Attributes } from '@opentelemetry/api';
import type { BatchSpanProcessorOptions } from '@opentelemetry/sdk-trace';
import { integerIn, MAX_TIMER_MS, type Environment } from './config.js';
import type { OnceReporter } from './report-once.js';

/**
 * Resource attributes of `env`: the `key=value` pairs of
 * `OTEL_RESOURCE_ATTRIBUTES` (comma-separated, values percent-decoded,
 * blanks around keys and values ignored), then `service.name` from
 * `OTEL_SERVICE_NAME` when it is set, which wins. As the SDK specification
 * asks, a value that does not parse (a pair without `=` or key, bad
 * percent-encoding) discards the whole variable, with a warning reported
 * once. Never throws.
 */
export function resourceAttributesOf(env: Environment, reports: OnceReporter): Attributes {
  let attributes: Attributes = {};
  const raw = env['OTEL_RESOURCE_ATTRIBUTES'] ?? '';
  for (const pair of raw.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    const key = at > 0 ? pair.slice(0, at).trim() : '';
    let value: string | undefined;
    try {
      value = key === '' ? undefined : decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      // decodeURIComponent throws URIError for a malformed percent sequence.
      value = undefined;
    }
    if (value === undefined) {
      reports.report(
        'warn',
        `resource:${raw}`,
        `OTEL_RESOURCE_ATTRIBUTES entry ${JSON.stringify(pair)} is not key=value with a percent-encoded value; the variable is ignored`,
      );
      attributes = {};
      break;
    }
    attributes[key] = value;
  }
  const service = env['OTEL_SERVICE_NAME']?.trim();
  if (service !== undefined && service !== '') attributes['service.name'] = service;
  return attributes;
}

/** One `OTEL_BSP_*` variable: its name, default and accepted range. */
const BSP: ReadonlyArray<readonly [keyof BatchSpanProcessorOptions, string, number, number]> = [
  ['maxQueueSize', 'OTEL_BSP_MAX_QUEUE_SIZE', 2048, 1],
  ['maxExportBatchSize', 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, 1],
  ['scheduledDelayMillis', 'OTEL_BSP_SCHEDULE_DELAY', 5000, 0],
  ['exportTimeoutMillis', 'OTEL_BSP_EXPORT_TIMEOUT', 30000, 0],
];

/**
 * The batch span processor's limits from `env`, every field set (so the
 * processor reads nothing itself): each variable when it is a whole number
 * in range, else the specification's default (2048, 512, 5000 ms, 30000 ms),
 * with a warning reported once for a value out of range. The batch size is
 * at most the queue size, as the SDK requires. Never throws.
 */
export function batchSpanProcessorConfig(
  env: Environment,
  reports: OnceReporter,
): Required<
  Pick<
    BatchSpanProcessorOptions,
    'maxQueueSize' | 'maxExportBatchSize' | 'scheduledDelayMillis' | 'exportTimeoutMillis'
  >
> {
  const values = new Map<keyof BatchSpanProcessorOptions, number>();
  for (const [field, variable, fallback, min] of BSP) {
    const raw = env[variable];
    let value = fallback;
    if (raw !== undefined && raw.trim() !== '') {
      const parsed = integerIn(min, MAX_TIMER_MS)(raw);
      if (parsed !== undefined) value = parsed;
      else
        reports.report(
          'warn',
          `${variable}:${raw}`,
          `${variable}=${JSON.stringify(raw)} is not a whole number ${min}..${MAX_TIMER_MS}; using ${fallback}`,
        );
    }
    values.set(field, value);
  }
  const maxQueueSize = values.get('maxQueueSize') ?? 2048;
  return {
    maxQueueSize,
    maxExportBatchSize: Math.min(values.get('maxExportBatchSize') ?? 512, maxQueueSize),
    scheduledDelayMillis: values.get('scheduledDelayMillis') ?? 5000,
    exportTimeoutMillis: values.get('exportTimeoutMillis') ?? 30000,
  };
}
