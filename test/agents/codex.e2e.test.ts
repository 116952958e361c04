/**
 * codex-acp 2.6 (`@agentclientprotocol/codex-acp`, JavaScript over
 * `@openai/codex` 0.166's app server) against the scripted model server's
 * OpenAI Responses stream, direct and through `subagent-otel proxy`. At the
 * output limit codex tells an ordinary client in the chat: its last text
 * chunk is "Incomplete response returned, reason: max_output_tokens" and the
 * turn answers `end_turn` (recognised by `codex-acp/incomplete_text_chunk@2`).
 * It reports per-turn usage in the prompt response, names its tool, a 401 as -32000
 * `Authentication required`, and asks permission before it runs the shell
 * command (in `workspace-write` mode; its default mode lets a model review it).
 * Needs the agents installed: `npm ci --prefix test/agents/pinned`.
 */
import { describeRealAgent, type TurnExpectation } from './real-agent-expectations.js';

const ANSWER = 'The answer is 42.';
const PARTIAL = 'Here is the first part of a long';
const LIMIT_TEXT = 'Incomplete response returned, reason: max_output_tokens\n\n';
const oneCall = { input: 1200, output: 17, cacheRead: 200, origin: 'prompt-response' };
const normal: TurnExpectation = {
  text: ANSWER,
  answer: { stopReason: 'end_turn' },
  span: { stopReason: 'completed', usage: oneCall },
};
const truncated: TurnExpectation = {
  text: `${PARTIAL}${LIMIT_TEXT}`,
  answer: { stopReason: 'end_turn' },
  span: { stopReason: 'max-tokens', inferredFrom: 'codex-acp/incomplete_text_chunk@2', usage: oneCall },
};
const unauthorized: TurnExpectation = {
  text: '',
  answer: { errorCode: -32000, errorIncludes: 'Authentication required' },
  span: { stopReason: 'error', usage: 'none', errorIncludes: 'Authentication required' },
};

describeRealAgent('codex', {
  normal: [normal],
  'max-tokens': [truncated],
  'limit-once': [truncated, { ...normal, text: 'Continuing: the rest of the answer.' }],
  'auth-fail': [unauthorized],
  tool: [
    {
      ...normal,
      text: 'The tool said: done.',
      span: { stopReason: 'completed', usage: { input: 2400, output: 34, cacheRead: 400, origin: 'prompt-response' } },
      tools: [
        {
          // codex-acp 2.6 names the model's tool in the update's `name` (0.16 named none).
          name: 'exec_command',
          type: 'execute',
          title: 'echo tool-ran | tee tool-ran.txt',
          permissionOutcome: 'allow_once',
          permissionOptionId: 'allow_once',
        },
      ],
    },
  ],
});
