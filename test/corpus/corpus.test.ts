/**
 * The corpus check's own parts: the comparison of a run's output with what
 * its parent received (each listed normalisation, a cut report, a
 * difference), the format sniff (the first identifying record anywhere, new
 * record types included), and its independence from the project's readers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeCodeExpectations, withoutAgentTrailer } from '../../src/corpus/claude-code.js';
import { compareReport, normaliseText, outputText } from '../../src/corpus/compare.js';
import { listFiles, readTranscriptFile } from '../../src/corpus/records.js';
import { recordFormat, sniff } from '../../src/corpus/sniff.js';
import { ROOT } from '../helpers/paths.js';
import { requireFolder, SHARED_TRANSCRIPTS, SHARED_TRANSCRIPTS_HOW } from '../helpers/required-folder.js';

describe('compareReport', () => {
  it('is equal after line ends, trailing whitespace and blank end lines', () => {
    expect(normaliseText('\n\na  \r\nb\t\n\n')).toBe('a\nb');
    expect(compareReport('a\nb', 'a  \r\nb\n\n')).toEqual({ equal: true, applied: [] });
  });

  it('reads escaped backslashes and one inserted line as the altered report, naming them', () => {
    expect(compareReport('C:\\x\\y', 'C:\\\\x\\\\y')).toEqual({ equal: true, applied: ['backslashes escaped'] });
    expect(compareReport('one\ntwo', 'one\n[flagged]\ntwo')).toEqual({
      equal: true,
      applied: ['a marker line inserted ("[flagged]")'],
    });
    expect(compareReport('one\\\ntwo', 'one\\\\\n[flagged]\ntwo').applied).toEqual([
      'backslashes escaped',
      'a marker line inserted ("[flagged]")',
    ]);
  });

  it('never takes two inserted lines, or a changed line, for a marker', () => {
    expect(compareReport('one\ntwo', 'one\n[a]\n[b]\ntwo').equal).toBe(false);
    expect(compareReport('one\ntwo', 'one\ntwo!\n[a]').equal).toBe(false);
  });

  it('calls a received prefix a cut report with both lengths, never equal', () => {
    const c = compareReport('x'.repeat(3000), 'x'.repeat(2500));
    expect(c.equal).toBe(false);
    expect(c.detail).toBe("a cut report: the parent received 2500 of the output's 3000 characters");
  });

  it('says where two different texts part', () => {
    expect(compareReport('abcdef', 'abcXef').detail).toBe(
      'the output (6 characters) and what the parent received (6) differ from character 3: "def" vs "Xef"',
    );
  });
});

describe('the texts compared', () => {
  it("drops Claude Code's agentId trailer and its usage block", () => {
    expect(withoutAgentTrailer('The answer.\nagentId: a1 (for resuming)\n<usage>total_tokens: 5</usage>')).toBe(
      'The answer.',
    );
    expect(withoutAgentTrailer('agentId: a1 (for resuming)')).toBe('');
    expect(withoutAgentTrailer('No trailer; agentId: a1 mid-line stays.')).toBe(
      'No trailer; agentId: a1 mid-line stays.',
    );
  });

  it("takes a Gemini CLI subagent's complete_task result as its answer, else its text", () => {
    const blocks = [
      { type: 'text', text: 'Found it.' },
      { type: 'tool-call', name: 'complete_task', arguments: '{"result":"In retry.ts."}' },
    ];
    expect(outputText(blocks, 'gemini-answer')).toBe('In retry.ts.');
    expect(outputText(blocks, 'text')).toBe('Found it.');
    expect(
      outputText(
        [
          { type: 'text', text: 'a' },
          { type: 'reasoning', text: 'r' },
          { type: 'text', text: 'b' },
        ],
        'gemini-answer',
      ),
    ).toBe('a\nb');
    expect(outputText(undefined, 'text')).toBe('');
  });
});

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

describe('src/corpus', () => {
  it("imports nothing of the project's: only Node built-ins and its own modules (it must not share the readers it checks)", () => {
    const dir = join(ROOT, 'src', 'corpus');
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const specs = [
        ...readFileSync(join(dir, file), 'utf8').matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+'([^']+)'/gms),
      ].map((m) => m[1] ?? '');
      expect(
        specs.filter((s) => !s.startsWith('node:') && !/^\.\/[\w-]+\.js$/.test(s)),
        file,
      ).toEqual([]);
    }
  });
});

describe("the check's own reading of what a parent received", () => {
  it('gives, for the real 2.1.39 subagent a881341, the text a separate script took from its parent (../shared/transcripts/claude-code/expected)', (context) => {
    const shared = requireFolder(context, SHARED_TRANSCRIPTS, SHARED_TRANSCRIPTS_HOW);
    const real = join(shared, 'claude-code', 'real');
    const files = listFiles([real]).map(readTranscriptFile);
    const run = claudeCodeExpectations(files).find(
      (e) => e.runIds[0] === 'claude-code:258c7280-ae70-4798-800f-63464d01a85d/agent-a881341',
    );
    const expected = readFileSync(
      join(shared, 'claude-code', 'expected', '258c7280-agent-a881341-received.txt'),
      'utf8',
    );
    expect(run?.nesting).toEqual({
      kind: 'call',
      callId: 'toolu_01VmaERAwhb19LGUwu9GenaK',
      parentRunIds: ['claude-code:258c7280-ae70-4798-800f-63464d01a85d'],
    });
    expect(
      run?.received !== undefined && 'text' in run.received ? normaliseText(run.received.text) : run?.received,
    ).toBe(normaliseText(expected));
  });
});
