/**
 * The model benchmark's training loss as a data-parallel loss module (lm/data-parallel.ts): the replicas in worker
 * threads import this file, so it holds the loss and nothing else.
 */
import * as tf from '@tensorflow/tfjs';
import type { CausalLM } from '../lm/model.js';
import { packBatch, scatterToLayout, tokenLogprobs, type SequencePair } from '../lm/train.js';

/** Some rows of a benchmark batch: their sequences, their advantages, and the WHOLE batch's completion-token count. */
export interface BenchPart {
  readonly pairs: readonly SequencePair[];
  readonly advantages: readonly number[];
  readonly tokens: number;
}

/**
 * The part's share of the token-level policy-gradient loss `-(Σ logp·adv·mask) / Σ mask` (Σ mask over the whole
 * batch, so the parts' losses and gradients add up to the batch's).
 */
export function benchPartLoss(model: CausalLM, part: BenchPart): tf.Scalar {
  const packed = packBatch(part.pairs);
  const shape: [number, number] = [packed.B, packed.L - 1];
  const mask = tf.tensor2d(packed.mask, shape);
  const adv = tf.tensor2d(scatterToLayout(packed, part.advantages), shape);
  return tokenLogprobs(model, packed).mul(adv).mul(mask).sum().div(part.tokens).neg() as tf.Scalar;
}

/** Where the replicas find {@link benchPartLoss}. */
export const BENCH_LOSS = {
  url: new URL(`./bench-loss${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url).href,
  name: 'benchPartLoss',
};
