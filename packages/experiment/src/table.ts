/**
 * The paper's table at our scale: rows = arms, columns = games, cells `mean ± std` held-out success % over seeds,
 * plus the RL samples each arm used and the seeds; a per-run table; and the vega-lite specs of its plots (a grouped
 * bar chart of success per game and arm with ±std error bars, and the measured samples per run). Rendering the
 * plots is the CLI's (the same vega-lite → SVG/PNG path as `troupe train`'s report).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LEGEND, type ReportChart } from '@troupe/kernel';
import { ARMS, type ArmName } from './arms.js';
import { notRunYet, type RunResult } from './results.js';

/** One cell of the table: a (game, arm) pair over its seeds. */
export interface TableCell {
  /** Game. */
  readonly game: string;
  /** Arm. */
  readonly arm: ArmName;
  /** Seeds with a result. */
  readonly n: number;
  /** Seeds that failed (a run that has not run yet, under `--report-only`, is counted in {@link notRun} instead). */
  readonly failed: number;
  /** Seeds not run yet (`--report-only` on an experiment still running or stopped before them). */
  readonly notRun: number;
  /** Mean success rate (0–1) over the seeds with a result; undefined when none. */
  readonly mean?: number;
  /** Sample standard deviation (n − 1) of the success rate; undefined for fewer than 2 seeds. */
  readonly std?: number;
  /** Per-seed success rates, by seed index. */
  readonly values: readonly number[];
  /** Mean generated RL samples per run (0 for arms without RL). */
  readonly samples: number;
  /** Evaluation episodes per seed (the largest seen). */
  readonly episodes: number;
}

/** Settings echoed in the table's caption. */
export interface TableSettings {
  /** Games (columns), in order. */
  readonly games: readonly string[];
  /** Arms (rows), in order. */
  readonly arms: readonly ArmName[];
  /** Seeds planned per cell. */
  readonly seeds: number;
  /** Sample budget per game (generated RL samples per run). */
  readonly budgets?: Readonly<Record<string, number>>;
}

/** The sample mean and (n − 1) standard deviation; std undefined for n < 2, both for n = 0. */
export function meanStd(values: readonly number[]): { mean?: number; std?: number } {
  if (values.length === 0) return {};
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  if (values.length < 2) return { mean };
  const v = values.reduce((a, b) => a + (b - mean) ** 2, 0) / (values.length - 1);
  return { mean, std: Math.sqrt(v) };
}

/** Aggregates run results into cells (one per game × arm, in settings order). */
export function tableCells(runs: readonly RunResult[], settings: TableSettings): TableCell[] {
  const cells: TableCell[] = [];
  for (const arm of settings.arms) {
    for (const game of settings.games) {
      const mine = runs.filter((r) => r.game === game && r.arm === arm).sort((a, b) => a.seed - b.seed);
      const ok = mine.filter((r) => r.status === 'ok' && r.eval);
      const values = ok.map((r) => r.eval!.successRate);
      const samples = ok.length ? ok.reduce((a, r) => a + r.samples.generated, 0) / ok.length : 0;
      const notRun = mine.filter(notRunYet).length;
      cells.push({
        game,
        arm,
        n: ok.length,
        failed: mine.length - ok.length - notRun,
        notRun,
        ...meanStd(values),
        values,
        samples,
        episodes: ok.reduce((a, r) => Math.max(a, r.eval!.episodes), 0),
      });
    }
  }
  return cells;
}

const pct = (x: number): string => (100 * x).toFixed(1);
const int = (x: number): string => Math.round(x).toLocaleString('en-US');

/**
 * `mean ± std` in percent (`–` for the std of one seed), followed by how many seeds failed or have not run yet;
 * `failed (n)` / `not run yet (n)` when no seed has a result.
 */
export function formatCell(
  cell: Pick<TableCell, 'mean' | 'std' | 'n' | 'failed'> & { readonly notRun?: number },
): string {
  const counts = (
    [
      [cell.failed, 'failed'],
      [cell.notRun ?? 0, 'not run yet'],
    ] as const
  ).filter(([n]) => n > 0);
  if (cell.mean === undefined) return counts.map(([n, what]) => `${what} (${n})`).join(', ') || '–';
  const s = `${pct(cell.mean)} ± ${cell.std === undefined ? '–' : pct(cell.std)}`;
  return counts.length ? `${s} (${counts.map(([n, what]) => `${n} ${what}`).join(', ')})` : s;
}

/**
 * What a run started from, for the per-run table: `mas-prompt step-0` (a shared warm start), `mas-atgrpo-per-role
 * step-13` (the checkpoint swap evaluated), or `own warm start`.
 */
export function startsFrom(r: Pick<RunResult, 'source'>): string {
  if (!r.source) return 'own warm start';
  const ck = r.source.checkpoint?.split('/').pop();
  return ck ? `${r.source.arm} ${ck}` : r.source.arm;
}

