import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  compressZstdFrame,
  serializeDurableLog,
  skippableZstdFrame,
  writeDurableLogFile,
} from '../../src/fixtures/durable-log-writer.js';
import {
  DurableLogDecoder,
  detectCompression,
  expandPackedRow,
  readDurableLog,
  readDurableLogFile,
} from '../../src/wire/durable-log.js';
import type { DurableLogRecord } from '../../src/wire/durable-log.js';

const dir = mkdtempSync(join(tmpdir(), 'durable-log-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileCount = 0;
/** Writes `content` to a fresh file in the test directory and returns its path. */
function fileWith(content: string | Uint8Array, suffix = '.jsonl'): string {
  fileCount += 1;
  const path = join(dir, `log-${fileCount}${suffix}`);
  writeFileSync(path, content);
  return path;
}

async function collect(records: AsyncIterable<DurableLogRecord>): Promise<DurableLogRecord[]> {
  const out: DurableLogRecord[] = [];
  for await (const record of records) out.push(record);
  return out;
}

async function* chunksOf(...chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const chunk of chunks) yield chunk;
}

const readFile = (path: string, maxLineBytes?: number) =>
  collect(readDurableLogFile(path, maxLineBytes === undefined ? {} : { maxLineBytes }));

const values = (records: readonly DurableLogRecord[]) => records.flatMap((r) => (r.kind === 'event' ? [r.value] : []));
const notEvents = (records: readonly DurableLogRecord[]) => records.filter((r) => r.kind !== 'event');

// ---------------------------------------------------------------------------
// Two generations of logs, written out as literals.

const chunkHeader = {
  type: 'session',
  version: 2,
  id: 'sess-chunk',
  cwd: '/work/demo',
  createdAt: '2026-11-29T10:00:00.000Z',
  parentSession: 'sess-parent',
  delegationDepth: 1,
};

/** Chunk generation: every streamed chunk is its own assistant/chunk event. */
const chunkEvents = [
  {
    type: 'user/message',
    seq: 0,
    time: 1000,
    data: { id: 'u1', role: 'user', content: [{ type: 'text', text: 'Summarize a.md' }], source: 'prompt' },
  },
  { type: 'turn/start', seq: 1, time: 1001, data: { turn: 1 } },
  { type: 'step/start', seq: 2, time: 1002, data: { turn: 1, step: 1 } },
  {
    type: 'assistant/chunk',
    seq: 3,
    time: 1010,
    data: { turn: 1, step: 1, chunk: { type: 'block-start', index: 0, blockType: 'reasoning' } },
  },
  {
    type: 'assistant/chunk',
    seq: 4,
    time: 1011,
    data: { turn: 1, step: 1, chunk: { type: 'reasoning-delta', index: 0, text: 'Look' } },
  },
  {
    type: 'assistant/chunk',
    seq: 5,
    time: 1013,
    data: { turn: 1, step: 1, chunk: { type: 'reasoning-delta', index: 0, text: 'ing at' } },
  },
  {
    type: 'assistant/chunk',
    seq: 6,
    time: 1020,
    data: { turn: 1, step: 1, chunk: { type: 'reasoning-delta', index: 0, text: ' it' } },
  },
  {
    type: 'assistant/chunk',
    seq: 7,
    time: 1021,
    data: {
      turn: 1,
      step: 1,
      chunk: { type: 'block-end', index: 0, block: { type: 'reasoning', text: 'Looking at it' } },
    },
  },
  {
    type: 'assistant/chunk',
    seq: 8,
    time: 1022,
    data: { turn: 1, step: 1, chunk: { type: 'block-start', index: 1, blockType: 'text' } },
  },
  {
    type: 'assistant/chunk',
    seq: 9,
    time: 1030,
    data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 1, text: 'The' } },
  },
  {
    type: 'assistant/chunk',
    seq: 10,
    time: 1031,
    data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 1, text: ' report' } },
  },
  {
    type: 'assistant/chunk',
    seq: 11,
    time: 1031,
    data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 1, text: ' says' } },
  },
  {
    type: 'assistant/chunk',
    seq: 12,
    time: 1045,
    data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 1, text: ' yes. ✓' } },
  },
  {
    type: 'assistant/chunk',
    seq: 13,
    time: 1046,
    data: {
      turn: 1,
      step: 1,
      chunk: { type: 'block-end', index: 1, block: { type: 'text', text: 'The report says yes. ✓' } },
    },
  },
  {
    type: 'assistant/chunk',
    seq: 14,
    time: 1047,
    data: { turn: 1, step: 1, chunk: { type: 'block-start', index: 2, blockType: 'tool-call' } },
  },
  {
    type: 'assistant/chunk',
    seq: 15,
    time: 1050,
    data: {
      turn: 1,
      step: 1,
      chunk: { type: 'tool-call-delta', index: 2, id: 'call-1', name: 'read_file', argumentsDelta: '{"pa' },
    },
  },
  {
    type: 'assistant/chunk',
    seq: 16,
    time: 1052,
    data: {
      turn: 1,
      step: 1,
      chunk: { type: 'tool-call-delta', index: 2, id: 'call-1', name: 'read_file', argumentsDelta: 'th":"a' },
    },
  },
  {
    type: 'assistant/chunk',
    seq: 17,
    time: 1053,
    data: {
      turn: 1,
      step: 1,
      chunk: { type: 'tool-call-delta', index: 2, id: 'call-1', name: 'read_file', argumentsDelta: '.md"}' },
    },
  },
  {
    type: 'assistant/chunk',
    seq: 18,
    time: 1054,
    data: {
      turn: 1,
      step: 1,
      chunk: {
        type: 'block-end',
        index: 2,
        block: { type: 'tool-call', id: 'call-1', name: 'read_file', arguments: '{"path":"a.md"}' },
      },
    },
  },
  {
    type: 'assistant/chunk',
    seq: 19,
    time: 1055,
    data: {
      turn: 1,
      step: 1,
      chunk: { type: 'usage', usage: { inputTokens: 120, outputTokens: 40, cacheReadTokens: 64 } },
    },
  },
  {
    type: 'assistant/chunk',
    seq: 20,
    time: 1055,
    data: { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'tool-calls' } } },
  },
  {
    type: 'assistant/message',
    seq: 21,
    time: 1056,
    data: {
      turn: 1,
      step: 1,
      message: {
        id: 'm1',
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Looking at it' },
          { type: 'text', text: 'The report says yes. ✓' },
          { type: 'tool-call', id: 'call-1', name: 'read_file', arguments: '{"path":"a.md"}' },
        ],
      },
      usage: { inputTokens: 120, outputTokens: 40, cacheReadTokens: 64 },
    },
  },
  {
    type: 'tool/call',
    seq: 22,
    time: 1057,
    data: { turn: 1, step: 1, callId: 'call-1', name: 'read_file', arguments: '{"path":"a.md"}' },
  },
  {
    type: 'tool/result',
    seq: 23,
    time: 1060,
    data: {
      turn: 1,
      step: 1,
      message: { content: [{ type: 'tool-result', toolCallId: 'call-1', content: [{ type: 'text', text: 'yes' }] }] },
    },
  },
  { type: 'step/end', seq: 24, time: 1061, data: { turn: 1, step: 1 } },
  { type: 'step/start', seq: 25, time: 1062, data: { turn: 1, step: 2 } },
  {
    type: 'assistant/chunk',
    seq: 26,
    time: 1070,
    data: { turn: 1, step: 2, chunk: { type: 'text-delta', index: 0, text: 'Do' } },
  },
  {
    type: 'assistant/chunk',
    seq: 27,
    time: 1071,
    data: { turn: 1, step: 2, chunk: { type: 'text-delta', index: 0, text: 'ne' } },
  },
  {
    type: 'assistant/chunk',
    seq: 28,
    time: 1072,
    data: {
      turn: 1,
      step: 2,
      chunk: { type: 'tool-call-delta', index: 1, id: 'call-2', name: 'write', argumentsDelta: '' },
    },
  },
  {
    type: 'assistant/chunk',
    seq: 29,
    time: 1073,
    data: { turn: 1, step: 2, chunk: { type: 'tool-call-delta', index: 1, id: 'call-2', argumentsDelta: '{"te' } },
  },
  {
    type: 'assistant/chunk',
    seq: 30,
    time: 1074,
    data: { turn: 1, step: 2, chunk: { type: 'tool-call-delta', index: 1, id: 'call-2', argumentsDelta: 'xt":"lo' } },
  },
  {
    type: 'assistant/chunk',
    seq: 31,
    time: 1079,
    data: { turn: 1, step: 2, chunk: { type: 'tool-call-delta', index: 1, id: 'call-2', argumentsDelta: 'ng' } },
  },
  {
    type: 'assistant/chunk',
    seq: 32,
    time: 1080,
    data: { turn: 1, step: 2, chunk: { type: 'finish', reason: { kind: 'max-tokens' } } },
  },
  {
    type: 'assistant/message',
    seq: 33,
    time: 1081,
    data: {
      turn: 1,
      step: 2,
      message: { id: 'm2', role: 'assistant', content: [] },
      usage: { inputTokens: 200, outputTokens: 4096 },
    },
  },
  { type: 'step/end', seq: 34, time: 1082, data: { turn: 1, step: 2 } },
  { type: 'turn/end', seq: 35, time: 1083, data: { turn: 1, reason: { kind: 'max-tokens' } } },
];

