/**
 * One guarded emit for every tracker: a listener that throws never reaches
 * the frame path (ACP, SDK) or a replay (logs); each failure is counted and
 * logged once through the diag logger, and observation goes on.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AcpTracker } from '../../src/observe/acp-tracker.js';
import { LogTracker } from '../../src/observe/log-tracker.js';
import { guardListener, listenerFailures } from '../../src/observe/run-builder.js';
import type { RunListener } from '../../src/observe/run-record.js';
import { SdkTracker } from '../../src/observe/sdk-tracker.js';

const dir = mkdtempSync(join(tmpdir(), 'guarded-'));
const logged: string[] = [];
beforeAll(() => {
  diag.setLogger(
    {
      error: (m) => logged.push(m),
      warn: () => undefined,
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    { logLevel: DiagLogLevel.ERROR, suppressOverrideMessage: true },
  );
});
afterAll(() => {
  diag.disable();
  rmSync(dir, { recursive: true, force: true });
});

/** A listener whose every method throws; `ends` counts the onRunEnd calls that reached it. */
function throwing(): RunListener & { ends: number } {
  const listener = {
    ends: 0,
    onRunStart: (): void => {
      throw new Error('start exploded');
    },
    onRunEnd: (): void => {
      listener.ends += 1;
      throw new Error('end exploded');
    },
    onMalformed: (): void => {
      throw new Error('malformed exploded');
    },
  };
  return listener;
}

describe('a throwing listener', () => {
  it('never escapes the ACP frame path; every failure is counted and logged once', () => {
    const before = listenerFailures();
    const listener = throwing();
    const tracker = new AcpTracker(listener, { newRunId: () => 'acp-run' });
    expect(() => {
      tracker.observeFrame(
        'client->agent',
        {
          kind: 'request',
          id: 1,
          method: 'session/prompt',
          params: { sessionId: 's1', prompt: [{ type: 'text', text: 'hi' }] },
        },
        1,
      );
      tracker.observeFrame(
        'agent->client',
        { kind: 'notification', method: 'session/update', params: { nonsense: true } },
        2,
      );
      tracker.observeFrame('agent->client', { kind: 'response', id: 1, result: { stopReason: 'end_turn' } }, 3);
    }).not.toThrow();
    expect(listener.ends).toBe(1);
    expect(listenerFailures() - before).toBe(3);
    expect(logged).toContain('subagent-otel: RunListener.onRunStart threw and was skipped: start exploded');
    expect(logged).toContain('subagent-otel: RunListener.onRunEnd threw and was skipped: end exploded');
  });

  it('is contained the same way by the SDK and log trackers', async () => {
    const before = listenerFailures();
    const sdkListener = throwing();
    const sdk = new SdkTracker(sdkListener, { newRunId: () => 'sdk-run' });
    expect(() =>
      sdk.observeFrame(
        'client->agent',
        { kind: 'request', id: 2, method: 'session/prompt', params: { sessionId: 's2', contentBlocks: [] } },
        1,
      ),
    ).not.toThrow();
    expect(() => sdk.close(5, 'gone')).not.toThrow();
    expect(sdkListener.ends).toBe(1);

    const path = join(dir, 'one.jsonl');
    writeFileSync(
      path,
      [
        { type: 'session', version: 3, id: 'log-1', cwd: '/w', createdAt: '2026-11-29T10:00:00.000Z' },
        { type: 'turn/start', seq: 0, time: 1, data: { turn: 0 } },
        { type: 'turn/end', seq: 1, time: 2, data: { turn: 0, reason: { kind: 'completed' } } },
      ]
        .map((l) => `${JSON.stringify(l)}\n`)
        .join(''),
    );
    const logListener = throwing();
    const logs = new LogTracker(logListener);
    await logs.readFile(path);
    expect(() => logs.emit()).not.toThrow();
    expect(logListener.ends).toBe(1);
    expect(listenerFailures() - before).toBe(4);
  });

  it('is wrapped once', () => {
    const guarded = guardListener(throwing());
    expect(guardListener(guarded)).toBe(guarded);
  });
});
