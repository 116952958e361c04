/** The corpus check's format sniff (`sniff`, `recordFormat`): the first identifying record anywhere, new record types included. */
import { describe, expect, it } from 'vitest';
import { recordFormat, sniff } from '../../src/corpus/sniff.js';

describe('sniff', () => {
  it('recognises a Claude Code record of a type nobody listed, and the other formats by their envelopes', () => {
    expect(recordFormat({ type: 'permission-mode', permissionMode: 'default', sessionId: 's' })?.format).toBe(
      'claude-code',
    );
    expect(recordFormat({ type: 'some-future-record', sessionId: 's', uuid: 'u' })?.format).toBe('claude-code');
    expect(recordFormat({ type: 'summary', summary: 'x', leafUuid: 'u' })?.format).toBe('claude-code');
    expect(recordFormat({ timestamp: 't', type: 'event_msg', payload: { type: 'task_complete' } })?.format).toBe(
      'codex',
    );
    expect(recordFormat({ sessionId: 's', projectHash: 'h', startTime: 't' })?.format).toBe('gemini-cli');
    expect(recordFormat({ id: 'm', timestamp: 't', type: 'gemini', content: 'x' })?.format).toBe('gemini-cli');
    expect(recordFormat({ type: 'console', payload: { type: 'log' }, sessionId: 's', timestamp: 1 })?.format).toBe(
      'gemini-cli',
    );
    expect(recordFormat({ jsonrpc: '2.0', method: 'x' })).toBeUndefined();
    expect(recordFormat([1, 2])).toBeUndefined();
  });

  it('is decided by the first record that identifies a format, wherever it is', () => {
    const lines = [
      { n: 1, value: undefined },
      { n: 2, value: { unknown: true } },
      { n: 3, value: { type: 'queue-operation', sessionId: 's' } },
    ];
    expect(sniff({ path: 'f.jsonl', name: 'f.jsonl', lines, isDocument: false })).toEqual({
      file: 'f.jsonl',
      format: 'claude-code',
      evidence: 'line 3: a Claude Code "queue-operation" record',
    });
    expect(sniff({ path: 'g.jsonl', name: 'g.jsonl', lines: lines.slice(0, 2), isDocument: false })).toEqual({
      file: 'g.jsonl',
      format: undefined,
      evidence: '1 JSON records, none of a known shape (first: unknown)',
    });
  });
});
