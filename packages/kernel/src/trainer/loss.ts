/**
 * The trainer's losses over packed (prompt, completion) batches: PPO-clip with three aggregations, an optional KL
 * penalty to a frozen reference and an optional entropy bonus; and the SFT negative log-likelihood of the warm start.
 * All run inside `trainStep` (gradients, clipping, AdamW) from `policy/lm/train.ts`.
 */
import * as tf from '@tensorflow/tfjs';
import type { CausalLM } from '../policy/lm/model.js';
import { oneHotF32 } from '../policy/lm/ops.js';
import { packBatch, scatterToLayout, trainStep, type AdamW, type PackedBatch, type SequencePair } from '../policy/lm/train.js';
import type { LossAggregation } from './config.js';

/** Per-token log-probs `[B, L-1]` and, when asked, per-token entropies of the full next-token distribution. */
function scoreTokens(model: CausalLM, packed: PackedBatch, withEntropy: boolean): { logp: tf.Tensor2D; entropy?: tf.Tensor2D } {
  const { B, L } = packed;
  const V = model.config.vocabSize;
  const ids = tf.tensor2d(packed.ids, [B, L], 'int32');
  const { logits } = model.forward(ids);
  const lp = tf.logSoftmax(logits.slice([0, 0, 0], [B, L - 1, V]));
  const targets = ids.slice([0, 1], [B, L - 1]);
  const logp = lp.mul(oneHotF32(targets.reshape([-1]), V).reshape([B, L - 1, V])).sum(-1) as tf.Tensor2D;
  if (!withEntropy) return { logp };
  const entropy = lp.exp().mul(lp).sum(-1).neg() as tf.Tensor2D;
  return { logp, entropy };
}

/** Reduces a per-token quantity `[B, L-1]` (already multiplied by the mask) to a scalar. */
export function aggregate(x: tf.Tensor, mask: tf.Tensor, how: LossAggregation, maxTokens: number): tf.Scalar {
  if (how === 'token-mean') return x.sum().div(mask.sum().maximum(1)) as tf.Scalar;
  if (how === 'seq-mean-token-mean') {
    const perSeq = x.sum(1).div(mask.sum(1).maximum(1));
    return perSeq.mean() as tf.Scalar;
  }
  // 'dr-grpo' (seq-mean-token-sum-norm): token sums per sequence divided by a CONSTANT horizon, then the batch mean.
  return x.sum(1).div(Math.max(1, maxTokens)).mean() as tf.Scalar;
}

/** One PPO mini-batch. */
export interface PpoBatch {
  /** The sequences. */
  readonly pairs: readonly SequencePair[];
  /** Log-probs of the completion tokens before the update (recomputed by the trainer). */
  readonly oldLogprobs: readonly (readonly number[])[];
  /** One advantage per sequence. */
  readonly advantages: readonly number[];
  /** Log-probs under the frozen reference (only with a KL coefficient). */
  readonly refLogprobs?: readonly (readonly number[])[];
}

/** Settings of {@link ppoStep}. */
export interface PpoSettings {
  readonly clipLow: number;
  readonly clipHigh: number;
  readonly aggregation: LossAggregation;
  readonly klCoef: number;
  readonly entropyCoef: number;
  /** Constant horizon of the dr-grpo aggregation (the seats' `maxTokens`). */
  readonly maxTokens: number;
  /** Pad token id. */
  readonly padId: number;
}

/** What one PPO optimizer step reports. */
export interface PpoStepResult {
  /** Total loss (policy + KL − entropy bonus). */
  readonly loss: number;
  /** PPO-clip policy loss. */
  readonly policyLoss: number;
  /** Mean KL to the reference (k3), 0 without reference. */
  readonly kl: number;
  /** Mean per-token entropy (only computed with an entropy coefficient; else NaN). */
  readonly entropy: number;
  /** Share of tokens whose ratio was clipped. */
  readonly clipFraction: number;
  /** mean(old − new) log-prob: an approximate KL to the sampling policy. */
  readonly approxKl: number;
  /** Pre-clip global gradient norm. */
  readonly gradNorm: number;
  /** Learning rate used. */
  readonly lr: number;
  /** Completion tokens in the batch. */
  readonly tokens: number;
}

