/**
 * One policy's PPO update of one training step, split in two so that it can run in a worker thread:
 *
 * ```
 * main thread  planMiniBatches: epochs × shuffled mini-batches of whole prompt groups (consumes the trainer's RNG)
 * any thread   ppoUpdate:       old log-probs recomputed under the current weights, reference log-probs (KL only),
 *                               then one PPO-clip AdamW step per planned mini-batch
 * ```
 *
 * Plans and settings are plain data (they cross into update workers, see update-thread.ts), and the trainer's
 * in-thread path runs the very same {@link ppoUpdate}, so threaded and in-thread updates cannot drift apart.
 */
import { type Rng, shuffled } from '@troupe/kernel';
import type { CausalLM, AdamW } from '@troupe/lm/model';
import {
  ppoStepAsync,
  recomputeGroupLogprobs,
  skipsGroup,
  type PpoSettings,
  type PpoStepResult,
  type PromptGroup,
} from './loss.js';

/** What one policy trains on in one step, and in which order. */
export interface PpoUpdatePlan {
  /** The policy's current-version samples grouped by shared prompt (rows in group order). */
  readonly groups: readonly PromptGroup[];
  /** One advantage per row, rows in group order. */
  readonly advantages: readonly number[];
  /** Per epoch, its mini-batches in training order, each a list of group indices (whole groups). */
  readonly epochs: readonly (readonly (readonly number[])[])[];
  /**
   * The sampler's log-probs of every completion token (from generation), one row per sequence in group order. When
   * given, the update reports how far the trainer's recomputed old log-probs are from them (`sampler_gap_mean`,
   * `sampler_gap_max`): on-policy they must agree, and a gap means the trainer scores other tokens or another context
   * than the sampler generated.
   */
  readonly samplerLogprobs?: readonly (readonly number[])[];
}

/** Settings of {@link ppoUpdate}: those of every PPO step, with the micro-batch size required. */
export interface PpoUpdateSettings extends PpoSettings {
  /** Rows per forward/backward pass of each PPO step, and rows scored at once when recomputing old and reference log-probs. */
  readonly microBatchSize: number;
}

/**
 * Mini-batches of whole prompt groups, about `miniBatchSize` sequences each, for `epochs` passes: each pass shuffles
 * the group order with `rng` (one draw per epoch, in epoch order), then fills mini-batches greedily in that order
 * (a group larger than `miniBatchSize` gets a mini-batch of its own).
 */
export function planMiniBatches(
  groups: readonly PromptGroup[],
  miniBatchSize: number,
  epochs: number,
  rng: Rng,
): number[][][] {
  const out: number[][][] = [];
  for (let epoch = 0; epoch < epochs; epoch++) {
    const order = shuffled(
      groups.map((_, i) => i),
      rng,
    );
    const batches: number[][] = [];
    for (let s = 0; s < order.length;) {
      const mb: number[] = [];
      let rows = 0;
      while (s < order.length && (mb.length === 0 || rows + groups[order[s]!]!.completions.length <= miniBatchSize)) {
        rows += groups[order[s]!]!.completions.length;
        mb.push(order[s++]!);
      }
      batches.push(mb);
    }
    out.push(batches);
  }
  return out;
}

/**
 * Runs a planned update on `model` with `optimizer` (whose options carry the step's learning rate): recomputes the
 * old log-probs under the current weights, the reference log-probs when `settings.klCoef > 0` (through `reference`),
 * then one {@link ppoStep} per planned mini-batch. Groups whose advantages are all 0 are left out of both when the
 * loss has no KL and no entropy term (their terms are exactly 0; see {@link PpoSettings.scoreZeroAdvantageGroups}).
 * Returns the per-step means of `loss`, `policy_loss`, `kl` (KL only), `entropy` (entropy bonus only),
 * `clip_fraction`, `approx_kl` (both over the scored tokens), `grad_norm`, the summed `tokens` and `scored_tokens`,
 * `scored_samples` and `optimizer_steps`. Throws naming the plan's problem when it does not match its groups.
 */
