import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs';
import { AdamW, generateIds, loadCheckpoint, type CausalLM } from '@troupe/lm';
import { ppoStep, recomputeGroupLogprobs, type PpoSettings, type PromptGroup } from '../src/index.js';
import { microCheckpoint } from './trainer-helpers.js';

const SETTINGS: PpoSettings = {
  clipLow: 0.2,
  clipHigh: 0.2,
  aggregation: 'token-mean',
  klCoef: 0,
  entropyCoef: 0,
  maxTokens: 8,
  padId: 0,
};
const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

/** The one PPO path (the trainer's `ppoStep`) on a real model: its objective, what it does to the weights, its memory. */
describe('trainer: the PPO step on a model', () => {
  let model: CausalLM;
  beforeEach(async () => {
    model = await loadCheckpoint(await microCheckpoint());
  });
  afterEach(() => model.dispose());

  it('PPO-clip, token-mean: ratios 1.5 and 0.5 with advantage 1 give −(min(1.5, 1.2) + min(0.5, 0.8)) / 2, half the tokens clipped', async () => {
    const groups: PromptGroup[] = [{ promptIds: [5, 9, 33], completions: [[3, 4]] }];
    const [now] = await recomputeGroupLogprobs(model, groups, 0);
    // old log-probs that make the ratios exp(new − old) = 1.5 and 0.5
    const old = [[now![0]! - Math.log(1.5), now![1]! - Math.log(0.5)]];
    const opt = new AdamW(model.trainableVariables(), { lr: 1e-3 });
    try {
      const r = ppoStep(model, opt, { groups, oldLogprobs: old, advantages: [1] }, SETTINGS);
      assert.ok(Math.abs(r.policyLoss + 0.85) < 1e-5, `policy loss ${r.policyLoss}`);
      assert.ok(Math.abs(r.clipFraction - 0.5) < 1e-6);
      assert.equal(r.tokens, 2);
    } finally {
      opt.dispose();
    }
  });

  it("a positive advantage raises the sampled completion's log-prob", async () => {
    const prompt = [1, 10, 11, 12];
    const [s] = await generateIds(model, prompt, { maxNewTokens: 6, temperature: 1, seed: 7, eosTokenIds: [] });
    const groups: PromptGroup[] = [{ promptIds: prompt, completions: [s!.tokenIds] }];
    const before = sum((await recomputeGroupLogprobs(model, groups, 0))[0]!);
    const opt = new AdamW(model.trainableVariables(), { lr: 1e-2, maxGradNorm: 1 });
    try {
      for (let i = 0; i < 3; i++) {
        const old = await recomputeGroupLogprobs(model, groups, 0);
        const r = ppoStep(model, opt, { groups, oldLogprobs: old, advantages: [1] }, SETTINGS);
        assert.ok(Number.isFinite(r.loss) && r.gradNorm > 0);
      }
    } finally {
      opt.dispose();
    }
    const after = sum((await recomputeGroupLogprobs(model, groups, 0))[0]!);
    assert.ok(after > before + 0.1, `log-prob ${before} -> ${after}`);
  });

  it('keeps tf.memory().numTensors flat across 50 PPO steps', () => {
    const groups: PromptGroup[] = [
      { promptIds: [1, 5, 6], completions: [[7, 8, 2], [9]] },
      { promptIds: [1, 9], completions: [[10]] },
    ];
    const batch = { groups, oldLogprobs: [[-4, -4, -4], [-4], [-4]], advantages: [0.5, -1, 1] };
    const opt = new AdamW(model.trainableVariables(), { lr: 1e-3, maxGradNorm: 1, weightDecay: 0.01 });
    try {
      ppoStep(model, opt, batch, SETTINGS);
      const start = tf.memory().numTensors;
      for (let i = 0; i < 50; i++)
        ppoStep(model, opt, batch, { ...SETTINGS, klCoef: 0, entropyCoef: i % 2 ? 0.01 : 0 });
      assert.equal(tf.memory().numTensors, start);
    } finally {
      opt.dispose();
    }
  });
});
