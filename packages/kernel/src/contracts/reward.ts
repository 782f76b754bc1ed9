import type { JsonSchema, Move } from './common.js';
import type { StepResult } from './environment.js';

/** Contribution point for reward functions. */
export const RewardContribution = Symbol.for('troupe.RewardContribution');

/** A factory for one reward id (e.g. `game-team-v0`). */
export interface RewardContribution {
  /** Versioned id, `name-vN`. */
  readonly id: string;
  /** One line for `troupe plugins ls`. */
  readonly description: string;
  /** The term names it produces (e.g. `team`, `local`, `format`). */
  readonly terms: readonly string[];
  /** JSON schema of its config (from the team spec's `rewards.config`). */
  readonly configSchema: JsonSchema;
  /** Builds the reward function for one validated config. */
  create(config: Record<string, unknown>): RewardFunction;
  /**
   * Optional checks a schema cannot express, run by `troupe validate` on the validated config (with per-seat
   * configs under `seats`, see `rewardConfigOf`): e.g. that every signal it names is one the environment produces.
   */
  check?(config: Record<string, unknown>, context: RewardCheckContext): readonly ConfigProblem[];
}

/** What a reward's {@link RewardContribution.check} may look at. */
export interface RewardCheckContext {
  /** The environment id. */
  readonly environment: string;
  /** The environment's seats, in turn order. */
  readonly seats: readonly string[];
  /** The signal names the environment declares (undefined when it declares none). */
  readonly signals?: readonly string[];
}

/** A problem with a config, at a key path relative to the config object. */
export interface ConfigProblem {
  /** Key path, e.g. `['seats', 'proposer', 'local']`. */
  readonly path: readonly (string | number)[];
  /** What is wrong. */
  readonly message: string;
  /** What to do. */
  readonly hint?: string;
}

/** One transition as a reward function sees it. */
export interface Transition<S = unknown> {
  /** The seat that acted. */
  readonly seat: string;
  /** The turn index (0-based). */
  readonly turn: number;
  /** The state before the step. */
  readonly before: S;
  /** What the seat did. */
  readonly move: Move;
  /** What the environment returned. */
  readonly result: StepResult<S>;
}

/** Turns a transition into named reward terms. The team spec weights them per seat: r = α·team + local (+ ...). */
export interface RewardFunction {
  /** The contribution id. */
  readonly id: string;
  /** Named finite terms for this transition; every term listed in the contribution's `terms` is present. */
  terms(transition: Transition): Record<string, number>;
}