const embeddedHeader = {
  type: 'session',
  version: 3,
  id: 'sess-embedded',
  createdAt: '2026-11-29T11:00:00.000Z',
  seedLength: 2,
  delegationDepth: 2,
  labels: { team: 'docs' },
};

/** Embedded generation: chunks travel inside assistant/message.stream and assistant/attempt.stream. */
const embeddedEvents = [
  {
    type: 'user/message',
    seq: 0,
    time: 2000,
    data: { id: 'u1', role: 'user', content: [{ type: 'text', text: 'seed' }], source: 'seed' },
  },
  { type: 'session/end-seed', seq: 1, time: 2001, data: {} },
  { type: 'turn/start', seq: 2, time: 2002, data: { turn: 1 } },
  { type: 'request/context', seq: 3, time: 2003, data: { provider: 'deepseek', model: 'deepseek-chat' } },
  { type: 'step/start', seq: 4, time: 2004, data: { turn: 1, step: 1 } },
  {
    type: 'assistant/attempt',
    seq: 5,
    time: 2010,
    data: {
      turn: 1,
      step: 1,
      stream: [
        { type: 'block-start', index: 0, blockType: 'text' },
        { type: 'text-delta', index: 0, text: 'Par' },
        { type: 'text-delta', index: 0, text: 'tial' },
        { type: 'text-delta', index: 0, text: ' answer' },
        { type: 'finish', reason: { kind: 'error', failure: { message: 'overloaded', code: 'provider_overloaded' } } },
      ],
      failure: { message: 'overloaded', code: 'provider_overloaded' },
    },
  },
  {
    type: 'assistant/message',
    seq: 6,
    time: 2020,
    data: {
      turn: 1,
      step: 1,
      message: { id: 'm1', role: 'assistant', content: [{ type: 'text', text: 'Final answer' }], source: 'model' },
      usage: { inputTokens: 10, outputTokens: 3, reasoningTokens: 0 },
      stream: [
        { type: 'block-start', index: 0, blockType: 'text' },
        { type: 'text-delta', index: 0, text: 'Final' },
        { type: 'text-delta', index: 0, text: ' answer' },
        { type: 'block-end', index: 0, block: { type: 'text', text: 'Final answer' } },
        { type: 'usage', usage: { inputTokens: 10, outputTokens: 3, reasoningTokens: 0 } },
        { type: 'finish', reason: { kind: 'stop' } },
      ],
    },
  },
  { type: 'step/end', seq: 7, time: 2021, data: { turn: 1, step: 1 } },
  { type: 'turn/end', seq: 8, time: 2022, data: { turn: 1, reason: { kind: 'completed' } } },
];

