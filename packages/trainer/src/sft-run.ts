/**
 * One policy's supervised fine-tuning run: epochs of shuffled (optionally length-grouped) mini-batches of its
 * (prompt, completion) pairs under a fresh AdamW. The warm start runs it in the main thread or in a worker thread
 * (sft-thread.ts, sft-worker.ts); the same inputs give the same weights in either.
 */
import { createRng, shuffled, type Rng, type WarmStartConfig } from '@troupe/kernel';
import { AdamW, type CausalLM, type SequencePair } from '@troupe/lm/model';
import { sftStep } from './loss.js';

/** What one policy's SFT run reports. */
export interface SftRunResult {
  /** Mean loss of the first epoch. */
  readonly firstEpochLoss: number;
  /** Mean loss of the last epoch. */
  readonly lastEpochLoss: number;
  /** Optimizer steps taken. */
  readonly steps: number;
}

/** Settings of {@link sftRun} (plain data: they cross into worker threads). */
export interface SftRunSettings {
  /** Seed of the mini-batch shuffling stream. */
  readonly rngSeed: number;
  /** Gradient-norm clip. */
  readonly maxGradNorm: number;
  /** Padding token id. */
  readonly padId: number;
}

/** Mini-batches per megabatch when grouping by length (Hugging Face's LengthGroupedSampler uses 50). */
export const LENGTH_GROUP_BATCHES = 64;

/**
 * The mini-batches of one epoch, as lists of indices into `lengths`: a seeded shuffle cut into slices of `size` (the
 * last one shorter when `size` does not divide the count). With `groupByLength`, the shuffle is first cut into
 * megabatches of {@link LENGTH_GROUP_BATCHES} mini-batches, each megabatch sorted by length (stable) before it is
 * sliced, and the mini-batches are then shuffled: the same number of mini-batches, each of sequences of similar
 * length (so little padding).
 */
export function epochBatches(lengths: readonly number[], size: number, rng: Rng, groupByLength = false): number[][] {
  const order = shuffled(
    lengths.map((_, i) => i),
    rng,
  );
  const slice = (ids: readonly number[]): number[][] =>
    Array.from({ length: Math.ceil(ids.length / size) }, (_, k) => ids.slice(k * size, k * size + size));
  if (!groupByLength) return slice(order);
  const mega = size * LENGTH_GROUP_BATCHES;
  const batches: number[][] = [];
  for (let s = 0; s < order.length; s += mega) {
    batches.push(...slice(order.slice(s, s + mega).sort((a, b) => lengths[a]! - lengths[b]!)));
  }
  return shuffled(batches, rng);
}

/**
 * SFT of one model on its (prompt, completion) pairs: a fresh AdamW over the model's trainable variables, the
 * configured lr schedule over all steps, token-mean NLL, shuffled mini-batches from a seeded stream (grouped by length
 * with `groupByLength`, see {@link epochBatches}). The same inputs
 * give the same weights on the same backend, in the main thread or in a worker.
 */
export async function sftRun(
  model: CausalLM,
  pairs: readonly SequencePair[],
  config: Pick<WarmStartConfig, 'epochs' | 'lr' | 'miniBatchSize' | 'schedule' | 'warmupSteps'> & {
    readonly groupByLength?: boolean;
  },
  settings: SftRunSettings,
  onEpoch?: (epoch: number, loss: number) => void,
): Promise<SftRunResult> {
  const totalSteps = config.epochs * Math.ceil(pairs.length / config.miniBatchSize);
  const schedule = config.schedule ?? 'constant';
  const warmupSteps = Math.min(config.warmupSteps ?? 0, Math.max(0, totalSteps - 1));
  const lr =
    schedule === 'constant' && warmupSteps === 0
      ? config.lr
      : { kind: schedule, lr: config.lr, warmupSteps, totalSteps };
  const opt = new AdamW(model.trainableVariables(), { lr, maxGradNorm: settings.maxGradNorm });
  const rng = createRng(settings.rngSeed);
  const lengths = pairs.map((p) => p.promptIds.length + p.completionIds.length);
  let steps = 0;
  let firstEpochLoss = NaN;
  let lastEpochLoss = NaN;
  try {
    for (let epoch = 0; epoch < config.epochs; epoch++) {
      let sum = 0,
        n = 0;
      for (const ids of epochBatches(lengths, config.miniBatchSize, rng, config.groupByLength === true)) {
        sum += (
          await sftStep(
            model,
            opt,
            ids.map((i) => pairs[i]!),
            settings.padId,
          )
        ).loss;
        n++;
        steps++;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      const mean = sum / Math.max(1, n);
      if (epoch === 0) firstEpochLoss = mean;
      lastEpochLoss = mean;
      onEpoch?.(epoch, mean);
    }
  } finally {
    opt.dispose();
  }
  return { firstEpochLoss, lastEpochLoss, steps };
}