export async function ppoUpdate(
  model: CausalLM,
  optimizer: AdamW,
  plan: PpoUpdatePlan,
  settings: PpoUpdateSettings,
  reference?: (groups: readonly PromptGroup[]) => Promise<number[][]>,
): Promise<Record<string, number>> {
  const { groups } = plan;
  const rowStart: number[] = [];
  const rows = groups.reduce((n, g) => (rowStart.push(n), n + g.completions.length), 0);
  if (plan.advantages.length !== rows)
    throw new Error(`PPO update: ${plan.advantages.length} advantages for ${rows} sequences`);
  // Groups whose advantages are all 0 (under a loss without KL and entropy) are never scored: no old log-probs either.
  const scored = groups.map((g, i) => !skipsGroup(settings, plan.advantages, rowStart[i]!, g.completions.length));
  const scoredRows = groups.flatMap((g, i) => (scored[i] ? g.completions.map((_, j) => rowStart[i]! + j) : []));
  const recomputed = await recomputeGroupLogprobs(
    model,
    groups.filter((_, i) => scored[i]),
    settings.padId,
    settings.microBatchSize,
  );
  const old: (readonly number[])[] = Array.from({ length: rows }, () => []);
  scoredRows.forEach((row, k) => {
    old[row] = recomputed[k]!;
  });
  const gap =
    plan.samplerLogprobs && scoredRows.length > 0
      ? samplerGap(
          recomputed,
          scoredRows.map((r) => plan.samplerLogprobs![r]!),
        )
      : undefined;
  let ref: number[][] | undefined;
  if (settings.klCoef > 0) {
    if (!reference) throw new Error('PPO update: a KL coefficient is set but there is no reference model');
    ref = await reference(groups);
  }
  const sums = {
    loss: 0,
    policy_loss: 0,
    kl: 0,
    entropy: 0,
    clip_fraction: 0,
    approx_kl: 0,
    grad_norm: 0,
    tokens: 0,
    scored_tokens: 0,
  };
  let n = 0;
  for (const batches of plan.epochs) {
    for (const mb of batches) {
      const bad = mb.find((gi) => !Number.isInteger(gi) || groups[gi] === undefined);
      if (bad !== undefined)
        throw new Error(`PPO update: the plan names group ${bad}, but there are ${groups.length} groups`);
      const rowIdx = mb.flatMap((gi) => groups[gi]!.completions.map((_, j) => rowStart[gi]! + j));
      const r: PpoStepResult = await ppoStepAsync(
        model,
        optimizer,
        {
          groups: mb.map((gi) => groups[gi]!),
          oldLogprobs: rowIdx.map((i) => old[i]!),
          advantages: rowIdx.map((i) => plan.advantages[i]!),
          ...(ref ? { refLogprobs: rowIdx.map((i) => ref[i]!) } : {}),
        },
        settings,
      );
      sums.loss += r.loss;
      sums.policy_loss += r.policyLoss;
      sums.kl += r.kl;
      sums.entropy += r.entropy;
      sums.clip_fraction += r.clipFraction;
      sums.approx_kl += r.approxKl;
      sums.grad_norm += r.gradNorm;
      sums.tokens += r.tokens;
      sums.scored_tokens += r.scoredTokens;
      n++;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(sums)) out[k] = k === 'tokens' || k === 'scored_tokens' ? v : v / Math.max(1, n);
  out.scored_samples = scoredRows.length;
  if (!(settings.entropyCoef > 0)) delete out.entropy;
  if (!(settings.klCoef > 0)) delete out.kl;
  out.optimizer_steps = n;
  if (gap) {
    out.sampler_gap_mean = gap.mean;
    out.sampler_gap_max = gap.max;
  }
  return out;
}

/** Mean and largest |recomputed − sampled| log-prob over all tokens (rows must have the same lengths). */
export function samplerGap(
  recomputed: readonly (readonly number[])[],
  sampled: readonly (readonly number[])[],
): { mean: number; max: number } {
  if (recomputed.length !== sampled.length)
    throw new Error(`PPO update: ${sampled.length} rows of sampler log-probs for ${recomputed.length} sequences`);
  let sum = 0,
    n = 0,
    max = 0;
  recomputed.forEach((row, r) => {
    const s = sampled[r]!;
    if (s.length !== row.length)
      throw new Error(`PPO update: sequence ${r} has ${row.length} tokens but ${s.length} sampler log-probs`);
    row.forEach((x, j) => {
      const d = Math.abs(x - s[j]!);
      sum += d;
      n++;
      if (d > max) max = d;
    });
  });
  return { mean: n ? sum / n : 0, max };
}