const generations = [
  { name: 'chunk generation', header: chunkHeader, events: chunkEvents },
  { name: 'embedded generation', header: embeddedHeader, events: embeddedEvents },
];

// ---------------------------------------------------------------------------

describe('detectCompression', () => {
  it('recognizes the zstd frame magic', () => {
    expect(detectCompression(Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0x00))).toBe('zstd');
  });

  it('recognizes the first and last skippable frame magics', () => {
    expect(detectCompression(Uint8Array.of(0x50, 0x2a, 0x4d, 0x18))).toBe('zstd');
    expect(detectCompression(Uint8Array.of(0x5f, 0x2a, 0x4d, 0x18))).toBe('zstd');
    expect(detectCompression(Uint8Array.of(0x60, 0x2a, 0x4d, 0x18))).toBe('plain');
  });

  it('calls JSON text and inputs shorter than four bytes plain', () => {
    expect(detectCompression(new TextEncoder().encode('{"type":"session"}'))).toBe('plain');
    expect(detectCompression(Uint8Array.of(0x28, 0xb5, 0x2f))).toBe('plain');
  });
});

describe('reading logs written by the fixture writer', () => {
  const cases = generations.flatMap((generation) =>
    [false, true].flatMap((zstd) =>
      [false, true].map((pack) => ({
        ...generation,
        zstd,
        pack,
        hasPackedRows: pack && generation.events === chunkEvents,
      })),
    ),
  );

  it.each(cases)(
    'gives back exactly the events of the $name (zstd: $zstd, packed: $pack)',
    async ({ header, events, zstd, pack, hasPackedRows }) => {
      const path = join(dir, `roundtrip-${header.id}-${zstd}-${pack}${zstd ? '.jsonl.zstd' : '.jsonl'}`);
      await writeDurableLogFile(path, header, events, { pack, zstd, batchSize: 5 });
      const records = await readFile(path);
      expect(notEvents(records)).toEqual([{ kind: 'header', line: 1, value: header }]);
      expect(values(records)).toEqual(events);
      expect(records.some((r) => r.kind === 'event' && r.member !== undefined)).toBe(hasPackedRows);
    },
  );

  it('reads packed rows back from the chunk generation as expanded members', async () => {
    const path = fileWith(serializeDurableLog(chunkHeader, chunkEvents, { pack: true }));
    const records = await readFile(path);
    const members = records.flatMap((r) => (r.kind === 'event' && r.member !== undefined ? [[r.line, r.member]] : []));
    expect(members).toEqual([
      [6, 0],
      [6, 1],
      [6, 2],
      [9, 0],
      [9, 1],
      [9, 2],
      [9, 3],
      [12, 0],
      [12, 1],
      [12, 2],
      [24, 0],
      [24, 1],
      [24, 2],
    ]);
    expect(values(records)).toEqual(chunkEvents);
  });
});

