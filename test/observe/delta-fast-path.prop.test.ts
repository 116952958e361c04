/**
 * Properties of the delta fast path end to end (decision 0042): an
 * `SdkTracker` fed through a `FrameTap`, where recognized delta lines reach
 * it through `observeDelta` without a frame, reports exactly the runs
 * (starts, records with their output, usage, steps and tools) and the
 * malformed lines that the same tracker reports when every line is parsed in
 * full and handed over as a frame. Streams are random conversations of
 * several sessions (prompts, answers, receipts, statuses, turns, steps, text
 * and reasoning deltas with escapes and non-ASCII text, messages empty or
 * not, tool calls and results, broken lines), chunked anywhere. Also: the
 * text of a delta is decoded only while the run can still select streamed
 * text.
 */
import { Buffer } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FrameObserver } from '../../src/observe/frame-observer.js';
import { FrameTap } from '../../src/observe/frame-tap.js';
import { ProtocolSniffer } from '../../src/observe/protocol-sniffer.js';
import { RunBuilder } from '../../src/observe/run-builder.js';
import type { RunListener } from '../../src/observe/run-record.js';
import { SdkTracker } from '../../src/observe/sdk-tracker.js';
import { DeltaLineReader } from '../../src/wire/delta-line.js';
import { parseFrame } from '../../src/wire/jsonrpc.js';
import { decodeUtf8Line } from '../../src/wire/ndjson.js';
import { chunked } from '../helpers/chunked.js';

type Line = { readonly direction: 'client->agent' | 'agent->client'; readonly bytes: Buffer };

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8');
const agent = (value: unknown): Line => ({ direction: 'agent->client', bytes: json(value) });
const note = (method: string, params: unknown): unknown => ({ jsonrpc: '2.0', method, params });

const sessionArb = fc.constantFrom('s1', 's2', 'child-1');
const smallNat = fc.nat({ max: 3 });
const timeArb = fc.integer({ min: 1_764_400_000_000, max: 1_764_400_000_050 });
const textArb = fc.oneof(
  fc.constantFrom(
    '',
    ' plain',
    ' two words',
    'quote " and \\ backslash',
    'line\nbreak\ttab',
    'é中文→…',
    '\u0000\u001f',
    '\ud83d\ude00',
  ),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
);

function event(type: string, time: number, data: unknown, seq: number): unknown {
  return { type, seq, time, data };
}

