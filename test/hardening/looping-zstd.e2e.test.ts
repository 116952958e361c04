/**
 * The zstd frames the earlier decoder (fzstd 0.1.1) looped on, through every
 * entry point that reads files: a whole replay (the frame as a file's first
 * frame, and after a valid header frame), the capture/NDJSON line reader,
 * the byte reader at every chunking, and the built CLI. libzstd refuses each
 * as corrupt: each ends with `corrupt-zstd` naming the compressed offset of
 * the block; the other files of the replay are replayed; the process exits
 * by itself (the test waits for its exit event, not a sleep).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compressZstdFrame, writeDurableLogFile } from '../../src/fixtures/durable-log-writer.js';
import { readLines, type InputLine } from '../../src/wire/input-lines.js';
import { replayPaths, type ReplayProblem } from '../../src/replay/replay.js';
import { fileChunks } from '../../src/wire/file-chunks.js';
import { runCli } from '../helpers/cli.js';
import { events, step, stepStart, text, turnEnd, turnStart, usage } from '../helpers/events.js';
import { ByteLineReader, type ByteLineItem } from '../../src/wire/byte-lines.js';
import { FUZZ_LOOPING_INPUTS, LOOPING_BLOCK_OFFSET, loopingZstd } from '../helpers/looping-zstd.js';

const dir = mkdtempSync(join(tmpdir(), 'looping-zstd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** libzstd's words for a block it cannot decode. */
const CORRUPT = 'libzstd: Data corruption detected';
const header = (id: string) => ({
  type: 'session',
  version: 3,
  id,
  createdAt: '2026-11-29T10:00:00.000Z',
  delegationDepth: 0,
});
const noRuns = { onRunStart: () => undefined, onRunEnd: () => undefined };

const corrupt = join(dir, 'corrupt.jsonl.zstd');
writeFileSync(corrupt, loopingZstd());
const good = join(dir, 'good.jsonl');
await writeDurableLogFile(
  good,
  header('good'),
  events(
    [
      turnStart(0),
      stepStart(0),
      step('embedded', { content: [text('all done')], usage: usage(10, 3) }),
      turnEnd('completed', 0),
    ],
    0,
    1_700_000_000_000,
  ),
  { zstd: false, pack: false },
);

describe('a zstd frame the decoder loops on', () => {
  it('skips that file of a replay, naming the offset, and replays the next one', async () => {
    const problems: ReplayProblem[] = [];
    const summary = await replayPaths([corrupt, good], noRuns, { onProblem: (p) => problems.push(p) });
    expect(problems).toEqual([
      {
        file: corrupt,
        line: 0,
        code: 'corrupt-zstd',
        scope: 'file',
        message: `undecodable zstd data (${CORRUPT}, at compressed byte ${LOOPING_BLOCK_OFFSET})`,
      },
    ]);
    expect(summary.runs).toBe(1);
    expect(summary.skipped).toEqual({ files: 1, records: 0 });
    expect(summary.files.map((f) => [f.path, f.runs, f.isSkipped])).toEqual([
      [corrupt, 0, true],
      [good, 1, false],
    ]);
  });

  it('keeps the header of a session log whose second frame loops, and reports the rest as one record problem', async () => {
    const headerFrame = await compressZstdFrame(`${JSON.stringify(header('mid'))}\n`);
    const mixed = join(dir, 'mid.jsonl.zstd');
    writeFileSync(mixed, Buffer.concat([headerFrame, loopingZstd()]));
    const problems: ReplayProblem[] = [];
    const summary = await replayPaths([mixed], noRuns, { onProblem: (p) => problems.push(p) });
    expect(problems.map((p) => [p.code, p.scope, p.line])).toEqual([['corrupt-zstd', 'record', 2]]);
    expect(problems[0]?.message).toContain(
      `(${CORRUPT}, at compressed byte ${headerFrame.length + LOOPING_BLOCK_OFFSET})`,
    );
    expect(summary.files[0]).toMatchObject({ path: mixed, isSkipped: false });
  });

  it('ends the line reader of captures and raw NDJSON with corrupt-zstd after the lines before it', async () => {
    const first = await compressZstdFrame(
      `${JSON.stringify({ type: 'subagent-otel-capture', version: 1, protocol: 'sdk', startedAt: 1 })}\n`,
    );
    const capture = join(dir, 'capture.zst');
    writeFileSync(capture, Buffer.concat([first, loopingZstd()]));
    const lines: InputLine[] = [];
    for await (const line of readLines(fileChunks(capture))) lines.push(line);
    expect(lines.map((l) => l.kind)).toEqual(['line', 'problem']);
    expect(lines[1]).toMatchObject({ code: 'corrupt-zstd', line: 2 });
    expect(lines[1]?.kind === 'problem' ? lines[1].message : '').toContain(
      `compressed byte ${first.length + LOOPING_BLOCK_OFFSET}`,
    );
  });

  it('makes `subagent-otel replay` report it, replay the other file and exit 1', async () => {
    const out = join(dir, 'out');
    const { code, stdout, stderr } = await runCli(['replay', '--json', '--no-progress', '--out', out, corrupt, good]);
    const errors = stderr.toString('utf8');
    expect(errors).toContain(
      `subagent-otel replay: ${corrupt}: undecodable zstd data (${CORRUPT}, at compressed byte ${LOOPING_BLOCK_OFFSET}) [corrupt-zstd, file skipped]\n`,
    );
    expect(code).toBe(1);
    const json = JSON.parse(stdout.toString('utf8')) as { runs: number; skipped: { files: number } };
    expect(json.runs).toBe(1);
    expect(json.skipped.files).toBe(1);
  });

  it('ends each input that looped the earlier decoder with corrupt-zstd at its first block, for every chunking', async () => {
    // Hand-read from each frame's header: 4 magic bytes, the descriptor, then a 1-byte (0x24) or 2-byte (0x64) content size.
    const expectedOffsets = [6, 6, 7, 7, 7, 7];
    expect(FUZZ_LOOPING_INPUTS).toHaveLength(6);
    for (const [index, base64] of FUZZ_LOOPING_INPUTS.entries()) {
      const bytes = new Uint8Array(Buffer.from(base64, 'base64'));
      expect(bytes[4], `input ${index} descriptor`).toBe(expectedOffsets[index] === 6 ? 0x24 : 0x64);
      for (const size of [1, 7, 4096]) {
        const reader = new ByteLineReader();
        const items: ByteLineItem[] = [];
        for (let offset = 0; offset < bytes.length; offset += size)
          items.push(...(await reader.push(bytes.subarray(offset, offset + size))));
        items.push(...(await reader.end()));
        expect(items, `input ${index}, chunks of ${size}`).toEqual([
          { kind: 'corrupt-zstd', reason: `${CORRUPT}, at compressed byte ${expectedOffsets[index]}` },
        ]);
      }
    }
  });
});
