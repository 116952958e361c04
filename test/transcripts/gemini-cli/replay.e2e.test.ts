/**
 * `subagent-otel replay` on Gemini CLI recordings, as a real process (the
 * built CLI): the real legacy chats of mischa-thisness/M-Gemini (CC0;
 * shared/transcripts/gemini-cli/real/README.md of the workspace) and the synthetic JSONL
 * sessions (a subagent linked by agentId, a subagent cut off at its token
 * limit, a truncated answer, defects). Expected figures were computed from
 * the files by an independent script, not by this reader.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { attributes, readSpans, runCli, type OtlpSpan, QUIET_ENV } from '../../helpers/cli.js';
import { sharedTranscripts } from '../../helpers/required-folder.js';
import { ROOT } from '../../helpers/paths.js';

const SAMPLES = join(ROOT, 'test', 'transcripts', 'gemini-cli');
const SHARED_REAL = sharedTranscripts('gemini-cli/real');
const HAS_REAL = SHARED_REAL !== undefined;
const REAL_ROOT = SHARED_REAL ?? join(ROOT, 'shared-transcripts-missing');
const out = mkdtempSync(join(tmpdir(), 'gemini-cli-e2e-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

interface Summary {
  runs: number;
  mismatches: number;
  problems: number;
  files: Array<{
    path: string;
    format?: string;
    records: number;
    runs: number;
    problems: number;
    isSkipped: boolean;
    what?: string;
  }>;
  stopReasons: Array<{ stopReason: string; runs: number }>;
}

async function replay(
  name: string,
  paths: readonly string[],
): Promise<{ code: number | null; summary: Summary; spans: OtlpSpan[]; stderr: string }> {
  const dir = join(out, name);
  const result = await runCli(['replay', '--json', '--no-progress', '--out', dir, ...paths], '', QUIET_ENV);
  return {
    code: result.code,
    summary: JSON.parse(result.stdout.toString('utf8')) as Summary,
    spans: readSpans(dir),
    stderr: result.stderr.toString('utf8'),
  };
}

const runSpan = (spans: readonly OtlpSpan[], runId: string): OtlpSpan | undefined =>
  spans.find((span) => span.name.startsWith('invoke_agent') && attributes(span)['subagent.run_id'] === runId);
const parentOf = (spans: readonly OtlpSpan[], span: OtlpSpan | undefined): OtlpSpan | undefined =>
  spans.find((candidate) => candidate.spanId === span?.parentSpanId);
const childrenNamed = (spans: readonly OtlpSpan[], span: OtlpSpan | undefined, prefix: string): OtlpSpan[] =>
  spans.filter((candidate) => candidate.parentSpanId === span?.spanId && candidate.name.startsWith(prefix));
/** A span's attributes; none for a span not found (the assertion on them then fails). */
const attrs = (span: OtlpSpan | undefined): Record<string, unknown> => (span === undefined ? {} : attributes(span));
const stops = (summary: Summary): Record<string, number> =>
  Object.fromEntries(summary.stopReasons.map((entry) => [entry.stopReason, entry.runs]));

