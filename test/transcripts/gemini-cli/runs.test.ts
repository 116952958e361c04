/**
 * Gemini CLI recordings as runs, driven by literal records (the shapes of
 * google-gemini/gemini-cli's chatRecordingTypes.ts; source lines cited per
 * case, of gemini-cli at commit 5411f113): the conversation rebuilt as the CLI's loader rebuilds it, usage in
 * dsh buckets, stop evidence from the CLI's notices and from the parent's
 * tool result, and subagents linked to the call that ran them.
 */
import { describe, expect, it } from 'vitest';
import type { GeminiCliMessage, GeminiCliRecord } from '../../../src/transcripts/gemini-cli/records.js';
import {
  GeminiConversation,
  geminiCliRuns,
  noticeEvidence,
  parentResultEvidence,
  resultTextOf,
  usageOfTokens,
  type GeminiRecording,
} from '../../../src/transcripts/gemini-cli/runs.js';

const at = (seconds: number): string => new Date(Date.UTC(2026, 7, 20, 10, 0, seconds)).toISOString();
const T0 = Date.UTC(2026, 7, 20, 10, 0, 0);

function meta(sessionId: string, extra: Record<string, string> = {}): GeminiCliRecord {
  return { kind: 'metadata', metadata: { sessionId, projectHash: 'p', startTime: at(0), ...extra } };
}
function message(message: GeminiCliMessage): GeminiCliRecord {
  return { kind: 'message', message };
}
const user = (id: string, second: number, text: string): GeminiCliRecord =>
  message({ id, timestamp: at(second), type: 'user', content: [{ text }] });
const gemini = (id: string, second: number, text: string, extra: Partial<GeminiCliMessage> = {}): GeminiCliRecord =>
  message({
    id,
    timestamp: at(second),
    type: 'gemini',
    content: text,
    tokens: { input: 100, output: 10, cached: 40, thoughts: 5, tool: 0, total: 115 },
    model: 'gemini-2.5-pro',
    ...extra,
  });
const notice = (id: string, second: number, type: 'info' | 'error' | 'warning', text: string): GeminiCliRecord =>
  message({ id, timestamp: at(second), type, content: text });

function conversation(records: readonly GeminiCliRecord[]): GeminiConversation {
  const rebuilt = new GeminiConversation();
  for (const record of records) rebuilt.apply(record);
  return rebuilt;
}

function recording(
  sessionId: string,
  records: readonly GeminiCliRecord[],
  extra: Partial<GeminiRecording> = {},
): GeminiRecording {
  return {
    path: `/chats/${sessionId}.jsonl`,
    name: sessionId,
    sessionId,
    isSubagent: false,
    isLegacy: false,
    fallbackTime: 0,
    conversation: conversation(records),
    ...extra,
  };
}

const ids = (rebuilt: GeminiConversation): string[] => rebuilt.entries().map((entry) => entry.id);

