/**
 * The ACP attributes on real spans (in-memory SDK pipeline): the agent's
 * failure bounded and redacted, the inferred stop reason, the context window
 * and cumulative cost, and the tool attributes.
 */
import { SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/observe/run-record.js';
import type { ContentPolicy } from '../../src/telemetry/content-policy.js';
import { ERROR_MESSAGE_MAX_LENGTH, recordableErrorMessage } from '../../src/telemetry/acp-attributes.js';
import { telemetryHarness } from '../helpers/telemetry-harness.js';

function record(overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    runId: 'run-1',
    source: 'acp',
    agentName: 'codex-acp',
    sessionId: 's1',
    startTime: Date.UTC(2026, 10, 30, 12, 0, 0),
    endTime: Date.UTC(2026, 10, 30, 12, 0, 2),
    stopReason: 'error',
    output: [{ type: 'text', text: 'partial' }],
    outputSource: 'stream',
    emptyMessages: 0,
    usage: {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      reported: false,
    },
    steps: [],
    toolCalls: [],
    ...overrides,
  };
}

function endOne(run: RunRecord, content: ContentPolicy = { capture: true }) {
  const harness = telemetryHarness(content);
  harness.runs.onRunEnd(run);
  const spans = harness.spanExporter.getFinishedSpans();
  return {
    run: spans.find((s) => s.name.startsWith('invoke_agent')),
    tools: spans.filter((s) => s.name.startsWith('execute_tool')),
  };
}

const AUTH = {
  code: -32603,
  message: 'Internal error: unexpected status 401 Unauthorized: Incorrect API key provided: sk-secret-123',
};

describe('the agent failure on the run span', () => {
  it('sets subagent.error.code and .message and puts both in the status description', () => {
    const { run } = endOne(record({ rpcError: AUTH }));
    expect(run?.attributes['subagent.error.code']).toBe(-32603);
    expect(run?.attributes['subagent.error.message']).toBe(AUTH.message);
    expect(run?.attributes['error.type']).toBe('error');
    expect(run?.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: `stop reason: error; JSON-RPC error -32603: ${AUTH.message}`,
    });
  });

  it('passes the message through the redaction hook first', () => {
    const redact = (json: string): string => json.replace(/sk-[a-z0-9-]+/g, '[key]');
    const { run } = endOne(record({ rpcError: AUTH }), { capture: true, redact });
    const expected = 'Internal error: unexpected status 401 Unauthorized: Incorrect API key provided: [key]';
    expect(run?.attributes['subagent.error.message']).toBe(expected);
    expect(run?.status.message).toBe(`stop reason: error; JSON-RPC error -32603: ${expected}`);
  });

  it('keeps only the code when capture is off or the hook fails', () => {
    const off = endOne(record({ rpcError: AUTH }), { capture: false }).run;
    const broken = endOne(record({ rpcError: AUTH }), {
      capture: true,
      redact: () => {
        throw new Error('hook down');
      },
    }).run;
    const notArray = endOne(record({ rpcError: AUTH }), { capture: true, redact: () => '{"text":"x"}' }).run;
    for (const span of [off, broken, notArray]) {
      expect(span?.attributes['subagent.error.code']).toBe(-32603);
      expect(span?.attributes['subagent.error.message']).toBeUndefined();
      expect(span?.status.message).toBe('stop reason: error; JSON-RPC error -32603');
    }
  });

  it('bounds the message by the content policy length and by its own cap', () => {
    expect(recordableErrorMessage('abcdefghijklmnopqrstuvwxyz', { capture: true, maxLength: 20 })).toBe(
      'abcdef...[truncated]',
    );
    const long = recordableErrorMessage('x'.repeat(5000), { capture: true });
    expect(long?.length).toBe(ERROR_MESSAGE_MAX_LENGTH);
    expect(long?.endsWith('x...[truncated]')).toBe(true);
    expect(recordableErrorMessage(`${'a'.repeat(5)}😀${'x'.repeat(30)}`, { capture: true, maxLength: 20 })).toBe(
      'aaaaa...[truncated]',
    );
  });

  it('names the truncation signature on a max-tokens run and keeps the cause', () => {
    const { run } = endOne(
      record({
        stopReason: 'max-tokens',
        stopReasonInferredFrom: 'codex-acp/max_output_tokens@1',
        rpcError: { code: -32603, message: 'Internal error: Incomplete response returned, reason: max_output_tokens' },
      }),
    );
    expect(run?.attributes).toMatchObject({
      'subagent.stop_reason': 'max-tokens',
      'subagent.stop_reason.inferred_from': 'codex-acp/max_output_tokens@1',
      'gen_ai.response.finish_reasons': ['length'],
      'subagent.error.code': -32603,
    });
  });

  it('adds nothing to a run without ACP fields', () => {
    const { run } = endOne(record({ stopReason: 'refusal' }));
    const keys = Object.keys(run?.attributes ?? {}).filter((k) =>
      /^subagent\.(error|context_window|session|usage\.origin|stop_reason\.)/.test(k),
    );
    expect(keys).toEqual([]);
    expect(run?.status.message).toBe('stop reason: refusal');
  });
});