describe('packed chunk rows', () => {
  it('expands a text row: member 0 at time0, member k after dt[0..k-1]', () => {
    expect(
      expandPackedRow({
        type: 'text-chunks',
        seq0: 4,
        time0: 104,
        data: { turn: 1, step: 2, index: 0, dt: [1, 5], texts: ['he', 'l', 'lo'] },
      }),
    ).toEqual({
      ok: true,
      events: [
        {
          type: 'assistant/chunk',
          seq: 4,
          time: 104,
          data: { turn: 1, step: 2, chunk: { type: 'text-delta', index: 0, text: 'he' } },
        },
        {
          type: 'assistant/chunk',
          seq: 5,
          time: 105,
          data: { turn: 1, step: 2, chunk: { type: 'text-delta', index: 0, text: 'l' } },
        },
        {
          type: 'assistant/chunk',
          seq: 6,
          time: 110,
          data: { turn: 1, step: 2, chunk: { type: 'text-delta', index: 0, text: 'lo' } },
        },
      ],
    });
  });

  it("expands rows without seq0 and/or time0 (upstream's recorded snapshots) into members without seq and/or time", () => {
    // In the shape of the rows of upstream's examples/*/tests/snapshots/*/session.N.jsonl: no envelope fields at all.
    expect(
      expandPackedRow({
        type: 'reasoning-chunks',
        data: { turn: 1, step: 1, index: 0, dt: [0, 0], texts: ['The', ' user', ' wants'] },
      }),
    ).toEqual({
      ok: true,
      events: [
        {
          type: 'assistant/chunk',
          data: { turn: 1, step: 1, chunk: { type: 'reasoning-delta', index: 0, text: 'The' } },
        },
        {
          type: 'assistant/chunk',
          data: { turn: 1, step: 1, chunk: { type: 'reasoning-delta', index: 0, text: ' user' } },
        },
        {
          type: 'assistant/chunk',
          data: { turn: 1, step: 1, chunk: { type: 'reasoning-delta', index: 0, text: ' wants' } },
        },
      ],
    });
    expect(
      expandPackedRow({
        type: 'text-chunks',
        seq0: 9,
        data: { turn: 1, step: 2, index: 1, dt: [29], texts: ['a', 'b'] },
      }),
    ).toEqual({
      ok: true,
      events: [
        {
          type: 'assistant/chunk',
          seq: 9,
          data: { turn: 1, step: 2, chunk: { type: 'text-delta', index: 1, text: 'a' } },
        },
        {
          type: 'assistant/chunk',
          seq: 10,
          data: { turn: 1, step: 2, chunk: { type: 'text-delta', index: 1, text: 'b' } },
        },
      ],
    });
    expect(
      expandPackedRow({
        type: 'tool-call-chunks',
        time0: 50,
        data: { turn: 1, step: 1, index: 1, id: 'c', name: 'bash', dt: [28], args: ['', '{'] },
      }),
    ).toEqual({
      ok: true,
      events: [
        {
          type: 'assistant/chunk',
          time: 50,
          data: {
            turn: 1,
            step: 1,
            chunk: { type: 'tool-call-delta', index: 1, id: 'c', name: 'bash', argumentsDelta: '' },
          },
        },
        {
          type: 'assistant/chunk',
          time: 78,
          data: {
            turn: 1,
            step: 1,
            chunk: { type: 'tool-call-delta', index: 1, id: 'c', name: 'bash', argumentsDelta: '{' },
          },
        },
      ],
    });
    // A present seq0 is still checked.
    expect(
      expandPackedRow({ type: 'text-chunks', seq0: -1, data: { turn: 1, step: 1, index: 0, dt: [], texts: ['a'] } }).ok,
    ).toBe(false);
  });

  it('expands a reasoning row into reasoning deltas', () => {
    expect(
      expandPackedRow({
        type: 'reasoning-chunks',
        seq0: 0,
        time0: 7,
        data: { turn: 3, step: 1, index: 2, dt: [0], texts: ['a', 'b'] },
      }),
    ).toEqual({
      ok: true,
      events: [
        {
          type: 'assistant/chunk',
          seq: 0,
          time: 7,
          data: { turn: 3, step: 1, chunk: { type: 'reasoning-delta', index: 2, text: 'a' } },
        },
        {
          type: 'assistant/chunk',
          seq: 1,
          time: 7,
          data: { turn: 3, step: 1, chunk: { type: 'reasoning-delta', index: 2, text: 'b' } },
        },
      ],
    });
  });

  it('expands a tool-call row with and without a name', () => {
    const row = {
      type: 'tool-call-chunks',
      seq0: 7,
      time0: 20,
      data: { turn: 1, step: 1, index: 1, id: 'call-1', name: 'grep', dt: [5], args: ['{', '}'] },
    };
    expect(expandPackedRow(row)).toEqual({
      ok: true,
      events: [
        {
          type: 'assistant/chunk',
          seq: 7,
          time: 20,
          data: {
            turn: 1,
            step: 1,
            chunk: { type: 'tool-call-delta', index: 1, id: 'call-1', name: 'grep', argumentsDelta: '{' },
          },
        },
        {
          type: 'assistant/chunk',
          seq: 8,
          time: 25,
          data: {
            turn: 1,
            step: 1,
            chunk: { type: 'tool-call-delta', index: 1, id: 'call-1', name: 'grep', argumentsDelta: '}' },
          },
        },
      ],
    });
    const unnamed = expandPackedRow({
      ...row,
      data: { turn: 1, step: 1, index: 1, id: 'call-1', dt: [], args: ['{}'] },
    });
    expect(unnamed).toEqual({
      ok: true,
      events: [
        {
          type: 'assistant/chunk',
          seq: 7,
          time: 20,
          data: { turn: 1, step: 1, chunk: { type: 'tool-call-delta', index: 1, id: 'call-1', argumentsDelta: '{}' } },
        },
      ],
    });
  });

  it.each([
    [
      'dt as long as the members',
      { type: 'text-chunks', seq0: 1, time0: 1, data: { turn: 1, step: 1, index: 0, dt: [1, 1], texts: ['a', 'b'] } },
    ],
    ['no members', { type: 'text-chunks', seq0: 1, time0: 1, data: { turn: 1, step: 1, index: 0, dt: [], texts: [] } }],
    [
      'a non-string member',
      { type: 'text-chunks', seq0: 1, time0: 1, data: { turn: 1, step: 1, index: 0, dt: [1], texts: ['a', 7] } },
    ],
    [
      'an extra envelope key',
      { type: 'text-chunks', seq0: 1, time0: 1, extra: 1, data: { turn: 1, step: 1, index: 0, dt: [], texts: ['a'] } },
    ],
    [
      'a negative seq0',
      { type: 'text-chunks', seq0: -1, time0: 1, data: { turn: 1, step: 1, index: 0, dt: [], texts: ['a'] } },
    ],
    [
      'a fractional dt',
      { type: 'text-chunks', seq0: 1, time0: 1, data: { turn: 1, step: 1, index: 0, dt: [0.5], texts: ['a', 'b'] } },
    ],
    [
      'a tool row without id',
      { type: 'tool-call-chunks', seq0: 1, time0: 1, data: { turn: 1, step: 1, index: 0, dt: [], args: ['a'] } },
    ],
    [
      'times beyond the safe range',
      {
        type: 'text-chunks',
        seq0: 1,
        time0: Number.MAX_SAFE_INTEGER,
        data: { turn: 1, step: 1, index: 0, dt: [1], texts: ['a', 'b'] },
      },
    ],
  ])('rejects a row with %s', (_what, row) => {
    expect(expandPackedRow(row)).toEqual({
      ok: false,
      message: expect.stringMatching(/^malformed (text|tool-call)-chunks row: /),
    });
  });

  it('reports a malformed packed row at its line and reads on', async () => {
    const path = fileWith(
      '{"type":"session","id":"s"}\n' +
        '{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a","b"]}}\n' +
        '{"type":"turn/end","seq":2,"time":3,"data":{"turn":1,"reason":{"kind":"completed"}}}\n',
    );
    expect(await readFile(path)).toEqual([
      { kind: 'header', line: 1, value: { type: 'session', id: 's' } },
      {
        kind: 'problem',
        line: 2,
        code: 'bad-packed-row',
        message: 'line 2: malformed text-chunks row: dt has 0 entries for 2 members (expected 1)',
      },
      {
        kind: 'event',
        line: 3,
        value: { type: 'turn/end', seq: 2, time: 3, data: { turn: 1, reason: { kind: 'completed' } } },
      },
    ]);
  });
});