describe('GeminiConversation (the loader, chatRecordingService.ts lines 133-400)', () => {
  it('lets the last record of an id win, in the place of its first', () => {
    const rebuilt = conversation([
      meta('s'),
      user('u1', 1, 'q'),
      gemini('g1', 2, 'draft', { tokens: null }),
      user('u2', 3, 'next'),
      gemini('g1', 4, 'final'),
    ]);
    expect(ids(rebuilt)).toEqual(['u1', 'g1', 'u2']);
    expect(rebuilt.entries()[1]?.content).toEqual([{ type: 'text', text: 'final' }]);
    expect(rebuilt.entries()[1]?.usage).toEqual({
      inputTokens: 60,
      outputTokens: 15,
      cacheReadTokens: 40,
      reasoningTokens: 5,
    });
  });

  it('drops the rewound message and everything after it, and says calls with tokens were dropped', () => {
    const rebuilt = conversation([
      meta('s'),
      user('u1', 1, 'q'),
      gemini('g1', 2, 'a'),
      user('u2', 3, 'oops'),
      gemini('g2', 4, 'b'),
      { kind: 'rewind', messageId: 'u2' },
      user('u3', 5, 'again'),
    ]);
    expect(ids(rebuilt)).toEqual(['u1', 'g1', 'u3']);
    expect(rebuilt.isUsageDropped).toBe(true);
  });

  it('drops everything on a rewind to an id it does not hold (lines 199-201)', () => {
    const rebuilt = conversation([meta('s'), user('u1', 1, 'q'), { kind: 'rewind', messageId: 'nowhere' }]);
    expect(ids(rebuilt)).toEqual([]);
    expect(rebuilt.isUsageDropped).toBe(false);
  });

  it('replaces the conversation at a messages checkpoint, keeping the CLI notices after the message they followed', () => {
    const records: GeminiCliRecord[] = [
      meta('s'),
      user('u1', 1, 'q'),
      gemini('g1', 2, 'a'),
      notice('i1', 3, 'info', '⚠️  Response truncated due to token limits.'),
      user('u2', 4, 'cancel me'),
      gemini('g2', 5, 'partial'),
      notice('i2', 6, 'info', 'Request cancelled.'),
      {
        kind: 'set',
        fields: { lastUpdated: at(7) },
        messages: [
          { id: 'u1', timestamp: at(1), type: 'user', content: [{ text: 'q' }] },
          { id: 'g1', timestamp: at(2), type: 'gemini', content: 'a', model: 'gemini-2.5-pro' },
        ],
      },
    ];
    const rebuilt = conversation(records);
    expect(ids(rebuilt)).toEqual(['u1', 'g1', 'i1', 'i2']);
    expect(rebuilt.isUsageDropped).toBe(true);
    expect(rebuilt.metadata?.lastUpdated).toBe(at(7));
  });

  it('merges $set fields into the metadata and loads messages a metadata record carries', () => {
    const rebuilt = conversation([
      {
        kind: 'metadata',
        metadata: { sessionId: 's', projectHash: 'p' },
        messages: [{ id: 'u1', type: 'user', content: 'hello' }],
      },
      { kind: 'set', fields: { summary: 'greeting', kind: 'main', unrelated: 3 } },
      { kind: 'unknown' },
    ]);
    expect(rebuilt.metadata).toEqual({ sessionId: 's', projectHash: 'p', summary: 'greeting', kind: 'main' });
    expect(rebuilt.entries()).toEqual([
      { id: 'u1', type: 'user', time: Number.NaN, prompt: [{ type: 'text', text: 'hello' }] },
    ]);
    expect(rebuilt.records).toBe(3);
  });

  it('reads a gemini message into reasoning, text and tool-call blocks, and a function-response turn as no prompt', () => {
    const rebuilt = conversation([
      meta('s'),
      message({
        id: 'g1',
        type: 'gemini',
        content: [
          { text: 'Binary content received.', thought: true },
          { text: 'Looking.' },
          { functionCall: { id: 'orphan', name: 'ls', args: { dir: '.' } } },
        ],
        thoughts: [{ subject: 'Plan', description: 'List files.' }, { description: 'Then read.' }],
        toolCalls: [{ id: 't1', name: 'read_file', args: { path: 'a' }, status: 'success' }],
      }),
      message({
        id: 'u1',
        type: 'user',
        content: [{ functionResponse: { id: 't1', name: 'read_file', response: { output: 'x' } } }],
      }),
    ]);
    expect(rebuilt.entries()[0]?.content).toEqual([
      { type: 'reasoning', text: 'Plan: List files.' },
      { type: 'reasoning', text: 'Then read.' },
      { type: 'reasoning', text: 'Binary content received.' },
      { type: 'text', text: 'Looking.' },
      { type: 'tool-call', id: 't1', name: 'read_file', arguments: '{"path":"a"}' },
      { type: 'tool-call', id: 'orphan', name: 'ls', arguments: '{"dir":"."}' },
    ]);
    expect(rebuilt.entries()[1]).toEqual({
      id: 'u1',
      type: 'user',
      time: Number.NaN,
      prompt: [],
      isToolResponse: true,
    });
  });
});

