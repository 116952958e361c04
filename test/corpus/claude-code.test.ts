/**
 * The corpus check's own reading of Claude Code files: what it drops of a
 * parent's tool result before comparing (`withoutAgentTrailer`), and where it
 * finds what a background agent reported (`claudeCodeExpectations`).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claudeCodeExpectations, withoutAgentTrailer } from '../../src/corpus/claude-code.js';
import { listFiles, readTranscriptFile } from '../../src/corpus/records.js';

describe('withoutAgentTrailer', () => {
  it("drops Claude Code's agentId trailer and its usage block", () => {
    expect(withoutAgentTrailer('The answer.\nagentId: a1 (for resuming)\n<usage>total_tokens: 5</usage>')).toBe(
      'The answer.',
    );
    expect(withoutAgentTrailer('agentId: a1 (for resuming)')).toBe('');
    expect(withoutAgentTrailer('No trailer; agentId: a1 mid-line stays.')).toBe(
      'No trailer; agentId: a1 mid-line stays.',
    );
  });
});

describe('claudeCodeExpectations: what a background agent reported to its parent', () => {
  const dir = mkdtempSync(join(tmpdir(), 'corpus-claude-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const session = '5a5a5a5a-5a5a-4a5a-8a5a-5a5a5a5a5a5a';
  const agentId = 'a0123456789abcdef';
  const envelope = (uuid: string, parentUuid: string | null, extra: object): string =>
    JSON.stringify({
      parentUuid,
      isSidechain: false,
      sessionId: session,
      version: '2.1.337',
      uuid,
      timestamp: '2026-12-06T22:23:58.000Z',
      ...extra,
    });

  it('reads the <result> of a notification Claude Code 2.1.337 delivered mid-turn as a queued_command attachment', () => {
    const notification = `<task-notification>\n<task-id>${agentId}</task-id>\n<tool-use-id>toolu_B1</tool-use-id>\n<status>completed</status>\n<summary>Agent "Count the files" finished</summary>\n<result>The subagent found 7 files.</result>\n</task-notification>`;
    // The parent's file as 2.1.337 writes it when the agent ends before the parent's next model call:
    // no user line holds the notification, a `queued_command` attachment does (after `queue-operation` `remove`).
    const parent = [
      JSON.stringify({ type: 'api-request-route', provider: 'customEndpoint', credential: 'key', sessionId: session }),
      envelope('u1', null, { type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'Delegate.' }] } }),
      envelope('u2', 'u1', {
        type: 'assistant',
        message: {
          id: 'msg_B1',
          role: 'assistant',
          model: 'claude-opus-5-5',
          content: [{ type: 'tool_use', id: 'toolu_B1', name: 'Agent', input: { run_in_background: true } }],
          stop_reason: 'tool_use',
          usage: { input_tokens: 1, output_tokens: 1 },
        },
      }),
      envelope('u3', 'u2', {
        type: 'user',
        message: {
          role: 'user',
          content: [
            {
              tool_use_id: 'toolu_B1',
              type: 'tool_result',
              content: [{ type: 'text', text: 'Async agent launched successfully.' }],
            },
          ],
        },
        toolUseResult: { isAsync: true, status: 'async_launched', agentId },
      }),
      JSON.stringify({
        type: 'queue-operation',
        operation: 'remove',
        sessionId: session,
        timestamp: '2026-12-06T22:23:58.111Z',
        content: notification,
        reason: 'absorbed_mid_turn',
      }),
      envelope('u4', 'u3', {
        type: 'attachment',
        attachment: { type: 'queued_command', prompt: notification, commandMode: 'task-notification' },
      }),
    ];
    const child = [
      envelope('c1', null, {
        isSidechain: true,
        agentId,
        type: 'user',
        message: { role: 'user', content: 'Count the files.' },
      }),
      envelope('c2', 'c1', {
        isSidechain: true,
        agentId,
        type: 'assistant',
        message: {
          id: 'msg_C1',
          role: 'assistant',
          model: 'claude-opus-5-5',
          content: [{ type: 'text', text: 'The subagent found 7 files.' }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 1, output_tokens: 1 },
        },
      }),
    ];
    mkdirSync(join(dir, session, 'subagents'), { recursive: true });
    writeFileSync(join(dir, `${session}.jsonl`), `${parent.join('\n')}\n`);
    writeFileSync(join(dir, session, 'subagents', `agent-${agentId}.jsonl`), `${child.join('\n')}\n`);
    const runs = claudeCodeExpectations(listFiles([dir]).map(readTranscriptFile));
    const run = runs.find((r) => r.runIds[0] === `claude-code:${session}/agent-${agentId}`);
    expect(run?.received).toEqual({
      text: 'The subagent found 7 files.',
      source: 'line 6: <result> of the <task-notification>',
    });
  });
});
