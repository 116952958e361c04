/**
 * A zstd header declaring a huge window, through every entry point that reads
 * files: the durable-log reader, replay's format sniffing, replay's line
 * reader (captures, raw NDJSON) and a whole replay. Each refuses the frame as
 * `corrupt-zstd` naming the window, before anything is allocated for it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readDurableLogFile, type DurableLogRecord } from '../../src/wire/durable-log.js';
import { fileChunks } from '../../src/wire/file-chunks.js';
import { sniffFile } from '../../src/replay/input-files.js';
import { readLines, type InputLine } from '../../src/wire/input-lines.js';
import { replayPaths, type ReplayProblem } from '../../src/replay/replay.js';

const dir = mkdtempSync(join(tmpdir(), 'hostile-zstd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Ten bytes: the zstd magic, a frame header whose window descriptor 0xA7
 * declares 2^30 + 7/8 * 2^30 = 2,013,265,920 bytes, a raw block header and
 * one byte of block data.
 */
const HUGE_WINDOW = Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xa7, 0x21, 0x03, 0x00, 0x41);

describe('a zstd frame declaring a 1.9 GiB window', () => {
  const path = join(dir, 'bomb.jsonl.zstd');
  writeFileSync(path, HUGE_WINDOW);

  it('is refused by the durable-log reader', async () => {
    const records: DurableLogRecord[] = [];
    for await (const record of readDurableLogFile(path)) records.push(record);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ kind: 'problem', code: 'corrupt-zstd' });
    expect(records[0]?.kind === 'problem' ? records[0].message : '').toContain('2013265920-byte window');
  });

  it('is refused by format sniffing', async () => {
    const sniffed = await sniffFile(path);
    expect(sniffed).toMatchObject({ ok: false, code: 'corrupt-zstd' });
    expect(sniffed.ok ? '' : sniffed.message).toContain('2013265920-byte window');
  });

  it('is refused by the line reader of captures and raw NDJSON', async () => {
    const lines: InputLine[] = [];
    for await (const line of readLines(fileChunks(path))) lines.push(line);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ kind: 'problem', code: 'corrupt-zstd', line: 1 });
    expect(lines[0]?.kind === 'problem' ? lines[0].message : '').toContain('2013265920-byte window');
  });

  it('is refused by a replay, which reports it and goes on', async () => {
    const problems: ReplayProblem[] = [];
    const summary = await replayPaths(
      [path],
      { onRunStart: () => undefined, onRunEnd: () => undefined },
      { onProblem: (p) => problems.push(p) },
    );
    expect(summary.runs).toBe(0);
    expect(problems.map((p) => [p.code, p.scope])).toEqual([['corrupt-zstd', 'file']]);
    expect(process.memoryUsage().rss).toBeLessThan(1024 * 1024 * 1024);
  });

  it('is refused after a valid capture header frame, mid-file', async () => {
    // A capture whose first frame is fine and whose second declares the huge window.
    const { compressZstdFrame } = await import('../../src/fixtures/durable-log-writer.js');
    const header = `${JSON.stringify({ type: 'subagent-otel-capture', version: 1, protocol: 'sdk', startedAt: 1 })}\n`;
    const mixed = join(dir, 'mixed.zst');
    writeFileSync(mixed, Buffer.concat([await compressZstdFrame(Buffer.from(header)), HUGE_WINDOW]));
    const lines: InputLine[] = [];
    for await (const line of readLines(fileChunks(mixed))) lines.push(line);
    expect(lines.map((l) => l.kind)).toEqual(['line', 'problem']);
    expect(lines[1]).toMatchObject({ code: 'corrupt-zstd', line: 2 });
  });
});
