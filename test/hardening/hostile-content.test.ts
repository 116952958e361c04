/**
 * Odd content never hides a message: an unknown or odd block next to the
 * text, and a usage count beyond 2^53, in a replayed session log. The run
 * keeps its output (selected by the one rule) and clamps the count.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/observe/run-record.js';
import { replayPaths } from '../../src/replay/replay.js';
import { clampTokenCount } from '../../src/wire/content.js';

const dir = mkdtempSync(join(tmpdir(), 'hostile-content-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = 1_700_000_000_000;

/** A one-turn log whose assistant message has `content` and `usage` written verbatim (as raw JSON text). */
function logWith(name: string, contentJson: string, usageJson: string): string {
  const path = join(dir, name);
  const lines = [
    JSON.stringify({ type: 'session', version: 3, id: name, cwd: '/w', createdAt: '2026-11-29T10:00:00.000Z' }),
    JSON.stringify({ type: 'turn/start', seq: 0, time: T0, data: { turn: 0 } }),
    `{"type":"assistant/message","seq":1,"time":${T0 + 1},"data":{"turn":0,"step":0,"message":{"id":"m","role":"assistant","content":${contentJson}},"usage":${usageJson}}}`,
    JSON.stringify({ type: 'turn/end', seq: 2, time: T0 + 2, data: { turn: 0, reason: { kind: 'completed' } } }),
  ];
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

async function replayOne(path: string): Promise<{ records: RunRecord[]; problems: number }> {
  const records: RunRecord[] = [];
  const summary = await replayPaths([path], { onRunStart: () => undefined, onRunEnd: (r) => records.push(r) });
  return { records, problems: summary.problems };
}

describe('odd content in a replayed log', () => {
  it('keeps a message whose image block has no attachment (ACP-style fields)', async () => {
    const path = logWith(
      'image.jsonl',
      '[{"type":"text","text":"the answer"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]',
      '{"inputTokens":3,"outputTokens":4}',
    );
    const { records, problems } = await replayOne(path);
    expect(problems).toBe(0);
    expect(records).toHaveLength(1);
    expect(records[0]?.outputSource).toBe('message');
    expect(records[0]?.output).toEqual([
      { type: 'text', text: 'the answer' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    ]);
  });

  it('keeps a message with an unknown block type and a text block without text', async () => {
    const path = logWith(
      'odd.jsonl',
      '[{"type":"text","text":"kept"},{"type":"hologram","x":1},{"type":"text"}]',
      '{"inputTokens":1,"outputTokens":1}',
    );
    const { records, problems } = await replayOne(path);
    expect(problems).toBe(0);
    expect(records[0]?.output).toEqual([{ type: 'text', text: 'kept' }, { type: 'hologram', x: 1 }, { type: 'text' }]);
  });

  it('clamps a usage count of 2^63 instead of dropping the message', async () => {
    const path = logWith(
      'huge-usage.jsonl',
      '[{"type":"text","text":"counted"}]',
      '{"inputTokens":9223372036854775808,"outputTokens":-5,"reasoningTokens":1e400}',
    );
    const { records, problems } = await replayOne(path);
    expect(problems).toBe(0);
    expect(records[0]?.output).toEqual([{ type: 'text', text: 'counted' }]);
    expect(records[0]?.usage).toMatchObject({
      inputTokens: 9007199254740991,
      outputTokens: 0,
      reasoningTokens: 9007199254740991,
      reported: true,
    });
  });

  it('clamps counts into 0..2^53-1 integers', () => {
    expect([
      clampTokenCount(-1),
      clampTokenCount(Number.NaN),
      clampTokenCount(2.7),
      clampTokenCount(2 ** 63),
      clampTokenCount(Infinity),
    ]).toEqual([0, 0, 2, 9007199254740991, 9007199254740991]);
  });
});
