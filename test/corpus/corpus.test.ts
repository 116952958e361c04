/**
 * The corpus check as a whole: its independence from the project's readers,
 * and its reading of what a real parent received. Its parts' tests are at
 * their paths (compare, sniff, claude-code).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeCodeExpectations } from '../../src/corpus/claude-code.js';
import { normaliseText } from '../../src/corpus/compare.js';
import { listFiles, readTranscriptFile } from '../../src/corpus/records.js';
import { ROOT } from '../helpers/paths.js';
import { requireFolder, SHARED_TRANSCRIPTS, SHARED_TRANSCRIPTS_HOW } from '../helpers/required-folder.js';

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
