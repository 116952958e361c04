/**
 * The tracker and the telemetry over the frames real ACP agents sent
 * (claude-agent-acp 0.23.1, codex-acp 0.16.0, gemini-cli 0.61.0; see
 * `real-agent-captures/README.md`): stop reasons (reported and inferred from
 * truncation signatures), usage from every shape, errors and tool calls.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { AcpTracker } from '../../src/observe/acp-tracker.js';
import type { Direction } from '../../src/observe/frame-observer.js';
import type { RunRecord } from '../../src/observe/run-record.js';
import type { JsonRpcFrame } from '../../src/wire/jsonrpc.js';
import { classifyFrame } from '../../src/wire/jsonrpc.js';
import { telemetryHarness } from '../helpers/telemetry-harness.js';
import { ROOT } from '../helpers/paths.js';

const CAPTURES = join(ROOT, 'test', 'observe', 'real-agent-captures');

function frames(name: string): [Direction, JsonRpcFrame][] {
  const lines = readFileSync(join(CAPTURES, `${name}.ndjson`), 'utf8')
    .split('\n')
    .filter((line) => line !== '');
  return lines.map((line) => {
    const entry = JSON.parse(line) as { dir: Direction; frame: unknown };
    const parsed = classifyFrame(entry.frame);
    if (!parsed.ok) throw new Error(`${name}: unreadable frame ${line}`);
    return [entry.dir, parsed.frame];
  });
}

/** Replays one capture (frame i at time 1000 + i) and returns the runs it produced. */
function replay(
  name: string,
  listener?: { onRunStart: (s: never) => void; onRunEnd: (r: RunRecord) => void },
): RunRecord[] {
  const ends: RunRecord[] = [];
  const malformed: string[] = [];
  const tracker = new AcpTracker(
    {
      onRunStart: (start) => listener?.onRunStart(start as never),
      onRunEnd: (record) => {
        ends.push(record);
        listener?.onRunEnd(record);
      },
      onMalformed: (_origin, error) => malformed.push(error.message),
    },
    { newRunId: () => `run-${ends.length + 1}` },
  );
  frames(name).forEach(([direction, frame], i) => tracker.observeFrame(direction, frame, 1000 + i));
  expect(malformed).toEqual([]);
  return ends;
}

const text = (record: RunRecord | undefined): string | undefined =>
  record?.output?.map((block) => (block.type === 'text' ? (block as { text: string }).text : '')).join('');

const PARTIAL = 'Here is the first part of a long';

describe('real agents: stop reasons', () => {
  it.each([
    ['claude-normal', 'completed', undefined, 'The answer is 42.'],
    ['codex-normal', 'completed', undefined, 'The answer is 42.'],
    ['gemini-normal', 'completed', undefined, 'The answer is 42.'],
    // claude retries a truncated answer three times by itself, streaming each attempt, then fails the turn.
    ['claude-max-tokens', 'max-tokens', 'claude-agent-acp/output_token_maximum@1', PARTIAL.repeat(4)],
    ['codex-max-tokens', 'max-tokens', 'codex-acp/max_output_tokens@1', PARTIAL],
    // gemini-cli answers end_turn and leaves no trace of MAX_TOKENS: nothing to infer from.
    ['gemini-max-tokens', 'completed', undefined, PARTIAL],
    ['claude-limit-once', 'completed', undefined, `${PARTIAL}Continuing: the rest of the answer.`],
    ['gemini-limit-once', 'completed', undefined, PARTIAL],
  ])('%s ends %s (inferred from %s)', (capture, stopReason, inferredFrom, output) => {
    const runs = replay(capture);
    expect(runs.map((r) => [r.stopReason, r.stopReasonInferredFrom, text(r)])).toEqual([
      [stopReason, inferredFrom, output],
    ]);
  });

  it('codex limit-once: the truncated turn is max-tokens, the "continue" turn after it completes', () => {
    const runs = replay('codex-limit-once');
    expect(runs.map((r) => [r.stopReason, r.stopReasonInferredFrom ?? null, text(r)])).toEqual([
      ['max-tokens', 'codex-acp/max_output_tokens@1', PARTIAL],
      ['completed', null, 'Continuing: the rest of the answer.'],
    ]);
  });
});

