/**
 * The configuration table (`src/telemetry/config.ts`): its rows agree with
 * README's option table, its parsers keep every value in range, timers never
 * overflow, and each `createTelemetry` keeps its own drop accounting.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/observe/run-record.js';
import { MAX_TIMER_MS, SETTINGS, readSetting, type Setting } from '../../src/telemetry/config.js';
import { OnceReporter } from '../../src/telemetry/report-once.js';
import { createTelemetry } from '../../src/telemetry/setup.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { ROOT } from '../helpers/paths.js';

const T0 = 1_700_000_000_000;
const record = (runId: string): RunRecord => ({
  runId,
  source: 'sdk',
  agentName: 'cfg',
  startTime: T0,
  endTime: T0 + 10,
  stopReason: 'completed',
  output: [{ type: 'text', text: 'ok' }],
  outputSource: 'message',
  emptyMessages: 0,
  usage: {
    inputTokens: 1,
    outputTokens: 1,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    reported: true,
  },
  steps: [],
  toolCalls: [],
});

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** README's option table: one entry per row, cells without surrounding blanks. */
function readmeOptionRows(): string[][] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('| Option | Environment variable | Default | Description |');
  expect(start).toBeGreaterThan(0);
  const rows: string[][] = [];
  for (const line of readme.slice(start).split('\n').slice(2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.split(' | ').map((cell) => cell.replace(/^\|\s?|\s?\|$/g, '').trim()));
  }
  return rows;
}

describe('the configuration table', () => {
  it.each(Object.entries(SETTINGS))(
    '%s has a README row with its variable, flag and default',
    (_name, setting: Setting<unknown>) => {
      const row = readmeOptionRows().find((cells) => (cells[1] ?? '').startsWith(`\`${setting.env}`));
      expect(row, `README option table row for ${setting.env}`).toBeDefined();
      expect(row?.[2]).toBe(setting.defaultText);
      if (setting.flag !== undefined) expect(row?.[0]).toContain(`\`${setting.flag}`);
    },
  );

  it('every README row with a variable is a row of the table', () => {
    const documented = readmeOptionRows()
      .map((cells) => /^`([A-Z_]+)/.exec(cells[1] ?? '')?.[1])
      .filter((name): name is string => name !== undefined);
    expect(documented.sort()).toEqual(
      Object.values(SETTINGS)
        .map((s) => s.env)
        .sort(),
    );
  });

  it('keeps numbers in range: ports, lengths, and timer bounds a Node timer can hold', () => {
    const reports = new OnceReporter();
    const read = <T>(setting: Setting<T>, raw: string): T => readSetting(setting, { [setting.env]: raw }, reports);
    expect(read(SETTINGS.prometheusPort, '9464')).toBe(9464);
    expect(read(SETTINGS.prometheusPort, '65536')).toBe(0);
    expect(read(SETTINGS.prometheusPort, '-1')).toBe(0);
    expect(read(SETTINGS.shutdownTimeoutMs, '2147483647')).toBe(2147483647);
    expect(read(SETTINGS.shutdownTimeoutMs, '2147483648')).toBe(5000);
    expect(read(SETTINGS.shutdownTimeoutMs, '99999999999999999999')).toBe(5000);
    expect(read(SETTINGS.shutdownTimeoutMs, '0')).toBe(5000);
    expect(read(SETTINGS.metricExportIntervalMs, '1e3')).toBe(60000);
    expect(read(SETTINGS.metricExportIntervalMs, ' 1000 ')).toBe(1000);
    expect(read(SETTINGS.maxContentLength, '0')).toBe(0); // 0: no content at all
    expect(read(SETTINGS.maxContentLength, '-1')).toBeUndefined();
    expect(read(SETTINGS.maxContentLength, '120')).toBe(120);
    expect(read(SETTINGS.otlpProtocol, 'GRPC')).toBe('grpc');
    expect(read(SETTINGS.otlpProtocol, 'http')).toBe('http/protobuf');
    expect(read(SETTINGS.captureContent, 'NO_CONTENT')).toBe(false);
    expect(read(SETTINGS.metricsTemporality, 'Cumulative')).toBe('cumulative');
    expect(MAX_TIMER_MS).toBe(2 ** 31 - 1);
  });

  it('clamps a shutdown bound too large for a timer instead of letting it fire at once', async () => {
    const receiver = await startOtlpReceiver({ kind: 'slow', delayMs: 300 });
    cleanups.push(() => receiver.close());
    const telemetry = createTelemetry({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_METRICS_EXPORTER: 'none',
      },
    });
    telemetry.runs.onRunEnd(record('run-huge'));
    const report = await telemetry.shutdown(2 ** 40);
    expect(report).toEqual({
      timedOut: false,
      errors: [],
      dropped: { traces: 0, metrics: 0 },
      refused: { traces: 0, metrics: 0 },
      outboxed: { traces: 0, metrics: 0, runs: 0 },
      fromOutbox: { requests: 0, items: 0, runs: 0 },
    });
    expect(receiver.acceptedSpans().map((s) => s.name)).toEqual(['invoke_agent cfg']);
  });
});

describe('drop accounting', () => {
  it('is kept per createTelemetry: a second pipeline reports its own span and metric drops', async () => {
    const receiver = await startOtlpReceiver({ kind: 'error-500' });
    cleanups.push(() => receiver.close());
    const out = mkdtempSync(join(tmpdir(), 'drops-'));
    cleanups.push(() => rmSync(out, { recursive: true, force: true }));
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
    for (const runId of ['first', 'second']) {
      const telemetry = createTelemetry({ env });
      telemetry.runs.onRunEnd(record(runId));
      const report = await telemetry.shutdown(5000);
      expect(report.timedOut).toBe(false);
      expect(report.dropped).toEqual({ traces: 1, metrics: 1 });
      expect(report.errors.filter((e) => e.startsWith('traces: otlp export failed'))).toHaveLength(1);
      expect(report.errors.filter((e) => e.startsWith('metrics: otlp export failed'))).toHaveLength(1);
    }
  });
});
