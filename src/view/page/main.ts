/**
 * The `view` page: the runs table (search, filters, sorting, paging, all
 * answered by the server's JSON API), one run's view (its session's trace as
 * a waterfall, the selected span's attributes, the whole output, the prompt
 * and what the parent received) and the charts. The view is kept in the
 * URL's hash (`#runs?...`, `#run=<id>`, `#charts?...`) so it can be linked
 * and reloaded. Every string from the API is put in as text (`dom.ts`).
 *
 * @module subagent-otel/view/page/main
 */
import type { Charts, RunDetail, RunRow, RunsPage, SortKey, SpanView, Summary } from '../api-types.js';
import { chartsView } from './charts.js';
import { el, fill } from './dom.js';
import { waterfall } from './waterfall.js';

const PAGE_SIZE = 100;

interface Filters {
  q: string;
  agent: string;
  stop: string;
  from: string;
  to: string;
  mismatch: boolean;
  sort: SortKey;
  dir: 'asc' | 'desc';
  offset: number;
}

const filters: Filters = {
  q: '',
  agent: '',
  stop: '',
  from: '',
  to: '',
  mismatch: false,
  sort: 'time',
  dir: 'desc',
  offset: 0,
};
let summary: Summary | undefined;

const app = document.getElementById('app') as HTMLElement;
const header = el('header');
const content = el('div', { class: 'content' });
app.append(header, content);

async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(path, { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return (await response.json()) as T;
}

function params(withPaging: boolean): URLSearchParams {
  const p = new URLSearchParams();
  if (filters.q !== '') p.set('q', filters.q);
  if (filters.agent !== '') p.set('agent', filters.agent);
  if (filters.stop !== '') p.set('stop', filters.stop);
  if (filters.from !== '') p.set('from', String(Date.parse(`${filters.from}T00:00:00Z`)));
  if (filters.to !== '') p.set('to', String(Date.parse(`${filters.to}T00:00:00Z`) + 86_400_000));
  if (filters.mismatch) p.set('mismatch', 'true');
  if (withPaging) {
    p.set('sort', filters.sort);
    p.set('dir', filters.dir);
    p.set('offset', String(filters.offset));
    p.set('limit', String(PAGE_SIZE));
  }
  return p;
}

/** The filters as hash text (`stop=max-tokens&q=...`), for links and reloads. */
function filterHash(): string {
  const p = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) {
    if (
      value === '' ||
      value === false ||
      (key === 'offset' && value === 0) ||
      (key === 'sort' && value === 'time') ||
      (key === 'dir' && value === 'desc')
    )
      continue;
    p.set(key, String(value));
  }
  return p.toString();
}

function readHashFilters(text: string): void {
  const p = new URLSearchParams(text);
  filters.q = p.get('q') ?? '';
  filters.agent = p.get('agent') ?? '';
  filters.stop = p.get('stop') ?? '';
  filters.from = p.get('from') ?? '';
  filters.to = p.get('to') ?? '';
  filters.mismatch = p.get('mismatch') === 'true';
  const sort = p.get('sort');
  filters.sort =
    sort === 'agent' ||
    sort === 'session' ||
    sort === 'stop' ||
    sort === 'tokens' ||
    sort === 'cost' ||
    sort === 'duration'
      ? sort
      : 'time';
  filters.dir = p.get('dir') === 'asc' ? 'asc' : 'desc';
  filters.offset = Math.max(0, Number(p.get('offset') ?? 0) || 0);
}

function go(hash: string): void {
  if (location.hash === `#${hash}`) void route();
  else location.hash = hash;
}

function fmtTime(ms: number): string {
  if (ms <= 0) return '-';
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
}

function fmtInt(n: number | undefined): string {
  return n === undefined ? '-' : n.toLocaleString('en-US');
}

function fmtCost(row: RunRow): string {
  if (row.cost === undefined) return '-';
  return `${row.currency === undefined || row.currency === 'USD' ? '$' : `${row.currency} `}${row.cost.toFixed(4)}`;
}

function renderHeader(active: 'runs' | 'charts' | 'run'): void {
  const tab = (name: 'runs' | 'charts', label: string): HTMLElement =>
    el(
      'button',
      {
        class: `tab${active === name ? ' active' : ''}`,
        data: { tab: name },
        onClick: () => go(`${name}${filterHash() ? `?${filterHash()}` : ''}`),
      },
      label,
    );
  const counts = summary === undefined ? '' : `${summary.runs.toLocaleString('en-US')} runs`;
  fill(
    header,
    el('h1', {}, 'subagent-otel'),
    tab('runs', 'Runs'),
    tab('charts', 'Charts'),
    el('span', { class: 'counts' }, counts),
  );
}

function option(value: string, label: string, selected: boolean): HTMLOptionElement {
  const o = el('option', {}, label);
  o.value = value;
  o.selected = selected;
  return o;
}

