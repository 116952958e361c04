/**
 * `subagent-otel replay` (the built CLI) on the transcripts today's real
 * agents wrote here (test/transcripts/<format>/generated/, written by
 * `node scripts/generate-agent-transcripts.mjs`; no agent runs in this test):
 * Claude Code 2.1.318 (claude-agent-acp 0.101), Codex 0.166 (codex-acp 2.6)
 * and Gemini CLI 0.61 delegating to a subagent that answers, is cut at its
 * output limit or is interrupted, and a parent cut at its own limit.
 *
 * Every expected figure is the one written in the README of the agent's
 * `generated` folder, computed there by jq over the raw files, never by the
 * project's code: stop reason, the output the parent received (a background
 * subagent: the `<result>` of its task notification; a foreground one: the
 * delegation tool's result), token totals over the distinct responses
 * (input including cache reads, as `gen_ai.usage.input_tokens` counts it).
 * Run and session ids come from the file names.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { attributes, readSpans, runCli, type OtlpSpan, QUIET_ENV } from '../helpers/cli.js';
import { ROOT } from '../helpers/paths.js';

const GENERATED = (format: string, scenario: string): string =>
  join(ROOT, 'test', 'transcripts', format, 'generated', scenario);
const out = mkdtempSync(join(tmpdir(), 'generated-transcripts-e2e-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));
interface Summary {
  runs: number;
  problems: number;
}

interface Replayed {
  code: number | null;
  stderr: string;
  summary: Summary;
  spans: OtlpSpan[];
}

let sequence = 0;
async function replay(folder: string): Promise<Replayed> {
  if (!existsSync(folder))
    throw new Error(
      `${folder} is missing: it is committed test data (regenerate with 'node scripts/generate-agent-transcripts.mjs')`,
    );
  const dir = join(out, String((sequence += 1)));
  const result = await runCli(['replay', '--json', '--no-progress', '--out', dir, folder], '', QUIET_ENV);
  return {
    code: result.code,
    stderr: result.stderr.toString('utf8'),
    summary: JSON.parse(result.stdout.toString('utf8')) as Summary,
    spans: readSpans(dir),
  };
}

/** Every file under `dir`, relative paths. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

/** What a test compares of one run: its stop reason, the text of its output, its usage, its nesting and parity. */
interface RunFacts {
  stopReason: unknown;
  output: string;
  input: unknown;
  cacheRead: unknown;
  outputTokens: unknown;
  parentTool?: string | undefined;
}

function runSpan(spans: readonly OtlpSpan[], runId: string): OtlpSpan | undefined {
  return spans.find((s) => s.name.startsWith('invoke_agent') && attributes(s)['subagent.run_id'] === runId);
}

/** The text parts of a run's recorded output (`subagent.output`), joined; '' when none. */
function outputText(a: Record<string, unknown>): string {
  const raw = a['subagent.output'];
  if (typeof raw !== 'string') return '';
  return (JSON.parse(raw) as Array<{ type: string; text?: string }>)
    .filter((p) => p.type === 'text')
    .map((p) => p.text ?? '')
    .join('');
}

function facts(spans: readonly OtlpSpan[], runId: string): RunFacts & { match: unknown } {
  const span = runSpan(spans, runId);
  if (span === undefined)
    throw new Error(
      `no run ${runId} among ${spans
        .filter((s) => s.name.startsWith('invoke_agent'))
        .map((s) => String(attributes(s)['subagent.run_id']))
        .join(', ')}`,
    );
  const a = attributes(span);
  const parent = spans.find((s) => s.spanId === span.parentSpanId);
  return {
    stopReason: a['subagent.stop_reason'],
    output: outputText(a),
    input: a['gen_ai.usage.input_tokens'] ?? 0,
    cacheRead: a['gen_ai.usage.cache_read.input_tokens'] ?? 0,
    outputTokens: a['gen_ai.usage.output_tokens'] ?? 0,
    parentTool: parent?.name,
    match: a['subagent.reported_output.match'],
  };
}

const CHILD_ANSWER = 'The subagent found 7 files.';
const PARENT_ANSWER = 'The subagent reported back.';
const PARTIAL = 'Here is the first part of a long';

// ------------------------------------------------------------------ Claude Code 2.1.318

