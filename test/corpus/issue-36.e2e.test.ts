/**
 * The corpus check on hand-made reproductions of the four reader defects
 * issue 36 reports, each as the issue describes the records Claude Code and
 * Codex wrote (no agent source was read for them; the envelopes are those of
 * the synthetic sessions, test/corpus/helpers.ts):
 *
 * 1. a Claude Code 2.1.8x-2.1.9x session whose first line is
 *    `{"type":"permission-mode","permissionMode":"default","sessionId":…}`;
 * 2. a Claude Code subagent the user stopped: its file ends with
 *    `[Request interrupted by user]`, the parent's Task result is the
 *    rejection text (`toolUseResult: "User rejected tool use"`), then
 *    `[Request interrupted by user for tool use]`;
 * 3. a Claude Code 2.1.318 background subagent cut at its output limit: its
 *    last answer with `stop_reason: "max_tokens"`, then the synthetic
 *    `max_output_tokens` record; the parent's `<task-notification>` says
 *    `<status>failed</status>`, a summary ending `(error type
 *    max_output_tokens)` and `<result>` the partial answer;
 * 4. a Codex 0.166 turn ended by `task_complete` with `error: {message:
 *    "Incomplete response returned, reason: max_output_tokens"}` and
 *    `last_agent_message: null`.
 *
 * Each must hold every invariant. They are the expectation the readers'
 * fixes for issue 36 must meet; until those land, each fails with the
 * violation it names.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checked, claudeAssistant, claudeLine, claudeUser, codexLine, corpus, report, scratch } from './helpers.js';

const SID = '55555555-5555-4555-8555-555555555555';

/** Writes a Claude Code project: the session's lines, and subagent files by agent id. */
function claudeProject(session: readonly string[], subagents: Record<string, readonly string[]>): string {
  const dir = scratch('corpus-issue36-');
  const project = join(dir, '-home-user-proj');
  mkdirSync(join(project, SID, 'subagents'), { recursive: true });
  writeFileSync(join(project, `${SID}.jsonl`), `${session.join('\n')}\n`);
  for (const [agent, lines] of Object.entries(subagents))
    writeFileSync(join(project, SID, 'subagents', `agent-${agent}.jsonl`), `${lines.join('\n')}\n`);
  return dir;
}

const line =
  (version: string) =>
  (
    uuid: string,
    parent: string | null,
    at: number,
    agent: string | undefined,
    extra: Record<string, unknown>,
  ): string =>
    claudeLine(SID, version, uuid, parent, at, agent, extra);

async function expectHolds(dir: string, invariant: string): Promise<void> {
  const done = await corpus(['--json', dir]);
  const r = report(done);
  expect(r.violations).toEqual([]);
  expect(done.code).toBe(0);
  expect(checked(r, invariant)).toBeGreaterThan(0);
}

