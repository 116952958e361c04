/**
 * The corpus check's comparison of a run's output with what its parent
 * received (`compareReport`: each listed normalisation, a cut report, a
 * difference) and the text it takes of a run's output (`outputText`).
 */
import { describe, expect, it } from 'vitest';
import { compareReport, normaliseText, outputText } from '../../src/corpus/compare.js';

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

describe('outputText', () => {
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
