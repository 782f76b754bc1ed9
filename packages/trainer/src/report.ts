/**
 * The run report: `report.md` (summary table, final evaluation, time breakdown) and the vega-lite specs of its plots
 * (success and reward per seat over steps, time per step by category). Rendering the specs to SVG/PNG needs vega,
 * vega-lite and resvg, which the CLI carries; the report only builds plain data.
 */
import { LEGEND, readMetrics, STEP_AXIS, type MetricsRecord, type ReportChart } from '@troupe/kernel';

// The run folder's formats live in the light kernel (the experiment runner reads them too); this entry keeps offering
// them with the report, as it always has.
export { generatedSamples, LEGEND, readMetrics, STEP_AXIS, type MetricsRecord, type ReportChart } from '@troupe/kernel';

/** The report of a run folder. */
export interface TrainingReport {
  /** The markdown (image links point at `plots/<name>.png`). */
  readonly markdown: string;
  /** The plots. */
  readonly charts: readonly ReportChart[];
}

const fmt = (x: unknown, d = 3): string => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(d) : '–');

/** Builds the report of a run from its metrics. */
export function buildReport(outDir: string, title: string): TrainingReport {
  const metrics = readMetrics(outDir);
  const train = metrics.filter((m) => m.kind === 'train');
  const warm = metrics.find((m) => m.kind === 'warm-start');
  const final = metrics.filter((m) => m.kind === 'final').at(-1);
  const seats = [
    ...new Set(
      train.flatMap((m) =>
        Object.keys(m)
          .filter((k) => k.startsWith('rollout/reward/'))
          .map((k) => k.slice('rollout/reward/'.length)),
      ),
    ),
  ];

  const long = (keys: [string, string][], rows: readonly MetricsRecord[]): Record<string, unknown>[] =>
    rows.flatMap((m) =>
      keys
        .filter(([k]) => typeof m[k] === 'number')
        .map(([k, label]) => ({ step: m.step, series: label, value: m[k] })),
    );
  const line = (name: string, chartTitle: string, y: string, values: Record<string, unknown>[]): ReportChart => ({
    name,
    title: chartTitle,
    spec: {
      $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
      title: chartTitle,
      width: 480,
      height: 240,
      background: 'white',
      data: { values },
      mark: { type: 'line', point: true },
      encoding: {
        x: { field: 'step', type: 'quantitative', title: 'step', axis: STEP_AXIS },
        y: { field: 'value', type: 'quantitative', title: y },
        color: { field: 'series', type: 'nominal', title: null, legend: LEGEND },
      },
    },
  });
  const evalRows = metrics.filter((m) => typeof m['eval/success_rate'] === 'number');
  const charts: ReportChart[] = [
    line('success', 'Success rate', 'success rate', [
      ...long([['rollout/success_rate', 'train rollouts (tree)']], train),
      ...long([['eval/success_rate', 'validation (greedy, K = 1)']], evalRows),
    ]),
    line(
      'reward',
      'Reward per seat (episode sum of selected branches)',
      'reward',
      long(
        seats.map((s) => [`rollout/reward/${s}`, s]),
        train,
      ),
    ),
    {
      name: 'time',
      title: 'Time per step by category',
      spec: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        title: 'Time per step by category',
        width: 480,
        height: 240,
        background: 'white',
        data: {
          values: long(
            [
              ['time/generate', 'generate'],
              ['time/env', 'env + roles'],
              ['time/update', 'update'],
              ['time/overhead', 'loop overhead'],
            ],
            train,
          ),
        },
        mark: 'bar',
        encoding: {
          x: { field: 'step', type: 'ordinal', axis: { labelAngle: 0, labelOverlap: true } },
          y: { field: 'value', type: 'quantitative', title: 'seconds', stack: 'zero' },
          color: { field: 'series', type: 'nominal', title: null, legend: LEGEND },
        },
      },
    },
  ];

  const sum = (k: string): number => train.reduce((a, m) => a + (typeof m[k] === 'number' ? (m[k] as number) : 0), 0);
  const total = sum('time/step');
  const lines: string[] = [`# Training report: ${title}`, ''];
  lines.push(
    `Steps: ${train.length}${train.length ? ` (last ${train.at(-1)!.step})` : ''}. Wall time of the steps: ${total.toFixed(1)} s.`,
    '',
  );
  if (warm) {
    lines.push(
      '## Warm start',
      '',
      `${fmt(warm['warmstart/demonstrations'], 0)} oracle demonstrations (${fmt(warm['warmstart/samples'], 0)} samples), ${fmt(warm['time/warmstart'], 1)} s.`,
    );
    if (typeof warm['eval/success_rate'] === 'number')
      lines.push(
        `Validation success after the warm start: ${fmt(warm['eval/success_rate'])} (95% CI ${fmt(warm['eval/ci95_low'])}–${fmt(warm['eval/ci95_high'])}).`,
      );
    lines.push('');
  }
  if (final) {
    const split =
      Object.keys(final)
        .find((k) => /^eval_[a-z]+\/success_rate$/.test(k))
        ?.split('/')[0] ?? 'eval_test';
    lines.push(
      '## Final evaluation',
      '',
      `Held-out ${split.slice(5)} split, ${fmt(final[`${split}/episodes`], 0)} episodes, greedy, K = 1: success ${fmt(final[`${split}/success_rate`])} (95% Wilson CI ${fmt(final[`${split}/ci95_low`])}–${fmt(final[`${split}/ci95_high`])}).`,
    );
    for (const s of seats) lines.push(`- reward/${s}: ${fmt(final[`${split}/reward/${s}`])}`);
    if (typeof final['compare/delta'] === 'number') {
      const g = final['compare/gained'] as number,
        l = final['compare/lost'] as number;
      lines.push(
        '',
        `Against the model RL started from (after the warm start; the same ${fmt(final[`${split}/episodes`], 0)} episodes): ${fmt(final['compare/baseline_success_rate'])} → ${fmt(final[`${split}/success_rate`])} (${(final['compare/delta'] as number) >= 0 ? '+' : ''}${fmt(final['compare/delta'])}); ${g} episode${g === 1 ? '' : 's'} solved only after RL, ${l} only before; exact McNemar p = ${fmt(final['compare/p_value'])}${(final['compare/p_value'] as number) < 0.05 ? '' : ' (not significant at 0.05)'}.`,
      );
    }
    lines.push('');
  }
  lines.push(
    '## Steps',
    '',
    `| step | success | ${seats.map((s) => `reward ${s}`).join(' | ')} | zero-var groups | eval success | step s |`,
    `|---|---|${seats.map(() => '---|').join('')}---|---|---|`,
  );
  for (const m of train) {
    lines.push(
      `| ${m.step} | ${fmt(m['rollout/success_rate'])} | ${seats.map((s) => fmt(m[`rollout/reward/${s}`])).join(' | ')} | ${fmt(m['rollout/zero_variance_fraction'], 2)} | ${fmt(m['eval/success_rate'])} | ${fmt(m['time/step'], 1)} |`,
    );
  }
  lines.push('', '## Time breakdown (all steps)', '');
  if (total > 0) {
    for (const [k, label] of [
      ['time/generate', 'generation'],
      ['time/env', 'environment + roles'],
      ['time/update', 'update (log-prob recomputation + PPO)'],
      ['time/trace', 'trace writing (inside the overhead)'],
      ['time/overhead', 'loop overhead (everything else)'],
    ] as const) {
      lines.push(`- ${label}: ${sum(k).toFixed(1)} s (${((100 * sum(k)) / total).toFixed(1)}%)`);
    }
  }
  lines.push('', ...charts.map((c) => `![${c.title}](plots/${c.name}.png)`), '');
  return { markdown: lines.join('\n'), charts };
}
