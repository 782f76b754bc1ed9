import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ARMS, tableCharts, type ArmName, type RunResult } from '@troupe/experiment';
import { buildReport, type ReportChart } from '@troupe/trainer/report';
import { renderChart } from '../src/commands/train.js';

/** The texts of a rendered SVG, in drawing order, each with its x position. */
async function texts(chart: ReportChart): Promise<{ x: number; text: string }[]> {
  const { svg } = await renderChart(chart);
  return [...svg.matchAll(/<text[^>]*transform="translate\(([-\d.]+),[-\d.]+\)"[^>]*>([^<]*)<\/text>/g)].map((m) => ({
    x: Number(m[1]),
    text: m[2]!,
  }));
}

/** The tick labels of the x axis: the texts drawn before its title `step`. */
const stepLabels = (all: { text: string }[]): string[] =>
  all
    .slice(
      0,
      all.findIndex((t) => t.text === 'step'),
    )
    .map((t) => t.text);

describe('plots of the training report and the experiment table', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-plots-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const report = (steps: number): ReportChart[] => {
    const out = join(dir, `run-${steps}`);
    const rows = Array.from({ length: steps }, (_, i) => ({
      step: i + 1,
      kind: 'train',
      'rollout/success_rate': i / steps,
      'rollout/reward/proposer': 1,
      'rollout/reward/executor': 2,
      'time/generate': 1,
      'time/env': 0.1,
      'time/update': 2,
      'time/overhead': 0.1,
      'time/step': 3.2,
      ...(i % 2 === 0 ? { 'eval/success_rate': 0.5 } : {}),
    }));
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'metrics.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    return [...buildReport(out, 'plots').charts];
  };

  it('steps are whole numbers, one point included, and legend labels are whole', async () => {
    const [success] = report(4);
    const four = await texts(success!);
    assert.ok(stepLabels(four).length >= 2, JSON.stringify(four));
    for (const label of stepLabels(four)) assert.match(label, /^\d+$/, `step label ${label}`);
    assert.ok(
      four.some((t) => t.text === 'train rollouts (tree)') && four.some((t) => t.text === 'validation (greedy, K = 1)'),
      JSON.stringify(four),
    );
    assert.ok(!four.some((t) => t.text.includes('…')), 'no label is cut short');
    const [, reward] = report(1);
    assert.deepEqual(stepLabels(await texts(reward!)), ['1']);
  });

  it('the experiment table gives each game room for its name', async () => {
    const run = (game: string, seed: number, generated: number): RunResult => ({
      game,
      arm: 'mas-atgrpo-per-role',
      seed,
      specSeed: 7,
      status: 'ok',
      level: 'L3',
      algorithm: ARMS['mas-atgrpo-per-role'].algorithm,
      eval: { split: 'test', episodes: 50, successes: 25, successRate: 0.5, ci95: [0.3, 0.7] },
      samples: {
        budget: 1024,
        generated,
        trained: generated,
        steps: 16,
        plannedSteps: 16,
        batchSize: 4,
        branches: 4,
        samplesPerStep: 64,
        topUps: 0,
      },
      seconds: 60,
      dir: 'x',
      digest: 'x',
    });
    const settings = {
      games: ['plan-path', 'sokoban'],
      arms: ['mas-atgrpo-per-role'] as ArmName[],
      seeds: 1,
      budgets: { 'plan-path': 1024, sokoban: 1024 },
    };
    for (const chart of tableCharts([run('plan-path', 0, 1000), run('sokoban', 0, 1010)], settings)) {
      const all = await texts(chart);
      const [a, b] = ['plan-path', 'sokoban'].map((g) => all.find((t) => t.text === g)!.x);
      assert.ok(b! - a! >= 99, `${chart.name}: game labels ${b! - a!} px apart`);
    }
  });
});