/**
 * One AdamW step on the PPO-clip objective
 * `L = agg(max(−A·r, −A·clip(r, 1−εl, 1+εh))) + β·agg(k3(ref, new)) − c_H·agg(H)`, `r = exp(new − old)`.
 */
export function ppoStep(model: CausalLM, optimizer: AdamW, batch: PpoBatch, s: PpoSettings): PpoStepResult {
  const packed = packBatch(batch.pairs, s.padId);
  const shape: [number, number] = [packed.B, packed.L - 1];
  const old = scatterToLayout(packed, batch.oldLogprobs);
  const adv = scatterToLayout(packed, batch.advantages);
  const ref = s.klCoef > 0 && batch.refLogprobs ? scatterToLayout(packed, batch.refLogprobs) : undefined;
  let policyLoss = 0, kl = 0, entropy = NaN, clipFraction = 0, approxKl = 0;
  const tokens = packed.lengths.reduce((a, b) => a + b, 0);
  const res = trainStep(optimizer, () => {
    const { logp, entropy: ent } = scoreTokens(model, packed, s.entropyCoef > 0);
    const mask = tf.tensor2d(packed.mask, shape);
    const A = tf.tensor2d(adv, shape);
    const diff = logp.sub(tf.tensor2d(old, shape));
    const ratio = diff.exp();
    const unclipped = ratio.mul(A);
    const clipped = ratio.clipByValue(1 - s.clipLow, 1 + s.clipHigh).mul(A);
    const obj = tf.minimum(unclipped, clipped);
    const pl = aggregate(obj.neg().mul(mask), mask, s.aggregation, s.maxTokens);
    let total: tf.Scalar = pl;
    const denom = mask.sum().maximum(1);
    policyLoss = pl.dataSync()[0]!;
    clipFraction = tf.notEqual(unclipped, obj).cast('float32').mul(mask).sum().div(denom).dataSync()[0]!;
    approxKl = diff.neg().mul(mask).sum().div(denom).dataSync()[0]!;
    if (ref) {
      const d = tf.tensor2d(ref, shape).sub(logp); // log(ref / new)
      const k3 = d.exp().sub(d).sub(1).mul(mask);
      const klTerm = aggregate(k3, mask, s.aggregation, s.maxTokens);
      kl = klTerm.dataSync()[0]!;
      total = total.add(klTerm.mul(s.klCoef));
    }
    if (ent) {
      const e = aggregate(ent.mul(mask), mask, s.aggregation, s.maxTokens);
      entropy = ent.mul(mask).sum().div(denom).dataSync()[0]!;
      total = total.sub(e.mul(s.entropyCoef));
    }
    return total;
  });
  return { loss: res.loss, policyLoss, kl, entropy, clipFraction, approxKl, gradNorm: res.gradNorm, lr: res.lr, tokens };
}

/** One AdamW step on the token-mean negative log-likelihood of the completions (warm-start SFT). */
export function sftStep(model: CausalLM, optimizer: AdamW, pairs: readonly SequencePair[], padId: number): { loss: number; gradNorm: number; lr: number; tokens: number } {
  const packed = packBatch(pairs, padId);
  const shape: [number, number] = [packed.B, packed.L - 1];
  const tokens = packed.lengths.reduce((a, b) => a + b, 0);
  const r = trainStep(optimizer, () => {
    const { logp } = scoreTokens(model, packed, false);
    const mask = tf.tensor2d(packed.mask, shape);
    return logp.mul(mask).sum().div(mask.sum().maximum(1)).neg() as tf.Scalar;
  });
  return { ...r, tokens };
}
