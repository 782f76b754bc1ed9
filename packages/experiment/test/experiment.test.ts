import assert from 'node:assert/strict';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import {
  ARM_NAMES,
  ARMS,
  childEnv,
  collectResults,
  deriveArm,
  deriveSwapSpec,
  ExperimentError,
  ExperimentInterrupted,
  formatCell,
  formatTable,
  meanStd,
  measureRun,
  newestCheckpoint,
  NOT_RUN_YET,
  parseArmList,
  planExperiment,
  plainSpec,
  runExperiment,
  SEED_STRIDE,
  startsFrom,
  tableCells,
  tableCharts,
  topUpSteps,
  warmStartInputs,
  withSources,
  writeExperimentReport,
  type ArmName,
  type ExperimentEvent,
  type PlainSpec,
  type RunResult,
} from '../src/index.js';
import type { HostTensor, CausalLmPolicy } from '@troupe/lm';
import {
  composeTeam,
  createHostFor,
  checkTeamAgainstPlugins,
  defaultWorkers,
  formatIssue,
  loadTeamSpec,
  parseTeamSpec,
  PRESETS_DIR,
  resolveTrainerConfig,
  type TeamSpec,
  type TrainerConfig,
} from '@troupe/kernel';
import { mappingLevel, policyHandles, Trainer } from '@troupe/trainer';

/**
 * The all-planner Plan-Path team (the paper table's Plan-Path base) with its turn limit pinned to 2, so that the budget arithmetic below (B·K·N·T samples per step)
 * stays the same when the preset's T changes.
 */
const DEFAULT_TEAM: TeamSpec = loadTeamSpec(join(PRESETS_DIR, 'plan-path-planner-team.yaml'));
/** The shipped two-seat game presets (every arm of each must derive, validate and share warm starts exactly). */
const SHIPPED_GAME_PRESETS = [
  'default-team',
  'plan-path-planner-team',
  'plan-path-coder-team',
  'sokoban-team',
  'sokoban-coder-team',
  'sudoku-team',
  'sudoku-coder-team',
];
const BASE: TeamSpec = {
  ...DEFAULT_TEAM,
  environment: { ...DEFAULT_TEAM.environment, config: { ...DEFAULT_TEAM.environment.config, maxTurns: 2 } },
};

/** Writes a derived spec to a file and loads it back through the team-spec loader. */
function roundTrip(spec: PlainSpec, dir: string, name = 'spec.yaml'): TeamSpec {
  const file = join(dir, name);
  writeFileSync(file, stringify(spec));
  return loadTeamSpec(file);
}

/** The trainer settings of a derived arm's spec (throws what `troupe train` would). */
const resolveArm = (spec: PlainSpec): TrainerConfig =>
  resolveTrainerConfig({ ...spec, file: 'x.yaml' } as unknown as TeamSpec);

