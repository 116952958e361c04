/**
 * claude-agent-acp 0.101 (`@agentclientprotocol/claude-agent-acp`, Claude
 * Code through `@anthropic-ai/claude-agent-sdk`) against the scripted model
 * server's Anthropic Messages stream, direct and through `subagent-otel
 * proxy`. Claude retries a truncated response by itself (three times: the
 * client sees the partial text four times), then sends the error as a text
 * chunk and answers JSON-RPC -32603 with `data.errorKind:
 * "max_output_tokens"`; a 401 becomes -32000 `Authentication required`
 * (the provider's words only in a text chunk). It reports usage in the
 * prompt response and names its own tool (`Bash`) in `_meta.claudeCode`.
 * Needs the agents installed: `npm ci --prefix test/agents/pinned`.
 */
import { describeRealAgent, type TurnExpectation } from './real-agent-expectations.js';

const PARTIAL = 'Here is the first part of a long';
const LIMIT_ERROR =
  "API Error: Claude's response exceeded the 128000 output token maximum. To configure this behavior, set the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable.";
const oneCall = { input: 1400, output: 17, cacheRead: 200, origin: 'prompt-response' };
const twoCalls = { input: 2800, output: 34, cacheRead: 400, origin: 'prompt-response' };
const normal: TurnExpectation = {
  text: 'The answer is 42.',
  answer: { stopReason: 'end_turn' },
  span: { stopReason: 'completed', usage: oneCall },
};

describeRealAgent('claude', {
  normal: [normal],
  'max-tokens': [
    {
      text: `${PARTIAL.repeat(4)}${LIMIT_ERROR}`,
      answer: { errorCode: -32603, errorIncludes: LIMIT_ERROR },
      span: {
        stopReason: 'max-tokens',
        inferredFrom: 'claude-agent-acp/error_kind_max_output_tokens@2',
        usage: 'none',
        errorIncludes: 'exceeded the 128000 output token maximum',
      },
    },
  ],
  'limit-once': [
    {
      ...normal,
      text: `${PARTIAL}Continuing: the rest of the answer.`,
      span: { stopReason: 'completed', usage: twoCalls },
    },
    { ...normal, text: 'Continuing: the rest of the answer.' },
  ],
  'auth-fail': [
    {
      text: 'Invalid API key · Fix external API key',
      answer: { errorCode: -32000, errorIncludes: 'Authentication required' },
      span: { stopReason: 'error', usage: 'none', errorIncludes: 'Authentication required' },
    },
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
          permissionOptionId: 'allow-once',
        },
      ],
    },
  ],
});