describe('usageOfTokens', () => {
  it('takes cached out of input, adds the tool-use prompt to input and thoughts to output', () => {
    expect(usageOfTokens({ input: 1000, output: 50, cached: 400, thoughts: 30, tool: 20, total: 1100 })).toEqual({
      usage: { inputTokens: 620, outputTokens: 80, cacheReadTokens: 400, reasoningTokens: 30 },
      isTotalOff: false,
    });
  });

  it('says when total is not the sum of its parts, and never goes below zero', () => {
    expect(usageOfTokens({ input: 10, output: 5, cached: 30, thoughts: 0, tool: 2, total: 99 })).toEqual({
      usage: { inputTokens: 2, outputTokens: 5, cacheReadTokens: 30, reasoningTokens: 0 },
      isTotalOff: true,
    });
    expect(usageOfTokens({ input: 10, output: 5, total: 0 }).isTotalOff).toBe(false);
  });
});

describe('noticeEvidence (useGeminiStream.ts)', () => {
  it.each([
    ['info', '⚠️  Response truncated due to token limits.', 'max-tokens', 'gemini-cli:info:truncated', 'max-tokens'],
    [
      'info',
      '⚠️  Response stopped due to safety reasons.',
      'refusal',
      'gemini-cli:info:finish:safety',
      'content_filter',
    ],
    [
      'info',
      '⚠️  Response stopped due to malformed function call.',
      'error',
      'gemini-cli:info:finish:malformed_function_call',
      'error',
    ],
  ])('%s %j is %s from %s', (type, text, reason, inferredFrom, callFinish) => {
    const evidence = noticeEvidence(type, text);
    expect(evidence?.stop.reason).toBe(reason);
    expect(evidence?.stop.inferredFrom).toBe(inferredFrom);
    expect(evidence?.callFinish).toBe(callFinish);
  });

  it.each([
    ['info', 'Request cancelled.', 'aborted', 'gemini-cli:info:cancelled'],
    ['info', 'User cancelled the request.', 'aborted', 'gemini-cli:info:cancelled'],
    [
      'info',
      'A potential loop was detected. This can happen due to repetitive tool calls or other model behavior. The request has been halted.',
      'aborted',
      'gemini-cli:info:loop-detected',
    ],
    ['info', 'Agent execution stopped: hook said no', 'aborted', 'gemini-cli:info:execution-stopped'],
    [
      'info',
      'The session has reached the maximum number of turns: 5. Please update this limit in your setting.json file.',
      'error',
      'gemini-cli:info:max-session-turns',
    ],
    [
      'info',
      'Sending this message (900000 tokens) might exceed the context window limit (1,000 tokens left).',
      'error',
      'gemini-cli:info:context-window',
    ],
    ['error', '[API Error: You have exhausted your daily quota on this model.]', 'error', 'gemini-cli:error:api'],
    [
      'error',
      'Model stream ended due to token limit exhaustion (MAX_TOKENS) with empty response text.',
      'max-tokens',
      'gemini-cli:error:max-tokens',
    ],
    [
      'error',
      'Model response was truncated because it exceeded the token limit. Try using /compress to free up context space.',
      'max-tokens',
      'gemini-cli:error:max-tokens',
    ],
    ['error', 'The model response was blocked due to safety settings.', 'refusal', 'gemini-cli:error:blocked'],
    ['error', 'Invalid stream received from model', 'error', 'gemini-cli:error:invalid-stream'],
  ])('%s %j is %s from %s, with no call to mark', (type, text, reason, inferredFrom) => {
    const evidence = noticeEvidence(type, text);
    expect(evidence?.stop.reason).toBe(reason);
    expect(evidence?.stop.inferredFrom).toBe(inferredFrom);
    expect(evidence?.callFinish).toBeUndefined();
  });

  it('keeps the text of an API error as the diagnostic', () => {
    expect(noticeEvidence('error', '[API Error: fetch failed]')?.stop.diagnostic).toBe('[API Error: fetch failed]');
  });

  it.each([
    ['error', 'Automatic update failed. Please try updating manually'],
    ['error', "agy not found. Please ensure it is in your system's PATH."],
    ['info', 'Memory is currently empty.'],
    ['warning', 'Response truncated due to token limits.'],
  ])('says nothing for %s %j', (type, text) => {
    expect(noticeEvidence(type, text)).toBeUndefined();
  });
});