describe('damaged and foreign files', () => {
  const head = '{"type":"session","id":"s","delegationDepth":0}\n';
  const headerRecord = { kind: 'header', line: 1, value: { type: 'session', id: 's', delegationDepth: 0 } };
  const event = (seq: number) => `{"type":"turn/start","seq":${seq},"time":1,"data":{"turn":${seq}}}\n`;
  const eventRecord = (line: number, seq: number) => ({
    kind: 'event',
    line,
    value: { type: 'turn/start', seq, time: 1, data: { turn: seq } },
  });

  it('keeps every complete line of a file torn mid-line and reports the torn tail', async () => {
    const path = fileWith(`${head}${event(0)}${event(1)}{"type":"turn/st`);
    expect(await readFile(path)).toEqual([
      headerRecord,
      eventRecord(2, 0),
      eventRecord(3, 1),
      {
        kind: 'problem',
        line: 4,
        code: 'torn-tail',
        message: 'line 4 is incomplete: 16 bytes without a final newline',
      },
    ]);
  });

  it('keeps a last line that is complete JSON but lacks its newline', async () => {
    const path = fileWith(`${head}${event(0)}${event(1).trimEnd()}`);
    expect(await readFile(path)).toEqual([headerRecord, eventRecord(2, 0), eventRecord(3, 1)]);
  });

  it('reports a torn tail when a zstd file is cut in the middle of its last frame', async () => {
    const frames = [
      await compressZstdFrame(head),
      await compressZstdFrame(event(0) + event(1)),
      await compressZstdFrame(event(2) + event(3)),
    ];
    const last = frames[2]!;
    const path = fileWith(
      Buffer.concat([frames[0]!, frames[1]!, last.subarray(0, Math.floor(last.length / 2))]),
      '.jsonl.zstd',
    );
    expect(await readFile(path)).toEqual([
      headerRecord,
      eventRecord(2, 0),
      eventRecord(3, 1),
      { kind: 'problem', line: 4, code: 'torn-tail', message: 'the file ends inside a zstd frame' },
    ]);
  });

  it('keeps the lines of a last frame cut inside its checksum and still reports the torn tail', async () => {
    const frames = [await compressZstdFrame(head), await compressZstdFrame(event(0) + event(1))];
    const path = fileWith(Buffer.concat([frames[0]!, frames[1]!.subarray(0, frames[1]!.length - 2)]), '.jsonl.zstd');
    expect(await readFile(path)).toEqual([
      headerRecord,
      eventRecord(2, 0),
      eventRecord(3, 1),
      { kind: 'problem', line: 4, code: 'torn-tail', message: 'the file ends inside a zstd frame' },
    ]);
  });

  it('keeps the records before a corrupt zstd frame, reports it and stops', async () => {
    const good = [await compressZstdFrame(head), await compressZstdFrame(event(0))];
    const bytes = Buffer.concat([
      ...good,
      Buffer.from('this is not a zstd frame at all\n'),
      await compressZstdFrame(event(1)),
    ]);
    // The garbage starts right after the two good frames.
    const garbageAt = good[0]!.length + good[1]!.length;
    const records = await readFile(fileWith(bytes, '.jsonl.zstd'));
    expect(records).toEqual([
      headerRecord,
      eventRecord(2, 0),
      {
        kind: 'problem',
        line: 3,
        code: 'corrupt-zstd',
        message: `undecodable zstd data after line 2 (data that is not a zstd frame (no frame magic number), at compressed byte ${garbageAt}); the rest of the file is not read`,
      },
    ]);
  });

  it('ignores a skippable frame between data frames and at the start of the file', async () => {
    const bytes = Buffer.concat([
      skippableZstdFrame(Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), 0),
      await compressZstdFrame(head),
      skippableZstdFrame(new TextEncoder().encode('{"not":"a line"}\n'), 15),
      await compressZstdFrame(event(0)),
      await compressZstdFrame(''),
    ]);
    expect(await readFile(fileWith(bytes, '.jsonl.zstd'))).toEqual([headerRecord, eventRecord(2, 0)]);
  });

  it('reports a line that is not JSON with its line number and reads the lines after it', async () => {
    const path = fileWith(`${head}${event(0)}{"type": oops\n\n[1,2]\n${event(1)}`);
    expect(await readFile(path)).toEqual([
      headerRecord,
      eventRecord(2, 0),
      { kind: 'problem', line: 3, code: 'not-json', message: 'line 3 is not valid JSON' },
      { kind: 'problem', line: 4, code: 'not-json', message: 'line 4 is blank' },
      { kind: 'problem', line: 5, code: 'not-object', message: 'line 5 is JSON array, not an object' },
      eventRecord(6, 1),
    ]);
  });

  it('reports a line of invalid UTF-8 instead of replacing its bytes', async () => {
    const path = fileWith(
      Buffer.concat([
        Buffer.from(head + event(0)),
        Uint8Array.of(0x7b, 0x22, 0xff, 0x22, 0x7d, 0x0a),
        Buffer.from(event(1)),
      ]),
    );
    expect(await readFile(path)).toEqual([
      headerRecord,
      eventRecord(2, 0),
      { kind: 'problem', line: 3, code: 'invalid-utf8', message: 'line 3 is not valid UTF-8' },
      eventRecord(4, 1),
    ]);
  });

  it('skips a line longer than maxLineBytes without buffering it and reads on', async () => {
    const long = `{"type":"assistant/message","pad":"${'x'.repeat(5000)}"}\n`;
    const path = fileWith(`${head}${long}${event(0)}`);
    expect(await readFile(path, 200)).toEqual([
      headerRecord,
      {
        kind: 'problem',
        line: 2,
        code: 'oversized-line',
        message: 'line 2 is 5037 bytes, over the 200-byte line limit; skipped',
      },
      eventRecord(3, 0),
    ]);
  });

  it('reports an empty file', async () => {
    expect(await readFile(fileWith(''))).toEqual([
      { kind: 'problem', line: 0, code: 'empty-file', message: 'the file is empty' },
    ]);
  });

  it('reports zstd frames that hold no data as an empty file', async () => {
    const path = fileWith(await compressZstdFrame(''), '.jsonl.zstd');
    expect(await readFile(path)).toEqual([
      { kind: 'problem', line: 0, code: 'empty-file', message: 'the zstd frames hold no data' },
    ]);
  });

  it('reports a binary file as not a session log and reads no further', async () => {
    let state = 0x2545f491;
    const random = Uint8Array.from({ length: 4096 }, () => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return state & 0xff;
    });
    random[0] = 0;
    expect(await readFile(fileWith(random, '.bin'))).toEqual([
      {
        kind: 'problem',
        line: 1,
        code: 'not-a-session-log',
        message: 'line 1 is not valid UTF-8; not a session log, the file is not read further',
      },
    ]);
  });

  it('reports a first line that is JSON but not a session header', async () => {
    const path = fileWith(`{"type":"session","version":3}\n${event(0)}`);
    expect(await readFile(path)).toEqual([
      {
        kind: 'problem',
        line: 1,
        code: 'not-a-session-log',
        message:
          'line 1 is not a session header (id: Invalid input: expected string, received undefined); not a session log, the file is not read further',
      },
    ]);
  });

  it('reports a missing file as unreadable instead of throwing', async () => {
    const path = join(dir, 'does-not-exist.jsonl');
    expect(await readFile(path)).toEqual([
      {
        kind: 'problem',
        line: 0,
        code: 'unreadable',
        message: `cannot read ${path}: ENOENT: no such file or directory, open '${path}'`,
      },
    ]);
  });

  it('reports a directory as unreadable', async () => {
    expect(await readFile(dir)).toEqual([
      {
        kind: 'problem',
        line: 0,
        code: 'unreadable',
        message: `cannot read ${dir}: EISDIR: illegal operation on a directory, read`,
      },
    ]);
  });

  it('chooses the format by content, not by file extension', async () => {
    const path = fileWith(`${head}${event(0)}`, '.jsonl.zstd');
    expect(await readFile(path)).toEqual([headerRecord, eventRecord(2, 0)]);
  });
});

