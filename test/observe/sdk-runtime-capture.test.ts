/**
 * The bytes DeepSeek Harness's real SDK runtime wrote for one max-tokens
 * prompt (`test/captures/dsh-runtime-max-tokens-empty-message.ndjson`: the
 * runtime answers `session/prompt` right after its turn started, long before
 * `turn/end` and `session.status idle`). Upstream's SDK client reports for
 * this turn stop reason `max-tokens` and usage 210 in / 28 out; by the one
 * rule the output is the first step's message (its text and its tool call),
 * with one empty message skipped. The tracker must agree however it is
 * attached: as the proxy sees both directions, as a replay sees only the
 * runtime's side, and in process from the inbox receipt on.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { RunListener, RunRecord, RunStart } from '../../src/observe/run-record.js';
import { SdkTracker } from '../../src/observe/sdk-tracker.js';
import { parseFrame, type JsonRpcFrame } from '../../src/wire/jsonrpc.js';
import { join } from 'node:path';
import { ROOT } from '../helpers/paths.js';
import { runCli } from '../helpers/cli.js';

const LINES = readFileSync(join(ROOT, 'test', 'captures', 'dsh-runtime-max-tokens-empty-message.ndjson'), 'utf8')
  .trim()
  .split('\n');
const FRAMES: JsonRpcFrame[] = LINES.map((line) => {
  const parsed = parseFrame(line);
  if (!parsed.ok) throw new Error(`capture line does not parse: ${line.slice(0, 80)}`);
  return parsed.frame;
});
const T0 = 1_796_063_390_280;

function recorder(): RunListener & { starts: RunStart[]; ends: RunRecord[]; malformed: string[] } {
  const starts: RunStart[] = [];
  const ends: RunRecord[] = [];
  const malformed: string[] = [];
  return {
    starts,
    ends,
    malformed,
    onRunStart: (s) => starts.push(s),
    onRunEnd: (r) => ends.push(r),
    onMalformed: (_o, e) => malformed.push(e.message),
  };
}

const EXPECTED_OUTPUT = [
  { type: 'text', text: 'Step one text before the tool.' },
  { type: 'tool-call', id: 'call_ok_1', name: 'bash', arguments: '{"command":"echo mock-tool-ran"}' },
];

function expectUpstreamResult(record: RunRecord | undefined): void {
  expect(record).toMatchObject({
    sessionId: 'session-1',
    source: 'sdk',
    stopReason: 'max-tokens',
    output: EXPECTED_OUTPUT,
    outputSource: 'message',
    emptyMessages: 1,
    usage: {
      inputTokens: 210,
      outputTokens: 28,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      reported: true,
    },
    provider: 'deepseek-official',
    model: 'deepseek-v4-flash',
  });
  expect(record?.diagnostic).toBeUndefined();
  expect(record?.steps.map((s) => [s.step, s.finishReason])).toEqual([
    [1, 'tool-calls'],
    [2, 'max-tokens'],
  ]);
  expect(record?.toolCalls.map((t) => [t.callId, t.isError])).toEqual([['call_ok_1', true]]);
}

describe('the real runtime capture', () => {
  it("as the proxy sees it (both directions): one max-tokens run, 210 in / 28 out, the first step's message", () => {
    const rec = recorder();
    const tracker = new SdkTracker(rec, { newRunId: () => 'run-1' });
    tracker.observeFrame(
      'client->agent',
      {
        kind: 'request',
        id: 'req_609b45baa23d4063920dc6db3865d940',
        method: 'initialize',
        params: { cwd: '/w', provider: 'deepseek-official', model: 'deepseek-v4-flash', maxTokens: 64 },
      },
      T0,
    );
    FRAMES.forEach((frame, i) => {
      tracker.observeFrame('agent->client', frame, T0 + i);
      if (i === 0) {
        tracker.observeFrame(
          'client->agent',
          {
            kind: 'request',
            id: 'req_0f0f79a7fbef4f549693125903108514',
            method: 'session/prompt',
            params: {
              sessionId: 'session-1',
              contentBlocks: [{ type: 'text', text: 'SCN:length-empty please answer' }],
            },
          },
          T0,
        );
      }
      // The answer (line 6) arrives with the turn still running: the run stays open.
      if (i === 5) expect(rec.ends).toEqual([]);
    });
    tracker.close(T0 + 100);
    expect(rec.starts.map((s) => [s.runId, s.startTime])).toEqual([['run-1', T0]]);
    expect(rec.ends).toHaveLength(1);
    expectUpstreamResult(rec.ends[0]);
    // Closed by `session.status idle` (line 35), not by the answer, not by close().
    expect(rec.ends[0]?.endTime).toBe(T0 + 34);
    expect(rec.malformed).toEqual([]);
  });

  it("as a replay of the runtime's side alone sees it", () => {
    const rec = recorder();
    const tracker = new SdkTracker(rec, { newRunId: () => 'run-1' });
    FRAMES.forEach((frame, i) => tracker.observeFrame('agent->client', frame, T0 + i));
    tracker.close(T0 + 100);
    expect(rec.ends).toHaveLength(1);
    expectUpstreamResult(rec.ends[0]);
    // Opened by the inbox receipt (line 2).
    expect(rec.ends[0]?.startTime).toBe(1_796_063_390_281);
  });

  it("in process, through the hook upstream's DeepSeekHarness.run calls with each { method, params } from the receipt on", () => {
    const rec = recorder();
    const tracker = new SdkTracker(rec, { newRunId: () => 'run-1', agentName: 'worker' });
    for (const frame of FRAMES.slice(1))
      if (frame.kind === 'notification') tracker.onNotification({ method: frame.method, params: frame.params });
    expect(rec.ends).toHaveLength(1);
    expect(rec.ends[0]?.agentName).toBe('worker');
    expect(rec.ends[0]).toMatchObject({
      stopReason: 'max-tokens',
      output: EXPECTED_OUTPUT,
      usage: { inputTokens: 210, outputTokens: 28 },
    });
  });
});

describe('the real runtime capture, replayed by the command line', () => {
  it('sums to one max-tokens run of 210 in / 28 out', async () => {
    const r = await runCli(
      [
        'replay',
        '--json',
        '--out',
        mkdtempSync(join(tmpdir(), 'capture-replay-')),
        join(ROOT, 'test', 'captures', 'dsh-runtime-max-tokens-empty-message.ndjson'),
      ],
      '',
      { OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' },
    );
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout.toString('utf8')) as { runs: number; stopReasons: unknown[]; problems: number };
    expect(summary).toMatchObject({
      runs: 1,
      problems: 0,
      stopReasons: [{ stopReason: 'max-tokens', runs: 1, inputTokens: 210, outputTokens: 28 }],
    });
  });
});
