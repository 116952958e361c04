/**
 * claude-agent-acp 0.23 against the scripted model server's Anthropic
 * Messages stream, direct and through `subagent-otel proxy`. Claude retries a
 * truncated response by itself (three times: the client sees the partial
 * text four times) and then answers JSON-RPC -32603; it reports usage in the
 * prompt response and names its own tool (`Bash`) in `_meta.claudeCode`.
 * Needs the agents installed: `npm ci --prefix test/agents/pinned`.
 */
import { describeRealAgent, type TurnExpectation } from './real-agent-expectations.js';

const PARTIAL = 'Here is the first part of a long';
const oneCall = { input: 1400, output: 17, cacheRead: 200, origin: 'prompt-response' };
const twoCalls = { input: 2800, output: 34, cacheRead: 400, origin: 'prompt-response' };
const normal: TurnExpectation = { text: 'The answer is 42.', answer: { stopReason: 'end_turn' }, span: { stopReason: 'completed', usage: oneCall } };

describeRealAgent('claude', {
  normal: [normal],
  'max-tokens': [
    {
      text: PARTIAL.repeat(4),
      answer: { errorCode: -32603, errorIncludes: "API Error: Claude's response exceeded the 32000 output token maximum" },
      span: {
        stopReason: 'max-tokens',
        inferredFrom: 'claude-agent-acp/output_token_maximum@1',
        usage: 'none',
        errorIncludes: 'exceeded the 32000 output token maximum',
      },
    },
  ],
  'limit-once': [
    { ...normal, text: `${PARTIAL}Continuing: the rest of the answer.`, span: { stopReason: 'completed', usage: twoCalls } },
    { ...normal, text: 'Continuing: the rest of the answer.' },
  ],
  'auth-fail': [
    { text: '', answer: { errorCode: -32603, errorIncludes: 'Invalid API key' }, span: { stopReason: 'error', usage: 'none', errorIncludes: 'Invalid API key' } },
  ],
  tool: [
    {
      text: 'The tool said: done.',
      answer: { stopReason: 'end_turn' },
      span: { stopReason: 'completed', usage: twoCalls },
      tools: [
        {
          name: 'Bash',
          type: 'execute',
          title: 'echo tool-ran | tee tool-ran.txt',
          permissionOutcome: 'allow_once',
          permissionOptionId: 'allow',
        },
      ],
    },
  ],
});
