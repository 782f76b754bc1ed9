import type { JsonSchema, Move, ProgramLanguage, Rng, Split } from './common.js';

/**
 * Contribution point for environments. A plugin binds a class implementing {@link EnvironmentContribution} and
 * aliases it to this symbol: `bind(EnvironmentContribution).toService(PlanPathEnvironment)`.
 */
export const EnvironmentContribution = Symbol.for('troupe.EnvironmentContribution');

/** A factory for one environment id (e.g. `plan-path-v0`), configured by the team spec's `environment.config`. */
export interface EnvironmentContribution {
  /** Versioned id, `name-vN`. Bump N whenever dynamics or rewards change. */
  readonly id: string;
  /** One line for `troupe plugins ls`. */
  readonly description: string;
  /** JSON schema of the config object; defaults are filled in by the kernel before `create` is called. */
  readonly configSchema: JsonSchema;
  /** Builds the environment for one validated config. */
  create(config: Record<string, unknown>): Environment;
}

/** One seat of the team an environment needs, in turn order. */
export interface SeatSpec {
  /** Seat name, e.g. `proposer`, `executor`, `coder`, `tester`. */
  readonly name: string;
  /** Name of the action type this seat must produce (see {@link ActionTypeSpec}). */
  readonly actionType: string;
  /** What the seat is for, shown in docs and errors. */
  readonly description: string;
}

/** A named action type with the JSON schema its values satisfy; roles declare which types they produce. */
export interface ActionTypeSpec {
  /** Name, e.g. `moves`, `sudoku-grid`, `program`, `unit-tests`, `answer`. */
  readonly name: string;
  /** JSON schema of a valid action value. */
  readonly schema: JsonSchema;
  /** What the action means. */
  readonly description: string;
}

/**
 * What a seat is shown. The environment renders the CURRENT state; the role turns this into a prompt.
 * Roles are reusable across environments, so everything a role needs is text plus a few well-known fields.
 */
export interface Observation {
  /** The task, stated once (rules, goal, legend, output contract in words). */
  readonly task: string;
  /** The current state, rendered as text. Always the current one, never the initial one. */
  readonly state: string;
  /**
   * What other seats said or did that this seat may see (in order), e.g. the proposer's plan and its simulated
   * outcome, or the coder's program and the test results.
   */
  readonly context: readonly { readonly label: string; readonly text: string }[];
  /** The turn index (0-based). */
  readonly turn: number;
  /** Structured data for tools and scripted policies; never needed to build a prompt. */
  readonly data?: Readonly<Record<string, unknown>>;
}

/** Termination, Gymnasium-style: `terminated` is a natural end (solved or failed), `truncated` a time limit. */
export interface Termination {
  /** The episode reached a terminal state of the task. */
  readonly terminated: boolean;
  /** The episode was cut by the turn limit. */
  readonly truncated: boolean;
}

/** Result of one seat's step. `state` is a NEW value; the input state is never modified. */
export interface StepResult<S> {
  /** The next state (a fresh immutable value). */
  readonly state: S;
  /** Whether the episode ends after this step. */
  readonly done: Termination;
  /** Whether the task is solved in `state`. */
  readonly success: boolean;
  /**
   * Named finite numbers the reward plugins read, e.g. `{ proposal_reward: 0.3 }` or `{ executed_reward: 1.2 }`.
   * Their meaning is documented by the environment.
   */
  readonly signals: Readonly<Record<string, number>>;
  /** Free-form facts for the trace (e.g. the simulated end position of a proposal). JSON-serialisable. */
  readonly info?: Readonly<Record<string, unknown>>;
}

/**
 * An environment: seeded instance generation per split, and pure functions over immutable states.
 * `I` is an instance (a task), `S` a state, `A` the union of its action values.
 */
export interface Environment<I = unknown, S = unknown, A = unknown> {
  /** The contribution id it was created from. */
  readonly id: string;
  /** Seats in turn order. */
  readonly seats: readonly SeatSpec[];
  /** Action types used by the seats. */
  readonly actionTypes: readonly ActionTypeSpec[];
  /** Maximum number of turns (each turn, every seat acts once, in order). */
  readonly maxTurns: number;
  /**
   * Names of the signals every step returns (`StepResult.signals` keys), when the environment declares them.
   * Lets `troupe validate` check reward configs that name signals before anything runs.
   */
  readonly signals?: readonly string[];
  /**
   * The `index`-th instance of `split` for `seed`. Deterministic: the same arguments give the same instance.
   * Instances of different splits never share content (see {@link Environment.instanceKey}).
   */
  instance(split: Split, index: number, seed: number): I;
  /** A canonical content key of an instance (a hash of its content, not of its seed). */
  instanceKey(instance: I): string;
  /** A JSON-serialisable description of an instance (for `troupe env sample`). */
  describe(instance: I): Record<string, unknown>;
  /** The initial state of an instance. */
  reset(instance: I): S;
  /** What `seat` sees in `state`. */
  observe(state: S, seat: string): Observation;
  /**
   * Applies `move` of `seat` to `state` and returns a new state. Never mutates `state`. May be async (the code
   * environment runs programs in the sandbox); the kernel always awaits the result.
   */
  step(state: S, seat: string, move: Move<A>): StepResult<S> | Promise<StepResult<S>>;
  /** An optimal action for `seat` in `state`, when the environment has an oracle. */
  oracle?(state: S, seat: string): A;
  /**
   * The oracle as a program: a self-contained program in `language` that computes the seat's oracle action for
   * `state` (the state written into it as data) and prints it the way the coder role's output parser reads it, or
   * `undefined` for a seat or language the environment has no such program for. Warm starts of a tool-using seat (the
   * coder as the games' proposer) learn to write it; scripted oracle policies play it.
   */
  oracleProgram?(state: S, seat: string, language: ProgramLanguage): string | undefined;
  /** A uniformly random (usually poor) action for `seat`, for random baselines and tests. */
  randomAction(state: S, seat: string, rng: Rng): A;
}
