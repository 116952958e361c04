/**
 * The assertions every real-agent test file makes, parameterised by what
 * that agent is expected to do (literal expectations live in the test files):
 * the proxied client view equals the direct one, the agent's own answers are
 * as recorded, and each turn's `invoke_agent` span carries the client's text
 * as output, the (possibly inferred) stop reason, usage, the error cause,
 * and the tool span.
 *
 * @module subagent-otel/test/agents/real-agent-expectations
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { attributes, type OtlpSpan } from '../helpers/cli.js';
import type { Turn } from './acp-driver.js';
import { requireAgent, type AgentName } from './agents.js';
import { SCENARIOS, type Scenario } from './model-server.js';
import {
  clientView,
  framesView,
  normalised,
  outputOf,
  playAgent,
  runSpans,
  toolSpans,
  turnsOf,
  type AgentPlay,
} from './real-agent-suite.js';
import {
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_SUBAGENT_OUTPUT,
  ATTR_SUBAGENT_OUTPUT_SOURCE,
  ATTR_SUBAGENT_STOP_REASON,
} from '../../src/telemetry/semconv.js';

/**
 * Attribute names the ACP tracker work of issue 13 adds to the observer's
 * `src/telemetry/semconv.ts` (developed beside these tests); import them
 * from there once both are in.
 */
const NEW = {
  INFERRED_FROM: 'subagent.stop_reason.inferred_from',
  USAGE_ORIGIN: 'subagent.usage.origin',
  CONTEXT_WINDOW_USED: 'subagent.context_window.used',
  CONTEXT_WINDOW_SIZE: 'subagent.context_window.size',
  ERROR_CODE: 'subagent.error.code',
  ERROR_MESSAGE: 'subagent.error.message',
  TOOL_TYPE: 'gen_ai.tool.type',
  TOOL_TITLE: 'subagent.tool.title',
  TOOL_PERMISSION_OUTCOME: 'subagent.tool.permission.outcome',
  TOOL_PERMISSION_OPTION_ID: 'subagent.tool.permission.option_id',
} as const;

/** Usage the span must carry: token counts, or none at all. */
export type UsageExpectation = { input: number; output: number; cacheRead?: number; origin: string } | 'none';

/** What one turn must look like, to the client and on its span. */
export interface TurnExpectation {
  /** The text the client received. */
  readonly text: string;
  /** The agent's answer: a stop reason, or a JSON-RPC error code with a fragment of its text. */
  readonly answer: { stopReason: string } | { errorCode: number; errorIncludes: string };
  readonly span: {
    readonly stopReason: string;
    /** `subagent.stop_reason.inferred_from`, or absent. */
    readonly inferredFrom?: string;
    readonly usage: UsageExpectation;
    /** For failed turns: fragment of `subagent.error.message` and of the status description. */
    readonly errorIncludes?: string;
  };
  /** The tool spans under this turn's span (empty when none). */
  readonly tools?: readonly ToolExpectation[];
}

/** One `execute_tool` span. */
export interface ToolExpectation {
  /** The agent's own tool name, or `undefined` when it names none (a title is never a name). */
  readonly name: string | undefined;
  readonly type: string;
  readonly title: string;
  readonly permissionOutcome: string;
  readonly permissionOptionId: string;
}

/** Per scenario, one expectation per turn it plays (`turnsOf`: the prompt, and for `limit-once` the follow-up). */
export type AgentExpectations = Record<Scenario, readonly TurnExpectation[]>;

const TURN_NAMES = ['prompt', 'follow-up'] as const;

/** The text of a JSON-RPC error as an agent spreads it over `message` and `data.message`. */
function errorText(turn: Turn): string {
  const data = turn.error?.data as { message?: unknown } | undefined;
  return `${turn.error?.message ?? ''} ${typeof data?.message === 'string' ? data.message : ''}`;
}

