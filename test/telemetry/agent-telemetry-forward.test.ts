/**
 * Re-parenting an agent's spans under the run span they belong to, and
 * forwarding its requests to the OTLP-JSON-lines files of the output
 * directory (real files), its resource kept.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createAgentTelemetryForwarder,
  reparentSpans,
  type RunSpanIds,
} from '../../src/telemetry/agent-telemetry-forward.js';
import type { OtlpJsonTracesRequest } from '../../src/wire/otlp-json.js';

const RUN: RunSpanIds = { traceId: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', spanId: 'bbbbbbbbbbbbbbbb' };
const T0 = 1_796_160_959_000;

function spans(
  list: Array<{ traceId: string; spanId: string; parentSpanId?: string; at: number; session?: string }>,
): OtlpJsonTracesRequest {
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'gemini-cli' } }] },
        scopeSpans: [
          {
            spans: list.map((s) => ({
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId !== undefined ? { parentSpanId: s.parentSpanId } : {}),
              name: 'llm_call',
              startTimeUnixNano: `${s.at}000000`,
              endTimeUnixNano: `${s.at + 10}000000`,
              attributes: s.session !== undefined ? [{ key: 'session.id', value: { stringValue: s.session } }] : [],
            })),
          },
        ],
      },
    ],
  };
}

describe('reparentSpans', () => {
  it("moves a trace into its run's trace: roots under the run span, children keep their parent, a later batch follows the first", () => {
    const moved = new Map<string, RunSpanIds>();
    const asked: Array<[number, string | undefined]> = [];
    const lookup = (time: number, session: string | undefined): RunSpanIds | undefined => {
      asked.push([time, session]);
      return session === undefined || session === 's1' ? RUN : undefined;
    };
    const first = spans([
      {
        traceId: '11111111111111111111111111111111',
        spanId: '2222222222222222',
        parentSpanId: '3333333333333333',
        at: T0 + 5,
        session: 's1',
      },
    ]);
    expect(reparentSpans(first, moved, lookup)).toEqual({ moved: 1, left: 0 });
    const root = spans([{ traceId: '11111111111111111111111111111111', spanId: '3333333333333333', at: T0 }]);
    expect(reparentSpans(root, moved, lookup)).toEqual({ moved: 1, left: 0 });
    const [child] = first.resourceSpans![0]!.scopeSpans![0]!.spans!;
    const [top] = root.resourceSpans![0]!.scopeSpans![0]!.spans!;
    expect([child!.traceId, child!.parentSpanId]).toEqual([RUN.traceId, '3333333333333333']);
    expect([top!.traceId, top!.parentSpanId]).toEqual([RUN.traceId, RUN.spanId]);
    // Asked once, for the first span of the trace, by its own session.
    expect(asked).toEqual([[T0 + 5, 's1']]);
    expect(first.resourceSpans![0]!.resource).toEqual({
      attributes: [{ key: 'service.name', value: { stringValue: 'gemini-cli' } }],
    });
  });

  it('leaves a span no run holds as it was', () => {
    const body = spans([{ traceId: '44444444444444444444444444444444', spanId: '5555555555555555', at: T0 }]);
    expect(reparentSpans(body, new Map(), () => undefined)).toEqual({ moved: 0, left: 1 });
    expect(body.resourceSpans![0]!.scopeSpans![0]!.spans![0]!.traceId).toBe('44444444444444444444444444444444');
  });
});

describe('the forwarder', () => {
  it("appends each of the agent's requests as one OTLP JSON line to the output directory's file of its signal", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-forward-'));
    const forwarder = createAgentTelemetryForwarder({
      traces: { fileDir: dir, console: false },
      metrics: { fileDir: dir, console: false },
      env: {},
    });
    forwarder.send(
      {
        signal: 'traces',
        body: spans([{ traceId: '66666666666666666666666666666666', spanId: '7777777777777777', at: T0 }]),
      },
      () => RUN,
    );
    forwarder.send({ signal: 'logs', body: { resourceLogs: [] } }, () => RUN);
    forwarder.send({ signal: 'metrics', body: { resourceMetrics: [] } }, () => RUN);
    await forwarder.flush(60_000);
    const line = JSON.parse(readFileSync(join(dir, 'traces.jsonl'), 'utf8')) as OtlpJsonTracesRequest;
    expect(line.resourceSpans![0]!.scopeSpans![0]!.spans![0]).toMatchObject({
      traceId: RUN.traceId,
      parentSpanId: RUN.spanId,
      spanId: '7777777777777777',
    });
    expect(readFileSync(join(dir, 'logs.jsonl'), 'utf8')).toBe('{"resourceLogs":[]}\n');
    expect(readFileSync(join(dir, 'metrics.jsonl'), 'utf8')).toBe('{"resourceMetrics":[]}\n');
    expect(forwarder.stats).toMatchObject({ forwarded: 3, failed: 0, spansMoved: 1, spansLeft: 0 });
  });
});
