/**
 * The overview's metric plots as vega-lite specs, from metrics.jsonl records: success, reward per seat, loss per
 * seat, zero-variance fraction and the time split. The step axis shows whole steps only.
 */
import { html } from 'htm/preact';
import { useEffect, useRef } from 'preact/hooks';
import embed from 'vega-embed';

type Metrics = readonly Record<string, unknown>[];
type Row = { step: number; series: string; value: number };

/** Long rows (step, series, value) for the keys found in `records`. */
function rows(records: Metrics, keys: readonly (readonly [string, string])[]): Row[] {
  return records.flatMap((m) =>
    keys
      .filter(([k]) => typeof m[k] === 'number' && Number.isFinite(m[k]))
      .map(([k, series]) => ({ step: m.step as number, series, value: m[k] as number })),
  );
}

/** Keys of a family across the records, e.g. `rollout/reward/<seat>` → [[key, seat]]. */
function family(records: Metrics, prefix: string, suffix = ''): [string, string][] {
  const keys = new Set<string>();
  for (const m of records)
    for (const k of Object.keys(m))
      if (k.startsWith(prefix) && k.endsWith(suffix) && k.length > prefix.length + suffix.length) keys.add(k);
  return [...keys].sort().map((k) => [k, k.slice(prefix.length, k.length - suffix.length)]);
}

const STEP_AXIS = {
  field: 'step',
  type: 'quantitative',
  title: 'step',
  axis: { format: 'd', tickMinStep: 1 },
  scale: { nice: false },
} as const;

/** Width follows the plot's box; the axes and legend fit inside it. */
const FRAME = {
  width: 'container',
  height: 180,
  background: 'white',
  autosize: { type: 'fit', contains: 'padding' },
} as const;

function lineSpec(title: string, y: string, values: Row[], domain?: [number, number]): Record<string, unknown> {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    ...FRAME,
    data: { values },
    mark: { type: 'line', point: true, tooltip: true },
    encoding: {
      x: STEP_AXIS,
      y: { field: 'value', type: 'quantitative', title: y, ...(domain ? { scale: { domain } } : {}) },
      color: { field: 'series', type: 'nominal', title: null, legend: { orient: 'bottom' } },
    },
  };
}

/** One chart: a title and its spec (null: the run has no such metrics). */
export interface Chart {
  readonly name: string;
  readonly spec: Record<string, unknown>;
}

/** The charts the run's metrics allow. */
export function metricCharts(metrics: Metrics): Chart[] {
  const train = metrics.filter((m) => m.kind === 'train' && typeof m.step === 'number');
  const evals = metrics.filter((m) => typeof m['eval/success_rate'] === 'number' && typeof m.step === 'number');
  const charts: Chart[] = [];
  const add = (name: string, values: Row[], spec: (v: Row[]) => Record<string, unknown>) => {
    if (values.length > 0) charts.push({ name, spec: spec(values) });
  };
  add(
    'success',
    [
      ...rows(train, [['rollout/success_rate', 'train rollouts (tree)']]),
      ...rows(evals, [['eval/success_rate', 'validation (greedy)']]),
    ],
    (v) => lineSpec('Success rate', 'success rate', v, [0, 1]),
  );
  add('reward', rows(train, family(train, 'rollout/reward/')), (v) =>
    lineSpec('Reward per seat (selected path)', 'reward', v),
  );
  add('loss', rows(train, family(train, 'loss/', '/loss')), (v) => lineSpec('Loss per policy', 'loss', v));
  add('zero-variance', rows(train, [['rollout/zero_variance_fraction', 'zero-variance groups']]), (v) =>
    lineSpec('Zero-variance groups (no signal)', 'share of groups', v, [0, 1]),
  );
  add(
    'time',
    rows(train, [
      ['time/generate', 'generate'],
      ['time/env', 'env + roles'],
      ['time/update', 'update'],
      ['time/overhead', 'loop overhead'],
    ]),
    (values) => ({
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      title: 'Time per step',
      ...FRAME,
      data: { values },
      mark: { type: 'bar', tooltip: true },
      encoding: {
        x: { field: 'step', type: 'ordinal', title: 'step', axis: { labelAngle: 0 } },
        y: { field: 'value', type: 'quantitative', title: 'seconds', stack: 'zero' },
        color: { field: 'series', type: 'nominal', title: null, legend: { orient: 'bottom' } },
      },
    }),
  );
  return charts;
}

/** Above this many data points a plot draws on a canvas. */
const SVG_MAX_POINTS = 1500;

/** A vega-lite plot. */
export function Plot({ spec, name }: { spec: Record<string, unknown>; name: string }) {
  const el = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!el.current) return;
    // SVG (crisp, searchable) for the usual few hundred points; canvas draws a long run's thousands at once
    const values = ((spec.data as { values?: unknown[] } | undefined)?.values ?? []).length;
    const target = el.current;
    let view: Promise<{ finalize(): void }> | undefined;
    // each plot compiles in a task of its own: the page paints first and stays responsive while they draw
    const timer = setTimeout(() => {
      view = embed(target, spec as never, { actions: false, renderer: values > SVG_MAX_POINTS ? 'canvas' : 'svg' });
    }, 0);
    return () => {
      clearTimeout(timer);
      void view?.then((r) => r.finalize());
    };
  }, [spec]);
  // vega measures the container's width with its padding: the padding sits on the outer box
  return html`<div class="plot" data-chart=${name}><div class="plot-body" ref=${el}></div></div>`;
}
