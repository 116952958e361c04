import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ATTR_SUBAGENT_OUTPUT, ATTR_SUBAGENT_STOP_REASON } from '../../src/telemetry/semconv.js';
import { attributes, readSpans, runCli } from '../helpers/cli.js';

describe('subagent-otel demo (the main job)', () => {
  it('prints one row per run and leaves telemetry files that match the rows', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'demo-')), 'otel');
    const r = await runCli(['demo', '--out', out], '', { OTEL_EXPORTER_OTLP_ENDPOINT: '', SUBAGENT_OTEL_OUT: '' });
    const stdout = r.stdout.toString('utf8');
    expect(r.code, r.stderr.toString()).toBe(0);
    expect(stdout).toMatch(/sdk-backend +empty-message +max-tokens +stream +200\/64 +Partial answer before the limit/);
    expect(stdout).toMatch(
      /sdk-proxy +multi-step-max-tokens +max-tokens +message +360\/94 +I will look that up\. \[tool-call\]/,
    );
    expect(stdout).toMatch(
      /sdk-backend +subagent-wrong-report \(child\) +max-tokens +message .*⚠ runtime reported a different output/,
    );
    expect(stdout).toMatch(/acp-backend +max-tokens +max-tokens +stream .*I found the config file\. Reading it now\./);
    expect(stdout).toContain(
      '35 runs observed: 11 cut off at max-tokens (truncation rate 31%), 2 where the runtime reported a different output than the rule selects.',
    );
    expect(stdout).toContain(`traces: file ${join(out, 'traces.jsonl')}`);

    const runs = readSpans(out).filter((s) => s.name.startsWith('invoke_agent'));
    expect(runs).toHaveLength(35);
    const truncated = runs.filter((s) => attributes(s)[ATTR_SUBAGENT_STOP_REASON] === 'max-tokens');
    expect(truncated).toHaveLength(11);
    // Two of them are recognised from the errors codex and claude answer with at their output limit.
    expect(
      truncated.map((s) => attributes(s)['subagent.stop_reason.inferred_from']).filter((v) => v !== undefined),
    ).toEqual(['codex-acp/max_output_tokens@1', 'claude-agent-acp/output_token_maximum@1']);
    expect(truncated.map((s) => attributes(s)[ATTR_SUBAGENT_OUTPUT])).toContain(
      '[{"type":"text","text":"Partial answer before the limit"}]',
    );
    expect(readFileSync(join(out, 'metrics.jsonl'), 'utf8')).toContain('"subagent.runs"');

    // Steps and tools are stamped by the runtime's clock, runs by the observer's: every span still lies inside its parent.
    const spans = readSpans(out);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const outside = spans.flatMap((s) => {
      const parent = s.parentSpanId === undefined ? undefined : byId.get(s.parentSpanId);
      if (parent === undefined) return [];
      const inside =
        BigInt(s.startTimeUnixNano) >= BigInt(parent.startTimeUnixNano) &&
        BigInt(s.endTimeUnixNano) <= BigInt(parent.endTimeUnixNano);
      return inside ? [] : [`${s.name} in ${parent.name}`];
    });
    expect(outside).toEqual([]);
  });
});
