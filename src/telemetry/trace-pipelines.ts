/**
 * The span pipelines of `createTelemetry`: OTLP through a bounded
 * `BatchSpanProcessor`, the OTLP-JSON-lines file and the console as each
 * run ends (`EndedTogetherSpanProcessor`), each behind a
 * `CountingSpanExporter`, and the counter of ended spans they are all
 * accounted against.
 *
 * @module subagent-otel/telemetry/trace-pipelines
 */
import { BatchSpanProcessor, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { CountingSpanExporter, EndedSpanCounter } from './counting-exporters.js';
import { EndedTogetherSpanProcessor } from './ended-together-span-processor.js';
import { LazySpanExporter, loadSpanExporter } from './otlp-exporters.js';
import { createTraceFileExporter, OtlpJsonLinesSpanExporter, streamLineSink } from './otlp-json-file-exporter.js';
import { attachOtlpExporter, type OtlpSignalParts } from './otlp-pipeline.js';
import { OutboxSpanExporter } from './outbox/exporter.js';
import type { PipelineContext } from './pipeline-context.js';
import { batchSpanProcessorConfig } from './sdk-environment.js';
import {
  TELEMETRY_EXPORTER_VALUE_CONSOLE,
  TELEMETRY_EXPORTER_VALUE_FILE,
  TELEMETRY_EXPORTER_VALUE_OTLP,
  TELEMETRY_SIGNAL_VALUE_TRACES,
} from './semconv.js';

/** The span side of `attachOtlpExporter`. */
const SPAN_PARTS: OtlpSignalParts<SpanExporter> = {
  signal: TELEMETRY_SIGNAL_VALUE_TRACES,
  otlpSignal: 'TRACES',
  items: 'spans',
  load: loadSpanExporter,
  lazy: (load) => new LazySpanExporter(load),
  outbox: (inner, box, bodies, serialize, listener) => new OutboxSpanExporter(inner, box, bodies, serialize, listener),
};

/** The built span pipelines. */
export interface TracePipelines {
  /** Counts every sampled span that ended; also the first of `spanProcessors`. */
  readonly ended: EndedSpanCounter;
  /** Every pipeline's counting exporter: each is accounted at shutdown. */
  readonly counted: readonly CountingSpanExporter[];
  /** `ended`, then one processor per pipeline, for the tracer provider. */
  readonly spanProcessors: readonly SpanProcessor[];
  /** The directory of the traces file, when spans are written to one. */
  readonly fileDir?: string;
}

/**
 * Builds the span pipelines `context.plan.traces` asks for and adds their
 * destination lines (`traces: none` when there is none). An OTLP exporter
 * that cannot be built sends the spans to the default files instead. Never
 * throws.
 */
export function buildTracePipelines(context: PipelineContext): TracePipelines {
  const { plan, env, reports, accounts } = context;
  const ended = new EndedSpanCounter();
  const counted: CountingSpanExporter[] = [];
  const spanProcessors: SpanProcessor[] = [ended];
  let fileDir = plan.traces.fileDir;
  if (plan.traces.otlp !== undefined) {
    const attached = attachOtlpExporter(SPAN_PARTS, plan.traces.otlp, context, (inner) => {
      const exporter = new CountingSpanExporter(inner, TELEMETRY_EXPORTER_VALUE_OTLP, accounts.onDrop);
      counted.push(exporter);
      spanProcessors.push(new BatchSpanProcessor({ exporter, ...batchSpanProcessorConfig(env, reports) }));
    });
    if (!attached) fileDir ??= plan.defaultOutDir;
  }
  if (fileDir !== undefined) {
    const exporter = createTraceFileExporter(fileDir);
    const fileExporter = new CountingSpanExporter(exporter, TELEMETRY_EXPORTER_VALUE_FILE, accounts.onDrop);
    counted.push(fileExporter);
    spanProcessors.push(new EndedTogetherSpanProcessor(fileExporter));
    context.destinations.push(`traces: file ${exporter.description}`);
  }
  if (plan.traces.console) {
    const exporter = new OtlpJsonLinesSpanExporter(streamLineSink(context.consoleStream ?? process.stderr, 'stderr'));
    const consoleExporter = new CountingSpanExporter(exporter, TELEMETRY_EXPORTER_VALUE_CONSOLE, accounts.onDrop);
    counted.push(consoleExporter);
    spanProcessors.push(new EndedTogetherSpanProcessor(consoleExporter));
    context.destinations.push(`traces: console (OTLP-JSON lines on ${exporter.description})`);
  }
  if (spanProcessors.length === 1) context.destinations.push('traces: none');
  return fileDir !== undefined ? { ended, counted, spanProcessors, fileDir } : { ended, counted, spanProcessors };
}
