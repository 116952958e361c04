import { describe, expect, it } from 'vitest';
import {
  ACP_TRUNCATION_SIGNATURES,
  ACP_TRUNCATION_TABLE_VERSION,
  matchTruncation,
  type AcpTruncationSignature,
} from '../../src/observe/acp-truncation.js';

const CODEX_DATA = { message: 'stream disconnected before completion: Incomplete response returned, reason: max_output_tokens', codex_error_info: 'other' };
const CLAUDE_MESSAGE =
  "Internal error: API Error: Claude's response exceeded the 32000 output token maximum. To configure this behavior, set the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable.";

describe('the shipped truncation table', () => {
  it('is version 1 with one entry per agent that signals truncation, each id carrying the version', () => {
    expect(ACP_TRUNCATION_TABLE_VERSION).toBe(1);
    expect(ACP_TRUNCATION_SIGNATURES.map((s) => [s.id, s.agent])).toEqual([
      ['codex-acp/max_output_tokens@1', 'codex-acp'],
      ['claude-agent-acp/output_token_maximum@1', '@zed-industries/claude-agent-acp'],
    ]);
  });

  it.each([
    ['codex: cause in data.message', { kind: 'error' as const, code: -32603, message: 'Internal error', data: CODEX_DATA }, 'codex-acp/max_output_tokens@1'],
    [
      'codex: cause in the message itself',
      { kind: 'error' as const, code: -32603, message: 'Internal error: Incomplete response returned, reason: max_output_tokens' },
      'codex-acp/max_output_tokens@1',
    ],
    ['codex: cause as a string data', { kind: 'error' as const, code: -32603, message: 'Internal error', data: 'Incomplete response returned, reason: max_output_tokens' }, 'codex-acp/max_output_tokens@1'],
    ['claude: any output limit', { kind: 'error' as const, code: -32603, message: CLAUDE_MESSAGE.replace('32000', '8192') }, 'claude-agent-acp/output_token_maximum@1'],
    ['claude: as sent', { kind: 'error' as const, code: -32603, message: CLAUDE_MESSAGE }, 'claude-agent-acp/output_token_maximum@1'],
  ])('recognises %s', (_name, answer, id) => {
    expect(matchTruncation(answer)?.id).toBe(id);
  });

  it.each([
    ['another internal error', { kind: 'error' as const, code: -32603, message: 'Internal error', data: { message: 'unexpected status 401 Unauthorized' } }],
    ['the right words under another code', { kind: 'error' as const, code: -32602, message: CLAUDE_MESSAGE }],
    ['a reason other than the output limit', { kind: 'error' as const, code: -32603, message: 'Internal error', data: { message: 'Incomplete response returned, reason: content_filter' } }],
    ['gemini end_turn with quota counts', { kind: 'result' as const, stopReason: 'end_turn', meta: { quota: { token_count: { input_tokens: 1200, output_tokens: 17 } } } }],
    ['an error whose data is an array', { kind: 'error' as const, code: -32603, message: 'Internal error', data: ['Incomplete response returned, reason: max_output_tokens'] }],
  ])('leaves %s alone', (_name, answer) => {
    expect(matchTruncation(answer)).toBeUndefined();
  });
});

describe('matchTruncation over a given table', () => {
  const META: AcpTruncationSignature = {
    id: 'example/finish_reason@1',
    agent: 'example',
    agentVersions: '1.x',
    kind: 'result',
    stopReason: 'end_turn',
    metaPath: ['example', 'finishReason'],
    pattern: /^MAX_TOKENS$/g,
  };

  it('recognises a _meta value on a result with the stop reason named, every time (a global pattern keeps no state)', () => {
    const answer = { kind: 'result' as const, stopReason: 'end_turn', meta: { example: { finishReason: 'MAX_TOKENS' } } };
    expect([matchTruncation(answer, [META])?.id, matchTruncation(answer, [META])?.id]).toEqual(['example/finish_reason@1', 'example/finish_reason@1']);
  });

  it.each([
    ['another stop reason', { kind: 'result' as const, stopReason: 'refusal', meta: { example: { finishReason: 'MAX_TOKENS' } } }],
    ['another value', { kind: 'result' as const, stopReason: 'end_turn', meta: { example: { finishReason: 'STOP' } } }],
    ['a value that is not a string', { kind: 'result' as const, stopReason: 'end_turn', meta: { example: { finishReason: 2 } } }],
    ['a path through a non-object', { kind: 'result' as const, stopReason: 'end_turn', meta: { example: 'MAX_TOKENS' } }],
    ['no _meta', { kind: 'result' as const, stopReason: 'end_turn' }],
    ['an error answer', { kind: 'error' as const, code: -32603, message: 'MAX_TOKENS' }],
  ])('does not match %s', (_name, answer) => {
    expect(matchTruncation(answer, [META])).toBeUndefined();
  });

  it('an empty table recognises nothing', () => {
    expect(matchTruncation({ kind: 'error', code: -32603, message: CLAUDE_MESSAGE }, [])).toBeUndefined();
  });
});
