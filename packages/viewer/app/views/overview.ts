/** The run overview: traces, metric plots, evaluations with the paired comparison, checkpoints, the spec as run. */
import { html } from 'htm/preact';
import { useMemo } from 'preact/hooks';
import type { Overview } from '../../src/common/types.js';
import { metricCharts, Plot } from '../charts.js';
import { bytes, fmt, pct } from '../format.js';
import { href } from '../route.js';

/** The final evaluation of metrics.jsonl (`kind: final`), with the comparison against the model RL started from. */
function FinalEval({ metrics }: { metrics: Overview['metrics'] }) {
  const final = metrics.filter((m) => m.kind === 'final').at(-1);
  if (!final) return null;
  const prefix = Object.keys(final)
    .find((k) => /^eval_[a-z]+\/success_rate$/.test(k))
    ?.split('/')[0];
  if (!prefix) return null;
  const n = (k: string) => final[k] as number | undefined;
  const hasCompare = typeof n('compare/delta') === 'number';
  return html`<section class="card" data-testid="final-eval">
    <h3>Final evaluation (${prefix.slice(5)} split, step ${String(final.step)})</h3>
    <p class="big">
      ${fmt(n(`${prefix}/success_rate`))}
      <span class="muted"
        >success, 95% CI ${fmt(n(`${prefix}/ci95_low`))}–${fmt(n(`${prefix}/ci95_high`))},
        ${fmt(n(`${prefix}/episodes`), 0)} episodes</span
      >
    </p>
    ${
      hasCompare &&
      html`<p data-testid="paired">
        Against the model RL started from, on the same episodes: ${fmt(n('compare/baseline_success_rate'))} →
        ${fmt(n(`${prefix}/success_rate`))};${' '} <b class="good">+${fmt(n('compare/gained'), 0)} gained</b>,
        <b class="bad">−${fmt(n('compare/lost'), 0)} lost</b>; exact McNemar p = ${fmt(n('compare/p_value'))}
      </p>`
    }
  </section>`;
}

/** baseline-eval.json: the model RL started from. */
function Baseline({ baseline }: { baseline: Overview['baseline'] }) {
  if (!baseline) return null;
  const ci = baseline.ci95 as [number, number] | undefined;
  const rewards = (baseline.meanReward ?? {}) as Record<string, number>;
  return html`<section class="card">
    <h3>Start of RL (baseline-eval.json, ${String(baseline.split)} split)</h3>
    <p class="big">
      ${fmt(baseline.successRate as number)}
      <span class="muted"
        >success${ci ? `, 95% CI ${fmt(ci[0])}–${fmt(ci[1])}` : ''}, ${String(baseline.episodes)} episodes</span
      >
    </p>
    <p class="muted">
      ${Object.entries(rewards)
        .map(([s, r]) => `${s} reward ${fmt(r)}`)
        .join(' · ')}
    </p>
  </section>`;
}

export function OverviewView({ overview }: { overview: Overview }) {
  const charts = useMemo(() => metricCharts(overview.metrics), [overview.metrics]);
  const evalTraces = overview.traces.filter((t) => t.kind === 'eval');
  return html`<div class="overview">
    <div class="cards">
      <section class="card wide">
        <h3>Traces</h3>
        <table class="grid" data-testid="traces">
          <thead>
            <tr>
              <th>file</th>
              <th>kind</th>
              <th class="num">records</th>
              <th class="num">episodes</th>
              <th class="num">size</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            ${overview.traces.map(
              (t) =>
                html`<tr>
                  <td><a href=${href('steps', { trace: t.name })}>${t.name}</a></td>
                  <td>${t.kind}</td>
                  <td class="num">${t.records}</td>
                  <td class="num">${t.episodes}</td>
                  <td class="num">
                    ${bytes(t.size)}${t.indexedBytes < t.size ? html` <span class="muted">(${pct(t.indexedBytes / t.size)} indexed)</span>` : ''}
                  </td>
                  <td><a href=${href('credit', { trace: t.name })}>credit</a></td>
                </tr>`,
            )}
          </tbody>
        </table>
        ${evalTraces.length >= 2 && html`<p><a href=${href('compare', { a: evalTraces[0]!.name, b: evalTraces[1]!.name })}>Compare ${evalTraces[0]!.name} with ${evalTraces[1]!.name} →</a></p>`}
      </section>
      <${FinalEval} metrics=${overview.metrics} />
      <${Baseline} baseline=${overview.baseline} />
      ${
        overview.checkpoints.length > 0 &&
        html`<section class="card">
          <h3>Checkpoints</h3>
          <table class="grid" data-testid="checkpoints">
            <thead>
              <tr>
                <th>folder</th>
                <th class="num">samples generated</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              ${overview.checkpoints.map(
                (c) =>
                  html`<tr>
                    <td><code>checkpoints/step-${c.step}</code></td>
                    <td class="num">${c.samplesGenerated ?? '–'}</td>
                    <td>${c.best ? html`<span class="badge selected">best</span>` : ''}</td>
                  </tr>`,
              )}
            </tbody>
          </table>
        </section>`
      }
    </div>
    ${
      charts.length > 0 &&
      html`<h2>Metrics</h2>
        <div class="plots">${charts.map((c) => html`<${Plot} key=${c.name} name=${c.name} spec=${c.spec} />`)}</div>`
    }
    ${
      overview.spec &&
      html`<h2>Spec as run <span class="muted small">${overview.spec.file}</span></h2>
        <pre class="spec" data-testid="spec">${overview.spec.text}</pre>`
    }
    ${
      overview.report &&
      html`<details>
        <summary>report.md</summary>
        <pre class="spec">${overview.report}</pre>
      </details>`
    }
  </div>`;
}
