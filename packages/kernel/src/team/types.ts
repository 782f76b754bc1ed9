import type { SamplingParams } from '../contracts/policy.js';
import type { Split } from '../contracts/common.js';

/**
 * A resolved, validated team spec (after `extends` is merged and defaults are filled). This is what the YAML
 * file describes; see `schemas/team.schema.json` for the exact grammar and defaults. Example:
 *
 * ```yaml
 * name: plan-path-pair
 * seed: 7
 * environment: { id: plan-path, config: { size: 6, reward: shaped } }
 * policies:
 *   shared: { kind: oracle }
 * seats:
 *   proposer: { role: planner, policy: shared, sampling: { temperature: 1, topP: 1, topK: 0, maxTokens: 48 } }
 *   executor: { role: planner, policy: shared, sampling: { temperature: 1, topP: 1, topK: 0, maxTokens: 48 } }
 * rewards:
 *   id: signals
 *   config: { team: executed_reward }
 *   seats:
 *     proposer: { alpha: 1, config: { local: proposal_reward } }
 *     executor: { alpha: 1, config: { local: executed_reward } }
 * algorithm: { name: at-grpo, branches: 4, batchSize: 8, steps: 100 }
 * evaluation: { split: test, episodes: 100 }
 * ```
 *
 * A file may also say `extends: <preset or ./file.yaml>` (merged first: maps merge, lists and scalars replace) and
 * `seatDefaults: { role, roleConfig, policy, sampling }` (merged under every seat); neither key remains in the
 * resolved spec. Load with `loadTeamSpec(file)` / `parseTeamSpec(text, file)`.
 */
export interface TeamSpec {
  /** A name for logs and output folders. */
  readonly name: string;
  /** Absolute path of the file it was read from (or `<embedded>`). */
  readonly file: string;
  /** Master seed: instances, samples and tie-breaks derive from it. */
  readonly seed: number;
  /** The environment and its config. */
  readonly environment: { readonly id: string; readonly config: Record<string, unknown> };
  /** Seats by name (must be exactly the environment's seats; turn order is the environment's). */
  readonly seats: Readonly<Record<string, SeatSpecEntry>>;
  /** Policies by name. Several seats naming one policy share it (L1); one policy per seat is L2/L3. */
  readonly policies: Readonly<Record<string, PolicySpecEntry>>;
  /** Reward function and per-seat mixing. */
  readonly rewards: RewardSpec;
  /** The training algorithm and its hyper-parameters. */
  readonly algorithm: AlgorithmSpec;
  /** Evaluation settings. */
  readonly evaluation: EvaluationSpec;
  /** Where rollouts run (absent: in this process); see `resolveExecution`. */
  readonly execution?: ExecutionSpec;
}

/** The `execution` section as written (see `schemas/team.schema.json`); `resolveExecution` fills the defaults. */
export interface ExecutionSpec {
  readonly engine?: 'in-process' | 'bullmq';
  readonly redis?: string;
  readonly queue?: string;
  readonly pools?: Readonly<Record<string, string>>;
  readonly updatePools?: Readonly<Record<string, string>>;
  readonly attempts?: number;
  readonly deadlineMs?: number;
  readonly redisTimeoutMs?: number;
  readonly checkpoints?: string;
  readonly batching?: 'step' | 'instance';
}

/** One seat of the team. */
export interface SeatSpecEntry {
  /** Role id or shorthand (`planner` → `planner-v0` from `@troupe/role-planner`). */
  readonly role: string;
  /** Role config. */
  readonly roleConfig: Record<string, unknown>;
  /** Name of a policy in `policies`. */
  readonly policy: string;
  /** Sampling parameters of this seat (explicit; no hidden defaults). */
  readonly sampling: SamplingParams;
}

/** One policy. `kind` names a policy contribution (`oracle`, `random`, `tfjs-causal-lm`, `openai`, ...). */
export interface PolicySpecEntry {
  /** The policy contribution id. */
  readonly kind: string;
  /** Everything else, validated against the contribution's config schema. */
  readonly [key: string]: unknown;
}

/** Reward mixing: r = alpha · team + Σ weights[term] · term, per seat. */
export interface RewardSpec {
  /** Reward contribution id or shorthand. */
  readonly id: string;
  /** Config of the reward function. */
  readonly config: Record<string, unknown>;
  /** Per-seat mixing. Seats not listed use alpha 1 and weight 1 for every other term. */
  readonly seats: Readonly<Record<string, SeatRewardMix>>;
}

/** How one seat's reward is mixed from the terms. */
export interface SeatRewardMix {
  /** Weight of the `team` term (the paper's α). */
  readonly alpha: number;
  /** Weights of the other terms (default 1 each). */
  readonly weights: Readonly<Record<string, number>>;
  /** Term-specific config for this seat (read by the reward function, e.g. which signal is the local term). */
  readonly config: Record<string, unknown>;
}

/** The algorithm. `none` plays without training; `grpo-naive` groups whole trajectories. */
export interface AlgorithmSpec {
  readonly name: 'at-grpo' | 'grpo-naive' | 'none';
  /** Branches K sampled per (instance, turn, seat). */
  readonly branches: number;
  /** Instances B per training step. */
  readonly batchSize: number;
  /** Training steps. */
  readonly steps: number;
  /** Episodes run concurrently. */
  readonly concurrency: number;
  /** Every other hyper-parameter (learning rate, clip ε, loss aggregation, ...), validated by the trainer. */
  readonly [key: string]: unknown;
}

/** Evaluation: independent rollouts, one branch, fixed decoding. */
export interface EvaluationSpec {
  /** Held-out split to evaluate on. */
  readonly split: Split;
  /** Number of episodes. */
  readonly episodes: number;
  /**
   * Also evaluate the model RL starts from (after the warm start) on the same episodes before training, and compare
   * the final model with it episode by episode (`baseline-eval.json`, `compare/*` metrics, the report). Default true.
   */
  readonly baseline: boolean;
}
