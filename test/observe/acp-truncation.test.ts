import { describe, expect, it } from 'vitest';
import {
  ACP_TRUNCATION_SIGNATURES,
  ACP_TRUNCATION_TABLE_VERSION,
  matchTruncation,
  type AcpTruncationSignature,
} from '../../src/observe/acp-truncation.js';

const CODEX_DATA = {
  message: 'stream disconnected before completion: Incomplete response returned, reason: max_output_tokens',
  codex_error_info: 'other',
};
const CLAUDE_MESSAGE =
  "Internal error: API Error: Claude's response exceeded the 32000 output token maximum. To configure this behavior, set the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable.";

describe('the shipped truncation table', () => {
  it('is version 2: the current adapters first, the archived ones kept as historic rows, each id carrying its version', () => {
    expect(ACP_TRUNCATION_TABLE_VERSION).toBe(2);
    expect(ACP_TRUNCATION_SIGNATURES.map((s) => [s.id, s.agent])).toEqual([
      ['claude-agent-acp/error_kind_max_output_tokens@2', '@agentclientprotocol/claude-agent-acp'],
      ['codex-acp/incomplete_text_chunk@2', '@agentclientprotocol/codex-acp'],
      ['codex-acp/max_output_tokens@1', 'codex-acp'],
      ['claude-agent-acp/output_token_maximum@1', '@zed-industries/claude-agent-acp'],
    ]);
  });

  // As claude-agent-acp 0.101 and codex-acp 2.6 sent them to the real-agent tests' client.
  const CLAUDE_101 = {
    kind: 'error' as const,
    code: -32603,
    message: CLAUDE_MESSAGE.replace('32000', '128000'),
    data: { errorKind: 'max_output_tokens' },
  };
  const CODEX_26 = {
    kind: 'result' as const,
    stopReason: 'end_turn',
    lastText: 'Incomplete response returned, reason: max_output_tokens\n\n',
  };

  it.each([
    ['claude 0.101: the typed error kind, as sent', CLAUDE_101, 'claude-agent-acp/error_kind_max_output_tokens@2'],
    [
      'claude 0.101: the typed error kind without its text (a client with typed failures)',
      { ...CLAUDE_101, message: 'Internal error' },
      'claude-agent-acp/error_kind_max_output_tokens@2',
    ],
    ['codex 2.6: the failure as the last text chunk of an end_turn', CODEX_26, 'codex-acp/incomplete_text_chunk@2'],
    [
      'codex 2.6: without the trailing blank line',
      { ...CODEX_26, lastText: 'Incomplete response returned, reason: max_output_tokens' },
      'codex-acp/incomplete_text_chunk@2',
    ],
  ])('recognises %s', (_name, answer, id) => {
    expect(matchTruncation(answer)?.id).toBe(id);
  });

  it.each([
    ['claude: another error kind', { ...CLAUDE_101, message: 'Internal error', data: { errorKind: 'rate_limit' } }],
    ['claude: the error kind under another code', { ...CLAUDE_101, code: -32000, message: 'Internal error' }],
    [
      'codex 2.6: a reply that quotes the sentence',
      { ...CODEX_26, lastText: 'The log says: Incomplete response returned, reason: max_output_tokens' },
    ],
    [
      'codex 2.6: the sentence before more text',
      { ...CODEX_26, lastText: 'Incomplete response returned, reason: max_output_tokens\n\nThen more.' },
    ],
    [
      'codex 2.6: another reason',
      { ...CODEX_26, lastText: 'Incomplete response returned, reason: content_filter\n\n' },
    ],
    ['codex 2.6: the sentence with another stop reason', { ...CODEX_26, stopReason: 'cancelled' }],
    ['a result without a last text', { kind: 'result' as const, stopReason: 'end_turn' }],
  ])('leaves %s alone', (_name, answer) => {
    expect(matchTruncation(answer)).toBeUndefined();
  });

  it.each([
    [
      'codex: cause in data.message',
      { kind: 'error' as const, code: -32603, message: 'Internal error', data: CODEX_DATA },
      'codex-acp/max_output_tokens@1',
    ],
    [
      'codex: cause in the message itself',
      {
        kind: 'error' as const,
        code: -32603,
        message: 'Internal error: Incomplete response returned, reason: max_output_tokens',
      },
      'codex-acp/max_output_tokens@1',
    ],
    [
      'codex: cause as a string data',
      {
        kind: 'error' as const,
        code: -32603,
        message: 'Internal error',
        data: 'Incomplete response returned, reason: max_output_tokens',
      },
      'codex-acp/max_output_tokens@1',
    ],
    [
      'claude: any output limit',
      { kind: 'error' as const, code: -32603, message: CLAUDE_MESSAGE.replace('32000', '8192') },
      'claude-agent-acp/output_token_maximum@1',
    ],
    [
      'claude: as sent',
      { kind: 'error' as const, code: -32603, message: CLAUDE_MESSAGE },
      'claude-agent-acp/output_token_maximum@1',
    ],
  ])('recognises %s', (_name, answer, id) => {
    expect(matchTruncation(answer)?.id).toBe(id);
  });

  it.each([
    [
      'another internal error',
      {
        kind: 'error' as const,
        code: -32603,
        message: 'Internal error',
        data: { message: 'unexpected status 401 Unauthorized' },
      },
    ],
    ['the right words under another code', { kind: 'error' as const, code: -32602, message: CLAUDE_MESSAGE }],
    [
      'a reason other than the output limit',
      {
        kind: 'error' as const,
        code: -32603,
        message: 'Internal error',
        data: { message: 'Incomplete response returned, reason: content_filter' },
      },
    ],
    [
      'gemini end_turn with quota counts',
      {
        kind: 'result' as const,
        stopReason: 'end_turn',
        meta: { quota: { token_count: { input_tokens: 1200, output_tokens: 17 } } },
      },
    ],
    [
      'an error whose data is an array',
      {
        kind: 'error' as const,
        code: -32603,
        message: 'Internal error',
        data: ['Incomplete response returned, reason: max_output_tokens'],
      },
    ],
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
    const answer = {
      kind: 'result' as const,
      stopReason: 'end_turn',
      meta: { example: { finishReason: 'MAX_TOKENS' } },
    };
    expect([matchTruncation(answer, [META])?.id, matchTruncation(answer, [META])?.id]).toEqual([
      'example/finish_reason@1',
      'example/finish_reason@1',
    ]);
  });

  it.each([
    [
      'another stop reason',
      { kind: 'result' as const, stopReason: 'refusal', meta: { example: { finishReason: 'MAX_TOKENS' } } },
    ],
    ['another value', { kind: 'result' as const, stopReason: 'end_turn', meta: { example: { finishReason: 'STOP' } } }],
    [
      'a value that is not a string',
      { kind: 'result' as const, stopReason: 'end_turn', meta: { example: { finishReason: 2 } } },
    ],
    [
      'a path through a non-object',
      { kind: 'result' as const, stopReason: 'end_turn', meta: { example: 'MAX_TOKENS' } },
    ],
    ['no _meta', { kind: 'result' as const, stopReason: 'end_turn' }],
    ['an error answer', { kind: 'error' as const, code: -32603, message: 'MAX_TOKENS' }],
  ])('does not match %s', (_name, answer) => {
    expect(matchTruncation(answer, [META])).toBeUndefined();
  });

  it('an empty table recognises nothing', () => {
    expect(matchTruncation({ kind: 'error', code: -32603, message: CLAUDE_MESSAGE }, [])).toBeUndefined();
  });
});