/** One line of a random conversation. */
const lineArb: fc.Arbitrary<Line> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .record({
        s: sessionArb,
        time: timeArb,
        seq: fc.nat({ max: 1000 }),
        turn: smallNat,
        step: smallNat,
        type: fc.constantFrom('text-delta', 'reasoning-delta'),
        text: textArb,
      })
      .map(({ s, time, seq, turn, step, type, text }) =>
        agent(
          note('session.event', {
            sessionId: s,
            event: event('assistant/chunk', time, { turn, step, chunk: { type, index: 0, text } }, seq),
          }),
        ),
      ),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({
        s: sessionArb,
        time: timeArb,
        turn: smallNat,
        step: smallNat,
        content: fc.array(
          fc.oneof(
            textArb.map((t) => ({ type: 'text', text: t })),
            textArb.map((t) => ({ type: 'reasoning', text: t })),
          ),
          { maxLength: 2 },
        ),
        input: fc.nat({ max: 50 }),
      })
      .map(({ s, time, turn, step, content, input }) =>
        agent(
          note('session.event', {
            sessionId: s,
            event: event(
              'assistant/message',
              time,
              {
                turn,
                step,
                message: { id: 'm', role: 'assistant', content },
                usage: { inputTokens: input, outputTokens: 2 },
              },
              0,
            ),
          }),
        ),
      ),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({ s: sessionArb, time: timeArb, turn: smallNat, step: smallNat })
      .chain(({ s, time, turn, step }) =>
        fc.constantFrom(
          agent(note('session.event', { sessionId: s, event: event('turn/start', time, { turn }, 0) })),
          agent(note('session.event', { sessionId: s, event: event('step/start', time, { turn, step }, 0) })),
          agent(note('session.event', { sessionId: s, event: event('step/end', time, { turn, step }, 0) })),
          agent(
            note('session.event', {
              sessionId: s,
              event: event('turn/end', time, { turn, reason: { kind: 'completed' } }, 0),
            }),
          ),
          agent(
            note('session.event', {
              sessionId: s,
              event: event('agent/inbox/spliced', time, { target: 'next-turn', start: 0, inserted: [{ id: 'u1' }] }, 0),
            }),
          ),
          agent(
            note('session.event', {
              sessionId: s,
              event: event(
                'assistant/chunk',
                time,
                { turn, step, chunk: { type: 'finish', reason: { kind: 'stop' } } },
                0,
              ),
            }),
          ),
          agent(
            note('session.event', {
              sessionId: s,
              event: event('tool/call', time, { turn, step, callId: 'c1', name: 'read_file', arguments: '{}' }, 0),
            }),
          ),
          agent(
            note('session.event', {
              sessionId: s,
              event: event(
                'tool/result',
                time,
                {
                  turn,
                  step,
                  message: {
                    content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'r' }] }],
                  },
                },
                0,
              ),
            }),
          ),
          agent(note('session.status', { sessionId: s, status: 'running' })),
          agent(note('session.status', { sessionId: s, status: 'idle' })),
          agent(note('subagent.started', { parentSessionId: 's1', childSessionId: 'child-1' })),
          agent(
            note('subagent.finished', {
              provider: 'spawn',
              agentId: 'a',
              parentSessionId: 's1',
              childSessionId: 'child-1',
              status: 'ok',
              stopReason: 'completed',
            }),
          ),
          {
            direction: 'client->agent',
            bytes: json({
              jsonrpc: '2.0',
              id: 7,
              method: 'session/prompt',
              params: { sessionId: s, contentBlocks: [{ type: 'text', text: 'go' }] },
            }),
          },
          agent({ jsonrpc: '2.0', id: 7, result: { messageId: 'u1' } }),
          // A delta the tracker must see (it is a valid frame) but in another key order: the full parse's way.
          agent({
            jsonrpc: '2.0',
            method: 'session.event',
            params: {
              event: event(
                'assistant/chunk',
                time,
                { turn, step, chunk: { type: 'text-delta', index: 0, text: 'reordered' } },
                0,
              ),
              sessionId: s,
            },
          }),
          // Broken lines: counted and skipped the same way by both paths.
          agent(
            note('session.event', {
              sessionId: s,
              event: event(
                'assistant/chunk',
                time,
                { turn, step, chunk: { type: 'text-delta', index: -1, text: 'bad index' } },
                0,
              ),
            }),
          ),
          {
            direction: 'agent->client',
            bytes: Buffer.from(
              '{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s1","event":{"type":"assistant/chunk","seq":1,"time":2,"data":{"turn":0,"step":0,"chunk":{"type":"text-delta","index":0,"text":"bad \\x escape"}}}}}',
            ),
          },
          {
            direction: 'agent->client',
            bytes: Buffer.concat([
              json(
                note('session.event', {
                  sessionId: s,
                  event: event(
                    'assistant/chunk',
                    time,
                    { turn, step, chunk: { type: 'text-delta', index: 0, text: 'ab' } },
                    0,
                  ),
                }),
              ).subarray(0, -10),
              Buffer.from([0xc3, 0x28]),
              Buffer.from('"}}}}}'),
            ]),
          },
        ),
      ),
  },
);

/** Everything a listener hears, in order, with deterministic run ids. */
function recorder(): { listener: RunListener; heard: unknown[] } {
  const heard: unknown[] = [];
  return {
    heard,
    listener: {
      onRunStart: (start) => heard.push(['start', start]),
      onRunEnd: (record) => heard.push(['end', record]),
      onMalformed: (origin, error) => heard.push(['malformed', origin, error.code, error.message]),
    },
  };
}

function counter(): () => string {
  let n = 0;
  return () => `run-${(n += 1)}`;
}

/** The reference: every line decoded and parsed in full, handed over as a frame (the tap's behaviour before any fast path). */
function referenceRun(lines: readonly Line[], wrap: (tracker: SdkTracker) => FrameObserver): unknown[] {
  const { listener, heard } = recorder();
  const observer = wrap(new SdkTracker(listener, { newRunId: counter() }));
  for (const { direction, bytes } of lines) {
    const decoded = decodeUtf8Line(bytes);
    if (!decoded.ok) {
      listener.onMalformed?.(`proxy ${direction}`, { code: 'not-utf8', message: 'line is not valid UTF-8; skipped' });
      continue;
    }
    const parsed = parseFrame(decoded.text);
    if (!parsed.ok)
      listener.onMalformed?.(`proxy ${direction}`, { code: parsed.error.code, message: parsed.error.message });
    else observer.observeFrame(direction, parsed.frame, 1);
  }
  observer.close(2, 'ended');
  return heard;
}

