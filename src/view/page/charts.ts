/**
 * The charts view: runs by stop reason per day (stacked bars), the
 * truncation rate per day (line), tokens and cost per agent per day
 * (stacked bars), drawn with Chart.js on canvases (labels are drawn as
 * pixels, never as markup). Only the Chart.js parts these charts use are
 * registered, which keeps the bundle small.
 *
 * @module subagent-otel/view/page/charts
 */
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  type ChartConfiguration,
} from 'chart.js';
import type { Charts } from '../api-types.js';
import { el } from './dom.js';

Chart.register(
  BarController,
  BarElement,
  CategoryScale,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Legend,
  Tooltip,
);

const STOP_COLORS: Record<string, string> = {
  completed: '#4c9a5b',
  'max-tokens': '#d9822b',
  error: '#c23b3b',
  aborted: '#8a8f98',
  refusal: '#8e5bc2',
  unknown: '#b5b9bf',
};
const PALETTE = [
  '#3b74c2',
  '#d9822b',
  '#4c9a5b',
  '#c23b3b',
  '#8e5bc2',
  '#2aa1a8',
  '#b5a42a',
  '#c25b97',
  '#6b7a8f',
  '#8fb35b',
];

let live: Chart[] = [];

function stacked(
  labels: readonly string[],
  series: Readonly<Record<string, readonly number[]>>,
  names: readonly string[],
  colorOf: (name: string, i: number) => string,
): ChartConfiguration<'bar'> {
  return {
    type: 'bar',
    data: {
      labels: [...labels],
      datasets: names.map((name, i) => ({
        label: name,
        data: [...(series[name] ?? [])],
        backgroundColor: colorOf(name, i),
      })),
    },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true } },
    },
  };
}

function card(title: string, config: ChartConfiguration): HTMLElement {
  const canvas = el('canvas');
  const box = el('div', { class: 'chart-box' }, canvas);
  const section = el('section', { class: 'chart', data: { chart: title } }, el('h3', {}, title), box);
  requestAnimationFrame(() => live.push(new Chart(canvas, config)));
  return section;
}

/** The charts for `data`; earlier charts are destroyed. */
export function chartsView(data: Charts): HTMLElement {
  for (const chart of live) chart.destroy();
  live = [];
  if (data.days.length === 0) return el('p', { class: 'empty' }, 'No dated runs match the filters.');
  const agentColor = (_name: string, i: number): string => PALETTE[i % PALETTE.length] ?? '#3b74c2';
  return el(
    'div',
    { class: 'charts' },
    card(
      'Runs by stop reason per day',
      stacked(
        data.days,
        data.runsByStop,
        data.stops,
        (name, i) => STOP_COLORS[name] ?? agentColor(name, i),
      ) as ChartConfiguration,
    ),
    card('Truncation rate per day (max-tokens runs / runs)', {
      type: 'line',
      data: {
        labels: [...data.days],
        datasets: [
          {
            label: 'truncation rate (every stop reason)',
            data: data.truncationRate.map((r) => Math.round(r * 1000) / 10),
            borderColor: '#d9822b',
            backgroundColor: '#d9822b',
            pointRadius: 4,
          },
        ],
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        scales: { y: { beginAtZero: true, max: 100, title: { display: true, text: '%' } } },
      },
    }),
    card(
      'Tokens per agent per day (input + output)',
      stacked(data.days, data.tokensByAgent, data.agents, agentColor) as ChartConfiguration,
    ),
    card(
      'Cost per agent per day (USD)',
      stacked(data.days, data.costByAgent, data.agents, agentColor) as ChartConfiguration,
    ),
  );
}
