/**
 * The proxy in front of a runtime framed exactly as the real DeepSeek Harness
 * runtime frames its runs (the scripted runtime answers `session/prompt` on
 * queueing, with the inbox splices and status transitions around the turn):
 * a completed turn, max-tokens turns with and without an empty usage-only
 * final message, and a delegated child cut at max-tokens give top-level and
 * child spans whose stop reason, output and usage equal what upstream's SDK
 * client returns for them (its SDK rule over the last `turn/end`, the one
 * output rule, usage summed over every message), the child nested under its
 * parent's run.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { attributes, finished, isIdleLine, readSpans, rpc, spawnCli, waitForLine } from '../helpers/cli.js';
import { FIXTURE_SDK_RUNTIME } from '../helpers/paths.js';

describe('proxy in front of a runtime that answers prompts on queueing', () => {
  it("gives each run the stop reason, output and usage upstream's client returns, children nested", async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'proxy-framing-')), 'otel');
    const child = spawnCli(['proxy', '--out', out, '--', process.execPath, FIXTURE_SDK_RUNTIME]);
    const done = finished(child);
    child.stdin.write(rpc(1, 'initialize', { cwd: '/', provider: 'deepseek', model: 'deepseek-chat', maxTokens: 64 }));
    const scenarios = ['completed', 'empty-message', 'multi-step-max-tokens', 'max-tokens-text', 'subagent'];
    let id = 2;
    for (const scenario of scenarios) {
      const idle = waitForLine(child, isIdleLine(scenario));
      child.stdin.write(
        rpc(id, 'session/prompt', {
          sessionId: scenario,
          contentBlocks: [{ type: 'text', text: `scenario:${scenario}` }],
        }),
      );
      id += 1;
      await idle;
    }
    child.stdin.write(rpc(id, 'shutdown'));
    child.stdin.end();
    expect((await done).code).toBe(0);

    const all = readSpans(out);
    const spans = all.filter((s) => s.name.startsWith('invoke_agent'));
    /** A run's usage as its own span carries it (decision 0071, 2026-12 update); its chat spans, when they carry usage, sum to the same. */
    const usage = (run: (typeof all)[number], key: string): number => {
      const own = Number(attributes(run)[key] ?? 0);
      const chats = all.filter(
        (s) => s.parentSpanId === run.spanId && s.name.startsWith('chat') && attributes(s)[key] !== undefined,
      );
      if (chats.length > 0) expect(chats.reduce((sum, s) => sum + Number(attributes(s)[key]), 0)).toBe(own);
      return own;
    };
    const row = (sessionId: string) => {
      const span = spans.find((s) => attributes(s)['gen_ai.conversation.id'] === sessionId);
      if (span === undefined) return [];
      const a = attributes(span);
      return [
        a['subagent.stop_reason'],
        a['subagent.output'],
        usage(span, 'gen_ai.usage.input_tokens'),
        usage(span, 'gen_ai.usage.output_tokens'),
      ];
    };
    expect(spans).toHaveLength(6);
    expect(row('completed')).toEqual(['completed', '[{"type":"text","text":"The answer is 42."}]', 120, 12]);
    expect(row('empty-message')).toEqual([
      'max-tokens',
      '[{"type":"text","text":"Partial answer before the limit"}]',
      200,
      64,
    ]);
    expect(row('multi-step-max-tokens')).toEqual([
      'max-tokens',
      '[{"type":"text","text":"I will look that up."},{"type":"tool-call","id":"call_1","name":"read_file","arguments":"{\\"path\\":\\"notes.txt\\"}"}]',
      360,
      94,
    ]);
    expect(row('max-tokens-text')).toEqual([
      'max-tokens',
      '[{"type":"text","text":"The report covers three areas and"}]',
      90,
      32,
    ]);
    expect(row('subagent')).toEqual(['completed', '[{"type":"text","text":"The child was cut off."}]', 280, 28]);
    expect(row('subagent-child-1')).toEqual([
      'max-tokens',
      '[{"type":"text","text":"Child partial answer."},{"type":"tool-call","id":"call_c1","name":"read_file","arguments":"{\\"path\\":\\"answer.txt\\"}"}]',
      230,
      89,
    ]);
    const parent = spans.find((s) => attributes(s)['gen_ai.conversation.id'] === 'subagent');
    const childSpan = spans.find((s) => attributes(s)['gen_ai.conversation.id'] === 'subagent-child-1');
    expect(childSpan?.parentSpanId).toBe(parent?.spanId);
    expect(childSpan?.traceId).toBe(parent?.traceId);
    expect(attributes(childSpan!)['subagent.provider']).toBe('spawn');
    expect(attributes(childSpan!)['gen_ai.provider.name']).toBe('deepseek');
  });
});
