/**
 * The metric readers of `createTelemetry`: periodic readers of the OTLP,
 * OTLP-JSON-lines file and console exporters (each behind a
 * `CountingMetricExporter`, all with the plan's one temporality), and the
 * Prometheus endpoint's reader, which is pulled and stays cumulative.
 *
 * @module subagent-otel/telemetry/metric-pipelines
 */
import { PeriodicExportingMetricReader, type IMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { CountingMetricExporter, type ExporterKind } from './counting-exporters.js';
import { LazyMetricExporter, loadMetricExporter, temporalitySelector } from './otlp-exporters.js';
import { createMetricFileExporter, OtlpJsonLinesMetricExporter, streamLineSink } from './otlp-json-file-exporter.js';
import { attachOtlpExporter, type OtlpSignalParts } from './otlp-pipeline.js';
import { OutboxMetricExporter } from './outbox/exporter.js';
import type { PipelineContext } from './pipeline-context.js';
import { startPrometheusEndpoint, type PrometheusEndpoint } from './prometheus-endpoint.js';
import {
  TELEMETRY_EXPORTER_VALUE_CONSOLE,
  TELEMETRY_EXPORTER_VALUE_FILE,
  TELEMETRY_EXPORTER_VALUE_OTLP,
  TELEMETRY_SIGNAL_VALUE_METRICS,
} from './semconv.js';

/** The metric side of `attachOtlpExporter`. */
const METRIC_PARTS: OtlpSignalParts<PushMetricExporter> = {
  signal: TELEMETRY_SIGNAL_VALUE_METRICS,
  otlpSignal: 'METRICS',
  items: 'batches',
  load: loadMetricExporter,
  lazy: (load) => new LazyMetricExporter(load),
  outbox: (inner, box, bodies, serialize, listener) =>
    new OutboxMetricExporter(inner, box, bodies, serialize, listener),
};

/** The built metric readers. */
export interface MetricPipelines {
  /** One reader per destination, for the meter provider. */
  readonly readers: readonly IMetricReader[];
  /** The Prometheus endpoint, when the plan has one. */
  readonly prometheus?: PrometheusEndpoint;
  /** The directory of the metrics file, when metrics are written to one. */
  readonly fileDir?: string;
}

/**
 * Builds the metric readers `context.plan.metrics` and
 * `context.plan.prometheus` ask for and adds their destination lines
 * (`metrics: none` when there is none). An OTLP exporter that cannot be
 * built sends the batches to the default files instead. Starts the
 * Prometheus endpoint listening. Never throws.
 */
export function buildMetricPipelines(context: PipelineContext): MetricPipelines {
  const { plan, accounts, reports } = context;
  const readers: IMetricReader[] = [];
  // One temporality for every pushed stream: the wrapper gives each push
  // exporter the selector of the preference (the file and console exporters
  // have none of their own; the OTLP exporter is also built with the same
  // preference). The Prometheus reader is no push exporter and stays cumulative.
  const pushTemporality = temporalitySelector(plan.temporality);
  const periodic = (exporter: PushMetricExporter, kind: ExporterKind): PeriodicExportingMetricReader =>
    new PeriodicExportingMetricReader({
      exporter: new CountingMetricExporter(exporter, kind, accounts.onDrop, pushTemporality),
      exportIntervalMillis: plan.metricExport.intervalMillis,
      exportTimeoutMillis: plan.metricExport.timeoutMillis,
    });
  let fileDir = plan.metrics.fileDir;
  if (plan.metrics.otlp !== undefined) {
    const attached = attachOtlpExporter(METRIC_PARTS, plan.metrics.otlp, context, (inner) => {
      readers.push(periodic(inner, TELEMETRY_EXPORTER_VALUE_OTLP));
    });
    if (!attached) fileDir ??= plan.defaultOutDir;
  }
  if (fileDir !== undefined) {
    const exporter = createMetricFileExporter(fileDir);
    readers.push(periodic(exporter, TELEMETRY_EXPORTER_VALUE_FILE));
    context.destinations.push(`metrics: file ${exporter.description}`);
  }
  if (plan.metrics.console) {
    const exporter = new OtlpJsonLinesMetricExporter(streamLineSink(context.consoleStream ?? process.stderr, 'stderr'));
    readers.push(periodic(exporter, TELEMETRY_EXPORTER_VALUE_CONSOLE));
    context.destinations.push(`metrics: console (OTLP-JSON lines on ${exporter.description})`);
  }
  let prometheus: PrometheusEndpoint | undefined;
  if (plan.prometheus !== undefined) {
    prometheus = startPrometheusEndpoint({ port: plan.prometheus.port, host: plan.prometheus.host }, (message) => {
      accounts.note(`metrics: ${message}`);
      reports.report('error', `prometheus:${message}`, message);
    });
    readers.push(prometheus.reader);
    context.destinations.push(`metrics: Prometheus ${prometheus.url}`);
  }
  if (readers.length === 0) context.destinations.push('metrics: none');
  return {
    readers,
    ...(prometheus !== undefined ? { prometheus } : {}),
    ...(fileDir !== undefined ? { fileDir } : {}),
  };
}
