/**
 * `gen_ai.input.messages`: the prompt of a run, from each tracker (SDK
 * `session/prompt` content blocks, ACP prompt blocks, the inserted user
 * message of a durable log), on the run span under the content policy.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeDurableLogFile } from '../../src/fixtures/durable-log-writer.js';
import { AcpTracker } from '../../src/observe/acp-tracker.js';
import { LogTracker } from '../../src/observe/log-tracker.js';
import { SdkTracker } from '../../src/observe/sdk-tracker.js';
import { inputAttributes } from '../../src/telemetry/input-messages.js';
import { events, step, stepStart, text, turnEnd, turnStart, usage } from '../helpers/events.js';
import { telemetryHarness } from '../helpers/telemetry-harness.js';

const dir = mkdtempSync(join(tmpdir(), 'input-messages-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = 1_700_000_000_000;
const userMessage = (t: string) => ({
  type: 'user/message',
  data: { id: 'u1', role: 'user', content: [text(t)], source: { kind: 'user' } },
});

describe('inputAttributes', () => {
  it('records the prompt as one user message with the conventions part types', () => {
    expect(inputAttributes([text('Summarize the open issues')], { capture: true })).toEqual({
      'gen_ai.input.messages': '[{"role":"user","parts":[{"type":"text","content":"Summarize the open issues"}]}]',
    });
    const acp = inputAttributes(
      [
        { type: 'text', text: 'Look at this' },
        { type: 'image', data: 'iVBORw0K', mimeType: 'image/png' },
        { type: 'resource_link', uri: 'file:///w/README.md', name: 'README.md', mimeType: 'text/markdown' },
      ],
      { capture: true },
    );
    expect(JSON.parse(acp['gen_ai.input.messages'] as string)).toEqual([
      {
        role: 'user',
        parts: [
          { type: 'text', content: 'Look at this' },
          { type: 'blob', modality: 'image', content: 'iVBORw0K', mime_type: 'image/png' },
          { type: 'uri', modality: 'document', uri: 'file:///w/README.md', mime_type: 'text/markdown' },
        ],
      },
    ]);
  });

  it('follows the content policy: off, capped to valid JSON, redacted, and left out when the hook fails', () => {
    const prompt = [text('x'.repeat(500))];
    expect(inputAttributes(prompt, { capture: false })).toEqual({});
    expect(inputAttributes(undefined, { capture: true })).toEqual({});
    const capped = inputAttributes(prompt, { capture: true, maxLength: 120 })['gen_ai.input.messages'] as string;
    expect(capped.length).toBeLessThanOrEqual(120);
    expect(JSON.parse(capped)[0].parts[0].content).toMatch(/^x+\.\.\.\[truncated\]$/);
    const redacted = inputAttributes([text('my key is sk-123')], {
      capture: true,
      redact: (json) => json.replace(/sk-\d+/g, '[key]'),
    });
    expect(redacted).toEqual({
      'gen_ai.input.messages': '[{"role":"user","parts":[{"type":"text","content":"my key is [key]"}]}]',
    });
    const failing = inputAttributes([text('secret')], {
      capture: true,
      redact: () => {
        throw new Error('no');
      },
    });
    expect(failing).toEqual({});
  });
});

describe('the prompt on the run span', () => {
  it('comes from session/prompt content blocks for an SDK prompt turn', () => {
    const h = telemetryHarness();
    const tracker = new SdkTracker(h.runs, { newRunId: () => 'sdk-run' });
    tracker.observeFrame(
      'client->agent',
      {
        kind: 'request',
        id: 1,
        method: 'session/prompt',
        params: { sessionId: 's1', contentBlocks: [text('Fix the build')] },
      },
      T0,
    );
    for (const event of events(
      [turnStart(), step('embedded', { content: [text('Fixed.')], usage: usage(5, 1) }), turnEnd('completed')],
      0,
      T0 + 1,
    )) {
      tracker.observeFrame(
        'agent->client',
        { kind: 'notification', method: 'session.event', params: { sessionId: 's1', event } },
        event.time ?? T0,
      );
    }
    expect(h.runSpans()[0]?.attributes['gen_ai.input.messages']).toBe(
      '[{"role":"user","parts":[{"type":"text","content":"Fix the build"}]}]',
    );
  });

  it('comes from the ACP session/prompt blocks', () => {
    const h = telemetryHarness();
    const tracker = new AcpTracker(h.runs, { newRunId: () => 'acp-run', now: () => T0 });
    tracker.observeFrame(
      'client->agent',
      {
        kind: 'request',
        id: 1,
        method: 'session/prompt',
        params: { sessionId: 's1', prompt: [{ type: 'text', text: 'Find the config' }] },
      },
      T0,
    );
    tracker.observeFrame('agent->client', { kind: 'response', id: 1, result: { stopReason: 'end_turn' } }, T0 + 5);
    expect(h.runSpans()[0]?.attributes['gen_ai.input.messages']).toBe(
      '[{"role":"user","parts":[{"type":"text","content":"Find the config"}]}]',
    );
  });

  it('comes from the inserted user message of a durable log, and is absent with capture off', async () => {
    const path = join(dir, 'child.jsonl');
    const evs = events(
      [
        turnStart(),
        userMessage('Review the patch'),
        stepStart(0),
        step('embedded', { content: [text('Looks good.')], usage: usage(7, 2) }),
        turnEnd('completed'),
      ],
      0,
      T0,
    );
    await writeDurableLogFile(
      path,
      { type: 'session', version: 3, id: 'child-1', cwd: '/w', createdAt: '2026-11-29T10:00:00.000Z' },
      evs,
      { zstd: false, pack: false },
    );
    for (const capture of [true, false]) {
      const h = telemetryHarness({ capture });
      const tracker = new LogTracker(h.runs);
      await tracker.readFile(path);
      tracker.emit();
      const attributes = h.runSpans()[0]?.attributes ?? {};
      if (capture)
        expect(attributes['gen_ai.input.messages']).toBe(
          '[{"role":"user","parts":[{"type":"text","content":"Review the patch"}]}]',
        );
      else expect(attributes['gen_ai.input.messages']).toBeUndefined();
      expect(attributes['subagent.stop_reason']).toBe('completed');
    }
  });
});
