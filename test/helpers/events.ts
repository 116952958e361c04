/**
 * Tiny builders for dsh session events, so test event lists stay short and
 * readable. `events(gen, ...)` numbers `seq` and `time`; builders take the
 * log generation where it changes the shape (chunk events vs embedded streams).
 */
import type { ContentBlock, StreamChunk, TokenUsage } from '../../src/wire/content.js';
import type { SessionEvent } from '../../src/wire/events.js';

export type Generation = 'chunk' | 'embedded';

type Draft = { type: string; data?: unknown };

export const text = (t: string): ContentBlock => ({ type: 'text', text: t });
export const reasoning = (t: string): ContentBlock => ({ type: 'reasoning', text: t });
export const toolCall = (id: string, name = 'read_file', args = '{"path":"a.txt"}'): ContentBlock => ({
  type: 'tool-call',
  id,
  name,
  arguments: args,
});
export const usage = (inputTokens: number, outputTokens: number, extra: Partial<TokenUsage> = {}): TokenUsage => ({
  inputTokens,
  outputTokens,
  ...extra,
});

export const textDelta = (t: string, index = 0): StreamChunk => ({ type: 'text-delta', index, text: t });
export const reasoningDelta = (t: string, index = 0): StreamChunk => ({ type: 'reasoning-delta', index, text: t });
export const toolDelta = (id: string, argumentsDelta: string, index = 1): StreamChunk => ({
  type: 'tool-call-delta',
  index,
  id,
  name: 'read_file',
  argumentsDelta,
});
export const finish = (kind: string): StreamChunk => ({ type: 'finish', reason: { kind } });

export const turnStart = (turn = 0): Draft => ({ type: 'turn/start', data: { turn } });
export const turnEnd = (kind: string, turn = 0, extra: Record<string, unknown> = {}): Draft => ({
  type: 'turn/end',
  data: { turn, reason: { kind, ...extra } },
});
export const stepStart = (step: number, turn = 0): Draft => ({ type: 'step/start', data: { turn, step } });
export const stepEnd = (step: number, turn = 0): Draft => ({ type: 'step/end', data: { turn, step } });
export const endSeed = (): Draft => ({ type: 'session/end-seed', data: {} });
export const chunkEvent = (chunk: StreamChunk, step = 0, turn = 0): Draft => ({
  type: 'assistant/chunk',
  data: { turn, step, chunk },
});
export const toolCallEvent = (callId: string, step = 0, name = 'read_file', turn = 0): Draft => ({
  type: 'tool/call',
  data: { turn, step, callId, name, arguments: '{}' },
});
export const toolResultEvent = (callId: string, isError = false, step = 0, turn = 0): Draft => ({
  type: 'tool/result',
  data: {
    turn,
    step,
    message: { content: [{ type: 'tool-result', toolCallId: callId, content: [text('file body')], isError }] },
  },
});
export const unknownEvent = (): Draft => ({ type: 'future/thing', data: { anything: true } });

let messageIds = 0;

/**
 * One model call that ends in a message. In the chunk generation the stream
 * travels as separate `assistant/chunk` events before the message; in the
 * embedded generation it rides inside the message.
 */
export function step(
  gen: Generation,
  options: { step?: number; turn?: number; stream?: StreamChunk[]; content: ContentBlock[]; usage?: TokenUsage },
): Draft[] {
  const s = options.step ?? 0;
  const turn = options.turn ?? 0;
  const stream = options.stream ?? [];
  messageIds += 1;
  const data: Record<string, unknown> = {
    turn,
    step: s,
    message: { id: `msg-${messageIds}`, role: 'assistant', content: options.content },
  };
  if (options.usage !== undefined) data.usage = options.usage;
  if (gen === 'embedded') {
    if (stream.length > 0) data.stream = stream;
    return [{ type: 'assistant/message', data }];
  }
  return [...stream.map((c) => chunkEvent(c, s, turn)), { type: 'assistant/message', data }];
}

/** A model call that did not assemble into a message (retried, failed, cancelled). */
export function attempt(
  gen: Generation,
  options: { step?: number; turn?: number; stream: StreamChunk[]; failure?: { message: string; code: string } },
): Draft[] {
  const s = options.step ?? 0;
  const turn = options.turn ?? 0;
  if (gen === 'chunk') return options.stream.map((c) => chunkEvent(c, s, turn));
  const data: Record<string, unknown> = { turn, step: s, stream: options.stream };
  if (options.failure !== undefined) data.failure = options.failure;
  return [{ type: 'assistant/attempt', data }];
}

/** Numbers drafts into envelopes: `seq` from `seq0`, `time` from `time0` in 10 ms steps. */
export function events(drafts: ReadonlyArray<Draft | Draft[]>, seq0 = 0, time0 = 1_700_000_000_000): SessionEvent[] {
  return drafts
    .flat()
    .map((d, i) => ({ type: d.type, seq: seq0 + i, time: time0 + i * 10, data: d.data }) as SessionEvent);
}
