/**
 * End-to-end tests of `subagent-otel replay` as a real process (the BUILT
 * CLI, `node dist/cli/main.js`): a capture recorded by the live proxy in
 * front of the scripted SDK runtime replays into the same spans the proxy
 * emitted live, and directories of session logs replay with their exit code
 * saying whether anything was skipped. Waits only on lines and process exit.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeDurableLogFile } from '../../src/fixtures/durable-log-writer.js';
import {
  attributes,
  isIdleLine,
  finished,
  readSpans,
  rpc,
  runCli,
  spawnCli,
  waitForLine,
  type OtlpSpan,
  QUIET_ENV,
} from '../helpers/cli.js';
import { FIXTURE_SDK_RUNTIME, ROOT } from '../helpers/paths.js';
import { events, step, stepStart, text, textDelta, turnEnd, turnStart, usage } from '../helpers/events.js';

const dir = mkdtempSync(join(tmpdir(), 'replay-e2e-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Ids differ by design (live run ids are random); everything else of a span must be the same. */
const ID_ATTRIBUTES = new Set(['gen_ai.agent.id', 'subagent.run_id']);

/** A span without its ids, with its parent span's name and times, so live and replayed trees compare as values. */
function comparable(spans: readonly OtlpSpan[]): unknown[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  return spans
    .map((span) => {
      const attrs = Object.fromEntries(Object.entries(attributes(span)).filter(([key]) => !ID_ATTRIBUTES.has(key)));
      const parent =
        span.parentSpanId !== undefined && span.parentSpanId !== '' ? byId.get(span.parentSpanId) : undefined;
      return {
        name: span.name,
        kind: span.kind,
        start: span.startTimeUnixNano,
        end: span.endTimeUnixNano,
        status: span.status ?? {},
        attributes: attrs,
        parent:
          parent === undefined
            ? null
            : {
                name: parent.name,
                start: parent.startTimeUnixNano,
                conversation: attributes(parent)['gen_ai.conversation.id'],
              },
      };
    })
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

describe('replay of a live proxy capture', () => {
  it('yields the same spans, attributes and nesting as the live session did', async () => {
    const live = join(dir, 'live');
    const replayed = join(dir, 'replayed');
    const capture = join(dir, 'session.capture.ndjson');
    const child = spawnCli(
      ['proxy', '--out', live, '--capture', capture, '--', process.execPath, FIXTURE_SDK_RUNTIME],
      {
        ...QUIET_ENV,
        FAKE_LOG_GENERATION: 'chunk',
      },
    );
    const done = finished(child);
    child.stdin.write(rpc(1, 'initialize', { cwd: '/work', provider: 'deepseek', model: 'deepseek-chat' }));
    const prompts: Array<[number, string, string]> = [
      [2, 's1', 'scenario:multi-step-max-tokens'],
      [3, 's2', 'scenario:subagent-wrong-report'],
      [4, 's1', 'scenario:completed'],
    ];
    for (const [id, sessionId, prompt] of prompts) {
      const idle = waitForLine(child, isIdleLine(sessionId));
      child.stdin.write(rpc(id, 'session/prompt', { sessionId, contentBlocks: [{ type: 'text', text: prompt }] }));
      await idle;
    }
    child.stdin.write(rpc(5, 'shutdown'));
    child.stdin.end();
    expect((await done).code).toBe(0);

    const r = await runCli(['replay', '--json', '--out', replayed, capture], '', QUIET_ENV);
    // No replay problem. (stderr may carry an OpenTelemetry diag warning about a span the live proxy timed
    // inconsistently; the replay reproduces the live span, warning included.)
    expect(r.stderr.toString('utf8')).not.toContain('subagent-otel replay:');
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout.toString('utf8')) as {
      runs: number;
      mismatches: number;
      files: Array<{ format: string; protocol: string }>;
      stopReasons: Array<{ stopReason: string; runs: number }>;
    };
    expect(summary.files.map((f) => [f.format, f.protocol])).toEqual([['capture', 'sdk']]);
    expect(summary.runs).toBe(4);
    expect(summary.mismatches).toBe(1);
    expect(summary.stopReasons.map((s) => [s.stopReason, s.runs])).toEqual([
      ['completed', 2],
      ['max-tokens', 2],
    ]);

    const liveSpans = readSpans(live);
    const replayedSpans = readSpans(replayed);
    expect(liveSpans.filter((s) => s.name.startsWith('invoke_agent'))).toHaveLength(4);
    expect(comparable(replayedSpans)).toEqual(comparable(liveSpans));
    // Literal anchors, so the comparison cannot pass by both sides being empty or wrong alike.
    const truncated = replayedSpans.find(
      (s) => attributes(s)['subagent.stop_reason'] === 'max-tokens' && attributes(s)['gen_ai.conversation.id'] === 's1',
    );
    expect(attributes(truncated as OtlpSpan)['gen_ai.conversation.id']).toBe('s1');
    expect(attributes(truncated as OtlpSpan)['subagent.output.source']).toBe('message');
    const misreported = replayedSpans.find((s) => attributes(s)['subagent.reported_output.match'] === false);
    expect(attributes(misreported as OtlpSpan)['subagent.parent.session_id']).toBe('s2');
    expect(replayedSpans.find((s) => s.spanId === misreported?.parentSpanId)?.name).toBe('invoke_agent deepseek');
  });
});