describe('issue 36 reproductions hold every invariant', () => {
  it('1: a session whose first line is a permission-mode record is read, its subagent nested under its call', async () => {
    const l = line('2.1.90');
    const dir = claudeProject(
      [
        JSON.stringify({ type: 'permission-mode', permissionMode: 'default', sessionId: SID }),
        l('p1', null, 0, undefined, claudeUser('Explore the repository.')),
        l(
          'p2',
          'p1',
          1,
          undefined,
          claudeAssistant(
            'msg_P1',
            {
              type: 'tool_use',
              id: 'toolu_E1',
              name: 'Agent',
              input: { description: 'Explore', subagent_type: 'Explore', prompt: 'Explore the repository.' },
            },
            9,
          ),
        ),
        l(
          'p3',
          'p2',
          6,
          undefined,
          claudeUser(
            [
              {
                tool_use_id: 'toolu_E1',
                type: 'tool_result',
                content: [
                  { type: 'text', text: 'Two folders: src and test.' },
                  { type: 'text', text: "agentId: a5000001 (for resuming to continue this agent's work if needed)" },
                ],
              },
            ],
            {
              toolUseResult: {
                status: 'completed',
                agentId: 'a5000001',
                content: [{ type: 'text', text: 'Two folders: src and test.' }],
              },
            },
          ),
        ),
        l(
          'p4',
          'p3',
          7,
          undefined,
          claudeAssistant('msg_P2', { type: 'text', text: 'The repository has two folders.' }, 7),
        ),
        l('p5', 'p4', 8, undefined, { type: 'system', subtype: 'turn_duration', durationMs: 8000 }),
      ],
      {
        a5000001: [
          l('c1', null, 2, 'a5000001', claudeUser('Explore the repository.')),
          l(
            'c2',
            'c1',
            5,
            'a5000001',
            claudeAssistant('msg_C1', { type: 'text', text: 'Two folders: src and test.' }, 12),
          ),
        ],
      },
    );
    await expectHolds(dir, 'known-files-read');
  });

  it('2: a subagent the user stopped is aborted', async () => {
    const l = line('2.1.97');
    const dir = claudeProject(
      [
        l('p1', null, 0, undefined, claudeUser('Refactor the parser.')),
        l(
          'p2',
          'p1',
          1,
          undefined,
          claudeAssistant(
            'msg_P1',
            {
              type: 'tool_use',
              id: 'toolu_F1',
              name: 'Task',
              input: { description: 'Refactor', subagent_type: 'general-purpose', prompt: 'Refactor the parser.' },
            },
            9,
          ),
        ),
        l('p2b', 'p2', 2, undefined, {
          type: 'progress',
          data: { type: 'agent_progress', agentId: 'a5000002', prompt: 'Refactor the parser.' },
          parentToolUseID: 'toolu_F1',
          toolUseID: 'agent_msg_1',
        }),
        l(
          'p3',
          'p2b',
          5,
          undefined,
          claudeUser(
            [
              {
                tool_use_id: 'toolu_F1',
                type: 'tool_result',
                is_error: true,
                content:
                  "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.",
              },
            ],
            { toolUseResult: 'User rejected tool use' },
          ),
        ),
        l('p4', 'p3', 5, undefined, claudeUser([{ type: 'text', text: '[Request interrupted by user for tool use]' }])),
      ],
      {
        a5000002: [
          l('c1', null, 2, 'a5000002', claudeUser('Refactor the parser.')),
          l(
            'c2',
            'c1',
            3,
            'a5000002',
            claudeAssistant('msg_C1', { type: 'text', text: 'Starting with the tokenizer' }, 7),
          ),
          l('c3', 'c2', 4, 'a5000002', claudeUser([{ type: 'text', text: '[Request interrupted by user]' }])),
        ],
      },
    );
    await expectHolds(dir, 'no-completed-after-error');
  });

  it("3: a background subagent cut at its output limit is max-tokens, its partial answer the notification's <result>", async () => {
    const l = line('2.1.318');
    const partial = 'Partial answer: the first half of the report';
    const dir = claudeProject(
      [
        l('p1', null, 0, undefined, claudeUser('Write the report in the background.')),
        l(
          'p2',
          'p1',
          1,
          undefined,
          claudeAssistant(
            'msg_P1',
            {
              type: 'tool_use',
              id: 'toolu_B1',
              name: 'Agent',
              input: {
                description: 'Report',
                subagent_type: 'general-purpose',
                prompt: 'Write the report.',
                run_in_background: true,
              },
            },
            9,
          ),
        ),
        l(
          'p3',
          'p2',
          2,
          undefined,
          claudeUser(
            [
              {
                tool_use_id: 'toolu_B1',
                type: 'tool_result',
                content: [
                  {
                    type: 'text',
                    text: 'Async agent launched successfully.\nagentId: a5000003 (This is an internal ID for your use, do not mention it to the user.)',
                  },
                ],
              },
            ],
            { toolUseResult: { isAsync: true, status: 'async_launched', agentId: 'a5000003' } },
          ),
        ),
        l(
          'p4',
          'p3',
          30,
          undefined,
          claudeUser(
            `<task-notification>\n<task-id>a5000003</task-id>\n<status>failed</status>\n<summary>Agent "Report" failed: API Error: Claude's response exceeded the 32000 output token maximum. (error type max_output_tokens)</summary>\n<result>${partial}</result>\n</task-notification>`,
          ),
        ),
        l('p5', 'p4', 31, undefined, claudeAssistant('msg_P2', { type: 'text', text: 'The report was cut off.' }, 6)),
      ],
      {
        a5000003: [
          l('c1', null, 2, 'a5000003', claudeUser('Write the report.')),
          l(
            'c2',
            'c1',
            20,
            'a5000003',
            claudeAssistant('msg_C1', { type: 'text', text: partial }, 32000, 'max_tokens'),
          ),
          l('c3', 'c2', 21, 'a5000003', {
            type: 'assistant',
            message: {
              id: 'synthetic-c3',
              model: '<synthetic>',
              role: 'assistant',
              type: 'message',
              stop_reason: 'stop_sequence',
              usage: { input_tokens: 0, output_tokens: 0 },
              content: [
                {
                  type: 'text',
                  text: "API Error: Claude's response exceeded the 32000 output token maximum. To configure this behavior, set the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable.",
                },
              ],
            },
            error: 'max_output_tokens',
            isApiErrorMessage: true,
          }),
        ],
      },
    );
    await expectHolds(dir, 'output-equals-received');
    await expectHolds(dir, 'no-completed-after-error');
  });

  it('4: a Codex turn ended by task_complete with an incomplete-response error is max-tokens', async () => {
    const dir = scratch('corpus-issue36-');
    const thread = '019f0000-0000-7000-8000-0000000000aa';
    const usage = {
      input_tokens: 900,
      cached_input_tokens: 0,
      output_tokens: 40,
      reasoning_output_tokens: 0,
      total_tokens: 940,
    };
    const lines = [
      codexLine(0, 'session_meta', {
        id: thread,
        timestamp: '2026-04-20T10:00:00.000Z',
        cwd: '/w',
        originator: 'codex_cli_rs',
        cli_version: '0.166.0',
        source: 'cli',
        model_provider: 'openai',
      }),
      codexLine(1, 'event_msg', { type: 'task_started', turn_id: 't1' }),
      codexLine(1, 'event_msg', { type: 'user_message', message: 'Write a long guide.' }),
      codexLine(1, 'turn_context', { turn_id: 't1', model: 'gpt-5.2-codex' }),
      codexLine(2, 'response_item', {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Section 1 of the guide' }],
      }),
      codexLine(2, 'event_msg', { type: 'token_count', info: { total_token_usage: usage, last_token_usage: usage } }),
      codexLine(3, 'event_msg', {
        type: 'task_complete',
        turn_id: 't1',
        last_agent_message: null,
        error: { message: 'Incomplete response returned, reason: max_output_tokens' },
      }),
    ];
    writeFileSync(join(dir, `rollout-2026-04-20T10-00-00-${thread}.jsonl`), `${lines.join('\n')}\n`);
    await expectHolds(dir, 'no-completed-after-error');
  });
});
