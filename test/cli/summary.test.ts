import { describe, expect, it } from 'vitest';
import { formatProblem, formatProgressBar, formatRunTable, formatStopReasonSummary } from '../../src/cli/summary.js';
import type { RunRecord } from '../../src/observe/run-record.js';
import type { ReplaySummary } from '../../src/replay/replay.js';

const usage = (inputTokens: number, outputTokens: number, cacheReadTokens = 0) => ({
  inputTokens,
  outputTokens,
  cacheReadTokens,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  reported: true,
});

function run(overrides: Partial<RunRecord>): RunRecord {
  return {
    runId: 'r1',
    source: 'log',
    agentName: 'dsh',
    startTime: 0,
    endTime: 1,
    stopReason: 'completed',
    output: [{ type: 'text', text: 'done' }],
    outputSource: 'message',
    emptyMessages: 0,
    usage: usage(10, 2),
    steps: [],
    toolCalls: [],
    ...overrides,
  };
}

describe('formatRunTable', () => {
  it('renders one aligned row per run with stop reason, source, tokens and an output preview', () => {
    const table = formatRunTable(
      [
        run({
          runId: 'child#0',
          stopReason: 'max-tokens',
          outputSource: 'stream',
          output: [{ type: 'text', text: 'partial\n  answer that goes on and on' }],
          usage: usage(100, 64, 20),
        }),
        run({ runId: 'child#1', output: undefined, outputSource: 'none', usage: { ...usage(0, 0), reported: false } }),
        run({
          runId: 'sub',
          output: [
            { type: 'reasoning', text: 'why' },
            { type: 'tool-call', id: 'c', name: 'x', arguments: '{}' },
          ],
          reported: { output: [] },
        }),
      ],
      { previewWidth: 20 },
    );
    expect(table).toBe(
      [
        'run      stop reason  source   tokens in/out  output',
        '-------  -----------  -------  -------------  ------------------------------------------------------',
        'child#0  max-tokens   stream   120/64         partial answer that…',
        'child#1  completed    none     -              (no output)',
        'sub      completed    message  10/2           why [tool-call]  ⚠ runtime reported a different output',
      ].join('\n'),
    );
  });

  it('takes leading columns from the caller instead of the run id', () => {
    const table = formatRunTable([run({})], {
      leading: { headers: ['via', 'scenario'], cells: (_r, i) => ['proxy', `s${i}`] },
    });
    expect(table.split('\n')[0]).toBe('via    scenario  stop reason  source   tokens in/out  output');
    expect(table.split('\n')[2]).toBe('proxy  s0        completed    message  10/2           done');
  });
});

describe('formatStopReasonSummary', () => {
  const summary: ReplaySummary = {
    files: [
      { path: 'a.jsonl', format: 'log', records: 10, runs: 3, problems: 0, isSkipped: false },
      { path: 'b.bin', records: 0, runs: 0, problems: 1, isSkipped: true },
    ],
    runs: 3,
    stopReasons: [
      { stopReason: 'completed', runs: 2, share: 2 / 3, inputTokens: 1_234_567, outputTokens: 890 },
      { stopReason: 'max-tokens', runs: 1, share: 1 / 3, inputTokens: 5, outputTokens: 64 },
    ],
    truncationRate: 1 / 3,
    mismatches: 1,
    problems: 2,
    skipped: { files: 1, records: 1 },
    unknownRecords: {},
  };

  it('renders runs, share and tokens per stop reason with a total, then truncation rate, mismatches and skips', () => {
    expect(formatStopReasonSummary(summary)).toBe(
      [
        'stop reason  runs   share  input tokens  output tokens',
        '-----------  ----  ------  ------------  -------------',
        'completed       2   66.7%     1,234,567            890',
        'max-tokens      1   33.3%             5             64',
        'total           3  100.0%     1,234,572            954',
        '',
        'truncation rate (max-tokens runs / all runs): 33.3%',
        'output mismatches (runtime-reported output differs from the selected output): 1',
        'files: 1 read, 1 skipped; records skipped: 1',
      ].join('\n'),
    );
  });

  it('names the record types read past, by format, most first', () => {
    const withUnknown: ReplaySummary = {
      ...summary,
      unknownRecords: { 'claude-code permission-mode': 1_200, 'codex turn_summary': 3 },
    };
    expect(formatStopReasonSummary(withUnknown).split('\n').at(-1)).toBe(
      'records of types not known to this version, read past: claude-code permission-mode × 1,200, codex turn_summary × 3',
    );
  });

  it('says so when there were no runs', () => {
    const empty: ReplaySummary = { ...summary, runs: 0, stopReasons: [], truncationRate: 0, mismatches: 0 };
    expect(formatStopReasonSummary(empty).split('\n').slice(0, 3)).toEqual([
      'no runs found',
      '',
      'truncation rate (max-tokens runs / all runs): -',
    ]);
  });
});

describe('formatProblem', () => {
  it('puts file and line first, and says when a whole file was skipped', () => {
    expect(
      formatProblem({ file: 'a.jsonl', line: 7, code: 'torn-tail', scope: 'record', message: 'line 7 is incomplete' }),
    ).toBe('a.jsonl:7: line 7 is incomplete [torn-tail]');
    expect(formatProblem({ file: 'b.bin', line: 0, code: 'binary', scope: 'file', message: 'binary data' })).toBe(
      'b.bin: binary data [binary, file skipped]',
    );
  });
});

describe('formatProgressBar', () => {
  it('shows bytes as a bar and a percentage, files, sizes and the current file name', () => {
    expect(
      formatProgressBar(
        {
          filesDone: 3,
          filesTotal: 10,
          bytesDone: 3 * 1024 * 1024,
          bytesTotal: 12 * 1024 * 1024,
          file: '/logs/x/session.jsonl.zstd',
        },
        120,
      ),
    ).toBe('[#####...............]  25%  3/10 files  3.0 MiB/12.0 MiB  session.jsonl.zstd');
  });

  it('cuts the line to the terminal width', () => {
    const line = formatProgressBar(
      { filesDone: 0, filesTotal: 1, bytesDone: 0, bytesTotal: 512, file: 'a-very-long-file-name.ndjson' },
      40,
    );
    expect(line).toBe('[....................]   0%  0/1 files…');
    expect(line.length).toBe(39);
  });
});
