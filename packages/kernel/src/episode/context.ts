import type { Split } from '../contracts/common.js';
import type { Environment } from '../contracts/environment.js';
import type { Policy, SamplingParams } from '../contracts/policy.js';
import type { RewardFunction } from '../contracts/reward.js';
import type { Role } from '../contracts/role.js';

/** How one seat's reward is mixed from the reward function's terms: r = alpha·team + Σ weights[term]·term. */
export interface RewardMix {
  /** Weight of the `team` term (the paper's α; 1 reproduces the paper). */
  readonly alpha: number;
  /** Weights of the other terms (never `team`: that is `alpha`); a term not listed has weight 1. */
  readonly weights: Readonly<Record<string, number>>;
}

/** The default mix: α = 1 and weight 1 for every other term. */
export const DEFAULT_REWARD_MIX: RewardMix = Object.freeze({ alpha: 1, weights: Object.freeze({}) });

/** One seat of an episode: who plays it and how its reward is mixed. */
export interface SeatBinding {
  /** The seat name (must match the environment's seat at the same position). */
  readonly name: string;
  /** The role that prompts the policy and parses its text. */
  readonly role: Role;
  /** The policy that plays the seat. */
  readonly policy: Policy;
  /** Explicit sampling parameters of the seat. */
  readonly sampling: SamplingParams;
  /** Reward mixing of the seat (default {@link DEFAULT_REWARD_MIX}). */
  readonly rewardMix?: RewardMix;
  /**
   * Whether requests carry the `scripted` context (true state, environment, role). Default: whether the policy
   * declares `scripted: true` (see {@link isScriptedPolicy}). Model policies never need it, and it must not be sent
   * to them: it holds functions that cannot cross a worker boundary.
   */
  readonly scriptedContext?: boolean;
  /** Branches K of this seat, in place of the episode's `branches` (AT-GRPO's `algorithm.seatBranches`). */
  readonly branches?: number;
  /**
   * With K ≥ 2: branch 0 is the seat's greedy decision (temperature 0) and branches 1..K−1 are sampled as usual
   * (AT-GRPO's `algorithm.greedyBranch`). The group then holds what evaluation would play, so its advantages say
   * whether a sample beats it. Default false; ignored with K = 1.
   */
  readonly greedyBranch?: boolean;
  /**
   * With a greedy branch: the episode continues from it instead of the best branch (AT-GRPO's `algorithm.selection:
   * greedy`), so the tree visits the states greedy play (evaluation) reaches. Default false.
   */
  readonly continueFromGreedy?: boolean;
}

/** Everything one episode needs. */
export interface EpisodeContext<I = unknown> {
  /** The environment. */
  readonly environment: Environment<I>;
  /** The task instance. */
  readonly instance: I;
  /** Unique id of the instance (AT-GRPO groups are keyed by it). */
  readonly instanceUid: string;
  /** Split the instance comes from. */
  readonly split: Split;
  /** Unique id of this episode; default `instanceUid`. Give distinct ids when one instance is played several times. */
  readonly episodeId?: string;
  /** Seats, in the environment's turn order. */
  readonly seats: readonly SeatBinding[];
  /** The reward function. */
  readonly reward: RewardFunction;
  /** Branches K per (turn, seat): 1 for plain runs and evaluation. Default 1. A seat's own `branches` wins. */
  readonly branches?: number;
  /** Seed: sample seeds and tie-breaks derive from (seed, episodeId, turn, seat). */
  readonly seed: number;
  /** Whether to pass the role's output grammar to the policy (constrained decoding). Default false. */
  readonly grammar?: boolean;
  /** Turn limit; default (and at most) the environment's `maxTurns`. */
  readonly maxTurns?: number;
  /**
   * Deep-freezes every state the environment returns, so that an environment that mutates a state throws a
   * TypeError at the mutation. Costs a walk over each state; meant for tests and debugging. Default false.
   */
  readonly freezeStates?: boolean;
}

/** A policy that wants the `scripted` context (true state) in its requests. */
export interface ScriptedPolicyMarker {
  /** Set by scripted policies (oracle, random, test fakes). */
  readonly scripted: true;
}

/** Whether a policy declares itself scripted (`scripted: true`), i.e. wants the true state in its requests. */
export function isScriptedPolicy(policy: Policy): policy is Policy & ScriptedPolicyMarker {
  return (policy as Partial<ScriptedPolicyMarker>).scripted === true;
}

/**
 * Mixes reward terms into one reward: `alpha·terms.team + Σ_{k ≠ team} (weights[k] ?? 1)·terms[k]`.
 * Throws a descriptive error for a non-finite term, a missing `team` term with α ≠ 0, or a weighted term the reward
 * function did not produce. `where` (a string or a function giving one) prefixes error messages.
 */
export function mixReward(
  terms: Readonly<Record<string, number>>,
  mix: RewardMix,
  where: string | (() => string) = 'reward',
): number {
  const at = (): string => (typeof where === 'function' ? where() : where);
  for (const [name, value] of Object.entries(terms)) {
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new Error(
        `${at()}: term '${name}' is ${String(value)}; reward terms must be finite numbers (check the reward function).`,
      );
    }
  }
  if (!Number.isFinite(mix.alpha))
    throw new Error(`${at()}: alpha is ${String(mix.alpha)}; it must be a finite number.`);
  let r = 0;
  if (mix.alpha !== 0) {
    if (!('team' in terms)) {
      throw new Error(
        `${at()}: the reward function returned no 'team' term but alpha is ${mix.alpha}; set alpha: 0 for this seat or produce a 'team' term.`,
      );
    }
    r += mix.alpha * terms.team!;
  }
  for (const name of Object.keys(mix.weights)) {
    if (name === 'team') {
      throw new Error(`${at()}: weights.team is not used; the team term is weighted by alpha (set alpha instead).`);
    }
    if (!(name in terms)) {
      throw new Error(
        `${at()}: weight given for term '${name}' but the reward function produced only [${Object.keys(terms).join(', ')}].`,
      );
    }
  }
  for (const [name, value] of Object.entries(terms)) {
    if (name === 'team') continue;
    const w = mix.weights[name] ?? 1;
    if (!Number.isFinite(w))
      throw new Error(`${at()}: weight of term '${name}' is ${String(w)}; it must be a finite number.`);
    r += w * value;
  }
  return r;
}

/**
 * Recursively freezes a plain value (own enumerable properties of objects and arrays; cycles are handled). Returns
 * the value. Already-frozen objects are still walked, because `Object.freeze` is shallow.
 */
export function deepFreeze<T>(value: T, seen: WeakSet<object> = new WeakSet()): T {
  if (value !== null && typeof value === 'object' && !seen.has(value)) {
    seen.add(value);
    if (ArrayBuffer.isView(value)) return value; // typed arrays with elements cannot be frozen
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key], seen);
  }
  return value;
}