function filterBar(onChange: () => void): HTMLElement {
  const search = el('input', { class: 'search' });
  search.type = 'search';
  search.placeholder = 'Search output and prompt';
  search.value = filters.q;
  search.name = 'q';
  let timer: number | undefined;
  search.addEventListener('input', () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => {
      filters.q = search.value;
      filters.offset = 0;
      onChange();
    }, 250);
  });
  const select = (
    name: 'agent' | 'stop',
    all: string,
    values: ReadonlyArray<{ name: string; runs: number }>,
  ): HTMLSelectElement => {
    const s = el(
      'select',
      {},
      option('', all, filters[name] === ''),
      ...values.map((v) => option(v.name, `${v.name} (${v.runs})`, filters[name] === v.name)),
    );
    s.name = name;
    s.addEventListener('change', () => {
      filters[name] = s.value;
      filters.offset = 0;
      onChange();
    });
    return s;
  };
  const date = (name: 'from' | 'to'): HTMLInputElement => {
    const d = el('input');
    d.type = 'date';
    d.name = name;
    d.value = filters[name];
    d.addEventListener('change', () => {
      filters[name] = d.value;
      filters.offset = 0;
      onChange();
    });
    return d;
  };
  const mismatch = el('input');
  mismatch.type = 'checkbox';
  mismatch.name = 'mismatch';
  mismatch.checked = filters.mismatch;
  mismatch.addEventListener('change', () => {
    filters.mismatch = mismatch.checked;
    filters.offset = 0;
    onChange();
  });
  return el(
    'div',
    { class: 'filters' },
    search,
    select('agent', 'all agents', summary?.agents ?? []),
    select('stop', 'all stop reasons', summary?.stops ?? []),
    el('label', {}, 'from ', date('from')),
    el('label', {}, 'to ', date('to')),
    el('label', { title: 'the parent received another output than the rule selects' }, mismatch, ' mismatch only'),
  );
}

const COLUMNS: ReadonlyArray<{ key: SortKey | undefined; label: string }> = [
  { key: 'time', label: 'time (UTC)' },
  { key: 'agent', label: 'agent' },
  { key: 'session', label: 'session' },
  { key: 'stop', label: 'stop reason' },
  { key: 'tokens', label: 'tokens in/out' },
  { key: 'cost', label: 'cost' },
  { key: undefined, label: 'output' },
];

async function renderRuns(): Promise<void> {
  renderHeader('runs');
  const tableBox = el('div', { class: 'table-box' });
  const refresh = (): void => {
    history.replaceState(null, '', `#runs${filterHash() ? `?${filterHash()}` : ''}`);
    void loadTable(tableBox, refresh);
  };
  fill(content, filterBar(refresh), tableBox);
  await loadTable(tableBox, refresh);
}

async function loadTable(box: HTMLElement, refresh: () => void): Promise<void> {
  const page = await getJson<RunsPage>(`/api/runs?${params(true).toString()}`);
  const head = el(
    'tr',
    {},
    ...COLUMNS.map(({ key, label }) =>
      el(
        'th',
        {
          class: key !== undefined ? `sortable${filters.sort === key ? ` sorted ${filters.dir}` : ''}` : '',
          data: key !== undefined ? { sort: key } : {},
          onClick: () => {
            if (key === undefined) return;
            if (filters.sort === key) filters.dir = filters.dir === 'asc' ? 'desc' : 'asc';
            else {
              filters.sort = key;
              filters.dir = key === 'agent' || key === 'session' || key === 'stop' ? 'asc' : 'desc';
            }
            filters.offset = 0;
            refresh();
          },
        },
        label,
        key !== undefined && filters.sort === key ? (filters.dir === 'asc' ? ' ▲' : ' ▼') : '',
      ),
    ),
  );
  const body = el('tbody');
  for (const row of page.rows) {
    body.append(
      el(
        'tr',
        {
          class: 'run',
          data: { runId: row.id, stop: row.stop },
          onClick: () => go(`run=${encodeURIComponent(row.id)}`),
        },
        el('td', { class: 'nowrap' }, fmtTime(row.time)),
        el('td', {}, row.nested ? '↳ ' : '', row.agent),
        el('td', { class: 'mono', title: row.session }, row.session.slice(0, 12)),
        el('td', {}, el('span', { class: `stop stop-${row.stop.replace(/[^a-z-]/g, '')}` }, row.stop)),
        el('td', { class: 'num' }, `${fmtInt(row.inputTokens)}/${fmtInt(row.outputTokens)}`),
        el('td', { class: 'num' }, fmtCost(row)),
        el(
          'td',
          { class: 'preview' },
          row.mismatch ? el('span', { class: 'warn', title: 'the parent received another output' }, '⚠ ') : '',
          row.preview || '(no output)',
        ),
      ),
    );
  }
  const end = Math.min(page.total, page.offset + page.rows.length);
  const pager = el(
    'div',
    { class: 'pager' },
    el(
      'span',
      { class: 'total', data: { total: String(page.total) } },
      page.total === 0 ? 'no runs match' : `${page.offset + 1}–${end} of ${page.total.toLocaleString('en-US')} runs`,
    ),
    page.offset > 0
      ? el(
          'button',
          { onClick: () => ((filters.offset = Math.max(0, page.offset - PAGE_SIZE)), refresh()) },
          '← previous',
        )
      : null,
    end < page.total
      ? el('button', { onClick: () => ((filters.offset = page.offset + PAGE_SIZE), refresh()) }, 'next →')
      : null,
  );
  fill(box, pager, el('table', { class: 'runs' }, el('thead', {}, head), body));
}