describe('real agents: errors', () => {
  it.each([
    [
      'claude-max-tokens',
      -32603,
      "Internal error: API Error: Claude's response exceeded the 32000 output token maximum. To configure this behavior, set the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable.",
    ],
    [
      'codex-max-tokens',
      -32603,
      'Internal error: stream disconnected before completion: Incomplete response returned, reason: max_output_tokens',
    ],
    ['claude-auth-fail', -32603, 'Internal error: Invalid API key · Fix external API key'],
    [
      'codex-auth-fail',
      -32603,
      'Internal error: unexpected status 401 Unauthorized: Incorrect API key provided: dummy., url: http://127.0.0.1:42803/v1/responses',
    ],
    [
      'gemini-auth-fail',
      401,
      '{"error":{"code":401,"message":"API key not valid. Please pass a valid API key.","status":"UNAUTHENTICATED"}}',
    ],
  ])('%s records JSON-RPC error %i with its cause', (capture, code, message) => {
    const [run] = replay(capture);
    expect(run?.rpcError).toEqual({ code, message });
    expect(run?.diagnostic).toBe(message);
  });

  it('an authentication failure matches no truncation signature: it stays error', () => {
    expect(['claude-auth-fail', 'codex-auth-fail', 'gemini-auth-fail'].map((c) => replay(c)[0]?.stopReason)).toEqual([
      'error',
      'error',
      'error',
    ]);
  });
});

describe('real agents: usage', () => {
  const NONE = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    reported: false,
  };
  it.each([
    // claude: PromptResponse usage (reset every prompt), usage_update = context window + cumulative cost.
    [
      'claude-normal',
      {
        inputTokens: 1200,
        outputTokens: 17,
        cacheReadTokens: 200,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        reported: true,
      },
      'prompt-response',
      { used: 1401, size: 200000 },
      { amount: 0.003915, currency: 'USD' },
    ],
    [
      'claude-tool',
      {
        inputTokens: 2400,
        outputTokens: 34,
        cacheReadTokens: 400,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        reported: true,
      },
      'prompt-response',
      { used: 1401, size: 200000 },
      { amount: 0.00783, currency: 'USD' },
    ],
    ['claude-max-tokens', NONE, undefined, { used: 0, size: 200000 }, { amount: 0.01566, currency: 'USD' }],
    // codex: only usage_update, a context-window figure: no tokens are invented from it.
    ['codex-normal', NONE, undefined, { used: 1217, size: 258400 }, undefined],
    ['codex-tool', NONE, undefined, { used: 1217, size: 258400 }, undefined],
    // gemini: the turn's counts in _meta.quota.token_count.
    [
      'gemini-normal',
      {
        inputTokens: 1200,
        outputTokens: 17,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        reported: true,
      },
      'meta-quota',
      undefined,
      undefined,
    ],
    [
      'gemini-tool',
      {
        inputTokens: 2400,
        outputTokens: 34,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        reported: true,
      },
      'meta-quota',
      undefined,
      undefined,
    ],
  ])('%s', (capture, usage, origin, contextWindow, cost) => {
    const [run] = replay(capture);
    expect(run?.usage).toEqual(usage);
    expect([run?.usageOrigin, run?.contextWindow, run?.sessionCost]).toEqual([origin, contextWindow, cost]);
  });
});

describe('real agents: two turns of one session', () => {
  it('claude: usage is per turn (it resets every prompt); the usage_update cost is cumulative over the session', () => {
    const runs = replay('claude-normal-two-turns');
    expect(
      runs.map((r) => [
        r.sessionId === runs[0]?.sessionId,
        r.usage.inputTokens,
        r.usage.outputTokens,
        r.usageOrigin,
        r.sessionCost,
      ]),
    ).toEqual([
      [true, 1200, 17, 'prompt-response', { amount: 0.003915, currency: 'USD' }],
      [true, 1200, 17, 'prompt-response', { amount: 0.00783, currency: 'USD' }],
    ]);
  });

  it('claude: the turn after a truncated one is answered at once, empty, with zero usage', () => {
    const runs = replay('claude-max-tokens-then-continue');
    expect(
      runs.map((r) => [
        r.stopReason,
        r.stopReasonInferredFrom ?? null,
        r.outputSource,
        r.usage.reported,
        r.usage.inputTokens,
      ]),
    ).toEqual([
      ['max-tokens', 'claude-agent-acp/output_token_maximum@1', 'stream', false, 0],
      ['completed', null, 'none', true, 0],
    ]);
  });
});

