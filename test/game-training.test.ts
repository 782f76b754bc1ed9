/**
 * Training smoke tests per game: a short `troupe train` (warm start on two oracle demonstrations, AT-GRPO with K = 2,
 * B = 1, one or two steps, a final evaluation of two episodes) of the trainable team presets of Plan-Path (the
 * all-planner team `plan-path-planner-team` and the coder-proposer team `plan-path-coder-team`, the embedded default,
 * whose programs run in the sandbox), Sokoban (`sokoban-team`, `sokoban-coder-team`) and Sudoku (`sudoku-team`,
 * `sudoku-coder-team`), and of the Plan-Path
 * single-agent variant (`environment.config.seats: [executor]`), from the fixture specs test/fixtures/game-*.yaml. The CLI runs
 * in-process (one tfjs backend for all runs); each run's outputs are checked for what AT-GRPO promises: rollout and
 * loss metrics for every policy, groups of exactly K samples sharing one prompt per (instance, turn, seat), a
 * checkpoint per policy, and the final evaluation.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTeamSpec } from '@troupe/kernel';
import { register as registerTrain } from '../packages/cli/src/commands/train.js';
import { register as registerValidate } from '../packages/cli/src/commands/validate.js';
import { commandRunner } from '../packages/cli/test/helpers/run-command.js';
import { ROOT } from '../packages/cli/test/helpers/cli.js';

const train = commandRunner(registerTrain, 'train');
const validate = commandRunner(registerValidate, 'validate');

type Row = Record<string, unknown>;

const readJsonl = (file: string): Row[] =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);

interface Game {
  /** The fixture spec. */
  readonly fixture: string;
  /** The seats the trace must show, in turn order. */
  readonly seats: readonly string[];
  /** Extra checks on the trace. */
  readonly trace?: (records: Row[]) => void;
  /** Extra checks on the warm-start row of metrics.jsonl. */
  readonly warmStart?: (row: Row) => void;
}

