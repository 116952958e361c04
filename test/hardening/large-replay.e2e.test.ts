/**
 * Replays of realistic big inputs through the built CLI, exporting to the
 * OTLP-JSON-lines files: one session of 150,000 turns, and 2,500 one-run
 * logs in one directory, the latter piped to a reader with `--json`.
 *
 * Spans in = spans out: every run is one `invoke_agent` span and one `chat`
 * span, all of them in `traces.jsonl`; nothing dropped, exit 0, and the
 * `--json` document arrives whole through a pipe.
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { finished, spawnCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'large-replay-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = 1_700_000_000_000;

/** Writes a plain session log of `turns` one-step completed turns. */
function writeLog(path: string, id: string, turns: number): void {
  const fd = openSync(path, 'w');
  let seq = 0;
  let lines = [JSON.stringify({ type: 'session', version: 3, id, cwd: '/w', createdAt: '2026-11-29T10:00:00.000Z' })];
  for (let turn = 0; turn < turns; turn += 1) {
    const time = T0 + turn * 10;
    lines.push(
      JSON.stringify({ type: 'turn/start', seq: seq++, time, data: { turn } }),
      JSON.stringify({
        type: 'assistant/message',
        seq: seq++,
        time: time + 1,
        data: {
          turn,
          step: 0,
          message: { id: `m${turn}`, role: 'assistant', content: [{ type: 'text', text: `answer ${turn}` }] },
          usage: { inputTokens: 10, outputTokens: 2 },
        },
      }),
      JSON.stringify({ type: 'turn/end', seq: seq++, time: time + 2, data: { turn, reason: { kind: 'completed' } } }),
    );
    if (lines.length > 3000) {
      writeSync(fd, `${lines.join('\n')}\n`);
      lines = [];
    }
  }
  writeSync(fd, `${lines.join('\n')}\n`);
  closeSync(fd);
}

/** Span names in an OTLP-JSON-lines traces file, counted by their first word. */
function spanCounts(path: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line === '') continue;
    const request = JSON.parse(line) as {
      resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string }> }> }>;
    };
    for (const resource of request.resourceSpans) {
      for (const scope of resource.scopeSpans) {
        for (const span of scope.spans) {
          const kind = span.name.split(' ')[0] ?? '';
          counts[kind] = (counts[kind] ?? 0) + 1;
        }
      }
    }
  }
  return counts;
}

describe('replay of large inputs', () => {
  it('streams one session of 150,000 turns: every run exported, exit 0', async () => {
    const log = join(dir, 'big.jsonl');
    writeLog(log, 'big', 150_000);
    const out = join(dir, 'out-big');
    const child = spawnCli(['replay', '--json', '--out', out, log]);
    const done = await finished(child);
    expect(done.stderr.toString()).toBe('');
    expect(done.code).toBe(0);
    const summary = JSON.parse(done.stdout.toString()) as {
      runs: number;
      telemetry: { shutdown: { dropped: { traces: number } } };
    };
    expect(summary.runs).toBe(150_000);
    expect(summary.telemetry.shutdown.dropped.traces).toBe(0);
    expect(spanCounts(join(out, 'traces.jsonl'))).toEqual({ invoke_agent: 150_000, chat: 150_000 });
  }, 900_000);

  it('exports every run of 2,500 logs, and --json arrives whole through a pipe', async () => {
    const many = join(dir, 'many');
    mkdirSync(many);
    for (let i = 0; i < 2500; i += 1) writeLog(join(many, `s${String(i).padStart(4, '0')}.jsonl`), `s${i}`, 1);
    const out = join(dir, 'out-many');
    const child = spawnCli(['replay', '--json', '--out', out, many]);
    const done = await finished(child);
    expect(done.code).toBe(0);
    // Well over the 64 KiB a pipe holds: the process must wait for its reader before exiting.
    expect(done.stdout.length).toBeGreaterThan(256 * 1024);
    const summary = JSON.parse(done.stdout.toString()) as { runs: number; files: unknown[] };
    expect(summary.runs).toBe(2500);
    expect(summary.files).toHaveLength(2500);
    expect(spanCounts(join(out, 'traces.jsonl'))).toEqual({ invoke_agent: 2500, chat: 2500 });
  }, 900_000);
});
