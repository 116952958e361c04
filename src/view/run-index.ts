/**
 * The runs of one or more OTLP JSON traces files, indexed once: one compact
 * row per `invoke_agent` span (time, agent, session, stop reason, tokens,
 * cost, an output preview and a bounded search text), and per trace where its
 * lines lie in the files, so a run's whole trace is read again only when it
 * is opened. Answers the page's queries (filter, sort, page, charts) from
 * memory. Holds no span but the run spans' fields, whatever the files' size.
 *
 * @module subagent-otel/view/run-index
 */
import { attributeMap, millisOf, type attributeValue } from '../wire/otlp-json.js';
import type { Charts, RunDetail, RunQuery, RunRow, RunsPage, SpanView, Summary } from './api-types.js';
import { rereadTracesLines, type LineRef, type TracesLine } from './otlp-lines.js';
import { messagesText, outputText, preview } from './run-fields.js';
import { delegatingToolCalls } from './trace-tree.js';

/** Characters of the output preview in the table. */
export const PREVIEW_LENGTH = 160;
/** Characters of the output, and of the prompt, that text search covers per run (the rest is only in the run's view). */
export const SEARCH_TEXT_LENGTH = 4000;
/** Most rows one `/api/runs` page holds. */
export const MAX_PAGE = 500;

const MAX_TOKENS = 'max-tokens';

type Plain = ReturnType<typeof attributeValue>;

interface IndexedRun extends RunRow {
  readonly traceId: string;
  readonly spanId: string;
  readonly file: number;
  /** Lower-cased output and prompt, each cut to {@link SEARCH_TEXT_LENGTH}. */
  readonly search: string;
}

interface TraceLines {
  readonly file: number;
  readonly refs: LineRef[];
}

function str(value: Plain): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function num(value: Plain): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The runs of the files added so far. Not safe to query while `addLine` runs on another task (it is synchronous). */
export class RunIndex {
  readonly #files: string[] = [];
  readonly #runs: IndexedRun[] = [];
  readonly #seen = new Set<string>();
  readonly #traces = new Map<string, TraceLines[]>();

  /** Registers a file; its number is passed to {@link addLine}. */
  addFile(path: string): number {
    this.#files.push(path);
    return this.#files.length - 1;
  }

  get runCount(): number {
    return this.#runs.length;
  }

  /** Indexes one traces line of file `file`: its run spans, and which traces it holds. A run seen before (same trace and span id) is kept once. */
  addLine(file: number, line: TracesLine): void {
    const tracesHere = new Set<string>();
    for (const rs of line.request.resourceSpans ?? []) {
      for (const ss of rs.scopeSpans ?? []) {
        for (const span of ss.spans ?? []) {
          const traceId = span.traceId.toLowerCase();
          tracesHere.add(traceId);
          const attrs = attributeMap(span.attributes);
          const operation = str(attrs.get('gen_ai.operation.name')) ?? span.name.split(' ')[0];
          if (operation !== 'invoke_agent') continue;
          const id = `${traceId}-${span.spanId.toLowerCase()}`;
          if (this.#seen.has(id)) continue;
          this.#seen.add(id);
          this.#runs.push(this.#runOf(id, traceId, file, span, attrs));
        }
      }
    }
    for (const traceId of tracesHere) {
      let list = this.#traces.get(traceId);
      if (list === undefined) this.#traces.set(traceId, (list = []));
      let entry = list.find((l) => l.file === file);
      if (entry === undefined) list.push((entry = { file, refs: [] }));
      entry.refs.push({ offset: line.offset, length: line.length });
    }
  }

  #runOf(
    id: string,
    traceId: string,
    file: number,
    span: {
      spanId: string;
      parentSpanId?: string | undefined;
      name: string;
      startTimeUnixNano?: string | number | undefined;
      endTimeUnixNano?: string | number | undefined;
    },
    attrs: Map<string, Plain>,
  ): IndexedRun {
    const start = millisOf(span.startTimeUnixNano) ?? 0;
    const end = millisOf(span.endTimeUnixNano) ?? start;
    const output = outputText(attrs.get('subagent.output'));
    const prompt = messagesText(attrs.get('gen_ai.input.messages'));
    const inputTokens = num(attrs.get('gen_ai.usage.input_tokens'));
    const outputTokens = num(attrs.get('gen_ai.usage.output_tokens'));
    const cost = num(attrs.get('subagent.cost.amount'));
    const currency = str(attrs.get('subagent.cost.currency'));
    return {
      id,
      traceId,
      spanId: span.spanId.toLowerCase(),
      file,
      time: start,
      durationMs: Math.max(0, end - start),
      agent: str(attrs.get('gen_ai.agent.name')) ?? span.name.replace(/^invoke_agent ?/, '') ?? '',
      session: str(attrs.get('gen_ai.conversation.id')) ?? '',
      stop: str(attrs.get('subagent.stop_reason')) ?? 'unknown',
      ...(inputTokens !== undefined ? { inputTokens } : {}),
      ...(outputTokens !== undefined ? { outputTokens } : {}),
      ...(cost !== undefined ? { cost } : {}),
      ...(currency !== undefined ? { currency } : {}),
      preview: preview(output, PREVIEW_LENGTH),
      mismatch: attrs.get('subagent.reported_output.match') === false,
      nested: span.parentSpanId !== undefined && span.parentSpanId !== '',
      search: `${output.slice(0, SEARCH_TEXT_LENGTH)}\n${prompt.slice(0, SEARCH_TEXT_LENGTH)}`.toLowerCase(),
    };
  }

