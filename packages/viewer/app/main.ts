/**
 * The viewer's web app: a header with the run and the views, the current view below. Served by `troupe view` (live:
 * the overview is polled and the views refresh while the run writes) or opened from an exported file.
 */
import { html } from 'htm/preact';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Overview } from '../src/common/types.js';
import { useLoad } from './format.js';
import { href, navigate, useRoute, type ViewName } from './route.js';
import { pageSource, type DataSource } from './source.js';
import { CompareView } from './views/compare.js';
import { CreditView } from './views/credit.js';
import { OverviewView } from './views/overview.js';
import { StepsView } from './views/steps.js';
import { TreeView } from './views/tree.js';

const TABS: readonly [ViewName, string][] = [
  ['overview', 'Run'],
  ['steps', 'Steps → groups'],
  ['tree', 'Tree'],
  ['compare', 'Compare'],
  ['credit', 'Credit'],
];

/** How often a live page asks whether the run wrote (ms). */
const POLL_MS = 1500;

/** The overview; while served live, re-read whenever the run's files change (`tick` counts the changes). */
function useOverview(source: DataSource): { overview?: Overview; error?: string; tick: number } {
  const [tick, setTick] = useState(0);
  const loaded = useLoad(() => source.overview(), [tick]);
  const [last, setLast] = useState<Overview | undefined>(undefined);
  useEffect(() => {
    if (loaded.data) setLast(loaded.data);
  }, [loaded.data]);
  useEffect(() => {
    if (!source.live) return;
    let seen: string | undefined;
    const timer = setInterval(() => {
      void source.status().then(
        (now) => {
          if (seen !== undefined && now !== seen) setTick((t) => t + 1);
          seen = now;
        },
        () => undefined,
      );
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [source]);
  return { overview: last ?? loaded.data, error: loaded.error, tick };
}

function App({ source }: { source: DataSource }) {
  const route = useRoute();
  const { overview, error, tick } = useOverview(source);
  const ready = overview !== undefined;
  useEffect(() => {
    // after the first paint with the run's data (bench/view.ts reads it)
    if (ready) performance.mark('troupe:first-view');
  }, [ready]);
  if (error && !overview) return html`<main><p class="error">${error}</p></main>`;
  if (!overview) return html`<main><p class="muted">loading…</p></main>`;
  const traceNames = overview.traces.map((t) => t.name);
  const trace = route.params.get('trace') ?? traceNames[0] ?? '';
  const needsTrace = route.view === 'steps' || route.view === 'tree' || route.view === 'credit';
  return html`<header>
      <div class="title">
        <b>troupe view</b> <span class="run" data-testid="run-name">${overview.name}</span>
        <span class="muted small">${overview.folder}</span>
        ${source.live ? html`<span class="badge live" title="the page follows the run's files">live</span>` : html`<span class="badge muted">snapshot</span>`}
      </div>
      <nav>
        ${TABS.map(([v, label]) => html`<a class=${route.view === v ? 'active' : ''} data-tab=${v} href=${href(v, v === 'overview' || v === 'compare' ? {} : { trace })}>${label}</a>`)}
        ${
          needsTrace &&
          traceNames.length > 1 &&
          html`<label class="trace-pick"
            >trace
            <select
              data-pick="trace"
              value=${trace}
              onChange=${(e: Event) => navigate(route.view === 'tree' ? 'steps' : route.view, { trace: (e.target as HTMLSelectElement).value })}
            >
              ${traceNames.map((t) => html`<option value=${t}>${t}</option>`)}
            </select></label
          >`
        }
      </nav>
    </header>
    <main data-view=${route.view}>
      ${route.view === 'overview' && html`<${OverviewView} overview=${overview} />`}
      ${route.view === 'steps' && html`<${StepsView} source=${source} route=${route} trace=${trace} tick=${tick} />`}
      ${route.view === 'tree' && html`<${TreeView} source=${source} route=${route} trace=${trace} mix=${overview.mix} />`}
      ${route.view === 'compare' && html`<${CompareView} source=${source} route=${route} traces=${traceNames.filter((t) => overview.traces.find((x) => x.name === t)?.kind === 'eval').concat(traceNames.filter((t) => overview.traces.find((x) => x.name === t)?.kind !== 'eval'))} />`}
      ${route.view === 'credit' && html`<${CreditView} source=${source} route=${route} trace=${trace} tick=${tick} />`}
    </main>`;
}

render(html`<${App} source=${pageSource()} />`, document.getElementById('app')!);