describe('replay of session log directories', () => {
  const header = (id: string, parentSession?: string) => ({
    type: 'session',
    version: 3,
    id,
    createdAt: '2026-11-29T10:00:00.000Z',
    ...(parentSession ? { parentSession } : {}),
    delegationDepth: 0,
  });
  const T0 = 1_700_000_000_000;

  it('replays both log generations, plain and zstd, packed or not, into the same runs and exits 0', async () => {
    const root = join(dir, 'logs');
    mkdirSync(root);
    const turn = (gen: 'chunk' | 'embedded') =>
      events(
        [
          turnStart(0),
          stepStart(0),
          step(gen, {
            stream: [textDelta('Same '), textDelta('answer '), textDelta('everywhere')],
            content: [],
            usage: usage(10, 64),
          }),
          turnEnd('max-tokens', 0),
        ],
        0,
        T0,
      );
    let n = 0;
    for (const gen of ['chunk', 'embedded'] as const) {
      for (const zstd of [false, true]) {
        for (const pack of [false, true]) {
          n += 1;
          await writeDurableLogFile(join(root, `s${n}.jsonl${zstd ? '.zstd' : ''}`), header(`s${n}`), turn(gen), {
            zstd,
            pack,
          });
        }
      }
    }
    const out = join(dir, 'logs-out');
    const r = await runCli(['replay', '--out', out, root], '', QUIET_ENV);
    expect(r.stderr.toString('utf8')).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.toString('utf8')).toContain('max-tokens      8  100.0%            80            512');
    const outputs = readSpans(out)
      .filter((s) => s.name.startsWith('invoke_agent'))
      .map((s) => [
        attributes(s)['gen_ai.conversation.id'],
        attributes(s)['subagent.output'],
        attributes(s)['subagent.stop_reason'],
      ])
      .sort();
    expect(outputs).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8]
        .map((i) => [`s${i}`, '[{"type":"text","text":"Same answer everywhere"}]', 'max-tokens'])
        .sort(),
    );
  });

  it('reports damaged, empty, binary and missing inputs with file and line, keeps the rest, and exits 1', async () => {
    const root = join(dir, 'damaged');
    mkdirSync(root);
    const good = events(
      [turnStart(0), stepStart(0), step('embedded', { content: [text('kept')] }), turnEnd('completed', 0)],
      0,
      T0,
    );
    await writeDurableLogFile(join(root, 'a-good.jsonl.zstd'), header('good'), good, { zstd: true, pack: false });
    const lines = [JSON.stringify(header('torn')), ...good.map((e) => JSON.stringify(e))];
    writeFileSync(join(root, 'b-torn.jsonl'), `${lines.slice(0, 3).join('\n')}\n${lines[3]?.slice(0, 15)}`);
    writeFileSync(join(root, 'c-empty.jsonl'), '');
    writeFileSync(join(root, 'd-binary.jsonl'), Buffer.from([0, 1, 2, 3, 0xff, 10]));
    const r = await runCli(
      ['replay', '--out', join(dir, 'damaged-out'), root, join(dir, 'missing.jsonl.zstd')],
      '',
      QUIET_ENV,
    );
    expect(r.code).toBe(1);
    expect(r.stderr.toString('utf8').split('\n')).toEqual([
      `subagent-otel replay: ${join(root, 'b-torn.jsonl')}:4: line 4 is incomplete: 15 bytes without a final newline [torn-tail]`,
      `subagent-otel replay: ${join(root, 'c-empty.jsonl')}: the file is empty [empty-file, file skipped]`,
      `subagent-otel replay: ${join(root, 'd-binary.jsonl')}: binary data (a NUL byte in line 1): not a session log or capture [binary, file skipped]`,
      `subagent-otel replay: ${join(dir, 'missing.jsonl.zstd')}: no such file or directory [missing, file skipped]`,
      'subagent-otel replay: 3 file(s) and 1 record(s) skipped; see the problems above',
      '',
    ]);
    const stdout = r.stdout.toString('utf8');
    expect(stdout).toContain('completed       1   50.0%');
    expect(stdout).toContain('error           1   50.0%');
    expect(stdout).toContain('files: 2 read, 3 skipped; records skipped: 1');
  });
});

describe('replay into a pipe whose reader goes away', () => {
  it('drops its rows, not its work: exit 0 and every run in the trace file (replay ... | head)', async () => {
    const out = mkdtempSync(join(tmpdir(), 'replay-epipe-'));
    const child = spawnCli(
      ['replay', '--no-progress', '--out', out, join(ROOT, 'test', 'transcripts', 'claude-code', 'generated')],
      { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_EXPORTER: '', OTEL_METRICS_EXPORTER: '' },
    );
    const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const err: Buffer[] = [];
      child.stderr.on('data', (c: Buffer) => err.push(c));
      child.once('close', (code) => resolve({ code, stderr: Buffer.concat(err).toString('utf8') }));
    });
    // Like `head -1`: read the first chunk, then close the reading end.
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.stdout.destroy();
    const r = await exited;
    expect(r.stderr).not.toContain('EPIPE');
    expect(r.code).toBe(0);
    // Six scenarios, each a session and one subagent (test/transcripts/claude-code/generated/README.md).
    expect(readSpans(out).filter((s) => s.name.startsWith('invoke_agent'))).toHaveLength(12);
    rmSync(out, { recursive: true, force: true });
  });
});
