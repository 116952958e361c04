/**
 * What the demo leaves behind: each run starts from empty files (it removes
 * what an earlier run left, and says so), it prints what it wrote, and with
 * `--sessions` it writes durable session logs (zstd parents, plain children,
 * a child cut at max-tokens behind an empty usage-only message) that
 * `replay` reads back to the same runs the proxy observed live.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ATTR_GEN_AI_OPERATION_NAME } from '../../src/telemetry/semconv.js';
import { attributes, readSpans, runCli, type Finished } from '../helpers/cli.js';

const CLEAN = {
  OTEL_EXPORTER_OTLP_ENDPOINT: '',
  OTEL_TRACES_EXPORTER: '',
  OTEL_METRICS_EXPORTER: '',
  SUBAGENT_OTEL_OUT: '',
};

describe('demo output files and session logs', () => {
  const root = mkdtempSync(join(tmpdir(), 'demo-out-'));
  const out = join(root, 'otel');
  const sessions = join(root, 'sessions');
  let demo: Finished;

  beforeAll(async () => {
    // What an earlier run left: three lines of traces, one of metrics.
    mkdirSync(out);
    writeFileSync(join(out, 'traces.jsonl'), '{"resourceSpans":[]}\n{"resourceSpans":[]}\n{"resourceSpans":[]}\n');
    writeFileSync(join(out, 'metrics.jsonl'), '{"resourceMetrics":[]}\n');
    writeFileSync(join(out, 'notes.txt'), "not the demo's file\n");
    demo = await runCli(['demo', '--out', out, '--sessions', sessions], '', CLEAN);
  }, 120_000);

  it('removes only its own files from an earlier run and says so', () => {
    expect(demo.code, demo.stderr.toString()).toBe(0);
    expect(demo.stderr.toString('utf8')).toContain(
      `demo: starting from empty files: removed what an earlier run left: ${join(out, 'traces.jsonl')} (3 lines), ${join(out, 'metrics.jsonl')} (1 line)\n`,
    );
    expect(readFileSync(join(out, 'notes.txt'), 'utf8')).toBe("not the demo's file\n");
  });

  it('prints the count it wrote, and the files hold exactly this run', () => {
    const spans = readSpans(out);
    expect(spans).toHaveLength(82);
    expect(spans.filter((s) => attributes(s)[ATTR_GEN_AI_OPERATION_NAME] === 'invoke_agent')).toHaveLength(35);
    expect(demo.stdout.toString('utf8')).toContain(
      'This run wrote 82 spans to traces.jsonl and 1 metric export to metrics.jsonl (files from earlier runs are removed first).\n',
    );
    expect(
      readFileSync(join(out, 'metrics.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l !== ''),
    ).toHaveLength(1);
  });

  it('writes the proxied sessions as durable logs: zstd parents, plain children', () => {
    expect(readdirSync(sessions).sort()).toEqual([
      'proxy-cancelled-attempt.jsonl.zstd',
      'proxy-completed.jsonl.zstd',
      'proxy-empty-message.jsonl.zstd',
      'proxy-error.jsonl.zstd',
      'proxy-multi-step-max-tokens.jsonl.zstd',
      'proxy-no-output.jsonl.zstd',
      'proxy-reasoning-only.jsonl.zstd',
      'proxy-subagent-child-1.jsonl',
      'proxy-subagent-wrong-report-child-1.jsonl',
      'proxy-subagent-wrong-report.jsonl.zstd',
      'proxy-subagent.jsonl.zstd',
    ]);
    expect([...readFileSync(join(sessions, 'proxy-subagent.jsonl.zstd')).subarray(0, 4)]).toEqual([
      0x28, 0xb5, 0x2f, 0xfd,
    ]);
    expect(demo.stdout.toString('utf8')).toContain(
      `Session logs of the 11 proxied sessions written to ${sessions}; replay them with: subagent-otel replay ${sessions}\n`,
    );
  });

  it('writes a child cut at max-tokens behind an empty usage-only message', () => {
    const lines = readFileSync(join(sessions, 'proxy-subagent-child-1.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    const rows = lines.map(
      (l) =>
        JSON.parse(l) as {
          type: string;
          id?: string;
          parentSession?: string;
          delegationDepth?: number;
          data?: Record<string, unknown>;
        },
    );
    expect(rows[0]).toMatchObject({
      type: 'session',
      id: 'proxy-subagent-child-1',
      parentSession: 'proxy-subagent',
      delegationDepth: 1,
    });
    const messages = rows.filter((r) => r.type === 'assistant/message');
    const last = messages[messages.length - 1]?.data as {
      message: { content: unknown[] };
      usage?: { inputTokens: number; outputTokens: number };
    };
    expect(last.message.content).toEqual([]);
    expect(last.usage).toEqual({ inputTokens: 40, outputTokens: 64, cacheReadTokens: 100 });
    expect(rows[rows.length - 1]).toMatchObject({
      type: 'turn/end',
      data: { turn: 0, reason: { kind: 'max-tokens' } },
    });
    // Chunk runs are packed as the runtime packs them.
    expect(rows.some((r) => r.type === 'text-chunks' || r.type === 'tool-call-chunks')).toBe(true);
  });

  it('says, when asked to replay its own output directory, that it skipped it as such', async () => {
    const r = await runCli(['replay', '--out', out, out], '', CLEAN);
    expect(r.code).toBe(1);
    expect(r.stderr.toString('utf8')).toContain(
      `${out}: this directory is where this replay writes its own telemetry (traces.jsonl and metrics.jsonl hold OTLP JSON, not session logs), so its files are not read; replay session logs or captures, or give --out another directory`,
    );
  });

  it('replays to the runs the proxy observed live', async () => {
    const r = await runCli(['replay', '--json', '--out', join(root, 'replayed'), sessions], '', CLEAN);
    expect(r.code, r.stderr.toString()).toBe(0);
    const summary = JSON.parse(r.stdout.toString('utf8')) as {
      stopReasons: Array<{ stopReason: string; runs: number }>;
    };
    expect(Object.fromEntries(summary.stopReasons.map((row) => [row.stopReason, row.runs]))).toEqual({
      completed: 5,
      'max-tokens': 4,
      aborted: 1,
      error: 1,
    });
  });
});
