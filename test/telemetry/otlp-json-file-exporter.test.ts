/**
 * The OTLP-JSON-lines exporters with the real SDK: every export is one line
 * holding one OTLP JSON export request, read back from the files.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValueType } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { TracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { afterEach, describe, expect, it } from 'vitest';
import {
  OtlpJsonLinesSpanExporter,
  createMetricFileExporter,
  createTraceFileExporter,
  fileLineSink,
} from '../../src/telemetry/otlp-json-file-exporter.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'subagent-otel-file-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function lines(path: string): unknown[] {
  const text = readFileSync(path, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line) as unknown);
}

describe('OTLP-JSON-lines file exporters', () => {
  it('appends one OTLP trace export request per export, creating the directory', async () => {
    const dir = join(tempDir(), 'nested', 'out');
    const exporter = createTraceFileExporter(dir);
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    const tracer = provider.getTracer('file-test');
    tracer.startSpan('invoke_agent reviewer', { attributes: { 'subagent.stop_reason': 'max-tokens' } }).end();
    tracer
      .startSpan('execute_tool bash', { attributes: { 'gen_ai.tool.name': 'bash', 'gen_ai.usage.output_tokens': 7 } })
      .end();
    await provider.shutdown();

    const requests = lines(join(dir, 'traces.jsonl')) as {
      resourceSpans: {
        scopeSpans: { scope: { name: string }; spans: { name: string; traceId: string; attributes: unknown[] }[] }[];
      }[];
    }[];
    expect(requests).toHaveLength(2);
    const spans = requests.map((r) => r.resourceSpans[0]?.scopeSpans[0]?.spans[0]);
    expect(spans.map((s) => s?.name)).toEqual(['invoke_agent reviewer', 'execute_tool bash']);
    expect(requests[0]?.resourceSpans[0]?.scopeSpans[0]?.scope.name).toBe('file-test');
    expect(spans[0]?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(spans[0]?.attributes).toEqual([{ key: 'subagent.stop_reason', value: { stringValue: 'max-tokens' } }]);
    expect(spans[1]?.attributes).toEqual([
      { key: 'gen_ai.tool.name', value: { stringValue: 'bash' } },
      { key: 'gen_ai.usage.output_tokens', value: { intValue: 7 } },
    ]);
  });

  it('appends one OTLP metrics export request per collection', async () => {
    const dir = tempDir();
    const reader = new PeriodicExportingMetricReader({
      exporter: createMetricFileExporter(dir),
      exportIntervalMillis: 3_600_000,
    });
    const provider = new MeterProvider({ readers: [reader] });
    const runs = provider.getMeter('file-test').createCounter('subagent.runs', { valueType: ValueType.INT });
    runs.add(1, { 'subagent.stop_reason': 'completed' });
    await reader.forceFlush();
    runs.add(2, { 'subagent.stop_reason': 'completed' });
    await provider.shutdown();

    const requests = lines(join(dir, 'metrics.jsonl')) as {
      resourceMetrics: {
        scopeMetrics: {
          metrics: { name: string; sum: { dataPoints: { asInt: number; attributes: unknown[] }[] } }[];
        }[];
      }[];
    }[];
    const points = requests.map((r) => r.resourceMetrics[0]?.scopeMetrics[0]?.metrics[0]);
    expect(points.map((m) => [m?.name, m?.sum.dataPoints[0]?.asInt])).toEqual([
      ['subagent.runs', 1],
      ['subagent.runs', 3],
    ]);
    expect(points[0]?.sum.dataPoints[0]?.attributes).toEqual([
      { key: 'subagent.stop_reason', value: { stringValue: 'completed' } },
    ]);
  });

  it('reports a write failure as FAILED without throwing, and refuses exports after shutdown', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'blocker'), 'a file where a directory should be');
    const exporter = new OtlpJsonLinesSpanExporter(fileLineSink(join(dir, 'blocker', 'traces.jsonl')));
    const results: ExportResult[] = [];
    const settled = new Promise<void>((resolve) =>
      exporter.export([], (result) => {
        results.push(result);
        resolve();
      }),
    );
    await settled;
    expect(results[0]?.code).toBe(ExportResultCode.FAILED);
    expect(results[0]?.error?.message).toMatch(/EEXIST|ENOTDIR/);

    const ok = createTraceFileExporter(dir);
    await ok.shutdown();
    const after = await new Promise<ExportResult>((resolve) => ok.export([], resolve));
    expect(after).toEqual({ code: ExportResultCode.FAILED, error: new Error('exporter is shut down') });
  });
});

describe('a file left with a torn last line by a crashed writer', () => {
  it('gets its torn line ended before new lines are appended, so none glue onto it', async () => {
    const path = join(tempDir(), 'traces.jsonl');
    writeFileSync(path, '{"resourceSpans":[]}\n{"resourceSp');
    await fileLineSink(path).append(Buffer.from('{"resourceSpans":[{"new":true}]}\n'));
    expect(readFileSync(path, 'utf8')).toBe('{"resourceSpans":[]}\n{"resourceSp\n{"resourceSpans":[{"new":true}]}\n');
  });
});
