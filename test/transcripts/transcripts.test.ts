/**
 * The transcript orchestration: classification across formats, pricing on
 * the way (`withCost`: each run, and the session on its root), and
 * containment of a format that breaks its contract.
 */
import { describe, expect, it } from 'vitest';
import type { RunListener, RunRecord, RunStart } from '../../src/observe/run-record.js';
import { reportedOutputMatches } from '../../src/output/result.js';
import type { TranscriptFormat, TranscriptProblem } from '../../src/transcripts/format.js';
import { classifyTranscript, readTranscripts, withCost } from '../../src/transcripts/transcripts.js';

const T = Date.parse('2026-02-11T21:24:52Z');

function run(runId: string, parentRunId: string | undefined, inputTokens: number): RunRecord {
  return {
    runId,
    source: 'claude-code',
    agentName: 'x',
    startTime: T,
    endTime: T,
    traceKey: 'claude-code:s1',
    ...(parentRunId !== undefined ? { parentRunId } : {}),
    stopReason: 'completed',
    output: undefined,
    outputSource: 'none',
    emptyMessages: 0,
    usage: {
      inputTokens,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      reported: true,
    },
    steps: [{ step: 0, startTime: T, endTime: T, model: 'claude-sonnet-4-5', usage: { inputTokens, outputTokens: 0 } }],
    toolCalls: [],
  };
}

function recorder(): RunListener & { ends: RunRecord[]; starts: RunStart[] } {
  const ends: RunRecord[] = [];
  const starts: RunStart[] = [];
  return { ends, starts, onRunStart: (s) => starts.push(s), onRunEnd: (r) => ends.push(r) };
}

describe('withCost', () => {
  it('prices each run ($3 per million input tokens of Claude Sonnet 4.5 below 200k per request) and gives the root the session total', () => {
    const rec = recorder();
    const priced = withCost(rec);
    priced.onRunEnd(run('child-1', 'root', 100_000));
    priced.onRunEnd(run('child-2', 'root', 150_000));
    priced.onRunEnd(run('root', undefined, 50_000));
    const amounts = rec.ends.map((r) => r.cost?.amount ?? Number.NaN);
    [0.3, 0.45, 0.15].forEach((expected, i) => expect(amounts[i]).toBeCloseTo(expected, 12));
    expect(rec.ends.map((r) => r.sessionTotalCost === undefined)).toEqual([true, true, false]);
    expect(rec.ends[2]?.sessionTotalCost?.amount).toBeCloseTo(0.9, 12);
    expect(rec.ends[2]?.sessionTotalCost).toMatchObject({ currency: 'USD', unpricedModels: [], pricedCalls: 3 });
  });

  it("prices a request above 200k input tokens at the tier's $6 per million", () => {
    const rec = recorder();
    withCost(rec).onRunEnd(run('root', undefined, 1_000_000));
    expect(rec.ends[0]?.cost?.amount).toBeCloseTo(6, 12);
  });

  it('starts a new session total after a root ended', () => {
    const rec = recorder();
    const priced = withCost(rec);
    priced.onRunEnd(run('child', 'root', 100_000));
    priced.onRunEnd(run('root', undefined, 100_000));
    priced.onRunEnd(run('root', undefined, 100_000));
    const totals = rec.ends.map((r) => r.sessionTotalCost?.amount ?? 0);
    expect(totals[1]).toBeCloseTo(0.6, 12);
    expect(totals[2]).toBeCloseTo(0.3, 12);
  });
});

describe('parity by text', () => {
  it("compares what a parent that receives only text got with the selection's text", () => {
    const selected = [
      { type: 'reasoning', text: 'thinking' },
      { type: 'text', text: 'The answer.' },
    ] as const;
    expect(reportedOutputMatches([{ type: 'text', text: 'The answer.' }], selected, 'text')).toBe(true);
    expect(reportedOutputMatches([{ type: 'text', text: 'The answer.' }], selected)).toBe(false);
    expect(reportedOutputMatches([{ type: 'text', text: 'Another answer.' }], selected, 'text')).toBe(false);
    expect(reportedOutputMatches([], undefined, 'text')).toBe(true);
  });

  it("compares an answer handed over as a tool call's result argument (Gemini CLI's complete_task), else the text", () => {
    const finished = [
      { type: 'text', text: 'Found it.' },
      { type: 'tool-call', id: 'c1', name: 'complete_task', arguments: '{"result":"It is in retry.ts."}' },
    ] as const;
    expect(reportedOutputMatches([{ type: 'text', text: 'It is in retry.ts.' }], finished, 'answer')).toBe(true);
    expect(reportedOutputMatches([{ type: 'text', text: 'Found it.' }], finished, 'answer')).toBe(false);
    const cut = [
      { type: 'text', text: 'Reading.' },
      { type: 'tool-call', id: 'c2', name: 'read_file', arguments: '{"path":"a' },
    ] as const;
    expect(reportedOutputMatches([{ type: 'text', text: 'Reading.' }], cut, 'answer')).toBe(true);
    expect(reportedOutputMatches([{ type: 'text', text: 'Done.' }], [{ type: 'text', text: 'Done.' }], 'answer')).toBe(
      true,
    );
  });
});

const broken: TranscriptFormat = {
  name: 'codex',
  classify: () => {
    throw new Error('boom');
  },
  group: () => {
    throw new Error('group boom');
  },
  read: () => Promise.reject(new Error('read boom')),
};
const claiming: TranscriptFormat = {
  name: 'gemini-cli',
  classify: (head) =>
    head.prefix.startsWith('{"g"') ? { format: 'gemini-cli', kind: 'session', facts: {} } : undefined,
  group: (files) => [{ format: 'gemini-cli', key: 'gemini-cli:x', files }],
  read: () => Promise.reject(new Error('read boom')),
};

describe('containment', () => {
  it('asks each format in turn; a classifier that throws claims nothing', () => {
    expect(classifyTranscript({ path: 'a', firstLine: undefined, prefix: '{"g":1}' }, [broken, claiming])).toEqual({
      format: 'gemini-cli',
      kind: 'session',
      facts: {},
    });
    expect(
      classifyTranscript({ path: 'a', firstLine: undefined, prefix: 'nothing' }, [broken, claiming]),
    ).toBeUndefined();
  });

  it('reports every file of a grouper or reader that throws as skipped, with a problem, and goes on', async () => {
    const problems: TranscriptProblem[] = [];
    const file = (path: string, format: 'codex' | 'gemini-cli') => ({
      path,
      size: 1,
      mtimeMs: 0,
      info: { format, kind: 'session' as const, facts: {} },
    });
    const results = await readTranscripts(
      [file('c.jsonl', 'codex'), file('g.jsonl', 'gemini-cli')],
      { listener: recorder(), onProblem: (p) => problems.push(p), onBytes: () => undefined, pause: () => undefined },
      [broken, claiming],
    );
    expect(results).toEqual([
      { path: 'c.jsonl', records: 0, runs: 0, isSkipped: true },
      { path: 'g.jsonl', records: 0, runs: 0, isSkipped: true },
    ]);
    expect(problems.map((p) => [p.file, p.code, p.scope, p.message])).toEqual([
      ['c.jsonl', 'transcript-failed', 'file', 'the codex reader failed: Error: group boom'],
      ['g.jsonl', 'transcript-failed', 'file', 'the gemini-cli reader failed: Error: read boom'],
    ]);
  });
});
