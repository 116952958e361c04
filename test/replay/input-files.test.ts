import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compressZstdFrame, skippableZstdFrame } from '../../src/fixtures/durable-log-writer.js';
import { expandPaths, sniffFile } from '../../src/replay/input-files.js';
import { readLines, type InputLine } from '../../src/wire/input-lines.js';

const dir = mkdtempSync(join(tmpdir(), 'input-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let count = 0;
function file(content: string | Uint8Array, name?: string): string {
  count += 1;
  const path = join(dir, name ?? `f-${count}`);
  writeFileSync(path, content);
  return path;
}

async function lines(...chunks: Array<string | Uint8Array>): Promise<Array<[number, string, string]>> {
  async function* source() {
    for (const chunk of chunks) yield typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  }
  const out: Array<[number, string, string]> = [];
  for await (const item of readLines(source(), { maxLineBytes: 64 }) as AsyncIterable<InputLine>) {
    out.push(
      item.kind === 'line'
        ? [item.line, 'line', Buffer.from(item.bytes).toString('utf8')]
        : [item.line, item.code, item.message],
    );
  }
  return out;
}

describe('sniffFile', () => {
  it('tells session logs, captures and raw JSON-RPC apart by line 1, plain or zstd', async () => {
    const log = '{"type":"session","version":3,"id":"s1"}\n{"type":"turn/start","seq":0,"time":1,"data":{"turn":0}}\n';
    expect(await sniffFile(file(log))).toEqual({
      ok: true,
      format: 'log',
      compression: 'plain',
      session: { id: 's1' },
    });
    const zstd = Buffer.concat([
      await compressZstdFrame(log.split('\n')[0] + '\n'),
      await compressZstdFrame(log.split('\n')[1] + '\n'),
    ]);
    expect(await sniffFile(file(zstd))).toEqual({
      ok: true,
      format: 'log',
      compression: 'zstd',
      session: { id: 's1' },
    });
    expect(
      await sniffFile(file('{"type":"subagent-otel-capture","version":1,"protocol":"auto","startedAt":1}\r\n')),
    ).toEqual({
      ok: true,
      format: 'capture',
      compression: 'plain',
    });
    expect(await sniffFile(file('{"jsonrpc":"2.0","method":"session.status","params":{}}'))).toEqual({
      ok: true,
      format: 'ndjson',
      compression: 'plain',
    });
    const long = `{"jsonrpc":"2.0","method":"x","params":{"pad":"${'a'.repeat(100_000)}"}}\n`;
    expect(await sniffFile(file(long))).toEqual({ ok: true, format: 'ndjson', compression: 'plain' });
  });

  it('says why a file is none of them', async () => {
    expect(await sniffFile(file(''))).toEqual({ ok: false, code: 'empty-file', message: 'the file is empty' });
    expect(
      await sniffFile(file(Buffer.concat([await compressZstdFrame(''), skippableZstdFrame(Buffer.from('x'))]))),
    ).toEqual({
      ok: false,
      code: 'empty-file',
      message: 'the zstd frames hold no data',
    });
    expect(await sniffFile(file(Buffer.from([0x7b, 0x00, 0x7d, 0x0a])))).toMatchObject({ ok: false, code: 'binary' });
    expect(await sniffFile(file(Buffer.from([0xff, 0xfe, 0x41, 0x0a])))).toMatchObject({ ok: false, code: 'binary' });
    expect(await sniffFile(file('hello world\n'))).toMatchObject({ ok: false, code: 'unrecognized' });
    expect(await sniffFile(file('{"resourceSpans":[]}\n'))).toMatchObject({ ok: false, code: 'unrecognized' });
    const corrupt = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    expect(await sniffFile(file(corrupt))).toMatchObject({ ok: false, code: 'corrupt-zstd' });
    expect(await sniffFile(join(dir, 'absent'))).toMatchObject({
      ok: false,
      code: 'unreadable',
      message: expect.stringContaining('ENOENT') as unknown,
    });
    expect(await sniffFile(dir)).toMatchObject({
      ok: false,
      code: 'unreadable',
      message: expect.stringContaining('EISDIR') as unknown,
    });
  });
});

describe('readLines', () => {
  it('numbers lines across chunks and zstd frames, dropping a trailing CR', async () => {
    const frames = Buffer.concat([
      await compressZstdFrame('{"a":1}\r\n{"b"'),
      await compressZstdFrame(':2}\n\n{"c":3}\n'),
    ]);
    expect(await lines(frames.subarray(0, 2), frames.subarray(2))).toEqual([
      [1, 'line', '{"a":1}'],
      [2, 'line', '{"b":2}'],
      [3, 'line', ''],
      [4, 'line', '{"c":3}'],
    ]);
  });

  it('keeps a last line that is complete JSON, and reports one that was cut', async () => {
    expect(await lines('{"a":1}\n{"b":2}')).toEqual([
      [1, 'line', '{"a":1}'],
      [2, 'line', '{"b":2}'],
    ]);
    expect(await lines('{"a":1}\n{"b":')).toEqual([
      [1, 'line', '{"a":1}'],
      [2, 'torn-tail', 'line 2 is incomplete: 5 bytes without a final newline; skipped'],
    ]);
  });

  it('reports a zstd stream that ends inside a frame after the lines decoded before it', async () => {
    const first = await compressZstdFrame('{"a":1}\n');
    const second = await compressZstdFrame('{"b":2}\n{"c":3}\n');
    const out = await lines(Buffer.concat([first, second.subarray(0, second.length - 2)]));
    expect(out[0]).toEqual([1, 'line', '{"a":1}']);
    expect(out[out.length - 1]?.[1]).toBe('torn-tail');
    expect(out[out.length - 1]?.[2]).toBe('the file ends inside a zstd frame');
  });

  it('stops at undecodable zstd data, and skips an oversized line', async () => {
    const good = await compressZstdFrame('{"a":1}\n');
    const out = await lines(Buffer.concat([good, Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff])]));
    expect(out.map(([line, kind]) => [line, kind])).toEqual([
      [1, 'line'],
      [2, 'corrupt-zstd'],
    ]);
    expect(await lines(`${'x'.repeat(100)}\n{"a":1}\n`)).toEqual([
      [1, 'oversized-line', 'line of 100 bytes exceeds the 64-byte limit; skipped'],
      [2, 'line', '{"a":1}'],
    ]);
  });

  it('turns an error of the source into one unreadable problem', async () => {
    async function* failing() {
      yield Buffer.from('{"a":1}\n');
      throw new Error('EIO: disk on fire');
    }
    const out: InputLine[] = [];
    for await (const item of readLines(failing())) out.push(item);
    expect(out).toEqual([
      { kind: 'line', line: 1, bytes: Buffer.from('{"a":1}') },
      { kind: 'problem', line: 0, code: 'unreadable', message: 'reading stopped: EIO: disk on fire' },
    ]);
  });
});