/** The table's markdown: the main table, a per-run table, notes, and the plot links. */
export function formatTable(runs: readonly RunResult[], settings: TableSettings): string {
  const cells = tableCells(runs, settings);
  const cell = (arm: ArmName, game: string): TableCell => cells.find((c) => c.arm === arm && c.game === game)!;
  const episodes = [...new Set(cells.filter((c) => c.n > 0).map((c) => c.episodes))];
  const lines: string[] = ["# The paper's table at our scale", ''];
  lines.push(
    `Held-out test success % (greedy, K = 1; ${episodes.length === 1 ? `${episodes[0]} episodes` : `${episodes.join(' / ')} episodes`} per seed), ` +
      `mean ± std (n − 1) over ${settings.seeds} seed${settings.seeds === 1 ? '' : 's'}. Every arm starts from the base spec's warm start ` +
      '(SFT on oracle demonstrations of its own seats), run once per set of seats and shared: arms without RL are the warm start alone, ' +
      'and the RL arms start from the step-0 checkpoint of the no-RL arm with the same seats and policies (the same demonstrations ' +
      "and seeds), except the shared policy, which runs its own (it trains on both seats' demonstrations).",
    '',
  );
  lines.push(
    `| arm | ${settings.games.join(' | ')} | RL samples / run | seeds |`,
    `|---|${settings.games.map(() => '---|').join('')}---|---|`,
  );
  for (const arm of settings.arms) {
    const row = settings.games.map((g) => cell(arm, g));
    const info = ARMS[arm];
    const samples = info.rl
      ? row
          .filter((c) => c.n > 0)
          .map((c) => int(c.samples))
          .join(' / ') || '–'
      : info.evalOnly
        ? 'eval only'
        : '0 (warm start only)';
    const seeds = Math.max(0, ...row.map((c) => c.n));
    lines.push(`| ${info.title} (\`${arm}\`) | ${row.map(formatCell).join(' | ')} | ${samples} | ${seeds} |`);
  }
  if (settings.budgets && Object.keys(settings.budgets).length) {
    lines.push(
      '',
      `Sample budget per RL run (generated samples): ${Object.entries(settings.budgets)
        .map(([g, b]) => `${g} ${int(b)}`)
        .join(', ')}; ` +
        'every RL run generates at most the same samples per step (B scaled by the seat count), stops once it has generated the budget ' +
        '(`troupe train --sample-budget`: at most one step past it) and is topped up when its planned steps fall short.',
    );
  }
  const shared = settings.arms.filter(
    (a) => ARMS[a].uses === 'warm-start' && settings.arms.includes(ARMS[a].dependsOn!),
  );
  if (shared.length) {
    lines.push(
      '',
      `Shared warm starts (the RL run loads the source run's checkpoints/step-0): ${shared.map((a) => `\`${a}\` ← \`${ARMS[a].dependsOn}\``).join(', ')}.`,
    );
  }
  const swaps = runs.filter((r) => r.arm === 'swap' && r.status === 'ok' && r.control);
  if (swaps.length) {
    lines.push(
      '',
      'Swap control (the per-role policies loaded the same way, on their own seats; must equal the per-role row): ' +
        swaps.map((r) => `${r.game} seed ${r.seed}: ${r.control!.successes}/${r.control!.episodes}`).join(', ') +
        '.',
    );
  }
  const reused = runs.filter((r) => r.reusedFrom !== undefined);
  if (reused.length) {
    const files = [...new Set(reused.map((r) => r.reusedFrom!))];
    lines.push(
      '',
      `Reused (not run again; the results of an earlier experiment with the same plan, \`--reuse\`): ${reused.length} run${reused.length === 1 ? '' : 's'}, ` +
        `marked * below, from ${files.map((f) => `\`${f}\``).join(', ')}.`,
    );
  }
  lines.push(
    '',
    '## Runs',
    '',
    '| game | arm | seed | level | starts from | success (95% CI) | generated samples | trained samples (with a signal) | steps (planned) | B × K | wall s |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  );
  for (const arm of settings.arms) {
    for (const game of settings.games) {
      for (const r of runs.filter((x) => x.game === game && x.arm === arm).sort((a, b) => a.seed - b.seed)) {
        const e = r.eval;
        const success = notRunYet(r)
          ? 'not run yet'
          : r.status !== 'ok' || !e
            ? `failed: ${(r.error ?? '').split('\n')[0]!.slice(0, 120).replaceAll('|', '\\|')}`
            : `${e.successes}/${e.episodes} = ${pct(e.successRate)}% (${pct(e.ci95[0])}–${pct(e.ci95[1])})`;
        const s = r.samples;
        const rl = ARMS[r.arm].rl && !notRunYet(r);
        lines.push(
          `| ${game} | ${arm} | ${r.seed}${r.reusedFrom !== undefined ? '*' : ''} | ${r.level} | ${startsFrom(r)} | ${success} | ${rl ? int(s.generated) : '–'} | ${rl ? int(s.trained) : '–'} | ${rl ? `${s.steps} (${s.plannedSteps})` : '–'} | ${rl ? `${s.batchSize} × ${s.branches}` : '–'} | ${r.seconds.toFixed(0)} |`,
        );
      }
    }
  }
  lines.push(
    '',
    '![Held-out success per game and arm](plots/success.png)',
    '',
    '![RL samples per run](plots/samples.png)',
    '',
  );
  return lines.join('\n');
}

/** The plots: `success` (grouped bars, mean ± std per game and arm) and `samples` (generated RL samples per run). */
export function tableCharts(runs: readonly RunResult[], settings: TableSettings): ReportChart[] {
  const cells = tableCells(runs, settings).filter((c) => c.mean !== undefined);
  const order = settings.arms.map((a) => a);
  // A band of 22 px per (game, arm), and at least 110 px per game so that its name never runs into the next one.
  const width = Math.max(settings.games.length * 110, settings.games.length * settings.arms.length * 22);
  const color = { field: 'arm', type: 'nominal', sort: order, title: 'arm', legend: LEGEND };
  const values = cells.map((c) => ({
    game: c.game,
    arm: c.arm,
    success: 100 * c.mean!,
    lo: 100 * Math.max(0, c.mean! - (c.std ?? 0)),
    hi: 100 * Math.min(1, c.mean! + (c.std ?? 0)),
    seeds: c.n,
  }));
  const success: ReportChart = {
    name: 'success',
    title: 'Held-out success per game and arm (mean ± std over seeds)',
    spec: {
      $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
      title: 'Held-out success (mean ± std over seeds)',
      background: 'white',
      width,
      height: 260,
      data: { values },
      encoding: {
        x: { field: 'game', type: 'nominal', title: null, sort: settings.games, axis: { labelAngle: 0 } },
        xOffset: { field: 'arm', type: 'nominal', sort: order },
        color,
      },
      layer: [
        {
          mark: 'bar',
          encoding: { y: { field: 'success', type: 'quantitative', title: 'success %', scale: { domain: [0, 100] } } },
        },
        {
          mark: { type: 'errorbar', ticks: true },
          encoding: { y: { field: 'lo', type: 'quantitative', title: 'success %' }, y2: { field: 'hi' } },
        },
      ],
    },
  };
  const sampleRows = runs
    .filter((r) => r.status === 'ok' && ARMS[r.arm].rl)
    .map((r) => ({ game: r.game, arm: r.arm, seed: r.seed, samples: r.samples.generated, budget: r.samples.budget }));
  const samples: ReportChart = {
    name: 'samples',
    title: 'Generated RL samples per run (the budget is the same for every arm)',
    spec: {
      $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
      title: 'Generated RL samples per run',
      background: 'white',
      width,
      height: 220,
      data: { values: sampleRows },
      encoding: {
        x: { field: 'game', type: 'nominal', title: null, sort: settings.games, axis: { labelAngle: 0 } },
        xOffset: { field: 'arm', type: 'nominal', sort: order },
        color,
      },
      layer: [
        {
          mark: { type: 'point', filled: true, size: 60 },
          encoding: {
            y: {
              field: 'samples',
              type: 'quantitative',
              title: 'generated samples (tick: budget)',
              scale: { zero: true },
            },
          },
        },
        {
          mark: { type: 'tick', thickness: 2 },
          encoding: { y: { field: 'budget', type: 'quantitative', title: 'generated samples (tick: budget)' } },
        },
      ],
    },
  };
  return [success, samples];
}

/** What {@link writeExperimentReport} wrote. */
export interface ExperimentReportFiles {
  /** `<out>/table.md`. */
  readonly table: string;
  /** `<out>/results.json`. */
  readonly results: string;
  /** `<out>/plots/<name>.vl.json` (vega-lite specs; the CLI renders them to SVG and PNG beside them). */
  readonly chartSpecs: readonly string[];
  /** The charts, to render. */
  readonly charts: readonly ReportChart[];
}

/**
 * Writes `<out>/table.md`, `<out>/results.json` (settings, cells, every run) and the vega-lite specs of the plots
 * under `<out>/plots/`.
 */
export function writeExperimentReport(
  outDir: string,
  runs: readonly RunResult[],
  settings: TableSettings & Record<string, unknown>,
): ExperimentReportFiles {
  if (!existsSync(outDir)) mkdirSync(outDir, { recursive: true });
  const table = join(outDir, 'table.md');
  const results = join(outDir, 'results.json');
  writeFileSync(table, formatTable(runs, settings));
  const cells = tableCells(runs, settings).map((c) => ({ ...c, title: ARMS[c.arm].title }));
  writeFileSync(results, JSON.stringify({ settings, cells, runs }, null, 2) + '\n');
  const charts = tableCharts(runs, settings);
  const plots = join(outDir, 'plots');
  mkdirSync(plots, { recursive: true });
  const chartSpecs = charts.map((c) => {
    const f = join(plots, `${c.name}.vl.json`);
    writeFileSync(f, JSON.stringify(c.spec, null, 2) + '\n');
    return f;
  });
  return { table, results, chartSpecs, charts };
}
