/**
 * Forwards an agent's own OTLP export requests (`proxy --agent-telemetry`)
 * to where the proxy's telemetry goes: the OTLP-JSON-lines files of the
 * output directory (`traces.jsonl`, `metrics.jsonl`, `logs.jsonl`, one
 * request per line) and the OTLP/HTTP endpoint (as JSON, which collectors
 * take on the same paths as protobuf). Spans are re-parented first
 * ({@link reparentSpans}): every trace of the agent's is moved into the trace
 * of the run it belongs to, its root spans made children of the run's span;
 * log records that point into a moved trace follow. The agent's resource and
 * scopes are kept as sent. gRPC destinations get nothing (said once).
 *
 * Owns only its bounded map of moved traces; every send is fire-and-forget,
 * failures are counted and the first one kept.
 *
 * @module subagent-otel/telemetry/agent-telemetry-forward
 */
import { join } from 'node:path';
import {
  attributeMap,
  millisOf,
  type OtlpJsonLogsRequest,
  type OtlpJsonRequest,
  type OtlpJsonTracesRequest,
  type OtlpSignal,
} from '../wire/otlp-json.js';
import { fileLineSink, type LineSink } from './otlp-json-file-exporter.js';
import type { SignalPlan } from './setup.js';
import { errorMessage } from '../wire/error-text.js';

/** Where a moved trace goes: the run span's ids. */
export interface RunSpanIds {
  readonly traceId: string;
  readonly spanId: string;
}

/** Finds the run span an agent record belongs to, from its time and session (when it names one). */
export type RunSpanLookup = (time: number, sessionId: string | undefined) => RunSpanIds | undefined;

/** Agent traces remembered (oldest forgotten first). */
const MOVED_TRACES_MEMORY = 4096;

/**
 * Moves the agent's traces under run spans, in place. A trace is placed by
 * its first span seen (batches may bring children before their root): the
 * run whose window holds the span's start, of the span's `session.id`, else
 * of the resource's, else of any session (the latest such run: with
 * concurrent sessions and no session on the span this may pick the wrong
 * one; docs/AGENTS.md). A trace no run holds is left as sent.
 * @returns how many spans were moved and left.
 */
export function reparentSpans(
  body: OtlpJsonTracesRequest,
  moved: Map<string, RunSpanIds>,
  lookup: RunSpanLookup,
): { moved: number; left: number } {
  let movedCount = 0;
  let left = 0;
  for (const resourceSpans of body.resourceSpans ?? []) {
    const resourceSession = attributeMap(resourceSpans.resource?.attributes).get('session.id');
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        const original = span.traceId.toLowerCase();
        let target = moved.get(original);
        if (target === undefined) {
          const start = millisOf(span.startTimeUnixNano);
          // The span's own session, then the resource's (gemini's names its process, not an ACP session), then time alone.
          const sessions = [attributeMap(span.attributes).get('session.id'), resourceSession].filter(
            (v): v is string => typeof v === 'string' && v !== '',
          );
          if (start !== undefined)
            for (const session of [...sessions, undefined]) if ((target = lookup(start, session)) !== undefined) break;
          if (target !== undefined) {
            moved.set(original, target);
            if (moved.size > MOVED_TRACES_MEMORY) moved.delete(moved.keys().next().value as string);
          }
        }
        if (target === undefined) {
          left += 1;
          continue;
        }
        const mutable = span as { traceId: string; parentSpanId?: string };
        mutable.traceId = target.traceId;
        if (mutable.parentSpanId === undefined || mutable.parentSpanId === '') mutable.parentSpanId = target.spanId;
        movedCount += 1;
      }
    }
  }
  return { moved: movedCount, left };
}

/** Points log records that carry a moved trace's id at the run's trace, in place. */
export function relinkLogs(body: OtlpJsonLogsRequest, moved: ReadonlyMap<string, RunSpanIds>): void {
  for (const resourceLogs of body.resourceLogs ?? []) {
    for (const scope of resourceLogs.scopeLogs ?? []) {
      for (const record of scope.logRecords ?? []) {
        const target = typeof record.traceId === 'string' ? moved.get(record.traceId.toLowerCase()) : undefined;
        if (target !== undefined) (record as { traceId?: string }).traceId = target.traceId;
      }
    }
  }
}

