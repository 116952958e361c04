/**
 * Telemetry agrees with the result contract. Each scenario of the rule's
 * tests is fed as SDK notification frames through the real tracker into the
 * real SDK; its run span's `subagent.output` must equal the literal expected
 * output, the `SubagentResult.output` that `readResult` gives for the same
 * events, and the `subagent/end` payload's `lastAssistantMessage` (absent
 * exactly when there is no output). A property test repeats the agreement
 * over random runs. Every turn here enters a step, so the live tracker's SDK
 * rule and `readResult`'s in-process rule read the same turn (their tables
 * differ only for `blocked` and turns that did no work: see
 * test/output/stop-reason.test.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readResult, subagentRunEndInfo } from '../../src/output/result.js';
import { SdkTracker } from '../../src/observe/sdk-tracker.js';
import type { SessionEvent } from '../../src/wire/events.js';
import type { ContentBlock } from '../../src/wire/content.js';
import {
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_SUBAGENT_OUTPUT,
  ATTR_SUBAGENT_OUTPUT_SOURCE,
  ATTR_SUBAGENT_REPORTED_OUTPUT_MATCH,
  ATTR_SUBAGENT_STOP_REASON,
  METRIC_SUBAGENT_OUTPUT_MISMATCHES,
} from '../../src/telemetry/semconv.js';
import {
  attempt,
  events,
  finish,
  reasoning,
  reasoningDelta,
  step,
  stepStart,
  text,
  textDelta,
  toolCall,
  toolCallEvent,
  toolDelta,
  toolResultEvent,
  turnEnd,
  turnStart,
  usage,
  type Generation,
} from '../helpers/events.js';
import { telemetryHarness } from '../helpers/telemetry-harness.js';

interface Scenario {
  events: SessionEvent[];
  output: ContentBlock[] | undefined;
  stopReason: string;
  source: string;
  tokens?: [number, number];
}

function scenarios(gen: Generation): Record<string, Scenario> {
  return {
    'empty terminal message after streamed text': {
      events: events([
        turnStart(),
        stepStart(0),
        step(gen, {
          stream: [textDelta('Partial '), textDelta('answer'), finish('max-tokens')],
          content: [],
          usage: usage(100, 4096),
        }),
        turnEnd('max-tokens'),
      ]),
      output: [text('Partial answer')],
      stopReason: 'max-tokens',
      source: 'stream',
      tokens: [100, 4096],
    },
    'multi-step max-tokens turn ending in a tool-only step': {
      events: events([
        turnStart(),
        stepStart(0),
        step(gen, {
          step: 0,
          stream: [textDelta('I will look that up.'), toolDelta('call_1', '{}')],
          content: [text('I will look that up.'), toolCall('call_1')],
          usage: usage(50, 20, { cacheReadTokens: 30 }),
        }),
        toolCallEvent('call_1'),
        toolResultEvent('call_1'),
        step(gen, {
          step: 1,
          stream: [toolDelta('call_2', '{"pa'), finish('max-tokens')],
          content: [],
          usage: usage(80, 4096),
        }),
        turnEnd('max-tokens'),
      ]),
      output: [text('I will look that up.'), toolCall('call_1')],
      stopReason: 'max-tokens',
      source: 'message',
      tokens: [160, 4116],
    },
    'cancelled child whose only text is in an attempt stream': {
      events: events([
        turnStart(),
        stepStart(0),
        attempt(gen, { stream: [textDelta('Working on it')], failure: { message: 'aborted', code: 'aborted' } }),
        turnEnd('aborted'),
      ]),
      output: [text('Working on it')],
      stopReason: 'aborted',
      source: 'stream',
    },
    'reasoning-only message beating streamed text': {
      events: events([
        turnStart(),
        stepStart(0),
        attempt(gen, { step: 0, stream: [textDelta('streamed')] }),
        step(gen, { step: 1, stream: [reasoningDelta('hmm')], content: [reasoning('hmm')] }),
        turnEnd('completed'),
      ]),
      output: [reasoning('hmm')],
      stopReason: 'completed',
      source: 'message',
    },
    'text streamed after a complete message': {
      events: events([
        turnStart(),
        stepStart(0),
        step(gen, { step: 0, content: [text('done')] }),
        attempt(gen, { step: 1, stream: [textDelta('later')] }),
        turnEnd('aborted'),
      ]),
      output: [text('done')],
      stopReason: 'aborted',
      source: 'message',
    },
    'no output at all': {
      events: events([
        turnStart(),
        stepStart(0),
        step(gen, { stream: [reasoningDelta('thinking')], content: [] }),
        turnEnd('completed'),
      ]),
      output: undefined,
      stopReason: 'completed',
      source: 'none',
    },
    'unknown turn-end kind': {
      events: events([turnStart(), stepStart(0), step(gen, { content: [text('x')] }), turnEnd('galaxy-brain')]),
      output: [text('x')],
      stopReason: 'error',
      source: 'message',
    },
  };
}

function observe(evs: readonly SessionEvent[], harness: ReturnType<typeof telemetryHarness>, sessionId = 's1'): void {
  const tracker = new SdkTracker(harness.runs);
  for (const event of evs)
    tracker.observeFrame(
      'agent->client',
      { kind: 'notification', method: 'session.event', params: { sessionId, event } },
      event.time ?? 0,
    );
  tracker.close(Date.now());
}

describe.each<Generation>(['chunk', 'embedded'])('span, result and subagent/end agree (%s generation)', (gen) => {
  it.each(Object.entries(scenarios(gen)))('%s', (_name, scenario) => {
    const harness = telemetryHarness();
    observe(scenario.events, harness);
    const [span, ...more] = harness.runSpans();
    expect(more).toHaveLength(0);
    const attrs = span!.attributes;
    const result = readResult(scenario.events);
    const end = subagentRunEndInfo(
      { runId: 'r', provider: 'p', id: 's1', local: false },
      result.stopReason,
      result.output,
    );

    expect(attrs[ATTR_SUBAGENT_OUTPUT]).toBe(JSON.stringify(scenario.output ?? []));
    expect(JSON.parse(attrs[ATTR_SUBAGENT_OUTPUT] as string)).toEqual(result.output);
    if (scenario.output === undefined) expect('lastAssistantMessage' in end).toBe(false);
    else expect(end.lastAssistantMessage).toEqual(JSON.parse(attrs[ATTR_SUBAGENT_OUTPUT] as string));
    expect(attrs[ATTR_SUBAGENT_STOP_REASON]).toBe(scenario.stopReason);
    expect(result.stopReason).toBe(scenario.stopReason);
    expect(attrs[ATTR_SUBAGENT_OUTPUT_SOURCE]).toBe(scenario.source);
    if (scenario.tokens !== undefined) {
      // The run span carries the run's usage (decision 0071, 2026-12 update); its chat spans carry the same tokens call by call.
      expect([attrs[ATTR_GEN_AI_USAGE_INPUT_TOKENS], attrs[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]]).toEqual(scenario.tokens);
      expect(attrs['subagent.usage.rollup']).toBe(true);
      const chats = harness.spanExporter.getFinishedSpans().filter((s) => s.name.startsWith('chat'));
      const sum = (key: string): number =>
        chats.reduce((total, s) => total + ((s.attributes[key] as number | undefined) ?? 0), 0);
      expect([sum(ATTR_GEN_AI_USAGE_INPUT_TOKENS), sum(ATTR_GEN_AI_USAGE_OUTPUT_TOKENS)]).toEqual(scenario.tokens);
    }
  });
});

describe('a runtime that reports the wrong lastAssistantMessage', () => {
  it('is recorded as a mismatch and counted, while the span keeps the correct output', async () => {
    const harness = telemetryHarness();
    const tracker = new SdkTracker(harness.runs);
    const child = events([
      turnStart(),
      step('embedded', { step: 0, content: [text('Child partial answer.'), toolCall('c1')] }),
      step('embedded', {
        step: 1,
        stream: [toolDelta('c2', '{'), finish('max-tokens')],
        content: [],
        usage: usage(20, 4096),
      }),
      turnEnd('max-tokens'),
    ]);
    tracker.observeFrame(
      'agent->client',
      { kind: 'notification', method: 'subagent.started', params: { parentSessionId: 'p', childSessionId: 'c' } },
      1,
    );
    for (const event of child)
      tracker.observeFrame(
        'agent->client',
        { kind: 'notification', method: 'session.event', params: { sessionId: 'c', event } },
        event.time ?? 0,
      );
    tracker.observeFrame(
      'agent->client',
      {
        kind: 'notification',
        method: 'subagent.finished',
        params: {
          provider: 'deepseek',
          agentId: 'a',
          parentSessionId: 'p',
          childSessionId: 'c',
          status: 'error',
          stopReason: 'max-tokens',
          lastAssistantMessage: [],
        },
      },
      Date.now(),
    );
    const [span] = harness.runSpans();
    expect(span?.attributes[ATTR_SUBAGENT_REPORTED_OUTPUT_MATCH]).toBe(false);
    expect(span?.attributes[ATTR_SUBAGENT_OUTPUT]).toBe(
      '[{"type":"text","text":"Child partial answer."},{"type":"tool-call","id":"c1","name":"read_file","arguments":"{\\"path\\":\\"a.txt\\"}"}]',
    );
    expect(await harness.counter(METRIC_SUBAGENT_OUTPUT_MISMATCHES)).toBe(1);
  });
});

describe('agreement over random runs', () => {
  const chunkArb = fc.oneof(
    fc.string({ maxLength: 5 }).map((t) => textDelta(t)),
    fc.string({ maxLength: 5 }).map((t) => reasoningDelta(t)),
    fc.constant(toolDelta('c', '{')),
  );
  const draftArb = fc.oneof(
    fc
      .record({
        content: fc.array(fc.oneof(fc.string({ maxLength: 4 }).map(text), fc.constant(toolCall('c'))), {
          maxLength: 2,
        }),
        stream: fc.array(chunkArb, { maxLength: 3 }),
      })
      .map((o) => step('embedded', o)),
    fc
      .record({
        content: fc.array(fc.string({ maxLength: 4 }).map(text), { maxLength: 2 }),
        stream: fc.array(chunkArb, { maxLength: 3 }),
      })
      .map((o) => step('chunk', o)),
    fc.array(chunkArb, { maxLength: 3 }).map((stream) => attempt('embedded', { stream })),
  );
  const runArb = fc.record({
    body: fc.array(draftArb, { maxLength: 6 }),
    end: fc.constantFrom('completed', 'max-tokens', 'aborted', 'error'),
  });

  it('the span output always equals readResult and the subagent/end payload', () => {
    fc.assert(
      fc.property(runArb, ({ body, end }) => {
        // A step makes the turn account for work, so the SDK rule (span) and the in-process rule (readResult) read the same turn.
        const evs = events([turnStart(), stepStart(0), ...body, turnEnd(end)]);
        const harness = telemetryHarness();
        observe(evs, harness);
        const [span] = harness.runSpans();
        const result = readResult(evs);
        const runEnd = subagentRunEndInfo(
          { runId: 'r', provider: 'p', id: 's1', local: false },
          result.stopReason,
          result.output,
        );
        expect(span?.attributes[ATTR_SUBAGENT_OUTPUT]).toBe(JSON.stringify(result.output));
        expect(span?.attributes[ATTR_SUBAGENT_STOP_REASON]).toBe(result.stopReason);
        expect(runEnd.lastAssistantMessage ?? []).toEqual(result.output);
        expect('lastAssistantMessage' in runEnd).toBe(result.output.length > 0);
      }),
      { numRuns: 500 },
    );
  });
});