describe.runIf(HAS_REAL)('replay of real Gemini CLI 0.2x legacy chats', () => {
  it('gives one run per document, the 0.22 subagents nested under their delegate_to_agent calls, usage as recorded', async () => {
    const { code, summary, spans, stderr } = await replay('real', [REAL_ROOT]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(summary.runs).toBe(10);
    expect(summary.problems).toBe(0);
    expect(stops(summary)).toEqual({ unknown: 5, aborted: 2, error: 1, completed: 2 });
    // The legacy subagents recorded only their prompts: no output to compare with the result their parents received.
    expect(summary.mismatches).toBe(2);

    const main = runSpan(spans, 'gemini-cli:ae691289-637c-454c-bf1e-e4ce2dad4260');
    expect(attrs(main)).toMatchObject({
      'gen_ai.agent.name': 'gemini-cli',
      'gen_ai.provider.name': 'gcp.gemini',
      'subagent.stop_reason': 'unknown',
      'subagent.stop_reason.inferred_from': 'none',
      'gen_ai.usage.input_tokens': 557819,
      'gen_ai.usage.cache_read.input_tokens': 352655,
      'gen_ai.usage.output_tokens': 4837,
      'gen_ai.usage.reasoning.output_tokens': 3599,
    });
    expect(main?.status?.code ?? 0).toBe(0);
    expect(childrenNamed(spans, main, 'chat').length).toBe(23);
    const tools = childrenNamed(spans, main, 'execute_tool');
    expect(tools.length).toBe(22);
    expect(tools.filter((tool) => tool.status?.code === 2).length).toBe(15);

    const sub = runSpan(spans, 'gemini-cli:ae691289-637c-454c-bf1e-e4ce2dad4260/session-2026-01-02T03-27-ae691289');
    expect(attrs(sub)).toMatchObject({
      'gen_ai.agent.name': 'codebase_investigator',
      'subagent.stop_reason': 'completed',
      'subagent.stop_reason.inferred_from': 'gemini-cli:parent-result:goal',
      'subagent.reported_output.match': false,
      'subagent.usage.notes': ['gemini-cli:subagent-model-messages-unrecorded'],
    });
    const tool = parentOf(spans, sub);
    expect([tool?.name, attrs(tool)['gen_ai.tool.call.id']]).toEqual([
      'execute_tool delegate_to_agent',
      'delegate_to_agent-1767324446307-d52c9391c2fcc',
    ]);
    expect(parentOf(spans, tool)?.spanId).toBe(main?.spanId);
    expect(sub?.traceId).toBe(main?.traceId);
  });

  it('ends a subagent at its last record, not at the lastUpdated a later start rewrote with the summary', async () => {
    const { spans } = await replay('real-summary', [REAL_ROOT]);
    const main = runSpan(spans, 'gemini-cli:9330d511-4926-4229-a4b7-f13824f66b81');
    expect(attrs(main)).toMatchObject({
      'subagent.stop_reason': 'unknown',
      'gen_ai.usage.input_tokens': 710644,
      'gen_ai.usage.cache_read.input_tokens': 469319,
      'gen_ai.usage.output_tokens': 10933,
      'gen_ai.usage.reasoning.output_tokens': 8065,
    });
    expect(childrenNamed(spans, main, 'chat').length).toBe(29);
    const tools = childrenNamed(spans, main, 'execute_tool');
    expect([tools.length, tools.filter((tool) => tool.status?.code === 2).length]).toEqual([27, 11]);

    const sub = runSpan(spans, 'gemini-cli:9330d511-4926-4229-a4b7-f13824f66b81/session-2026-01-02T02-35-9330d511');
    const tool = parentOf(spans, sub);
    expect(attrs(tool)['gen_ai.tool.call.id']).toBe('delegate_to_agent-1767321310555-c9cd6667b9dde8');
    expect(parentOf(spans, tool)?.spanId).toBe(main?.spanId);
    // Its last message is at 02:36:07.683; its document's lastUpdated says 03:43:12.071 (the summary written at the next start).
    expect([sub?.startTimeUnixNano, sub?.endTimeUnixNano]).toEqual(['1767321310604000000', '1767321367683000000']);
    expect(tool?.endTimeUnixNano).toBe('1767321375336000000');
  });

  it('reads the stop of each chat from its last notices', async () => {
    const { spans } = await replay('real-stops', [REAL_ROOT]);
    const stopOf = (runId: string): [unknown, unknown] => {
      const found = attrs(runSpan(spans, runId));
      return [found['subagent.stop_reason'], found['subagent.stop_reason.inferred_from']];
    };
    expect(stopOf('gemini-cli:181ebe6d-2a7c-4790-9dff-ec565c1c72b5')).toEqual(['error', 'gemini-cli:error:api']);
    expect(stopOf('gemini-cli:049d9bb6-4b90-4e7b-a2f7-6b6045f52af9')).toEqual(['aborted', 'gemini-cli:info:cancelled']);
    // "agy not found" is a slash command's error, not how a turn ended.
    expect(stopOf('gemini-cli:9fae96a8-acbd-4dff-bdfe-843155dbe0e2')).toEqual(['unknown', 'none']);
    expect(stopOf('gemini-cli:e0f6ebe9-0916-4779-b0c7-ce181ae3d16b')).toEqual(['aborted', 'gemini-cli:info:cancelled']);
    // The second chat of the same CLI session id gets a run id of its own.
    expect(stopOf('gemini-cli:e0f6ebe9-0916-4779-b0c7-ce181ae3d16b/session-2025-12-03T04-48-e0f6ebe9')).toEqual([
      'unknown',
      'none',
    ]);
    expect(stopOf('gemini-cli:809f21a5-9153-422a-89cd-d4bc4da2bec7')).toEqual(['unknown', 'none']);
    const simple = attrs(runSpan(spans, 'gemini-cli:809f21a5-9153-422a-89cd-d4bc4da2bec7'));
    expect([
      simple['gen_ai.usage.input_tokens'],
      simple['gen_ai.usage.cache_read.input_tokens'],
      simple['gen_ai.usage.output_tokens'],
      simple['gen_ai.usage.reasoning.output_tokens'],
    ]).toEqual([20640, 4955, 345, 287]);
  });
});

describe('replay of synthetic Gemini CLI JSONL sessions', () => {
  it('nests a subagent under the invoke_agent call that names it, and reads a truncated answer as max-tokens', async () => {
    const { code, summary, spans } = await replay('jsonl', [
      join(SAMPLES, 'synthetic', 'jsonl-subagent'),
      join(SAMPLES, 'synthetic', 'subagent-max-tokens'),
    ]);
    expect(code).toBe(0);
    expect(summary.runs).toBe(4);
    expect(stops(summary)).toEqual({ 'max-tokens': 2, completed: 1, unknown: 1 });
    // The completed subagent's complete_task answer is what its parent received; the one cut at its limit reported an error instead.
    expect(summary.mismatches).toBe(1);

    const main = runSpan(spans, 'gemini-cli:5b1e0c2a-7f3d-4e8a-9c21-0d6f4a3b8e11');
    expect(attrs(main)).toMatchObject({
      'subagent.stop_reason': 'max-tokens',
      'subagent.stop_reason.inferred_from': 'gemini-cli:info:truncated',
      'gen_ai.usage.input_tokens': 4300,
      'gen_ai.usage.cache_read.input_tokens': 2400,
      'gen_ai.usage.output_tokens': 8257,
      'subagent.usage.notes': ['gemini-cli:rewound-calls-excluded'],
    });
    const chats = childrenNamed(spans, main, 'chat');
    expect(chats.map((chat) => attributes(chat)['gen_ai.response.finish_reasons'] ?? null)).toEqual([
      null,
      null,
      ['length'],
    ]);

    const sub = runSpan(spans, 'gemini-cli:c0ffee00-1111-4222-8333-944455556666');
    expect(attrs(sub)).toMatchObject({
      'gen_ai.agent.name': 'codebase_investigator',
      'subagent.stop_reason': 'completed',
      'subagent.stop_reason.inferred_from': 'gemini-cli:parent-result:goal',
      'subagent.reported_output.match': true,
      'gen_ai.usage.input_tokens': 2000,
      'gen_ai.usage.output_tokens': 77,
    });
    const tool = parentOf(spans, sub);
    expect(tool?.name).toBe('execute_tool invoke_agent');
    expect(parentOf(spans, tool)?.spanId).toBe(main?.spanId);

    const cut = runSpan(spans, 'gemini-cli:d00dfeed-2222-4333-8444-a55566667777');
    expect(attrs(cut)).toMatchObject({
      'gen_ai.agent.name': 'generalist',
      'subagent.stop_reason': 'max-tokens',
      'subagent.stop_reason.inferred_from': 'gemini-cli:parent-result:max-tokens',
    });
    expect(cut?.status?.code).toBe(2);
  });

  it('nests a 0.37/0.38 legacy subagent document (chats/<parent>/<id>.json) under the tool named after its agent', async () => {
    const { code, summary, spans } = await replay('legacy-0.37', [join(SAMPLES, 'synthetic', 'legacy-0.37-subagent')]);
    expect(code).toBe(0);
    expect([summary.runs, summary.problems]).toEqual([2, 0]);
    const main = runSpan(spans, 'gemini-cli:3c4d5e6f-1a2b-4c3d-8e9f-0a1b2c3d4e5f');
    const sub = runSpan(spans, 'gemini-cli:k3j9x2');
    expect(attrs(sub)).toMatchObject({
      'gen_ai.agent.name': 'codebase_investigator',
      'subagent.parent.session_id': '3c4d5e6f-1a2b-4c3d-8e9f-0a1b2c3d4e5f',
      'subagent.stop_reason': 'completed',
      'subagent.stop_reason.inferred_from': 'gemini-cli:parent-result:goal',
      'gen_ai.usage.input_tokens': 1800,
      'gen_ai.usage.cache_read.input_tokens': 500,
      'gen_ai.usage.output_tokens': 54,
      'gen_ai.usage.reasoning.output_tokens': 15,
    });
    const tool = parentOf(spans, sub);
    expect([tool?.name, attrs(tool)['gen_ai.tool.call.id']]).toEqual([
      'execute_tool codebase_investigator',
      'codebase_investigator-1775390403000-1',
    ]);
    expect(parentOf(spans, tool)?.spanId).toBe(main?.spanId);
    expect(attrs(main)).toMatchObject({
      'gen_ai.usage.input_tokens': 2300,
      'gen_ai.usage.output_tokens': 42,
      'subagent.stop_reason': 'unknown',
    });
  });

  it('lists defects with file and line, skips what cannot be read, and lists the activity log as no run', async () => {
    const { code, summary, stderr } = await replay('defects', [
      join(SAMPLES, 'synthetic', 'defects'),
      join(SAMPLES, 'synthetic', 'logs'),
    ]);
    expect(code).toBe(1);
    expect(summary.runs).toBe(1);
    const byName = Object.fromEntries(
      summary.files.map((file) => [
        file.path.split('/').pop(),
        [file.records, file.runs, file.problems, file.isSkipped, file.what ?? null],
      ]),
    );
    expect(byName).toEqual({
      'session-2026-08-22T08-00-9e8d7c6b.jsonl': [4, 1, 5, false, null],
      'session-2026-08-22T08-30-1a2b3c4d.json': [0, 0, 1, true, null],
      'session-9e8d7c6b-0000-4000-8000-000000000001.jsonl': [
        0,
        0,
        0,
        false,
        'Gemini CLI activity log (console and network records of a session, logs/session-<id>.jsonl): no run',
      ],
    });
    expect(stderr).toContain(
      'session-2026-08-22T08-00-9e8d7c6b.jsonl:6: the line is not UTF-8 text; skipped [invalid-utf8]',
    );
  });
});