/** The session id and subagent id of a Claude Code scenario folder, from its file names. */
function claudeIds(folder: string): { session: string; child: string } {
  const files = filesUnder(folder);
  const session = files.map((f) => /^[^/]+\/([0-9a-f-]{36})\.jsonl$/.exec(f)?.[1]).find((s) => s !== undefined);
  const agent = files.map((f) => /\/subagents\/agent-([0-9a-z]+)\.jsonl$/.exec(f)?.[1]).find((s) => s !== undefined);
  if (session === undefined || agent === undefined) throw new Error(`${folder}: no session file or no subagent file`);
  return { session: `claude-code:${session}`, child: `claude-code:${session}/agent-${agent}` };
}

describe('Claude Code 2.1.318 (claude-agent-acp 0.101), generated here', () => {
  const scenario = async (name: string): Promise<Replayed & { ids: { session: string; child: string } }> => {
    const folder = GENERATED('claude-code', name);
    return { ...(await replay(folder)), ids: claudeIds(folder) };
  };

  it('foreground subagent: completed, its answer the Agent result, nested under the Agent call', async () => {
    const { code, stderr, summary, spans, ids } = await scenario('foreground');
    expect([code, stderr, summary.runs, summary.problems]).toEqual([0, '', 2, 0]);
    expect(facts(spans, ids.child)).toEqual({
      stopReason: 'completed',
      output: CHILD_ANSWER,
      input: 1000,
      cacheRead: 100,
      outputTokens: 11,
      parentTool: 'execute_tool Agent',
      match: true,
    });
    expect(facts(spans, ids.session)).toMatchObject({
      stopReason: 'completed',
      output: PARENT_ANSWER,
      input: 2800,
      cacheRead: 400,
      outputTokens: 34,
    });
  });

  it('background subagent: completed, its answer equal to the <result> of its task notification', async () => {
    const { code, stderr, summary, spans, ids } = await scenario('background');
    expect([code, stderr, summary.runs, summary.problems]).toEqual([0, '', 2, 0]);
    expect(facts(spans, ids.child)).toEqual({
      stopReason: 'completed',
      output: CHILD_ANSWER,
      input: 1000,
      cacheRead: 100,
      outputTokens: 11,
      parentTool: 'execute_tool Agent',
      match: true,
    });
    expect(facts(spans, ids.session)).toMatchObject({
      stopReason: 'completed',
      output: PARENT_ANSWER,
      input: 4200,
      cacheRead: 600,
      outputTokens: 51,
    });
  });

  it('background subagent cut at its output limit: max-tokens, its partial answer equal to the notification <result>', async () => {
    const { code, stderr, summary, spans, ids } = await scenario('background-cut');
    expect([code, stderr, summary.runs, summary.problems]).toEqual([0, '', 2, 0]);
    expect(facts(spans, ids.child)).toEqual({
      stopReason: 'max-tokens',
      output: PARTIAL,
      input: 4000,
      cacheRead: 400,
      outputTokens: 44,
      parentTool: 'execute_tool Agent',
      match: true,
    });
    expect(facts(spans, ids.session)).toMatchObject({
      stopReason: 'completed',
      output: PARENT_ANSWER,
      input: 4200,
      cacheRead: 600,
      outputTokens: 51,
    });
  });

  it('foreground subagent cut at its output limit: max-tokens with its partial answer (the parent got the error text)', async () => {
    const { code, stderr, summary, spans, ids } = await scenario('foreground-cut');
    expect([code, stderr, summary.runs, summary.problems]).toEqual([0, '', 2, 0]);
    expect(facts(spans, ids.child)).toMatchObject({
      stopReason: 'max-tokens',
      output: PARTIAL,
      input: 4000,
      cacheRead: 400,
      outputTokens: 44,
      parentTool: 'execute_tool Agent',
    });
    expect(facts(spans, ids.session)).toMatchObject({
      stopReason: 'completed',
      output: PARENT_ANSWER,
      input: 2800,
      cacheRead: 400,
      outputTokens: 34,
    });
  });

  it('parent cut at its output limit after its subagent answered: the parent max-tokens, the subagent completed', async () => {
    const { code, stderr, summary, spans, ids } = await scenario('parent-cut');
    expect([code, stderr, summary.runs, summary.problems]).toEqual([0, '', 2, 0]);
    expect(facts(spans, ids.session)).toMatchObject({
      stopReason: 'max-tokens',
      output: PARTIAL,
      input: 7000,
      cacheRead: 1000,
      outputTokens: 85,
    });
    expect(facts(spans, ids.child)).toEqual({
      stopReason: 'completed',
      output: CHILD_ANSWER,
      input: 1000,
      cacheRead: 100,
      outputTokens: 11,
      parentTool: 'execute_tool Agent',
      match: true,
    });
  });

  it('subagent interrupted by session/cancel: aborted, like its parent', async () => {
    const { code, stderr, summary, spans, ids } = await scenario('interrupted');
    expect([code, stderr, summary.runs, summary.problems]).toEqual([0, '', 2, 0]);
    expect(facts(spans, ids.child)).toMatchObject({
      stopReason: 'aborted',
      output: '',
      input: 0,
      outputTokens: 0,
      parentTool: 'execute_tool Agent',
    });
    expect(facts(spans, ids.session)).toMatchObject({
      stopReason: 'aborted',
      input: 1400,
      cacheRead: 200,
      outputTokens: 17,
    });
  });
});