describe('experiment: arms derived from a base team', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'troupe-arms-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('every arm of every shipped game preset validates: schema, trainer settings and plugins (seats, configs)', async () => {
    for (const preset of SHIPPED_GAME_PRESETS) {
      const file = join(PRESETS_DIR, `${preset}.yaml`);
      if (!existsSync(file)) continue; // a game preset that is not shipped yet
      const base = loadTeamSpec(file);
      for (const arm of ARM_NAMES) {
        const d = deriveArm(base, arm, { seed: 0 });
        const sub = join(dir, preset, arm);
        mkdirSync(sub, { recursive: true });
        const spec = roundTrip(d.spec, sub);
        resolveTrainerConfig(spec);
        const issues = await checkTeamAgainstPlugins(spec, createHostFor(spec.file));
        assert.deepEqual(issues.map(formatIssue), [], `${preset} ${arm}`);
      }
    }
  });

  it('maps seats to policies at the right level (L0 single, L1 shared, L3 per-role), as the trainer sees it', async () => {
    const expected: Record<ArmName, string> = {
      single: 'L0',
      'single-grpo': 'L0',
      'mas-prompt': 'L3',
      'mas-naive-grpo': 'L3',
      'mas-atgrpo-shared': 'L1',
      'mas-atgrpo-per-role': 'L3',
      swap: 'L3',
    };
    for (const arm of ARM_NAMES) assert.equal(deriveArm(BASE, arm, { seed: 0 }).level, expected[arm], arm);
    // The trainer's own mapping level of the composed teams (tiny random models; nothing is trained).
    for (const arm of ['single-grpo', 'mas-atgrpo-shared', 'mas-atgrpo-per-role'] as const) {
      const sub = join(dir, 'level', arm);
      mkdirSync(sub, { recursive: true });
      // Their own warm start: the shared one loads a checkpoint that does not exist here (see the warm-start test below).
      const spec = roundTrip(deriveArm(BASE, arm, { seed: 0, ownWarmStart: true }).spec, sub);
      const team = await composeTeam(spec);
      try {
        const handles = policyHandles(
          spec,
          team.policies,
          team.seats.map((s) => s.name),
          resolveTrainerConfig(spec),
        );
        assert.equal(mappingLevel(handles, team.seats.length), expected[arm], arm);
      } finally {
        await team.dispose();
      }
    }
  });

  it('single arms keep only the executor seat, its policy and reward mix, and tell the environment', () => {
    const d = deriveArm(BASE, 'single', { seed: 0 });
    assert.deepEqual(Object.keys(d.spec.seats), ['executor']);
    assert.deepEqual(Object.keys(d.spec.policies), ['executor']);
    assert.deepEqual(Object.keys(d.spec.rewards.seats), ['executor']);
    assert.deepEqual(d.spec.environment.config.seats, ['executor']);
    assert.equal(d.spec.algorithm.name, 'none');
    assert.equal(d.spec.algorithm.steps, 0);
    assert.equal(deriveArm(BASE, 'single-grpo', { seed: 0 }).spec.algorithm.name, 'at-grpo');
    assert.equal(deriveArm(BASE, 'mas-naive-grpo', { seed: 0 }).spec.algorithm.name, 'grpo-naive');
    const shared = deriveArm(BASE, 'mas-atgrpo-shared', { seed: 0 }).spec;
    assert.deepEqual(Object.keys(shared.policies), ['shared']);
    assert.deepEqual(shared.policies.shared, BASE.policies.executor);
    assert.deepEqual(
      Object.values(shared.seats).map((s) => s.policy),
      ['shared', 'shared'],
    );
  });

  it("per-seat branches follow the seats: single arms keep their seat's, grpo-naive (no tree) drops them, the tree arms keep them", () => {
    const base: TeamSpec = { ...BASE, algorithm: { ...BASE.algorithm, seatBranches: { proposer: 1, executor: 3 } } };
    assert.deepEqual(deriveArm(base, 'single-grpo', { seed: 0 }).spec.algorithm.seatBranches, { executor: 3 });
    assert.equal(deriveArm(base, 'mas-naive-grpo', { seed: 0 }).spec.algorithm.seatBranches, undefined);
    for (const arm of ['mas-atgrpo-per-role', 'mas-atgrpo-shared'] as const) {
      assert.deepEqual(
        deriveArm(base, arm, { seed: 0 }).spec.algorithm.seatBranches,
        { proposer: 1, executor: 3 },
        arm,
      );
    }
    for (const arm of ARM_NAMES) resolveArm(deriveArm(base, arm, { seed: 0 }).spec);
  });

  it("the greedy branch and greedy selection follow the seats: single arms keep their seat's entry, grpo-naive drops both keys", () => {
    const base: TeamSpec = {
      ...BASE,
      algorithm: { ...BASE.algorithm, greedyBranch: { proposer: true, executor: true } },
    };
    assert.deepEqual(deriveArm(base, 'single-grpo', { seed: 0 }).spec.algorithm.greedyBranch, { executor: true });
    assert.equal(deriveArm(base, 'mas-naive-grpo', { seed: 0 }).spec.algorithm.greedyBranch, undefined);
    assert.deepEqual(deriveArm(base, 'mas-atgrpo-shared', { seed: 0 }).spec.algorithm.greedyBranch, {
      proposer: true,
      executor: true,
    });
    const all: TeamSpec = { ...BASE, algorithm: { ...BASE.algorithm, greedyBranch: true, selection: 'greedy' } };
    assert.equal(deriveArm(all, 'single-grpo', { seed: 0 }).spec.algorithm.greedyBranch, true);
    assert.equal(deriveArm(all, 'single-grpo', { seed: 0 }).spec.algorithm.selection, 'greedy');
    assert.equal(
      deriveArm(all, 'mas-naive-grpo', { seed: 0 }).spec.algorithm.selection,
      undefined,
      'no tree, no selection',
    );
    // greedy selection on the proposer alone: the executor-only arm has no greedy seat left and selects the best branch
    const proposerOnly: TeamSpec = {
      ...BASE,
      algorithm: { ...BASE.algorithm, greedyBranch: { proposer: true }, selection: 'greedy' },
    };
    assert.deepEqual(deriveArm(proposerOnly, 'single-grpo', { seed: 0 }).spec.algorithm.greedyBranch, {});
    assert.equal(deriveArm(proposerOnly, 'single-grpo', { seed: 0 }).spec.algorithm.selection, undefined);
    for (const arm of ARM_NAMES) {
      for (const b of [base, all, proposerOnly]) resolveArm(deriveArm(b, arm, { seed: 0 }).spec);
    }
  });

  it("frozen policies follow the policies: the single arms keep their seat's, the shared arm freezes `shared` when its source was frozen", () => {
    const frozen = (freeze: string[], arm: (typeof ARM_NAMES)[number]) =>
      deriveArm({ ...BASE, algorithm: { ...BASE.algorithm, freeze } }, arm, { seed: 0 }).spec.algorithm.freeze;
    assert.deepEqual(frozen(['proposer'], 'single-grpo'), [], "the proposer's policy is gone with its seat");
    assert.deepEqual(frozen(['proposer', 'executor'], 'single-grpo'), ['executor']);
    assert.deepEqual(frozen(['executor'], 'mas-atgrpo-shared'), ['shared'], "the shared policy is the executor's");
    assert.deepEqual(frozen(['proposer'], 'mas-atgrpo-shared'), []);
    assert.deepEqual(frozen(['proposer'], 'mas-naive-grpo'), ['proposer']);
    for (const arm of ARM_NAMES)
      resolveArm(
        deriveArm({ ...BASE, algorithm: { ...BASE.algorithm, freeze: ['proposer', 'executor'] } }, arm, { seed: 0 })
          .spec,
      );
  });

  it("per-seat warm-start noise and caps follow the seats: single arms keep their seat's entries; a number stays a number", () => {
    const warmStart = {
      demonstrations: 8,
      noise: { proposer: 0.05, executor: 0.3 },
      maxSamples: { proposer: 4, executor: 8 },
    };
    const base: TeamSpec = { ...BASE, algorithm: { ...BASE.algorithm, warmStart } };
    const warm = deriveArm(base, 'single', { seed: 0 }).spec.algorithm.warmStart as typeof warmStart;
    assert.deepEqual(warm.noise, { executor: 0.3 });
    assert.deepEqual(warm.maxSamples, { executor: 8 });
    // single-grpo runs no warm start of its own: it loads single's step-0 checkpoint.
    assert.equal(deriveArm(base, 'single-grpo', { seed: 0 }).spec.algorithm.warmStart, undefined);
    assert.deepEqual(
      (deriveArm(base, 'mas-prompt', { seed: 0 }).spec.algorithm.warmStart as typeof warmStart).noise,
      warmStart.noise,
    );
    const scalar: TeamSpec = { ...BASE, algorithm: { ...BASE.algorithm, warmStart: { ...warmStart, noise: 0.1 } } };
    assert.equal((deriveArm(scalar, 'single', { seed: 0 }).spec.algorithm.warmStart as { noise: number }).noise, 0.1);
    for (const arm of ARM_NAMES) resolveArm(deriveArm(base, arm, { seed: 0 }).spec);
  });

  it('the arms without a source run the base warm start; the per-role arm with its own warm start is the base', () => {
    for (const arm of ['single', 'mas-prompt', 'mas-atgrpo-shared'] as const) {
      const d = deriveArm(BASE, arm, { seed: 0 });
      assert.deepEqual(d.spec.algorithm.warmStart, BASE.algorithm.warmStart, arm);
      assert.equal(d.source, undefined, arm);
    }
    const periodic = { ...BASE, algorithm: { ...BASE.algorithm, evalEvery: 5, keepBest: true } } as TeamSpec;
    for (const arm of ARM_NAMES) {
      const algorithm = deriveArm(periodic, arm, { seed: 0 }).spec.algorithm;
      assert.equal(algorithm.evalEvery, 0, arm);
      assert.equal(
        algorithm['keepBest'],
        undefined,
        `${arm}: keepBest needs the validation evals the table does not run`,
      );
    }
    const perRole = deriveArm(BASE, 'mas-atgrpo-per-role', { seed: 0, ownWarmStart: true }).spec;
    const { name: _n, file: _f, ...base } = BASE as TeamSpec & Record<string, unknown>;
    const { name: _m, ...derived } = perRole;
    const expected = JSON.parse(JSON.stringify(base)) as TeamSpec;
    assert.deepEqual(
      { ...derived, algorithm: { ...derived.algorithm, evalEvery: BASE.algorithm.evalEvery } },
      { ...expected, algorithm: { ...expected.algorithm, loss: { logprobTemperature: 'sampling' } } },
    );
  });

  it("RL arms state the distribution their loss scores (so results of the old default are another plan); a base's own choice stays", () => {
    for (const arm of ARM_NAMES) {
      const loss = deriveArm(BASE, arm, { seed: 0 }).spec.algorithm['loss'] as Record<string, unknown> | undefined;
      assert.equal(loss?.['logprobTemperature'], ARMS[arm].rl || arm === 'swap' ? 'sampling' : undefined, arm);
    }
    const old = JSON.parse(JSON.stringify(BASE)) as TeamSpec;
    (old.algorithm as Record<string, unknown>)['loss'] = { clipHigh: 0.28, logprobTemperature: 'model' };
    assert.deepEqual(deriveArm(old, 'mas-atgrpo-per-role', { seed: 0 }).spec.algorithm['loss'], {
      clipHigh: 0.28,
      logprobTemperature: 'model',
    });
  });

  it("arms with a shared warm start load their source's step-0 checkpoint and have no warmStart; everything else is their own spec", () => {
    const sources: Record<string, ArmName> = {
      'single-grpo': 'single',
      'mas-naive-grpo': 'mas-prompt',
      'mas-atgrpo-per-role': 'mas-prompt',
    };
    for (const [arm, source] of Object.entries(sources) as [ArmName, ArmName][]) {
      assert.equal(ARMS[arm].dependsOn, source, arm);
      assert.equal(ARMS[arm].uses, 'warm-start', arm);
      const d = deriveArm(BASE, arm, { seed: 1 });
      const own = deriveArm(BASE, arm, { seed: 1, ownWarmStart: true });
      const ck = `../../${source}/seed-1/checkpoints/step-0`;
      assert.deepEqual(d.source, { arm: source, checkpoint: ck }, arm);
      assert.equal(d.spec.algorithm.warmStart, undefined, arm);
      assert.ok(own.spec.algorithm.warmStart, arm);
      const expected = Object.fromEntries(
        Object.keys(own.spec.policies).map((p) => [
          p,
          { kind: 'tfjs-causal-lm', tokenizer: 'tiny', model: `${ck}/${p}` },
        ]),
      );
      assert.deepEqual(d.spec.policies, expected, arm);
      const {
        policies: _p,
        algorithm: { warmStart: _w, ...algorithm },
        ...rest
      } = own.spec;
      assert.deepEqual(
        { ...d.spec, policies: undefined },
        { ...rest, algorithm, policies: undefined },
        `${arm}: only the policies and the warm start change`,
      );
      assert.deepEqual(d.budget, own.budget, arm);
      assert.equal(d.level, own.level, arm);
    }
    assert.equal(
      ARMS['mas-atgrpo-shared'].dependsOn,
      undefined,
      'the shared policy trains on both seats: its own warm start',
    );
    assert.deepEqual(
      deriveArm(BASE, 'mas-atgrpo-per-role', { seed: 0, sourceCheckpoint: '/abs/ck/' }).spec.policies.executor,
      { kind: 'tfjs-causal-lm', tokenizer: 'tiny', model: '/abs/ck/executor' },
    );
    // The swap arm plans the per-role spec as that arm runs it.
    assert.deepEqual(
      deriveArm(BASE, 'swap', { seed: 1 }).spec,
      deriveArm(BASE, 'mas-atgrpo-per-role', { seed: 1 }).spec,
    );
  });

  it('a shared warm start is exactly the one the arm would run: same demonstrations seed, policy seeds and settings (every shipped preset)', () => {
    for (const preset of SHIPPED_GAME_PRESETS) {
      const file = join(PRESETS_DIR, `${preset}.yaml`);
      if (!existsSync(file)) continue;
      const base = loadTeamSpec(file);
      for (const seed of [0, 2]) {
        for (const arm of ARM_NAMES.filter((a) => ARMS[a].uses === 'warm-start')) {
          const own = warmStartInputs(deriveArm(base, arm, { seed, ownWarmStart: true }).spec);
          const source = warmStartInputs(deriveArm(base, ARMS[arm].dependsOn!, { seed }).spec);
          assert.deepEqual(own, source, `${preset} ${arm} seed ${seed}`);
          assert.equal((own as { seed: number }).seed, base.seed + seed * SEED_STRIDE);
        }
        // ... and the shared arm's is not the team's (one policy on both seats' demonstrations).
        assert.notDeepEqual(
          warmStartInputs(deriveArm(base, 'mas-atgrpo-shared', { seed }).spec),
          warmStartInputs(deriveArm(base, 'mas-prompt', { seed }).spec),
        );
      }
    }
    // What the inputs cover: a different warm start, spec seed, policy seed or role config is a different warm start.
    const ref = warmStartInputs(deriveArm(BASE, 'mas-prompt', { seed: 0 }).spec);
    const variant = (change: (s: PlainSpec) => void): Record<string, unknown> => {
      const s = deriveArm(BASE, 'mas-prompt', { seed: 0 }).spec;
      change(s);
      return warmStartInputs(s);
    };
    assert.notDeepEqual(
      variant((s) => (s.seed += 1)),
      ref,
    );
    assert.notDeepEqual(
      variant((s) => ((s.policies.executor as unknown as { seed: number }).seed += 1)),
      ref,
    );
    assert.notDeepEqual(
      variant((s) => ((s.algorithm.warmStart as { epochs: number }).epochs += 1)),
      ref,
    );
    assert.notDeepEqual(
      variant((s) => (s.seats.executor!.roleConfig.maxMoves = 3)),
      ref,
    );
    assert.deepEqual(
      variant((s) => ((s.algorithm.steps = 99), (s.name = 'x'), (s.evaluation.episodes = 3))),
      ref,
      'RL settings, name and evaluation do not matter',
    );
  });

  it("the shared warm start, loaded from the step-0 checkpoint, equals the per-role arm's own warm start bit for bit", async () => {
    // A seconds-sized warm start of the default team's two tiny models, in the main thread (workers: 1) on both
    // sides: the shared and the own warm start take the same code path either way.
    const base = plainSpec(BASE);
    base.algorithm.warmStart = { demonstrations: 4, epochs: 1, lr: 2e-3, miniBatchSize: 4, workers: 1 };
    const runs = join(dir, 'bitwise', 'runs', 'plan-path');
    const specIn = (arm: string, spec: PlainSpec): TeamSpec => {
      const sub = join(runs, arm, 'seed-0');
      mkdirSync(sub, { recursive: true });
      return roundTrip(spec, sub);
    };
    const weights = (policies: ReadonlyMap<string, unknown>): Map<string, Map<string, HostTensor>> =>
      new Map([...policies].map(([name, p]) => [name, (p as CausalLmPolicy).model.exportTensors()]));

    // mas-prompt: warm start + step-0 checkpoint (what `troupe train` does for it, without the final evaluation).
    const prompt = specIn('mas-prompt', deriveArm(base, 'mas-prompt', { seed: 0 }).spec);
    const promptTrainer = await Trainer.create(prompt, { outDir: dirname(prompt.file), skipFinalEval: true });
    try {
      const r = await promptTrainer.run();
      assert.equal(r.steps, 0);
      assert.ok(r.warmStart && r.warmStart.demonstrations > 0);
    } finally {
      await promptTrainer.dispose();
    }
    // The per-role arm as it runs: its policies loaded from that checkpoint.
    const shared = specIn('mas-atgrpo-per-role', deriveArm(base, 'mas-atgrpo-per-role', { seed: 0 }).spec);
    const sharedTeam = await composeTeam(shared);
    // The per-role arm with its own warm start, in memory.
    const own = specIn('own', deriveArm(base, 'mas-atgrpo-per-role', { seed: 0, ownWarmStart: true }).spec);
    mkdirSync(join(dir, 'bitwise', 'own-out'), { recursive: true });
    const ownTrainer = await Trainer.create(own, { outDir: join(dir, 'bitwise', 'own-out') });
    try {
      const init = weights(ownTrainer.team.policies);
      await ownTrainer.runWarmStart();
      const trained = weights(ownTrainer.team.policies);
      const loaded = weights(sharedTeam.policies);
      assert.deepEqual([...loaded.keys()].sort(), ['executor', 'proposer']);
      for (const [policy, tensors] of trained) {
        let moved = 0;
        for (const [name, t] of tensors) {
          const l = loaded.get(policy)!.get(name)!;
          assert.deepEqual(l.shape, t.shape, `${policy} ${name}`);
          assert.ok(
            Buffer.from(l.data.buffer, l.data.byteOffset, l.data.byteLength).equals(
              Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength),
            ),
            `${policy} ${name}: the loaded warm start differs from the own one`,
          );
          if (!Buffer.from(init.get(policy)!.get(name)!.data.buffer).equals(Buffer.from(t.data.buffer))) moved++;
        }
        assert.ok(moved > 0, `${policy}: the warm start changed no weight (the comparison would prove nothing)`);
      }
    } finally {
      await ownTrainer.dispose();
      await sharedTeam.dispose();
    }
  });

  it('gives every RL arm the same sample budget: same samples per step (B scaled by seats), same steps', () => {
    // default team: B 4, K 4, N 2, T 2 → 64 samples per step; 16 steps → a budget of 1024.
    const perRole = deriveArm(BASE, 'mas-atgrpo-per-role', { seed: 0 }).budget;
    assert.equal(perRole.samplesPerStep, 64);
    assert.equal(perRole.budget, 1024);
    assert.equal(perRole.steps, 16);
    for (const budget of [1024, 1000, 300]) {
      const plans = ARM_NAMES.filter((a) => ARMS[a].rl).map((a) => ({
        arm: a,
        ...deriveArm(BASE, a, { seed: 0, budget }).budget,
      }));
      for (const p of plans) {
        assert.equal(p.samplesPerStep, 64, p.arm);
        assert.equal(p.budget, budget, p.arm);
        assert.ok(
          Math.abs(p.steps * p.samplesPerStep - budget) <= 0.1 * budget,
          `${p.arm}: ${p.steps} × ${p.samplesPerStep} vs ${budget}`,
        );
        assert.equal(p.steps, plans[0]!.steps, p.arm);
      }
      assert.equal(plans.find((p) => p.arm === 'single-grpo')!.batchSize, 8, 'one seat plays twice the instances');
      assert.equal(plans.find((p) => p.arm === 'mas-naive-grpo')!.batchSize, 4);
    }
    for (const arm of ['single', 'mas-prompt', 'swap'] as const) {
      const b = deriveArm(BASE, arm, { seed: 0, budget: 512 }).budget;
      assert.equal(b.steps, 0, arm);
      assert.equal(b.budget, 0, arm);
    }
  });

  it('seeds shift the spec seed and every policy seed; seed 0 is the base', () => {
    const s0 = deriveArm(BASE, 'mas-prompt', { seed: 0 }).spec;
    const s2 = deriveArm(BASE, 'mas-prompt', { seed: 2 }).spec;
    assert.equal(s0.seed, BASE.seed);
    assert.equal(s2.seed, BASE.seed + 2 * SEED_STRIDE);
    for (const p of ['proposer', 'executor']) {
      assert.equal(s0.policies[p]!.seed, BASE.policies[p]!.seed);
      assert.equal(s2.policies[p]!.seed, (BASE.policies[p]!.seed as number) + 2 * SEED_STRIDE);
    }
    // The RL arms of seed 2 start from the warm start of seed 2.
    assert.equal(deriveArm(BASE, 'mas-atgrpo-per-role', { seed: 2 }).spec.seed, s2.seed);
    assert.equal(
      deriveArm(BASE, 'mas-atgrpo-per-role', { seed: 2 }).spec.policies.proposer!.model,
      '../../mas-prompt/seed-2/checkpoints/step-0/proposer',
    );
  });

  it('episodes override the evaluation; relative policy paths of the base become absolute', () => {
    assert.equal(deriveArm(BASE, 'mas-prompt', { seed: 0, episodes: 7 }).spec.evaluation.episodes, 7);
    const file = join(dir, 'rel.yaml');
    writeFileSync(
      file,
      'extends: plan-path-planner-team\npolicies:\n  proposer: { kind: tfjs-causal-lm, model: ./ckpt/p, preset: null }\n',
    );
    const spec = parseTeamSpec(readFileSync(file, 'utf8'), file);
    assert.equal(plainSpec(spec).policies.proposer!.model, join(dir, 'ckpt', 'p'));
    assert.equal(plainSpec(spec).policies.executor!.tokenizer, 'tiny');
  });

  it('swap exchanges the per-role policies between seats, loaded from the checkpoint; the control does not', () => {
    const perRole = deriveArm(BASE, 'mas-atgrpo-per-role', { seed: 1 }).spec;
    assert.deepEqual(deriveArm(BASE, 'swap', { seed: 1 }).spec, perRole, 'the swap arm plans the per-role spec');
    assert.equal(
      deriveArm(BASE, 'swap', { seed: 1 }).source,
      undefined,
      'the runner finds its checkpoint when the per-role run is done',
    );
    const swap = deriveSwapSpec(perRole, '../per-role/checkpoints/step-16');
    assert.equal(swap.seats.proposer!.policy, 'executor');
    assert.equal(swap.seats.executor!.policy, 'proposer');
    assert.deepEqual(swap.policies, {
      proposer: { kind: 'tfjs-causal-lm', model: '../per-role/checkpoints/step-16/proposer' },
      executor: { kind: 'tfjs-causal-lm', model: '../per-role/checkpoints/step-16/executor' },
    });
    assert.equal(swap.algorithm.name, 'none');
    assert.equal(swap.algorithm.steps, 0);
    assert.equal(swap.algorithm.warmStart, undefined);
    assert.equal(swap.seed, perRole.seed, 'the same held-out instances as the per-role run');
    assert.equal(swap.name, 'plan-path-planner-team.swap.seed-1');
    const control = deriveSwapSpec(perRole, 'ck', { exchange: false });
    assert.equal(control.seats.proposer!.policy, 'proposer');
    assert.equal(control.seats.executor!.policy, 'executor');
    // Everything but the policies and their mapping is the per-role team.
    assert.deepEqual({ ...swap.seats.proposer, policy: 'proposer' }, perRole.seats.proposer);
    assert.deepEqual(swap.rewards, perRole.rewards);
    // Three seats rotate; LoRA policies load the trained adapter on the same base.
    const three = JSON.parse(JSON.stringify(perRole)) as PlainSpec;
    three.seats.critic = { ...three.seats.executor!, policy: 'critic' };
    three.policies.critic = {
      kind: 'tfjs-causal-lm',
      preset: 'tiny',
      seed: 5,
      lora: { r: 2, alpha: 4, targetModules: ['q_proj'] },
    };
    const rot = deriveSwapSpec(three, 'ck');
    assert.deepEqual(
      Object.values(rot.seats).map((s) => s.policy),
      ['executor', 'critic', 'proposer'],
    );
    assert.deepEqual(rot.policies.critic, { kind: 'tfjs-causal-lm', preset: 'tiny', seed: 5, adapter: 'ck/critic' });
  });

  it('LoRA teams (L2): the shared warm start is the trained adapter on the same frozen base; swap loads the per-role adapters', () => {
    const lora = plainSpec(BASE);
    for (const p of ['proposer', 'executor'])
      (lora.policies[p] as Record<string, unknown>).lora = { r: 2, alpha: 4, targetModules: ['q_proj'] };
    const own = deriveArm(lora, 'mas-atgrpo-per-role', { seed: 0, ownWarmStart: true });
    assert.equal(own.level, 'L2');
    const d = deriveArm(lora, 'mas-atgrpo-per-role', { seed: 0 });
    assert.equal(d.level, 'L2');
    assert.deepEqual(d.spec.policies.proposer, {
      kind: 'tfjs-causal-lm',
      preset: 'tiny',
      tokenizer: 'tiny',
      seed: 11,
      adapter: '../../mas-prompt/seed-0/checkpoints/step-0/proposer',
    });
    const swap = deriveSwapSpec(d.spec, 'ck');
    assert.deepEqual(swap.policies.proposer, {
      kind: 'tfjs-causal-lm',
      preset: 'tiny',
      tokenizer: 'tiny',
      seed: 11,
      adapter: 'ck/proposer',
    });
    const notLm = plainSpec(BASE);
    notLm.policies.executor = { kind: 'scripted' } as PlainSpec['policies'][string];
    assert.throws(
      () => deriveArm(notLm, 'mas-naive-grpo', { seed: 0 }),
      /policy 'executor' is 'scripted', not tfjs-causal-lm: there is no checkpoint to start it from/,
    );
  });

  it('refuses bases that are not per-role teams, and names unknown or incomplete arm lists', () => {
    const shared = deriveArm(BASE, 'mas-atgrpo-shared', { seed: 0 }).spec;
    assert.throws(
      () => deriveArm(shared, 'mas-prompt', { seed: 0 }),
      (e: Error) => e instanceof ExperimentError && /share policy 'shared'/.test(e.message),
    );
    const single = deriveArm(BASE, 'single', { seed: 0 }).spec;
    assert.throws(() => deriveArm(single, 'mas-prompt', { seed: 0 }), /must be a team \(two or more seats\)/);
    assert.throws(() => deriveArm(BASE, 'single', { seed: 0, singleSeat: 'critic' }), /seat 'critic'/);
    const noTurns = plainSpec(BASE);
    delete noTurns.environment.config.maxTurns;
    assert.throws(
      () => deriveArm(noTurns, 'mas-prompt', { seed: 0, label: 'plan-path' }),
      /plan-path .*environment\.config\.maxTurns must be set/,
    );
    assert.throws(() => parseArmList('mas-prompt,chess'), /unknown arm "chess"; the arms are single, /);
    // --arms pulls in the runs an arm starts from or evaluates (transitively), in table order.
    assert.deepEqual(parseArmList('swap'), ['mas-prompt', 'mas-atgrpo-per-role', 'swap']);
    assert.deepEqual(
      parseArmList('swap, mas-atgrpo-per-role,single'),
      ['single', 'mas-prompt', 'mas-atgrpo-per-role', 'swap'],
      'table order',
    );
    assert.deepEqual(parseArmList('single-grpo,mas-atgrpo-shared'), ['single', 'single-grpo', 'mas-atgrpo-shared']);
    assert.deepEqual(withSources(['mas-naive-grpo']), ['mas-prompt', 'mas-naive-grpo']);
    // The library refuses a plan without the source, naming it.
    assert.throws(
      () =>
        planExperiment({
          games: [{ name: 'plan-path', spec: BASE }],
          arms: ['mas-atgrpo-per-role'],
          seeds: 1,
          outDir: join(dir, 'nope'),
        }),
      /arm "mas-atgrpo-per-role" starts from the warm start of the "mas-prompt" run; add mas-prompt to the arms/,
    );
    assert.throws(
      () =>
        planExperiment({
          games: [{ name: 'plan-path', spec: BASE }],
          arms: ['mas-prompt', 'swap'],
          seeds: 1,
          outDir: join(dir, 'nope'),
        }),
      /arm "swap" evaluates the policies of the "mas-atgrpo-per-role" run/,
    );
  });
});