describe('streaming', () => {
  it('gives the same records when a zstd log arrives one byte at a time', async () => {
    const path = join(dir, 'bytewise.jsonl.zstd');
    await writeDurableLogFile(path, embeddedHeader, embeddedEvents, { pack: true, zstd: true, batchSize: 3 });
    const whole = await readFile(path);
    const bytes = new Uint8Array(await import('node:fs/promises').then((fs) => fs.readFile(path)));
    const decoder = new DurableLogDecoder();
    const bytewise: DurableLogRecord[] = [];
    for (let i = 0; i < bytes.length; i += 1) bytewise.push(...(await decoder.push(bytes.subarray(i, i + 1))));
    bytewise.push(...(await decoder.end()));
    expect(bytewise).toEqual(whole);
    expect(values(whole)).toEqual(embeddedEvents);
  });

  it('gives the same records when a plain log with packed rows arrives in three-byte chunks', async () => {
    const bytes = new TextEncoder().encode(serializeDurableLog(chunkHeader, chunkEvents, { pack: true }));
    const chunks = Array.from({ length: Math.ceil(bytes.length / 3) }, (_, i) => bytes.subarray(i * 3, i * 3 + 3));
    const records = await collect(readDurableLog(chunksOf(...chunks)));
    expect(notEvents(records)).toEqual([{ kind: 'header', line: 1, value: chunkHeader }]);
    expect(values(records)).toEqual(chunkEvents);
  });

  it('reads zstd when told to even without looking at the magic bytes', async () => {
    const frame = await compressZstdFrame('{"type":"session","id":"z"}\n');
    expect(await collect(readDurableLog(chunksOf(frame), { compression: 'zstd' }))).toEqual([
      { kind: 'header', line: 1, value: { type: 'session', id: 'z' } },
    ]);
  });

  it('propagates an error thrown by the source itself', async () => {
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield new TextEncoder().encode('{"type":"session","id":"s"}\n');
      throw new Error('disk on fire');
    }
    const seen: DurableLogRecord[] = [];
    await expect(
      (async () => {
        for await (const record of readDurableLog(failing())) seen.push(record);
      })(),
    ).rejects.toThrow('disk on fire');
    expect(seen).toEqual([{ kind: 'header', line: 1, value: { type: 'session', id: 's' } }]);
  });

  it('stops pulling from the source after a not-a-session-log problem', async () => {
    let pulled = 0;
    async function* source(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < 100; i += 1) {
        pulled += 1;
        yield new TextEncoder().encode('garbage line\n');
      }
    }
    const records = await collect(readDurableLog(source()));
    expect(records.map((r) => r.kind === 'problem' && r.code)).toEqual(['not-a-session-log']);
    expect(pulled).toBe(1);
  });
});

