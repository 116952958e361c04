/**
 * The view's index over OTLP JSON traces lines written here by hand (the
 * span shapes follow what `telemetry/run-telemetry.ts` exports: an
 * `invoke_agent` span per run with `subagent.*` attributes, `chat` and
 * `execute_tool` children): rows, filters, sorting, paging, charts, a run's
 * trace read again from the file, and the child run placed under its tool call.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkTracesFile, NotOtlpTracesError, readTracesFile } from '../../src/view/otlp-lines.js';
import { RunIndex } from '../../src/view/run-index.js';
import { delegatingToolCalls } from '../../src/view/trace-tree.js';

type Attr = { key: string; value: Record<string, unknown> };
const s = (key: string, value: string): Attr => ({ key, value: { stringValue: value } });
const n = (key: string, value: number): Attr => ({
  key,
  value: Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value },
});
const b = (key: string, value: boolean): Attr => ({ key, value: { boolValue: value } });

const DAY1 = Date.UTC(2026, 0, 5, 10);
const DAY2 = Date.UTC(2026, 0, 6, 10);

function span(
  trace: string,
  id: string,
  parent: string,
  name: string,
  startMs: number,
  endMs: number,
  attributes: Attr[],
): unknown {
  return {
    traceId: trace.padStart(32, '0'),
    spanId: id.padStart(16, '0'),
    parentSpanId: parent === '' ? '' : parent.padStart(16, '0'),
    name,
    startTimeUnixNano: `${BigInt(startMs) * 1_000_000n}`,
    endTimeUnixNano: `${BigInt(endMs) * 1_000_000n}`,
    attributes,
  };
}

function line(spans: unknown[]): string {
  return JSON.stringify({
    resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 't' }, spans }] }],
  });
}

const run = (agent: string, stop: string, output: string, extra: Attr[] = []): Attr[] => [
  s('gen_ai.operation.name', 'invoke_agent'),
  s('gen_ai.agent.name', agent),
  s('gen_ai.conversation.id', `session-${agent}`),
  s('subagent.stop_reason', stop),
  s(
    'subagent.output',
    JSON.stringify([
      { type: 'text', text: output },
      { type: 'tool-call', id: 'c', name: 'Read', arguments: '{}' },
    ]),
  ),
  ...extra,
];

function writeFixture(): string {
  const dir = mkdtempSync(join(tmpdir(), 'view-index-'));
  const path = join(dir, 'traces.jsonl');
  const lines = [
    // Trace 1: a parent run whose child run is recorded under it, the delegating tool call beside it (SDK shape).
    line([
      span('1', 'c1', 'a1', 'chat m', DAY1 + 1, DAY1 + 2, [s('gen_ai.operation.name', 'chat')]),
      span('1', 'd1', 'a1', 'execute_tool delegate', DAY1 + 3, DAY1 + 9, [s('gen_ai.operation.name', 'execute_tool')]),
      span(
        '1',
        'a2',
        'a1',
        'invoke_agent child',
        DAY1 + 4,
        DAY1 + 8,
        run('child', 'max-tokens', 'Partial child answer', [
          b('subagent.reported_output.match', false),
          n('gen_ai.usage.input_tokens', 10),
          n('gen_ai.usage.output_tokens', 5),
        ]),
      ),
    ]),
    'this line is not JSON',
    line([
      span(
        '1',
        'a1',
        '',
        'invoke_agent parent',
        DAY1,
        DAY1 + 10,
        run('parent', 'completed', 'The parent answer', [
          n('gen_ai.usage.input_tokens', 100),
          n('gen_ai.usage.output_tokens', 20),
          n('subagent.cost.amount', 0.5),
          s('subagent.cost.currency', 'USD'),
        ]),
      ),
      span(
        '2',
        'b1',
        '',
        'invoke_agent other',
        DAY2,
        DAY2 + 5,
        run('other', 'max-tokens', 'Needle in the output', [
          n('subagent.cost.amount', 0.25),
          s(
            'gen_ai.input.messages',
            JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'prompt with a haystack' }] }]),
          ),
        ]),
      ),
    ]),
    // The same run again (a file given twice, say): kept once.
    line([
      span('2', 'b1', '', 'invoke_agent other', DAY2, DAY2 + 5, run('other', 'max-tokens', 'Needle in the output')),
    ]),
  ];
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

async function indexOf(path: string): Promise<{ index: RunIndex; skipped: number }> {
  const index = new RunIndex();
  const file = index.addFile(path);
  const report = await readTracesFile(path, (l) => index.addLine(file, l));
  return { index, skipped: report.skipped };
}

describe('RunIndex', () => {
  it('indexes one row per invoke_agent span, counts the bad line, and keeps a repeated run once', async () => {
    const { index, skipped } = await indexOf(writeFixture());
    expect(skipped).toBe(1);
    expect(index.runCount).toBe(3);
    const page = index.runs({});
    expect(page.rows.map((r) => r.agent)).toEqual(['other', 'child', 'parent']);
    const child = page.rows.find((r) => r.agent === 'child');
    expect(child).toMatchObject({
      stop: 'max-tokens',
      preview: 'Partial child answer [tool-call Read]',
      mismatch: true,
      nested: true,
      inputTokens: 10,
      outputTokens: 5,
      time: DAY1 + 4,
      durationMs: 4,
    });
    expect(index.summary()).toMatchObject({
      runs: 3,
      first: DAY1,
      last: DAY2,
      stops: [
        { name: 'max-tokens', runs: 2 },
        { name: 'completed', runs: 1 },
      ],
    });
  });

  it('filters by stop reason, agent, time, mismatch and text in output or prompt; sorts and pages', async () => {
    const { index } = await indexOf(writeFixture());
    expect(index.runs({ stop: 'max-tokens' }).total).toBe(2);
    expect(index.runs({ agent: 'parent' }).rows.map((r) => r.agent)).toEqual(['parent']);
    expect(index.runs({ from: DAY2 }).rows.map((r) => r.agent)).toEqual(['other']);
    expect(index.runs({ to: DAY2 }).total).toBe(2);
    expect(index.runs({ mismatch: true }).rows.map((r) => r.agent)).toEqual(['child']);
    expect(index.runs({ q: 'NEEDLE' }).rows.map((r) => r.agent)).toEqual(['other']);
    expect(index.runs({ q: 'haystack' }).rows.map((r) => r.agent)).toEqual(['other']);
    expect(index.runs({ sort: 'cost', dir: 'desc' }).rows.map((r) => r.agent)).toEqual(['parent', 'other', 'child']);
    expect(index.runs({ sort: 'agent', dir: 'asc', offset: 1, limit: 1 })).toMatchObject({
      total: 3,
      offset: 1,
      rows: [{ agent: 'other' }],
    });
  });

  it('sums runs by stop reason, truncation rate (over every stop reason), tokens and cost per agent per UTC day', async () => {
    const { index } = await indexOf(writeFixture());
    expect(index.charts({})).toEqual({
      days: ['2026-01-05', '2026-01-06'],
      stops: ['completed', 'max-tokens'],
      runsByStop: { completed: [1, 0], 'max-tokens': [1, 1] },
      truncationRate: [0.5, 1],
      agents: ['child', 'other', 'parent'],
      tokensByAgent: { child: [15, 0], other: [0, 0], parent: [120, 0] },
      costByAgent: { child: [0, 0], other: [0, 0.25], parent: [0.5, 0] },
    });
    // Filtered to max-tokens: the runs per stop reason follow the filter, the truncation rate stays over every stop reason.
    expect(index.charts({ stop: 'max-tokens' })).toMatchObject({
      days: ['2026-01-05', '2026-01-06'],
      stops: ['max-tokens'],
      runsByStop: { 'max-tokens': [1, 1] },
      truncationRate: [0.5, 1],
    });
  });

  it("reads a run's whole trace again from the file, with the child shown under its delegating tool call", async () => {
    const { index } = await indexOf(writeFixture());
    const child = index.runs({ agent: 'child' }).rows[0];
    const detail = await index.detail(child?.id ?? '');
    expect(detail?.output).toBe('Partial child answer\n\n[tool-call Read]');
    expect(detail?.reported).toEqual({ agrees: false, attributes: { 'subagent.reported_output.match': false } });
    expect(detail?.spans.map((sp) => sp.name).sort()).toEqual([
      'chat m',
      'execute_tool delegate',
      'invoke_agent child',
      'invoke_agent parent',
    ]);
    const shown = detail?.spans.find((sp) => sp.name === 'invoke_agent child');
    expect(shown?.parentSpanId).toBe('00000000000000a1');
    expect(shown?.shownUnder).toBe('00000000000000d1');
    expect(await index.detail('nope')).toBeUndefined();
  });
});

describe('delegatingToolCalls', () => {
  const base = { operation: 'invoke_agent', start: 0, end: 100 };
  it('places a child run under the tool call running when it started, the latest started such', () => {
    const placed = delegatingToolCalls([
      { ...base, spanId: 'p' },
      { spanId: 't-early', parentSpanId: 'p', operation: 'execute_tool', start: 5, end: 50 },
      { spanId: 't-late', parentSpanId: 'p', operation: 'execute_tool', start: 10, end: 40 },
      // Started while the child ran: another call of the parent, not the delegation.
      { spanId: 't-after', parentSpanId: 'p', operation: 'execute_tool', start: 25, end: 35 },
      { ...base, spanId: 'c', parentSpanId: 'p', start: 20, end: 30 },
      // A millisecond off either way (whole-millisecond times, as the proxy's spans show): still its tool call.
      { spanId: 't-2', parentSpanId: 'p', operation: 'execute_tool', start: 61, end: 62 },
      { ...base, spanId: 'c2', parentSpanId: 'p', start: 60, end: 61 },
      { spanId: 't-3', parentSpanId: 'p', operation: 'execute_tool', start: 70, end: 70 },
      { ...base, spanId: 'c3', parentSpanId: 'p', start: 71, end: 71 },
    ]);
    expect([...placed]).toEqual([
      ['c', 't-late'],
      ['c2', 't-2'],
      ['c3', 't-3'],
    ]);
  });

  it('leaves a child alone when no tool call ran then, or when its parent is already a tool call', () => {
    expect(
      delegatingToolCalls([
        { ...base, spanId: 'p' },
        { spanId: 't', parentSpanId: 'p', operation: 'execute_tool', start: 1, end: 2 },
        { ...base, spanId: 'c', parentSpanId: 'p', start: 20, end: 30 },
        { ...base, spanId: 'g', parentSpanId: 't', start: 1, end: 2 },
      ]).size,
    ).toBe(0);
  });
});

describe('checkTracesFile', () => {
  it('refuses a metrics file and a file that is not JSON, naming the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'view-check-'));
    const metrics = join(dir, 'metrics.jsonl');
    writeFileSync(metrics, `${JSON.stringify({ resourceMetrics: [] })}\n`);
    await expect(checkTracesFile(metrics)).rejects.toThrow(
      new NotOtlpTracesError(
        `${metrics} is not an OTLP JSON traces file: line 1 is an OTLP metrics request, not traces (give the traces.jsonl beside it, or their directory)`,
      ),
    );
    const text = join(dir, 'notes.txt');
    writeFileSync(text, '\n# notes\n');
    await expect(checkTracesFile(text)).rejects.toThrow(
      /notes\.txt is not an OTLP JSON traces file: line 2 is not JSON/,
    );
  });
});
