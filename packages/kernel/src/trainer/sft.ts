/**
 * Warm start: supervised fine-tuning on the environment oracle's demonstrations. Each demonstration is one oracle
 * play-through of a train instance; at every (turn, seat) the seat's ROLE builds the prompt from the REAL observation
 * of the state along the oracle trajectory and renders the oracle's action as the target text (exactly what the
 * model would have to write), followed by the end-of-sequence token.
 */
import type { Environment } from '../contracts/environment.js';
import type { ChatMessage } from '../contracts/common.js';
import type { SeatBinding } from '../episode/context.js';
import { AdamW, type SequencePair } from '../policy/lm/train.js';
import { createRng, deriveSeed, shuffled } from '../util/rng.js';
import type { WarmStartConfig } from './config.js';
import { sftStep } from './loss.js';
import type { PolicyHandle } from './policies.js';

/** One demonstration sample: what one seat should have written in one state. */
export interface Demonstration {
  /** Instance index in the train split's demonstration stream. */
  readonly index: number;
  /** Turn. */
  readonly turn: number;
  /** Seat. */
  readonly seat: string;
  /** Policy name of the seat. */
  readonly policy: string;
  /** The prompt (the role's prompt of the real observation). */
  readonly messages: readonly ChatMessage[];
  /** The target text (the role's rendering of the oracle action). */
  readonly text: string;
}

/** Options of {@link collectDemonstrations}. */
export interface DemonstrationOptions {
  /** Number of oracle play-throughs. */
  readonly count: number;
  /** Seed of the demonstration instance stream (train split). */
  readonly seed: number;
  /** Keep only play-throughs the oracle solved. Default true. */
  readonly successfulOnly?: boolean;
}

/**
 * Plays `count` train instances with the environment's oracle and returns one demonstration per (turn, seat).
 * Throws naming the environment when it has no oracle.
 */
export async function collectDemonstrations(environment: Environment, seats: readonly SeatBinding[], options: DemonstrationOptions): Promise<Demonstration[]> {
  if (!environment.oracle) {
    throw new Error(`warm start: environment '${environment.id}' has no oracle, so there are no demonstrations; remove 'algorithm.warmStart' from the team spec.`);
  }
  const out: Demonstration[] = [];
  for (let index = 0; index < options.count; index++) {
    const instance = environment.instance('train', index, options.seed);
    let state = environment.reset(instance);
    const episode: Demonstration[] = [];
    let success = false;
    play: for (let turn = 0; turn < environment.maxTurns; turn++) {
      for (let i = 0; i < seats.length; i++) {
        const seat = seats[i]!;
        const ctx = { seat: seat.name, actionType: environment.seats[i]!.actionType };
        const messages = seat.role.prompt(environment.observe(state, seat.name), ctx);
        const action = environment.oracle(state, seat.name);
        const text = seat.role.render(action, ctx);
        episode.push({ index, turn, seat: seat.name, policy: seat.policy.name, messages, text });
        const r = await environment.step(state, seat.name, { kind: 'action', action, text });
        state = r.state;
        success = r.success;
        if (r.done.terminated || r.done.truncated) break play;
      }
    }
    if (success || options.successfulOnly === false) out.push(...episode);
  }
  return out;
}

/** Per-policy result of the warm start. */
export interface WarmStartResult {
  /** Demonstration samples per policy. */
  readonly samples: Record<string, number>;
  /** Mean SFT loss of the first and last epoch, per policy. */
  readonly firstEpochLoss: Record<string, number>;
  readonly lastEpochLoss: Record<string, number>;
  /** Optimizer steps per policy. */
  readonly optimizerSteps: Record<string, number>;
  /** Wall seconds. */
  readonly seconds: number;
}

/**
 * SFT of every trainable policy on ITS seats' demonstrations (a fresh AdamW per policy, constant lr, token-mean NLL,
 * shuffled mini-batches with a seeded stream). Increments each trained policy's version once.
 */
export async function warmStart(
  handles: readonly PolicyHandle[],
  demos: readonly Demonstration[],
  config: WarmStartConfig,
  options: { seed: number; maxGradNorm: number; onProgress?: (policy: string, epoch: number, loss: number) => void },
): Promise<WarmStartResult> {
  const started = performance.now();
  const res: { samples: Record<string, number>; firstEpochLoss: Record<string, number>; lastEpochLoss: Record<string, number>; optimizerSteps: Record<string, number> } = {
    samples: {}, firstEpochLoss: {}, lastEpochLoss: {}, optimizerSteps: {},
  };
  for (const h of handles) {
    const lm = h.trainable;
    if (!lm) continue;
    const mine = demos.filter((d) => d.policy === h.name);
    res.samples[h.name] = mine.length;
    if (mine.length === 0) continue;
    const eos = lm.tokenizer.eosTokenId ?? lm.model.config.eosTokenIds[0];
    const pairs: SequencePair[] = mine.map((d) => ({
      promptIds: lm.promptIds(d.messages),
      completionIds: [...lm.tokenizer.encode(d.text), ...(eos !== undefined ? [eos] : [])],
    }));
    const opt = new AdamW(lm.model.trainableVariables(), { lr: config.lr, maxGradNorm: options.maxGradNorm });
    const rng = createRng(deriveSeed(options.seed, 'warm-start', h.name));
    let steps = 0;
    try {
      for (let epoch = 0; epoch < config.epochs; epoch++) {
        const order = shuffled(pairs.map((_, i) => i), rng);
        let sum = 0, n = 0;
        for (let s = 0; s < order.length; s += config.miniBatchSize) {
          const batch = order.slice(s, s + config.miniBatchSize).map((i) => pairs[i]!);
          const r = sftStep(lm.model, opt, batch, lm.tokenizer.padTokenId ?? 0);
          sum += r.loss;
          n++;
          steps++;
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
        const mean = sum / Math.max(1, n);
        if (epoch === 0) res.firstEpochLoss[h.name] = mean;
        res.lastEpochLoss[h.name] = mean;
        options.onProgress?.(h.name, epoch, mean);
      }
    } finally {
      opt.dispose();
    }
    res.optimizerSteps[h.name] = steps;
    lm.version++;
  }
  return { ...res, seconds: (performance.now() - started) / 1000 };
}