describe('experiment: sample top-ups and run folders', () => {
  it('tops up to the budget from the measured mean per step', () => {
    assert.equal(topUpSteps({ generated: 1024, steps: 16, lastStep: 16 }, 1024, 0.05), undefined);
    assert.equal(topUpSteps({ generated: 980, steps: 16, lastStep: 16 }, 1024, 0.05), undefined, 'within 5% below');
    // 16 steps gave 832 (52 per step): 192 missing → 3.69 steps, twice that rounded up = 8 more (the trainer stops at the budget).
    assert.equal(topUpSteps({ generated: 832, steps: 16, lastStep: 16 }, 1024, 0.05), 24);
    assert.equal(topUpSteps({ generated: 900, steps: 3, lastStep: 3 }, 1000, 0.05), 4, 'at least one step');
  });

  it('runs side by side share the cores: children get TROUPE_WORKERS = cores / jobs, which the trainer takes as its default', () => {
    assert.equal(childEnv({ jobs: 2, env: { A: '1' } }, 2).TROUPE_WORKERS, '1');
    assert.equal(childEnv({ jobs: 2, env: {} }, 8).TROUPE_WORKERS, '4');
    assert.equal(childEnv({ jobs: 4, env: {} }, 2).TROUPE_WORKERS, '1', 'at least one');
    assert.equal(childEnv({ env: {} }, 2).TROUPE_WORKERS, '2', 'one job: every core');
    assert.equal(
      childEnv({ jobs: 2, env: { TROUPE_WORKERS: '3' } }, 2).TROUPE_WORKERS,
      '3',
      'a value the user set wins',
    );
    assert.equal(childEnv({ jobs: 2, env: { A: '1' } }, 2).A, '1', 'the rest of the environment is kept');
    assert.equal(defaultWorkers({ TROUPE_WORKERS: '1' }), 1);
    assert.equal(defaultWorkers({}), availableParallelism());
    assert.throws(
      () => defaultWorkers({ TROUPE_WORKERS: 'two' }),
      (e: Error) => e.name === 'ConfigError' && /TROUPE_WORKERS must be a positive integer.*"two"/.test(e.message),
    );
    assert.throws(() => defaultWorkers({ TROUPE_WORKERS: '0' }), /positive integer/);
  });

  it('measures generated and trained samples from metrics.jsonl and finds the newest checkpoint', () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-measure-'));
    try {
      writeFileSync(
        join(dir, 'metrics.jsonl'),
        [
          { step: 0, kind: 'warm-start', 'warmstart/samples': 64 },
          { step: 1, kind: 'train', 'rollout/samples': 60, 'loss/proposer/samples': 30, 'loss/executor/samples': 28 },
          { step: 2, kind: 'train', 'rollout/samples': 50, 'loss/shared/samples': 50 },
          // Groups without a signal are taken but not trained on: only trained_samples count where it is written.
          {
            step: 3,
            kind: 'train',
            'rollout/samples': 40,
            'loss/proposer/samples': 20,
            'loss/proposer/trained_samples': 0,
            'loss/executor/samples': 20,
            'loss/executor/trained_samples': 12,
          },
          { step: 3, kind: 'final', 'eval_test/success_rate': 0.5 },
        ]
          .map((r) => JSON.stringify(r))
          .join('\n') + '\n{"torn',
      );
      assert.deepEqual(measureRun(dir), { generated: 150, trained: 120, steps: 3, lastStep: 3, warmStartSamples: 64 });
      assert.equal(newestCheckpoint(dir), undefined);
      for (const s of [0, 2, 10]) mkdirSync(join(dir, 'checkpoints', `step-${s}`), { recursive: true });
      mkdirSync(join(dir, 'checkpoints', '.step-11.tmp-1'));
      for (const s of [0, 2]) writeFileSync(join(dir, 'checkpoints', `step-${s}`, 'trainer-state.json'), '{}');
      assert.equal(newestCheckpoint(dir), join(dir, 'checkpoints', 'step-2'), 'step-10 has no trainer-state.json');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * A fake `troupe` CLI (node script): `train` appends metrics for the missing steps (B·K·N·T·3/4 samples each: some
 * episodes end early; a warm-start record first when the spec has `algorithm.warmStart`) and writes step checkpoints
 * with one folder per policy; a policy with `model:`/`adapter:` must find its folder (else exit 1); `eval` prints a
 * success rate. Every call is logged to calls.log (`train <arm> <seed> ...`), and every checkpoint folder a policy
 * loads (`loads <arm> <seed> <policy>=<path>`). Env: a spec whose name contains FAIL_ON makes `train` exit 1; one
 * whose name contains HANG_ON hangs (ignoring SIGTERM when IGNORE_TERM is set).
 */
function fakeTroupe(dir: string): string[] {
  const yamlPath = createRequire(import.meta.url).resolve('yaml');
  const script = join(dir, 'fake-troupe.cjs');
  writeFileSync(
    script,
    `
const fs = require('fs'), path = require('path');
const { parse } = require(${JSON.stringify(yamlPath)});
const [cmd, specFile, ...rest] = process.argv.slice(2);
const opt = (k) => { const i = rest.indexOf(k); return i >= 0 ? rest[i + 1] : undefined; };
const log = (line) => fs.appendFileSync(path.join(${JSON.stringify(dir)}, 'calls.log'), line + '\\n');
const where = path.basename(path.dirname(path.dirname(specFile))) + ' ' + path.basename(path.dirname(specFile)).replace('seed-', '');
log([cmd, where, ...rest.filter((a, i) => a === '--steps' || a === '--sample-budget' || (/^\\d+$/.test(a) && /^--(steps|sample-budget)$/.test(rest[i - 1])))].join(' '));
const spec = parse(fs.readFileSync(specFile, 'utf8'));
if (process.env.FAIL_ON && spec.name.includes(process.env.FAIL_ON)) { console.error('boom: simulated crash'); process.exit(1); }
if (process.env.HANG_ON && spec.name.includes(process.env.HANG_ON)) {
  log('hangs ' + where + ' ' + process.pid);
  if (process.env.IGNORE_TERM) process.on('SIGTERM', () => console.error('ignoring SIGTERM'));
  setInterval(() => {}, 1000);
  return;
}
for (const [name, p] of Object.entries(spec.policies)) {
  const from = p.model || p.adapter;
  if (!from) continue;
  if (!fs.existsSync(path.resolve(path.dirname(specFile), from))) { console.error('policies.' + name + '.model: checkpoint folder ' + from + ' does not exist'); process.exit(1); }
  if (cmd === 'train') log('loads ' + where + ' ' + name + '=' + from);
}
const a = spec.algorithm, seats = Object.keys(spec.seats).length, T = spec.environment.config.maxTurns;
const episodes = Number(opt('-n') ?? spec.evaluation.episodes);
const evaluation = { split: 'test', episodes, successes: seats, successRate: seats / episodes, ci95: [0, 1] };
if (cmd === 'train') {
  const out = opt('--out'); fs.mkdirSync(out, { recursive: true });
  const steps = Number(opt('--steps') ?? a.steps);
  const metrics = path.join(out, 'metrics.jsonl');
  const done = fs.existsSync(metrics) ? fs.readFileSync(metrics, 'utf8').trim().split('\\n').filter((l) => l).map((l) => JSON.parse(l)).filter((m) => m.kind === 'train').length : 0;
  if (!fs.existsSync(metrics)) fs.writeFileSync(metrics, a.warmStart ? JSON.stringify({ step: 0, kind: 'warm-start', 'warmstart/samples': 8 }) + '\\n' : '');
  const n = a.batchSize * a.branches * seats * T * 3 / 4, budget = opt('--sample-budget');
  let last = done;
  for (let s = done + 1; s <= steps && !(budget !== undefined && (s - 1) * n >= Number(budget)); s++) {
    fs.appendFileSync(metrics, JSON.stringify({ step: s, kind: 'train', 'rollout/samples': n, 'loss/p/samples': n }) + '\\n');
    last = s;
  }
  for (const s of done === 0 ? [0, last] : [last]) {
    const ck = path.join(out, 'checkpoints', 'step-' + s); fs.mkdirSync(ck, { recursive: true });
    for (const p of Object.keys(spec.policies)) { fs.mkdirSync(path.join(ck, p), { recursive: true }); fs.writeFileSync(path.join(ck, p, 'model.safetensors'), spec.name); }
    fs.writeFileSync(path.join(ck, 'trainer-state.json'), '{}');
  }
  console.log(JSON.stringify({ final_eval: rest.includes('--no-final-eval') ? null : evaluation }));
} else {
  const seatModels = Object.entries(spec.seats).map(([seat, e]) => seat + '=' + (spec.policies[e.policy].model || '')).join(',');
  log('models ' + seatModels);
  console.log(JSON.stringify({ split: 'test', episodes, successes: evaluation.successes, success_rate: evaluation.successRate, ci95: [0, 1] }));
}
`,
  );
  chmodSync(script, 0o755);
  return [process.execPath, script];
}

/** Records the runner's events in order, and the most runs in flight at once. */
function eventLog(): {
  events: ExperimentEvent[];
  onEvent: (e: ExperimentEvent) => void;
  index: (type: string, arm: ArmName, seed: number) => number;
  maxInFlight: () => number;
} {
  const events: ExperimentEvent[] = [];
  return {
    events,
    onEvent: (e) => void events.push(e),
    index: (type, arm, seed) =>
      events.findIndex((e) => e.type === type && 'run' in e && e.run.arm === arm && e.run.seed === seed),
    maxInFlight: () => {
      let n = 0,
        max = 0;
      for (const e of events) {
        if (e.type === 'start') max = Math.max(max, ++n);
        if (e.type === 'done' && !/^not run/.test(e.result.error ?? '')) n--;
      }
      return max;
    },
  };
}

describe('experiment: the runner (a fake troupe CLI)', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'troupe-runner-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('runs arms × seeds as children (--jobs 2, each after the run it starts from), shares warm starts, tops RL runs up, records a failed source, and resumes', async () => {
    const launcher = fakeTroupe(dir);
    const out = join(dir, 'out');
    const games = [{ name: 'plan-path', spec: BASE }];
    const arms: ArmName[] = ['single', 'single-grpo', 'mas-prompt', 'mas-naive-grpo', 'mas-atgrpo-per-role', 'swap'];
    const options = { games, arms, seeds: 2, budget: 640, episodes: 10, jobs: 2, outDir: out, launcher };
    const plan = planExperiment(options);
    assert.equal(plan.length, 12);
    assert.deepEqual(
      plan.map((r) => `${r.arm} ${r.seed}`),
      [
        'single 0',
        'mas-prompt 0',
        'single 1',
        'mas-prompt 1',
        'single-grpo 0',
        'mas-naive-grpo 0',
        'mas-atgrpo-per-role 0',
        'single-grpo 1',
        'mas-naive-grpo 1',
        'mas-atgrpo-per-role 1',
        'swap 0',
        'swap 1',
      ],
      'warm starts first, swap last',
    );
    const perRole1 = plan.find((r) => r.arm === 'mas-atgrpo-per-role' && r.seed === 1)!;
    const prompt1 = plan.find((r) => r.arm === 'mas-prompt' && r.seed === 1)!;
    assert.equal(perRole1.source, prompt1);
    assert.equal(
      perRole1.specText.split('\n')[0],
      `# starts from the warm start (../../mas-prompt/seed-1/checkpoints/step-0) of ../../mas-prompt/seed-1, plan ${prompt1.digest}`,
    );
    assert.equal(
      plan.find((r) => r.arm === 'swap' && r.seed === 1)!.specText.split('\n')[0],
      `# evaluates the newest checkpoint of ../../mas-atgrpo-per-role/seed-1, plan ${perRole1.digest}`,
    );
    assert.equal(plan.find((r) => r.arm === 'single-grpo' && r.seed === 0)!.source!.arm, 'single');

    // mas-prompt seed 0 crashes: its dependents (and swap, transitively) are failed without running; seed 1 goes on.
    const log1 = eventLog();
    const first = await runExperiment({
      ...options,
      env: { ...process.env, FAIL_ON: 'mas-prompt.seed-0' },
      onEvent: log1.onEvent,
    });
    const failed = first.runs.filter((r) => r.status !== 'ok');
    assert.deepEqual(failed.map((r) => `${r.arm} ${r.seed}`).sort(), [
      'mas-atgrpo-per-role 0',
      'mas-naive-grpo 0',
      'mas-prompt 0',
      'swap 0',
    ]);
    const error = (arm: ArmName): string => failed.find((r) => r.arm === arm)!.error!;
    assert.match(error('mas-prompt'), /troupe train exited with 1:\nboom: simulated crash/);
    const promptDir = join(out, 'runs', 'plan-path', 'mas-prompt', 'seed-0');
    for (const arm of ['mas-naive-grpo', 'mas-atgrpo-per-role'] as const) {
      assert.equal(
        error(arm),
        `not run: the mas-prompt run it starts from (seed 0, ${promptDir}) failed: troupe train exited with 1:`,
      );
    }
    assert.match(
      error('swap'),
      /^not run: the mas-atgrpo-per-role run it evaluates \(seed 0, .*mas-atgrpo-per-role\/seed-0\) failed: not run: the mas-prompt run/,
    );
    assert.ok(existsSync(join(out, 'runs', 'plan-path', 'mas-atgrpo-per-role', 'seed-0', 'failure.json')));
    const calls1 = readFileSync(join(dir, 'calls.log'), 'utf8');
    assert.doesNotMatch(
      calls1,
      /^(train|eval) (mas-naive-grpo|mas-atgrpo-per-role|swap) 0/m,
      'nothing ran for the dependents of the failed source',
    );
    // Order: each run started after the run it depends on was done; two ran at once.
    for (const run of plan.filter((r) => r.source)) {
      const started = Math.max(log1.index('start', run.arm, run.seed), log1.index('done', run.arm, run.seed));
      assert.ok(
        log1.index('done', run.source!.arm, run.seed) < started,
        `${run.arm} ${run.seed} began before ${run.source!.arm} was done`,
      );
    }
    assert.equal(log1.maxInFlight(), 2);

    // The RL arms start from the shared warm start (their policies loaded from the source's step-0), with none of their own.
    assert.match(
      calls1,
      /^loads mas-atgrpo-per-role 1 proposer=\.\.\/\.\.\/mas-prompt\/seed-1\/checkpoints\/step-0\/proposer$/m,
    );
    assert.match(
      calls1,
      /^loads mas-naive-grpo 1 executor=\.\.\/\.\.\/mas-prompt\/seed-1\/checkpoints\/step-0\/executor$/m,
    );
    assert.match(calls1, /^loads single-grpo 0 executor=\.\.\/\.\.\/single\/seed-0\/checkpoints\/step-0\/executor$/m);
    // RL runs stop at the budget on every call; the one top-up asks for twice the steps the mean needs.
    assert.deepEqual(
      calls1.split('\n').filter((l) => l.startsWith('train mas-atgrpo-per-role 1')),
      ['train mas-atgrpo-per-role 1 --sample-budget 640', 'train mas-atgrpo-per-role 1 --sample-budget 640 --steps 17'],
    );
    const ok = first.runs.filter((r) => r.status === 'ok');
    assert.equal(ok.length, 8);
    // 48 samples per step (3/4 of 64): 10 planned steps give 480; the top-up (to at most 17) stops at the budget: 14 → 672.
    for (const r of ok.filter((x) => ARMS[x.arm].rl)) {
      assert.equal(r.samples.plannedSteps, 10);
      assert.equal(r.samples.generated, 672, `${r.arm} ${r.seed}`);
      assert.equal(r.samples.steps, 14);
      assert.equal(r.samples.topUps, 1);
      assert.equal(r.warmStartSamples, undefined, `${r.arm}: no warm start of its own`);
      const src = ARMS[r.arm].dependsOn!;
      assert.deepEqual(r.source, {
        arm: src,
        uses: 'warm-start',
        dir: `runs/plan-path/${src}/seed-${r.seed}`,
        checkpoint: `runs/plan-path/${src}/seed-${r.seed}/checkpoints/step-0`,
      });
    }
    assert.equal(ok.find((r) => r.arm === 'mas-prompt')!.warmStartSamples, 8);
    assert.equal(ok.find((r) => r.arm === 'mas-prompt')!.source, undefined);
    const swap = ok.find((r) => r.arm === 'swap' && r.seed === 1)!;
    assert.equal(swap.eval!.successRate, 0.2);
    assert.equal(swap.control!.successes, 2);
    assert.deepEqual(swap.source, {
      arm: 'mas-atgrpo-per-role',
      uses: 'final',
      dir: 'runs/plan-path/mas-atgrpo-per-role/seed-1',
      checkpoint: 'runs/plan-path/mas-atgrpo-per-role/seed-1/checkpoints/step-14',
    });
    const ck = '../../mas-atgrpo-per-role/seed-1/checkpoints/step-14';
    assert.ok(calls1.includes(`models proposer=${ck}/executor,executor=${ck}/proposer\n`), calls1);
    assert.ok(calls1.includes(`models proposer=${ck}/proposer,executor=${ck}/executor\n`), 'the control');
    const swapSpec = readFileSync(join(out, 'runs', 'plan-path', 'swap', 'seed-1', 'swap.yaml'), 'utf8');
    assert.match(swapSpec, /seed: 1007/);

    // A rerun skips the finished runs and retries the failed ones, sources first (which now succeed).
    writeFileSync(join(dir, 'calls.log'), '');
    const log2 = eventLog();
    const second = await runExperiment({ ...options, onEvent: log2.onEvent });
    assert.equal(second.runs.filter((r) => r.status === 'ok').length, 12);
    const retried = readFileSync(join(dir, 'calls.log'), 'utf8')
      .trim()
      .split('\n')
      .filter((l) => /^(train|eval) /.test(l));
    assert.deepEqual([...new Set(retried.map((l) => l.split(' ').slice(1, 3).join(' ')))].sort(), [
      'mas-atgrpo-per-role 0',
      'mas-naive-grpo 0',
      'mas-prompt 0',
      'swap 0',
    ]);
    assert.ok(log2.index('done', 'mas-prompt', 0) < log2.index('start', 'mas-atgrpo-per-role', 0));

    // A different plan in the same folder is refused before anything runs.
    assert.throws(() => planExperiment({ ...options, budget: 1280 }), /holds a run of a different plan/);

    const report = writeExperimentReport(out, second.runs, { games: ['plan-path'], arms, seeds: 2 });
    const table = readFileSync(report.table, 'utf8');
    assert.match(table, /\| MAS \+ AT-GRPO per-role \(`mas-atgrpo-per-role`\) \| 20\.0 ± 0\.0 \| 672 \| 2 \|/);
    assert.match(table, /\| single agent \+ GRPO \(`single-grpo`\) \| 10\.0 ± 0\.0 \| 672 \| 2 \|/);
    assert.match(
      table,
      /Shared warm starts \(the RL run loads the source run's checkpoints\/step-0\): `single-grpo` ← `single`, `mas-naive-grpo` ← `mas-prompt`, `mas-atgrpo-per-role` ← `mas-prompt`\./,
    );
    assert.match(table, /\| plan-path \| mas-atgrpo-per-role \| 1 \| L3 \| mas-prompt step-0 \| 2\/10 = 20\.0% /);
    assert.match(table, /\| plan-path \| mas-prompt \| 1 \| L3 \| own warm start \| /);
    assert.match(table, /\| plan-path \| swap \| 1 \| L3 \| mas-atgrpo-per-role step-14 \| /);
    const results = JSON.parse(readFileSync(report.results, 'utf8')) as { runs: RunResult[]; cells: unknown[] };
    assert.equal(results.runs.length, 12);
    assert.equal(
      results.runs.find((r) => r.arm === 'mas-naive-grpo' && r.seed === 0)!.source!.dir,
      'runs/plan-path/mas-prompt/seed-0',
    );
    assert.equal(results.cells.length, 6);
    assert.ok(report.chartSpecs.every((f) => existsSync(f)));
  });

  it('--reuse: the runs of an earlier results file with the same plan are not run again, only with the runs that need their checkpoints', async () => {
    const launcher = fakeTroupe(dir);
    const calls = join(dir, 'calls.log');
    const ran = (): string[] => {
      const lines = existsSync(calls)
        ? readFileSync(calls, 'utf8')
            .trim()
            .split('\n')
            .filter((l) => /^(train|eval) /.test(l))
        : [];
      rmSync(calls, { force: true });
      return [...new Set(lines.map((l) => l.split(' ').slice(1, 3).join(' ')))].sort();
    };
    const base = {
      games: [{ name: 'plan-path', spec: BASE }],
      arms: ['mas-prompt', 'mas-atgrpo-per-role', 'swap'] as ArmName[],
      budget: 640,
      episodes: 10,
      launcher,
    };
    const first = await runExperiment({ ...base, seeds: 1, outDir: join(dir, 'reuse-a') });
    ran();
    const earlier = { file: 'a/results.json', runs: first.runs };

    const log = eventLog();
    const more = await runExperiment({
      ...base,
      seeds: 2,
      outDir: join(dir, 'reuse-b'),
      reuse: earlier,
      onEvent: log.onEvent,
    });
    assert.deepEqual(ran(), ['mas-atgrpo-per-role 1', 'mas-prompt 1', 'swap 1'], 'seed 0 is not run again');
    const seed0 = more.runs.filter((r) => r.seed === 0);
    assert.equal(seed0.length, 3);
    for (const r of seed0) {
      assert.equal(r.reusedFrom, 'a/results.json');
      assert.deepEqual(
        { ...r, reusedFrom: undefined },
        { ...first.runs.find((x) => x.arm === r.arm)!, reusedFrom: undefined },
      );
      assert.equal(
        JSON.parse(readFileSync(join(dir, 'reuse-b', r.dir, 'result.json'), 'utf8')).reusedFrom,
        'a/results.json',
      );
    }
    assert.ok(more.runs.filter((r) => r.seed === 1).every((r) => r.status === 'ok' && r.reusedFrom === undefined));
    assert.equal(log.events.filter((e) => e.type === 'cached').length, 3);
    const md = formatTable(more.runs, { games: ['plan-path'], arms: base.arms, seeds: 2 });
    assert.match(md, /Reused \(not run again.*\): 3 runs, marked \* below, from `a\/results\.json`/);
    assert.match(md, /\| plan-path \| mas-prompt \| 0\* \|/);
    assert.match(md, /\| plan-path \| mas-prompt \| 1 \|/);

    // without the swap's result, the per-role run is not reused (the swap needs its checkpoints), nor its source
    const noSwap = { file: 'a/results.json', runs: first.runs.filter((r) => r.arm !== 'swap') };
    await runExperiment({ ...base, seeds: 1, outDir: join(dir, 'reuse-c'), reuse: noSwap });
    assert.deepEqual(ran(), ['mas-atgrpo-per-role 0', 'mas-prompt 0', 'swap 0']);

    // another plan under the same game, arm and seed (here: another digest) is said and run anew
    const changed = {
      file: 'a/results.json',
      runs: first.runs.map((r) => (r.arm === 'swap' ? { ...r, digest: 'other' } : r)),
    };
    const log2 = eventLog();
    await runExperiment({ ...base, seeds: 1, outDir: join(dir, 'reuse-d'), reuse: changed, onEvent: log2.onEvent });
    assert.deepEqual(
      log2.events.filter((e) => e.type === 'reuse-mismatch').map((e) => 'run' in e && e.run.arm),
      ['swap'],
    );
    assert.deepEqual(ran(), ['mas-atgrpo-per-role 0', 'mas-prompt 0', 'swap 0']);
  });

  it('collectResults (--report-only): the runs finished so far, failures as recorded, the rest not run yet; runs and writes nothing', async () => {
    const launcher = fakeTroupe(dir);
    const out = join(dir, 'report-only');
    const base = {
      games: [{ name: 'plan-path', spec: BASE }],
      arms: ['single', 'mas-prompt', 'mas-atgrpo-per-role'] as ArmName[],
      budget: 640,
      episodes: 10,
      launcher,
      outDir: out,
    };
    process.env.FAIL_ON = 'mas-prompt';
    try {
      await runExperiment({ ...base, seeds: 1 });
    } finally {
      delete process.env.FAIL_ON;
    }
    rmSync(join(dir, 'calls.log'), { force: true });
    const listing = (): string[] => readdirSync(out, { recursive: true }).map(String).sort();
    const before = listing();
    const { runs } = collectResults({ ...base, seeds: 2 });
    assert.deepEqual(listing(), before, 'nothing written');
    assert.ok(!existsSync(join(dir, 'calls.log')), 'nothing run');
    const by = (arm: string, seed: number): RunResult => runs.find((r) => r.arm === arm && r.seed === seed)!;
    assert.equal(by('single', 0).status, 'ok');
    assert.match(by('mas-prompt', 0).error!, /boom: simulated crash/);
    assert.match(by('mas-atgrpo-per-role', 0).error!, /^not run: the mas-prompt run it starts from/);
    for (const arm of base.arms) assert.equal(by(arm, 1).error, NOT_RUN_YET);
    const cells = tableCells(runs, { games: ['plan-path'], arms: base.arms, seeds: 2 });
    assert.deepEqual(
      cells.map((c) => [c.arm, c.n, c.failed, c.notRun]),
      [
        ['single', 1, 0, 1],
        ['mas-prompt', 0, 1, 1],
        ['mas-atgrpo-per-role', 0, 1, 1],
      ],
    );
    assert.deepEqual(cells.slice(1).map(formatCell), ['failed (1), not run yet (1)', 'failed (1), not run yet (1)']);
    assert.match(formatCell(cells[0]!), / ± – \(1 not run yet\)$/);
    const md = formatTable(runs, { games: ['plan-path'], arms: base.arms, seeds: 2 });
    assert.match(md, /\| plan-path \| single \| 1 \| L0 \| own warm start \| not run yet \|/);
    assert.match(
      md,
      /\| plan-path \| mas-prompt \| 0 \| L3 \| own warm start \| failed: troupe train exited with 1: \|/,
    );
    assert.match(
      md,
      /\| plan-path \| mas-atgrpo-per-role \| 1 \| L3 \| mas-prompt step-0 \| not run yet \| – \| – \| – \| – \| 0 \|/,
    );
  });

  it('one runner per experiment folder: a folder another running runner holds is refused before any run starts', async () => {
    const out = join(dir, 'locked');
    mkdirSync(out, { recursive: true });
    writeFileSync(
      join(out, '.lock'),
      JSON.stringify({ pid: process.pid, token: 'x', command: 'troupe experiment paper-table', since: 'now' }),
    );
    const log = eventLog();
    await assert.rejects(
      runExperiment({
        games: [{ name: 'plan-path', spec: BASE }],
        arms: ['mas-prompt'],
        seeds: 1,
        outDir: out,
        launcher: fakeTroupe(dir),
        onEvent: log.onEvent,
      }),
      /locked is in use by this process since now: troupe experiment refuses/,
    );
    assert.ok(!log.events.some((e) => e.type === 'start'));
    rmSync(join(out, '.lock'));
    const ran = await runExperiment({
      games: [{ name: 'plan-path', spec: BASE }],
      arms: ['mas-prompt'],
      seeds: 1,
      outDir: out,
      launcher: fakeTroupe(dir),
    });
    assert.equal(ran.runs[0]!.status, 'ok');
    assert.ok(!existsSync(join(out, '.lock')), 'released when done');
  });

  it("a dependent's plan digest covers its source's plan (a changed warm start is a different plan for the RL arms too)", () => {
    const other = plainSpec(BASE);
    (other.algorithm.warmStart as { epochs: number }).epochs += 1;
    const opts = { arms: ['mas-prompt', 'mas-atgrpo-per-role'] as ArmName[], seeds: 1, outDir: join(dir, 'digest') };
    const a = planExperiment({ ...opts, games: [{ name: 'plan-path', spec: BASE }] });
    const b = planExperiment({
      ...opts,
      games: [{ name: 'plan-path', spec: { ...other, file: BASE.file } as unknown as TeamSpec }],
    });
    const perRole = (p: typeof a) => p.find((r) => r.arm === 'mas-atgrpo-per-role')!;
    assert.equal(
      stringify(perRole(a).derived.spec),
      stringify(perRole(b).derived.spec),
      'the per-role spec itself does not show the warm start',
    );
    assert.notEqual(perRole(a).digest, perRole(b).digest);
    assert.notEqual(perRole(a).specText, perRole(b).specText);
  });

  it('--run-timeout kills a hung child (SIGTERM, then SIGKILL) and records a failure; its dependents are not run', async () => {
    const launcher = fakeTroupe(dir);
    const out = join(dir, 'timeout');
    const started = performance.now();
    const r = await runExperiment({
      games: [{ name: 'plan-path', spec: BASE }],
      arms: ['single', 'single-grpo', 'mas-prompt'],
      seeds: 1,
      episodes: 4,
      jobs: 2,
      outDir: out,
      launcher,
      runTimeout: 1.5,
      killGrace: 0.3,
      env: { ...process.env, HANG_ON: 'single.seed-0', IGNORE_TERM: '1' },
    });
    const by = Object.fromEntries(r.runs.map((x) => [x.arm, x]));
    assert.equal(by['mas-prompt']!.status, 'ok', 'the other job slot went on');
    assert.equal(by.single!.status, 'failed');
    assert.match(
      by.single!.error!,
      /^timed out: the run took more than 1\.5 s \(--run-timeout 1\.5\); troupe train was killed\. A rerun resumes it/,
    );
    assert.ok(by.single!.seconds >= 1.5 && by.single!.seconds < 30, String(by.single!.seconds));
    assert.match(by['single-grpo']!.error!, /^not run: the single run it starts from \(seed 0, .*\) failed: timed out/);
    const log = readFileSync(join(out, 'runs', 'plan-path', 'single', 'seed-0', 'troupe.log'), 'utf8');
    assert.match(log, /run timeout of 1\.5 s: SIGTERM to troupe train\)\nignoring SIGTERM\n/);
    assert.match(log, /SIGKILL/);
    assert.ok(performance.now() - started < 30_000);
    await assert.rejects(
      runExperiment({
        games: [{ name: 'plan-path', spec: BASE }],
        arms: ['single'],
        seeds: 1,
        outDir: out,
        launcher,
        runTimeout: 0,
      }),
      /run timeout must be a positive number of seconds/,
    );
  });

  it('an aborted signal stops every running child, starts no further run, and a rerun resumes the stopped runs', async () => {
    const launcher = fakeTroupe(dir);
    const out = join(dir, 'interrupt');
    const calls = join(dir, 'calls.log');
    const hanging = (): number[] =>
      (existsSync(calls) ? readFileSync(calls, 'utf8') : '')
        .split('\n')
        .filter((l) => l.startsWith('hangs '))
        .map((l) => Number(l.split(' ').at(-1)));
    rmSync(calls, { force: true });
    const controller = new AbortController();
    const base = {
      games: [{ name: 'plan-path', spec: BASE }],
      arms: ['single', 'single-grpo', 'mas-prompt'] as ArmName[],
      seeds: 1,
      episodes: 4,
      jobs: 2,
      outDir: out,
      launcher,
      killGrace: 0.5,
    };
    const pending = runExperiment({ ...base, env: { ...process.env, HANG_ON: 'seed-0' }, signal: controller.signal });
    const waitUntil = Date.now() + 20_000;
    while (hanging().length < 2 && Date.now() < waitUntil) await new Promise((r) => setTimeout(r, 50));
    const pids = hanging();
    assert.equal(pids.length, 2, 'both warm starts (single, mas-prompt) are running');
    controller.abort();
    await assert.rejects(pending, (err: Error) => {
      assert.ok(err instanceof ExperimentInterrupted);
      assert.equal(err.stopped, 2);
      assert.equal(err.notStarted, 1, 'single-grpo waited for single and never started');
      assert.match(err.message, /^interrupted: 2 running runs stopped .*1 not started; the same command again resumes/);
      return true;
    });
    for (const pid of pids) assert.throws(() => process.kill(pid, 0), /ESRCH/, `child ${pid} has exited`);
    const failure = JSON.parse(
      readFileSync(join(out, 'runs', 'plan-path', 'single', 'seed-0', 'failure.json'), 'utf8'),
    ) as RunResult;
    assert.match(
      failure.error!,
      /^interrupted: the experiment was stopped; troupe train was killed\. A rerun resumes it/,
    );
    assert.match(
      readFileSync(join(out, 'runs', 'plan-path', 'mas-prompt', 'seed-0', 'troupe.log'), 'utf8'),
      /the experiment was stopped: SIGTERM to troupe train/,
    );
    assert.equal(existsSync(join(out, 'runs', 'plan-path', 'single-grpo', 'seed-0')), false);
    const rerun = await runExperiment(base);
    assert.deepEqual(Object.fromEntries(rerun.runs.map((r) => [r.arm, r.status])), {
      single: 'ok',
      'single-grpo': 'ok',
      'mas-prompt': 'ok',
    });
  });
});

describe('experiment: the table', () => {
  const run = (game: string, arm: ArmName, seed: number, success: number | undefined, generated = 0): RunResult => ({
    game,
    arm,
    seed,
    specSeed: 7 + 1000 * seed,
    status: success === undefined ? 'failed' : 'ok',
    level: 'L3',
    algorithm: ARMS[arm].algorithm,
    ...(success === undefined
      ? { error: 'troupe train exited with 1:\nout of memory | oops' }
      : {
          eval: {
            split: 'test',
            episodes: 50,
            successes: Math.round(success * 50),
            successRate: success,
            ci95: [0, 1] as [number, number],
          },
        }),
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
    ...(ARMS[arm].dependsOn
      ? {
          source: {
            arm: ARMS[arm].dependsOn!,
            uses: ARMS[arm].uses!,
            dir: `runs/${game}/${ARMS[arm].dependsOn}/seed-${seed}`,
            checkpoint: `runs/${game}/${ARMS[arm].dependsOn}/seed-${seed}/checkpoints/step-${arm === 'swap' ? 16 : 0}`,
          },
        }
      : {}),
    seconds: 60,
    dir: `runs/${game}/${arm}/seed-${seed}`,
    digest: 'x',
  });

  it('computes mean ± sample std over seeds', () => {
    assert.deepEqual(meanStd([]), {});
    assert.deepEqual(meanStd([0.3]), { mean: 0.3 });
    const m = meanStd([0.2, 0.4, 0.6]);
    assert.ok(Math.abs(m.mean! - 0.4) < 1e-12 && Math.abs(m.std! - 0.2) < 1e-12);
    assert.equal(formatCell({ mean: 0.4, std: 0.2, n: 3, failed: 0 }), '40.0 ± 20.0');
    assert.equal(formatCell({ mean: 0.26, n: 1, failed: 0 }), '26.0 ± –');
    assert.equal(formatCell({ mean: 0.5, std: 0, n: 2, failed: 1 }), '50.0 ± 0.0 (1 failed)');
    assert.equal(formatCell({ n: 0, failed: 2 }), 'failed (2)');
    assert.equal(formatCell({ n: 0, failed: 0, notRun: 2 }), 'not run yet (2)');
    assert.equal(formatCell({ n: 0, failed: 1, notRun: 1 }), 'failed (1), not run yet (1)');
    assert.equal(formatCell({ mean: 0.5, n: 1, failed: 1, notRun: 1 }), '50.0 ± – (1 failed, 1 not run yet)');
  });

  it('formats rows = arms, columns = games, samples and seeds, and a per-run table', () => {
    const runs = [
      run('plan-path', 'mas-prompt', 0, 0.1),
      run('plan-path', 'mas-prompt', 1, 0.3),
      run('sokoban', 'mas-prompt', 0, 0),
      run('sokoban', 'mas-prompt', 1, 0.04),
      run('plan-path', 'mas-atgrpo-per-role', 0, 0.96, 1000),
      run('plan-path', 'mas-atgrpo-per-role', 1, 0.9, 1040),
      run('sokoban', 'mas-atgrpo-per-role', 0, 0.2, 1024),
      run('sokoban', 'mas-atgrpo-per-role', 1, undefined),
      { ...run('plan-path', 'swap', 0, 0.06), control: { episodes: 50, successes: 48, successRate: 0.96 } },
      { ...run('plan-path', 'swap', 1, 0.02), control: { episodes: 50, successes: 45, successRate: 0.9 } },
    ];
    const settings = {
      games: ['plan-path', 'sokoban'],
      arms: ['mas-prompt', 'mas-atgrpo-per-role', 'swap'] as ArmName[],
      seeds: 2,
      budgets: { 'plan-path': 1024, sokoban: 1024 },
    };
    const md = formatTable(runs, settings);
    const lines = md.split('\n');
    const header = lines.indexOf('| arm | plan-path | sokoban | RL samples / run | seeds |');
    assert.ok(header > 0, md);
    assert.deepEqual(lines.slice(header + 1, header + 5), [
      '|---|---|---|---|---|',
      '| MAS prompt-only (`mas-prompt`) | 20.0 ± 14.1 | 2.0 ± 2.8 | 0 (warm start only) | 2 |',
      '| MAS + AT-GRPO per-role (`mas-atgrpo-per-role`) | 93.0 ± 4.2 | 20.0 ± – (1 failed) | 1,020 / 1,024 | 2 |',
      '| per-role, roles swapped (`swap`) | 4.0 ± 2.8 | – | eval only | 2 |',
    ]);
    assert.match(md, /50 episodes per seed\), mean ± std \(n − 1\) over 2 seeds/);
    assert.match(md, /Sample budget per RL run \(generated samples\): plan-path 1,024, sokoban 1,024/);
    assert.match(md, /plan-path seed 0: 48\/50, plan-path seed 1: 45\/50/);
    assert.match(
      md,
      /\| plan-path \| mas-atgrpo-per-role \| 0 \| L3 \| mas-prompt step-0 \| 48\/50 = 96\.0% \(0\.0–100\.0\) \| 1,000 \| 1,000 \| 16 \(16\) \| 4 × 4 \| 60 \|/,
    );
    assert.match(
      md,
      /\| sokoban \| mas-atgrpo-per-role \| 1 \| L3 \| mas-prompt step-0 \| failed: troupe train exited with 1: \|/,
    );
    assert.match(md, /\| plan-path \| mas-prompt \| 0 \| L3 \| own warm start \| 5\/50 = 10\.0% /);
    assert.match(md, /\| plan-path \| swap \| 1 \| L3 \| mas-atgrpo-per-role step-16 \| /);
    assert.match(
      md,
      /Shared warm starts \(the RL run loads the source run's checkpoints\/step-0\): `mas-atgrpo-per-role` ← `mas-prompt`\./,
    );
    assert.equal(startsFrom({}), 'own warm start');
    assert.equal(
      startsFrom({ source: { arm: 'mas-atgrpo-per-role', uses: 'final', dir: 'd' } }),
      'mas-atgrpo-per-role',
    );
    const cells = tableCells(runs, settings);
    assert.deepEqual(cells.find((c) => c.game === 'sokoban' && c.arm === 'mas-atgrpo-per-role')!.values, [0.2]);

    const [success, samples] = tableCharts(runs, settings);
    assert.equal(success!.name, 'success');
    const values = (
      success!.spec.data as { values: { game: string; arm: string; success: number; lo: number; hi: number }[] }
    ).values;
    const pr = values.find((v) => v.game === 'plan-path' && v.arm === 'mas-atgrpo-per-role')!;
    assert.ok(Math.abs(pr.success - 93) < 1e-9 && Math.abs(pr.hi - 97.2426) < 1e-3 && Math.abs(pr.lo - 88.7574) < 1e-3);
    assert.equal(values.length, 5, 'one bar per cell with a result');
    assert.equal((samples!.spec.data as { values: unknown[] }).values.length, 3, 'one point per successful RL run');
  });
});
