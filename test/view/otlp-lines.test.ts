/**
 * The OTLP JSON lines reader under `view`: each valid traces line with its
 * byte offset and length, read again later by those alone; a file that does
 * not start with traces refused whole with a message naming it, later bad
 * lines counted and skipped.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  checkTracesFile,
  NotOtlpTracesError,
  parseTracesLine,
  readTracesFile,
  rereadTracesLines,
  type TracesLine,
} from '../../src/view/otlp-lines.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'otlp-lines-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const request = (name: string): string =>
  JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [] },
        scopeSpans: [{ spans: [{ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), name }] }],
      },
    ],
  });
const metrics = JSON.stringify({ resourceMetrics: [] });

function file(text: string): string {
  const path = join(root, 'traces.jsonl');
  writeFileSync(path, text);
  return path;
}

describe('parseTracesLine', () => {
  it('tells a traces request from a metrics request, other JSON and non-JSON', () => {
    expect(parseTracesLine(Buffer.from(request('a'))).ok).toBe(true);
    expect(parseTracesLine(Buffer.from(metrics))).toEqual({
      ok: false,
      error: 'an OTLP metrics request, not traces',
      metrics: true,
    });
    expect(parseTracesLine(Buffer.from('{"x":1}'))).toEqual({
      ok: false,
      error: 'not an OTLP JSON traces request (no resourceSpans)',
    });
    expect(parseTracesLine(Buffer.from('{'))).toEqual({ ok: false, error: 'not JSON' });
  });
});

describe('readTracesFile and rereadTracesLines', () => {
  it('give each valid line with its place, skip blank lines, count bad ones, and read lines back by place', async () => {
    const first = request('first');
    const second = request('second');
    // Line 1 a request, 2 blank, 3 not JSON, 4 a request without a final newline.
    const path = file(`${first}\n  \n{oops\n${second}`);
    const lines: TracesLine[] = [];
    const report = await readTracesFile(path, (line) => lines.push(line));
    expect(report).toEqual({ lines: 2, skipped: 1, firstProblem: 'line 3: not JSON' });
    expect(lines.map((l) => [l.offset, l.length])).toEqual([
      [0, first.length],
      [first.length + 1 + 3 + 6, second.length],
    ]);
    const again = await rereadTracesLines(path, [lines[1]!, lines[0]!]);
    expect(again.map((r) => r.resourceSpans?.[0]?.scopeSpans?.[0]?.spans?.[0]?.name)).toEqual(['second', 'first']);
  });

  it('say an empty file is empty', async () => {
    expect(await readTracesFile(file(''), () => undefined)).toEqual({
      lines: 0,
      skipped: 0,
      firstProblem: 'the file is empty',
    });
  });

  it('refuse a file that does not start with traces, naming it and pointing to the traces file beside metrics', async () => {
    const path = file(`\n${metrics}\n${request('late')}\n`);
    const refused = readTracesFile(path, () => undefined);
    await expect(refused).rejects.toBeInstanceOf(NotOtlpTracesError);
    await expect(refused).rejects.toThrow(
      `${path} is not an OTLP JSON traces file: line 2 is an OTLP metrics request, not traces (give the traces.jsonl beside it, or their directory)`,
    );
  });
});

describe('checkTracesFile', () => {
  it('passes a traces file by its first non-blank line and refuses anything else', async () => {
    await expect(checkTracesFile(file(`\n${request('a')}\n{oops\n`))).resolves.toBeUndefined();
    await expect(checkTracesFile(file('{"x":1}\n'))).rejects.toThrow(
      /line 1 is not an OTLP JSON traces request \(no resourceSpans\) \(view reads the traces.jsonl files/,
    );
  });
});