describe('the run diagnostic on the run span', () => {
  const EXIT = 'agent exited with code 3 before answering';
  const API = 'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}';

  it('carries SubagentResult.diagnostic whole and says it in the status of a failed run', () => {
    const { run } = endOne(record({ source: 'acp', diagnostic: EXIT }));
    expect(run?.attributes['subagent.diagnostic']).toBe(EXIT);
    expect(run?.status).toEqual({ code: SpanStatusCode.ERROR, message: `stop reason: error; ${EXIT}` });
    const transcript = endOne(record({ source: 'claude-code', stopReason: 'error', diagnostic: API })).run;
    expect(transcript?.attributes['subagent.diagnostic']).toBe(API);
    expect(transcript?.status.message).toBe(`stop reason: error; ${API}`);
  });

  it('keeps a 4096-byte diagnostic whole on the attribute and bounds the status to 1024', () => {
    const long = 'é'.repeat(2048); // 4096 UTF-8 bytes, the result's cap
    const { run } = endOne(record({ diagnostic: long }));
    expect(run?.attributes['subagent.diagnostic']).toBe(long);
    const status = run?.status.message ?? '';
    expect(status.startsWith('stop reason: error; éé')).toBe(true);
    expect(status.length).toBe('stop reason: error; '.length + ERROR_MESSAGE_MAX_LENGTH);
    expect(status.endsWith('...[truncated]')).toBe(true);
  });

  it('is said once beside a JSON-RPC error, whose text the status already holds', () => {
    const { run } = endOne(record({ rpcError: AUTH, diagnostic: AUTH.message }));
    expect(run?.attributes['subagent.diagnostic']).toBe(AUTH.message);
    expect(run?.status.message).toBe(`stop reason: error; JSON-RPC error -32603: ${AUTH.message}`);
  });

  it('goes through the redaction hook, and is left out with capture off or a failing hook', () => {
    const redact = (json: string): string => json.replace(/sk-[a-z0-9-]+/g, '[key]');
    const redacted = endOne(record({ diagnostic: 'bad key sk-secret-123' }), { capture: true, redact }).run;
    expect(redacted?.attributes['subagent.diagnostic']).toBe('bad key [key]');
    expect(redacted?.status.message).toBe('stop reason: error; bad key [key]');
    const hidden = [
      endOne(record({ diagnostic: 'bad key sk-secret-123' }), { capture: false }).run,
      endOne(record({ diagnostic: 'bad key sk-secret-123' }), { capture: true, redact: () => 'not json' }).run,
    ];
    for (const span of hidden) {
      expect(span?.attributes['subagent.diagnostic']).toBeUndefined();
      expect(span?.status.message).toBe('stop reason: error');
    }
  });

  it('rides on a max-tokens run too, whose status stays an error', () => {
    const text = "API Error: Claude's response exceeded the 32000 output token maximum.";
    const { run } = endOne(record({ source: 'claude-code', stopReason: 'max-tokens', diagnostic: text }));
    expect(run?.attributes['subagent.diagnostic']).toBe(text);
    expect(run?.status.message).toBe(`stop reason: max-tokens; ${text}`);
  });

  it('adds nothing to a completed run without a diagnostic', () => {
    const { run } = endOne(record({ stopReason: 'completed' }));
    expect(run?.attributes['subagent.diagnostic']).toBeUndefined();
    expect(run?.status.code).toBe(SpanStatusCode.UNSET);
  });
});

describe('usage figures on the run span', () => {
  it('records the context window and the cumulative session cost as their own attributes', () => {
    const { run } = endOne(
      record({
        stopReason: 'completed',
        usage: {
          inputTokens: 1200,
          outputTokens: 17,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          reasoningTokens: 0,
          reported: true,
        },
        usageOrigin: 'meta-quota',
        contextWindow: { used: 1401, size: 200000 },
        sessionCost: { amount: 0.003915, currency: 'USD' },
      }),
    );
    expect(run?.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 1200,
      'gen_ai.usage.output_tokens': 17,
      'subagent.usage.origin': 'meta-quota',
      'subagent.context_window.used': 1401,
      'subagent.context_window.size': 200000,
      'subagent.session.cumulative_cost.amount': 0.003915,
      'subagent.session.cumulative_cost.currency': 'USD',
    });
  });
});

