/**
 * Workloads and readers shared by the hardening tests: scripted SDK runs that
 * the byte-recording echo peer (`test/helpers/echo-child.cjs`) plays back, so
 * a test both knows every run it caused and can compare every forwarded byte;
 * a writer peer that pushes a large stream with backpressure; and readers for
 * the proxy's OTLP-JSON-lines files, its diagnostics log and process RSS.
 * Owns no assertion.
 *
 * @module subagent-otel/test/hardening/workload
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { OtlpSpan } from '../helpers/cli.js';
import { ROOT } from '../helpers/paths.js';
import { pointsOfMetricBody, spansOfTraceBody, type OtlpMetricPoint } from '../helpers/otlp-receiver.js';

/** The echo peer: records stdin to `argv[2]`, echoes it on stdout. */
export const ECHO = join(ROOT, 'test', 'helpers', 'echo-child.cjs');

/** Spans each scripted run produces: its `invoke_agent` span and one `chat` span for its one step. */
export const SPANS_PER_RUN = 2;

/**
 * Event times of scripted runs: a while after the test started, so every
 * run ends after the proxy saw its request (a run's span starts when its
 * request is observed and ends at its `turn/end` time).
 */
const EVENT_TIME_BASE = Date.now() + 10 * 60 * 1000;

const line = (message: Record<string, unknown>): string => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;

const event = (sessionId: string, seq: number, type: string, data: unknown): string =>
  line({ method: 'session.event', params: { sessionId, event: { type, seq, time: EVENT_TIME_BASE + seq, data } } });

/**
 * The NDJSON of one complete SDK prompt turn, as the client's request, the
 * runtime's notifications and its answer. Through the echo peer both
 * directions carry these lines; the tracker reads the request on the client
 * side and the notifications and answer on the agent side.
 *
 * @param id request id (also names the session `run-<id>`).
 * @param answer the text of the turn's one assistant message (its output).
 * @param stop the turn-end kind (`completed`, `max-tokens`, ...).
 */
export function scriptedRun(id: number, answer = `answer ${id}`, stop = 'completed'): string {
  const sessionId = `run-${id}`;
  return [
    line({ id, method: 'session/prompt', params: { sessionId, contentBlocks: [{ type: 'text', text: 'go' }] } }),
    event(sessionId, 0, 'turn/start', { turn: 0 }),
    event(sessionId, 1, 'step/start', { turn: 0, step: 0 }),
    event(sessionId, 2, 'assistant/message', {
      turn: 0,
      step: 0,
      message: { id: `${sessionId}/a`, role: 'assistant', content: [{ type: 'text', text: answer }] },
      usage: { inputTokens: 10, outputTokens: 2 },
    }),
    event(sessionId, 3, 'step/end', { turn: 0, step: 0 }),
    event(sessionId, 4, 'turn/end', { turn: 0, reason: { kind: stop } }),
    line({ id, result: { messageId: `${sessionId}/user-0` } }),
  ].join('');
}

/** The start of a run that never ends: request, `turn/start`, a streamed text delta. */
export function openRun(id: number, partial: string): string {
  const sessionId = `run-${id}`;
  return [
    line({ id, method: 'session/prompt', params: { sessionId, contentBlocks: [{ type: 'text', text: 'go' }] } }),
    event(sessionId, 0, 'turn/start', { turn: 0 }),
    event(sessionId, 1, 'step/start', { turn: 0, step: 0 }),
    event(sessionId, 2, 'assistant/chunk', {
      turn: 0,
      step: 0,
      chunk: { type: 'text-delta', index: 0, text: partial },
    }),
  ].join('');
}

/** A notification of a method no tracker reads, carrying `bytes` of filler: bulk traffic. */
export function noiseLine(bytes: number, fill = 'n'): string {
  return line({ method: 'noise/bulk', params: fill.repeat(bytes) });
}

/** Every span in `<dir>/traces.jsonl` (complete lines only; none when the file is missing). */
export function fileSpans(dir: string): OtlpSpan[] {
  const file = join(dir, 'traces.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .flatMap((l) => spansOfTraceBody(l));
}

/** Every metric data point in `<dir>/metrics.jsonl`. */
export function fileMetricPoints(dir: string): OtlpMetricPoint[] {
  const file = join(dir, 'metrics.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .flatMap((l) => pointsOfMetricBody(l));
}

/** Sum of `subagent.telemetry.dropped` points for a signal and exporter (delta or cumulative: the last cumulative point equals the sum of deltas only for delta; callers pass delta streams). */
export function droppedTotal(
  points: readonly OtlpMetricPoint[],
  signal: 'traces' | 'metrics',
  exporter: string,
): number {
  return points
    .filter(
      (p) =>
        p.name === 'subagent.telemetry.dropped' &&
        p.attributes['subagent.telemetry.signal'] === signal &&
        p.attributes['subagent.telemetry.exporter'] === exporter,
    )
    .reduce((sum, p) => sum + p.value, 0);
}

/** The lines of the proxy's diagnostics log (`SUBAGENT_OTEL_LOG_FILE`); none when it was never written. */
export function logLines(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
}

/** Resident set size of a live process in KiB, from `/proc/<pid>/status`; `undefined` once it is gone. */
export function rssKiB(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] !== undefined ? Number(match[1]) : undefined;
  } catch {
    // ENOENT/ESRCH: the process already exited; the caller treats that as "no sample".
    return undefined;
  }
}

/** Every byte of every file under `dir`, concatenated (for scanning exports for secrets). */
export function allBytesUnder(dir: string): Buffer {
  if (!existsSync(dir)) return Buffer.alloc(0);
  const parts: Buffer[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    parts.push(statSync(path).isDirectory() ? allBytesUnder(path) : readFileSync(path));
  }
  return Buffer.concat(parts);
}