describe('a file of nothing but defects', () => {
  it('stops after MAX_PROBLEMS_PER_FILE problems instead of flooding the caller', async () => {
    const header = '{"type":"session","version":1,"id":"s","createdAt":1,"delegationDepth":0}\n';
    async function* source(): AsyncGenerator<Uint8Array> {
      yield Buffer.from(header + 'x\n'.repeat(50_000));
    }
    const records = [];
    for await (const record of readDurableLog(source())) records.push(record);
    const problems = records.filter((r) => r.kind === 'problem');
    expect(problems).toHaveLength(1001);
    expect(problems.at(-1)).toEqual({
      kind: 'problem',
      line: 1001,
      code: 'too-many-problems',
      message: '1000 defective lines by line 1001; the rest of the file is not read',
    });
  });
});

describe('lineFilter', () => {
  it('passes over the lines it refuses, unparsed, and numbers the rest as the full read does', async () => {
    const text = [
      '{"type":"session","id":"s"}',
      'not json at all',
      '{"type":"turn/start","seq":0,"data":{}}',
      '{"type":"session/end-seed","seq":1,"data":{}}',
      '',
    ].join('\n');
    const encoder = new TextEncoder();
    const filtered = await collect(
      readDurableLog(chunksOf(encoder.encode(text)), {
        lineFilter: (bytes) => new TextDecoder().decode(bytes).includes('end-seed'),
      }),
    );
    expect(filtered.map((record) => [record.kind, record.line])).toEqual([
      ['header', 1],
      ['event', 4],
    ]);
    const full = await collect(readDurableLog(chunksOf(encoder.encode(text))));
    expect(full.map((record) => [record.kind, record.line])).toEqual([
      ['header', 1],
      ['problem', 2],
      ['event', 3],
      ['event', 4],
    ]);
  });
});
