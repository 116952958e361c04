/**
 * The Gemini CLI transcript format in-process: classification of real and
 * synthetic files by content and place, grouping into sessions, reading a
 * session in replay and in live (watch) mode, and the file-level defects
 * (a copy, a superseded legacy document, one too large to parse whole).
 */
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunRecord, RunStart } from '../../../src/observe/run-record.js';
import { expandPaths, isTranscriptJsonName, sniffFile } from '../../../src/replay/input-files.js';
import type {
  TranscriptFile,
  TranscriptLive,
  TranscriptProblem,
  TranscriptReadContext,
} from '../../../src/transcripts/format.js';
import {
  classifyGeminiCli,
  GEMINI_CLI_MAX_DOCUMENT_BYTES,
  groupGeminiCli,
  readGeminiCliSession,
} from '../../../src/transcripts/gemini-cli/files.js';
import { sharedTranscripts } from '../../helpers/required-folder.js';
import { ROOT } from '../../helpers/paths.js';

const SAMPLES = join(ROOT, 'test', 'transcripts', 'gemini-cli');
const SHARED_REAL = sharedTranscripts('gemini-cli/real');
const HAS_REAL = SHARED_REAL !== undefined;
const REAL_ROOT = SHARED_REAL ?? join(ROOT, 'shared-transcripts-missing');
const REAL = join(REAL_ROOT, 'chats');
const SYNTHETIC = join(SAMPLES, 'synthetic');
const MAIN_ID = '5b1e0c2a-7f3d-4e8a-9c21-0d6f4a3b8e11';
const CHILD_ID = 'c0ffee00-1111-4222-8333-944455556666';
const MAIN_FILE = join('chats', 'session-2026-08-20T10-00-5b1e0c2a.jsonl');
const CHILD_FILE = join('chats', MAIN_ID, `${CHILD_ID}.jsonl`);

