import assert from 'node:assert/strict';
import {
  AdamW,
  CausalLM,
  DataParallel,
  accumulatedTrainStep,
  initBackend,
  shares,
  tf,
  type SequencePair,
} from '../src/index.js';
import { BENCH_LOSS, benchPartLoss, type BenchPart } from '../src/bench/bench-loss.js';
import { TINY_QWEN3 } from './helpers/tiny-config.js';

const V = TINY_QWEN3.vocab_size;
const seq = (s: number, len: number): SequencePair => ({
  promptIds: Array.from({ length: 3 }, (_, j) => (17 * (s + 1) * (j + 5)) % V),
  completionIds: Array.from({ length: len }, (_, j) => (31 * (s + 3) * (j + 7)) % V),
});
/** Six rows of unequal lengths in three parts (micro-batches), with the whole batch's token count in each. */
function batch(): BenchPart[] {
  const pairs = Array.from({ length: 6 }, (_, s) => seq(s, 5 + 3 * s));
  const advantages = pairs.map((_, s) => (s % 3) - 1 + 0.25 * s);
  const tokens = pairs.reduce((n, p) => n + p.completionIds.length, 0);
  return shares(6, 3).map(([a, b]) => ({ pairs: pairs.slice(a, b), advantages: advantages.slice(a, b), tokens }));
}
const values = (vars: readonly tf.Variable[]): Float32Array[] => vars.map((v) => v.dataSync() as Float32Array);
const maxGap = (a: Float32Array[], b: Float32Array[]): number =>
  Math.max(...a.map((x, i) => x.reduce((m, y, j) => Math.max(m, Math.abs(y - b[i]![j]!)), 0)));

describe('data-parallel training over worker threads', function () {
  this.timeout(120_000);
  before(() => initBackend({ backend: 'wasm' }));

  for (const lora of [false, true]) {
    it(`${lora ? 'LoRA adapters' : 'a full model'}: 2 threads give one thread's losses and weights within float tolerance`, async () => {
      const make = (): { model: CausalLM; opt: AdamW } => {
        const model = CausalLM.random(TINY_QWEN3, 5);
        if (lora) model.addLora({ r: 4, alpha: 8, targetModules: ['q_proj', 'v_proj'] }, 2);
        return { model, opt: new AdamW(model.trainableVariables(), { lr: 1e-2, maxGradNorm: 1 }) };
      };
      const parts = batch();
      const one = make();
      const two = make();
      if (lora)
        // off B's zero init, the same on both
        for (const m of [one.model, two.model])
          for (const { b } of m.lora.values()) tf.tidy(() => b.assign(tf.randomNormal(b.shape, 0, 0.1, 'float32', 9)));
      const dp = DataParallel.start(two.model, two.opt, 2, benchPartLoss, BENCH_LOSS);
      try {
        for (let step = 0; step < 3; step++) {
          const a = accumulatedTrainStep(
            one.opt,
            parts.map((p) => () => benchPartLoss(one.model, p)),
          );
          const b = await dp.step(parts);
          assert.ok(
            Math.abs(a.loss - b.loss) <= 1e-5 * Math.max(1, Math.abs(a.loss)),
            `step ${step}: loss ${a.loss} vs ${b.loss}`,
          );
          assert.ok(
            Math.abs(a.gradNorm - b.gradNorm) <= 1e-4 * a.gradNorm,
            `step ${step}: grad norm ${a.gradNorm} vs ${b.gradNorm}`,
          );
          assert.equal(a.lr, b.lr);
        }
        const gap = maxGap(values(one.opt.vars), values(two.opt.vars));
        assert.ok(gap < 1e-5, `weights ${gap} apart after 3 steps`);
        // the updates moved the weights (the comparison is not between two untouched models)
        assert.ok(maxGap(values(two.opt.vars), values(make().opt.vars)) > 1e-3);
        if (lora) {
          // the base stays frozen
          const base = two.model.params.get('model.layers.0.self_attn.q_proj.weight')!;
          const fresh = CausalLM.random(TINY_QWEN3, 5);
          assert.equal(
            maxGap(
              [base.dataSync() as Float32Array],
              [fresh.params.get('model.layers.0.self_attn.q_proj.weight')!.dataSync() as Float32Array],
            ),
            0,
          );
          fresh.dispose();
        }
      } finally {
        await dp.terminate();
        for (const m of [one, two]) {
          m.opt.dispose();
          m.model.dispose();
        }
      }
    });
  }

  it('the same parts and thread count give the same bits (a run reproduces)', async () => {
    const run = async (): Promise<Float32Array[]> => {
      const model = CausalLM.random(TINY_QWEN3, 5);
      const opt = new AdamW(model.trainableVariables(), { lr: 1e-2 });
      const dp = DataParallel.start(model, opt, 2, benchPartLoss, BENCH_LOSS);
      try {
        for (let s = 0; s < 2; s++) await dp.step(batch());
        return values(opt.vars).map((v) => v.slice());
      } finally {
        await dp.terminate();
        opt.dispose();
        model.dispose();
      }
    };
    assert.equal(maxGap(await run(), await run()), 0);
  });

  it('a loss module without the named export fails the step with the reason, not a hang', async () => {
    const model = CausalLM.random(TINY_QWEN3, 5);
    const opt = new AdamW(model.trainableVariables(), { lr: 1e-2 });
    const dp = DataParallel.start(model, opt, 2, benchPartLoss, { url: BENCH_LOSS.url, name: 'noSuchLoss' });
    try {
      await assert.rejects(
        dp.step(batch()),
        /data-parallel training failed in a replica's thread: .*exports no function 'noSuchLoss'/,
      );
      await assert.rejects(dp.step(batch()), /exports no function/); // and stays failed
    } finally {
      await dp.terminate();
      opt.dispose();
      model.dispose();
    }
  });
});
