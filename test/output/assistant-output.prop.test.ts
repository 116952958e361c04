/**
 * Property tests of the one rule and the result contract. Invariants:
 * - the fold equals a deliberately simple reference written here (filter the
 *   messages, take the last non-empty; else concatenate every text delta);
 * - `finalAssistantOutput` and the incremental fold agree, however the events
 *   are interleaved with raw text;
 * - an inserted empty message, or a different turn-end kind, never changes the selection;
 * - the result reader, the `subagent/end` payload and the foreground tool
 *   result carry the same output for the same run.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AssistantOutputFold, finalAssistantOutput } from '../../src/output/assistant-output.js';
import {
  foregroundToolResult,
  readResult,
  subagentRunEndInfo,
  TOOL_RESULT_PARTIAL_LABEL,
} from '../../src/output/result.js';
import type { ContentBlock, StreamChunk } from '../../src/wire/content.js';
import type { SessionEvent } from '../../src/wire/events.js';

export const RUNS = 3000;

const textArb = fc.string({ maxLength: 6 });
const blockArb: fc.Arbitrary<ContentBlock> = fc.oneof(
  textArb.map((t) => ({ type: 'text', text: t })),
  textArb.map((t) => ({ type: 'reasoning', text: t })),
  fc.constant({ type: 'tool-call', id: 'c', name: 'n', arguments: '{}' } as ContentBlock),
  fc.constant({ type: 'tool-result', toolCallId: 'c', content: [{ type: 'text', text: 'tool said' }] } as ContentBlock),
);
const chunkArb: fc.Arbitrary<StreamChunk> = fc.oneof(
  textArb.map((t) => ({ type: 'text-delta', index: 0, text: t })),
  textArb.map((t) => ({ type: 'reasoning-delta', index: 0, text: t })),
  textArb.map((t) => ({ type: 'tool-call-delta', index: 1, id: 'c', argumentsDelta: t })),
  fc.constant({ type: 'finish', reason: { kind: 'max-tokens' } } as StreamChunk),
  fc.constant({ type: 'usage', usage: { inputTokens: 1, outputTokens: 2 } } as StreamChunk),
);

/** What a run is made of: session events, or raw text from a chunk-only transport. */
type Op = { kind: 'event'; event: Omit<SessionEvent, 'seq' | 'time'> } | { kind: 'text'; text: string };

const eventOpArb: fc.Arbitrary<Op> = fc.oneof(
  fc
    .record({
      content: fc.array(blockArb, { maxLength: 3 }),
      stream: fc.option(fc.array(chunkArb, { maxLength: 4 }), { nil: undefined }),
    })
    .map(({ content, stream }) => ({
      kind: 'event' as const,
      event: {
        type: 'assistant/message',
        data: {
          turn: 0,
          step: 0,
          message: { id: 'm', role: 'assistant', content },
          usage: { inputTokens: 3, outputTokens: 4 },
          ...(stream ? { stream } : {}),
        },
      },
    })),
  fc.array(chunkArb, { maxLength: 4 }).map((stream) => ({
    kind: 'event' as const,
    event: { type: 'assistant/attempt', data: { turn: 0, step: 0, stream } },
  })),
  chunkArb.map((chunk) => ({
    kind: 'event' as const,
    event: { type: 'assistant/chunk', data: { turn: 0, step: 0, chunk } },
  })),
  fc.constantFrom('completed', 'max-tokens', 'aborted', 'error', 'mystery').map((kind) => ({
    kind: 'event' as const,
    event: { type: 'turn/end', data: { turn: 0, reason: { kind } } },
  })),
  fc.constant({ kind: 'event' as const, event: { type: 'future/thing', data: { x: 1 } } }),
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: eventOpArb },
  { weight: 1, arbitrary: textArb.map((text) => ({ kind: 'text' as const, text })) },
);
const opsArb = fc.array(opArb, { maxLength: 25 });
const eventsOnlyArb = fc.array(eventOpArb, { maxLength: 25 }).map(toEvents);

function toEvents(ops: readonly Op[]): SessionEvent[] {
  return ops.flatMap((op, i) => (op.kind === 'event' ? [{ ...op.event, seq: i, time: 1000 + i } as SessionEvent] : []));
}