describe('real agents: tool calls', () => {
  it("claude: the agent's own tool name from _meta, the kind, the latest title and the permission answer", () => {
    const [run] = replay('claude-tool');
    expect(run?.toolCalls).toEqual([
      {
        callId: 'toolu_fixture_14',
        name: 'Bash',
        title: 'echo tool-ran | tee tool-ran.txt',
        toolType: 'execute',
        startTime: 1006,
        endTime: 1011,
        isError: false,
        permission: { outcome: 'allow_once', optionId: 'allow' },
      },
    ]);
  });

  it('codex: the tool first seen inside session/request_permission starts there and ends on its update', () => {
    const [run] = replay('codex-tool');
    expect(run?.toolCalls).toEqual([
      {
        callId: 'call_fixture_6',
        title: 'echo tool-ran | tee tool-ran.txt',
        toolType: 'execute',
        startTime: 1006,
        endTime: 1009,
        isError: false,
        permission: { outcome: 'allow_once', optionId: 'approved' },
      },
    ]);
  });

  it('gemini: a tool announced only in session/request_permission still gets its record', () => {
    const [run] = replay('gemini-tool');
    expect(run?.toolCalls).toEqual([
      {
        callId: 'run_shell_command__run_shell_command_1796064973356_0',
        title: 'echo tool-ran | tee tool-ran.txt',
        toolType: 'execute',
        startTime: 1006,
        endTime: 1008,
        isError: false,
        permission: { outcome: 'allow_once', optionId: 'proceed_once' },
      },
    ]);
  });
});

describe('real agents: spans', () => {
  it('codex max-tokens: a max-tokens span naming the signature, with the error code and cause', () => {
    const harness = telemetryHarness();
    replay('codex-max-tokens', harness.runs);
    const [span] = harness.runSpans();
    expect(span?.attributes).toMatchObject({
      'subagent.stop_reason': 'max-tokens',
      'subagent.stop_reason.inferred_from': 'codex-acp/max_output_tokens@1',
      'gen_ai.response.finish_reasons': ['length'],
      'error.type': 'max-tokens',
      'subagent.error.code': -32603,
      'subagent.error.message':
        'Internal error: stream disconnected before completion: Incomplete response returned, reason: max_output_tokens',
    });
    expect(span?.status).toEqual({
      code: SpanStatusCode.ERROR,
      message:
        'stop reason: max-tokens; JSON-RPC error -32603: Internal error: stream disconnected before completion: Incomplete response returned, reason: max_output_tokens',
    });
  });

  it("claude tool: gen_ai.tool.name is the agent's name, the kind and title and permission ride along", () => {
    const harness = telemetryHarness();
    replay('claude-tool', harness.runs);
    const tool = harness.spanExporter.getFinishedSpans().find((s) => s.name.startsWith('execute_tool'));
    expect(tool?.name).toBe('execute_tool Bash');
    expect(tool?.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'Bash',
      'gen_ai.tool.call.id': 'toolu_fixture_14',
      'gen_ai.tool.type': 'execute',
      'subagent.tool.title': 'echo tool-ran | tee tool-ran.txt',
      'subagent.tool.permission.outcome': 'allow_once',
      'subagent.tool.permission.option_id': 'allow',
      'gen_ai.agent.name': '@zed-industries/claude-agent-acp', // the run's agent name; v0.1.0 names the agent on tool spans (#322, decision 0121)
    });
    const [run] = harness.runSpans();
    expect(run?.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 2800,
      'gen_ai.usage.output_tokens': 34,
      'subagent.usage.origin': 'prompt-response',
      'subagent.context_window.used': 1401,
      'subagent.context_window.size': 200000,
      'subagent.session.cumulative_cost.amount': 0.00783,
      'subagent.session.cumulative_cost.currency': 'USD',
    });
  });

  it('codex normal: the context window is recorded, no token usage is', () => {
    const harness = telemetryHarness();
    replay('codex-normal', harness.runs);
    const [span] = harness.runSpans();
    expect(span?.attributes['subagent.context_window.used']).toBe(1217);
    expect(span?.attributes['gen_ai.usage.input_tokens']).toBeUndefined();
    expect(span?.attributes['gen_ai.usage.output_tokens']).toBeUndefined();
    expect(span?.attributes['subagent.usage.origin']).toBeUndefined();
  });
});
