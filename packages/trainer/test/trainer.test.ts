import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import {
  type Move,
  groupAdvantages,
  resolveTrainerConfig,
  TrainerConfigError,
  type TraceRecord,
  type TeamSpec,
} from '@troupe/kernel';
import { CausalLmPolicy } from '@troupe/lm';
import {
  BASELINE_FILE,
  buildReport,
  InstanceSchedule,
  listCheckpoints,
  pairedComparison,
  samplerGap,
  saveTrainerCheckpoint,
  describeWeightMemory,
  Trainer,
  weightMemory,
  wilsonInterval,
  type BaselineEval,
  type MetricsRecord,
  type TrainingResult,
} from '../src/index.js';
import { microTeamSpec } from './trainer-helpers.js';

const readJsonl = <T>(file: string): T[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
const outDir = (): string => mkdtempSync(join(tmpdir(), 'troupe-train-'));
const paramsOf = (p: CausalLmPolicy): Float32Array[] =>
  [...p.model.params.values()].map((v) => new Float32Array(v.dataSync() as Float32Array));
const loraOf = (p: CausalLmPolicy): Float32Array[] =>
  [...p.model.lora.values()].flatMap((x) => [
    new Float32Array(x.a.dataSync() as Float32Array),
    new Float32Array(x.b.dataSync() as Float32Array),
  ]);
const same = (a: Float32Array[], b: Float32Array[]): boolean =>
  a.length === b.length && a.every((x, i) => x.length === b[i]!.length && x.every((v, j) => v === b[i]![j]));
/** Metrics without the wall-clock fields (time/*, perf/*), which differ between runs. */
/** The trace's AT-GRPO groups of one seat: its records keyed by (instance, turn), in trace order. */
function seatGroups<R extends TraceRecord>(trace: readonly R[], seat: string): R[][] {
  const groups = new Map<string, R[]>();
  for (const r of trace.filter((t) => t.seat === seat)) {
    const key = JSON.stringify([r.instanceUid, r.turn]);
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()];
}
const stable = (m: MetricsRecord): Record<string, unknown> =>
  Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('time/') && !k.startsWith('perf/')));

async function train(
  spec: TeamSpec,
  options: { out?: string; steps?: number; resume?: boolean; sampleBudget?: number } = {},
): Promise<{ trainer: Trainer; out: string; result: TrainingResult }> {
  const out = options.out ?? outDir();
  const trainer = await Trainer.create(spec, {
    outDir: out,
    skipFinalEval: true,
    ...(options.steps !== undefined ? { steps: options.steps } : {}),
    ...(options.resume ? { resume: true } : {}),
    ...(options.sampleBudget !== undefined ? { sampleBudget: options.sampleBudget } : {}),
  });
  const result = await trainer.run();
  return { trainer, out, result };
}

describe('trainer: configuration', () => {
  it('fills defaults (K, B, ε 0.2/0.2, token-mean, mini-batch 16, 1 epoch, grad clip 1) and names bad keys by path', () => {
    const c = resolveTrainerConfig({
      file: 'team.yaml',
      algorithm: { name: 'at-grpo', branches: 4, batchSize: 8, steps: 10, concurrency: 2 },
    });
    assert.equal(c.loss.clipLow, 0.2);
    assert.equal(c.loss.clipHigh, 0.2);
    assert.equal(c.loss.aggregation, 'token-mean');
    assert.equal(c.loss.klCoef, 0);
    assert.equal(c.loss.entropyCoef, 0);
    assert.equal(c.miniBatchSize, 16);
    assert.equal(c.epochs, 1);
    assert.equal(c.maxGradNorm, 1);
    assert.equal(c.warmStart, undefined);
    assert.throws(
      () =>
        resolveTrainerConfig({
          file: 'team.yaml',
          algorithm: {
            name: 'at-grpo',
            branches: 4,
            batchSize: 8,
            steps: 1,
            concurrency: 1,
            loss: { aggregation: 'token-sum' },
            lrr: 1,
          } as never,
        }),
      (err: unknown) =>
        err instanceof TrainerConfigError &&
        /team\.yaml/.test(err.message) &&
        /algorithm\.loss\.aggregation/.test(err.message) &&
        /algorithm(\.lrr|: .*lrr)/.test(err.message),
    );
    assert.throws(
      () =>
        resolveTrainerConfig({
          file: 'x.yaml',
          algorithm: { name: 'grpo-naive', branches: 1, batchSize: 1, steps: 1, concurrency: 1 },
        }),
      /algorithm\.branches/,
    );
  });

  it('computes the 95% Wilson interval', () => {
    const [lo, hi] = wilsonInterval(8, 10);
    assert.ok(Math.abs(lo - 0.4902) < 1e-3 && Math.abs(hi - 0.9433) < 1e-3, `${lo} ${hi}`);
    assert.deepEqual(wilsonInterval(0, 0), [0, 1]);
    const [lo0] = wilsonInterval(0, 20);
    assert.equal(lo0, 0);
  });
});

describe('trainer: grouped scoring', () => {
  it('scores K completions of one prompt (prompt encoded once, cache tiled) like scoring each prompt ++ completion', async () => {
    const { loadCheckpoint } = await import('@troupe/lm');
    const { recomputeLogprobs } = await import('@troupe/lm');
    const { recomputeGroupLogprobs } = await import('../src/index.js');
    const { microCheckpoint } = await import('./trainer-helpers.js');
    const model = await loadCheckpoint(await microCheckpoint());
    try {
      const groups = [
        { promptIds: [5, 9, 33, 40, 41, 7], completions: [[3, 4, 5], [6], [], [7, 8, 9, 10, 2]] },
        { promptIds: [11], completions: [[12, 13]] },
      ];
      const pairs = groups.flatMap((g) => g.completions.map((c) => ({ promptIds: g.promptIds, completionIds: c })));
      const agree = (a: number[][], b: number[][]): void => {
        assert.equal(a.length, b.length);
        a.forEach((row, r) => {
          assert.equal(row.length, b[r]!.length);
          row.forEach((x, j) => assert.ok(Math.abs(x - b[r]![j]!) < 1e-4, `row ${r} token ${j}: ${x} vs ${b[r]![j]}`));
        });
      };
      agree(await recomputeGroupLogprobs(model, groups, 0, 3), await recomputeLogprobs(model, pairs, { padId: 0 }));
      // a group's temperature scores softmax(logits / T), like pairs with that temperature
      const hot = [{ ...groups[0]!, temperature: 0.3 }, groups[1]!];
      const hotPairs = pairs.map((p, i) => (i < 4 ? { ...p, temperature: 0.3 } : p));
      const scaled = await recomputeGroupLogprobs(model, hot, 0, 3);
      agree(scaled, await recomputeLogprobs(model, hotPairs, { padId: 0 }));
      assert.ok(
        Math.abs(scaled[0]![0]! - (await recomputeGroupLogprobs(model, groups, 0))[0]![0]!) > 1e-3,
        'temperature changes the scores',
      );
    } finally {
      model.dispose();
    }
  });
});

describe('trainer: sampler gap', () => {
  it('is the mean and largest |recomputed − sampled| log-prob, and refuses rows that do not line up', () => {
    const g = samplerGap([[-1, -2], [-0.5]], [[-1.1, -2], [-0.2]]);
    assert.ok(Math.abs(g.mean - 0.4 / 3) < 1e-12 && Math.abs(g.max - 0.3) < 1e-12);
    assert.throws(() => samplerGap([[-1, -2]], [[-1]]), /sequence 0 has 2 tokens but 1 sampler log-probs/);
    assert.throws(() => samplerGap([[-1]], []), /0 rows of sampler log-probs for 1 sequences/);
  });
});