/** The last `usage_update` of a turn, as the client saw it. */
function lastUsageUpdate(turn: Turn): { used: number; size: number } | undefined {
  const updates = turn.updates
    .map((u) => (u as { update: { sessionUpdate: string; used?: number; size?: number } }).update)
    .filter((u) => u.sessionUpdate === 'usage_update');
  const last = updates.at(-1);
  return last !== undefined && typeof last.used === 'number' && typeof last.size === 'number'
    ? { used: last.used, size: last.size }
    : undefined;
}

/** Tool call ids the client saw in a turn (tool_call notifications and permission requests). */
function toolCallIds(turn: Turn): string[] {
  const ids = new Set<string>();
  for (const p of turn.permissions) ids.add((p as { toolCall: { toolCallId: string } }).toolCall.toolCallId);
  for (const u of turn.updates) {
    const update = (u as { update: { sessionUpdate: string; toolCallId?: string } }).update;
    if (
      (update.sessionUpdate === 'tool_call' || update.sessionUpdate === 'tool_call_update') &&
      update.toolCallId !== undefined
    )
      ids.add(update.toolCallId);
  }
  return [...ids];
}

/**
 * Declares the whole test suite of one agent: plays it once (beforeAll),
 * then one test per scenario for the client view and one per scenario turn
 * for the agent's answer and the span.
 */
