/**
 * What `replay` wrote: the OTLP JSON lines of `traces.jsonl`, read back into
 * the runs (`invoke_agent` spans) and tool calls (`execute_tool` spans) the
 * corpus check compares with its own reading of the files. Only the fields
 * the check needs; a line that does not parse is an error (the file is the
 * project's own output, written whole before the command exits).
 *
 * @module subagent-otel/corpus/spans
 */
import { existsSync, readFileSync } from 'node:fs';
import { arr, obj, str, type Obj } from './records.js';

/** Token counts as the run span carries them (`gen_ai.usage.*`). */
export interface Tokens {
  /** `gen_ai.usage.input_tokens`: uncached input plus cache reads and writes. */
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  /** `gen_ai.usage.cache_write.input_tokens`, or `gen_ai.usage.cache_creation.input_tokens` under the previous names. */
  readonly cacheWrite: number;
}

/** One run: an `invoke_agent` span. */
export interface SpanRun {
  readonly runId: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly stopReason: string;
  readonly inferredFrom: string | undefined;
  /** `subagent.output` parsed (the output blocks), or undefined when the span has none. */
  readonly output: readonly Obj[] | undefined;
  readonly tokens: Tokens;
  /** `subagent.reported_output.match`, when the reader compared. */
  readonly reportedMatch: boolean | undefined;
}

/** One tool call: an `execute_tool` span. */
export interface SpanTool {
  readonly callId: string | undefined;
  readonly toolName: string | undefined;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
}

/** Everything read from one `traces.jsonl`. */
export interface SpanIndex {
  readonly runs: readonly SpanRun[];
  readonly tools: readonly SpanTool[];
  /** Runs by `gen_ai.agent.id` (several when the reader gave one id twice). */
  readonly runsById: ReadonlyMap<string, readonly SpanRun[]>;
  /** Spans by `traceId/spanId`. */
  readonly spanKey: (traceId: string, spanId: string) => string;
  readonly toolsByKey: ReadonlyMap<string, SpanTool>;
  readonly runsByKey: ReadonlyMap<string, SpanRun>;
}

function attributes(span: Obj): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const a of arr(span['attributes'])) {
    const attr = obj(a);
    const key = str(attr?.['key']);
    const value = obj(attr?.['value']);
    if (key === undefined || value === undefined) continue;
    if ('stringValue' in value) out.set(key, value['stringValue']);
    else if ('intValue' in value) out.set(key, Number(value['intValue']));
    else if ('doubleValue' in value) out.set(key, Number(value['doubleValue']));
    else if ('boolValue' in value) out.set(key, value['boolValue']);
    else if ('arrayValue' in value)
      out.set(
        key,
        arr(obj(value['arrayValue'])?.['values']).map((v) => obj(v)?.['stringValue']),
      );
  }
  return out;
}

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/**
 * Reads `<dir>/traces.jsonl`.
 * @throws when a line is not JSON (the file is written by the project's own exporter).
 */
export function readSpans(file: string): SpanIndex {
  const runs: SpanRun[] = [];
  const tools: SpanTool[] = [];
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let batch: unknown;
    try {
      batch = JSON.parse(line);
    } catch (error) {
      throw new Error(`${file}:${i + 1}: not JSON (${error instanceof Error ? error.message : String(error)})`, {
        cause: error,
      });
    }
    for (const rs of arr(obj(batch)?.['resourceSpans'])) {
      for (const ss of arr(obj(rs)?.['scopeSpans'])) {
        for (const s of arr(obj(ss)?.['spans'])) {
          const span = obj(s);
          if (span === undefined) continue;
          const a = attributes(span);
          const op = a.get('gen_ai.operation.name');
          const traceId = str(span['traceId']) ?? '';
          const spanId = str(span['spanId']) ?? '';
          const parent = str(span['parentSpanId']);
          const parentSpanId = parent === undefined || parent === '' ? undefined : parent;
          if (op === 'invoke_agent') {
            const rawOutput = str(a.get('subagent.output'));
            let output: Obj[] | undefined;
            if (rawOutput !== undefined) {
              try {
                output = arr(JSON.parse(rawOutput)).flatMap((b) => (obj(b) !== undefined ? [obj(b) as Obj] : []));
              } catch {
                output = undefined; // a capped value is cut JSON: the run then has no comparable output
              }
            }
            const match = a.get('subagent.reported_output.match');
            runs.push({
              runId: str(a.get('gen_ai.agent.id')) ?? str(a.get('subagent.run_id')) ?? '',
              traceId,
              spanId,
              parentSpanId,
              stopReason: str(a.get('subagent.stop_reason')) ?? '',
              inferredFrom: str(a.get('subagent.stop_reason.inferred_from')),
              output,
              tokens: {
                input: count(a.get('gen_ai.usage.input_tokens')),
                output: count(a.get('gen_ai.usage.output_tokens')),
                cacheRead: count(a.get('gen_ai.usage.cache_read.input_tokens')),
                // v0.1.0's name (the default since decision 0121), else the previous one (`gen_ai_previous`).
                cacheWrite: count(
                  a.get('gen_ai.usage.cache_write.input_tokens') ?? a.get('gen_ai.usage.cache_creation.input_tokens'),
                ),
              },
              reportedMatch: typeof match === 'boolean' ? match : undefined,
            });
          } else if (op === 'execute_tool') {
            tools.push({
              callId: str(a.get('gen_ai.tool.call.id')),
              toolName: str(a.get('gen_ai.tool.name')),
              traceId,
              spanId,
              parentSpanId,
            });
          }
        }
      }
    }
  }
  const spanKey = (traceId: string, spanId: string): string => `${traceId}/${spanId}`;
  const runsById = new Map<string, SpanRun[]>();
  for (const r of runs) runsById.set(r.runId, [...(runsById.get(r.runId) ?? []), r]);
  return {
    runs,
    tools,
    runsById,
    spanKey,
    toolsByKey: new Map(tools.map((t) => [spanKey(t.traceId, t.spanId), t])),
    runsByKey: new Map(runs.map((r) => [spanKey(r.traceId, r.spanId), r])),
  };
}
