/**
 * One trace as a waterfall: spans in tree order (each under its parent,
 * siblings by start time), indented by depth, with a bar placed on the
 * trace's time axis. A subagent's `invoke_agent` span sits under the
 * `execute_tool` span that delegated it because that is its parent in the
 * trace, or, where a child run is recorded under its parent run, because
 * the server placed it under the tool call that ran at the same time
 * (`shownUnder`; the row says so in its tooltip). Rows carry `data-span-id`, `data-parent-span-id`, `data-operation`
 * and `data-depth` (the browser tests read them).
 *
 * @module subagent-otel/view/page/waterfall
 */
import type { SpanView } from '../api-types.js';
import { el } from './dom.js';

export interface WaterfallRow {
  readonly span: SpanView;
  readonly depth: number;
}

/** The spans in tree order with their depth; spans whose parent is not in the trace are roots. */
export function treeOrder(spans: readonly SpanView[]): WaterfallRow[] {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string, SpanView[]>();
  const roots: SpanView[] = [];
  for (const span of spans) {
    const parent = span.shownUnder ?? span.parentSpanId;
    if (parent !== undefined && ids.has(parent) && parent !== span.spanId) {
      const list = children.get(parent) ?? [];
      list.push(span);
      children.set(parent, list);
    } else roots.push(span);
  }
  const rows: WaterfallRow[] = [];
  const seen = new Set<string>();
  const walk = (span: SpanView, depth: number): void => {
    if (seen.has(span.spanId)) return;
    seen.add(span.spanId);
    rows.push({ span, depth });
    for (const child of (children.get(span.spanId) ?? []).sort((a, b) => a.start - b.start)) walk(child, depth + 1);
  };
  for (const root of roots.sort((a, b) => a.start - b.start)) walk(root, 0);
  return rows;
}

function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/**
 * The waterfall element. `selected` is highlighted; `onSelect` gets a clicked span.
 */
export function waterfall(
  spans: readonly SpanView[],
  selected: string,
  onSelect: (span: SpanView) => void,
): HTMLElement {
  const rows = treeOrder(spans);
  const t0 = Math.min(...spans.map((s) => s.start));
  const t1 = Math.max(...spans.map((s) => s.end));
  const total = Math.max(1, t1 - t0);
  const list = el('div', { class: 'waterfall' });
  for (const { span, depth } of rows) {
    const bar = el('span', {
      class: `bar op-${span.operation.replace(/[^a-z_]/g, '')}${span.status === 2 ? ' error' : ''}`,
    });
    bar.style.left = `${(100 * (span.start - t0)) / total}%`;
    bar.style.width = `${Math.max(0.3, (100 * (span.end - span.start)) / total)}%`;
    const title =
      span.shownUnder !== undefined
        ? `${span.name} (recorded under its parent run; shown under the tool call that ran at the same time)`
        : span.name;
    const label = el('span', { class: 'label', title }, span.name);
    label.style.paddingLeft = `${depth * 16 + 4}px`;
    const row = el(
      'div',
      {
        class: `wf-row${span.spanId === selected ? ' selected' : ''}`,
        data: {
          spanId: span.spanId,
          parentSpanId: span.shownUnder ?? span.parentSpanId ?? '',
          operation: span.operation,
          depth: String(depth),
        },
        onClick: () => {
          for (const other of list.querySelectorAll('.wf-row.selected')) other.classList.remove('selected');
          row.classList.add('selected');
          onSelect(span);
        },
      },
      label,
      el('span', { class: 'track' }, bar),
      el('span', { class: 'dur' }, duration(span.end - span.start)),
    );
    list.append(row);
  }
  // The run opened can be deep in a long session: once laid out, its row is scrolled to the middle of the list.
  requestAnimationFrame(() => {
    const row = list.querySelector<HTMLElement>('.wf-row.selected');
    if (row !== null) list.scrollTop = Math.max(0, row.offsetTop - list.offsetTop - list.clientHeight / 2);
  });
  return list;
}
