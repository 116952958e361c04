/**
 * Collector faults, end to end: the real `subagent-otel proxy` in front of the
 * byte-recording echo peer, exporting OTLP/HTTP JSON to a real receiver on
 * 127.0.0.1 that refuses connections, answers 500, throttles with 429 and
 * `Retry-After`, hangs, or answers slowly.
 *
 * For every fault the proxied stream stays byte-identical in both
 * directions, the proxy exits with the child's code, and every span is
 * accounted for: accepted by the receiver, or counted in
 * `subagent.telemetry.dropped` (written to the `--out` metrics file), with
 * the drop reported once in the proxy's diagnostics log. The export queue is
 * bounded (`OTEL_BSP_MAX_QUEUE_SIZE`): overflow is dropped and counted, not
 * buffered. Speed under these faults is measured in the bench, not here.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { attributes, runCli } from '../helpers/cli.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceiverMode } from '../helpers/otlp-receiver.js';
import {
  ECHO,
  SPANS_PER_RUN,
  droppedTotal,
  fileMetricPoints,
  fileSpans,
  logLines,
  noiseLine,
  scriptedRun,
} from './workload.js';

const RUNS = 24;
/** 24 runs interleaved with 32 bulk lines of 64 KiB: about 2 MiB through the proxy. */
function workload(): Buffer {
  const parts: string[] = [];
  for (let i = 1; i <= RUNS; i += 1) {
    parts.push(scriptedRun(i));
    if (i % 3 === 0) parts.push(noiseLine(64 * 1024), noiseLine(64 * 1024), noiseLine(64 * 1024), noiseLine(64 * 1024));
  }
  return Buffer.from(parts.join(''));
}

const receivers: OtlpReceiver[] = [];
afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.close();
});

async function receiverIn(mode: ReceiverMode): Promise<OtlpReceiver> {
  const receiver = await startOtlpReceiver(mode);
  receivers.push(receiver);
  return receiver;
}

/** Runs the workload through the proxy exporting to `receiver`; returns what both sides saw and where telemetry went. */
async function proxyAgainst(receiver: OtlpReceiver, env: NodeJS.ProcessEnv = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'collector-faults-'));
  const out = join(dir, 'otel');
  const log = join(dir, 'proxy.log');
  const record = join(dir, 'received.bin');
  const input = workload();
  const result = await runCli(['proxy', '--out', out, '--', process.execPath, ECHO, record], input, {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_METRICS_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_TIMEOUT: '400',
    OTEL_BSP_SCHEDULE_DELAY: '20',
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '8',
    SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: '2500',
    SUBAGENT_OTEL_LOG_FILE: log,
    ...env,
  });
  return { ...result, input, received: readFileSync(record), out, log };
}

/** Distinct span ids the receiver accepted (a retried request must not count twice). */
function acceptedSpanIds(receiver: OtlpReceiver): Set<string> {
  return new Set(receiver.acceptedSpans().map((s) => s.spanId));
}

const dropLines = (log: string): string[] => logLines(log).filter((l) => l.includes('traces: otlp export failed'));

describe('collector faults never touch the proxied stream and never lose telemetry silently', () => {
  const failing: Array<[string, ReceiverMode]> = [
    ['refuses connections', { kind: 'refuse' }],
    ['answers 500', { kind: 'error-500' }],
    ['answers 429 with Retry-After', { kind: 'throttle-429', retryAfterSeconds: 1 }],
    ['hangs', { kind: 'hang' }],
  ];

  it.each(failing)(
    'when the collector %s, forwards every byte, exits with the child code, and counts every span as dropped',
    async (_name, mode) => {
      const receiver = await receiverIn(mode);
      const r = await proxyAgainst(receiver, { ECHO_EXIT: '7' });

      expect(r.code).toBe(7);
      expect(r.received.equals(r.input)).toBe(true);
      expect(r.stdout.equals(r.input)).toBe(true);

      const spans = fileSpans(r.out);
      const runSpans = spans.filter((s) => s.name.startsWith('invoke_agent'));
      expect(runSpans).toHaveLength(RUNS);
      expect(new Set(runSpans.map((s) => attributes(s)['subagent.output']))).toContain(
        '[{"type":"text","text":"answer 24"}]',
      );
      expect(spans).toHaveLength(RUNS * SPANS_PER_RUN);

      expect(acceptedSpanIds(receiver).size).toBe(0);
      expect(droppedTotal(fileMetricPoints(r.out), 'traces', 'otlp')).toBe(RUNS * SPANS_PER_RUN);
      expect(dropLines(r.log)).toHaveLength(1);
    },
  );

  it('when the collector answers slowly, delivers every span and reports no drop', async () => {
    const receiver = await receiverIn({ kind: 'slow', delayMs: 150 });
    // Export and flush bounds far above the 150 ms answers (the failing cases keep the short ones: load only makes them fail surer).
    const r = await proxyAgainst(receiver, {
      OTEL_EXPORTER_OTLP_TIMEOUT: '10000',
      SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: '120000',
    });

    expect(r.code).toBe(0);
    expect(r.stdout.equals(r.input)).toBe(true);
    expect(r.received.equals(r.input)).toBe(true);
    expect(acceptedSpanIds(receiver).size).toBe(RUNS * SPANS_PER_RUN);
    expect(droppedTotal(fileMetricPoints(r.out), 'traces', 'otlp')).toBe(0);
    expect(dropLines(r.log)).toEqual([]);
  });

  it('with a four-span export queue and a hanging collector, drops and counts the overflow, leaving nothing unaccounted', async () => {
    const receiver = await receiverIn({ kind: 'hang' });
    const r = await proxyAgainst(receiver, { OTEL_BSP_MAX_QUEUE_SIZE: '4', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2' });

    expect(r.code).toBe(0);
    expect(r.stdout.equals(r.input)).toBe(true);
    expect(fileSpans(r.out)).toHaveLength(RUNS * SPANS_PER_RUN);
    // Nothing was delivered and nothing vanished: every span is in the dropped count.
    expect(droppedTotal(fileMetricPoints(r.out), 'traces', 'otlp')).toBe(RUNS * SPANS_PER_RUN);
    // The batch bound is honoured: no request carried more than two spans.
    const traceRequests = receiver.requests.filter((q) => q.path === '/v1/traces');
    expect(
      traceRequests.every((q) => JSON.parse(q.body.toString()).resourceSpans[0].scopeSpans[0].spans.length <= 2),
    ).toBe(true);
    expect(dropLines(r.log)).toHaveLength(1);
  });

  it('recovers when a collector that reset connections comes back: later spans are delivered, the early ones counted', async () => {
    const receiver = await receiverIn({ kind: 'dead-then-recovering', deadRequests: 3 });
    const r = await proxyAgainst(receiver);

    expect(r.code).toBe(0);
    expect(r.stdout.equals(r.input)).toBe(true);
    const delivered = acceptedSpanIds(receiver).size;
    const dropped = droppedTotal(fileMetricPoints(r.out), 'traces', 'otlp');
    expect(delivered).toBeGreaterThan(0);
    expect(delivered + dropped).toBe(RUNS * SPANS_PER_RUN);
  });
});
