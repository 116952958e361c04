/**
 * The Gemini CLI record schemas: each record kind told apart in the order
 * gemini-cli's own loader tests them (chatRecordingService.ts lines 168-342
 * at gemini-cli commit 5411f113),
 * defects inside a record reported without losing the rest, and the
 * sniffing helpers for metadata lines and legacy documents.
 */
import { describe, expect, it } from 'vitest';
import {
  isGeminiCliMetadata,
  legacyDocumentSessionId,
  parseGeminiCliLine,
  parseGeminiCliValue,
} from '../../../src/transcripts/gemini-cli/records.js';

describe('parseGeminiCliLine', () => {
  it('reads the metadata line', () => {
    const parsed = parseGeminiCliLine(
      '{"sessionId":"s1","projectHash":"p","startTime":"2026-08-20T10:00:00.000Z","lastUpdated":"2026-08-20T10:00:01.000Z","kind":"subagent","directories":["/w"]}',
    );
    expect(parsed).toEqual({
      ok: true,
      value: {
        record: {
          kind: 'metadata',
          metadata: {
            sessionId: 's1',
            projectHash: 'p',
            startTime: '2026-08-20T10:00:00.000Z',
            lastUpdated: '2026-08-20T10:00:01.000Z',
            kind: 'subagent',
          },
        },
        issues: [],
      },
    });
  });

  it('reads a whole legacy record written on one line as metadata with its messages', () => {
    const parsed = parseGeminiCliLine(
      '{"sessionId":"s1","projectHash":"p","messages":[{"id":"m1","type":"user","content":"hi"},{"type":"user"}]}',
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.record).toEqual({
      kind: 'metadata',
      metadata: { sessionId: 's1', projectHash: 'p' },
      messages: [{ id: 'm1', type: 'user', content: 'hi' }],
    });
    expect(parsed.value.issues.map((issue) => issue.path)).toEqual(['messages.1']);
  });

  it('reads a gemini message with its tool calls, thoughts, tokens and model', () => {
    const line = JSON.stringify({
      id: 'g1',
      timestamp: '2026-08-20T10:00:03.000Z',
      type: 'gemini',
      content: 'Done.',
      thoughts: [{ subject: 'Plan', description: 'Read it.', timestamp: '2026-08-20T10:00:02.000Z' }],
      toolCalls: [
        {
          id: 't1',
          name: 'read_file',
          args: { path: 'a' },
          status: 'success',
          timestamp: '2026-08-20T10:00:04.000Z',
          result: [],
          agentId: 'child',
        },
      ],
      tokens: { input: 10, output: 2, cached: 4, thoughts: 3, tool: 1, total: 16 },
      model: 'gemini-2.5-pro',
      extra: 'kept by the loose schema, not copied',
    });
    expect(parseGeminiCliLine(line)).toEqual({
      ok: true,
      value: {
        record: {
          kind: 'message',
          message: {
            id: 'g1',
            timestamp: '2026-08-20T10:00:03.000Z',
            type: 'gemini',
            content: 'Done.',
            toolCalls: [
              {
                id: 't1',
                name: 'read_file',
                args: { path: 'a' },
                status: 'success',
                timestamp: '2026-08-20T10:00:04.000Z',
                result: [],
                agentId: 'child',
              },
            ],
            thoughts: [{ subject: 'Plan', description: 'Read it.', timestamp: '2026-08-20T10:00:02.000Z' }],
            tokens: { input: 10, output: 2, cached: 4, thoughts: 3, tool: 1, total: 16 },
            model: 'gemini-2.5-pro',
          },
        },
        issues: [],
      },
    });
  });

  it('keeps a message whose tool call, tokens or model is malformed, reporting each part left out', () => {
    const parsed = parseGeminiCliLine(
      '{"id":"g1","type":"gemini","content":"x","toolCalls":[{"id":"t1"},{"id":"t2","name":"ls"}],"tokens":"many","model":7}',
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.record).toEqual({
      kind: 'message',
      message: { id: 'g1', type: 'gemini', content: 'x', toolCalls: [{ id: 't2', name: 'ls' }] },
    });
    expect(parsed.value.issues.map((issue) => issue.message)).toEqual([
      'toolCalls.0.name: expected string, received nothing (field missing)',
      'tokens: expected object, received string "many"',
      'model: expected string, received number 7',
    ]);
  });

  it('takes tokens: null as a message without tokens', () => {
    const parsed = parseGeminiCliLine('{"id":"g1","type":"gemini","content":"x","tokens":null}');
    expect(parsed.ok && parsed.value.record).toEqual({
      kind: 'message',
      message: { id: 'g1', type: 'gemini', content: 'x', tokens: null },
    });
  });

  it('reads $set updates and a messages checkpoint', () => {
    expect(parseGeminiCliLine('{"$set":{"lastUpdated":"t","summary":"s"}}')).toEqual({
      ok: true,
      value: { record: { kind: 'set', fields: { lastUpdated: 't', summary: 's' } }, issues: [] },
    });
    const checkpoint = parseGeminiCliLine(
      '{"$set":{"messages":[{"id":"a","type":"user","content":"q"},42],"lastUpdated":"t"}}',
    );
    expect(checkpoint.ok && checkpoint.value.record.kind === 'set' && checkpoint.value.record.messages).toEqual([
      { id: 'a', type: 'user', content: 'q' },
    ]);
    expect(checkpoint.ok && checkpoint.value.issues.map((issue) => issue.path)).toEqual(['$set.messages.1']);
  });

  it('tests $rewindTo before id, as the loader does', () => {
    expect(parseGeminiCliLine('{"$rewindTo":"m3","id":"ignored"}')).toEqual({
      ok: true,
      value: { record: { kind: 'rewind', messageId: 'm3' }, issues: [] },
    });
  });

  it('accepts objects of no known shape as unknown records', () => {
    expect(parseGeminiCliLine('{"somethingElse":true}')).toEqual({
      ok: true,
      value: { record: { kind: 'unknown' }, issues: [] },
    });
    expect(parseGeminiCliLine('{"$set":"not an object"}')).toEqual({
      ok: true,
      value: { record: { kind: 'unknown' }, issues: [] },
    });
  });

  it('rejects text that is not JSON and JSON that is not an object', () => {
    expect(parseGeminiCliLine('{"id": "g1", ').ok).toBe(false);
    const notJson = parseGeminiCliLine('nope');
    expect(!notJson.ok && notJson.error.code).toBe('not-json');
    const array = parseGeminiCliLine('[1,2]');
    expect(!array.ok && array.error.message).toBe('(root): expected a JSON object, received array(2)');
    const nul = parseGeminiCliValue(null);
    expect(!nul.ok && nul.error.code).toBe('not-object');
  });
});

