/**
 * codex-acp 0.16 (its linux-x64 binary) against the scripted model server's
 * OpenAI Responses stream, direct and through `subagent-otel proxy`.
 * Codex answers a truncated response with JSON-RPC -32603 (the cause in
 * `data.message`), reports only a context-window figure (`usage_update`),
 * no token counts, and asks permission before it announces a tool call.
 * Needs the agents installed: `npm ci --prefix test/agents/pinned`.
 */
import { describeRealAgent, type TurnExpectation } from './real-agent-expectations.js';

const ANSWER = 'The answer is 42.';
const PARTIAL = 'Here is the first part of a long';
const normal: TurnExpectation = { text: ANSWER, answer: { stopReason: 'end_turn' }, span: { stopReason: 'completed', usage: 'none' } };
const truncated: TurnExpectation = {
  text: PARTIAL,
  answer: { errorCode: -32603, errorIncludes: 'Incomplete response returned, reason: max_output_tokens' },
  span: { stopReason: 'max-tokens', inferredFrom: 'codex-acp/max_output_tokens@1', usage: 'none', errorIncludes: 'max_output_tokens' },
};
const unauthorized: TurnExpectation = {
  text: '',
  answer: { errorCode: -32603, errorIncludes: 'unexpected status 401 Unauthorized' },
  span: { stopReason: 'error', usage: 'none', errorIncludes: '401 Unauthorized' },
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
      tools: [
        {
          // codex names no tool of its own on the wire, and a title (a command line) is never a name.
          name: undefined,
          type: 'execute',
          title: 'echo tool-ran | tee tool-ran.txt',
          permissionOutcome: 'allow_once',
          permissionOptionId: 'approved',
        },
      ],
    },
  ],
});
