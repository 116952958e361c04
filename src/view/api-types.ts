/**
 * The JSON the `view` server answers and the page reads: types only, shared
 * by both sides (the page is built separately for the browser). Every string
 * field that comes from a transcript is untrusted text.
 *
 * @module subagent-otel/view/api-types
 */

/** One row of the runs table. */
export interface RunRow {
  /** `<traceId>-<spanId>` of the run's `invoke_agent` span. */
  readonly id: string;
  /** Start, epoch ms. */
  readonly time: number;
  readonly durationMs: number;
  readonly agent: string;
  readonly session: string;
  readonly stop: string;
  readonly inputTokens?: number;
  readonly outputTokens?: number;
  readonly cost?: number;
  readonly currency?: string;
  /** The output on one line, cut to a preview length. */
  readonly preview: string;
  /** `subagent.reported_output.match` was false: the parent received another output. */
  readonly mismatch: boolean;
  /** The run is nested under another span of its trace (a subagent, a child session). */
  readonly nested: boolean;
}

/** Filters, sorting and paging of `/api/runs` and `/api/charts` (query parameters of the same names). */
export interface RunQuery {
  readonly q?: string;
  readonly agent?: string;
  readonly stop?: string;
  /** Epoch ms, inclusive. */
  readonly from?: number;
  /** Epoch ms, exclusive. */
  readonly to?: number;
  readonly mismatch?: boolean;
  readonly sort?: SortKey;
  readonly dir?: 'asc' | 'desc';
  readonly offset?: number;
  readonly limit?: number;
}

export type SortKey = 'time' | 'agent' | 'session' | 'stop' | 'tokens' | 'cost' | 'duration';
export const SORT_KEYS: readonly SortKey[] = ['time', 'agent', 'session', 'stop', 'tokens', 'cost', 'duration'];

export interface RunsPage {
  readonly total: number;
  readonly offset: number;
  readonly rows: readonly RunRow[];
}

/** `/api/summary`: what was loaded, or how far loading is. */
export interface Summary {
  readonly state: 'loading' | 'ready' | 'failed';
  /** While loading: what is being read, in words (e.g. `replaying transcripts: 3/12 files, 40%`). */
  readonly progress?: string;
  /** When failed: why. */
  readonly error?: string;
  readonly runs: number;
  readonly sources: readonly string[];
  /** Lines skipped as not OTLP, in all files. */
  readonly skippedLines: number;
  readonly agents: ReadonlyArray<{ readonly name: string; readonly runs: number }>;
  readonly stops: ReadonlyArray<{ readonly name: string; readonly runs: number }>;
  readonly first?: number;
  readonly last?: number;
}

/** One span of a run's trace, for the waterfall. */
export interface SpanView {
  readonly spanId: string;
  readonly parentSpanId?: string;
  /**
   * Set when the waterfall shows the span under another span than its
   * recorded parent: a child run under the tool call that delegated it,
   * told by time (`view/trace-tree`).
   */
  readonly shownUnder?: string;
  readonly name: string;
  /** `gen_ai.operation.name`, else the name's first word. */
  readonly operation: string;
  readonly start: number;
  readonly end: number;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  readonly status: number;
  readonly attributes: Readonly<
    Record<string, string | number | boolean | ReadonlyArray<string | number | boolean> | null>
  >;
}

/** `/api/run?id=`: one run and its session's trace. */
export interface RunDetail {
  readonly run: RunRow;
  readonly spanId: string;
  /** The whole output as text (text blocks; other blocks as `[type name]`). */
  readonly output: string;
  readonly prompt: string;
  /** What the parent received, as the span records it: `subagent.reported_output.*`. */
  readonly reported: {
    readonly agrees?: boolean;
    readonly attributes: Readonly<Record<string, string | number | boolean>>;
  };
  /** Every span of the run's trace, parents before children where times allow. */
  readonly spans: readonly SpanView[];
}

/** `/api/charts`: series per UTC day over the filtered runs. */
export interface Charts {
  readonly days: readonly string[];
  readonly stops: readonly string[];
  /** Runs per stop reason per day: `runsByStop[stop][dayIndex]`. */
  readonly runsByStop: Readonly<Record<string, readonly number[]>>;
  /** max-tokens runs / runs, per day (0 for a day without runs). */
  readonly truncationRate: readonly number[];
  readonly agents: readonly string[];
  readonly tokensByAgent: Readonly<Record<string, readonly number[]>>;
  readonly costByAgent: Readonly<Record<string, readonly number[]>>;
}