describe('isGeminiCliMetadata', () => {
  it('is true for the metadata record only', () => {
    expect(isGeminiCliMetadata({ sessionId: 's', projectHash: 'p', kind: 'main' })).toBe(true);
    expect(isGeminiCliMetadata({ sessionId: 's', projectHash: 'p', id: 'm1' })).toBe(false);
    expect(isGeminiCliMetadata({ sessionId: 's' })).toBe(false);
    expect(isGeminiCliMetadata({ $set: {}, sessionId: 's', projectHash: 'p' })).toBe(false);
    expect(isGeminiCliMetadata(['s'])).toBe(false);
  });
});

describe('legacyDocumentSessionId', () => {
  it('reads the session id from the start of a pretty-printed document', () => {
    expect(
      legacyDocumentSessionId('{\n  "sessionId": "809f21a5-9153-422a-89cd-d4bc4da2bec7",\n  "projectHash": "c2d2cd48'),
    ).toBe('809f21a5-9153-422a-89cd-d4bc4da2bec7');
    expect(legacyDocumentSessionId('\uFEFF{"sessionId":"a\\"b","projectHash":"')).toBe('a"b');
  });

  it('is undefined for other JSON documents', () => {
    expect(legacyDocumentSessionId('{\n  "projectHash": "p",\n  "sessionId": "s"')).toBeUndefined();
    expect(legacyDocumentSessionId('[{"sessionId": "s", "messageId": 0}]')).toBeUndefined();
    expect(legacyDocumentSessionId('{"sessionId": "s"}')).toBeUndefined();
  });
});
