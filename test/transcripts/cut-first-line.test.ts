/**
 * The formats let the parsed head answer, and judge a file by the beginning
 * of its line 1 (or document) only when the sniff window cuts it: a line 1
 * that ends within the head and does not parse is nobody's.
 */
import { describe, expect, it } from 'vitest';
import { classifyClaudeCode } from '../../src/transcripts/claude-code/files.js';
import { classifyCodex } from '../../src/transcripts/codex/files.js';
import { classifyGeminiCli } from '../../src/transcripts/gemini-cli/files.js';

const CLAUDE_START = '{"parentUuid":null,"isSidechain":false,"sessionId":"s-1","agentId":"a1","message":{"content":"';
const CODEX_START =
  '{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"t-1","source":"cli","base_instructions":"';

describe('a line 1 cut by the sniff window', () => {
  it('is judged by its beginning for Claude Code; a whole line 1 that is not JSON is not', () => {
    const cut = classifyClaudeCode({ path: '/p/s.jsonl', firstLine: undefined, prefix: CLAUDE_START, records: [] });
    expect(cut?.facts).toEqual({ role: 'main', sessionId: 's-1' });
    const broken = `${CLAUDE_START}x"}},\n`;
    expect(classifyClaudeCode({ path: '/p/s.jsonl', firstLine: undefined, prefix: broken, records: [] })).toBe(
      undefined,
    );
  });

  it('is judged by its beginning for Codex; a whole line 1 that is not JSON is not', () => {
    expect(classifyCodex({ path: '/c/rollout.jsonl', firstLine: undefined, prefix: CODEX_START })?.facts).toMatchObject(
      { threadId: 't-1' },
    );
    expect(classifyCodex({ path: '/c/rollout.jsonl', firstLine: undefined, prefix: `${CODEX_START}x"}}}\n` })).toBe(
      undefined,
    );
  });
});

describe('a legacy Gemini CLI document', () => {
  const path = '/h/.gemini/tmp/p/chats/session-2026-01-01T00-00-s.json';

  it('is read by the record parser when the head holds all of it', () => {
    // Keys in another order than Gemini CLI writes them: the parser answers, not the order of the first keys.
    const whole = JSON.stringify({ projectHash: 'p', sessionId: 's-2', messages: [] }, null, 2);
    expect(classifyGeminiCli({ path, firstLine: undefined, prefix: whole })?.facts).toEqual({
      sessionId: 's-2',
      kind: 'main',
      layout: 'legacy',
    });
    // Begins like a document, but the parser reads a message record: not a recording.
    const message = JSON.stringify({ sessionId: 's-3', projectHash: 'p', id: 'm1', type: 'user' }, null, 2);
    expect(classifyGeminiCli({ path, firstLine: undefined, prefix: message })).toBe(undefined);
  });

  it('is judged by its first keys when it is longer than the head', () => {
    const cut = '{\n  "sessionId": "s-4",\n  "projectHash": "p",\n  "messages": [\n    {\n      "id": "m1",';
    expect(classifyGeminiCli({ path, firstLine: undefined, prefix: cut })?.facts['sessionId']).toBe('s-4');
  });
});