// ------------------------------------------------------------------ Codex 0.166

/** The thread ids of a Codex scenario folder: the child's rollout is the one whose first line names `thread_spawn`. */
function codexIds(folder: string): { parent: string; child: string } {
  let parent: string | undefined;
  let child: string | undefined;
  for (const file of filesUnder(folder)) {
    const id = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/.exec(file)?.[1];
    if (id === undefined) continue;
    const first = readFileSync(join(folder, file), 'utf8').split('\n', 1)[0] ?? '';
    if (first.includes('"thread_spawn"')) child = id;
    else parent = id;
  }
  if (parent === undefined || child === undefined) throw new Error(`${folder}: no parent or no child rollout`);
  return { parent: `codex:${parent}`, child: `codex:${child}` };
}

describe('Codex 0.166 (codex-acp 2.6), generated here', () => {
  const scenario = async (name: string): Promise<Replayed & { ids: { parent: string; child: string } }> => {
    const folder = GENERATED('codex', name);
    return { ...(await replay(folder)), ids: codexIds(folder) };
  };

  it('spawned child: completed, its answer the one wait_agent delivered, nested under spawn_agent; no record skipped', async () => {
    const { code, stderr, summary, spans, ids } = await scenario('spawn');
    expect(facts(spans, ids.child)).toEqual({
      stopReason: 'completed',
      output: CHILD_ANSWER,
      input: 900,
      cacheRead: 100,
      outputTokens: 11,
      parentTool: 'execute_tool spawn_agent',
      match: true,
    });
    expect(facts(spans, ids.parent)).toMatchObject({
      stopReason: 'completed',
      output: PARENT_ANSWER,
      input: 4800,
      cacheRead: 800,
      outputTokens: 68,
    });
    expect([code, stderr, summary.runs, summary.problems]).toEqual([0, '', 2, 0]);
  });

  it('child cut at max_output_tokens: max-tokens with its partial answer', async () => {
    const { code, stderr, summary, spans, ids } = await scenario('child-cut');
    expect(facts(spans, ids.child)).toMatchObject({
      stopReason: 'max-tokens',
      output: PARTIAL,
      input: 900,
      cacheRead: 100,
      outputTokens: 11,
      parentTool: 'execute_tool spawn_agent',
    });
    expect(facts(spans, ids.parent)).toMatchObject({
      stopReason: 'completed',
      output: PARENT_ANSWER,
      input: 4800,
      cacheRead: 800,
      outputTokens: 68,
    });
    expect([code, stderr, summary.runs, summary.problems]).toEqual([0, '', 2, 0]);
  });

  it('parent cut at max_output_tokens (task_complete with an incomplete-response error): max-tokens', async () => {
    const { code, stderr, summary, spans, ids } = await scenario('parent-cut');
    expect(facts(spans, ids.parent)).toMatchObject({
      stopReason: 'max-tokens',
      output: PARTIAL,
      input: 4800,
      cacheRead: 800,
      outputTokens: 68,
    });
    expect(facts(spans, ids.child)).toMatchObject({
      stopReason: 'completed',
      output: CHILD_ANSWER,
      input: 900,
      cacheRead: 100,
      outputTokens: 11,
    });
    expect([code, stderr, summary.runs, summary.problems]).toEqual([0, '', 2, 0]);
  });

  it('child interrupted by session/cancel while its parent waits: both aborted', async () => {
    const { code, stderr, summary, spans, ids } = await scenario('interrupted');
    expect(facts(spans, ids.child)).toMatchObject({
      stopReason: 'aborted',
      output: '',
      input: 0,
      outputTokens: 0,
      parentTool: 'execute_tool spawn_agent',
    });
    expect(facts(spans, ids.parent)).toMatchObject({
      stopReason: 'aborted',
      input: 3600,
      cacheRead: 600,
      outputTokens: 51,
    });
    expect([code, stderr, summary.runs, summary.problems]).toEqual([0, '', 2, 0]);
  });
});