const temp = mkdtempSync(join(tmpdir(), 'gemini-cli-format-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

async function transcriptFile(path: string, size?: number): Promise<TranscriptFile> {
  const sniffed = await sniffFile(path, { classifyTranscript: classifyGeminiCli });
  if (!sniffed.ok || sniffed.transcript === undefined) throw new Error(`${path} is not a Gemini CLI file`);
  const info = statSync(path);
  return { path, size: size ?? info.size, mtimeMs: info.mtimeMs, info: sniffed.transcript };
}

interface Captured {
  readonly events: Array<['start', RunStart] | ['end', RunRecord]>;
  readonly problems: TranscriptProblem[];
  readonly bytes: Map<string, number>;
  pauses: number;
  readonly context: TranscriptReadContext;
}

function capture(live?: TranscriptLive): Captured {
  const captured: Captured = {
    events: [],
    problems: [],
    bytes: new Map(),
    pauses: 0,
    context: undefined as unknown as TranscriptReadContext,
  };
  const context: TranscriptReadContext = {
    listener: {
      onRunStart: (start) => captured.events.push(['start', start]),
      onRunEnd: (record) => captured.events.push(['end', record]),
    },
    onProblem: (problem) => captured.problems.push(problem),
    onBytes: (path, bytes) => captured.bytes.set(path, (captured.bytes.get(path) ?? 0) + bytes),
    pause: () => {
      captured.pauses += 1;
      return undefined;
    },
    ...(live !== undefined ? { live } : {}),
  };
  return Object.assign(captured, { context });
}

const order = (captured: Captured): string[] => captured.events.map(([kind, value]) => `${kind} ${value.runId}`);

describe.runIf(HAS_REAL)('classifyGeminiCli', () => {
  it('tells a legacy document by its first bytes', async () => {
    const file = await transcriptFile(join(REAL, 'session-2025-11-19T20-11-809f21a5.json'));
    expect(file.info).toEqual({
      format: 'gemini-cli',
      kind: 'session',
      facts: { sessionId: '809f21a5-9153-422a-89cd-d4bc4da2bec7', kind: 'main', layout: 'legacy' },
    });
  });

  it('tells a main JSONL recording and a subagent one in its parent session folder', async () => {
    expect((await transcriptFile(join(SYNTHETIC, 'jsonl-subagent', MAIN_FILE))).info.facts).toEqual({
      sessionId: MAIN_ID,
      kind: 'main',
      layout: 'jsonl',
      parentSessionId: undefined,
    });
    expect((await transcriptFile(join(SYNTHETIC, 'jsonl-subagent', CHILD_FILE))).info.facts).toEqual({
      sessionId: CHILD_ID,
      kind: 'subagent',
      layout: 'jsonl',
      parentSessionId: MAIN_ID,
    });
  });

  it('takes a JSONL file without kind under chats/<parent>/ for a subagent (recordings before kind was written)', () => {
    const info = classifyGeminiCli({
      path: '/h/.gemini/tmp/p/chats/parent-1/child-1.jsonl',
      firstLine: { sessionId: 'child-1', projectHash: 'p' },
      prefix: '',
    });
    expect(info?.facts).toEqual({
      sessionId: 'child-1',
      kind: 'subagent',
      layout: 'jsonl',
      parentSessionId: 'parent-1',
    });
  });

  it('lists the activity log and the prompt log as files that hold no run', async () => {
    const activity = await transcriptFile(
      join(SYNTHETIC, 'logs', 'session-9e8d7c6b-0000-4000-8000-000000000001.jsonl'),
    );
    expect([activity.info.kind, activity.info.what]).toEqual([
      'other',
      'Gemini CLI activity log (console and network records of a session, logs/session-<id>.jsonl): no run',
    ]);
    const prompts = classifyGeminiCli({
      path: '/h/.gemini/tmp/p/logs.json',
      firstLine: undefined,
      prefix: '[\n  {\n    "sessionId": "s",\n    "messageId": 0',
    });
    expect(prompts?.kind).toBe('other');
  });

  it('claims nobody else’s files', () => {
    expect(
      classifyGeminiCli({ path: '/x/a.jsonl', firstLine: { type: 'user', sessionId: 's', message: {} }, prefix: '' }),
    ).toBeUndefined();
    expect(
      classifyGeminiCli({ path: '/x/session-1.json', firstLine: undefined, prefix: '{\n  "id": "x"' }),
    ).toBeUndefined();
    expect(
      classifyGeminiCli({ path: '/x/a.jsonl', firstLine: { type: 'console', sessionId: 's' }, prefix: '' }),
    ).toBeUndefined();
  });
});

describe('legacy subagent documents in their parent session folder (gemini-cli 0.37 and 0.38)', () => {
  const dir = join(SYNTHETIC, 'legacy-0.37-subagent', 'chats');
  const PARENT = '3c4d5e6f-1a2b-4c3d-8e9f-0a1b2c3d4e5f';

  it('are picked up by a walk, as .json files in a folder of chats/ only', async () => {
    const { files } = await expandPaths([join(SYNTHETIC, 'legacy-0.37-subagent')]);
    expect(files.map((file) => file.path.slice(dir.length + 1))).toEqual([
      join(PARENT, 'k3j9x2.json'),
      'session-2026-04-05T12-00-3c4d5e6f.json',
    ]);
    expect(isTranscriptJsonName('k3j9x2.json', join('/h', '.gemini', 'tmp', 'p', 'chats', PARENT))).toBe(true);
    expect(isTranscriptJsonName('settings.json', join('/h', '.gemini'))).toBe(false);
    expect(isTranscriptJsonName('k3j9x2.json')).toBe(false);
  });

  it('are told by their folder, since a document writes kind after its messages', async () => {
    expect((await transcriptFile(join(dir, PARENT, 'k3j9x2.json'))).info.facts).toEqual({
      sessionId: 'k3j9x2',
      kind: 'subagent',
      layout: 'legacy',
      parentSessionId: PARENT,
    });
  });
});

describe.runIf(HAS_REAL)('groupGeminiCli', () => {
  it('puts a subagent with its main session, main first, and legacy documents by their shared session id', async () => {
    const files = await Promise.all([
      transcriptFile(join(SYNTHETIC, 'jsonl-subagent', CHILD_FILE)),
      transcriptFile(join(SYNTHETIC, 'jsonl-subagent', MAIN_FILE)),
      transcriptFile(join(REAL, 'session-2026-01-02T03-27-ae691289.json')),
      transcriptFile(join(REAL, 'session-2026-01-02T03-26-ae691289.json')),
    ]);
    expect(
      groupGeminiCli(files).map((session) => [
        session.key,
        session.files.map((file) =>
          file.path.startsWith(REAL_ROOT)
            ? join('real', file.path.slice(REAL_ROOT.length + 1))
            : file.path.slice(SAMPLES.length + 1),
        ),
      ]),
    ).toEqual([
      [
        `gemini-cli:${MAIN_ID}`,
        [join('synthetic', 'jsonl-subagent', MAIN_FILE), join('synthetic', 'jsonl-subagent', CHILD_FILE)],
      ],
      [
        'gemini-cli:ae691289-637c-454c-bf1e-e4ce2dad4260',
        [
          join('real', 'chats', 'session-2026-01-02T03-26-ae691289.json'),
          join('real', 'chats', 'session-2026-01-02T03-27-ae691289.json'),
        ],
      ],
    ]);
  });
});

async function sessionOf(dir: string): Promise<ReturnType<typeof groupGeminiCli>[number]> {
  const files = await Promise.all([transcriptFile(join(dir, MAIN_FILE)), transcriptFile(join(dir, CHILD_FILE))]);
  const [session] = groupGeminiCli(files);
  if (session === undefined) throw new Error('no session');
  return session;
}

describe.runIf(HAS_REAL)('readGeminiCliSession', () => {
  it('reports the subagent before the main session, each start right before its end, pausing after each, counting bytes', async () => {
    const dir = join(SYNTHETIC, 'jsonl-subagent');
    const captured = capture();
    const results = await readGeminiCliSession(await sessionOf(dir), captured.context);
    expect(order(captured)).toEqual([
      `start gemini-cli:${CHILD_ID}`,
      `end gemini-cli:${CHILD_ID}`,
      `start gemini-cli:${MAIN_ID}`,
      `end gemini-cli:${MAIN_ID}`,
    ]);
    expect(captured.pauses).toBe(2);
    expect(captured.problems).toEqual([]);
    expect(results.map((result) => [result.records, result.runs, result.isSkipped])).toEqual([
      [22, 1, false],
      [12, 1, false],
    ]);
    expect(captured.bytes.get(join(dir, MAIN_FILE))).toBe(statSync(join(dir, MAIN_FILE)).size);
  });

  it('in live mode reports a subagent once its parent recorded the result, and the main session only once quiet', async () => {
    const dir = join(temp, 'live');
    cpSync(join(SYNTHETIC, 'jsonl-subagent'), dir, { recursive: true });
    const now = Date.now();
    utimesSync(join(dir, MAIN_FILE), new Date(now), new Date(now));
    utimesSync(join(dir, CHILD_FILE), new Date(now), new Date(now));
    const reported = new Set<string>();
    const live = (at: number): TranscriptLive => ({
      now: at,
      idleMs: 60_000,
      isReported: (runId) => reported.has(runId),
    });

    const first = capture(live(now + 1000));
    await readGeminiCliSession(await sessionOf(dir), first.context);
    expect(order(first)).toEqual([`start gemini-cli:${CHILD_ID}`, `end gemini-cli:${CHILD_ID}`]);
    reported.add(`gemini-cli:${CHILD_ID}`);

    const second = capture(live(now + 120_000));
    await readGeminiCliSession(await sessionOf(dir), second.context);
    expect(order(second)).toEqual([`start gemini-cli:${MAIN_ID}`, `end gemini-cli:${MAIN_ID}`]);
  });

  it('in live mode holds back a quiet main session while a subagent under it has not ended', async () => {
    const dir = join(temp, 'live-pending');
    mkdirSync(join(dir, 'chats', MAIN_ID), { recursive: true });
    writeFileSync(
      join(dir, MAIN_FILE),
      [
        { sessionId: MAIN_ID, projectHash: 'p', startTime: '2026-08-20T10:00:00.000Z', kind: 'main' },
        {
          id: 'g1',
          timestamp: '2026-08-20T10:00:03.000Z',
          type: 'gemini',
          content: '',
          toolCalls: [
            {
              id: 'invoke_agent-1',
              name: 'invoke_agent',
              args: { agent_name: 'x' },
              status: 'executing',
              agentId: CHILD_ID,
            },
          ],
        },
      ]
        .map((record) => JSON.stringify(record))
        .join('\n') + '\n',
    );
    writeFileSync(
      join(dir, CHILD_FILE),
      `${JSON.stringify({ sessionId: CHILD_ID, projectHash: 'p', startTime: '2026-08-20T10:00:04.000Z', kind: 'subagent' })}\n{"id":"c1","type":"user","content":"go"}\n{"id":"c2","type":"gem`,
    );
    const now = Date.now();
    utimesSync(join(dir, MAIN_FILE), new Date(now - 600_000), new Date(now - 600_000));
    utimesSync(join(dir, CHILD_FILE), new Date(now), new Date(now));
    const captured = capture({ now, idleMs: 60_000, isReported: () => false });
    await readGeminiCliSession(await sessionOf(dir), captured.context);
    expect(order(captured)).toEqual([]);
    // The torn last line of a file still being written is no problem while it is not quiet.
    expect(captured.problems).toEqual([]);
  });

  it('reads a legacy document only once it is quiet in live mode', async () => {
    const path = join(temp, 'session-2025-11-19T20-11-809f21a5.json');
    copyFileSync(join(REAL, 'session-2025-11-19T20-11-809f21a5.json'), path);
    const file = await transcriptFile(path);
    const session = {
      format: 'gemini-cli' as const,
      key: 'gemini-cli:809f21a5-9153-422a-89cd-d4bc4da2bec7',
      files: [file],
    };
    const busy = capture({ now: file.mtimeMs + 1000, idleMs: 60_000, isReported: () => false });
    expect(await readGeminiCliSession(session, busy.context)).toEqual([
      { path, records: 0, runs: 0, isSkipped: false },
    ]);
    const quiet = capture({ now: file.mtimeMs + 120_000, idleMs: 60_000, isReported: () => false });
    expect(await readGeminiCliSession(session, quiet.context)).toEqual([
      { path, records: 4, runs: 1, isSkipped: false },
    ]);
  });

  it('in live mode reads a 0.22 subagent document only with its parent document, once both are quiet', async () => {
    const dir = join(temp, 'live-legacy');
    mkdirSync(dir, { recursive: true });
    const names = ['session-2026-01-02T03-26-ae691289.json', 'session-2026-01-02T03-27-ae691289.json'];
    for (const name of names) copyFileSync(join(REAL, name), join(dir, name));
    const now = Date.now();
    // The subagent's document has been quiet for long; its parent is still being written.
    utimesSync(join(dir, names[1] ?? ''), new Date(now - 600_000), new Date(now - 600_000));
    utimesSync(join(dir, names[0] ?? ''), new Date(now), new Date(now));
    const session = async (): Promise<ReturnType<typeof groupGeminiCli>[number]> => {
      const [found] = groupGeminiCli(await Promise.all(names.map((name) => transcriptFile(join(dir, name)))));
      if (found === undefined) throw new Error('no session');
      return found;
    };
    const busy = capture({ now, idleMs: 60_000, isReported: () => false });
    await readGeminiCliSession(await session(), busy.context);
    expect(order(busy)).toEqual([]);
    const quiet = capture({ now: now + 120_000, idleMs: 60_000, isReported: () => false });
    await readGeminiCliSession(await session(), quiet.context);
    expect(order(quiet)).toEqual([
      'start gemini-cli:ae691289-637c-454c-bf1e-e4ce2dad4260/session-2026-01-02T03-27-ae691289',
      'end gemini-cli:ae691289-637c-454c-bf1e-e4ce2dad4260/session-2026-01-02T03-27-ae691289',
      'start gemini-cli:ae691289-637c-454c-bf1e-e4ce2dad4260',
      'end gemini-cli:ae691289-637c-454c-bf1e-e4ce2dad4260',
    ]);
  });

  it('takes a legacy document that says kind "subagent" after its messages (0.31 to 0.36, flat in chats/) for a subagent', async () => {
    const path = join(temp, 'session-2026-03-01T10-00-5e5e5e5e.json');
    const document = {
      sessionId: '5e5e5e5e-0000-4000-8000-000000000004',
      projectHash: 'p',
      startTime: '2026-03-01T10:00:00.000Z',
      lastUpdated: '2026-03-01T10:00:05.000Z',
      messages: [{ id: 'u1', timestamp: '2026-03-01T10:00:01.000Z', type: 'user', content: 'Find it.' }],
      kind: 'subagent',
    };
    writeFileSync(path, JSON.stringify(document, null, 2));
    const file = await transcriptFile(path);
    expect(file.info.facts['kind']).toBe('main');
    const captured = capture();
    await readGeminiCliSession(
      { format: 'gemini-cli', key: 'gemini-cli:5e5e5e5e-0000-4000-8000-000000000004', files: [file] },
      captured.context,
    );
    const start = captured.events.find(([kind]) => kind === 'start')?.[1] as RunStart | undefined;
    expect([start?.agentName, start?.parentRunId]).toEqual(['gemini-cli-subagent', undefined]);
  });

  it('skips a copy of a recording already read, and a legacy document its .jsonl migration holds', async () => {
    const dir = join(temp, 'copies');
    mkdirSync(join(dir, 'a'), { recursive: true });
    mkdirSync(join(dir, 'b'), { recursive: true });
    const name = 'session-2025-11-19T20-11-809f21a5.json';
    copyFileSync(join(REAL, name), join(dir, 'a', name));
    copyFileSync(join(REAL, name), join(dir, 'b', name));
    const files = await Promise.all([transcriptFile(join(dir, 'a', name)), transcriptFile(join(dir, 'b', name))]);
    const copies = capture();
    const results = await readGeminiCliSession(
      groupGeminiCli(files)[0] ?? { format: 'gemini-cli', key: '', files: [] },
      copies.context,
    );
    expect(results.map((result) => [result.runs, result.isSkipped])).toEqual([
      [1, false],
      [0, true],
    ]);
    expect(copies.problems.map((problem) => [problem.file, problem.code, problem.scope])).toEqual([
      [join(dir, 'b', name), 'duplicate-session', 'file'],
    ]);

    const migrated = join(dir, 'a', `${name}l`);
    writeFileSync(
      migrated,
      `${JSON.stringify({ sessionId: '809f21a5-9153-422a-89cd-d4bc4da2bec7', projectHash: 'c2', kind: 'main' })}\n{"id":"m1","type":"user","content":"ls"}\n`,
    );
    const both = await Promise.all([transcriptFile(join(dir, 'a', name)), transcriptFile(migrated)]);
    const superseded = capture();
    const read = await readGeminiCliSession(
      groupGeminiCli(both)[0] ?? { format: 'gemini-cli', key: '', files: [] },
      superseded.context,
    );
    expect(read.map((result) => [result.path, result.records, result.runs, result.isSkipped])).toEqual([
      [join(dir, 'a', name), 0, 0, false],
      [migrated, 2, 1, false],
    ]);
    expect(superseded.problems).toEqual([]);
  });

  it('refuses a legacy document larger than it parses whole', async () => {
    const file = await transcriptFile(
      join(REAL, 'session-2025-11-19T20-11-809f21a5.json'),
      GEMINI_CLI_MAX_DOCUMENT_BYTES + 1,
    );
    const captured = capture();
    const results = await readGeminiCliSession({ format: 'gemini-cli', key: 'k', files: [file] }, captured.context);
    expect(results).toEqual([{ path: file.path, records: 0, runs: 0, isSkipped: true }]);
    expect(captured.problems.map((problem) => [problem.code, problem.scope])).toEqual([['too-large', 'file']]);
  });

  it('reports each defect of a JSONL file at its line and reads the rest', async () => {
    const file = await transcriptFile(join(SYNTHETIC, 'defects', 'chats', 'session-2026-08-22T08-00-9e8d7c6b.jsonl'));
    const captured = capture();
    const results = await readGeminiCliSession({ format: 'gemini-cli', key: 'k', files: [file] }, captured.context);
    expect(captured.problems.map((problem) => [problem.line, problem.code, problem.scope])).toEqual([
      [2, 'not-json', 'record'],
      [3, 'not-object', 'record'],
      [5, 'invalid', 'record'],
      [6, 'invalid-utf8', 'record'],
      [8, 'torn-tail', 'record'],
    ]);
    expect(results).toEqual([{ path: file.path, records: 4, runs: 1, isSkipped: false }]);
    const end = captured.events.find(([kind]) => kind === 'end')?.[1] as RunRecord | undefined;
    expect(end?.output).toEqual([{ type: 'text', text: 'Hi.' }]);
  });

  it('skips a line longer than the line limit (16 MiB) at its line number and reads on', async () => {
    const path = join(temp, 'session-2026-08-22T09-00-0b0b0b0b.jsonl');
    const huge = JSON.stringify({ id: 'h1', type: 'user', content: 'x'.repeat(17 * 1024 * 1024) });
    const lines = [
      JSON.stringify({
        sessionId: '0b0b0b0b-0000-4000-8000-000000000003',
        projectHash: 'p',
        startTime: '2026-08-22T09:00:00.000Z',
        kind: 'main',
      }),
      huge,
      JSON.stringify({
        id: 'g1',
        timestamp: '2026-08-22T09:00:02.000Z',
        type: 'gemini',
        content: 'After.',
        tokens: { input: 5, output: 1, cached: 0, thoughts: 0, tool: 0, total: 6 },
      }),
    ];
    writeFileSync(path, `${lines.join('\n')}\n`);
    const captured = capture();
    const results = await readGeminiCliSession(
      { format: 'gemini-cli', key: 'k', files: [await transcriptFile(path)] },
      captured.context,
    );
    expect(captured.problems.map((problem) => [problem.line, problem.code, problem.scope])).toEqual([
      [2, 'oversized-line', 'record'],
    ]);
    expect(results).toEqual([{ path, records: 2, runs: 1, isSkipped: false }]);
    const end = captured.events.find(([kind]) => kind === 'end')?.[1] as RunRecord | undefined;
    expect(end?.output).toEqual([{ type: 'text', text: 'After.' }]);
  });

  it('skips a legacy document that is not valid JSON as a whole', async () => {
    const file = await transcriptFile(join(SYNTHETIC, 'defects', 'chats', 'session-2026-08-22T08-30-1a2b3c4d.json'));
    const captured = capture();
    expect(await readGeminiCliSession({ format: 'gemini-cli', key: 'k', files: [file] }, captured.context)).toEqual([
      { path: file.path, records: 0, runs: 0, isSkipped: true },
    ]);
    expect(captured.problems.map((problem) => [problem.line, problem.code, problem.scope])).toEqual([
      [0, 'not-json', 'file'],
    ]);
  });
});