describe('expandPaths', () => {
  it('walks directories in name order, picking replayable names and zstd files, once each', async () => {
    const root = join(dir, 'walk');
    mkdirSync(join(root, 'b', 'deep'), { recursive: true });
    mkdirSync(join(root, 'out'), { recursive: true });
    writeFileSync(join(root, 'b', 'deep', 'session.jsonl.zstd'), 'x');
    writeFileSync(join(root, 'b', 'cap.ndjson'), 'x');
    writeFileSync(join(root, 'a.jsonl'), 'x');
    writeFileSync(join(root, 'readme.md'), 'x');
    writeFileSync(join(root, 'blob.bin'), await compressZstdFrame('{}\n'));
    writeFileSync(join(root, 'out', 'traces.jsonl'), 'x');
    symlinkSync(root, join(root, 'b', 'loop'));
    const { files, problems, dirs } = await expandPaths([root, join(root, 'a.jsonl'), join(root, 'readme.md')], {
      exclude: [join(root, 'out')],
    });
    expect(files.map((f) => f.path.replace(`${root}/`, ''))).toEqual([
      'a.jsonl',
      'b/cap.ndjson',
      'b/deep/session.jsonl.zstd',
      'blob.bin',
      'readme.md',
    ]);
    // Every directory entered, once (the link back to the root is not entered again), the excluded one not at all.
    expect(dirs.map((d) => d.replace(root, '.'))).toEqual(['.', './b', './b/deep']);
    expect(files[0]?.size).toBe(1);
    expect(problems).toEqual([]);
  });

  it('says the output directory was skipped as such, not that it holds no files', async () => {
    const root = join(dir, 'own-out');
    mkdirSync(join(root, 'subagent-otel-out'), { recursive: true });
    writeFileSync(join(root, 'subagent-otel-out', 'traces.jsonl'), '{}\n');
    const own = join(root, 'subagent-otel-out');
    const direct = await expandPaths([own], { exclude: [own] });
    expect(direct).toEqual({
      files: [],
      // Not entered: no directory of its is followed either.
      dirs: [],
      problems: [
        {
          path: own,
          code: 'no-files',
          message:
            'this directory is where this replay writes its own telemetry (traces.jsonl and metrics.jsonl hold OTLP JSON, not session logs), so its files are not read; replay session logs or captures, or give --out another directory',
        },
      ],
    });
    const parent = await expandPaths([root], { exclude: [own] });
    expect(parent.problems[0]?.message).toBe(
      `no session logs, captures or transcripts (.jsonl, .jsonl.zstd, .ndjson, .zst, .zstd, session-*.json, or zstd) in this directory outside ${own}, which is where this replay writes its own telemetry (traces.jsonl and metrics.jsonl hold OTLP JSON, not session logs), so its files are not read; replay session logs or captures, or give --out another directory`,
    );
  });

  it('reports a missing path, a pipe and a directory without inputs', async () => {
    const empty = join(dir, 'nothing-here');
    mkdirSync(empty);
    writeFileSync(join(empty, 'notes.txt'), 'x');
    const fifo = join(dir, 'a-pipe');
    execFileSync('mkfifo', [fifo]);
    const { files, problems } = await expandPaths([join(dir, 'gone'), fifo, empty]);
    expect(files).toEqual([]);
    expect(problems).toEqual([
      { path: join(dir, 'gone'), code: 'missing', message: 'no such file or directory' },
      {
        path: fifo,
        code: 'unreadable',
        message: 'not a regular file (a pipe or device cannot be read twice); save it to a file first',
      },
      {
        path: empty,
        code: 'no-files',
        message:
          'no session logs, captures or transcripts (.jsonl, .jsonl.zstd, .ndjson, .zst, .zstd, session-*.json, or zstd) in this directory',
      },
    ]);
  });
});