describe('parentResultEvidence (agents/local-invocation.ts lines 314-378)', () => {
  const call = (status: string, resultText?: string) => ({
    id: 'c',
    name: 'invoke_agent',
    status,
    endTime: 0,
    ...(resultText !== undefined ? { resultText } : {}),
  });

  it('reads the termination reason of a finished subagent', () => {
    expect(
      parentResultEvidence(call('success', "Subagent 'x' finished.\nTermination Reason: GOAL\nResult:\nok")),
    ).toEqual({ reason: 'completed', inferredFrom: 'gemini-cli:parent-result:goal' });
    expect(
      parentResultEvidence(
        call(
          'success',
          "Subagent 'x' finished.\nTermination Reason: MAX_TURNS\nResult:\nAgent reached max turns limit (30).",
        ),
      ),
    ).toEqual({
      reason: 'error',
      inferredFrom: 'gemini-cli:parent-result:max_turns',
      diagnostic: "Subagent 'x' finished.\nTermination Reason: MAX_TURNS\nResult:\nAgent reached max turns limit (30).",
    });
    expect(
      parentResultEvidence(call('success', 'Browser agent finished.\nTermination Reason: ABORTED\nResult:\n'))?.reason,
    ).toBe('aborted');
  });

  it('tells a subagent that failed at its token limit from other failures', () => {
    expect(
      parentResultEvidence(
        call(
          'success',
          "Subagent 'x' failed. Error: Model stream ended due to token limit exhaustion (MAX_TOKENS) with empty response text.",
        ),
      )?.inferredFrom,
    ).toBe('gemini-cli:parent-result:max-tokens');
    expect(parentResultEvidence(call('success', "Subagent 'x' failed. Error: boom"))).toEqual({
      reason: 'error',
      inferredFrom: 'gemini-cli:parent-result:failed',
      diagnostic: "Subagent 'x' failed. Error: boom",
    });
  });

  it('reads the call status when the call did not succeed, and nothing from a call that never finished', () => {
    expect(parentResultEvidence(call('cancelled'))).toEqual({
      reason: 'aborted',
      inferredFrom: 'gemini-cli:parent-result:cancelled',
    });
    expect(parentResultEvidence(call('error', "Subagent 'nope' not found."))).toEqual({
      reason: 'error',
      inferredFrom: 'gemini-cli:parent-result:error',
      diagnostic: "Subagent 'nope' not found.",
    });
    expect(parentResultEvidence(call('executing'))).toBeUndefined();
    expect(parentResultEvidence(call('success', 'a remote agent answered'))).toEqual({
      reason: 'completed',
      inferredFrom: 'gemini-cli:parent-result:success',
    });
  });
});

describe('resultTextOf', () => {
  it('reads function-response outputs and errors and text parts', () => {
    expect(
      resultTextOf([{ functionResponse: { id: 'a', name: 'x', response: { output: 'out' } } }, { text: 'more' }]),
    ).toBe('out\nmore');
    expect(resultTextOf([{ functionResponse: { response: { error: 'bad' } } }])).toBe('bad');
    expect(resultTextOf([{ functionResponse: { response: { other: 1 } } }])).toBe('{"other":1}');
    expect(resultTextOf(null)).toBeUndefined();
  });
});

