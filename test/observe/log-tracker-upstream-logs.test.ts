/**
 * Durable logs in the shape DeepSeek Harness's own recorded snapshots have
 * (its `subagent-max-tokens-partial` and `subagent-published-run-failure`
 * ACP transcripts): event lines without `seq` and `time`, inbox splices
 * around each turn, a child log with a `subagent/descriptor`, and a child
 * whose delegation failed before its first turn. Written by hand here in
 * that shape; the expected runs are what upstream's transcripts show the
 * parent received.
 */
import { describe, expect, it } from 'vitest';
import { LogTracker } from '../../src/observe/log-tracker.js';
import type { RunRecord, RunStart } from '../../src/observe/run-record.js';
import { foregroundToolResult, subagentResult } from '../../src/output/result.js';

const PARENT = '11111111-1111-4111-8111-111111111111';
const CHILD = '22222222-2222-4222-8222-222222222222';
const route = { provider: 'deepseek-official', model: 'deepseek-v4-flash' };
const src = { kind: 'model', ...route };

/** What upstream's parent recorded as the subagent tool's result for the truncated child. */
const RECORDED_TOOL_TEXT =
  'Error: subagent run hit its token limit before finishing\nPartial output before the run ended:\npartial one';

const lines = (records: unknown[]): string => `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;
const receipt = (text: string, id: string) => ({
  type: 'agent/inbox/spliced',
  data: {
    target: 'next-turn',
    start: 0,
    inserted: [{ content: [{ type: 'text', text }], source: { kind: 'user' }, role: 'user', id }],
  },
});
const claim = { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, removedCount: 1, inserted: [] } };

const parentLog = lines([
  { type: 'session', version: 0, id: PARENT, createdAt: 1, cwd: '/w', delegationDepth: 0 },
  receipt('Delegate it.', 'u1'),
  { type: 'turn/start', data: { turn: 1 } },
  claim,
  { type: 'step/start', data: { turn: 1, step: 1 } },
  { type: 'request/context', data: route },
  {
    type: 'assistant/chunk',
    data: { turn: 1, step: 1, chunk: { type: 'block-start', index: 0, blockType: 'tool-call' } },
  },
  {
    type: 'assistant/message',
    data: {
      turn: 1,
      step: 1,
      message: {
        role: 'assistant',
        content: [{ type: 'tool-call', id: 'call_parent_1', name: 'subagent', arguments: '{}' }],
        source: src,
        id: 'a1',
      },
      usage: { inputTokens: 10, outputTokens: 5 },
    },
    surfaceOp: 'append',
  },
  { type: 'tool/call', data: { turn: 1, step: 1, callId: 'call_parent_1', name: 'subagent', arguments: '{}' } },
  {
    type: 'tool/result',
    data: {
      turn: 1,
      step: 1,
      message: {
        source: { kind: 'tool', callId: 'call_parent_1' },
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call_parent_1',
            content: [{ type: 'text', text: RECORDED_TOOL_TEXT }],
            isError: true,
          },
        ],
        role: 'user',
        id: 'r1',
      },
    },
  },
  { type: 'step/end', data: { turn: 1, step: 1 } },
  { type: 'step/start', data: { turn: 1, step: 2 } },
  {
    type: 'assistant/message',
    data: {
      turn: 1,
      step: 2,
      message: { role: 'assistant', content: [{ type: 'text', text: 'PARENT_DONE' }], source: src, id: 'a2' },
      usage: { inputTokens: 12, outputTokens: 2 },
    },
  },
  { type: 'step/end', data: { turn: 1, step: 2 } },
  { type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
]);

const childLog = lines([
  {
    type: 'session',
    version: 0,
    id: CHILD,
    createdAt: 2,
    cwd: '/w',
    parentSession: PARENT,
    origin: 'subagent',
    delegationDepth: 1,
  },
  { type: 'approval/policy', data: { policy: 'never', source: 'delegation' } },
  receipt('Write the words.', 'u2'),
  { type: 'turn/start', data: { turn: 1 } },
  claim,
  { type: 'subagent/descriptor', data: { version: 2, mode: 'one-shot', provider: 'spawn', label: 'Truncated child' } },
  { type: 'step/start', data: { turn: 1, step: 1 } },
  { type: 'request/context', data: route },
  {
    type: 'assistant/chunk',
    data: { turn: 1, step: 1, chunk: { type: 'block-end', index: 0, block: { type: 'text', text: 'partial one' } } },
  },
  {
    type: 'assistant/message',
    data: {
      turn: 1,
      step: 1,
      message: {
        role: 'assistant',
        content: [
          { type: 'text', text: 'partial one' },
          { type: 'tool-call', id: 'call_child_1', name: 'todo_write', arguments: '{}' },
        ],
        source: src,
        id: 'c1',
      },
      usage: { inputTokens: 20, outputTokens: 9 },
    },
  },
  { type: 'tool/call', data: { turn: 1, step: 1, callId: 'call_child_1', name: 'todo_write', arguments: '{}' } },
  { type: 'todo/write', data: { todos: [] } },
  {
    type: 'tool/result',
    data: {
      turn: 1,
      step: 1,
      message: {
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call_child_1',
            content: [{ type: 'text', text: 'Updated.' }],
            isError: false,
          },
        ],
        role: 'user',
        id: 'r2',
      },
    },
  },
  { type: 'step/end', data: { turn: 1, step: 1 } },
  { type: 'step/start', data: { turn: 1, step: 2 } },
  { type: 'assistant/chunk', data: { turn: 1, step: 2, chunk: { type: 'finish', reason: { kind: 'max-tokens' } } } },
  {
    type: 'assistant/message',
    data: {
      turn: 1,
      step: 2,
      message: { role: 'assistant', content: [], source: src, id: 'c2' },
      usage: { inputTokens: 30, outputTokens: 4 },
    },
  },
  { type: 'step/end', data: { turn: 1, step: 2 } },
  { type: 'turn/end', data: { turn: 1, reason: { kind: 'max-tokens' } } },
]);

/** A child whose published run failed before its first turn: the header and one event. */
const failedChildLog = lines([
  {
    type: 'session',
    version: 0,
    id: 'eb69342c',
    createdAt: 1786358409171,
    cwd: '/w',
    parentSession: PARENT,
    origin: 'subagent',
    delegationDepth: 1,
  },
  { type: 'approval/policy', data: { policy: 'never', source: 'delegation' } },
]);

async function replay(
  files: Record<string, string>,
): Promise<{ starts: RunStart[]; ends: RunRecord[]; malformed: string[] }> {
  const starts: RunStart[] = [];
  const ends: RunRecord[] = [];
  const malformed: string[] = [];
  const tracker = new LogTracker({
    onRunStart: (s) => starts.push(s),
    onRunEnd: (r) => ends.push(r),
    onMalformed: (_o, e) => malformed.push(e.message),
  });
  for (const [name, text] of Object.entries(files)) {
    const result = await tracker.readSource(
      name,
      (async function* () {
        yield Buffer.from(text, 'utf8');
      })(),
    );
    expect(result.problems).toBe(0);
  }
  tracker.emit();
  return { starts, ends, malformed };
}

describe("logs in the shape of upstream's recorded snapshots", () => {
  it("accepts every event line without seq and time, and gives the runs upstream's transcript shows", async () => {
    const { starts, ends, malformed } = await replay({ 'session.jsonl': parentLog, 'session.1.jsonl': childLog });
    expect(malformed).toEqual([]);
    expect(starts.map((s) => [s.runId, s.parentRunId])).toEqual([
      [`${PARENT}#0`, undefined],
      [`${CHILD}#0`, `${PARENT}#0`],
    ]);
    const [child, parent] = ends;
    expect(parent).toMatchObject({
      stopReason: 'completed',
      output: [{ type: 'text', text: 'PARENT_DONE' }],
      usage: { inputTokens: 22, outputTokens: 7 },
    });
    expect(child).toMatchObject({
      stopReason: 'max-tokens',
      output: [
        { type: 'text', text: 'partial one' },
        { type: 'tool-call', id: 'call_child_1', name: 'todo_write', arguments: '{}' },
      ],
      emptyMessages: 1,
      usage: { inputTokens: 50, outputTokens: 13 },
      provider: 'deepseek-official',
      subagentProvider: 'spawn',
    });
    // The parent received exactly this tool result for that child.
    expect(foregroundToolResult(subagentResult(child?.output, child?.stopReason ?? ''))).toEqual({
      isError: true,
      content: [{ type: 'text', text: RECORDED_TOOL_TEXT }],
    });
  });

  it('gives a child whose log holds no turn one run, error by the in-process rule, nested under its parent', async () => {
    const { starts, ends } = await replay({ 'session.jsonl': parentLog, 'session.1.jsonl': failedChildLog });
    expect(starts.map((s) => [s.runId, s.parentRunId, s.startTime])).toEqual([
      [`${PARENT}#0`, undefined, 1],
      ['eb69342c#0', `${PARENT}#0`, 1786358409171],
    ]);
    expect(ends[0]).toMatchObject({
      runId: 'eb69342c#0',
      stopReason: 'error',
      output: undefined,
      outputSource: 'none',
      endTime: 1786358409171,
    });
    expect(ends[0]?.diagnostic).toBeUndefined();
  });
});