describe('session totals that could not be made per-run', () => {
  it('are recorded as cumulative session usage, never as gen_ai.usage', () => {
    const { run } = endOne(
      record({ stopReason: 'completed', sessionUsageTotals: { inputTokens: 9000, outputTokens: 400 } }),
    );
    expect(run?.attributes['subagent.session.cumulative_usage.input_tokens']).toBe(9000);
    expect(run?.attributes['subagent.session.cumulative_usage.output_tokens']).toBe(400);
    expect(run?.attributes['gen_ai.usage.input_tokens']).toBeUndefined();
  });
});

describe('tool spans', () => {
  it('carry the ACP kind as gen_ai.tool.type, the title, and the permission outcome', () => {
    const { tools } = endOne(
      record({
        stopReason: 'completed',
        toolCalls: [
          {
            callId: 'c1',
            name: 'Bash',
            title: 'ls -la',
            toolType: 'execute',
            startTime: Date.UTC(2026, 10, 30, 12, 0, 0),
            endTime: Date.UTC(2026, 10, 30, 12, 0, 1),
            isError: false,
            permission: { outcome: 'allow_once', optionId: 'allow' },
          },
          {
            callId: 'c2',
            name: 'Write notes.md',
            startTime: Date.UTC(2026, 10, 30, 12, 0, 1),
            endTime: Date.UTC(2026, 10, 30, 12, 0, 1),
            isError: true,
            errorType: 'permission_rejected',
            permission: { outcome: 'reject_once', optionId: 'reject' },
          },
        ],
      }),
    );
    expect(tools.map((t) => [t.name, t.attributes])).toEqual([
      [
        'execute_tool Bash',
        {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'Bash',
          'gen_ai.tool.call.id': 'c1',
          'gen_ai.tool.type': 'execute',
          'subagent.tool.title': 'ls -la',
          'subagent.tool.permission.outcome': 'allow_once',
          'subagent.tool.permission.option_id': 'allow',
          'gen_ai.agent.name': 'codex-acp', // v0.1.0 names the agent on tool spans (#322)
        },
      ],
      [
        'execute_tool Write notes.md',
        {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'Write notes.md',
          'gen_ai.tool.call.id': 'c2',
          'subagent.tool.permission.outcome': 'reject_once',
          'subagent.tool.permission.option_id': 'reject',
          'gen_ai.agent.name': 'codex-acp', // v0.1.0 names the agent on tool spans (#322)
          'error.type': 'permission_rejected',
        },
      ],
    ]);
    expect(tools[1]?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'tool error: permission_rejected' });
  });
});

describe('ACP tool titles are content', () => {
  const titled = (title: string) =>
    record({
      toolCalls: [
        {
          callId: 'c1',
          title,
          toolType: 'execute',
          startTime: Date.UTC(2026, 10, 30, 12, 0, 0),
          endTime: Date.UTC(2026, 10, 30, 12, 0, 1),
          isError: false,
        },
      ],
    });
  const titleOf = (title: string, content: ContentPolicy) =>
    endOne(titled(title), content).tools[0]?.attributes['subagent.tool.title'];

  it('records no title with content capture off, and keeps the kind', () => {
    const { tools } = endOne(titled('curl -H "Authorization: Bearer sk-live-1"'), { capture: false });
    expect(tools[0]?.attributes['subagent.tool.title']).toBeUndefined();
    expect(tools[0]?.attributes['gen_ai.tool.type']).toBe('execute');
  });

  it('passes the title through the redaction hook, and leaves it out when the hook fails', () => {
    const redact = (json: string): string => json.replace(/Bearer [^"\\]+/g, 'Bearer [redacted]');
    expect(titleOf('curl -H "Authorization: Bearer sk-live-1" https://x.test', { capture: true, redact })).toBe(
      'curl -H "Authorization: Bearer [redacted]" https://x.test',
    );
    expect(
      titleOf('ls', {
        capture: true,
        redact: () => {
          throw new Error('hook broke');
        },
      }),
    ).toBeUndefined();
  });

  it('caps the title at the content length limit and at 256 code units', () => {
    expect(titleOf('abcdefghijklmnopqrstuvwxyz', { capture: true, maxLength: 20 })).toBe('abcdef...[truncated]');
    const long = titleOf(`cat ${'p'.repeat(1000)}`, { capture: true });
    expect(typeof long === 'string' ? long.length : long).toBe(256);
  });
});