describe('trainer: loss aggregation, KL and entropy', () => {
  it('token-mean, seq-mean-token-mean and dr-grpo reduce per-token values as documented', async () => {
    const { aggregate } = await import('../src/index.js');
    // two sequences: lengths 1 and 3; values 4 | 1 1 1
    const x = tf.tensor2d([
      [4, 0, 0],
      [1, 1, 1],
    ]);
    const mask = tf.tensor2d([
      [1, 0, 0],
      [1, 1, 1],
    ]);
    const v = (how: 'token-mean' | 'seq-mean-token-mean' | 'dr-grpo'): number =>
      tf.tidy(() => aggregate(x.mul(mask), mask, how, 4).dataSync()[0]!);
    assert.ok(Math.abs(v('token-mean') - 7 / 4) < 1e-6);
    assert.ok(Math.abs(v('seq-mean-token-mean') - (4 + 1) / 2) < 1e-6);
    assert.ok(Math.abs(v('dr-grpo') - (4 / 4 + 3 / 4) / 2) < 1e-6);
    x.dispose();
    mask.dispose();
  });

  it('a PPO step with a KL penalty and an entropy bonus reports them; on-policy the ratio is 1 (nothing clipped)', async () => {
    const { loadCheckpoint } = await import('@troupe/lm');
    const { AdamW } = await import('@troupe/lm');
    const { ppoStep, recomputeGroupLogprobs } = await import('../src/index.js');
    const { microCheckpoint } = await import('./trainer-helpers.js');
    const model = await loadCheckpoint(await microCheckpoint());
    const ref = await loadCheckpoint(await microCheckpoint());
    const opt = new AdamW(model.trainableVariables(), { lr: 1e-2, maxGradNorm: 1 });
    try {
      const groups = [
        {
          promptIds: [5, 9, 33],
          completions: [
            [3, 4],
            [6, 7, 8],
          ],
        },
      ];
      const old = await recomputeGroupLogprobs(model, groups, 0);
      const refLp = await recomputeGroupLogprobs(ref, groups, 0);
      const settings = {
        clipLow: 0.2,
        clipHigh: 0.2,
        aggregation: 'token-mean' as const,
        klCoef: 0.1,
        entropyCoef: 0.01,
        maxTokens: 8,
        padId: 0,
      };
      const r = ppoStep(model, opt, { groups, oldLogprobs: old, advantages: [1, -1], refLogprobs: refLp }, settings);
      assert.equal(r.clipFraction, 0);
      assert.ok(Math.abs(r.approxKl) < 1e-5);
      assert.ok(Math.abs(r.kl) < 1e-5, 'KL to an identical reference is 0');
      assert.ok(r.entropy > 0 && Number.isFinite(r.loss) && r.tokens === 5);
      const r2 = ppoStep(model, opt, { groups, oldLogprobs: old, advantages: [1, -1], refLogprobs: refLp }, settings);
      assert.ok(r2.kl > 0, 'after an update the policy moved away from the reference');
    } finally {
      opt.dispose();
      model.dispose();
      ref.dispose();
    }
  });

  for (const aggregation of ['token-mean', 'seq-mean-token-mean', 'dr-grpo'] as const) {
    it(`micro-batches accumulate to the one-pass PPO step (${aggregation}, with KL and entropy)`, async () => {
      const { loadCheckpoint } = await import('@troupe/lm');
      const { AdamW } = await import('@troupe/lm');
      const { ppoStep, recomputeGroupLogprobs } = await import('../src/index.js');
      const { microCheckpoint } = await import('./trainer-helpers.js');
      // Three groups of different prompt and completion lengths; the off-policy old log-probs make some ratios clip.
      const groups = [
        {
          promptIds: [5, 9, 33],
          completions: [
            [3, 4],
            [6, 7, 8],
          ],
        },
        { promptIds: [40, 41], completions: [[9], [10, 11, 12, 13], [14, 15]] },
        { promptIds: [7, 8, 9, 10, 11], completions: [[20, 21, 22]] },
      ];
      const advantages = [1, -1, 0.5, -0.25, 2, -1.5];
      const runStep = async (microBatchSize: number | undefined) => {
        const model = await loadCheckpoint(await microCheckpoint());
        const ref = await loadCheckpoint(await microCheckpoint());
        const opt = new AdamW(model.trainableVariables(), { lr: 1e-2, maxGradNorm: 1 });
        try {
          const old = (await recomputeGroupLogprobs(model, groups, 0)).map((row, r) =>
            row.map((x, j) => x + 0.3 * Math.sin(r + j)),
          );
          const refLp = (await recomputeGroupLogprobs(ref, groups, 0)).map((row) => row.map((x) => x - 0.1));
          const settings = {
            clipLow: 0.2,
            clipHigh: 0.2,
            aggregation,
            klCoef: 0.1,
            entropyCoef: 0.01,
            maxTokens: 8,
            padId: 0,
            ...(microBatchSize ? { microBatchSize } : {}),
          };
          const r = ppoStep(model, opt, { groups, oldLogprobs: old, advantages, refLogprobs: refLp }, settings);
          const weights = model.trainableVariables().map((v) => Array.from(v.dataSync()));
          return { r, weights };
        } finally {
          opt.dispose();
          model.dispose();
          ref.dispose();
        }
      };
      const whole = await runStep(undefined);
      for (const micro of [1, 3]) {
        const acc = await runStep(micro);
        for (const k of [
          'loss',
          'policyLoss',
          'kl',
          'entropy',
          'clipFraction',
          'approxKl',
          'gradNorm',
          'tokens',
        ] as const) {
          assert.ok(
            Math.abs(acc.r[k] - whole.r[k]) < 1e-5,
            `microBatchSize ${micro}: ${k} ${acc.r[k]} vs ${whole.r[k]}`,
          );
        }
        assert.ok(whole.r.clipFraction > 0, 'the check covers clipped tokens');
        const maxDiff = Math.max(
          ...whole.weights.flatMap((w, i) => w.map((x, j) => Math.abs(x - acc.weights[i]![j]!))),
        );
        assert.ok(maxDiff < 1e-5, `microBatchSize ${micro}: weights differ by ${maxDiff}`);
      }
    });
  }

  for (const aggregation of ['token-mean', 'seq-mean-token-mean', 'dr-grpo'] as const) {
    it(`groups whose advantages are all 0 are not scored, and the update is the same (${aggregation})`, async () => {
      const { loadCheckpoint } = await import('@troupe/lm');
      const { AdamW } = await import('@troupe/lm');
      const { ppoUpdate } = await import('../src/ppo-update.js');
      const { microCheckpoint } = await import('./trainer-helpers.js');
      // Groups 0 and 2 have rewards that were all equal (advantages 0); a mini-batch of group 2 alone has nothing to
      // score; epoch 2 moves the policy, so its ratios are off 1 and clip.
      const groups = [
        {
          promptIds: [5, 9, 33],
          completions: [
            [3, 4],
            [6, 7, 8],
          ],
        },
        { promptIds: [40, 41], completions: [[9], [10, 11, 12, 13], [14, 15]] },
        { promptIds: [7, 8, 9, 10, 11], completions: [[20, 21, 22], [23]] },
        { promptIds: [12, 13], completions: [[30, 31], [32]] },
      ];
      const advantages = [0, 0, 1.2, -0.6, -0.6, 0, 0, 1, -1];
      const epochs = [
        [[0, 1], [2], [3]],
        [
          [3, 0],
          [1, 2],
        ],
      ];
      const runUpdate = async (scoreZeroAdvantageGroups: boolean) => {
        const model = await loadCheckpoint(await microCheckpoint());
        const opt = new AdamW(model.trainableVariables(), { lr: 5e-2, maxGradNorm: 1 });
        try {
          const settings = {
            clipLow: 0.2,
            clipHigh: 0.2,
            aggregation,
            klCoef: 0,
            entropyCoef: 0,
            maxTokens: 8,
            padId: 0,
            microBatchSize: 3,
            scoreZeroAdvantageGroups,
          };
          const out = await ppoUpdate(model, opt, { groups, advantages, epochs }, settings);
          return {
            out,
            weights: model.trainableVariables().map((v) => Array.from(v.dataSync())),
            steps: opt.stepCount,
          };
        } finally {
          opt.dispose();
          model.dispose();
        }
      };
      const all = await runUpdate(true);
      const skipped = await runUpdate(false);
      assert.equal(skipped.steps, all.steps, 'one optimizer step per mini-batch, the unscored one too');
      assert.equal(skipped.out.optimizer_steps, 5);
      for (const k of ['loss', 'policy_loss', 'grad_norm', 'tokens'] as const) {
        assert.ok(Math.abs(skipped.out[k]! - all.out[k]!) < 1e-6, `${k}: ${skipped.out[k]} vs ${all.out[k]}`);
      }
      assert.equal(all.out.scored_samples, 9);
      assert.equal(skipped.out.scored_samples, 5, 'groups 1 and 3 only');
      assert.equal(skipped.out.scored_tokens, 2 * (1 + 4 + 2 + 2 + 1), 'their tokens, in both epochs');
      assert.ok(all.out.clip_fraction! > 0, 'the check covers clipped tokens');
      const maxDiff = Math.max(
        ...all.weights.flatMap((w, i) => w.map((x, j) => Math.abs(x - skipped.weights[i]![j]!))),
      );
      assert.ok(maxDiff < 1e-6, `weights differ by ${maxDiff}`);
    });
  }

  it('a loss with a KL or entropy term scores every group (their terms are not 0)', async () => {
    const { skipsGroup } = await import('../src/index.js');
    const base = {
      clipLow: 0.2,
      clipHigh: 0.2,
      aggregation: 'token-mean' as const,
      klCoef: 0,
      entropyCoef: 0,
      maxTokens: 8,
      padId: 0,
    };
    assert.equal(skipsGroup(base, [1, 0, 0, 0], 1, 3), true);
    assert.equal(skipsGroup(base, [1, 0, 0, 0], 0, 3), false, 'a nonzero advantage');
    assert.equal(skipsGroup({ ...base, klCoef: 0.1 }, [0, 0], 0, 2), false);
    assert.equal(skipsGroup({ ...base, entropyCoef: 0.01 }, [0, 0], 0, 2), false);
    assert.equal(skipsGroup({ ...base, scoreZeroAdvantageGroups: true }, [0, 0], 0, 2), false);
  });

  it('an RL update that ran out of wasm memory names the spec file and algorithm.microBatchSize', async () => {
    const { outOfMemoryHint } = await import('../src/policy-updates.js');
    const hint = outOfMemoryHint(
      new Error("RL update of policy 'proposer' failed in its worker thread: memory access out of bounds"),
      '/x/team.yaml',
      16,
    ) as Error;
    assert.equal(hint.name, 'ConfigError', 'user-facing: printed without a stack');
    assert.match(hint.message, /\/x\/team\.yaml.*algorithm\.microBatchSize \(now 16/s);
    assert.match(hint.message, /--resume/);
    const other = new Error('some other failure');
    assert.equal(outOfMemoryHint(other, '/x/team.yaml', 16), other, 'other failures pass through');
  });
});

describe('trainer: AT-GRPO steps on a micro team', function () {
  this.timeout(300_000);

  it('runs steps end to end: weights move, versions advance, trace and metrics are written, the zero-variance fraction is reported', async () => {
    const spec = await microTeamSpec({ mapping: 'per-role', temperatures: { proposer: 0.5 } });
    const out = outDir();
    const trainer = await Trainer.create(spec, { outDir: out, skipFinalEval: true });
    try {
      const p = trainer.team.policies.get('proposer') as CausalLmPolicy;
      const before = paramsOf(p);
      await trainer.run();
      assert.equal(trainer.level, 'L3');
      assert.ok(!same(before, paramsOf(p)), 'the proposer model changed');
      assert.equal(p.version, 2, 'one version per training step');
      const tensorsAfter = tf.memory().numTensors;
      const m3 = await trainer.step(3);
      assert.equal(tf.memory().numTensors, tensorsAfter, 'no tensor leaks across training steps');
      assert.equal(m3['loss/proposer/version'], 3);
      const metrics = readJsonl<MetricsRecord>(join(out, 'metrics.jsonl'));
      assert.deepEqual(
        metrics.map((m) => m.step),
        [1, 2],
      );
      const trace = readJsonl<TraceRecord & { step: number }>(join(out, 'trace.jsonl'));
      for (const m of metrics) {
        for (const k of [
          'rollout/success_rate',
          'rollout/zero_variance_fraction',
          'loss/proposer/policy_loss',
          'loss/executor/policy_loss',
          'time/step',
          'time/generate',
          'time/update',
          'time/overhead',
        ]) {
          assert.equal(typeof m[k], 'number', `${k} in step ${m.step}`);
          assert.ok(Number.isFinite(m[k] as number), `${k} finite`);
        }
        // the reported zero-variance fraction is the share of the step's groups whose rewards are all equal
        const groups = new Map<string, number[]>();
        for (const r of trace.filter((t) => t.step === m.step)) {
          const key = JSON.stringify([r.instanceUid, r.turn, r.seat]);
          groups.set(key, [...(groups.get(key) ?? []), r.reward]);
        }
        const zero = [...groups.values()].filter((rs) => rs.every((x) => x === rs[0])).length;
        assert.equal(m['rollout/groups'], groups.size);
        assert.ok(Math.abs((m['rollout/zero_variance_fraction'] as number) - zero / groups.size) < 1e-12);
        assert.equal(m['rollout/samples'], trace.filter((t) => t.step === m.step).length);
        // on-policy: the trainer scores exactly the tokens, contexts and distribution (the proposer's at T = 0.5) the
        // sampler generated
        for (const p of ['proposer', 'executor']) {
          assert.ok(
            (m[`loss/${p}/sampler_gap_max`] as number) < 1e-4,
            `${p} sampler gap ${m[`loss/${p}/sampler_gap_max`]}`,
          );
          assert.ok((m[`loss/${p}/sampler_gap_mean`] as number) <= (m[`loss/${p}/sampler_gap_max`] as number));
        }
      }
      assert.deepEqual(await listCheckpoints(out), [1, 2], 'keeps the 2 newest checkpoints');
      assert.ok(existsSync(join(out, 'checkpoints', 'step-2', 'proposer', 'model.safetensors')));
      assert.ok(existsSync(join(out, 'checkpoints', 'step-2', 'trainer', 'executor.optimizer.safetensors')));
    } finally {
      await trainer.dispose();
    }
  });

  it('zeroVarianceGroups: skip trains only on groups with a signal; train also feeds the zero-advantage ones to the optimizer', async () => {
    const runOne = async (mode: 'skip' | 'train') => {
      // the proposer samples once per turn: its groups of one have no signal
      const spec = await microTeamSpec({
        mapping: 'per-role',
        algorithm: { steps: 1, branches: 3, seatBranches: { proposer: 1 }, miniBatchSize: 3, zeroVarianceGroups: mode },
      });
      const { trainer, out } = await train(spec);
      try {
        return {
          trace: readJsonl<TraceRecord & { step: number }>(join(out, 'trace.jsonl')),
          m: readJsonl<MetricsRecord>(join(out, 'metrics.jsonl')).find((r) => r.kind === 'train')!,
        };
      } finally {
        await trainer.dispose();
      }
    };
    const skip = await runOne('skip');
    const all = await runOne('train');
    assert.deepEqual(
      skip.trace.map((r) => r.completion),
      all.trace.map((r) => r.completion),
      'the same rollouts',
    );
    for (const p of ['proposer', 'executor']) {
      const groups = new Map<string, number[]>();
      for (const r of skip.trace.filter((t) => t.policy === p))
        groups.set(JSON.stringify([r.instanceUid, r.turn]), [
          ...(groups.get(JSON.stringify([r.instanceUid, r.turn])) ?? []),
          r.advantage!,
        ]);
      const signal = [...groups.values()].filter((a) => a.some((x) => x !== 0));
      const size = p === 'proposer' ? 1 : 3;
      assert.ok(groups.size > 0 && [...groups.values()].every((a) => a.length === size));
      assert.equal(skip.m[`loss/${p}/trained_samples`], signal.flat().length);
      assert.equal(
        skip.m[`loss/${p}/optimizer_steps`],
        signal.length > 0 ? Math.ceil(signal.length / (3 / size)) : undefined,
        'mini-batches of 3 sequences',
      );
      assert.equal(all.m[`loss/${p}/trained_samples`], [...groups.values()].flat().length);
      assert.equal(all.m[`loss/${p}/optimizer_steps`], Math.ceil(groups.size / (3 / size)));
    }
    assert.equal(skip.m['loss/proposer/trained_samples'], 0, 'groups of one never have a signal');
    assert.ok((skip.m['loss/executor/trained_samples'] as number) > 0, 'the check covers groups with a signal');
  });

  it('why zero-advantage steps are skipped: after many zero-gradient AdamW steps one real gradient moves a weight ~12× the learning rate', async () => {
    const { AdamW } = await import('@troupe/lm');
    const displacement = (zeroStepsBefore: number, zeroStepsAfter: number): number => {
      const x = tf.variable(tf.scalar(0), true, `x${zeroStepsBefore}-${zeroStepsAfter}`);
      const opt = new AdamW([x], { lr: 1e-3 });
      const step = (g: number) =>
        tf.tidy(() => {
          opt.apply({ [x.name]: tf.scalar(g) });
        });
      for (let i = 0; i < zeroStepsBefore; i++) step(0);
      step(1);
      for (let i = 0; i < zeroStepsAfter; i++) step(0);
      const d = -x.dataSync()[0]!;
      opt.dispose();
      x.dispose();
      return d;
    };
    // skip: the one mini-batch with a signal is the only optimizer step: the weight moves by the learning rate
    assert.ok(Math.abs(displacement(0, 0) - 1e-3) < 1e-6);
    // train: 150 zero-gradient steps before it (steps whose groups had equal rewards) and 40 after it
    const late = displacement(150, 40);
    assert.ok(late > 1e-2, `the same gradient moves it ${late / 1e-3}× the learning rate`);
  });

  it('algorithm.seatBranches: the proposer samples once per turn and its groups of one train nothing; the executor keeps K', async () => {
    const spec = await microTeamSpec({
      mapping: 'per-role',
      algorithm: { steps: 1, branches: 3, seatBranches: { proposer: 1 } },
    });
    const { trainer, out } = await train(spec);
    try {
      const trace = readJsonl<TraceRecord & { step: number }>(join(out, 'trace.jsonl'));
      const bySeat = (seat: string) => seatGroups(trace, seat);
      assert.ok(
        bySeat('proposer').length > 0 && bySeat('proposer').every((g) => g.length === 1 && g[0]!.advantage === 0),
      );
      assert.ok(bySeat('executor').length > 0 && bySeat('executor').every((g) => g.length === 3));
      const m = readJsonl<MetricsRecord>(join(out, 'metrics.jsonl')).find((r) => r.kind === 'train')!;
      assert.equal(m['loss/proposer/trained_samples'], 0, 'nothing of the proposer is trained on');
      assert.equal(m['loss/proposer/optimizer_steps'], undefined, 'and it takes no optimizer step');
      assert.equal(m['rollout/samples'], trace.length);
    } finally {
      await trainer.dispose();
    }
  });

  it('algorithm.freeze: the frozen executor plays and is traced with its groups, but neither the warm start nor RL changes its weights', async () => {
    const spec = await microTeamSpec({
      mapping: 'per-role',
      algorithm: {
        steps: 2,
        branches: 3,
        freeze: ['executor'],
        warmStart: { demonstrations: 4, epochs: 1, miniBatchSize: 4 },
      },
    });
    const weights = (t: Trainer, policy: string) => {
      const lm = t.handles.find((h) => h.name === policy)!.trainable!;
      return lm.model.trainableVariables().map((v) => Array.from(v.dataSync()));
    };
    const out = outDir();
    const trainer = await Trainer.create(spec, { outDir: out, skipFinalEval: true });
    try {
      const before = { proposer: weights(trainer, 'proposer'), executor: weights(trainer, 'executor') };
      await trainer.run();
      assert.deepEqual(
        weights(trainer, 'executor'),
        before.executor,
        "the executor's weights are exactly those it started with",
      );
      assert.notDeepEqual(weights(trainer, 'proposer'), before.proposer, 'the proposer learned');
      const trace = readJsonl<TraceRecord & { step: number }>(join(out, 'trace.jsonl'));
      const groups = seatGroups(trace, 'executor');
      assert.ok(groups.length > 0 && groups.every((g) => g.length === 3), 'its groups are played and traced');
      const records = readJsonl<MetricsRecord>(join(out, 'metrics.jsonl'));
      const warm = records.find((r) => r.kind === 'warm-start')!;
      assert.ok((warm['warmstart/proposer/samples'] as number) > 0);
      assert.equal(warm['warmstart/executor/samples'], undefined, 'no demonstrations of its seat are trained');
      for (const m of records.filter((r) => r.kind === 'train')) {
        assert.equal(m['loss/executor/trained_samples'], undefined, `step ${m.step}: no RL update of it`);
        assert.ok(m['loss/proposer/samples'] !== undefined);
      }
    } finally {
      await trainer.dispose();
    }
    assert.throws(
      () => resolveTrainerConfig({ ...spec, algorithm: { ...spec.algorithm, freeze: ['coder'] } }),
      /algorithm\.freeze\[0\]: no policy 'coder' in 'policies' \(the team's policies: proposer, executor\)/,
    );
    assert.throws(
      () => resolveTrainerConfig({ ...spec, algorithm: { ...spec.algorithm, freeze: 'executor' } }),
      /algorithm\.freeze: must be array/,
    );
    assert.deepEqual(
      resolveTrainerConfig({ ...spec, algorithm: { ...spec.algorithm, freeze: undefined } }).freeze,
      [],
      'default: none',
    );
  });

  it('algorithm.greedyBranch: branch 0 of each executor group is its greedy decision, scored with the group at the seat temperature', async () => {
    const spec = await microTeamSpec({
      mapping: 'per-role',
      temperatures: { executor: 0.5 },
      algorithm: { steps: 1, branches: 3, greedyBranch: { executor: true }, zeroVarianceGroups: 'train' },
    });
    const { trainer, out } = await train(spec);
    try {
      const trace = readJsonl<TraceRecord & { step: number }>(join(out, 'trace.jsonl'));
      const executor = trace.filter((r) => r.seat === 'executor');
      assert.ok(
        executor.length > 0 && executor.every((r) => (r.greedy === true) === (r.branch === 0)),
        'branch 0, and only it, is greedy',
      );
      assert.ok(trace.filter((r) => r.seat === 'proposer').every((r) => r.greedy === undefined));
      const m = readJsonl<MetricsRecord>(join(out, 'metrics.jsonl')).find((r) => r.kind === 'train')!;
      assert.equal(
        m['loss/executor/trained_samples'],
        executor.length,
        'the greedy branch is trained on with its group',
      );
      // rollout/greedy_beaten/<seat>: the fraction of the seat's groups where a sample out-scored its greedy branch
      const groups = seatGroups(trace, 'executor');
      const beaten = groups.filter((g) =>
        g.some((r) => r.branch > 0 && r.reward > g.find((x) => x.branch === 0)!.reward),
      ).length;
      assert.equal(m['rollout/greedy_beaten/executor'], beaten / groups.length);
      assert.equal(m['rollout/greedy_beaten/proposer'], undefined, 'the proposer has no greedy branch');
      // its log-probs are of the distribution its group is scored at (T = 0.5), like the sampled branches'
      assert.ok(
        (m['loss/executor/sampler_gap_max'] as number) < 1e-4,
        `sampler gap ${m['loss/executor/sampler_gap_max']}`,
      );
    } finally {
      await trainer.dispose();
    }
    const plain = { ...spec, algorithm: { ...spec.algorithm } };
    assert.equal(
      resolveTrainerConfig({ ...plain, algorithm: { ...plain.algorithm, greedyBranch: undefined } }).greedyBranch,
      false,
      'default: no greedy branch',
    );
    assert.throws(
      () => resolveTrainerConfig({ ...plain, algorithm: { ...plain.algorithm, greedyBranch: { coder: true } } }),
      /algorithm\.greedyBranch\.coder: no seat 'coder' in 'seats'/,
    );
    assert.throws(
      () =>
        resolveTrainerConfig({ ...plain, algorithm: { ...plain.algorithm, name: 'grpo-naive', greedyBranch: true } }),
      /algorithm\.greedyBranch: the greedy branch is a branch of AT-GRPO's tree; 'grpo-naive' has none/,
    );
    assert.throws(
      () => resolveTrainerConfig({ ...plain, algorithm: { ...plain.algorithm, greedyBranch: 'yes' } }),
      /algorithm\.greedyBranch: must be boolean/,
    );
    assert.throws(
      () =>
        resolveTrainerConfig({ ...plain, algorithm: { ...plain.algorithm, greedyBranch: false, selection: 'greedy' } }),
      /algorithm\.selection: 'greedy' continues each seat from its greedy branch; set algorithm\.greedyBranch/,
    );
  });

  it("algorithm.selection: greedy: the tree continues from the executor's greedy branch, the proposer from its best", async () => {
    const spec = await microTeamSpec({
      mapping: 'per-role',
      algorithm: { steps: 1, branches: 3, greedyBranch: { executor: true }, selection: 'greedy' },
    });
    const { trainer, out } = await train(spec);
    try {
      const trace = readJsonl<TraceRecord & { step: number }>(join(out, 'trace.jsonl'));
      const selected = (seat: string) => trace.filter((r) => r.seat === seat && r.selected);
      assert.ok(
        selected('executor').length > 0 && selected('executor').every((r) => r.branch === 0 && r.greedy === true),
      );
      for (const g of seatGroups(trace, 'proposer'))
        assert.equal(
          g.find((r) => r.selected)!.reward,
          Math.max(...g.map((r) => r.reward)),
          'the proposer selects its best branch',
        );
    } finally {
      await trainer.dispose();
    }
  });

  it('scores each seat at its sampling temperature (loss.logprobTemperature: sampling), or at 1 with `model`', async () => {
    const runOne = async (mode: 'sampling' | 'model') => {
      const spec = await microTeamSpec({
        mapping: 'per-role',
        temperatures: { proposer: 0.5 },
        algorithm: { steps: 1, loss: { logprobTemperature: mode } },
      });
      const out = outDir();
      const trainer = await Trainer.create(spec, { outDir: out, skipFinalEval: true });
      try {
        assert.equal(trainer.config.loss.logprobTemperature, mode);
        await trainer.run();
        const params = (seat: string): Float32Array[] => paramsOf(trainer.team.policies.get(seat) as CausalLmPolicy);
        const trace = readJsonl<TraceRecord>(join(out, 'trace.jsonl'));
        return {
          proposer: params('proposer'),
          executor: params('executor'),
          metrics: readJsonl<MetricsRecord>(join(out, 'metrics.jsonl'))[0]!,
          trace,
        };
      } finally {
        await trainer.dispose();
      }
    };
    const scaled = await runOne('sampling');
    const raw = await runOne('model');
    assert.deepEqual(
      raw.trace.map((t) => [t.completion, t.reward]),
      scaled.trace.map((t) => [t.completion, t.reward]),
      'the same rollouts',
    );
    assert.ok(same(raw.executor, scaled.executor), 'the executor samples at T = 1: the same update either way');
    assert.ok(
      !same(raw.proposer, scaled.proposer),
      'the proposer samples at T = 0.5: its update depends on the scored distribution',
    );
    // the sampler gap is reported where the trainer scores the sampled distribution, and is then float rounding
    assert.ok((scaled.metrics['loss/proposer/sampler_gap_max'] as number) < 1e-4);
    assert.equal(raw.metrics['loss/proposer/sampler_gap_max'], undefined);
    assert.ok((raw.metrics['loss/executor/sampler_gap_max'] as number) < 1e-4);
  });

  it('satisfies the AT-GRPO trace invariants for every group, and no train instance is in an eval split', async () => {
    const spec = await microTeamSpec({ mapping: 'shared', algorithm: { branches: 3, batchSize: 3, steps: 1 } });
    const out = outDir();
    const trainer = await Trainer.create(spec, { outDir: out, skipFinalEval: true });
    try {
      await trainer.run();
      assert.equal(trainer.level, 'L1');
      const env = trainer.team.environment;
      const trace = readJsonl<TraceRecord & { step: number }>(join(out, 'trace.jsonl'));
      const K = 3;
      const byEpisode = new Map<string, (TraceRecord & { step: number })[]>();
      for (const r of trace) byEpisode.set(r.episodeId, [...(byEpisode.get(r.episodeId) ?? []), r]);
      assert.equal(byEpisode.size, 3);
      let groups = 0;
      for (const [episodeId, recs] of byEpisode) {
        // uid = step-1/train/<index>/<key12>
        const m = /^step-1\/train\/(\d+)\/([0-9a-f]+)$/.exec(recs[0]!.instanceUid);
        assert.ok(m, `uid ${recs[0]!.instanceUid}`);
        const instance = env.instance('train', Number(m[1]), spec.seed);
        assert.equal(env.instanceKey(instance).slice(0, 12), m[2]);
        let state = env.reset(instance);
        for (let i = 0; i < recs.length; i += K) {
          const g = recs.slice(i, i + K);
          groups++;
          assert.equal(g.length, K, `${episodeId}: K samples per group`);
          assert.ok(
            g.every((r) => r.turn === g[0]!.turn && r.seat === g[0]!.seat && r.instanceUid === g[0]!.instanceUid),
          );
          assert.deepEqual(
            g.map((r) => r.branch),
            [0, 1, 2],
          );
          for (const r of g) assert.deepEqual(r.prompt, g[0]!.prompt, 'one prompt per group');
          const expected = groupAdvantages(g.map((r) => r.reward));
          g.forEach((r, c) =>
            assert.ok(Math.abs(r.advantage! - expected[c]!) < 1e-6, `advantage ${r.advantage} vs ${expected[c]}`),
          );
          const sel = g.filter((r) => r.selected);
          assert.equal(sel.length, 1, 'exactly one selected branch');
          assert.equal(sel[0]!.reward, Math.max(...g.map((r) => r.reward)), 'the selected branch has the max reward');
          // the prompt is the role's prompt of the state reached through the previously selected branches
          const seat = trainer.team.seats.find((s) => s.name === g[0]!.seat)!;
          const ctx = { seat: seat.name, actionType: env.seats.find((s) => s.name === seat.name)!.actionType };
          assert.deepEqual(
            g[0]!.prompt,
            seat.role.prompt(env.observe(state, seat.name), ctx),
            `${episodeId} t${g[0]!.turn} ${seat.name}: prompt from the selected state`,
          );
          const chosen = sel[0]!;
          const move: Move =
            chosen.parseError === null
              ? { kind: 'action', action: chosen.action, text: chosen.completion }
              : { kind: 'invalid', error: chosen.parseError, text: chosen.completion };
          state = (await env.step(state, seat.name, move)).state;
        }
      }
      assert.ok(groups >= 6, `${groups} groups`);
      // every sample is tagged with its policy and version; trained-on samples were produced by version 0
      assert.ok(trace.every((r) => r.policy === 'shared' && r.policyVersion === 0));
      // no train instance is evaluated
      const trainKeys = new Set([...byEpisode.values()].map((recs) => recs[0]!.instanceUid.split('/')[3]));
      for (const split of ['validation', 'test'] as const) {
        const ev = await trainer.evaluate(split, 12);
        assert.equal(ev.episodes, 12);
        for (const key of ev.instanceKeys)
          assert.ok(!trainKeys.has(key.slice(0, 12)), `${split} instance ${key} is not a train instance`);
        for (let i = 0; i < 40; i++) {
          const k = env.instanceKey(env.instance('train', i, spec.seed));
          assert.ok(!ev.instanceKeys.includes(k));
        }
      }
    } finally {
      await trainer.dispose();
    }
  });

  it('grpo-naive: K independent rollouts per instance, one group per instance, trained on last-turn samples only', async () => {
    const spec = await microTeamSpec({
      mapping: 'shared',
      algorithm: { name: 'grpo-naive', branches: 3, batchSize: 2, steps: 1 },
    });
    const out = outDir();
    const trainer = await Trainer.create(spec, { outDir: out, skipFinalEval: true });
    try {
      await trainer.run();
      const trace = readJsonl<TraceRecord>(join(out, 'trace.jsonl'));
      const episodes = new Set(trace.map((r) => r.episodeId));
      assert.equal(episodes.size, 6, 'B·K episodes');
      assert.ok(
        trace.every((r) => r.branch === 0),
        'one branch per episode',
      );
      for (const uid of new Set(trace.map((r) => r.instanceUid))) {
        const recs = trace.filter((r) => r.instanceUid === uid);
        const lastTurn = new Map<string, number>();
        for (const r of recs) lastTurn.set(r.episodeId, Math.max(lastTurn.get(r.episodeId) ?? -1, r.turn));
        const kept = recs.filter((r) => r.turn === lastTurn.get(r.episodeId));
        for (const r of recs)
          assert.equal(
            r.advantage === null,
            r.turn !== lastTurn.get(r.episodeId),
            'only last-turn samples carry an advantage',
          );
        const expected = groupAdvantages(kept.map((r) => r.reward));
        kept.forEach((r, i) => assert.ok(Math.abs(r.advantage! - expected[i]!) < 1e-6));
      }
    } finally {
      await trainer.dispose();
    }
  });

  it('L2: each LoRA adapter trains only on its own seat; the base stays frozen', async () => {
    const spec = await microTeamSpec({ mapping: 'lora', algorithm: { steps: 0 } });
    const trainer = await Trainer.create(spec, { outDir: outDir(), skipFinalEval: true });
    try {
      await trainer.run(); // prepares the folder and the step-0 checkpoint only
      assert.equal(trainer.level, 'L2');
      const prop = trainer.team.policies.get('proposer') as CausalLmPolicy;
      const exec = trainer.team.policies.get('executor') as CausalLmPolicy;
      const base0 = [paramsOf(prop), paramsOf(exec)];
      // one base in memory for both adapters, the same variables
      assert.ok(prop.model.sharesBaseWith(exec.model));
      const memory = weightMemory(trainer.handles);
      assert.deepEqual(memory.bases, [{ policies: ['proposer', 'executor'], bytes: prop.model.numParams() * 4 }]);
      assert.deepEqual(Object.keys(memory.adapters), ['proposer', 'executor']);
      assert.match(
        describeWeightMemory(memory),
        /^weights: base [\d.]+ MB \(proposer, executor\); adapters proposer [\d.]+ MB, executor [\d.]+ MB$/,
      );
      assert.ok(memory.adapters.proposer! > 0 && memory.adapters.proposer! < memory.bases[0]!.bytes / 10);
      const p0 = loraOf(prop),
        e0 = loraOf(exec);
      // collect one step's samples without training (algorithm 'none' path: step() with updates skipped)
      const samples = (await trainer.step(1), readJsonl<TraceRecord>(join(trainer.options.outDir, 'trace.jsonl')));
      assert.ok(samples.length > 0);
      const p1 = loraOf(prop),
        e1 = loraOf(exec);
      assert.ok(!same(p0, p1) && !same(e0, e1), 'a full step updates both adapters');
      assert.ok(same(base0[0]!, paramsOf(prop)) && same(base0[1]!, paramsOf(exec)), 'base weights are frozen');
      // Now feed ONLY the proposer seat's samples (with token ids, from a fresh step's rollout) through the router.
      const recs = await rolloutSamples(trainer, 2);
      const proposerOnly = recs.filter((s) => s.seat === 'proposer');
      assert.ok(proposerOnly.length > 0 && proposerOnly.some((s, i, a) => s.reward !== a[0]!.reward));
      const adv = proposerOnly.map((_, i) => (i % 2 === 0 ? 1 : -1));
      const metrics = await trainer.update(2, proposerOnly, adv);
      assert.equal(metrics['loss/executor/samples'], 0, 'the executor adapter got no samples');
      assert.equal(metrics['memory/bases_mb'], memory.bases[0]!.bytes / 2 ** 20, 'the base counted once');
      assert.equal(metrics['loss/executor/optimizer_steps'], undefined, 'and took no optimizer step');
      assert.ok((metrics['loss/proposer/samples'] ?? 0) > 0);
      assert.ok(same(e1, loraOf(exec)), 'the executor adapter did not change on proposer samples');
      assert.ok(!same(p1, loraOf(prop)), 'the proposer adapter changed');
    } finally {
      await trainer.dispose();
    }
  });

  it('resumes after a stop: weights, optimizer, RNG, step counter and replay queue restored; metrics equal the uninterrupted run; logs truncated past the checkpoint', async () => {
    const spec = await microTeamSpec({
      mapping: 'per-role',
      algorithm: {
        steps: 4,
        replay: { fraction: 0.5 },
        warmStart: { demonstrations: 3, epochs: 1, lr: 1e-2, miniBatchSize: 4 },
      },
    });
    const full = await train(spec);
    await full.trainer.dispose();
    assert.deepEqual(
      await listCheckpoints(full.out),
      [0, 3, 4],
      'the 2 newest checkpoints, and step 0: the warm start',
    );
    const part = await train(spec, { steps: 2 });
    await part.trainer.dispose();
    // a crash after step 3's logs were appended but before its checkpoint: torn records beyond the checkpoint
    appendFileSync(
      join(part.out, 'metrics.jsonl'),
      JSON.stringify({ step: 3, kind: 'train', 'rollout/success_rate': 0.5 }) + '\n{"step": 3, "ki',
    );
    appendFileSync(join(part.out, 'trace.jsonl'), JSON.stringify({ step: 3, instanceUid: 'x' }) + '\n');
    const resumed = await train(spec, { out: part.out, steps: 4, resume: true });
    await resumed.trainer.dispose();
    const a = readJsonl<MetricsRecord>(join(full.out, 'metrics.jsonl')).map(stable);
    const b = readJsonl<MetricsRecord>(join(part.out, 'metrics.jsonl')).map(stable);
    assert.deepEqual(
      b.map((m) => m.step),
      [0, 1, 2, 3, 4],
    );
    assert.equal(b.length, a.length);
    // Rollout numbers (rewards, success, counts) and losses are identical (test/resume.test.ts checks more settings).
    for (let i = 0; i < a.length; i++) assert.deepEqual(b[i], a[i], `step ${a[i]!.step}`);
    const ta = readJsonl<TraceRecord>(join(full.out, 'trace.jsonl'));
    const tb = readJsonl<TraceRecord>(join(part.out, 'trace.jsonl'));
    assert.deepEqual(tb, ta);
    // algorithm.replay: the untrained micro team fails, so from step 2 on one of the two instances is a failed one again
    const replayed = [...new Set(ta.filter((r) => r.instanceUid.includes('/replay-')).map((r) => r.instanceUid))];
    assert.ok(replayed.length >= 2, `replayed instances: ${replayed.join(', ')}`);
    assert.ok(
      replayed.every((u) => /^step-[2-4]\/replay-[12]\/train\/[0-9]+\//.test(u)),
      replayed.join(', '),
    );
    assert.deepEqual(
      a.filter((m) => m.kind === 'train').map((m) => m['rollout/replayed']),
      [0, 1, 1, 1],
    );
    // a fresh run refuses a folder that holds one
    await assert.rejects(
      Trainer.create(spec, { outDir: part.out }).then(async (t) => {
        try {
          await t.run();
        } finally {
          await t.dispose();
        }
      }),
      /--resume/,
    );
  });

  it('stops at the sample budget: the first step boundary at or past it, checkpointed between checkpoint steps, counted across a resume (also from metrics.jsonl for older checkpoints)', async () => {
    const spec = await microTeamSpec({
      mapping: 'per-role',
      algorithm: { steps: 4, checkpointEvery: 2, keepCheckpoints: 10 },
    });
    const full = await train(spec);
    await full.trainer.dispose();
    const perStep = readJsonl<MetricsRecord>(join(full.out, 'metrics.jsonl'))
      .filter((m) => m.kind === 'train')
      .map((m) => m['rollout/samples'] as number);
    assert.equal(perStep.length, 4);
    assert.equal(full.result.stoppedBy, 'steps');
    assert.equal(
      full.result.samplesGenerated,
      perStep.reduce((a, b) => a + b, 0),
    );
    const upTo = (n: number): number => perStep.slice(0, n).reduce((a, b) => a + b, 0);
    const budget = upTo(2) + 1; // step 3 is needed to reach it, step 4 is not

    const capped = await train(spec, { sampleBudget: budget });
    await capped.trainer.dispose();
    assert.equal(capped.result.stoppedBy, 'sample-budget');
    assert.equal(capped.result.steps, 3);
    assert.equal(capped.result.samplesGenerated, upTo(3));
    assert.deepEqual(
      await listCheckpoints(capped.out),
      [0, 2, 3],
      'step 3 is checkpointed though checkpointEvery is 2',
    );
    const state = JSON.parse(readFileSync(join(capped.out, 'checkpoints', 'step-3', 'trainer-state.json'), 'utf8'));
    assert.equal(state.samplesGenerated, upTo(3));
    // exactly the budget is reached: no further step
    const exact = await train(spec, { sampleBudget: upTo(3) });
    await exact.trainer.dispose();
    assert.equal(exact.result.steps, 3);

    // resumed: the samples of the steps before count, also from a checkpoint that does not record them
    const part = await train(spec, { steps: 2 });
    await part.trainer.dispose();
    const statePath = join(part.out, 'checkpoints', 'step-2', 'trainer-state.json');
    const { samplesGenerated: recorded, ...older } = JSON.parse(readFileSync(statePath, 'utf8'));
    assert.equal(recorded, upTo(2));
    writeFileSync(statePath, JSON.stringify(older));
    const resumed = await train(spec, { out: part.out, resume: true, sampleBudget: budget });
    await resumed.trainer.dispose();
    assert.equal(resumed.result.steps, 3);
    assert.equal(resumed.result.samplesGenerated, upTo(3));
    // a budget above what the steps generate: they all run
    const all = await train(spec, { steps: 2, sampleBudget: upTo(4) });
    await all.trainer.dispose();
    assert.equal(all.result.stoppedBy, 'steps');
    assert.equal(all.result.steps, 2);
  });

  it('algorithm.keepBest: the step of the best validation success (ties: the earlier) is checkpointed, named in best.json and never pruned; a resume keeps it', async () => {
    const spec = await microTeamSpec({
      mapping: 'per-role',
      algorithm: { steps: 4, evalEvery: 1, evalEpisodes: 6, checkpointEvery: 3, keepCheckpoints: 1, keepBest: true },
    });
    const full = await train(spec);
    await full.trainer.dispose();
    const steps = readJsonl<MetricsRecord>(join(full.out, 'metrics.jsonl')).filter((m) => m.kind === 'train');
    const success = steps.map((m) => m['eval/success_rate'] as number);
    assert.equal(success.length, 4);
    // the running best, computed here from the metrics: a later step must be strictly better
    let best = 0;
    for (const [i, m] of steps.entries()) {
      if (success[i]! > success[best]!) best = i;
      assert.equal(m['eval/best_step'], best + 1, `step ${i + 1}`);
      assert.equal(m['eval/best_success_rate'], success[best]);
    }
    const bestStep = best + 1;
    const record = JSON.parse(readFileSync(join(full.out, 'checkpoints', 'best.json'), 'utf8'));
    assert.deepEqual(record, {
      format: 1,
      step: bestStep,
      checkpoint: `step-${bestStep}`,
      split: 'validation',
      success_rate: success[best],
    });
    assert.deepEqual(full.result.best, {
      step: bestStep,
      successRate: success[best],
      dir: join(full.out, 'checkpoints', `step-${bestStep}`),
    });
    // keepCheckpoints 1 keeps only the newest step, besides the best (written though checkpointEvery is 3)
    assert.deepEqual(
      await listCheckpoints(full.out),
      [...new Set([bestStep, 4])].sort((a, b) => a - b),
    );
    // resumed after step 2, the best so far travels in the checkpoint and the run ends with the same best
    const part = await train(spec, { steps: 2 });
    await part.trainer.dispose();
    const resumed = await train(spec, { out: part.out, resume: true });
    await resumed.trainer.dispose();
    assert.deepEqual(JSON.parse(readFileSync(join(part.out, 'checkpoints', 'best.json'), 'utf8')), record);
    assert.deepEqual(await listCheckpoints(part.out), await listCheckpoints(full.out));
    // a better evaluation moves the best: the old best's folder is pruned like any other, the new one stays
    const moved = outDir();
    const state = JSON.parse(readFileSync(join(full.out, 'checkpoints', 'step-4', 'trainer-state.json'), 'utf8'));
    for (const [step, bestAt] of [
      [1, 1],
      [2, 1],
      [3, 3],
      [4, 3],
      [5, 3],
    ] as const) {
      await saveTrainerCheckpoint(
        moved,
        [],
        { ...state, step, warmStarted: false, best: { step: bestAt, successRate: bestAt / 10 } },
        1,
      );
    }
    assert.deepEqual(await listCheckpoints(moved), [3, 5]);
    assert.equal(JSON.parse(readFileSync(join(moved, 'checkpoints', 'best.json'), 'utf8')).checkpoint, 'step-3');
    const { best: _best, ...without } = state as { best?: unknown };
    await saveTrainerCheckpoint(moved, [], { ...(without as typeof state), step: 6, warmStarted: false }, 1);
    assert.deepEqual(await listCheckpoints(moved), [6], 'without keepBest the best step is pruned like the others');
    // without periodic evaluations there is nothing to choose by
    const algorithm = { name: 'at-grpo', branches: 2, batchSize: 2, steps: 4, concurrency: 2 } as const;
    assert.throws(
      () => resolveTrainerConfig({ file: 'team.yaml', algorithm: { ...algorithm, keepBest: true } as never }),
      (err: unknown) =>
        err instanceof TrainerConfigError &&
        /team\.yaml/.test(err.message) &&
        /algorithm\.keepBest/.test(err.message) &&
        /evalEvery/.test(err.message),
    );
    assert.equal(resolveTrainerConfig({ file: 'team.yaml', algorithm }).keepBest, false);
    assert.equal(
      resolveTrainerConfig({ file: 'team.yaml', algorithm: { ...algorithm, evalEvery: 2, keepBest: true } as never })
        .keepBest,
      true,
    );
  });

  it('a decaying lr schedule runs over the sample budget when there is one (the warm-up over steps)', async () => {
    const lrSchedule = { kind: 'linear', warmupSteps: 1, minLr: 0 };
    const spec = await microTeamSpec({ mapping: 'per-role', algorithm: { steps: 20, lr: 1e-2, lrSchedule } });
    const probe = await train(spec, { steps: 3 });
    await probe.trainer.dispose();
    const first = readJsonl<MetricsRecord>(join(probe.out, 'metrics.jsonl'))
      .filter((m) => m.kind === 'train')
      .map((m) => m['rollout/samples'] as number);
    const budget = first[0]! + first[1]! + 1; // three steps
    const { out, result, trainer } = await train(spec, { sampleBudget: budget });
    await trainer.dispose();
    assert.equal(result.steps, 3);
    const train3 = readJsonl<MetricsRecord>(join(out, 'metrics.jsonl')).filter((m) => m.kind === 'train');
    const before = [0, first[0]!, first[0]! + first[1]!];
    for (const [i, m] of train3.entries()) {
      // step 1 warms up (1e-2 · 1/1); steps 2, 3 decay linearly over the budget from the samples generated before them
      const want = i === 0 ? 1e-2 : 1e-2 * (1 - before[i]! / budget);
      assert.ok(
        Math.abs((m['loss/proposer/lr'] as number) - want) < 1e-9,
        `step ${i + 1}: lr ${m['loss/proposer/lr']} vs ${want}`,
      );
      assert.equal(m['loss/executor/lr'], m['loss/proposer/lr']);
    }
    // without a budget the decay runs over the steps (--steps 3: step 3 is half way)
    const steps = readJsonl<MetricsRecord>(join(probe.out, 'metrics.jsonl')).filter((m) => m.kind === 'train');
    assert.deepEqual(
      steps.map((m) => m['loss/proposer/lr']),
      [1e-2, 1e-2, 0.5e-2],
    );
  });

  it('one trainer per run folder: a second one on the folder is refused until the first is disposed', async () => {
    const spec = await microTeamSpec({ mapping: 'per-role', algorithm: { steps: 1 } });
    const out = outDir();
    const first = await Trainer.create(spec, { outDir: out, skipFinalEval: true });
    const second = await Trainer.create(spec, { outDir: out, skipFinalEval: true, resume: true });
    try {
      await first.prepare();
      await assert.rejects(
        second.run(),
        (err: Error) => err.name === 'FolderLockError' && err.message.includes(`${out} is in use by this process`),
      );
    } finally {
      await second.dispose();
      await first.dispose();
    }
    assert.ok(!existsSync(join(out, '.lock')), 'disposed: unlocked');
    const again = await train(spec, { out, resume: true });
    await again.trainer.dispose();
    assert.equal(again.result.steps, 1);
  });

  it("evaluates the start of RL on the final evaluation's episodes and compares the final model with it episode by episode, also after a resume", async () => {
    const spec = await microTeamSpec({
      mapping: 'per-role',
      algorithm: { steps: 2, warmStart: { demonstrations: 3, epochs: 1, lr: 1e-2, miniBatchSize: 4 } },
    });
    const run = async (out: string, steps: number, resume = false) => {
      const t = await Trainer.create(spec, { outDir: out, steps, ...(resume ? { resume: true } : {}) });
      try {
        return await t.run();
      } finally {
        await t.dispose();
      }
    };
    const out = outDir();
    const result = await run(out, 2);
    const kept = JSON.parse(readFileSync(join(out, BASELINE_FILE), 'utf8')) as BaselineEval;
    assert.equal(kept.split, 'test');
    assert.equal(kept.step, 0);
    assert.equal(kept.outcomes.length, spec.evaluation.episodes);
    assert.equal(kept.successRate, kept.outcomes.filter(Boolean).length / kept.outcomes.length);
    const metrics = readJsonl<MetricsRecord>(join(out, 'metrics.jsonl'));
    const base = metrics.find((m) => m.kind === 'baseline')!;
    assert.equal(base.step, 0);
    assert.equal(base['baseline_test/success_rate'], kept.successRate);
    assert.ok(
      metrics.indexOf(base) < metrics.findIndex((m) => m.kind === 'train'),
      'the baseline is evaluated before the first RL step',
    );
    const final = metrics.find((m) => m.kind === 'final')!;
    assert.ok(result.baseline && result.finalEval);
    const c = result.baseline.comparison;
    assert.deepEqual(c, pairedComparison(kept.outcomes, result.finalEval.outcomes));
    assert.equal(final['compare/baseline_success_rate'], kept.successRate);
    assert.equal(final['compare/gained'], c.gained);
    assert.equal(final['compare/lost'], c.lost);
    assert.equal(final['eval_test/success_rate'], c.after);
    assert.match(
      buildReport(out, 'micro').markdown,
      /Against the model RL started from \(after the warm start; the same 4 episodes\)/,
    );
    // a run stopped after step 1 and resumed still compares against the baseline of its start
    const part = outDir();
    await run(part, 1);
    assert.ok(existsSync(join(part, BASELINE_FILE)));
    const resumed = await run(part, 2, true);
    assert.ok(resumed.baseline, 'the resumed run compares with the baseline kept in the run folder');
    assert.deepEqual(resumed.baseline.eval.outcomes, kept.outcomes);
    // evaluation.baseline: false skips it
    const offSpec = { ...spec, evaluation: { ...spec.evaluation, baseline: false } };
    const off = outDir();
    const t = await Trainer.create(offSpec, { outDir: off, steps: 1 });
    try {
      const r = await t.run();
      assert.equal(r.baseline, undefined);
    } finally {
      await t.dispose();
    }
    assert.ok(!existsSync(join(off, BASELINE_FILE)));
    assert.ok(!readJsonl<MetricsRecord>(join(off, 'metrics.jsonl')).some((m) => m.kind === 'baseline'));
  });
});

describe('trainer: kill -9 and resume', function () {
  this.timeout(600_000);

  it('a SIGKILLed run loses at most its current step; --resume finishes it with the metrics of an uninterrupted run', async () => {
    const spec = await microTeamSpec({ mapping: 'per-role', algorithm: { steps: 5 } });
    const full = await train(spec);
    await full.trainer.dispose();
    const out = outDir();
    const child = spawn(
      process.execPath,
      [
        '--conditions=troupe:source',
        '--import',
        'tsx',
        fileURLToPath(new URL('./trainer-kill-child.ts', import.meta.url)),
        spec.file,
        out,
        '5',
      ],
      { stdio: 'ignore' },
    );
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    // kill it as soon as step 2's checkpoint exists (it is then inside step 3)
    for (;;) {
      if ((await listCheckpoints(out)).includes(2)) break;
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGKILL');
    await exited;
    const kept = await listCheckpoints(out);
    assert.ok(kept.length > 0 && kept.at(-1)! >= 2, `checkpoints after the kill: ${kept}`);
    assert.ok(kept.at(-1)! < 5, 'killed before the end');
    const resumed = await train(spec, { out, resume: true });
    await resumed.trainer.dispose();
    const a = readJsonl<MetricsRecord>(join(full.out, 'metrics.jsonl')).map(stable);
    const b = readJsonl<MetricsRecord>(join(out, 'metrics.jsonl')).map(stable);
    assert.deepEqual(
      b.map((m) => m.step),
      [1, 2, 3, 4, 5],
    );
    for (let i = 0; i < a.length; i++) {
      for (const [k, v] of Object.entries(a[i]!)) {
        const w = b[i]![k];
        if (typeof v === 'number' && k.startsWith('loss/'))
          assert.ok(
            Math.abs(v - (w as number)) <= 1e-4 * Math.max(1, Math.abs(v)),
            `step ${a[i]!.step} ${k}: ${v} vs ${w}`,
          );
        else assert.deepEqual(w, v, `step ${a[i]!.step} ${k}`);
      }
    }
    const steps = readJsonl<{ step: number }>(join(out, 'trace.jsonl')).map((r) => r.step);
    assert.deepEqual([...new Set(steps)], [1, 2, 3, 4, 5], 'trace: every step once, in order');
    assert.equal(steps.length, readJsonl(join(full.out, 'trace.jsonl')).length);
  });
});

/** Plays one step's rollouts (no update) and returns its samples with token ids. */
async function rolloutSamples(trainer: Trainer, step: number) {
  const { planEpisodes, runEpisodes, collectEpisodes } = await import('@troupe/kernel');
  const c = trainer.config;
  const contexts = planEpisodes({
    environment: trainer.environment,
    split: 'train',
    count: c.batchSize,
    startIndex: (step - 1) * c.batchSize,
    seed: 99 + step,
    instanceSeed: trainer.spec.seed,
    uidPrefix: `probe-${step}/`,
    branches: c.branches,
    seats: trainer.seats,
    reward: trainer.team.reward,
    grammar: c.constrainedDecoding,
  });
  return (await collectEpisodes(runEpisodes(contexts, { concurrency: 2 }))).flatMap((e) => e.steps);
}

describe('trainer: train-instance schedule (algorithm.replay)', () => {
  it('without replay, step n plays instances (n - 1)·B … n·B - 1 and nothing is queued', () => {
    const s = new InstanceSchedule({ fraction: 0, maxReplays: 2 });
    assert.deepEqual(
      s.next(3),
      [0, 1, 2].map((index) => ({ index, replays: 0 })),
    );
    s.record([0, 1, 2].map((index) => ({ index, replays: 0, success: false })));
    assert.deepEqual(
      s.next(3).map((x) => x.index),
      [3, 4, 5],
    );
    assert.equal(s.queued, 0);
  });

  it('replays failed instances first in, first out, up to fraction × B per step and maxReplays times each', () => {
    const s = new InstanceSchedule({ fraction: 0.5, maxReplays: 2 });
    const first = s.next(4);
    s.record(first.map((x) => ({ ...x, success: x.index % 2 === 0 }))); // 1 and 3 failed
    const second = s.next(4);
    assert.deepEqual(second, [
      { index: 4, replays: 0 },
      { index: 5, replays: 0 },
      { index: 1, replays: 1 },
      { index: 3, replays: 1 },
    ]);
    s.record(second.map((x) => ({ ...x, success: x.index === 3 }))); // 4, 5 and 1 failed again
    assert.deepEqual(s.state(), {
      nextIndex: 6,
      queue: [
        { index: 4, replays: 1 },
        { index: 5, replays: 1 },
        { index: 1, replays: 2 },
      ],
    });
    const third = s.next(5); // floor(0.5 × 5) = 2 replays
    assert.deepEqual(
      third.map((x) => `${x.index}/${x.replays}`),
      ['6/0', '7/0', '8/0', '4/1', '5/1'],
    );
    const resumed = new InstanceSchedule({ fraction: 0.5, maxReplays: 2 }, s.state());
    s.record(third.map((x) => ({ ...x, success: false })));
    resumed.record(third.map((x) => ({ ...x, success: false })));
    assert.deepEqual(resumed.state(), s.state(), 'a schedule rebuilt from its state continues identically');
    const fourth = s.next(4);
    assert.deepEqual(fourth.slice(2), [
      { index: 1, replays: 2 },
      { index: 6, replays: 1 },
    ]);
    s.record(fourth.map((x) => ({ ...x, success: false })));
    assert.ok(!s.state().queue.some((q) => q.index === 1), 'an instance failed after its last replay leaves for good');
  });

  it('is configured by algorithm.replay, off by default, with a clear error for a bad fraction', async () => {
    const spec = await microTeamSpec({ mapping: 'shared' });
    assert.deepEqual(resolveTrainerConfig(spec).replay, { fraction: 0, maxReplays: 2 });
    const bad = await microTeamSpec({ mapping: 'shared', algorithm: { replay: { fraction: 1 } } });
    assert.throws(() => resolveTrainerConfig(bad), /algorithm\.replay\.fraction/);
  });
});
