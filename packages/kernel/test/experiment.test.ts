import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import {
  ARM_NAMES, ARMS, deriveArm, deriveSwapSpec, ExperimentError, formatCell, formatTable, meanStd, measureRun, newestCheckpoint,
  parseArmList, planExperiment, plainSpec, runExperiment, SEED_STRIDE, tableCells, tableCharts, topUpSteps, writeExperimentReport,
  type ArmName, type PlainSpec, type RunResult,
} from '../src/experiment/index.js';
import { createHostFor } from '../src/runtime/index.js';
import { checkTeamAgainstPlugins, formatIssue, loadTeamSpec, parseTeamSpec, PRESETS_DIR, type TeamSpec } from '../src/team/index.js';
import { CAUSAL_LM_BUILTIN, composeTrainableTeam, mappingLevel, policyHandles, resolveTrainerConfig } from '../src/trainer/index.js';

const BASE: TeamSpec = loadTeamSpec(join(PRESETS_DIR, 'default-team.yaml'));

/** Writes a derived spec to a file and loads it back through the team-spec loader. */
function roundTrip(spec: PlainSpec, dir: string, name = 'spec.yaml'): TeamSpec {
  const file = join(dir, name);
  writeFileSync(file, stringify(spec));
  return loadTeamSpec(file);
}