const CHILD = 'child-0001';
const RESULT = "Subagent 'codebase_investigator' finished.\nTermination Reason: GOAL\nResult:\nIt is in retry.ts.";

/** A main session delegating to a subagent by `invoke_agent` with `agentId` (geminiChat.ts lines 1620-1650), then truncated at its last answer. */
function delegatingMain(extra: { agentId?: string; truncated?: boolean } = {}): GeminiRecording {
  return recording('main-0001', [
    meta('main-0001'),
    user('u1', 1, 'Where is the retry policy?'),
    gemini('g1', 3, "I'll delegate.", {
      toolCalls: [
        {
          id: 'invoke_agent-1',
          name: 'invoke_agent',
          args: { agent_name: 'codebase_investigator', prompt: 'Find the retry policy.' },
          status: 'success',
          timestamp: at(30),
          ...(extra.agentId !== undefined ? { agentId: extra.agentId } : {}),
          result: [{ functionResponse: { id: 'invoke_agent-1', name: 'invoke_agent', response: { output: RESULT } } }],
        },
      ],
    }),
    message({
      id: 'u2',
      timestamp: at(31),
      type: 'user',
      content: [{ functionResponse: { id: 'invoke_agent-1', name: 'invoke_agent', response: { output: RESULT } } }],
    }),
    gemini('g2', 40, 'It is in retry.ts, where'),
    ...(extra.truncated === true ? [notice('i1', 41, 'info', '⚠️  Response truncated due to token limits.')] : []),
  ]);
}

function child(extra: Partial<GeminiRecording> = {}): GeminiRecording {
  return recording(
    CHILD,
    [
      meta(CHILD, { startTime: at(4), kind: 'subagent' }),
      user('c1', 5, 'Find the retry policy.'),
      gemini('c2', 20, 'Found it.', {
        toolCalls: [
          {
            id: 'complete_task-1',
            name: 'complete_task',
            args: { result: 'It is in retry.ts.' },
            status: 'success',
            timestamp: at(21),
          },
        ],
      }),
    ],
    { isSubagent: true, parentSessionId: 'main-0001', ...extra },
  );
}

