import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { ProgressReporter, runReplay, type ReplayCommand, type ReplayJson } from '../../../src/cli/commands/replay.js';
import { writeDurableLogFile } from '../../../src/fixtures/durable-log-writer.js';
import { events, step, stepStart, text, textDelta, turnEnd, turnStart, usage } from '../../helpers/events.js';

const dir = mkdtempSync(join(tmpdir(), 'replay-cmd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = 1_700_000_000_000;

/** A writable that keeps what was written; `isTTY` as asked. */
function sink(isTTY = false, columns = 80): Writable & { text: () => string; isTTY: boolean; columns: number } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  return Object.assign(stream, { text: () => chunks.join(''), isTTY, columns });
}

const command = (paths: string[], out: string, extra: Partial<ReplayCommand> = {}): ReplayCommand => ({
  name: 'replay',
  paths,
  json: false,
  protocol: 'auto',
  out,
  ...extra,
});

const header = (id: string, parentSession?: string) => ({
  type: 'session',
  version: 3,
  id,
  createdAt: '2026-11-29T10:00:00.000Z',
  ...(parentSession ? { parentSession } : {}),
  delegationDepth: 0,
});

async function sessions(root: string): Promise<void> {
  mkdirSync(root, { recursive: true });
  await writeDurableLogFile(
    join(root, 'parent.jsonl.zstd'),
    header('parent'),
    events(
      [
        turnStart(0),
        stepStart(0),
        step('embedded', { content: [text('delegated and done')], usage: usage(300, 30) }),
        turnEnd('completed', 0),
      ],
      0,
      T0,
    ),
    { zstd: true, pack: false },
  );
  await writeDurableLogFile(
    join(root, 'child.jsonl'),
    header('child', 'parent'),
    events(
      [
        turnStart(0),
        stepStart(0),
        step('chunk', {
          stream: [textDelta('cut '), textDelta('off '), textDelta('here')],
          content: [],
          usage: usage(100, 64),
        }),
        turnEnd('max-tokens', 0),
      ],
      0,
      T0 + 5,
    ),
    { zstd: false, pack: true },
  );
}

interface OtlpSpan {
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
}

function spansIn(out: string): OtlpSpan[] {
  const lines = readFileSync(join(out, 'traces.jsonl'), 'utf8').trim().split('\n');
  return lines.flatMap((line) => {
    const body = JSON.parse(line) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
    return body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
  });
}

const attribute = (span: OtlpSpan | undefined, key: string) => {
  const value = span?.attributes.find((a) => a.key === key)?.value;
  return value === undefined ? undefined : Object.values(value)[0];
};

describe('runReplay', () => {
  it('writes spans with each child nested under its parent, prints the summary and where telemetry went, and exits 0', async () => {
    const root = join(dir, 'clean');
    await sessions(root);
    const out = join(dir, 'clean-out');
    const stdout = sink();
    const stderr = sink();
    const code = await runReplay(command([root], out), { stdout, stderr, env: {} });
    expect(code).toBe(0);
    expect(stderr.text()).toBe('');
    expect(stdout.text()).toContain(
      [
        'stop reason  runs   share  input tokens  output tokens',
        '-----------  ----  ------  ------------  -------------',
        'completed       1   50.0%           300             30',
        'max-tokens      1   50.0%           100             64',
        'total           2  100.0%           400             94',
        '',
        'truncation rate (max-tokens runs / all runs): 50.0%',
      ].join('\n'),
    );
    expect(stdout.text()).toContain(`Telemetry written to:\n  traces: file ${join(out, 'traces.jsonl')}`);

    const runs = spansIn(out).filter((s) => s.name.startsWith('invoke_agent'));
    const parent = runs.find((s) => attribute(s, 'subagent.run_id') === 'parent#0');
    const child = runs.find((s) => attribute(s, 'subagent.run_id') === 'child#0');
    expect(child?.parentSpanId).toBe(parent?.spanId);
    expect(attribute(child, 'subagent.stop_reason')).toBe('max-tokens');
    expect(attribute(child, 'subagent.output')).toBe('[{"type":"text","text":"cut off here"}]');
    expect(attribute(child, 'subagent.parent.session_id')).toBe('parent');
    const metrics = readFileSync(join(out, 'metrics.jsonl'), 'utf8');
    expect(metrics).toContain('"subagent.runs"');
  });

  it('prints JSON with --json, reports skipped input on stderr with file and line, and exits 1', async () => {
    const root = join(dir, 'damaged');
    await sessions(root);
    const lines = readFileSync(join(root, 'child.jsonl'), 'utf8').split('\n');
    lines.splice(2, 0, '{"type":"turn/start","seq":"x"}');
    writeFileSync(join(root, 'child.jsonl'), lines.join('\n'));
    writeFileSync(join(root, 'zero.ndjson'), '');
    const out = join(dir, 'damaged-out');
    const stdout = sink();
    const stderr = sink();
    const code = await runReplay(command([root, join(dir, 'absent.jsonl')], out, { json: true }), {
      stdout,
      stderr,
      env: {},
    });
    expect(code).toBe(1);
    const json = JSON.parse(stdout.text()) as ReplayJson;
    expect(json.runs).toBe(2);
    expect(json.skipped).toEqual({ files: 2, records: 1 });
    expect(json.stopReasons.map((s) => [s.stopReason, s.runs])).toEqual([
      ['completed', 1],
      ['max-tokens', 1],
    ]);
    expect(json.telemetry.outDir).toBe(out);
    expect(json.telemetry.destinations).toContain(`traces: file ${join(out, 'traces.jsonl')}`);
    expect(stderr.text().split('\n')).toEqual([
      `subagent-otel replay: ${join(root, 'child.jsonl')}:3: the event is not a valid session event (seq: expected non-negative integer, received string "x"); skipped [invalid-event]`,
      `subagent-otel replay: ${join(root, 'zero.ndjson')}: the file is empty [empty-file, file skipped]`,
      `subagent-otel replay: ${join(dir, 'absent.jsonl')}: no such file or directory [missing, file skipped]`,
      'subagent-otel replay: 2 file(s) and 1 record(s) skipped; see the problems above',
      '',
    ]);
  });
});

describe('ProgressReporter', () => {
  it('draws nothing early, at most once per interval after, always the last update, and clears itself', () => {
    let now = 1000;
    const stream = sink(true, 60);
    const bar = new ProgressReporter(stream, { now: () => now, delayMs: 300, minIntervalMs: 100 });
    const progress = (filesDone: number) => ({ filesDone, filesTotal: 4, bytesDone: filesDone * 10, bytesTotal: 40 });
    bar.update(progress(0));
    now += 299;
    bar.update(progress(1));
    expect(stream.text()).toBe('');
    now += 1;
    bar.update(progress(1));
    now += 50;
    bar.update(progress(2));
    bar.print('a problem');
    bar.update(progress(3));
    now += 10;
    bar.update(progress(4));
    bar.finish();
    expect(stream.text().split('\r\x1b[K')).toEqual([
      '',
      '[#####...............]  25%  1/4 files  10 B/40 B',
      'a problem\n',
      '[###############.....]  75%  3/4 files  30 B/40 B',
      '[####################] 100%  4/4 files  40 B/40 B',
      '',
    ]);
  });
});