describe('experiment: arms derived from a base team', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'troupe-arms-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('every arm of every shipped game preset validates: schema, trainer settings and plugins (seats, configs)', async () => {
    for (const preset of ['default-team', 'sokoban-team', 'sudoku-team']) {
      const file = join(PRESETS_DIR, `${preset}.yaml`);
      if (!existsSync(file)) continue; // a game preset that is not shipped yet
      const base = loadTeamSpec(file);
      for (const arm of ARM_NAMES) {
        const d = deriveArm(base, arm, { seed: 0 });
        const sub = join(dir, preset, arm);
        mkdirSync(sub, { recursive: true });
        const spec = roundTrip(d.spec, sub);
        resolveTrainerConfig(spec);
        const issues = await checkTeamAgainstPlugins(spec, createHostFor(spec.file, [CAUSAL_LM_BUILTIN]));
        assert.deepEqual(issues.map(formatIssue), [], `${preset} ${arm}`);
      }
    }
  });

  it('maps seats to policies at the right level (L0 single, L1 shared, L3 per-role), as the trainer sees it', async () => {
    const expected: Record<ArmName, string> = {
      single: 'L0', 'single-grpo': 'L0', 'mas-prompt': 'L3', 'mas-naive-grpo': 'L3', 'mas-atgrpo-shared': 'L1', 'mas-atgrpo-per-role': 'L3', swap: 'L3',
    };
    for (const arm of ARM_NAMES) assert.equal(deriveArm(BASE, arm, { seed: 0 }).level, expected[arm], arm);
    // The trainer's own mapping level of the composed teams (tiny random models; nothing is trained).
    for (const arm of ['single-grpo', 'mas-atgrpo-shared', 'mas-atgrpo-per-role'] as const) {
      const sub = join(dir, 'level', arm);
      mkdirSync(sub, { recursive: true });
      const spec = roundTrip(deriveArm(BASE, arm, { seed: 0 }).spec, sub);
      const team = await composeTrainableTeam(spec);
      try {
        const handles = policyHandles(spec, team.policies, team.seats.map((s) => s.name), resolveTrainerConfig(spec));
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
    assert.deepEqual(Object.values(shared.seats).map((s) => s.policy), ['shared', 'shared']);
  });

  it('every arm that trains or is the warm start gets the base warm start; the base is the per-role arm', () => {
    for (const arm of ARM_NAMES) {
      const d = deriveArm(BASE, arm, { seed: 0 });
      assert.deepEqual(d.spec.algorithm.warmStart, BASE.algorithm.warmStart, arm);
      assert.equal(d.spec.algorithm.evalEvery, 0, arm);
    }
    const perRole = deriveArm(BASE, 'mas-atgrpo-per-role', { seed: 0 }).spec;
    const { name: _n, file: _f, ...base } = BASE as TeamSpec & Record<string, unknown>;
    const { name: _m, ...derived } = perRole;
    assert.deepEqual({ ...derived, algorithm: { ...derived.algorithm, evalEvery: BASE.algorithm.evalEvery } }, JSON.parse(JSON.stringify(base)));
  });

  it('gives every RL arm the same sample budget: same samples per step (B scaled by seats), same steps', () => {
    // default team: B 4, K 4, N 2, T 2 → 64 samples per step; 16 steps → a budget of 1024.
    const perRole = deriveArm(BASE, 'mas-atgrpo-per-role', { seed: 0 }).budget;
    assert.equal(perRole.samplesPerStep, 64);
    assert.equal(perRole.budget, 1024);
    assert.equal(perRole.steps, 16);
    for (const budget of [1024, 1000, 300]) {
      const plans = ARM_NAMES.filter((a) => ARMS[a].rl).map((a) => ({ arm: a, ...deriveArm(BASE, a, { seed: 0, budget }).budget }));
      for (const p of plans) {
        assert.equal(p.samplesPerStep, 64, p.arm);
        assert.equal(p.budget, budget, p.arm);
        assert.ok(Math.abs(p.steps * p.samplesPerStep - budget) <= 0.1 * budget, `${p.arm}: ${p.steps} × ${p.samplesPerStep} vs ${budget}`);
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
    const s0 = deriveArm(BASE, 'mas-atgrpo-per-role', { seed: 0 }).spec;
    const s2 = deriveArm(BASE, 'mas-atgrpo-per-role', { seed: 2 }).spec;
    assert.equal(s0.seed, BASE.seed);
    assert.equal(s2.seed, BASE.seed + 2 * SEED_STRIDE);
    for (const p of ['proposer', 'executor']) {
      assert.equal(s0.policies[p]!.seed, BASE.policies[p]!.seed);
      assert.equal(s2.policies[p]!.seed, (BASE.policies[p]!.seed as number) + 2 * SEED_STRIDE);
    }
  });

  it('episodes override the evaluation; relative policy paths of the base become absolute', () => {
    assert.equal(deriveArm(BASE, 'mas-prompt', { seed: 0, episodes: 7 }).spec.evaluation.episodes, 7);
    const file = join(dir, 'rel.yaml');
    writeFileSync(file, 'extends: default-team\npolicies:\n  proposer: { kind: tfjs-causal-lm, model: ./ckpt/p, preset: null }\n');
    const spec = parseTeamSpec(readFileSync(file, 'utf8'), file);
    assert.equal(plainSpec(spec).policies.proposer!.model, join(dir, 'ckpt', 'p'));
    assert.equal(plainSpec(spec).policies.executor!.tokenizer, 'tiny');
  });

  it('swap exchanges the per-role policies between seats, loaded from the checkpoint; the control does not', () => {
    const perRole = deriveArm(BASE, 'mas-atgrpo-per-role', { seed: 1 }).spec;
    assert.deepEqual(deriveArm(BASE, 'swap', { seed: 1 }).spec, perRole, 'the swap arm plans the per-role spec');
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
    assert.equal(swap.name, 'default-team.swap.seed-1');
    const control = deriveSwapSpec(perRole, 'ck', { exchange: false });
    assert.equal(control.seats.proposer!.policy, 'proposer');
    assert.equal(control.seats.executor!.policy, 'executor');
    // Everything but the policies and their mapping is the per-role team.
    assert.deepEqual({ ...swap.seats.proposer, policy: 'proposer' }, perRole.seats.proposer);
    assert.deepEqual(swap.rewards, perRole.rewards);
    // Three seats rotate; LoRA policies load the trained adapter on the same base.
    const three = JSON.parse(JSON.stringify(perRole)) as PlainSpec;
    three.seats.critic = { ...three.seats.executor!, policy: 'critic' };
    three.policies.critic = { kind: 'tfjs-causal-lm', preset: 'tiny', seed: 5, lora: { r: 2, alpha: 4, targetModules: ['q_proj'] } };
    const rot = deriveSwapSpec(three, 'ck');
    assert.deepEqual(Object.values(rot.seats).map((s) => s.policy), ['executor', 'critic', 'proposer']);
    assert.deepEqual(rot.policies.critic, { kind: 'tfjs-causal-lm', preset: 'tiny', seed: 5, adapter: 'ck/critic' });
  });

  it('refuses bases that are not per-role teams, and names unknown or incomplete arm lists', () => {
    const shared = deriveArm(BASE, 'mas-atgrpo-shared', { seed: 0 }).spec;
    assert.throws(() => deriveArm(shared, 'mas-prompt', { seed: 0 }), (e: Error) => e instanceof ExperimentError && /share policy 'shared'/.test(e.message));
    const single = deriveArm(BASE, 'single', { seed: 0 }).spec;
    assert.throws(() => deriveArm(single, 'mas-prompt', { seed: 0 }), /must be a team \(two or more seats\)/);
    assert.throws(() => deriveArm(BASE, 'single', { seed: 0, singleSeat: 'critic' }), /seat 'critic'/);
    const noTurns = plainSpec(BASE);
    delete noTurns.environment.config.maxTurns;
    assert.throws(() => deriveArm(noTurns, 'mas-prompt', { seed: 0, label: 'plan-path' }), /plan-path .*environment\.config\.maxTurns must be set/);
    assert.throws(() => parseArmList('mas-prompt,chess'), /unknown arm "chess"; the arms are single, /);
    assert.throws(() => parseArmList('swap'), /add mas-atgrpo-per-role to --arms/);
    assert.deepEqual(parseArmList('swap, mas-atgrpo-per-role,single'), ['single', 'mas-atgrpo-per-role', 'swap'], 'table order');
  });
});

describe('experiment: sample top-ups and run folders', () => {
  it('tops up to the budget from the measured mean per step', () => {
    assert.equal(topUpSteps({ generated: 1024, steps: 16, lastStep: 16 }, 1024, 0.05), undefined);
    assert.equal(topUpSteps({ generated: 980, steps: 16, lastStep: 16 }, 1024, 0.05), undefined, 'within 5% below');
    // 16 steps gave 832 (52 per step): 192 missing → round(3.69) = 4 more steps.
    assert.equal(topUpSteps({ generated: 832, steps: 16, lastStep: 16 }, 1024, 0.05), 20);
    assert.equal(topUpSteps({ generated: 900, steps: 3, lastStep: 3 }, 1000, 0.05), 4, 'at least one step');
  });

  it('measures generated and trained samples from metrics.jsonl and finds the newest checkpoint', () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-measure-'));
    try {
      writeFileSync(join(dir, 'metrics.jsonl'), [
        { step: 0, kind: 'warm-start', 'warmstart/samples': 64 },
        { step: 1, kind: 'train', 'rollout/samples': 60, 'loss/proposer/samples': 30, 'loss/executor/samples': 28 },
        { step: 2, kind: 'train', 'rollout/samples': 50, 'loss/shared/samples': 50 },
        { step: 2, kind: 'final', 'eval_test/success_rate': 0.5 },
      ].map((r) => JSON.stringify(r)).join('\n') + '\n{"torn');
      assert.deepEqual(measureRun(dir), { generated: 110, trained: 108, steps: 2, lastStep: 2, warmStartSamples: 64 });
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
 * episodes end early) and writes step checkpoints; `eval` prints a success rate; every call is logged to calls.log.
 * A spec whose name contains FAIL_ON (env) makes `train` exit 1.
 */
function fakeTroupe(dir: string): string[] {
  const yamlPath = createRequire(import.meta.url).resolve('yaml');
  const script = join(dir, 'fake-troupe.cjs');
  writeFileSync(script, `
const fs = require('fs'), path = require('path');
const { parse } = require(${JSON.stringify(yamlPath)});
const [cmd, specFile, ...rest] = process.argv.slice(2);
const opt = (k) => { const i = rest.indexOf(k); return i >= 0 ? rest[i + 1] : undefined; };
fs.appendFileSync(path.join(${JSON.stringify(dir)}, 'calls.log'), [cmd, path.basename(path.dirname(path.dirname(specFile))), ...rest.filter((a) => a === '--steps' || /^\\d+$/.test(a))].join(' ') + '\\n');
const spec = parse(fs.readFileSync(specFile, 'utf8'));
if (process.env.FAIL_ON && spec.name.includes(process.env.FAIL_ON)) { console.error('boom: simulated crash'); process.exit(1); }
const a = spec.algorithm, seats = Object.keys(spec.seats).length, T = spec.environment.config.maxTurns;
const episodes = Number(opt('-n') ?? spec.evaluation.episodes);
const evaluation = { split: 'test', episodes, successes: seats, successRate: seats / episodes, ci95: [0, 1] };
if (cmd === 'train') {
  const out = opt('--out'); fs.mkdirSync(out, { recursive: true });
  const steps = Number(opt('--steps') ?? a.steps);
  const metrics = path.join(out, 'metrics.jsonl');
  const done = fs.existsSync(metrics) ? fs.readFileSync(metrics, 'utf8').trim().split('\\n').map((l) => JSON.parse(l)).filter((m) => m.kind === 'train').length : 0;
  if (!fs.existsSync(metrics)) fs.appendFileSync(metrics, JSON.stringify({ step: 0, kind: 'warm-start', 'warmstart/samples': 8 }) + '\\n');
  for (let s = done + 1; s <= steps; s++) {
    const n = a.batchSize * a.branches * seats * T * 3 / 4;
    fs.appendFileSync(metrics, JSON.stringify({ step: s, kind: 'train', 'rollout/samples': n, 'loss/p/samples': n }) + '\\n');
  }
  const ck = path.join(out, 'checkpoints', 'step-' + Math.max(done, steps)); fs.mkdirSync(ck, { recursive: true });
  fs.writeFileSync(path.join(ck, 'trainer-state.json'), '{}');
  console.log(JSON.stringify({ final_eval: rest.includes('--no-final-eval') ? null : evaluation }));
} else {
  const seatModels = Object.entries(spec.seats).map(([seat, e]) => seat + '=' + (spec.policies[e.policy].model || '')).join(',');
  fs.appendFileSync(path.join(${JSON.stringify(dir)}, 'calls.log'), 'models ' + seatModels + '\\n');
  console.log(JSON.stringify({ split: 'test', episodes, successes: evaluation.successes, success_rate: evaluation.successRate, ci95: [0, 1] }));
}
`);
  chmodSync(script, 0o755);
  return [process.execPath, script];
}

describe('experiment: the runner (a fake troupe CLI)', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'troupe-runner-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('runs arms × seeds as children, tops RL runs up to the budget, records a crash, and resumes', async () => {
    const launcher = fakeTroupe(dir);
    const out = join(dir, 'out');
    const games = [{ name: 'plan-path', spec: BASE }];
    const arms: ArmName[] = ['single-grpo', 'mas-prompt', 'mas-naive-grpo', 'mas-atgrpo-per-role', 'swap'];
    const options = { games, arms, seeds: 2, budget: 640, episodes: 10, jobs: 2, outDir: out, launcher };
    const plan = planExperiment(options);
    assert.equal(plan.length, 10);
    assert.deepEqual(plan.slice(-2).map((r) => r.arm), ['swap', 'swap'], 'swap runs are queued last');

    const first = await runExperiment({ ...options, env: { ...process.env, FAIL_ON: 'mas-naive-grpo' } });
    const ok = first.runs.filter((r) => r.status === 'ok');
    assert.equal(ok.length, 8);
    const failed = first.runs.filter((r) => r.status !== 'ok');
    assert.deepEqual(failed.map((r) => `${r.arm} ${r.seed}`), ['mas-naive-grpo 0', 'mas-naive-grpo 1']);
    assert.match(failed[0]!.error!, /troupe train exited with 1:\nboom: simulated crash/);
    assert.ok(existsSync(join(out, 'runs', 'plan-path', 'mas-naive-grpo', 'seed-0', 'failure.json')));

    // 48 samples per step (3/4 of 64): 10 planned steps give 480, top-ups to 13 → 624, within 5% of 640.
    for (const r of ok.filter((x) => ARMS[x.arm].rl)) {
      assert.equal(r.samples.plannedSteps, 10);
      assert.equal(r.samples.generated, 624, `${r.arm} ${r.seed}`);
      assert.ok(Math.abs(r.samples.generated - 640) <= 0.1 * 640);
      assert.equal(r.samples.topUps, 1);
    }
    const swap = ok.find((r) => r.arm === 'swap' && r.seed === 1)!;
    assert.equal(swap.eval!.successRate, 0.2);
    assert.equal(swap.control!.successes, 2);
    const calls = readFileSync(join(dir, 'calls.log'), 'utf8');
    const ck = '../../mas-atgrpo-per-role/seed-1/checkpoints/step-13';
    assert.ok(calls.includes(`models proposer=${ck}/executor,executor=${ck}/proposer\n`), calls);
    assert.ok(calls.includes(`models proposer=${ck}/proposer,executor=${ck}/executor\n`), 'the control');
    const swapSpec = readFileSync(join(out, 'runs', 'plan-path', 'swap', 'seed-1', 'swap.yaml'), 'utf8');
    assert.match(swapSpec, /seed: 1007/);

    // A rerun skips the finished runs and retries the failed ones (which now succeed).
    writeFileSync(join(dir, 'calls.log'), '');
    const second = await runExperiment(options);
    assert.equal(second.runs.filter((r) => r.status === 'ok').length, 10);
    const retried = readFileSync(join(dir, 'calls.log'), 'utf8').trim().split('\n').filter((l) => !l.startsWith('models'));
    assert.ok(retried.every((l) => l.includes('mas-naive-grpo')), retried.join('\n'));

    // A different plan in the same folder is refused before anything runs.
    assert.throws(() => planExperiment({ ...options, budget: 1280 }), /holds a run of a different plan/);

    const report = writeExperimentReport(out, second.runs, { games: ['plan-path'], arms, seeds: 2 });
    const table = readFileSync(report.table, 'utf8');
    assert.match(table, /\| MAS \+ AT-GRPO per-role \(`mas-atgrpo-per-role`\) \| 20\.0 ± 0\.0 \| 624 \| 2 \|/);
    assert.match(table, /\| single agent \+ GRPO \(`single-grpo`\) \| 10\.0 ± 0\.0 \| 624 \| 2 \|/);
    const results = JSON.parse(readFileSync(report.results, 'utf8')) as { runs: RunResult[]; cells: unknown[] };
    assert.equal(results.runs.length, 10);
    assert.equal(results.cells.length, 5);
    assert.ok(report.chartSpecs.every((f) => existsSync(f)));
  });
});

describe('experiment: the table', () => {
  const run = (game: string, arm: ArmName, seed: number, success: number | undefined, generated = 0): RunResult => ({
    game, arm, seed, specSeed: 7 + 1000 * seed, status: success === undefined ? 'failed' : 'ok', level: 'L3', algorithm: ARMS[arm].algorithm,
    ...(success === undefined ? { error: 'troupe train exited with 1:\nout of memory | oops' } : { eval: { split: 'test', episodes: 50, successes: Math.round(success * 50), successRate: success, ci95: [0, 1] as [number, number] } }),
    samples: { budget: 1024, generated, trained: generated, steps: 16, plannedSteps: 16, batchSize: 4, branches: 4, samplesPerStep: 64, topUps: 0 },
    seconds: 60, dir: `runs/${game}/${arm}/seed-${seed}`, digest: 'x',
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
  });

  it('formats rows = arms, columns = games, samples and seeds, and a per-run table', () => {
    const runs = [
      run('plan-path', 'mas-prompt', 0, 0.1), run('plan-path', 'mas-prompt', 1, 0.3),
      run('sokoban', 'mas-prompt', 0, 0), run('sokoban', 'mas-prompt', 1, 0.04),
      run('plan-path', 'mas-atgrpo-per-role', 0, 0.96, 1000), run('plan-path', 'mas-atgrpo-per-role', 1, 0.9, 1040),
      run('sokoban', 'mas-atgrpo-per-role', 0, 0.2, 1024), run('sokoban', 'mas-atgrpo-per-role', 1, undefined),
      { ...run('plan-path', 'swap', 0, 0.06), control: { episodes: 50, successes: 48, successRate: 0.96 } },
      { ...run('plan-path', 'swap', 1, 0.02), control: { episodes: 50, successes: 45, successRate: 0.9 } },
    ];
    const settings = { games: ['plan-path', 'sokoban'], arms: ['mas-prompt', 'mas-atgrpo-per-role', 'swap'] as ArmName[], seeds: 2, budgets: { 'plan-path': 1024, sokoban: 1024 } };
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
    assert.match(md, /\| plan-path \| mas-atgrpo-per-role \| 0 \| L3 \| 48\/50 = 96\.0% \(0\.0–100\.0\) \| 1,000 \| 1,000 \| 16 \(16\) \| 4 × 4 \| 60 \|/);
    assert.match(md, /\| sokoban \| mas-atgrpo-per-role \| 1 \| L3 \| failed: troupe train exited with 1: \|/);
    const cells = tableCells(runs, settings);
    assert.deepEqual(cells.find((c) => c.game === 'sokoban' && c.arm === 'mas-atgrpo-per-role')!.values, [0.2]);

    const [success, samples] = tableCharts(runs, settings);
    assert.equal(success!.name, 'success');
    const values = (success!.spec.data as { values: { game: string; arm: string; success: number; lo: number; hi: number }[] }).values;
    const pr = values.find((v) => v.game === 'plan-path' && v.arm === 'mas-atgrpo-per-role')!;
    assert.ok(Math.abs(pr.success - 93) < 1e-9 && Math.abs(pr.hi - 97.2426) < 1e-3 && Math.abs(pr.lo - 88.7574) < 1e-3);
    assert.equal(values.length, 5, 'one bar per cell with a result');
    assert.equal((samples!.spec.data as { values: unknown[] }).values.length, 3, 'one point per successful RL run');
  });
});