const GAMES: readonly Game[] = [
  { fixture: 'game-plan-path.yaml', seats: ['proposer', 'executor'] },
  { fixture: 'game-sokoban.yaml', seats: ['proposer', 'executor'] },
  {
    fixture: 'game-sudoku.yaml',
    seats: ['proposer', 'executor'],
    trace: (records) => {
      for (const r of records) {
        assert.match(
          String(r.completion),
          /^#### \[/,
          'constrained decoding keeps every completion in the filler grammar',
        );
        assert.equal(r.parseError, null, `a grammatical completion parses: ${String(r.completion)}`);
      }
    },
  },
  // the coder-proposer teams: programs run in the sandbox
  ...(['game-plan-path-coder.yaml', 'game-sokoban-coder.yaml', 'game-sudoku-coder.yaml'] as const).map(
    (fixture): Game => ({
      fixture,
      seats: ['proposer', 'executor'],
      trace: (records) => {
        for (const r of records.filter((x) => x.seat === 'proposer')) {
          assert.match(
            String(r.completion),
            /^```(?:python|javascript)\n/,
            'constrained decoding opens a program block',
          );
        }
      },
      warmStart: (row) =>
        assert.equal(row['warmstart/proposer/samples'], 1, 'maxSamples caps the coder at one program'),
    }),
  ),
  {
    fixture: 'game-plan-path-single.yaml',
    seats: ['executor'],
    trace: (records) => {
      for (const r of records) {
        const prompt = JSON.stringify(r.prompt);
        assert.doesNotMatch(prompt, /### proposal/, 'the single agent never sees a proposal');
        assert.equal(
          (r.terms as Record<string, number>).team,
          (r.terms as Record<string, number>).local,
          'team and local terms are both executed_reward',
        );
      }
    },
  },
];

describe('troupe train per game (in-process, tiny models, minute-sized specs)', function () {
  this.timeout(600_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-game-train-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the single-agent example validates (a spec with only the executor seat)', async () => {
    const r = await validate(join(ROOT, 'examples', 'plan-path-single.yaml'));
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /ok/);
  });

  for (const game of GAMES) {
    it(`${game.fixture}: trains, groups K samples per (instance, turn, seat), checkpoints every policy, evaluates`, async () => {
      const file = join(ROOT, 'test', 'fixtures', game.fixture);
      const spec = loadTeamSpec(file);
      const K = spec.algorithm.branches;
      const steps = spec.algorithm.steps;
      const policies = Object.keys(spec.policies).sort();
      const episodes = spec.evaluation.episodes;
      assert.equal(K, 2);
      assert.equal(episodes, 2);
      const out = join(dir, game.fixture.replace(/\.yaml$/, ''));

      const r = await train(file, '--out', out, '--json', '--no-progress');
      assert.equal(r.code, 0, r.stderr);
      const summary = JSON.parse(r.stdout) as {
        steps: number;
        final_eval: { episodes: number; split: string; successRate: number } | null;
        warm_start: { demonstrations: number } | null;
      };
      assert.equal(summary.steps, steps);
      assert.ok(
        summary.warm_start && summary.warm_start.demonstrations > 0,
        'the warm start ran on oracle demonstrations',
      );

      // metrics: rollout/* and loss/* for every policy at every step; the final evaluation
      const metrics = readJsonl(join(out, 'metrics.jsonl'));
      const trainRows = metrics.filter((m) => m.kind === 'train');
      assert.deepEqual(
        trainRows.map((m) => m.step),
        Array.from({ length: steps }, (_, i) => i + 1),
      );
      for (const m of trainRows) {
        assert.equal(typeof m['rollout/success_rate'], 'number');
        assert.ok((m['rollout/groups'] as number) >= game.seats.length, `groups at step ${String(m.step)}`);
        for (const seat of game.seats)
          assert.equal(typeof m[`rollout/reward/${seat}`], 'number', `rollout/reward/${seat}`);
        for (const p of policies) {
          assert.ok((m[`loss/${p}/samples`] as number) > 0, `loss/${p}/samples at step ${String(m.step)}`);
          // groups whose rewards were all equal are skipped (zeroVarianceGroups: skip): a policy with none else has no loss
          const trained = m[`loss/${p}/trained_samples`] as number;
          assert.ok(trained >= 0 && trained <= (m[`loss/${p}/samples`] as number));
          if (trained > 0) assert.ok(Number.isFinite(m[`loss/${p}/loss`]), `loss/${p}/loss at step ${String(m.step)}`);
          else
            assert.equal(
              m[`loss/${p}/optimizer_steps`],
              undefined,
              `loss/${p}: no optimizer step at step ${String(m.step)}`,
            );
        }
      }
      game.warmStart?.(metrics.find((m) => m.kind === 'warm-start')!);
      const final = metrics.find((m) => m.kind === 'final');
      assert.ok(final && typeof final['time/eval'] === 'number', 'a final eval row in metrics.jsonl');
      for (const [k, v] of Object.entries(final))
        if (k.endsWith('/episodes')) assert.equal(v, episodes, `${k} of the final eval`);
      assert.ok(summary.final_eval, 'a final evaluation');
      assert.equal(summary.final_eval.episodes, episodes);
      assert.equal(summary.final_eval.split, 'test');

      // trace: groups of exactly K samples sharing one prompt per (instance, turn, seat); all trained on; one selected
      const trace = readJsonl(join(out, 'trace.jsonl')).filter((t) => (t.step as number) >= 1);
      assert.ok(trace.length > 0);
      const groups = new Map<string, Row[]>();
      for (const t of trace) {
        const key = JSON.stringify([t.instanceUid, t.turn, t.seat]);
        groups.set(key, [...(groups.get(key) ?? []), t]);
      }
      for (const [key, group] of groups) {
        assert.equal(group.length, K, `group ${key} has ${group.length} samples`);
        assert.equal(new Set(group.map((t) => JSON.stringify(t.prompt))).size, 1, `group ${key} shares one prompt`);
        assert.deepEqual(
          group.map((t) => t.branch).sort(),
          Array.from({ length: K }, (_, i) => i),
          `group ${key} branches`,
        );
        assert.equal(group.filter((t) => t.selected === true).length, 1, `group ${key}: one selected branch`);
        for (const t of group) assert.equal(typeof t.advantage, 'number', `group ${key}: every sample is trained on`);
      }
      const seen = [...new Set(trace.map((t) => t.seat as string))];
      assert.deepEqual(seen.sort(), [...game.seats].sort(), 'every seat acted');
      for (const seat of game.seats)
        assert.ok(
          trace.some((t) => t.seat === seat && t.turn === 0),
          `${seat} acted in turn 0`,
        );
      game.trace?.(trace);

      // a checkpoint folder per policy (HF layout)
      const last = join(out, 'checkpoints', `step-${steps}`);
      for (const p of policies) {
        assert.ok(existsSync(join(last, p, 'config.json')), `${p}/config.json`);
        assert.ok(existsSync(join(last, p, 'model.safetensors')), `${p}/model.safetensors`);
      }
      assert.deepEqual(
        readdirSync(last)
          .filter((d) => policies.includes(d))
          .sort(),
        policies,
      );
    });
  }
});
