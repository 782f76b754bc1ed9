/**
 * The corridor: a tiny but complete Troupe environment. One seat, the `walker`, stands in a one-dimensional corridor
 * and must reach the goal cell by stating a list of moves (`L` or `R`; `U` and `D` bump into the wall). Replace the
 * game with yours and keep the shape: seeded generation per split, content-hash splits, immutable states, an oracle.
 */
import { readFileSync } from 'node:fs';
import {
  contentHash,
  createRng,
  deriveSeed,
  splitOfContent,
  type ActionTypeSpec,
  type Environment,
  type EnvironmentContribution,
  type JsonSchema,
  type Move,
  type Observation,
  type Rng,
  type SeatSpec,
  type Split,
  type StepResult,
} from '@troupe/kernel';

/** The contribution id. Bump the `-vN` suffix whenever dynamics or rewards change. */
export const ID = '__ID__';

/** The config schema, read from `schemas/config.json` (the same file the manifest declares). */
export const CONFIG_SCHEMA: JsonSchema = JSON.parse(
  readFileSync(new URL('../schemas/config.json', import.meta.url), 'utf8'),
) as JsonSchema;

/** One move. */
export type Step = 'U' | 'D' | 'L' | 'R';

/** The action of the walker: moves applied in order. */
export type Moves = readonly Step[];

/** The validated config (defaults filled by the kernel; {@link normalizeConfig} fills them too for direct use). */
export interface CorridorConfig {
  /** Shortest corridor generated. */
  readonly minLength: number;
  /** Longest corridor generated. */
  readonly maxLength: number;
  /** Turns before truncation. */
  readonly maxTurns: number;
  /** Reward variant. */
  readonly reward: 'shaped' | 'sparse';
}

/** One task: a corridor of `length` cells, the start cell and the goal cell (0-based, start ≠ goal). */
export interface CorridorInstance {
  readonly length: number;
  readonly start: number;
  readonly goal: number;
}

/** A state. Never mutated: `step` returns a new frozen object. */
export interface CorridorState {
  readonly instance: CorridorInstance;
  /** Where the walker stands now. */
  readonly position: number;
  /** Turns played so far. */
  readonly turn: number;
  /** Valid moves made so far. */
  readonly moves: number;
  /** Whether the goal was reached. */
  readonly solved: boolean;
}

const SEAT = 'walker';
const STEPS: readonly Step[] = ['U', 'D', 'L', 'R'];
const MAX_MOVES = 64;

/** Fills defaults and checks the ranges that the JSON schema cannot express. */
export function normalizeConfig(raw: Record<string, unknown>): CorridorConfig {
  const config: CorridorConfig = {
    minLength: typeof raw.minLength === 'number' ? raw.minLength : 6,
    maxLength: typeof raw.maxLength === 'number' ? raw.maxLength : 16,
    maxTurns: typeof raw.maxTurns === 'number' ? raw.maxTurns : 4,
    reward: raw.reward === 'sparse' ? 'sparse' : 'shaped',
  };
  if (config.minLength > config.maxLength) {
    throw new Error(`${ID}: config.minLength (${config.minLength}) must not exceed config.maxLength (${config.maxLength})`);
  }
  return config;
}

/** Renders the corridor as text: `#` walls, `.` floor, `@` walker, `G` goal. */
export function renderCorridor(length: number, position: number, goal: number): string {
  let row = '';
  for (let i = 0; i < length; i++) row += i === position ? '@' : i === goal ? 'G' : '.';
  return `#${row}#`;
}

/** The environment for one config. */
export class CorridorEnvironment implements Environment<CorridorInstance, CorridorState, Moves> {
  /** The contribution id. */
  readonly id = ID;
  /** One seat, the walker. */
  readonly seats: readonly SeatSpec[] = [
    { name: SEAT, actionType: 'moves', description: 'States the moves that take the walker to the goal.' },
  ];
  /** The `moves` action type. */
  readonly actionTypes: readonly ActionTypeSpec[] = [
    {
      name: 'moves',
      description: 'A list of moves U, D, L or R, applied in order.',
      schema: { type: 'array', items: { enum: [...STEPS] }, maxItems: MAX_MOVES },
    },
  ];
  /** Turns before truncation (from the config). */
  readonly maxTurns: number;

  /** @param config the validated config */
  constructor(readonly config: CorridorConfig) {
    this.maxTurns = config.maxTurns;
  }