function value(v: SpanView['attributes'][string]): string {
  if (v === null) return '';
  return Array.isArray(v) ? JSON.stringify(v) : String(v);
}

function attributesTable(span: SpanView): HTMLElement {
  const keys = Object.keys(span.attributes).sort();
  return el(
    'div',
    { class: 'attributes', data: { spanId: span.spanId } },
    el('h3', {}, span.name),
    el(
      'table',
      {},
      el(
        'tbody',
        {},
        ...keys.map((k) =>
          el('tr', {}, el('th', {}, k), el('td', {}, el('pre', {}, value(span.attributes[k] ?? null)))),
        ),
      ),
    ),
  );
}

async function renderRun(id: string): Promise<void> {
  renderHeader('run');
  fill(content, el('p', {}, 'Loading the run…'));
  let detail: RunDetail;
  try {
    detail = await getJson<RunDetail>(`/api/run?id=${encodeURIComponent(id)}`);
  } catch {
    fill(
      content,
      el('p', { class: 'error' }, 'No such run.'),
      el('button', { onClick: () => history.back() }, '← back'),
    );
    return;
  }
  const { run } = detail;
  const attrBox = el('div', { class: 'attr-box' });
  const own = detail.spans.find((s) => s.spanId === detail.spanId);
  if (own !== undefined) fill(attrBox, attributesTable(own));
  const agrees = detail.reported.agrees;
  const received =
    agrees === undefined
      ? el(
          'p',
          { class: 'received unknown' },
          'The parent’s received output is not recorded for this run (no subagent.reported_output.* attributes).',
        )
      : agrees
        ? el('p', { class: 'received agrees' }, '✓ The parent received the same output as the rule selects.')
        : el('p', { class: 'received differs' }, '⚠ The parent received a different output than the rule selects.');
  const receivedAttrs = Object.entries(detail.reported.attributes);
  fill(
    content,
    el('button', { class: 'back', onClick: () => go(`runs${filterHash() ? `?${filterHash()}` : ''}`) }, '← runs'),
    el(
      'section',
      { class: 'run-head', data: { runId: run.id } },
      el('h2', {}, run.agent, ' ', el('span', { class: `stop stop-${run.stop.replace(/[^a-z-]/g, '')}` }, run.stop)),
      el(
        'dl',
        {},
        el('dt', {}, 'time'),
        el('dd', {}, fmtTime(run.time)),
        el('dt', {}, 'session'),
        el('dd', { class: 'mono' }, run.session),
        el('dt', {}, 'tokens in/out'),
        el('dd', {}, `${fmtInt(run.inputTokens)}/${fmtInt(run.outputTokens)}`),
        el('dt', {}, 'cost'),
        el('dd', {}, fmtCost(run)),
      ),
    ),
    el('h3', {}, 'Session trace'),
    waterfall(detail.spans, detail.spanId, (span) => fill(attrBox, attributesTable(span))),
    el(
      'div',
      { class: 'columns' },
      el(
        'div',
        {},
        el('h3', {}, 'Output'),
        el('pre', { class: 'output' }, detail.output || '(no output)'),
        el('h3', {}, 'What the parent received'),
        received,
        receivedAttrs.length > 0
          ? el('ul', {}, ...receivedAttrs.map(([k, v]) => el('li', {}, `${k} = ${String(v)}`)))
          : null,
        el('h3', {}, 'Prompt'),
        el('pre', { class: 'prompt' }, detail.prompt || '(not recorded)'),
      ),
      attrBox,
    ),
  );
}

async function renderCharts(): Promise<void> {
  renderHeader('charts');
  const box = el('div');
  const refresh = (): void => {
    history.replaceState(null, '', `#charts${filterHash() ? `?${filterHash()}` : ''}`);
    void getJson<Charts>(`/api/charts?${params(false).toString()}`).then((data) => fill(box, chartsView(data)));
  };
  fill(content, filterBar(refresh), box);
  refresh();
}

async function waitUntilReady(): Promise<void> {
  for (;;) {
    summary = await getJson<Summary>('/api/summary');
    if (summary.state === 'ready') return;
    if (summary.state === 'failed') {
      fill(content, el('p', { class: 'error' }, 'Loading failed: ', summary.error ?? 'unknown error'));
      throw new Error(summary.error);
    }
    fill(content, el('p', { class: 'loading' }, summary.progress ?? 'Loading…'));
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function route(): Promise<void> {
  // Not decoded as a whole: the filters' values are decoded by URLSearchParams (a search text may hold '&').
  const hash = location.hash.slice(1);
  if (hash.startsWith('run=')) return renderRun(decodeURIComponent(hash.slice(4)));
  const [view, query] = hash.split('?', 2) as [string, string | undefined];
  readHashFilters(query ?? '');
  if (view === 'charts') return renderCharts();
  return renderRuns();
}

window.addEventListener('hashchange', () => void route());
renderHeader('runs');
void waitUntilReady().then(route);