  /** Facets and counts for the page's filters. */
  summary(): Pick<Summary, 'runs' | 'agents' | 'stops' | 'first' | 'last'> {
    const agents = new Map<string, number>();
    const stops = new Map<string, number>();
    let first: number | undefined;
    let last: number | undefined;
    for (const run of this.#runs) {
      agents.set(run.agent, (agents.get(run.agent) ?? 0) + 1);
      stops.set(run.stop, (stops.get(run.stop) ?? 0) + 1);
      if (run.time > 0) {
        first = first === undefined ? run.time : Math.min(first, run.time);
        last = last === undefined ? run.time : Math.max(last, run.time);
      }
    }
    const list = (m: Map<string, number>): Array<{ name: string; runs: number }> =>
      [...m].map(([name, runs]) => ({ name, runs })).sort((a, b) => b.runs - a.runs || a.name.localeCompare(b.name));
    return {
      runs: this.#runs.length,
      agents: list(agents),
      stops: list(stops),
      ...(first !== undefined ? { first } : {}),
      ...(last !== undefined ? { last } : {}),
    };
  }

  #filtered(query: RunQuery): IndexedRun[] {
    const q = query.q?.trim().toLowerCase();
    return this.#runs.filter(
      (run) =>
        (query.agent === undefined || run.agent === query.agent) &&
        (query.stop === undefined || run.stop === query.stop) &&
        (query.from === undefined || run.time >= query.from) &&
        (query.to === undefined || run.time < query.to) &&
        (query.mismatch === undefined || run.mismatch === query.mismatch) &&
        (q === undefined || q === '' || run.search.includes(q)),
    );
  }

  /** One page of the filtered, sorted runs (default: newest first, 100 rows). */
  runs(query: RunQuery): RunsPage {
    const rows = this.#filtered(query);
    const sign = query.dir === 'asc' ? 1 : -1;
    const key = query.sort ?? 'time';
    const value = (run: IndexedRun): number | string => {
      switch (key) {
        case 'agent':
          return run.agent;
        case 'session':
          return run.session;
        case 'stop':
          return run.stop;
        case 'tokens':
          return (run.inputTokens ?? -1) + (run.outputTokens ?? 0);
        case 'cost':
          return run.cost ?? -1;
        case 'duration':
          return run.durationMs;
        default:
          return run.time;
      }
    };
    rows.sort((a, b) => {
      const x = value(a);
      const y = value(b);
      const order = typeof x === 'string' && typeof y === 'string' ? x.localeCompare(y) : (x as number) - (y as number);
      return sign * order || a.time - b.time || a.id.localeCompare(b.id);
    });
    const offset = Math.max(0, query.offset ?? 0);
    const limit = Math.min(MAX_PAGE, Math.max(1, query.limit ?? 100));
    return { total: rows.length, offset, rows: rows.slice(offset, offset + limit).map(rowOf) };
  }

  /**
   * Series per UTC day over the filtered runs. The truncation rate is taken
   * over the runs of every stop reason (the stop reason filter left out: a
   * rate over max-tokens runs alone would always be 1); the days are those
   * runs' days.
   */
  charts(query: RunQuery): Charts {
    const { stop: _stop, ...withoutStop } = query;
    const base = this.#filtered(withoutStop).filter((run) => run.time > 0);
    const rows = query.stop === undefined ? base : base.filter((run) => run.stop === query.stop);
    const days = [...new Set(base.map((run) => dayOf(run.time)))].sort();
    const dayIndex = new Map(days.map((d, i) => [d, i]));
    const stops = [...new Set(rows.map((run) => run.stop))].sort();
    const agents = [...new Set(rows.map((run) => run.agent))].sort();
    const zeros = (): number[] => days.map(() => 0);
    const runsByStop = Object.fromEntries(stops.map((s) => [s, zeros()]));
    const tokensByAgent = Object.fromEntries(agents.map((a) => [a, zeros()]));
    const costByAgent = Object.fromEntries(agents.map((a) => [a, zeros()]));
    const total = zeros();
    const truncated = zeros();
    for (const run of rows) {
      const i = dayIndex.get(dayOf(run.time)) ?? 0;
      const add = (series: number[] | undefined, value: number): void => {
        if (series !== undefined) series[i] = (series[i] ?? 0) + value;
      };
      add(runsByStop[run.stop], 1);
      add(tokensByAgent[run.agent], (run.inputTokens ?? 0) + (run.outputTokens ?? 0));
      add(costByAgent[run.agent], run.cost ?? 0);
    }
    for (const run of base) {
      const i = dayIndex.get(dayOf(run.time)) ?? 0;
      total[i] = (total[i] ?? 0) + 1;
      if (run.stop === MAX_TOKENS) truncated[i] = (truncated[i] ?? 0) + 1;
    }
    return {
      days,
      stops,
      runsByStop,
      truncationRate: total.map((t, i) => (t === 0 ? 0 : (truncated[i] ?? 0) / t)),
      agents,
      tokensByAgent,
      costByAgent,
    };
  }

  /** One run with its trace read again from its file; `undefined` for an unknown id. */
  async detail(id: string): Promise<RunDetail | undefined> {
    const run = this.#runs.find((r) => r.id === id);
    if (run === undefined) return undefined;
    const spans: SpanView[] = [];
    const seen = new Set<string>();
    let runAttrs = new Map<string, Plain>();
    for (const { file, refs } of this.#traces.get(run.traceId) ?? []) {
      const path = this.#files[file];
      if (path === undefined) continue;
      for (const request of await rereadTracesLines(path, refs)) {
        for (const rs of request.resourceSpans ?? []) {
          for (const ss of rs.scopeSpans ?? []) {
            for (const span of ss.spans ?? []) {
              const spanId = span.spanId.toLowerCase();
              if (span.traceId.toLowerCase() !== run.traceId || seen.has(spanId)) continue;
              seen.add(spanId);
              const attrs = attributeMap(span.attributes);
              if (spanId === run.spanId) runAttrs = attrs;
              const start = millisOf(span.startTimeUnixNano) ?? 0;
              const status = (span as { status?: { code?: unknown } }).status?.code;
              spans.push({
                spanId,
                ...(span.parentSpanId !== undefined && span.parentSpanId !== ''
                  ? { parentSpanId: span.parentSpanId.toLowerCase() }
                  : {}),
                name: span.name,
                operation: str(attrs.get('gen_ai.operation.name')) ?? span.name.split(' ')[0] ?? '',
                start,
                end: millisOf(span.endTimeUnixNano) ?? start,
                status: typeof status === 'number' ? status : 0,
                attributes: Object.fromEntries([...attrs].map(([k, v]) => [k, v ?? null])),
              });
            }
          }
        }
      }
    }
    spans.sort((a, b) => a.start - b.start || a.end - b.end);
    const placed = delegatingToolCalls(spans);
    const reported: Record<string, string | number | boolean> = {};
    for (const [key, value] of runAttrs) {
      if (key.startsWith('subagent.reported_output.') && value !== undefined && !Array.isArray(value))
        reported[key] = value;
    }
    const match = runAttrs.get('subagent.reported_output.match');
    return {
      run: rowOf(run),
      spanId: run.spanId,
      output: outputText(runAttrs.get('subagent.output')),
      prompt: messagesText(runAttrs.get('gen_ai.input.messages')),
      reported: { ...(typeof match === 'boolean' ? { agrees: match } : {}), attributes: reported },
      spans: spans.map((span) => {
        const under = placed.get(span.spanId);
        return under !== undefined ? { ...span, shownUnder: under } : span;
      }),
    };
  }
}

function rowOf(run: IndexedRun): RunRow {
  const { traceId: _t, spanId: _s, file: _f, search: _q, ...row } = run;
  return row;
}
