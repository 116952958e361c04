/**
 * A zstd frame the decoder loops on, through every entry point that reads
 * files: a whole replay (the frame as a file's first frame, and after a valid
 * header frame), the capture/NDJSON line reader, and the built CLI with its
 * default stall timeout. Each ends with `corrupt-zstd` naming the compressed
 * offset and what to do; the other files of the replay are replayed; the
 * process exits by itself (the test waits for its exit event, not a sleep).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compressZstdFrame, writeDurableLogFile } from '../../src/fixtures/durable-log-writer.js';
import { readLines, type InputLine } from '../../src/replay/input-files.js';
import { replayPaths, type ReplayProblem } from '../../src/replay/replay.js';
import { fileChunks } from '../../src/wire/file-chunks.js';
import { runCli } from '../helpers/cli.js';
import { events, step, stepStart, text, turnEnd, turnStart, usage } from '../helpers/events.js';
import { LOOPING_BLOCK_OFFSET, loopingZstd } from '../helpers/looping-zstd.js';

const dir = mkdtempSync(join(tmpdir(), 'looping-zstd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const STALL_MS = 400;
const header = (id: string) => ({ type: 'session', version: 3, id, createdAt: '2026-11-29T10:00:00.000Z', delegationDepth: 0 });
const noRuns = { onRunStart: () => undefined, onRunEnd: () => undefined };

const corrupt = join(dir, 'corrupt.jsonl.zstd');
writeFileSync(corrupt, loopingZstd());
const good = join(dir, 'good.jsonl');
await writeDurableLogFile(
  good,
  header('good'),
  events([turnStart(0), stepStart(0), step('embedded', { content: [text('all done')], usage: usage(10, 3) }), turnEnd('completed', 0)], 0, 1_700_000_000_000),
  { zstd: false, pack: false },
);

describe('a zstd frame the decoder loops on', () => {
  it('skips that file of a replay, naming the offset, and replays the next one', async () => {
    const problems: ReplayProblem[] = [];
    const summary = await replayPaths([corrupt, good], noRuns, { zstdStallTimeoutMs: STALL_MS, onProblem: (p) => problems.push(p) });
    expect(problems).toEqual([
      {
        file: corrupt,
        line: 0,
        code: 'corrupt-zstd',
        scope: 'file',
        message:
          `undecodable zstd data (the zstd decoder made no progress for 0.4 s on the block at compressed byte ${LOOPING_BLOCK_OFFSET} and was stopped: ` +
          'the data is corrupt or made to decode slowly; check the file with `zstd -t`)',
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
    const summary = await replayPaths([mixed], noRuns, { zstdStallTimeoutMs: STALL_MS, onProblem: (p) => problems.push(p) });
    expect(problems.map((p) => [p.code, p.scope, p.line])).toEqual([['corrupt-zstd', 'record', 2]]);
    expect(problems[0]?.message).toContain(`on the block at compressed byte ${headerFrame.length + LOOPING_BLOCK_OFFSET} and was stopped`);
    expect(summary.files[0]).toMatchObject({ path: mixed, isSkipped: false });
  });

  it('ends the line reader of captures and raw NDJSON with corrupt-zstd after the lines before it', async () => {
    const first = await compressZstdFrame(`${JSON.stringify({ type: 'subagent-otel-capture', version: 1, protocol: 'sdk', startedAt: 1 })}\n`);
    const capture = join(dir, 'capture.zst');
    writeFileSync(capture, Buffer.concat([first, loopingZstd()]));
    const lines: InputLine[] = [];
    for await (const line of readLines(fileChunks(capture), { zstdStallTimeoutMs: STALL_MS })) lines.push(line);
    expect(lines.map((l) => l.kind)).toEqual(['line', 'problem']);
    expect(lines[1]).toMatchObject({ code: 'corrupt-zstd', line: 2 });
    expect(lines[1]?.kind === 'problem' ? lines[1].message : '').toContain(`compressed byte ${first.length + LOOPING_BLOCK_OFFSET}`);
  });

  it('makes `subagent-otel replay` report it with the default 10 s bound, replay the other file and exit 1', async () => {
    const out = join(dir, 'out');
    const started = performance.now();
    const { code, stdout, stderr } = await runCli(['replay', '--json', '--no-progress', '--out', out, corrupt, good]);
    const seconds = (performance.now() - started) / 1000;
    const errors = stderr.toString('utf8');
    expect(errors).toContain(
      `subagent-otel replay: ${corrupt}: undecodable zstd data (the zstd decoder made no progress for 10 s on the block at compressed byte ${LOOPING_BLOCK_OFFSET} and was stopped: ` +
        'the data is corrupt or made to decode slowly; check the file with `zstd -t`) [corrupt-zstd, file skipped]\n',
    );
    expect(code).toBe(1);
    const json = JSON.parse(stdout.toString('utf8')) as { runs: number; skipped: { files: number } };
    expect(json.runs).toBe(1);
    expect(json.skipped.files).toBe(1);
    // The bound, not a hang: the stall costs about 10 s, nothing like the test's own timeout.
    expect(seconds).toBeGreaterThanOrEqual(10);
    expect(seconds).toBeLessThan(45);
  });
});