  /**
   * Draws candidates from a stream seeded by (seed, split, index) and keeps the first whose CONTENT hashes into
   * `split`: the same arguments always give the same instance, and no instance belongs to two splits.
   */
  instance(split: Split, index: number, seed: number): CorridorInstance {
    const rng = createRng(deriveSeed(seed, ID, split, index));
    const span = this.config.maxLength - this.config.minLength + 1;
    for (let attempt = 0; attempt < 100_000; attempt++) {
      const length = this.config.minLength + rng.int(span);
      const start = rng.int(length);
      const goal = rng.int(length);
      if (start === goal) continue;
      const candidate: CorridorInstance = Object.freeze({ length, start, goal });
      if (splitOfContent(candidate) === split) return candidate;
    }
    throw new Error(`${ID}: no ${split} instance found in 100000 draws; widen minLength..maxLength`);
  }

  /** A hash of the instance's content (not of its seed). */
  instanceKey(instance: CorridorInstance): string {
    return contentHash({ length: instance.length, start: instance.start, goal: instance.goal });
  }

  /** The instance as JSON, with a picture, for `troupe env sample`. */
  describe(instance: CorridorInstance): Record<string, unknown> {
    return {
      length: instance.length,
      start: instance.start,
      goal: instance.goal,
      shortest: Math.abs(instance.goal - instance.start),
      picture: renderCorridor(instance.length, instance.start, instance.goal),
    };
  }

  /** The initial state: the walker on the start cell. */
  reset(instance: CorridorInstance): CorridorState {
    return Object.freeze({ instance, position: instance.start, turn: 0, moves: 0, solved: false });
  }

  /** The task and the CURRENT corridor, as text. */
  observe(state: CorridorState, seat: string): Observation {
    this.checkSeat(seat);
    const { length, goal } = state.instance;
    return {
      task:
        `You are the walker (@) in a corridor of ${length} cells. Reach the goal (G). ` +
        'Moves: L (left) and R (right); U and D bump into the wall. Give the list of moves to make.',
      state: `${renderCorridor(length, state.position, goal)}\nwalker at cell ${state.position}, goal at cell ${goal}`,
      context: [],
      turn: state.turn,
      data: { length, position: state.position, goal },
    };
  }

  /** Applies the moves in order (a move into a wall keeps the walker in place) and returns a NEW state. */
  step(state: CorridorState, seat: string, move: Move<Moves>): StepResult<CorridorState> {
    this.checkSeat(seat);
    const { goal, length } = state.instance;
    let position = state.position;
    let valid = 0;
    let invalid = 0;
    if (move.kind === 'action') {
      for (const m of move.action.slice(0, MAX_MOVES)) {
        const next = m === 'L' ? position - 1 : m === 'R' ? position + 1 : position;
        if (next === position || next < 0 || next >= length) invalid++;
        else {
          valid++;
          position = next;
        }
        if (position === goal) break;
      }
    }
    const solved = position === goal;
    const turn = state.turn + 1;
    let reward: number;
    if (this.config.reward === 'sparse') reward = solved ? 1 : 0;
    else if (move.kind === 'invalid') reward = -1;
    else reward = -0.01 * valid - 0.1 * invalid + (solved ? 1 : 0);
    const next: CorridorState = Object.freeze({ instance: state.instance, position, turn, moves: state.moves + valid, solved });
    return {
      state: next,
      done: { terminated: solved, truncated: !solved && turn >= this.maxTurns },
      success: solved,
      signals: { executed_reward: reward, distance: Math.abs(goal - position), invalid_moves: invalid, parse_error: move.kind === 'invalid' ? 1 : 0 },
      info: { from: state.position, to: position },
    };
  }

  /** The shortest list of moves to the goal. */
  oracle(state: CorridorState, seat: string): Moves {
    this.checkSeat(seat);
    const delta = state.instance.goal - state.position;
    return Array.from({ length: Math.abs(delta) }, (): Step => (delta > 0 ? 'R' : 'L'));
  }

  /** One to four uniformly random moves. */
  randomAction(_state: CorridorState, seat: string, rng: Rng): Moves {
    this.checkSeat(seat);
    return Array.from({ length: 1 + rng.int(4) }, () => STEPS[rng.int(STEPS.length)]!);
  }

  private checkSeat(seat: string): void {
    if (seat !== SEAT) throw new Error(`${ID}: unknown seat "${seat}"; this environment has one seat, "${SEAT}"`);
  }
}

/** The contribution the plugin's module binds to `EnvironmentContribution`. */
export class CorridorContribution implements EnvironmentContribution {
  /** The contribution id. */
  readonly id = ID;
  /** One line for listings. */
  readonly description = 'Walk a one-dimensional corridor to the goal cell';
  /** The schema of `schemas/config.json`. */
  readonly configSchema = CONFIG_SCHEMA;

  /** Builds the environment for one validated config. */
  create(config: Record<string, unknown>): CorridorEnvironment {
    return new CorridorEnvironment(normalizeConfig(config));
  }
}