describe('geminiCliRuns', () => {
  it('reports the subagent first, nested under the invoke_agent call named by agentId, then the main session', () => {
    const runs = geminiCliRuns([delegatingMain({ agentId: CHILD, truncated: true }), child()], 'gemini-cli:main-0001');
    expect(runs.map((run) => run.start.runId)).toEqual(['gemini-cli:child-0001', 'gemini-cli:main-0001']);
    const [sub, main] = runs;
    expect(sub?.start).toEqual({
      runId: 'gemini-cli:child-0001',
      source: 'gemini-cli',
      agentName: 'codebase_investigator',
      sessionId: CHILD,
      parentSessionId: 'main-0001',
      parentRunId: 'gemini-cli:main-0001',
      parentToolCallId: 'invoke_agent-1',
      traceKey: 'gemini-cli:main-0001',
      startTime: T0 + 4000,
      provider: 'gcp.gemini',
      model: 'gemini-2.5-pro',
      prompt: [{ type: 'text', text: 'Find the retry policy.' }],
    });
    expect(sub?.isEnded).toBe(true);
    expect(sub?.record.stopReason).toBe('completed');
    expect(sub?.record.stopReasonInferredFrom).toBe('gemini-cli:parent-result:goal');
    // The parent's text wraps the answer; parity compares the part after `Result:` with the child's complete_task result.
    expect(sub?.record.reported).toEqual({ output: [{ type: 'text', text: 'It is in retry.ts.' }], compare: 'answer' });
    expect(RESULT.endsWith('\nResult:\nIt is in retry.ts.')).toBe(true);
    expect(sub?.record.output).toEqual([
      { type: 'text', text: 'Found it.' },
      { type: 'tool-call', id: 'complete_task-1', name: 'complete_task', arguments: '{"result":"It is in retry.ts."}' },
    ]);
    expect(sub?.record.endTime).toBe(T0 + 21000);

    expect(main?.isEnded).toBe(false);
    expect(main?.start.parentRunId).toBeUndefined();
    expect(main?.record.stopReason).toBe('max-tokens');
    expect(main?.record.stopReasonInferredFrom).toBe('gemini-cli:info:truncated');
    expect(main?.record.output).toEqual([{ type: 'text', text: 'It is in retry.ts, where' }]);
    expect(main?.record.steps.map((step) => [step.startTime - T0, step.endTime - T0, step.finishReason])).toEqual([
      [1000, 3000, undefined],
      [31000, 40000, 'max-tokens'],
    ]);
    expect(main?.record.usage).toEqual({
      inputTokens: 120,
      outputTokens: 30,
      cacheReadTokens: 80,
      cacheWriteTokens: 0,
      reasoningTokens: 10,
      reported: true,
    });
    expect(main?.record.toolCalls).toEqual([
      { callId: 'invoke_agent-1', name: 'invoke_agent', startTime: T0 + 3000, endTime: T0 + 30000, isError: false },
    ]);
    expect(main?.record.usageNotes).toBeUndefined();
  });

  it('never says completed for a main session whose last answer is followed by nothing', () => {
    const [main] = geminiCliRuns([delegatingMain()], 'gemini-cli:main-0001');
    expect(main?.record.stopReason).toBe('unknown');
    expect(main?.record.stopReasonInferredFrom).toBe('none');
  });

  it('takes an API error after the last prompt as the end, and forgets a cancellation the session went on from', () => {
    const failed = recording('s1', [
      meta('s1'),
      user('u1', 1, 'q'),
      gemini('g1', 2, 'a'),
      user('u2', 3, 'again'),
      notice('e1', 4, 'error', '[API Error: You have exhausted your daily quota on this model.]'),
    ]);
    const [run] = geminiCliRuns([failed], 'gemini-cli:s1');
    expect([run?.record.stopReason, run?.record.stopReasonInferredFrom, run?.record.diagnostic]).toEqual([
      'error',
      'gemini-cli:error:api',
      '[API Error: You have exhausted your daily quota on this model.]',
    ]);
    expect(run?.record.output).toEqual([{ type: 'text', text: 'a' }]);

    const resumed = recording('s2', [
      meta('s2'),
      user('u1', 1, 'q'),
      notice('i1', 2, 'info', 'Request cancelled.'),
      user('u2', 3, 'q again'),
      gemini('g1', 4, 'done'),
    ]);
    expect(geminiCliRuns([resumed], 'gemini-cli:s2')[0]?.record.stopReason).toBe('unknown');

    const cancelled = recording('s3', [
      meta('s3'),
      user('u1', 1, 'q'),
      gemini('g1', 2, '', {
        toolCalls: [{ id: 't1', name: 'run_shell_command', status: 'cancelled', timestamp: at(2) }],
      }),
      notice('i1', 2, 'info', 'Request cancelled.'),
    ]);
    const [aborted] = geminiCliRuns([cancelled], 'gemini-cli:s3');
    expect([aborted?.record.stopReason, aborted?.record.stopReasonInferredFrom]).toEqual([
      'aborted',
      'gemini-cli:info:cancelled',
    ]);
    expect(aborted?.record.toolCalls).toEqual([
      {
        callId: 't1',
        name: 'run_shell_command',
        startTime: T0 + 2000,
        endTime: T0 + 2000,
        isError: true,
        errorType: 'cancelled',
      },
    ]);
  });

  it('keeps a truncation the subagent recorded over the completion its parent reports', () => {
    const truncatedChild = recording(
      CHILD,
      [
        meta(CHILD, { startTime: at(4), kind: 'subagent' }),
        user('c1', 5, 'Find it.'),
        gemini('c2', 20, 'Partial'),
        notice('c3', 21, 'info', '⚠️  Response truncated due to token limits.'),
      ],
      {
        isSubagent: true,
        parentSessionId: 'main-0001',
      },
    );
    const [sub] = geminiCliRuns([delegatingMain({ agentId: CHILD }), truncatedChild], 'gemini-cli:main-0001');
    expect([sub?.record.stopReason, sub?.record.stopReasonInferredFrom]).toEqual([
      'max-tokens',
      'gemini-cli:info:truncated',
    ]);
  });

  it('links a subagent recording without agentId by the one delegating call whose times enclose its start', () => {
    const [sub] = geminiCliRuns([delegatingMain(), child()], 'gemini-cli:main-0001');
    expect([sub?.start.parentRunId, sub?.start.parentToolCallId, sub?.record.stopReason]).toEqual([
      'gemini-cli:main-0001',
      'invoke_agent-1',
      'completed',
    ]);
  });

  it('hangs a subagent no call encloses under the main session without a tool call, and with no main session under nothing', () => {
    const late = child({
      conversation: conversation([meta(CHILD, { startTime: at(50), kind: 'subagent' }), user('c1', 51, 'x')]),
    });
    const [linked] = geminiCliRuns([delegatingMain(), late], 'gemini-cli:main-0001');
    expect([
      linked?.start.parentRunId,
      linked?.start.parentToolCallId,
      linked?.start.agentName,
      linked?.record.stopReason,
    ]).toEqual(['gemini-cli:main-0001', undefined, 'gemini-cli-subagent', 'unknown']);
    expect(linked?.record.reported).toBeUndefined();
    expect(linked?.isEnded).toBe(false);
    const [orphan] = geminiCliRuns([late], 'gemini-cli:main-0001');
    expect([orphan?.start.parentRunId, orphan?.start.parentSessionId, orphan?.start.traceKey]).toEqual([
      undefined,
      'main-0001',
      'gemini-cli:main-0001',
    ]);
    expect(orphan?.record.usageNotes).toEqual(['gemini-cli:subagent-model-messages-unrecorded']);
  });

  it('takes a legacy document with the parent session id that starts inside a delegate_to_agent call for the subagent (gemini-cli 0.22)', () => {
    const parent = recording(
      'same-id',
      [
        meta('same-id'),
        user('u1', 1, 'whoami'),
        gemini('g1', 3, '', {
          toolCalls: [
            {
              id: 'delegate_to_agent-1',
              name: 'delegate_to_agent',
              args: { agent_name: 'codebase_investigator', objective: 'Find whoami.' },
              status: 'success',
              timestamp: at(30),
              result: [{ functionResponse: { response: { output: RESULT } } }],
            },
          ],
        }),
      ],
      { isLegacy: true, name: 'session-2026-01-02T02-34-sameid' },
    );
    const legacyChild = recording(
      'same-id',
      [meta('same-id', { startTime: at(3) }), user('c1', 3, 'Your task is:\n<objective>\nFind whoami.\n</objective>')],
      { isLegacy: true, name: 'session-2026-01-02T02-35-sameid' },
    );
    const runs = geminiCliRuns([legacyChild, parent], 'gemini-cli:same-id');
    expect(
      runs.map((run) => [run.start.runId, run.start.agentName, run.start.parentRunId, run.start.parentToolCallId]),
    ).toEqual([
      [
        'gemini-cli:same-id/session-2026-01-02T02-35-sameid',
        'codebase_investigator',
        'gemini-cli:same-id',
        'delegate_to_agent-1',
      ],
      ['gemini-cli:same-id', 'gemini-cli', undefined, undefined],
    ]);
    expect(runs[0]?.record.output).toBeUndefined();
    expect(runs[0]?.record.usage.reported).toBe(false);
    expect(runs[0]?.record.usageNotes).toEqual(['gemini-cli:subagent-model-messages-unrecorded']);
  });

  it('links a legacy subagent whose delegating message was written only when its one tool call completed (recordToolCalls)', () => {
    // A message holding only tool calls is created when they are recorded, after the subagent started: the call began after the record before it.
    const parent = recording(
      'late-id',
      [
        meta('late-id'),
        user('u1', 1, 'whoami'),
        gemini('g1', 30, '', {
          toolCalls: [
            {
              id: 'delegate_to_agent-2',
              name: 'delegate_to_agent',
              args: { agent_name: 'codebase_investigator', objective: 'Find whoami.' },
              status: 'success',
              timestamp: at(30),
              result: [{ functionResponse: { response: { output: RESULT } } }],
            },
          ],
        }),
      ],
      { isLegacy: true, name: 'session-A' },
    );
    const legacyChild = recording(
      'late-id',
      [meta('late-id', { startTime: at(3) }), user('c1', 3, 'Your task is:\n<objective>\nFind whoami.\n</objective>')],
      { isLegacy: true, name: 'session-B' },
    );
    const [sub] = geminiCliRuns([parent, legacyChild], 'gemini-cli:late-id');
    expect([sub?.start.runId, sub?.start.parentToolCallId]).toEqual([
      'gemini-cli:late-id/session-B',
      'delegate_to_agent-2',
    ]);
  });

  it('ends a run at its last timed record, not at a later lastUpdated (0.2x rewrote it with the summary), which counts only when no record is timed', () => {
    const [timed] = geminiCliRuns(
      [recording('s', [meta('s', { lastUpdated: at(50) }), user('u1', 1, 'q'), gemini('g1', 2, 'a')])],
      'gemini-cli:s',
    );
    expect(timed?.record.endTime).toBe(T0 + 2000);
    const [untimed] = geminiCliRuns(
      [recording('s', [meta('s', { lastUpdated: at(50) }), message({ id: 'u1', type: 'user', content: 'q' })])],
      'gemini-cli:s',
    );
    expect(untimed?.record.endTime).toBe(T0 + 50000);
  });

  it('gives a second main recording of the same session id its own run id, and names every run as told', () => {
    const first = recording('dup', [meta('dup'), user('u1', 1, 'a')], { isLegacy: true, name: 'session-A' });
    const second = recording('dup', [meta('dup', { startTime: at(100) }), user('u1', 101, 'b')], {
      isLegacy: true,
      name: 'session-B',
    });
    const runs = geminiCliRuns([second, first], 'gemini-cli:dup', { agentName: 'my-agent' });
    expect(runs.map((run) => [run.start.runId, run.start.agentName])).toEqual([
      ['gemini-cli:dup', 'my-agent'],
      ['gemini-cli:dup/session-B', 'my-agent'],
    ]);
  });

  it('marks unfinished and failed tool calls and notes approximate usage', () => {
    const run = geminiCliRuns(
      [
        recording('s', [
          meta('s'),
          user('u1', 1, 'q'),
          gemini('g1', 2, '', {
            tokens: { input: 10, output: 1, cached: 0, thoughts: 0, tool: 0, total: 99 },
            toolCalls: [
              { id: 'a', name: 'read_file', status: 'error', timestamp: at(3) },
              { id: 'b', name: 'run_shell_command', status: 'executing' },
            ],
          }),
          gemini('g2', 4, 'no tokens', { tokens: null }),
        ]),
      ],
      'gemini-cli:s',
    )[0];
    expect(run?.record.toolCalls).toEqual([
      {
        callId: 'a',
        name: 'read_file',
        startTime: T0 + 2000,
        endTime: T0 + 3000,
        isError: true,
        errorType: 'tool_error',
      },
      { callId: 'b', name: 'run_shell_command', startTime: T0 + 2000, isError: true, errorType: 'unfinished' },
    ]);
    expect(run?.record.usageNotes).toEqual(['gemini-cli:total-mismatch', 'gemini-cli:message-without-tokens']);
  });
});