/** The reference: a plain reading of the rule, sharing no code with the implementation. */
function reference(ops: readonly Op[]): ContentBlock[] | undefined {
  const messages: ContentBlock[][] = [];
  let streamed = '';
  const takeStream = (chunks: readonly StreamChunk[]): void => {
    for (const c of chunks) if (c.type === 'text-delta') streamed += (c as { text: string }).text;
  };
  for (const op of ops) {
    if (op.kind === 'text') {
      streamed += op.text;
      continue;
    }
    const data = op.event.data as Record<string, any>; // test-only: the arbitraries above fix the shapes
    if (op.event.type === 'assistant/message') {
      messages.push(data.message.content);
      if (data.stream) takeStream(data.stream);
    } else if (op.event.type === 'assistant/attempt') takeStream(data.stream);
    else if (op.event.type === 'assistant/chunk') takeStream([data.chunk]);
  }
  const nonEmpty = messages.filter((m) => m.length > 0);
  if (nonEmpty.length > 0) return nonEmpty[nonEmpty.length - 1];
  return streamed === '' ? undefined : [{ type: 'text', text: streamed }];
}

function runFold(ops: readonly Op[]): readonly ContentBlock[] | undefined {
  const fold = new AssistantOutputFold();
  let i = 0;
  for (const op of ops) {
    if (op.kind === 'text') fold.pushText(op.text);
    else fold.push({ ...op.event, seq: i, time: 1000 + i } as SessionEvent);
    i += 1;
  }
  return fold.collect();
}

const emptyMessage: SessionEvent = {
  type: 'assistant/message',
  seq: 0,
  time: 0,
  data: {
    turn: 0,
    step: 9,
    message: { id: 'empty', role: 'assistant', content: [] },
    usage: { inputTokens: 1, outputTokens: 4096 },
  },
};

describe('the one rule, under random event sequences', () => {
  it('the fold equals the simple reference, with raw text interleaved', () => {
    fc.assert(
      fc.property(opsArb, (ops) => {
        expect(runFold(ops)).toEqual(reference(ops));
      }),
      { numRuns: RUNS },
    );
  });

  it('finalAssistantOutput equals the incremental fold', () => {
    fc.assert(
      fc.property(eventsOnlyArb, (evs) => {
        const fold = new AssistantOutputFold();
        for (const e of evs) fold.push(e);
        expect(finalAssistantOutput(evs)).toEqual(fold.collect());
      }),
      { numRuns: RUNS },
    );
  });

  it('an inserted empty message never changes the selection', () => {
    fc.assert(
      fc.property(eventsOnlyArb, fc.nat(), (evs, at) => {
        const i = at % (evs.length + 1);
        const withEmpty = [...evs.slice(0, i), emptyMessage, ...evs.slice(i)];
        expect(finalAssistantOutput(withEmpty)).toEqual(finalAssistantOutput(evs));
      }),
      { numRuns: RUNS },
    );
  });

  it('a different turn-end kind never changes the selection', () => {
    fc.assert(
      fc.property(
        eventsOnlyArb,
        fc.constantFrom('completed', 'max-tokens', 'aborted', 'error', 'blocked'),
        (evs, kind) => {
          const changed = evs.map((e) =>
            e.type === 'turn/end' ? ({ ...e, data: { turn: 0, reason: { kind } } } as SessionEvent) : e,
          );
          expect(finalAssistantOutput(changed)).toEqual(finalAssistantOutput(evs));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('the result reader, the subagent/end payload and the tool result carry the same output', () => {
    fc.assert(
      fc.property(eventsOnlyArb, (evs) => {
        const expected = reference(evs.map((event) => ({ kind: 'event', event })));
        const result = readResult(evs);
        expect(result.output).toEqual(expected ?? []);
        const end = subagentRunEndInfo(
          { runId: 'r', provider: 'p', id: 'c', local: true },
          result.stopReason,
          result.output,
        );
        if (expected === undefined) expect('lastAssistantMessage' in end).toBe(false);
        else expect(end.lastAssistantMessage).toEqual(expected);
        const tool = foregroundToolResult(result);
        expect(tool.isError).toBe(result.stopReason !== 'completed');
        const joined = (expected ?? [])
          .flatMap((b) => (b.type === 'text' ? [(b as { text: string }).text] : []))
          .join('');
        expect(tool.content).toHaveLength(1);
        const toolText = (tool.content[0] as { text: string }).text;
        if (!tool.isError) {
          expect(toolText).toBe(joined);
          expect(tool.output).toEqual(expected ?? []);
        } else if (joined === '') expect(toolText).not.toContain(TOOL_RESULT_PARTIAL_LABEL);
        else expect(toolText.endsWith(`\n${TOOL_RESULT_PARTIAL_LABEL}\n${joined}`)).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });
});