export function describeRealAgent(agent: AgentName, expected: AgentExpectations): void {
  // Counted as a failed test (not only a failed hook) when the agents are missing; the message names the install command.
  it(`${agent} is installed in test/agents/pinned`, () => {
    expect(requireAgent(agent)).toMatch(/node_modules/);
  });

  describe(`${agent} as a real ACP agent, direct and through subagent-otel proxy`, () => {
    let play: AgentPlay;
    beforeAll(async () => {
      play = await playAgent(agent);
    }, 240_000);

    it('initializes the same way through the proxy and is torn down by the client', () => {
      expect(play.proxied.initialize).toEqual(play.direct.initialize);
      expect(framesView(play.proxied.initFrames)).toEqual(framesView(play.direct.initFrames));
      // Connection-level notifications race the first session/new (framesView leaves them out): compared here, all of them.
      expect(normalised(play.proxied.connectionNotifications)).toEqual(normalised(play.direct.connectionNotifications));
      expect(play.proxied.exit).toEqual(play.direct.exit);
    });

    it('asks the model server the same through the proxy', () => {
      const summary = (r: (typeof play.direct.modelRequests)[number]): string =>
        `${r.dialect} ${r.scenario ?? '-'} ${r.answered}`;
      // The turns' own requests, in order. Side requests (titles, checks) are the agent's background work:
      // they race the turns, and whether some are made at all depends on timing (codex's, claude's titles).
      const main = (view: typeof play.direct): string[] =>
        view.modelRequests.filter((r) => r.answered !== 'side').map(summary);
      expect(main(play.proxied)).toEqual(main(play.direct));
      expect(main(play.direct).length).toBeGreaterThan(0);
    });

    it.each(SCENARIOS)('gives the client exactly the same turns through the proxy (%s)', (scenario) => {
      const direct = play.direct.scenarios[scenario];
      const proxied = play.proxied.scenarios[scenario];
      expect(framesView(proxied.sessionFrames)).toEqual(framesView(direct.sessionFrames));
      expect(proxied.turns.map(clientView)).toEqual(direct.turns.map(clientView));
      expect(direct.turns).toHaveLength(turnsOf(scenario));
    });

    for (const scenario of SCENARIOS) {
      it(`has one expectation per turn of ${scenario}`, () => {
        expect(expected[scenario]).toHaveLength(turnsOf(scenario));
      });
      for (const [index, want] of expected[scenario].entries()) {
        describe(`${scenario}, ${TURN_NAMES[index] ?? `turn ${index + 1}`} turn`, () => {
          let turn: Turn;
          let run: OtlpSpan;
          beforeAll(() => {
            const played = play.proxied.scenarios[scenario].turns[index];
            if (played === undefined) throw new Error(`${scenario} played no turn ${index + 1}`);
            turn = played;
            const runs = runSpans(play.spans, played.sessionId);
            expect(runs).toHaveLength(1);
            run = runs[0]!;
          });

          it('answers the client as recorded', () => {
            expect(turn.text).toBe(want.text);
            if ('stopReason' in want.answer) {
              expect(turn.error).toBeUndefined();
              expect((turn.response as { stopReason?: unknown }).stopReason).toBe(want.answer.stopReason);
            } else {
              expect(turn.error?.code).toBe(want.answer.errorCode);
              expect(errorText(turn)).toContain(want.answer.errorIncludes);
            }
          });

          it("records the client's text as the span output", () => {
            const attrs = attributes(run);
            if (turn.text === '') {
              expect(attrs[ATTR_SUBAGENT_OUTPUT_SOURCE]).toBe('none');
              expect(attrs[ATTR_SUBAGENT_OUTPUT]).toBe('[]');
            } else {
              expect(attrs[ATTR_SUBAGENT_OUTPUT]).toBe(outputOf(turn.text));
            }
          });

          it(`records stop reason ${want.span.stopReason}${want.span.inferredFrom !== undefined ? ' (inferred)' : ''}`, () => {
            const attrs = attributes(run);
            expect(attrs[ATTR_SUBAGENT_STOP_REASON]).toBe(want.span.stopReason);
            expect(attrs[NEW.INFERRED_FROM]).toBe(want.span.inferredFrom);
            expect(run.status?.code ?? 0).toBe(want.span.stopReason === 'completed' ? 0 : 2);
          });

          it('records usage as the agent reported it, and the context window as what it is', () => {
            const attrs = attributes(run);
            if (want.span.usage === 'none') {
              expect(attrs[ATTR_GEN_AI_USAGE_INPUT_TOKENS]).toBeUndefined();
              expect(attrs[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]).toBeUndefined();
            } else {
              expect(attrs[ATTR_GEN_AI_USAGE_INPUT_TOKENS]).toBe(want.span.usage.input);
              expect(attrs[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]).toBe(want.span.usage.output);
              expect(attrs[ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]).toBe(want.span.usage.cacheRead);
              expect(attrs[NEW.USAGE_ORIGIN]).toBe(want.span.usage.origin);
            }
            const window = lastUsageUpdate(turn);
            expect(attrs[NEW.CONTEXT_WINDOW_USED]).toBe(window?.used);
            expect(attrs[NEW.CONTEXT_WINDOW_SIZE]).toBe(window?.size);
          });

          it('records the error cause on the span', () => {
            const attrs = attributes(run);
            if (turn.error === undefined) {
              expect(attrs[NEW.ERROR_CODE]).toBeUndefined();
              expect(want.span.errorIncludes).toBeUndefined();
              return;
            }
            expect(attrs[NEW.ERROR_CODE]).toBe(turn.error.code);
            expect(attrs[NEW.ERROR_MESSAGE]).toContain(want.span.errorIncludes);
            expect(run.status?.message).toContain(want.span.errorIncludes);
          });

          it('records one tool span per tool the agent ran, under the run', () => {
            const tools = toolSpans(play.spans, run);
            const wantTools = want.tools ?? [];
            expect(tools.map((t) => attributes(t)[ATTR_GEN_AI_TOOL_CALL_ID])).toEqual(toolCallIds(turn));
            expect(
              tools.map((t) => {
                const a = attributes(t);
                return {
                  name: a[ATTR_GEN_AI_TOOL_NAME],
                  type: a[NEW.TOOL_TYPE],
                  title: a[NEW.TOOL_TITLE],
                  permissionOutcome: a[NEW.TOOL_PERMISSION_OUTCOME],
                  permissionOptionId: a[NEW.TOOL_PERMISSION_OPTION_ID],
                };
              }),
            ).toEqual(wantTools);
            for (const t of tools) expect(t.status?.code ?? 0).toBe(0);
          });
        });
      }
    }
  });
}