/** Destinations per signal, from the proxy's telemetry plan. */
export interface ForwardPlan {
  readonly traces: SignalPlan;
  readonly metrics: SignalPlan;
  /** Environment for logs endpoint and headers (`OTEL_EXPORTER_OTLP_*`). */
  readonly env: NodeJS.ProcessEnv;
}

/** `k=v,k2=v2` (values URL-encoded) as headers; malformed pairs skipped. */
function parseHeaders(raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (raw ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    try {
      headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      // A pair that is not URL-encoded text is no header; the exporter would skip it too.
      continue;
    }
  }
  return headers;
}

/** The forwarder: `send` each request taken, `flush` before exit. */
export interface AgentTelemetryForwarder {
  send(request: OtlpJsonRequest, lookup: RunSpanLookup): void;
  /** Waits for sends in flight, at most `timeoutMs`. Never rejects. */
  flush(timeoutMs: number): Promise<void>;
  readonly stats: { forwarded: number; failed: number; firstFailure?: string; spansMoved: number; spansLeft: number };
}

/** Builds the forwarder for a plan. */
export function createAgentTelemetryForwarder(plan: ForwardPlan): AgentTelemetryForwarder {
  const moved = new Map<string, RunSpanIds>();
  const stats: AgentTelemetryForwarder['stats'] = { forwarded: 0, failed: 0, spansMoved: 0, spansLeft: 0 };
  const inFlight = new Set<Promise<void>>();
  const files: Partial<Record<OtlpSignal, LineSink>> = {};
  const fileDir = (signal: OtlpSignal): string | undefined =>
    signal === 'metrics' ? plan.metrics.fileDir : plan.traces.fileDir;
  const fileOf = (signal: OtlpSignal): LineSink | undefined => {
    const dir = fileDir(signal);
    if (dir === undefined) return undefined;
    return (files[signal] ??= fileLineSink(join(dir, `${signal}.jsonl`)));
  };
  const urlOf = (signal: OtlpSignal): string | undefined => {
    const own = signal === 'metrics' ? plan.metrics.otlp : plan.traces.otlp;
    if (own === undefined || own.protocol === 'grpc') return undefined;
    if (signal !== 'logs') return own.url;
    const explicit = plan.env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT;
    if (explicit !== undefined && explicit !== '') return explicit;
    return own.url.replace(/\/v1\/traces$/, '/v1/logs');
  };
  const headersOf = (signal: OtlpSignal): Record<string, string> => ({
    ...parseHeaders(plan.env.OTEL_EXPORTER_OTLP_HEADERS),
    ...parseHeaders(plan.env[`OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_HEADERS`]),
  });
  const track = (work: Promise<void>, where: string): void => {
    const settled = work.then(
      () => {
        stats.forwarded += 1;
      },
      (error: unknown) => {
        stats.failed += 1;
        stats.firstFailure ??= `${where}: ${errorMessage(error)}`;
      },
    );
    inFlight.add(settled);
    void settled.finally(() => inFlight.delete(settled));
  };
  return {
    stats,
    send(request, lookup) {
      if (request.signal === 'traces') {
        const result = reparentSpans(request.body, moved, lookup);
        stats.spansMoved += result.moved;
        stats.spansLeft += result.left;
      } else if (request.signal === 'logs') relinkLogs(request.body, moved);
      const line = `${JSON.stringify(request.body)}\n`;
      const file = fileOf(request.signal);
      if (file !== undefined) track(file.append(Buffer.from(line)), file.description);
      const url = urlOf(request.signal);
      if (url !== undefined) {
        track(
          fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...headersOf(request.signal) },
            body: line,
            signal: AbortSignal.timeout(10_000),
          }).then((res) => {
            if (!res.ok) throw new Error(`HTTP ${res.status}`);
          }),
          url,
        );
      }
    },
    async flush(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all([...inFlight]),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
      ]);
      clearTimeout(timer);
    },
  };
}
