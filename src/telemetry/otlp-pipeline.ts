/**
 * The OTLP exporter of one signal as its pipeline uses it: loaded lazily
 * (`LazySpanExporter`, `LazyMetricExporter`), behind the destination's
 * outbox when the outbox is on, with its destination line; and what is said
 * when it cannot be loaded or built. The span and metric pipelines differ
 * only in the parts they hand in (`OtlpSignalParts`).
 *
 * @module subagent-otel/telemetry/otlp-pipeline
 */
import type { OtlpProtocol } from './config.js';
import type { DestinationOutbox } from './outbox/destination.js';
import type { OutboxListener } from './outbox/exporter.js';
import {
  otlpExporterSettings,
  requestSerializer,
  type OtlpExporterSettings,
  type OtlpSignal,
  type RequestBodies,
} from './otlp-exporters.js';
import type { PipelineContext, Spiller } from './pipeline-context.js';
import type { OtlpDestination } from './plan.js';
import { describeError } from './report-once.js';
import type { TelemetrySignal } from './run-telemetry.js';

/** How each OTLP protocol is named in destination lines and messages. */
export const PROTOCOL_LABEL: Readonly<Record<OtlpProtocol, string>> = {
  grpc: 'OTLP/gRPC',
  'http/protobuf': 'OTLP/HTTP protobuf',
  'http/json': 'OTLP/HTTP JSON',
};

/** The URL without user info, query or fragment, for messages. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return parsed.toString();
  } catch {
    // Not a URL (cannot happen after planning validated it): show nothing rather than something unsanitized.
    return '(invalid URL)';
  }
}

/** What differs between the span and the metric OTLP exporter (`E`). */
export interface OtlpSignalParts<E> {
  readonly signal: TelemetrySignal;
  readonly otlpSignal: OtlpSignal;
  /** What an exporter that cannot be loaded has counted as dropped, e.g. `spans`. */
  readonly items: string;
  /** Imports and builds the exporter, remembering each request's bytes in `bodies`. */
  load(settings: OtlpExporterSettings, bodies: RequestBodies): Promise<E>;
  /** An exporter standing for the one `load` gives. */
  lazy(load: Promise<E>): E;
  /** `inner` behind `box`: what the destination did not take is filed there. */
  outbox(
    inner: E,
    box: DestinationOutbox,
    bodies: RequestBodies,
    serialize: () => ReturnType<typeof requestSerializer>,
    listener: OutboxListener,
  ): E & Spiller;
}

/**
 * Builds the OTLP exporter of `parts.signal` for `otlp` and hands it to
 * `attach`, which puts it into its pipeline; then adds the destination line.
 * A load failure (later, asynchronously) is noted and said once; the
 * exporter then fails each export, which its pipeline counts as dropped.
 * @returns `true` when built and attached; `false` when building it (or
 *   `attach`) threw: that is noted and said once, and the caller writes the
 *   signal to the files instead. Never throws.
 */
export function attachOtlpExporter<E>(
  parts: OtlpSignalParts<E>,
  otlp: OtlpDestination,
  context: PipelineContext,
  attach: (exporter: E) => void,
): boolean {
  const { accounts, reports } = context;
  try {
    const settings = otlpExporterSettings(parts.otlpSignal, otlp, context.plan.temporality, context.env, reports);
    const bodies: RequestBodies = new WeakMap();
    const load = parts.load(settings, bodies);
    load.catch((error: unknown) => {
      accounts.note(
        `${parts.signal}: ${PROTOCOL_LABEL[otlp.protocol]} exporter could not be loaded (${describeError(error)})`,
      );
      reports.report(
        'error',
        `otlp-load:${parts.signal}`,
        `${parts.signal}: ${PROTOCOL_LABEL[otlp.protocol]} exporter could not be loaded (${describeError(error)}); its ${parts.items} are counted as dropped`,
      );
    });
    let inner = parts.lazy(load);
    const outbox = accounts.outboxFor(parts.signal, settings, displayUrl(otlp.url));
    if (outbox !== undefined) {
      const wrapped = parts.outbox(
        inner,
        outbox.box,
        bodies,
        () => requestSerializer(parts.otlpSignal, otlp.protocol),
        outbox.listener,
      );
      context.spillers.push(wrapped);
      inner = wrapped;
    }
    attach(inner);
    context.destinations.push(`${parts.signal}: ${PROTOCOL_LABEL[otlp.protocol]} ${displayUrl(otlp.url)}`);
    return true;
  } catch (error) {
    accounts.note(`${parts.signal}: OTLP exporter could not be built (${describeError(error)}); writing files instead`);
    reports.report(
      'error',
      `otlp-build:${parts.signal}`,
      `${parts.signal}: OTLP exporter could not be built (${describeError(error)}); writing files instead`,
    );
    return false;
  }
}
