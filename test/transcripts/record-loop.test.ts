/**
 * The one record loop of the transcript formats: its policy for torn tails,
 * unreadable files, defective lines and too many problems, on real files.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TranscriptFile, TranscriptProblem, TranscriptReadContext } from '../../src/transcripts/format.js';
import { MAX_PROBLEMS_PER_FILE, readRecords, type RecordDefect } from '../../src/transcripts/record-loop.js';

const dir = mkdtempSync(join(tmpdir(), 'record-loop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function fileOf(name: string, text: string, mtimeMs = 0): TranscriptFile {
  const path = join(dir, name);
  writeFileSync(path, text);
  return { path, size: Buffer.byteLength(text), mtimeMs, info: { format: 'claude-code', kind: 'session', facts: {} } };
}

function context(problems: TranscriptProblem[], live?: TranscriptReadContext['live']): TranscriptReadContext {
  return {
    listener: { onRunStart: () => undefined, onRunEnd: () => undefined },
    onProblem: (p) => problems.push(p),
    onBytes: () => undefined,
    pause: () => undefined,
    ...(live !== undefined ? { live } : {}),
  };
}

const handlers = (seen: unknown[], onDefect?: (d: RecordDefect, line: number) => 'report' | 'stop') => ({
  parse: (text: string): { n: number } | RecordDefect => {
    try {
      return { n: (JSON.parse(text) as { n: number }).n };
    } catch {
      return { code: 'not-json', message: 'not JSON' };
    }
  },
  isDefect: (v: { n: number } | RecordDefect): v is RecordDefect => 'code' in v,
  onRecord: (r: { n: number }) => {
    seen.push(r.n);
    return r.n === 99 ? ('stop' as const) : ('continue' as const);
  },
  ...(onDefect !== undefined ? { onDefect } : {}),
});

describe('readRecords', () => {
  it('reads records, passes blank lines over and reports a bad line at its number, keeping the rest', async () => {
    const problems: TranscriptProblem[] = [];
    const seen: unknown[] = [];
    const result = await readRecords(
      fileOf('a.jsonl', '{"n":1}\n\nnope\n{"n":2}\n'),
      context(problems),
      handlers(seen),
    );
    expect([seen, result]).toEqual([[1, 2], { records: 2, problems: 1, isSkipped: false }]);
    expect(problems.map((p) => [p.line, p.code, p.scope, p.message])).toEqual([
      [3, 'not-json', 'record', 'not JSON; skipped'],
    ]);
  });

  it('a torn last line is no problem while the file is still being written, and one once it is quiet', async () => {
    const torn = '{"n":1}\n{"n":';
    const live: TranscriptReadContext['live'] = { now: 10_000, idleMs: 5000, isReported: () => false };
    const busy: TranscriptProblem[] = [];
    await readRecords(fileOf('b.jsonl', torn, 9000), context(busy, live), handlers([]));
    const quiet: TranscriptProblem[] = [];
    await readRecords(fileOf('c.jsonl', torn, 1000), context(quiet, live), handlers([]));
    expect([busy.length, quiet.map((p) => p.code)]).toEqual([0, ['torn-tail']]);
  });

  it(`stops after ${MAX_PROBLEMS_PER_FILE} problems, keeping what came before`, async () => {
    const problems: TranscriptProblem[] = [];
    const seen: unknown[] = [];
    const text = `{"n":1}\n${'x\n'.repeat(MAX_PROBLEMS_PER_FILE + 5)}{"n":2}\n`;
    const result = await readRecords(fileOf('d.jsonl', text), context(problems), handlers(seen));
    expect([seen, result.records, problems.length, problems.at(-1)?.code]).toEqual([
      [1],
      1,
      MAX_PROBLEMS_PER_FILE + 1,
      'too-many-problems',
    ]);
  });

  it('a format may stop at a record or at a defect; a missing file is skipped as a whole', async () => {
    const seen: unknown[] = [];
    expect((await readRecords(fileOf('e.jsonl', '{"n":99}\n{"n":3}\n'), context([]), handlers(seen))).records).toBe(1);
    expect(seen).toEqual([99]);
    const stopped = await readRecords(
      fileOf('f.jsonl', 'bad\n{"n":4}\n'),
      context([]),
      handlers([], () => 'stop'),
    );
    expect(stopped).toEqual({ records: 0, problems: 1, isSkipped: false });
    const problems: TranscriptProblem[] = [];
    const missing: TranscriptFile = {
      path: join(dir, 'nope.jsonl'),
      size: 0,
      mtimeMs: 0,
      info: { format: 'codex', kind: 'session', facts: {} },
    };
    expect(await readRecords(missing, context(problems), handlers([]))).toEqual({
      records: 0,
      problems: 1,
      isSkipped: true,
    });
    expect(problems.map((p) => [p.code, p.scope])).toEqual([['unreadable', 'file']]);
  });
});
