/**
 * Privacy settings through the built CLI: the content cap touches content
 * attributes only (names, models, hashes whole), and every privacy setting
 * fails closed (a cap of 0 and an unrecognised capture value record no
 * content; the proxy says so on stderr).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { attributes, readSpans, runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'privacy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = 1_700_000_000_000;
const ANSWER = 'the secret answer is forty-two';
const OUTPUT_JSON = JSON.stringify([{ type: 'text', text: ANSWER }]);

const log = join(dir, 'session.jsonl');
writeFileSync(
  log,
  `${[
    { type: 'session', version: 3, id: 'sess-privacy', cwd: '/w', createdAt: '2026-11-29T10:00:00.000Z' },
    {
      type: 'request/context',
      seq: 0,
      time: T0,
      data: { provider: 'deepseek', model: 'deepseek-chat-long-model-name' },
    },
    { type: 'turn/start', seq: 1, time: T0 + 1, data: { turn: 0 } },
    {
      type: 'assistant/message',
      seq: 2,
      time: T0 + 2,
      data: {
        turn: 0,
        step: 0,
        message: { id: 'm', role: 'assistant', content: [{ type: 'text', text: ANSWER }] },
        usage: { inputTokens: 1, outputTokens: 1 },
      },
    },
    { type: 'turn/end', seq: 3, time: T0 + 3, data: { turn: 0, reason: { kind: 'completed' } } },
  ]
    .map((line) => JSON.stringify(line))
    .join('\n')}\n`,
);

let runs = 0;
async function replayRun(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ run: Record<string, unknown>; stderr: string; code: number | null }> {
  const out = join(dir, `out-${(runs += 1)}`);
  const done = await runCli(['replay', '--out', out, ...args, log], '', env);
  const run = readSpans(out).find((span) => span.name.startsWith('invoke_agent'));
  expect(run).toBeDefined();
  return { run: run === undefined ? {} : attributes(run), stderr: done.stderr.toString(), code: done.code };
}

describe('the content cap', () => {
  it.each([
    ['--max-content-length 10', ['--max-content-length', '10'], {}],
    ['OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=10', [], { OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '10' }],
  ])('%s shortens content attributes only', async (_name, args, env) => {
    const { run, code } = await replayRun(args, env);
    expect(code).toBe(0);
    expect(run['gen_ai.operation.name']).toBe('invoke_agent');
    expect(run['gen_ai.request.model']).toBe('deepseek-chat-long-model-name');
    expect(run['gen_ai.conversation.id']).toBe('sess-privacy');
    // The documented check: the hash of the full output JSON, whole.
    expect(run['subagent.output.sha256']).toBe(createHash('sha256').update(OUTPUT_JSON, 'utf8').digest('hex'));
    expect(run['subagent.output.truncated']).toBe(true);
    expect(String(run['subagent.output']).length).toBeLessThanOrEqual(10);
  });
});

describe('privacy settings fail closed', () => {
  it('--max-content-length 0 records no content', async () => {
    const { run, code } = await replayRun(['--max-content-length', '0']);
    expect(code).toBe(0);
    expect(run['subagent.output']).toBeUndefined();
    expect(run['gen_ai.output.messages']).toBeUndefined();
    expect(run['subagent.output.length']).toBe(OUTPUT_JSON.length);
  });

  it.each(['off', 'none', 'no', 'maybe'])(
    'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=%s records no content',
    async (value) => {
      const { run, stderr } = await replayRun([], { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: value });
      expect(run['subagent.output']).toBeUndefined();
      expect(run['gen_ai.output.messages']).toBeUndefined();
      expect(stderr.includes('no output content is recorded')).toBe(value === 'maybe');
    },
  );

  it('the proxy warns on stderr about an unrecognised capture value', async () => {
    const done = await runCli(['proxy', '--out', join(dir, 'out-proxy'), '--', process.execPath, '-e', ''], '', {
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'maybe',
    });
    expect(done.code).toBe(0);
    expect(done.stderr.toString()).toContain(
      'subagent-otel proxy: warning: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="maybe" is not one of',
    );
  });
});