/** The product's path: a FrameTap over chunks of each direction, delta lines through `observeDelta`. */
function tappedRun(
  lines: readonly Line[],
  cuts: readonly number[],
  wrap: (tracker: SdkTracker) => FrameObserver,
): unknown[] {
  const { listener, heard } = recorder();
  const observer = wrap(new SdkTracker(listener, { newRunId: counter() }));
  const tap = new FrameTap(observer, {
    onRejected: (direction, kind, message) => listener.onMalformed?.(`proxy ${direction}`, { code: kind, message }),
    now: () => 1,
  });
  // Lines of one direction in a row travel together, chunked anywhere; the order across directions is kept.
  let at = 0;
  while (at < lines.length) {
    const direction = lines[at]?.direction;
    const group: Buffer[] = [];
    for (; at < lines.length && lines[at]?.direction === direction; at += 1)
      group.push(lines[at]?.bytes as Buffer, Buffer.from('\n'));
    for (const chunk of chunked(Buffer.concat(group), cuts)) tap.push(direction ?? 'agent->client', chunk);
  }
  observer.close(2, 'ended');
  return heard;
}

describe('the delta fast path into the SDK tracker', () => {
  it('reports the same runs and malformed lines as handing every line over as a parsed frame', () =>
    fc.assert(
      fc.property(fc.array(lineArb, { maxLength: 40 }), fc.array(fc.nat(), { maxLength: 6 }), (lines, cuts) => {
        const direct = (tracker: SdkTracker): FrameObserver => tracker;
        expect(tappedRun(lines, cuts, direct)).toEqual(referenceRun(lines, direct));
      }),
      { numRuns: 1500 },
    ));

  it('reports the same behind the protocol sniffer (auto protocol)', () =>
    fc.assert(
      fc.property(fc.array(lineArb, { maxLength: 30 }), fc.array(fc.nat(), { maxLength: 4 }), (lines, cuts) => {
        const sniffed = (tracker: SdkTracker): FrameObserver =>
          new ProtocolSniffer({ sdk: () => tracker, acp: () => tracker });
        expect(tappedRun(lines, cuts, sniffed)).toEqual(referenceRun(lines, sniffed));
      }),
      { numRuns: 500 },
    ));

  it('takes a delta the tracker has a run for as a view: decodes its text only until a non-empty message is selected', () => {
    const builder = new RunBuilder({ runId: 'r', source: 'sdk', agentName: 'a', sessionId: 's', startTime: 0 });
    let decoded = 0;
    const delta = (chunkType: 'text-delta' | 'reasoning-delta', text: string) => ({
      time: 5,
      turn: 0,
      step: 0,
      chunkType,
      text: () => {
        decoded += 1;
        return text;
      },
    });
    builder.pushDelta(delta('text-delta', 'a'));
    builder.pushDelta(delta('reasoning-delta', 'never output'));
    builder.pushDelta(delta('text-delta', 'b'));
    expect(decoded).toBe(2);
    expect(builder.fold.collect()).toEqual([{ type: 'text', text: 'ab' }]);
    builder.pushEvent({
      type: 'assistant/message',
      time: 6,
      data: { turn: 0, step: 0, message: { id: 'm', role: 'assistant', content: [{ type: 'text', text: 'final' }] } },
    });
    builder.pushDelta(delta('text-delta', 'late'));
    expect(decoded).toBe(2);
    expect(builder.fold.collect()).toEqual([{ type: 'text', text: 'final' }]);
    expect(builder.finish({ endTime: 9, stopReason: 'completed' }).steps).toEqual([
      { turn: 0, step: 0, startTime: 5, endTime: 9 },
    ]);
  });

  it('reads several lines of one buffer and of different buffers, and lets go of them on release', () => {
    const line = (text: string): Buffer =>
      json(
        note('session.event', {
          sessionId: 's9',
          event: event('assistant/chunk', 3, { turn: 1, step: 2, chunk: { type: 'text-delta', index: 0, text } }, 4),
        }),
      );
    const first = Buffer.concat([line('one'), Buffer.from('\n'), line('tw\\"o é')]);
    const reader = new DeltaLineReader();
    const firstEnd = first.indexOf(0x0a);
    expect(reader.read(first, 0, firstEnd)).toBe(true);
    expect([
      reader.sessionId,
      reader.seq,
      reader.time,
      reader.turn,
      reader.step,
      reader.chunkType,
      reader.index,
      reader.text(),
    ]).toEqual(['s9', 4, 3, 1, 2, 'text-delta', 0, 'one']);
    expect(reader.read(first, firstEnd + 1, first.length)).toBe(true);
    expect(reader.text()).toBe('tw\\"o é');
    const second = line('three');
    expect(reader.read(second)).toBe(true);
    expect(reader.text()).toBe('three');
    reader.release();
    expect(() => reader.text()).toThrow(/without a line/);
  });
});
