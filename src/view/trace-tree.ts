/**
 * Where the waterfall shows a run span: under the `execute_tool` span that
 * delegated it. Transcripts parent a subagent's `invoke_agent` span to the
 * delegating tool call's span already; the SDK and proxy paths parent a
 * child run to its parent's `invoke_agent` span, with the delegating tool
 * call as a sibling. For such a child, the tool call is told by time: among
 * the `execute_tool` siblings that were running when the child started,
 * the one that started last, where "running" allows {@link TOLERANCE_MS}
 * either side (times are whole milliseconds, and the proxy's spans of the
 * same moment can be a millisecond apart either way) (decision 0117). The
 * trace's recorded parent is never changed: only where the row is shown.
 *
 * @module subagent-otel/view/trace-tree
 */

/** Slack, in ms, on each end of a tool call's time when asking whether it ran when a child started. */
export const TOLERANCE_MS = 1;

/** The fields of a span this needs. */
export interface TreeSpan {
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly operation: string;
  /** Epoch ms. */
  readonly start: number;
  readonly end: number;
}

/**
 * For each child `invoke_agent` span whose recorded parent is an
 * `invoke_agent` span, the `execute_tool` sibling it is shown under.
 * @returns span id -> shown parent span id (only for spans placed by time).
 */
export function delegatingToolCalls(spans: readonly TreeSpan[]): Map<string, string> {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const toolsByParent = new Map<string, TreeSpan[]>();
  for (const span of spans) {
    if (span.operation !== 'execute_tool' || span.parentSpanId === undefined) continue;
    const list = toolsByParent.get(span.parentSpanId) ?? [];
    list.push(span);
    toolsByParent.set(span.parentSpanId, list);
  }
  const placed = new Map<string, string>();
  for (const span of spans) {
    if (span.operation !== 'invoke_agent' || span.parentSpanId === undefined) continue;
    if (byId.get(span.parentSpanId)?.operation !== 'invoke_agent') continue;
    let best: TreeSpan | undefined;
    for (const tool of toolsByParent.get(span.parentSpanId) ?? []) {
      const running = tool.start <= span.start + TOLERANCE_MS && tool.end >= span.start - TOLERANCE_MS;
      if (running && (best === undefined || tool.start >= best.start)) best = tool;
    }
    if (best !== undefined) placed.set(span.spanId, best.spanId);
  }
  return placed;
}
