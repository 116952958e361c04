/**
 * Test helper: runs delegated runs the way users run them, through the built
 * CLI (`subagent-otel proxy -- node dist/fixtures/sdk-runtime.js`), sending
 * telemetry over OTLP to a stack started by scripts/stack/stack.mjs, and reads
 * the results back through the engines' own HTTP APIs (Jaeger's query API,
 * Prometheus's and Alertmanager's APIs). Polls for conditions, never sleeps
 * for a fixed time.
 *
 * @module subagent-otel/test/stack/observed
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, rpc } from '../helpers/cli.js';
import type { Finished } from '../helpers/cli.js';
import { FIXTURE_SDK_RUNTIME } from '../helpers/paths.js';

// Polling and scraping are shared with scripts/packed-export-check.mjs, which runs without a build.
export { scrapeSum, waitFor } from '../../scripts/stack/probes.mjs';

/** Scripted SDK runtime scenarios used by the stack tests (src/fixtures/README.md). */
export type Scenario = 'completed' | 'empty-message' | 'subagent' | 'subagent-wrong-report' | 'malformed' | 'error';

/** Options of {@link runProxy}. */
export interface ProxyRun {
  /** OTLP/HTTP endpoint of the collector (or agent). */
  readonly otlpHttp: string;
  /** OTEL_SERVICE_NAME: the Prometheus job and the Jaeger service of these runs. */
  readonly service: string;
  /** One prompt per entry, each in its own session (so each run is its own trace). */
  readonly scenarios: readonly Scenario[];
  /** `--agent-name`. */
  readonly agentName: string;
  /** Prefix of the session ids. */
  readonly sessionPrefix: string;
  /** Extra environment for the proxy. */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Starts one proxy in front of the scripted runtime, writes every prompt, ends
 * its stdin and waits until it exited (the runtime answers every prompt before
 * it exits on EOF; the proxy flushes its telemetry before it exits).
 * @returns the proxy's exit and output.
 */
export async function runProxy(run: ProxyRun): Promise<Finished> {
  const out = mkdtempSync(join(tmpdir(), 'subagent-otel-stack-e2e-'));
  try {
    const input = run.scenarios
      .map((scenario, i) =>
        rpc(i + 1, 'session/prompt', {
          sessionId: `${run.sessionPrefix}-${i}`,
          contentBlocks: [{ type: 'text', text: `scenario:${scenario}` }],
        }),
      )
      .join('');
    return await runCli(['proxy', '--agent-name', run.agentName, '--', process.execPath, FIXTURE_SDK_RUNTIME], input, {
      OTEL_SERVICE_NAME: run.service,
      OTEL_EXPORTER_OTLP_ENDPOINT: run.otlpHttp,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      SUBAGENT_OTEL_OUT: out,
      ...run.env,
    });
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** GETs JSON; throws on a non-2xx answer. */
export async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as unknown;
}

/** One span of Jaeger's /api/traces answer (the fields used here). */
export interface JaegerSpan {
  readonly traceID: string;
  readonly spanID: string;
  readonly operationName: string;
  readonly references: ReadonlyArray<{ refType: string; spanID: string; traceID: string }>;
  readonly tags: ReadonlyArray<{ key: string; value: unknown }>;
}

/** One trace of Jaeger's /api/traces answer. */
export interface JaegerTrace {
  readonly traceID: string;
  readonly spans: readonly JaegerSpan[];
}

/** A span's tag value, or undefined. */
export function tag(span: JaegerSpan, key: string): unknown {
  return span.tags.find((t) => t.key === key)?.value;
}

/**
 * Searches Jaeger's query API (the one its UI uses).
 * @param tags exact tag matches, e.g. { 'subagent.stop_reason': 'max-tokens' }
 */
export async function jaegerTraces(
  jaeger: string,
  service: string,
  tags: Record<string, string> = {},
  limit = 1000,
  sinceMs?: number,
): Promise<JaegerTrace[]> {
  // By default the last 2 h; spans stamped earlier (a replayed capture keeps its recorded times) need `sinceMs`.
  const q = new URLSearchParams({ service, limit: String(limit), lookback: '2h' });
  if (sinceMs !== undefined) {
    q.set('start', String(Math.floor(sinceMs) * 1000));
    q.set('end', String((Date.now() + 3_600_000) * 1000));
    q.delete('lookback');
  }
  if (Object.keys(tags).length > 0) q.set('tags', JSON.stringify(tags));
  const body = (await getJson(`${jaeger}/api/traces?${q.toString()}`)) as { data: JaegerTrace[] | null };
  return body.data ?? [];
}

/** One series of a Prometheus instant query. */
export interface Sample {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

/** Instant query; throws on an HTTP or query error. */
export async function promQuery(prometheus: string, query: string): Promise<Sample[]> {
  const body = (await getJson(`${prometheus}/api/v1/query?query=${encodeURIComponent(query)}`)) as {
    data: { result: Sample[] };
  };
  return body.data.result;
}

/** The single value of an instant query that must return one series, or undefined while it returns none. */
export async function promValue(prometheus: string, query: string): Promise<number | undefined> {
  const r = await promQuery(prometheus, query);
  if (r.length === 0) return undefined;
  if (r.length > 1) throw new Error(`${query} returned ${r.length} series: ${JSON.stringify(r.map((s) => s.metric))}`);
  return Number(r[0]?.value[1]);
}
