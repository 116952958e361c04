/**
 * End-to-end tests of the ACP backend: each test spawns the BUILT scripted
 * agent (`node dist/fixtures/acp-agent.js`, written by `npm run build`) as a
 * real child process, drives one prompt turn through `runAcpSubagent`, and
 * asserts the literal result the parent receives. Cancellation is triggered
 * from the listener's `onRunStart` (an event), never after a sleep.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAcpSubagent, type AcpSubagentOptions } from '../../src/backend/acp-backend.js';
import type { RunRecord, RunStart } from '../../src/observe/run-record.js';
import { FIXTURE_ACP_AGENT } from '../helpers/paths.js';

if (!existsSync(FIXTURE_ACP_AGENT))
  throw new Error(`${FIXTURE_ACP_AGENT} is missing: run 'npm run build' (npm test does it first)`);

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

async function delegate(prompt: string, extra: Partial<AcpSubagentOptions> = {}) {
  const starts: RunStart[] = [];
  const ends: RunRecord[] = [];
  const malformed: string[] = [];
  const outcome = await runAcpSubagent({
    command: process.execPath,
    args: [FIXTURE_ACP_AGENT],
    prompt,
    listener: {
      onRunStart: (start) => starts.push(start),
      onRunEnd: (record) => ends.push(record),
      onMalformed: (origin, error) => malformed.push(`${origin} ${error.code}`),
    },
    ...extra,
  });
  return { ...outcome, starts, ends, malformed };
}

describe('runAcpSubagent: scenarios end to end', () => {
  it('returns the streamed text of a completed turn', async () => {
    const run = await delegate('scenario:end_turn');
    expect(run.result).toEqual({ output: [{ type: 'text', text: 'All done.' }], stopReason: 'completed' });
    expect(run.toolResult).toEqual({
      isError: false,
      content: [{ type: 'text', text: 'All done.' }],
      output: [{ type: 'text', text: 'All done.' }],
    });
    expect(run.runEnd).toEqual({
      runId: run.record.runId,
      provider: 'fake-acp-agent',
      id: 'fixture-session-1',
      local: false,
      stopReason: 'completed',
      lastAssistantMessage: [{ type: 'text', text: 'All done.' }],
    });
    expect(run.record).toMatchObject({
      source: 'acp',
      agentName: 'fake-acp-agent',
      sessionId: 'fixture-session-1',
      outputSource: 'stream',
    });
    expect(run.record.usage.reported).toBe(false);
    expect(run.ends).toEqual([run.record]);
    expect(run.malformed).toEqual([]);
  });

  it('returns the partial text of a max-tokens turn as an errored tool result, headline first', async () => {
    const run = await delegate('Find the config', { env: { FAKE_ACP_SCENARIO: 'max-tokens' } });
    expect(run.result).toEqual({
      output: [{ type: 'text', text: 'I found the config file. Reading it now.' }],
      stopReason: 'max-tokens',
    });
    expect(run.toolResult).toEqual({
      isError: true,
      content: [
        {
          type: 'text',
          text: 'Error: subagent run hit its token limit before finishing\nPartial output before the run ended:\nI found the config file. Reading it now.',
        },
      ],
    });
    expect(run.record.usage).toEqual({
      inputTokens: 2510,
      outputTokens: 304,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      reported: true,
    });
    expect(run.record.toolCalls).toMatchObject([{ callId: 'call_1', name: 'read_file', isError: false }]);
  });

  it.each([
    ['refusal', { output: [{ type: 'text', text: 'I can start on that, ' }], stopReason: 'refusal' }],
    [
      'max_turn_requests',
      {
        output: [{ type: 'text', text: 'Step one done.' }],
        stopReason: 'error',
        diagnostic: 'the agent ended the turn with stop reason "max_turn_requests"',
      },
    ],
    ['thoughts', { output: [{ type: 'text', text: 'Visible answer.' }], stopReason: 'completed' }],
    ['v2-idle', { output: [{ type: 'text', text: 'Finished before idle.' }], stopReason: 'completed' }],
    [
      'unknown-stop',
      {
        output: [{ type: 'text', text: 'Paused here.' }],
        stopReason: 'error',
        diagnostic: 'the agent ended the turn with stop reason "paused_for_review"',
      },
    ],
    ['nope', { output: [], stopReason: 'error', diagnostic: 'Invalid params: unknown scenario "nope"' }],
  ])('scenario %s gives the literal result', async (scenario, expected) => {
    const run = await delegate(`scenario:${scenario}`);
    expect(run.result).toEqual(expected);
  });

  it('reports no output for a turn of non-text blocks and a plan', async () => {
    const run = await delegate('scenario:non-text-only');
    expect(run.result).toEqual({ output: [], stopReason: 'completed' });
    expect(run.runEnd).not.toHaveProperty('lastAssistantMessage');
    expect(run.toolResult).toEqual({ isError: false, content: [{ type: 'text', text: '' }], output: [] });
    expect(run.record.outputSource).toBe('none');
  });

  it('carries the traceparent to the agent in _meta and into the run start', async () => {
    const run = await delegate('scenario:end_turn', { traceparent: TRACEPARENT });
    expect(run.starts.map((s) => s.traceparent)).toEqual([TRACEPARENT]);
  });
});

describe('runAcpSubagent: permission requests', () => {
  it('denies by default by selecting the reject option', async () => {
    const run = await delegate('scenario:permission');
    expect(run.result).toEqual({ output: [{ type: 'text', text: 'Permission was denied.' }], stopReason: 'completed' });
    // The rejected call never runs: it ends when the rejection is answered, before the agent reports it failed.
    expect(run.record.toolCalls).toMatchObject([
      {
        callId: 'call_perm',
        name: 'write_file',
        toolType: 'edit',
        isError: true,
        errorType: 'permission_rejected',
        permission: { outcome: 'reject_once', optionId: 'reject' },
      },
    ]);
  });

  it('allows when the policy says allow', async () => {
    const run = await delegate('scenario:permission', { permissionPolicy: 'allow' });
    expect(run.result).toEqual({
      output: [{ type: 'text', text: 'Permission was granted.' }],
      stopReason: 'completed',
    });
    expect(run.record.toolCalls).toMatchObject([
      { callId: 'call_perm', isError: false, permission: { outcome: 'allow_once', optionId: 'allow' } },
    ]);
  });

  it('asks a policy function with the request and uses its outcome', async () => {
    const seen: string[] = [];
    const run = await delegate('scenario:permission', {
      permissionPolicy: (request) => {
        seen.push(`${request.toolCall.toolCallId}: ${request.options.map((o) => o.kind).join(',')}`);
        return { outcome: 'selected', optionId: 'allow' };
      },
    });
    expect(seen).toEqual(['call_perm: allow_once,reject_once']);
    expect(run.result.output).toEqual([{ type: 'text', text: 'Permission was granted.' }]);
  });
});

describe('runAcpSubagent: cancellation and failures', () => {
  it('cancels with session/cancel and returns aborted with the text streamed until the answer', async () => {
    const controller = new AbortController();
    const run = await delegate('scenario:cancelled', {
      signal: controller.signal,
      listener: { onRunStart: () => controller.abort(), onRunEnd: () => undefined },
    });
    expect(run.result).toEqual({
      output: [{ type: 'text', text: 'Starting the long task - stopping now.' }],
      stopReason: 'aborted',
    });
    expect(run.toolResult).toEqual({
      isError: true,
      content: [
        {
          type: 'text',
          text: 'Error: subagent run was cancelled\nPartial output before the run ended:\nStarting the long task - stopping now.',
        },
      ],
    });
  });

  it('returns aborted after a bounded wait when the agent never answers the cancel', async () => {
    const controller = new AbortController();
    const ends: RunRecord[] = [];
    const outcome = await runAcpSubagent({
      command: process.execPath,
      args: [FIXTURE_ACP_AGENT],
      prompt: 'scenario:ignore-cancel',
      signal: controller.signal,
      cancelGraceMs: 300,
      listener: {
        onRunStart: () => controller.abort(),
        onRunEnd: (record) => ends.push(record),
      },
    });
    expect(outcome.result.stopReason).toBe('aborted');
    expect(outcome.result.diagnostic).toBe('the agent did not answer session/cancel within 300 ms');
    // The diagnostic names the grace bound: the run ended there (the agent never answers, so nothing else could end it).
    expect(ends).toHaveLength(1);
  });

  it('does not start the agent when the signal is already aborted', async () => {
    const run = await delegate('scenario:end_turn', { signal: AbortSignal.abort() });
    expect(run.result).toEqual({
      output: [],
      stopReason: 'aborted',
      diagnostic: 'cancelled before the agent was started',
    });
    expect(run.starts).toHaveLength(1);
    expect(run.ends).toEqual([run.record]);
  });

  it('ends a turn whose agent exits mid-turn as error with the partial text and the exit code', async () => {
    const run = await delegate('scenario:crash');
    expect(run.result).toEqual({
      output: [{ type: 'text', text: 'Working on it' }],
      stopReason: 'error',
      diagnostic: 'the agent exited with code 3 before the prompt turn finished',
    });
  });

  it('reports an agent that cannot be started as error, still through the listener', async () => {
    const run = await delegate('scenario:end_turn', { command: '/nonexistent/acp-agent', args: [] });
    expect(run.result).toEqual({
      output: [],
      stopReason: 'error',
      diagnostic: 'the agent could not be run: spawn /nonexistent/acp-agent ENOENT',
    });
    expect(run.ends).toEqual([run.record]);
    expect(run.record.agentName).toBe('acp');
  });

  it('reports an agent that never speaks ACP as error once it exits', async () => {
    const run = await delegate('hello', {
      command: process.execPath,
      args: ['-e', 'console.log("not json"); process.exitCode = 2'],
    });
    expect(run.result).toEqual({
      output: [],
      stopReason: 'error',
      diagnostic: 'the agent exited with code 2 before the prompt turn finished',
    });
    expect(run.malformed).toEqual(['acp not-json']);
  });

  it('reports an agent that refuses its configuration as error with its exit code', async () => {
    const run = await delegate('scenario:end_turn', { env: { FAKE_ACP_SCENARIO: 'bogus' } });
    expect(run.result).toEqual({
      output: [],
      stopReason: 'error',
      diagnostic: 'the agent exited with code 2 before the prompt turn finished',
    });
  });
});

describe('runAcpSubagent: the agent process', () => {
  it("hands the agent's stderr to a callback and lets it write its ready file", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'acp-backend-'));
    try {
      const readyFile = join(dir, 'ready');
      let stderr = '';
      const run = await delegate('scenario:end_turn', {
        env: { FAKE_ACP_STDERR_NOISE: '1', FAKE_ACP_READY_FILE: readyFile },
        stderr: (chunk) => {
          stderr += chunk.toString('utf8');
        },
      });
      expect(run.result.stopReason).toBe('completed');
      expect(readFileSync(readyFile, 'utf8')).toMatch(/^[1-9][0-9]*$/);
      expect(stderr).toBe(
        '[acp-agent fixture] session fixture-session-1: scenario end_turn starting\n' +
          '[acp-agent fixture] warn: scripted agent, no model is called (ünïcödé ✓)\n' +
          '[acp-agent fixture] session fixture-session-1: scenario end_turn ended\n',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('runAcpSubagent: what real agents send (scripted shapes)', () => {
  it('codex output limit: a -32603 with max_output_tokens in data.message is max-tokens, cause kept', async () => {
    const run = await delegate('scenario:codex-output-limit');
    const cause =
      'Internal error: stream disconnected before completion: Incomplete response returned, reason: max_output_tokens';
    expect(run.result).toEqual({
      output: [{ type: 'text', text: 'Here is the first part of a long' }],
      stopReason: 'max-tokens',
      diagnostic: cause,
    });
    expect(run.record).toMatchObject({
      stopReasonInferredFrom: 'codex-acp/max_output_tokens@1',
      rpcError: { code: -32603, message: cause },
      contextWindow: { used: 1217, size: 258400 },
    });
    expect(run.record.usage.reported).toBe(false);
    expect(run.toolResult.isError).toBe(true);
  });

  it('claude output limit: the output-token-maximum error is max-tokens; the cost is the cumulative session cost', async () => {
    const run = await delegate('scenario:claude-output-limit');
    expect(run.result.stopReason).toBe('max-tokens');
    expect(run.record).toMatchObject({
      stopReasonInferredFrom: 'claude-agent-acp/output_token_maximum@1',
      rpcError: { code: -32603 },
      contextWindow: { used: 0, size: 200000 },
      sessionCost: { amount: 0.01566, currency: 'USD' },
    });
  });

  it('gemini quota: usage comes from _meta.quota.token_count', async () => {
    const run = await delegate('scenario:gemini-quota');
    expect(run.result).toEqual({ output: [{ type: 'text', text: 'The answer is 42.' }], stopReason: 'completed' });
    expect([run.record.usage, run.record.usageOrigin]).toEqual([
      {
        inputTokens: 1200,
        outputTokens: 17,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        reported: true,
      },
      'meta-quota',
    ]);
  });

  it('claude tool: the tool is named after _meta.claudeCode.toolName and carries the permission the backend gave', async () => {
    const run = await delegate('scenario:claude-tool', { permissionPolicy: 'allow' });
    expect(run.result.output).toEqual([{ type: 'text', text: 'The tool said: done.' }]);
    expect(run.record.toolCalls).toMatchObject([
      {
        callId: 'toolu_1',
        name: 'Bash',
        title: 'echo done',
        toolType: 'execute',
        isError: false,
        permission: { outcome: 'allow_once', optionId: 'allow' },
      },
    ]);
  });

  it('permission inline: a tool known only from the permission request is recorded, denied or allowed', async () => {
    const denied = await delegate('scenario:permission-inline');
    const allowed = await delegate('scenario:permission-inline', { permissionPolicy: 'allow' });
    expect(denied.record.toolCalls).toMatchObject([
      {
        callId: 'run_shell_command_1',
        title: 'echo done',
        toolType: 'execute',
        isError: true,
        errorType: 'permission_rejected',
        permission: { outcome: 'reject_once', optionId: 'cancel' },
      },
    ]);
    expect(allowed.record.toolCalls).toMatchObject([
      {
        callId: 'run_shell_command_1',
        title: 'echo done',
        isError: false,
        permission: { outcome: 'allow_once', optionId: 'proceed_once' },
      },
    ]);
    expect([denied.record.toolCalls[0]?.name, allowed.record.toolCalls[0]?.name]).toEqual([undefined, undefined]);
    expect([denied.result.output, allowed.result.output]).toEqual([
      [{ type: 'text', text: 'Permission was denied.' }],
      [{ type: 'text', text: 'The tool said: done.' }],
    ]);
  });
});