// ------------------------------------------------------------------ Gemini CLI 0.61

/** The parent session and subagent ids of a Gemini CLI scenario folder: the child lives in `chats/<parent>/<child>.jsonl`. */
function geminiIds(folder: string): { parent: string; child: string } {
  for (const file of filesUnder(folder)) {
    const m = /chats\/([0-9a-f-]{36})\/([0-9a-f-]{36})\.jsonl$/.exec(file);
    if (m !== null) return { parent: `gemini-cli:${m[1]!}`, child: `gemini-cli:${m[2]!}` };
  }
  throw new Error(`${folder}: no subagent recording`);
}

describe('Gemini CLI 0.61, generated here', () => {
  const scenario = async (name: string): Promise<Replayed & { ids: { parent: string; child: string } }> => {
    const folder = GENERATED('gemini-cli', name);
    return { ...(await replay(folder)), ids: geminiIds(folder) };
  };

  it('invoked subagent: completed, its answer the complete_task response its parent received', async () => {
    const { code, stderr, spans, ids } = await scenario('invoke');
    expect([code, stderr]).toEqual([0, '']);
    // The rule selects the last non-empty message: the complete_task call, whose result argument is the answer the parent received.
    expect(facts(spans, ids.child)).toEqual({
      stopReason: 'completed',
      output: '',
      input: 900,
      cacheRead: 100,
      outputTokens: 11,
      parentTool: 'execute_tool invoke_agent',
      match: true,
    });
    const child = runSpan(spans, ids.child);
    const selected = JSON.parse(String(child && attributes(child)['subagent.output'])) as Array<{
      type: string;
      name?: string;
      arguments?: string;
    }>;
    expect(selected.map((b) => [b.type, b.name, b.arguments && (JSON.parse(b.arguments) as unknown)])).toEqual([
      ['tool-call', 'complete_task', { result: { response: CHILD_ANSWER } }],
    ]);
    expect(facts(spans, ids.parent)).toMatchObject({
      output: PARENT_ANSWER,
      input: 2400,
      cacheRead: 400,
      outputTokens: 34,
    });
  });

  it('subagent cut at MAX_TOKENS twice, then stopped without complete_task: error, its partial answer kept', async () => {
    const { code, stderr, spans, ids } = await scenario('child-cut');
    expect([code, stderr]).toEqual([0, '']);
    expect(facts(spans, ids.child)).toMatchObject({
      stopReason: 'error',
      output: PARTIAL,
      input: 1800,
      cacheRead: 200,
      outputTokens: 22,
      parentTool: 'execute_tool invoke_agent',
    });
    expect(facts(spans, ids.parent)).toMatchObject({
      output: PARENT_ANSWER,
      input: 2400,
      cacheRead: 400,
      outputTokens: 34,
    });
  });

  it('subagent interrupted by session/cancel: aborted (its parent received the invoke_agent error "Aborted")', async () => {
    const { code, stderr, spans, ids } = await scenario('interrupted');
    expect([code, stderr]).toEqual([0, '']);
    // The parent's call ended in an error, not a report: nothing to compare, so no match attribute.
    expect(facts(spans, ids.child)).toMatchObject({
      stopReason: 'aborted',
      output: '',
      input: 0,
      outputTokens: 0,
      parentTool: 'execute_tool invoke_agent',
      match: undefined,
    });
    expect(facts(spans, ids.parent)).toMatchObject({ input: 1200, cacheRead: 200, outputTokens: 17 });
  });

  it('the session file 0.61 writes for every session it opens, holding only <session_context>, is read and gives no run', async () => {
    for (const name of ['invoke', 'child-cut', 'interrupted']) {
      const { spans } = await scenario(name);
      // README: each scenario folder holds three chats, a parent, its subagent and one session without a prompt.
      expect(spans.filter((s) => s.name.startsWith('invoke_agent')).length, name).toBe(2);
    }
  });
});
