/**
 * gemini-cli 0.61 (`--acp`) against the scripted model server's Gemini
 * `streamGenerateContent` stream, direct and through `subagent-otel proxy`.
 * Gemini answers a response cut at MAX_TOKENS with `end_turn` and nothing
 * else that differs from a finished turn, so the span says `completed`: no
 * signal on the wire to infer from. It reports per-turn token counts in the
 * prompt response's `_meta.quota.token_count`, answers a 401 with JSON-RPC
 * error code 401, and announces a tool only in `session/request_permission`.
 * Needs the agents installed: `npm ci --prefix test/agents/pinned`.
 */
import { describeRealAgent, type TurnExpectation } from './real-agent-expectations.js';

const oneCall = { input: 1200, output: 17, origin: 'meta-quota' };
const normal: TurnExpectation = {
  text: 'The answer is 42.',
  answer: { stopReason: 'end_turn' },
  span: { stopReason: 'completed', usage: oneCall },
};
const cut: TurnExpectation = { ...normal, text: 'Here is the first part of a long' };

describeRealAgent('gemini', {
  normal: [normal],
  'max-tokens': [cut],
  'limit-once': [cut, { ...normal, text: 'Continuing: the rest of the answer.' }],
  'auth-fail': [
    {
      text: '',
      answer: { errorCode: 401, errorIncludes: 'API key not valid' },
      span: { stopReason: 'error', usage: 'none', errorIncludes: 'API key not valid' },
    },
  ],
  tool: [
    {
      text: 'The tool said: done.',
      answer: { stopReason: 'end_turn' },
      span: { stopReason: 'completed', usage: { input: 2400, output: 34, origin: 'meta-quota' } },
      tools: [
        {
          // gemini names its tool only inside the call id (run_shell_command__...), and a title is never a name.
          name: undefined,
          type: 'execute',
          title: 'echo tool-ran | tee tool-ran.txt',
          permissionOutcome: 'allow_once',
          permissionOptionId: 'proceed_once',
        },
      ],
    },
  ],
});
