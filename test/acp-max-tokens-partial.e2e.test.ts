/**
 * The `subagent-max-tokens-partial` snapshot (seed decision, "Verification"):
 * a parent delegates through the ACP backend to the scripted agent, which
 * streams text and a tool call, ends at a tool-only max-tokens step, and
 * writes its own durable log with the empty usage message. The snapshot
 * holds what the parent received (the errored foreground tool result in
 * upstream's wording: one text block, headline, then the partial text), the child's durable log (times and the
 * creation time normalised), and the run span's attributes as the real
 * OpenTelemetry SDK recorded them (span ids and the random run id
 * normalised; the trace id comes from the traceparent handed in).
 *
 * `test/snapshots/subagent-max-tokens-partial.json` is committed and was
 * reviewed field by field; never regenerate it with `-u` to make this pass.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNoopMeter, SpanKind } from '@opentelemetry/api';
import { TracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, describe, expect, it } from 'vitest';
import { runAcpSubagent, type AcpSubagentOutcome } from '../src/backend/acp-backend.js';
import { foregroundToolResult, readResult } from '../src/output/result.js';
import { resolveContentPolicy } from '../src/telemetry/content-policy.js';
import { RunTelemetry } from '../src/telemetry/run-telemetry.js';
import { parseSessionEvent, type SessionEvent } from '../src/wire/events.js';
import { FIXTURE_ACP_AGENT } from './helpers/paths.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const PARTIAL_TEXT = 'I found the config file. Reading it now.';

const dir = mkdtempSync(join(tmpdir(), 'acp-max-tokens-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Delegation {
  readonly outcome: AcpSubagentOutcome;
  readonly logLines: unknown[];
  readonly spans: ReadableSpan[];
}

/** The parent's side: one delegation through the real backend, with telemetry on a real SDK tracer. */
async function delegate(): Promise<Delegation> {
  const logPath = join(dir, 'child-session.jsonl');
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const telemetry = new RunTelemetry({
    tracer: provider.getTracer('subagent-otel-test'),
    meter: createNoopMeter(),
    content: resolveContentPolicy(undefined, {}),
  });
  const outcome = await runAcpSubagent({
    command: process.execPath,
    args: [FIXTURE_ACP_AGENT],
    env: { FAKE_ACP_SCENARIO: 'max-tokens', FAKE_ACP_LOG: logPath },
    prompt: 'Find the config file and fix the port.',
    traceparent: TRACEPARENT,
    listener: telemetry,
  });
  await provider.forceFlush();
  const logLines = readFileSync(logPath, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as unknown);
  return { outcome, logLines, spans: exporter.getFinishedSpans() };
}

/** Times are wall-clock: replaced by a marker, everything else kept verbatim. */
function normalizeLogLine(line: unknown): unknown {
  const record = line as Record<string, unknown>;
  if (record['type'] === 'session') return { ...record, createdAt: '<createdAt>' };
  return { ...record, time: '<time>' };
}

function normalizeSpans(spans: readonly ReadableSpan[], runId: string): unknown[] {
  const labels = new Map<string, string>();
  for (const span of spans) labels.set(span.spanContext().spanId, `<span ${span.name}>`);
  const parentOf = (span: ReadableSpan): string => {
    const parentId = span.parentSpanContext?.spanId;
    if (parentId === undefined) return '<none>';
    return labels.get(parentId) ?? `<remote ${parentId}>`;
  };
  return spans.map((span) => ({
    name: span.name,
    kind: SpanKind[span.kind],
    traceId: span.spanContext().traceId,
    parent: parentOf(span),
    status: span.status,
    attributes: Object.fromEntries(
      Object.entries(span.attributes)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, value]) => [key, value === runId ? '<run-id>' : value]),
    ),
  }));
}

describe('subagent-max-tokens-partial', () => {
  it('matches the reviewed snapshot: parent tool result, child durable log, run span attributes', async () => {
    const { outcome, logLines, spans } = await delegate();
    const snapshot = {
      parentToolResult: outcome.toolResult,
      childLog: logLines.map(normalizeLogLine),
      spans: normalizeSpans(spans, outcome.record.runId),
    };
    await expect(`${JSON.stringify(snapshot, null, 2)}\n`).toMatchFileSnapshot(
      './snapshots/subagent-max-tokens-partial.json',
    );
  });

  it("gives the parent upstream's errored tool result: one block, the headline, then the partial text", async () => {
    const { outcome } = await delegate();
    expect(outcome.result).toEqual({ output: [{ type: 'text', text: PARTIAL_TEXT }], stopReason: 'max-tokens' });
    expect(outcome.toolResult).toEqual({
      isError: true,
      content: [
        {
          type: 'text',
          text: `Error: subagent run hit its token limit before finishing\nPartial output before the run ended:\n${PARTIAL_TEXT}`,
        },
      ],
    });
  });

  it('reads the same partial answer back from the child durable log, past its empty usage message', async () => {
    const { outcome, logLines } = await delegate();
    const [header, ...rows] = logLines;
    expect(header).toMatchObject({ type: 'session', version: 1, id: 'fixture-session-1', delegationDepth: 1 });
    const events: SessionEvent[] = rows.map((row, i) => {
      const parsed = parseSessionEvent(row, `line ${i + 2}`);
      if (!parsed.ok) throw new Error(parsed.error.message);
      expect(parsed.known).toBe(true);
      return parsed.event;
    });
    const last = events.filter((e) => e.type === 'assistant/message').at(-1) as {
      data: { message: { content: unknown[] }; usage: unknown };
    };
    expect(last.data.message.content).toEqual([]);
    expect(last.data.usage).toEqual({ inputTokens: 1310, outputTokens: 256 });

    const fromLog = readResult(events);
    // The log holds complete messages, so the rule selects the step-0 message (its text and its tool call);
    // ACP exposes only streamed text. The text, and the tool result the parent sees, are the same.
    expect(fromLog).toEqual({
      output: [
        { type: 'text', text: PARTIAL_TEXT },
        { type: 'tool-call', id: 'call_1', name: 'read_file', arguments: '{"path":"config.json"}' },
      ],
      stopReason: 'max-tokens',
    });
    expect(fromLog.output.filter((block) => block.type === 'text')).toEqual(outcome.result.output);
    expect(foregroundToolResult(fromLog)).toEqual(outcome.toolResult);
  });
});
