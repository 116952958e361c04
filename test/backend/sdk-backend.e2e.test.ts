import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSdkSubagent } from '../../src/backend/sdk-backend.js';
import type { RunListener, RunRecord } from '../../src/observe/run-record.js';
import type { JsonRpcFrame } from '../../src/wire/jsonrpc.js';
import { FIXTURE_SDK_RUNTIME } from '../helpers/paths.js';
import { telemetryHarness } from '../helpers/telemetry-harness.js';
import { ATTR_SUBAGENT_OUTPUT, ATTR_SUBAGENT_STOP_REASON } from '../../src/telemetry/semconv.js';

const route = { provider: 'deepseek', model: 'deepseek-chat' };

function recorder(): RunListener & { ends: RunRecord[] } {
  const ends: RunRecord[] = [];
  return { ends, onRunStart: () => undefined, onRunEnd: (r) => ends.push(r) };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // ESRCH: no such process, which is what a reaped child gives.
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

describe('SDK backend (real runtime process)', () => {
  it('keeps the streamed partial text of a FAKE_EMPTY_MESSAGE run in every place the output is reported', async () => {
    const rec = recorder();
    const harness = telemetryHarness();
    const both: RunListener = {
      onRunStart: (s) => harness.runs.onRunStart(s),
      onRunEnd: (r) => {
        rec.onRunEnd(r);
        harness.runs.onRunEnd(r);
      },
    };
    const outcome = await runSdkSubagent({
      command: process.execPath,
      args: [FIXTURE_SDK_RUNTIME],
      ...route,
      env: { FAKE_EMPTY_MESSAGE: '1' },
      provider: 'deepseek',
      model: 'deepseek-chat',
      prompt: 'summarize the repo',
      listener: both,
    });
    const partial = [{ type: 'text', text: 'Partial answer before the limit' }];
    expect(outcome.result).toEqual({ output: partial, stopReason: 'max-tokens' });
    expect(outcome.runEnd.lastAssistantMessage).toEqual(partial);
    expect(outcome.runEnd.stopReason).toBe('max-tokens');
    expect(outcome.toolResult).toEqual({
      isError: true,
      content: [
        {
          type: 'text',
          text: 'Error: subagent run hit its token limit before finishing\nPartial output before the run ended:\nPartial answer before the limit',
        },
      ],
    });
    expect(rec.ends).toHaveLength(1);
    expect(rec.ends[0]).toMatchObject({
      output: partial,
      outputSource: 'stream',
      emptyMessages: 1,
      stopReason: 'max-tokens',
      provider: 'deepseek',
    });
    const [span] = harness.runSpans();
    expect(span?.attributes[ATTR_SUBAGENT_OUTPUT]).toBe('[{"type":"text","text":"Partial answer before the limit"}]');
    expect(span?.attributes[ATTR_SUBAGENT_STOP_REASON]).toBe('max-tokens');
  });

  it('returns a completed run with its message', async () => {
    const outcome = await runSdkSubagent({
      command: process.execPath,
      args: [FIXTURE_SDK_RUNTIME],
      ...route,
      prompt: 'scenario:completed',
    });
    expect(outcome.result).toEqual({ output: [{ type: 'text', text: 'The answer is 42.' }], stopReason: 'completed' });
    expect(outcome.toolResult).toEqual({
      isError: false,
      content: [{ type: 'text', text: 'The answer is 42.' }],
      output: [{ type: 'text', text: 'The answer is 42.' }],
    });
  });

  it('settles an aborted run locally with its partial text and disposes the runtime, sending no cancel (the protocol has none)', async () => {
    const ready = join(mkdtempSync(join(tmpdir(), 'sdk-')), 'ready');
    const controller = new AbortController();
    const sent: string[] = [];
    const abort = abortOnFirstText(controller);
    const rec = await runSdkSubagent({
      command: process.execPath,
      args: [FIXTURE_SDK_RUNTIME],
      ...route,
      env: { FAKE_SCENARIO: 'hang', FAKE_READY_FILE: ready },
      prompt: 'go',
      signal: controller.signal,
      onFrame: (direction, frame) => {
        if (direction === 'client->agent' && frame.kind === 'request') sent.push(frame.method);
        if (direction === 'client->agent' && frame.kind === 'notification') sent.push(frame.method);
        abort(direction, frame);
      },
    });
    expect(rec.result).toEqual({ output: [{ type: 'text', text: 'Thinking about' }], stopReason: 'aborted' });
    expect(rec.toolResult.content).toEqual([
      { type: 'text', text: 'Error: subagent run was cancelled\nPartial output before the run ended:\nThinking about' },
    ]);
    expect(sent).toEqual(['initialize', 'session/prompt', 'shutdown']);
    expect(isAlive(Number(readFileSync(ready, 'utf8')))).toBe(false);
  });

  it('reaps a runtime that ignores shutdown, EOF and SIGTERM, leaving no orphan', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sdk-'));
    const readyFile = join(dir, 'ready');
    const controller = new AbortController();
    const outcome = await runSdkSubagent({
      command: process.execPath,
      args: [FIXTURE_SDK_RUNTIME],
      ...route,
      env: { FAKE_SCENARIO: 'hang', FAKE_IGNORE_CANCEL: '1', FAKE_READY_FILE: readyFile },
      prompt: 'go',
      signal: controller.signal,
      onStderr: () => undefined,
      onFrame: abortOnFirstText(controller),
    });
    const pid = Number(readFileSync(readyFile, 'utf8'));
    expect(outcome.result.stopReason).toBe('aborted');
    expect(outcome.result.output).toEqual([{ type: 'text', text: 'Thinking about' }]);
    expect(isAlive(pid)).toBe(false);
  });

  it('resolves with error and the partial output when the runtime crashes mid-run', async () => {
    const outcome = await runSdkSubagent({
      command: process.execPath,
      args: [FIXTURE_SDK_RUNTIME],
      ...route,
      env: { FAKE_EXIT_AFTER_PROMPT: '3' },
      prompt: 'go',
    });
    // Upstream's backend flattens a lost transport to error with the output so far and no diagnostic.
    expect(outcome.result).toEqual({ output: [], stopReason: 'error' });
  });

  it('resolves with error when the command does not exist', async () => {
    const rec = recorder();
    const outcome = await runSdkSubagent({ command: '/nonexistent/runtime', ...route, prompt: 'go', listener: rec });
    expect(outcome.result.stopReason).toBe('error');
    expect(outcome.result.output).toEqual([]);
    expect(rec.ends).toHaveLength(1);
  });

  // Upstream's scripted-runtime scenarios, with the result upstream's SDK backend returns for each.
  it.each([
    [
      'empty-message',
      'FAKE_EMPTY_MESSAGE + FAKE_REASON_KIND=max-tokens',
      'max-tokens',
      [{ type: 'text', text: 'Partial answer before the limit' }],
    ],
    ['stream-then-malformed', 'FAKE_STREAM_THEN_MALFORMED', 'error', []],
    ['malformed-message', 'FAKE_MALFORMED_MESSAGE', 'error', [{ type: 'text', text: 'stream-only answer' }]],
    ['reason-none', 'FAKE_REASON_KIND=none', 'error', [{ type: 'text', text: 'hello from fake runtime' }]],
    // The turn/end carries the provider's error; upstream's backend still sets no diagnostic.
    ['error', 'FAKE_REASON_KIND=error with partial text', 'error', [{ type: 'text', text: 'Half a thought' }]],
    ['late-subagent', 'FAKE_SUBAGENT', 'completed', [{ type: 'text', text: 'hello from fake runtime' }]],
  ])('scenario %s (upstream %s): stop reason %s, output %j', async (scenario, _upstream, stopReason, output) => {
    const outcome = await runSdkSubagent({
      command: process.execPath,
      args: [FIXTURE_SDK_RUNTIME],
      ...route,
      prompt: `scenario:${scenario}`,
    });
    expect(outcome.result).toEqual({ output, stopReason });
  });

  it('nests the late-started child of FAKE_SUBAGENT under the prompt run, with its subagent provider apart from the model provider', async () => {
    const rec = recorder();
    const harness = telemetryHarness();
    const starts: Array<{ runId: string; parentRunId?: string; sessionId?: string }> = [];
    await runSdkSubagent({
      command: process.execPath,
      args: [FIXTURE_SDK_RUNTIME],
      ...route,
      sessionId: 'p',
      prompt: 'scenario:late-subagent',
      listener: {
        onRunStart: (s) => {
          starts.push(s);
          harness.runs.onRunStart(s);
        },
        onRunEnd: (r) => {
          rec.ends.push(r);
          harness.runs.onRunEnd(r);
        },
      },
    });
    const [childSpan, parentSpan] = harness.runSpans();
    expect(childSpan?.parentSpanContext?.spanId).toBe(parentSpan?.spanContext().spanId);
    expect(childSpan?.attributes['subagent.provider']).toBe('spawn');
    expect(childSpan?.attributes['gen_ai.provider.name']).toBe('deepseek');
    expect(starts).toHaveLength(2);
    expect(starts[1]).toMatchObject({ sessionId: 'p-child-1', parentRunId: starts[0]?.runId });
    expect(rec.ends.map((r) => [r.sessionId, r.stopReason, r.provider, r.subagentProvider, r.output])).toEqual([
      ['p-child-1', 'completed', 'deepseek', 'spawn', [{ type: 'text', text: 'child says hi' }]],
      ['p', 'completed', 'deepseek', undefined, [{ type: 'text', text: 'hello from fake runtime' }]],
    ]);
  });

  it('gives the child a scrubbed environment', async () => {
    process.env.SUBAGENT_TEST_SECRET = 'sk-should-not-leak';
    try {
      const dir = mkdtempSync(join(tmpdir(), 'sdk-env-'));
      const script = join(dir, 'env-dump.cjs');
      writeFileSync(script, "require('fs').writeFileSync(process.argv[2], JSON.stringify(process.env));\n");
      await runSdkSubagent({
        command: process.execPath,
        args: [script, join(dir, 'env.json')],
        ...route,
        prompt: 'x',
        initializeTimeoutMs: 60_000,
      }); // the script exits at once; the bound only has to outlast its start on a loaded machine
      const env = JSON.parse(readFileSync(join(dir, 'env.json'), 'utf8')) as Record<string, string>;
      expect(env.SUBAGENT_TEST_SECRET).toBeUndefined();
      expect(env.PATH).toBe(process.env.PATH);
    } finally {
      delete process.env.SUBAGENT_TEST_SECRET;
    }
    expect(execFileSync(process.execPath, ['-e', 'process.stdout.write("ok")']).toString()).toBe('ok');
  });
});

/** An `onFrame` hook that aborts once the runtime has streamed its first text delta. */
function abortOnFirstText(controller: AbortController) {
  return (direction: string, frame: JsonRpcFrame): void => {
    if (direction !== 'agent->client' || frame.kind !== 'notification' || frame.method !== 'session.event') return;
    const chunk = (frame.params as { event?: { type?: string; data?: { chunk?: { type?: string } } } }).event;
    if (chunk?.type === 'assistant/chunk' && chunk.data?.chunk?.type === 'text-delta') controller.abort();
  };
}
