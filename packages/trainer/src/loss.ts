/**
 * The trainer's losses over packed (prompt, completion) batches: PPO-clip with three aggregations, an optional KL
 * penalty to a frozen reference and an optional entropy bonus; and the SFT negative log-likelihood of the warm start.
 * All run inside `trainStep` (gradients, clipping, AdamW) from `@troupe/lm` (`packages/lm/src/lm/train.ts`).
 */
import * as tf from '@tensorflow/tfjs';
import {
  type CausalLM,
  oneHotF32,
  accumulatedTrainStep,
  accumulatedTrainStepAsync,
  packBatch,
  trainStepAsync,
  type AdamW,
  type PackedBatch,
  type SequencePair,
} from '@troupe/lm/model';
import type { LossAggregation } from '@troupe/kernel';

/** Per-token log-probs `[B, L-1]` and, when asked, per-token entropies of the full next-token distribution. */
function scoreTokens(
  model: CausalLM,
  packed: PackedBatch,
  withEntropy: boolean,
): { logp: tf.Tensor2D; entropy?: tf.Tensor2D } {
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

/** Sequences that share one prompt (the K branches of an AT-GRPO group): the prompt is encoded once for all of them. */
export interface PromptGroup {
  /** The shared prompt's token ids (non-empty). */
  readonly promptIds: readonly number[];
  /** The completions' token ids, one row each. */
  readonly completions: readonly (readonly number[])[];
  /**
   * The temperature of the distribution scored: log-probs are of `softmax(logits / temperature)`, the distribution
   * the completions were sampled from (the seat's sampling temperature). Absent: 1, the model's own distribution.
   */
  readonly temperature?: number;
}

/**
 * Log-probs (and optionally entropies) of every completion token of prompt groups, laid out `[rows, Cmax]` (row r =
 * the r-th completion across the groups in order; position j = completion token j; pads score 0). Each group's prompt
 * runs through the model ONCE, with gradients; its key/value cache is tiled to the group's completions, which attend
 * to it — the same numbers as scoring every `prompt ++ completion` separately, at about 1/K of the prompt cost.
 * Differentiable: call inside `tf.tidy` or a gradient function.
 */
export function scoreGroups(
  model: CausalLM,
  groups: readonly PromptGroup[],
  cmax: number,
  padId: number,
  withEntropy = false,
): { logp: tf.Tensor2D; entropy?: tf.Tensor2D } {
  const V = model.config.vocabSize;
  const logps: tf.Tensor[] = [];
  const ents: tf.Tensor[] = [];
  for (const g of groups) {
    const P = g.promptIds.length;
    const K = g.completions.length;
    if (P === 0) throw new Error('scoreGroups: a group has an empty prompt');
    const C = Math.max(1, ...g.completions.map((c) => c.length));
    const pre = model.forward(tf.tensor2d([Array.from(g.promptIds)], [1, P], 'int32'), { cache: [], lastOnly: true });
    const first = tf.tile(pre.logits.reshape([1, 1, V]), [K, 1, 1]);
    const ids = g.completions.map((c) => {
      const row = Array.from(c);
      while (row.length < C) row.push(padId);
      return row;
    });
    const idsT = tf.tensor2d(ids, [K, C], 'int32');
    let logits: tf.Tensor = first;
    if (C > 1) {
      const cache = pre.cache!.map((l) => ({ k: tf.tile(l.k, [K, 1, 1, 1]), v: tf.tile(l.v, [K, 1, 1, 1]) }));
      const out = model.forward(idsT.slice([0, 0], [K, C - 1]), { cache, start: P });
      logits = tf.concat([first, out.logits], 1);
    }
    const T = g.temperature ?? 1;
    if (!(T > 0)) throw new Error(`scoreGroups: a group's temperature must be positive, got ${T}`);
    const lp = tf.logSoftmax(T === 1 ? logits : logits.div(T)); // [K, C, V]
    const logp = lp.mul(oneHotF32(idsT.reshape([-1]), V).reshape([K, C, V])).sum(-1);
    logps.push(
      C < cmax
        ? tf.pad(logp, [
            [0, 0],
            [0, cmax - C],
          ])
        : logp,
    );
    if (withEntropy) {
      const e = lp.exp().mul(lp).sum(-1).neg();
      ents.push(
        C < cmax
          ? tf.pad(e, [
              [0, 0],
              [0, cmax - C],
            ])
          : e,
      );
    }
  }
  const logp = (logps.length === 1 ? logps[0]! : tf.concat(logps, 0)) as tf.Tensor2D;
  if (!withEntropy) return { logp };
  return { logp, entropy: (ents.length === 1 ? ents[0]! : tf.concat(ents, 0)) as tf.Tensor2D };
}

/** The `[rows, Cmax]` layout of prompt groups: row lengths, mask, and a scatter of per-token / per-row values. */
export function groupLayout(groups: readonly PromptGroup[]): {
  rows: number;
  cmax: number;
  lengths: number[];
  mask: Float32Array;
  scatter: (values: readonly (number | readonly number[])[]) => Float32Array;
} {
  const lengths = groups.flatMap((g) => g.completions.map((c) => c.length));
  const rows = lengths.length;
  const cmax = Math.max(1, ...lengths);
  const mask = new Float32Array(rows * cmax);
  lengths.forEach((n, r) => mask.fill(1, r * cmax, r * cmax + n));
  const scatter = (values: readonly (number | readonly number[])[]): Float32Array => {
    const out = new Float32Array(rows * cmax);
    lengths.forEach((n, r) => {
      const v = values[r];
      if (v === undefined) throw new Error(`groupLayout: no values for row ${r}`);
      for (let j = 0; j < n; j++) {
        const x = typeof v === 'number' ? v : v[j];
        if (x === undefined) throw new Error(`groupLayout: row ${r} has too few values for ${n} tokens`);
        out[r * cmax + j] = x;
      }
    });
    return out;
  };
  return { rows, cmax, lengths, mask, scatter };
}

/**
 * {@link recomputeGroupLogprobs} under the frozen base of a LoRA model: the KL reference of a LoRA policy. Its
 * adapters are detached while scoring and attached again after.
 */
export async function baseGroupLogprobs(
  model: CausalLM,
  groups: readonly PromptGroup[],
  padId: number,
  chunkRows = 16,
): Promise<number[][]> {
  const saved = new Map(model.lora);
  model.lora.clear();
  try {
    return await recomputeGroupLogprobs(model, groups, padId, chunkRows);
  } finally {
    for (const [k, v] of saved) model.lora.set(k, v);
  }
}

/** Log-probs of every completion token of prompt groups (no gradients), `out[row][j]`, rows in group order. */
export async function recomputeGroupLogprobs(
  model: CausalLM,
  groups: readonly PromptGroup[],
  padId: number,
  chunkRows = 16,
): Promise<number[][]> {
  const out: number[][] = [];
  for (const chunk of chunkGroups(groups, chunkRows)) {
    const { cmax, lengths } = groupLayout(chunk);
    const t = tf.tidy(() => scoreGroups(model, chunk, cmax, padId).logp);
    const data = (await t.data()) as Float32Array;
    t.dispose();
    lengths.forEach((n, r) => out.push(Array.from(data.subarray(r * cmax, r * cmax + n))));
  }
  return out;
}

/**
 * Reduces a per-token quantity `[B, L-1]` (already multiplied by the mask) to a scalar: a sum divided by the batch's
 * completion tokens (`token-mean`) or by its sequences (`seq-mean-token-mean`: per-sequence token means; `dr-grpo`:
 * per-sequence token sums over a CONSTANT horizon). `divisor` replaces that count: a micro-batch passes its whole
 * mini-batch's count, so that the micro-batches' values add up to the mini-batch's.
 */
export function aggregate(
  x: tf.Tensor,
  mask: tf.Tensor,
  how: LossAggregation,
  maxTokens: number,
  divisor?: number,
): tf.Scalar {
  const sum =
    how === 'token-mean'
      ? x.sum()
      : how === 'seq-mean-token-mean'
        ? x.sum(1).div(mask.sum(1).maximum(1)).sum()
        : x.sum(1).div(Math.max(1, maxTokens)).sum(); // 'dr-grpo' (seq-mean-token-sum-norm)
  const count = divisor ?? (how === 'token-mean' ? mask.sum().maximum(1) : Math.max(1, x.shape[0]!));
  return sum.div(count) as tf.Scalar;
}

/** Consecutive runs of whole groups of about `rows` sequences each (a larger group is a run of its own). */
export function chunkGroups<G extends PromptGroup>(groups: readonly G[], rows: number): G[][] {
  const out: G[][] = [];
  for (let s = 0; s < groups.length;) {
    const chunk: G[] = [];
    let n = 0;
    while (s < groups.length && (chunk.length === 0 || n + groups[s]!.completions.length <= rows)) {
      n += groups[s]!.completions.length;
      chunk.push(groups[s++]!);
    }
    out.push(chunk);
  }
  return out;
}

/** One PPO mini-batch: whole prompt groups; per-row arrays follow the rows in group order. */
export interface PpoBatch {
  /** The prompt groups. */
  readonly groups: readonly PromptGroup[];
  /** Log-probs of the completion tokens before the update (recomputed by the trainer), per row. */
  readonly oldLogprobs: readonly (readonly number[])[];
  /** One advantage per row. */
  readonly advantages: readonly number[];
  /** Log-probs under the frozen reference (only with a KL coefficient), per row. */
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
  /**
   * Sequences per forward/backward pass (whole prompt groups): a larger mini-batch is scored in micro-batches of
   * about this many rows whose gradients are summed into ONE optimizer step (gradient accumulation), so the
   * mini-batch size is a training choice and this a memory one. Absent: the whole mini-batch in one pass.
   */
  readonly microBatchSize?: number;
  /**
   * Score every group, also those whose advantages are all 0. By default such groups are not run through the model
   * when the loss has neither a KL nor an entropy term: their terms are exactly 0, so leaving them out (while the
   * aggregation still divides by the whole mini-batch's tokens or sequences) gives the same gradient and the same
   * optimizer step at a fraction of the cost (most AT-GRPO groups of a well warm-started team have equal rewards).
   * For checks of that equality.
   */
  readonly scoreZeroAdvantageGroups?: boolean;
}

/**
 * Whether a group of `rows` rows starting at `first` can be left out of the PPO loss: all its advantages are 0 and
 * the loss has no KL and no entropy term, so every one of its terms (and their gradients) is exactly 0.
 */
export function skipsGroup(s: PpoSettings, advantages: readonly number[], first: number, rows: number): boolean {
  if (s.scoreZeroAdvantageGroups || s.klCoef > 0 || s.entropyCoef > 0) return false;
  for (let r = first; r < first + rows; r++) if (advantages[r] !== 0) return false;
  return true;
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
  /**
   * Completion tokens run through the model: those of the groups not left out as all-zero-advantage (see
   * {@link PpoSettings.scoreZeroAdvantageGroups}); `clipFraction` and `approxKl` are means over these tokens.
   */
  readonly scoredTokens: number;
}

/**
 * One AdamW step on the PPO-clip objective
 * `L = agg(max(−A·r, −A·clip(r, 1−εl, 1+εh))) + β·agg(k3(ref, new)) − c_H·agg(H)`, `r = exp(new − old)`, over the
 * whole mini-batch; with `s.microBatchSize` the mini-batch is scored in micro-batches of whole groups and their
 * gradients are summed (each micro-batch's terms are divided by the whole mini-batch's token or sequence count, so the
 * step equals the one-pass step up to float rounding).
 */
export function ppoStep(model: CausalLM, optimizer: AdamW, batch: PpoBatch, s: PpoSettings): PpoStepResult {
  const { parts, scalars, finish } = ppoParts(model, batch, s);
  try {
    // Nothing to score: the step's gradient is 0, and AdamW still takes its step (its moments decay and carry on).
    const res =
      parts.length > 0 ? accumulatedTrainStep(optimizer, parts) : { loss: 0, ...optimizer.applyZeroGradient() };
    return finish(
      res,
      scalars().map((x) => x.dataSync()[0]!),
    );
  } finally {
    tf.dispose(scalars());
  }
}

/** {@link ppoStep} reading its numbers asynchronously: the form the trainer uses (it also runs on webgpu in Node). */
export async function ppoStepAsync(
  model: CausalLM,
  optimizer: AdamW,
  batch: PpoBatch,
  s: PpoSettings,
): Promise<PpoStepResult> {
  const { parts, scalars, finish } = ppoParts(model, batch, s);
  try {
    const res =
      parts.length > 0
        ? await accumulatedTrainStepAsync(optimizer, parts)
        : { loss: 0, ...optimizer.applyZeroGradient() };
    return finish(
      res,
      (await Promise.all(scalars().map((x) => x.data()))).map((d) => d[0]!),
    );
  } finally {
    tf.dispose(scalars());
  }
}

/** The loss parts of one PPO step, the metric scalars they keep (filled as the parts run) and the result builder. */
function ppoParts(
  model: CausalLM,
  batch: PpoBatch,
  s: PpoSettings,
): {
  parts: (() => tf.Scalar)[];
  /** The kept scalars so far (all of them once the parts ran), in the order `finish` reads them. */
  scalars: () => tf.Scalar[];
  finish: (res: { loss: number; gradNorm: number; lr: number }, values: readonly number[]) => PpoStepResult;
} {
  const rowStart: number[] = [];
  const rowCount = batch.groups.reduce((n, g) => (rowStart.push(n), n + g.completions.length), 0);
  const countTokens = (gs: readonly PromptGroup[]): number =>
    gs.reduce((n, g) => n + g.completions.reduce((m, c) => m + c.length, 0), 0);
  // Groups whose terms are all exactly 0 are not scored; the aggregation still divides by the whole mini-batch.
  const indexed = batch.groups
    .map((g, i) => ({ ...g, first: rowStart[i]! }))
    .filter((g) => !skipsGroup(s, batch.advantages, g.first, g.completions.length));
  const tokens = countTokens(batch.groups);
  const scoredTokens = countTokens(indexed);
  const tokenDenom = Math.max(1, tokens);
  const scoredDenom = Math.max(1, scoredTokens);
  const divisor = s.aggregation === 'token-mean' ? tokenDenom : Math.max(1, rowCount);
  // the metrics' scalars, kept past each part's tidy and read after the step (no synchronous read inside it)
  const kept = { policyLoss: [] as tf.Scalar[], clip: [] as tf.Scalar[], approxKl: [] as tf.Scalar[] };
  const keptKl: tf.Scalar[] = [],
    keptEntropy: tf.Scalar[] = [];
  const parts = chunkGroups(indexed, s.microBatchSize ?? Infinity).map((chunk) => () => {
    const layout = groupLayout(chunk);
    const shape: [number, number] = [layout.rows, layout.cmax];
    const rows = chunk.flatMap((g) => g.completions.map((_, j) => g.first + j));
    const pick = <T>(values: readonly T[]): T[] => rows.map((r) => values[r]!);
    const { logp, entropy: ent } = scoreGroups(model, chunk, layout.cmax, s.padId, s.entropyCoef > 0);
    const mask = tf.tensor2d(layout.mask, shape);
    const A = tf.tensor2d(layout.scatter(pick(batch.advantages)), shape);
    const diff = logp.sub(tf.tensor2d(layout.scatter(pick(batch.oldLogprobs)), shape));
    const ratio = diff.exp();
    const unclipped = ratio.mul(A);
    const clipped = ratio.clipByValue(1 - s.clipLow, 1 + s.clipHigh).mul(A);
    const obj = tf.minimum(unclipped, clipped);
    const agg = (x: tf.Tensor): tf.Scalar => aggregate(x, mask, s.aggregation, s.maxTokens, divisor);
    const pl = agg(obj.neg().mul(mask));
    let total: tf.Scalar = pl;
    kept.policyLoss.push(tf.keep(pl.clone())); // a clone: `pl` may be the part's loss, which the step disposes
    kept.clip.push(tf.keep(tf.notEqual(unclipped, obj).cast('float32').mul(mask).sum()));
    kept.approxKl.push(tf.keep(diff.neg().mul(mask).sum()));
    if (s.klCoef > 0 && batch.refLogprobs) {
      const d = tf.tensor2d(layout.scatter(pick(batch.refLogprobs)), shape).sub(logp); // log(ref / new)
      const k3 = d.exp().sub(d).sub(1).mul(mask);
      const klTerm = agg(k3);
      keptKl.push(tf.keep(klTerm));
      total = total.add(klTerm.mul(s.klCoef));
    }
    if (ent) {
      const e = agg(ent.mul(mask));
      keptEntropy.push(tf.keep(ent.mul(mask).sum()));
      total = total.sub(e.mul(s.entropyCoef));
    }
    return total;
  });
  const scalars = (): tf.Scalar[] => [...kept.policyLoss, ...kept.clip, ...kept.approxKl, ...keptKl, ...keptEntropy];
  const finish = (res: { loss: number; gradNorm: number; lr: number }, values: readonly number[]): PpoStepResult => {
    const n = kept.policyLoss.length;
    const at = (from: number, count: number): number[] => values.slice(from, from + count);
    const sum = (xs: readonly number[], denom = 1): number => xs.reduce((a, x) => a + x / denom, 0);
    return {
      loss: res.loss,
      policyLoss: sum(at(0, n)),
      kl: sum(at(3 * n, keptKl.length)),
      entropy: s.entropyCoef > 0 ? sum(at(3 * n + keptKl.length, keptEntropy.length), tokenDenom) : NaN,
      clipFraction: sum(at(n, n), scoredDenom),
      approxKl: sum(at(2 * n, n), scoredDenom),
      gradNorm: res.gradNorm,
      lr: res.lr,
      tokens,
      scoredTokens,
    };
  };
  return { parts, scalars, finish };
}

/** One AdamW step on the token-mean negative log-likelihood of the completions (warm-start SFT). */
export async function sftStep(
  model: CausalLM,
  optimizer: AdamW,
  pairs: readonly SequencePair[],
  padId: number,
): Promise<{ loss: number; gradNorm: number; lr: number; tokens: number }> {
  const packed = packBatch(pairs, padId);
  const shape: [number, number] = [packed.B, packed.L - 1];
  const tokens = packed.lengths.reduce((a, b) => a + b, 0);
  const r = await trainStepAsync(optimizer, () => {
    const { logp } = scoreTokens(model, packed, false);
    const mask = tf.tensor2d(packed.mask, shape);
    return logp.mul(mask).sum().div(mask.sum().maximum(1)).neg() as tf.Scalar;
  });
  return { ...r, tokens };
}
