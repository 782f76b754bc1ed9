/**
 * Credit diagnostics per seat and turn: the share of zero-variance groups (no learning signal), mean |advantage|, the
 * mean reward and each reward term's mean, for all steps or one; a heat map shows which seat goes without signal.
 */
import { html } from 'htm/preact';
import { useMemo } from 'preact/hooks';
import type { CreditCell } from '../../src/common/types.js';
import type { DataSource } from '../source.js';
import { Plot } from '../charts.js';
import { fmt, pct, useLoad } from '../format.js';
import { intParam, navigate, type Route } from '../route.js';

function heatmap(cells: readonly CreditCell[]): Record<string, unknown> {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: 'Zero-variance share by seat and turn',
    background: 'white',
    data: { values: cells.map((c) => ({ seat: c.seat, turn: c.turn, share: c.zeroVarianceShare, groups: c.groups })) },
    width: { step: 90 },
    height: { step: 44 },
    layer: [
      {
        mark: { type: 'rect', tooltip: true },
        encoding: {
          color: {
            field: 'share',
            type: 'quantitative',
            scale: { domain: [0, 1], scheme: 'orangered' },
            title: 'zero-var',
          },
        },
      },
      {
        mark: { type: 'text', fontSize: 12 },
        encoding: {
          text: { field: 'share', type: 'quantitative', format: '.0%' },
          color: { condition: { test: 'datum.share > 0.6', value: 'white' }, value: 'black' },
        },
      },
    ],
    encoding: {
      x: { field: 'turn', type: 'ordinal', title: 'turn', axis: { labelAngle: 0 } },
      y: { field: 'seat', type: 'nominal', title: null },
    },
  };
}

export function CreditView({
  source,
  route,
  trace,
  tick,
}: {
  source: DataSource;
  route: Route;
  trace: string;
  tick: number;
}) {
  const step = intParam(route.params, 'step');
  const steps = useLoad(() => source.steps(trace), [trace, tick]);
  const cells = useLoad(() => source.credit(trace, step), [trace, step, tick]);
  const terms = [...new Set((cells.data ?? []).flatMap((c) => Object.keys(c.termMeans)))].sort();
  const spec = useMemo(() => (cells.data && cells.data.length > 0 ? heatmap(cells.data) : null), [cells.data]);
  return html`<div class="credit-view">
    <div class="filters">
      <label
        >step
        <select
          data-filter="step"
          value=${step ?? ''}
          onChange=${(e: Event) => navigate('credit', { trace, step: (e.target as HTMLSelectElement).value })}
        >
          <option value="">all steps</option>
          ${(steps.data ?? []).filter((s) => s.step !== null).map((s) => html`<option value=${s.step}>${s.step}</option>`)}
        </select></label
      >
    </div>
    ${cells.error && html`<p class="error">${cells.error}</p>`}
    ${
      cells.data &&
      html`<table class="grid" data-testid="credit">
        <thead>
          <tr>
            <th>seat</th>
            <th class="num">turn</th>
            <th class="num">groups</th>
            <th class="num">zero-variance</th>
            <th class="num">mean |advantage|</th>
            <th class="num">mean reward</th>
            ${terms.map((t) => html`<th class="num">${t}</th>`)}
          </tr>
        </thead>
        <tbody>
          ${cells.data.map(
            (c) =>
              html`<tr data-seat=${c.seat} data-turn=${c.turn}>
                <td>${c.seat}</td>
                <td class="num">${c.turn}</td>
                <td class="num">${c.groups}</td>
                <td class="num" data-col="zero">
                  <span class="bar" style=${`width:${(100 * c.zeroVarianceShare).toFixed(0)}%`}></span
                  >${pct(c.zeroVarianceShare)}
                </td>
                <td class="num" data-col="adv">${fmt(c.meanAbsAdvantage)}</td>
                <td class="num">${fmt(c.meanReward)}</td>
                ${terms.map((t) => html`<td class="num">${fmt(c.termMeans[t])}</td>`)}
              </tr>`,
          )}
        </tbody>
      </table>`
    }
    ${spec && html`<div class="plots inline"><${Plot} name="credit-heatmap" spec=${spec} /></div>`}
  </div>`;
}
