/**
 * The corridor, a complete Troupe environment on `@troupe/game-kit`: a walker must reach the goal cell of a corridor;
 * the proposer's move list (`L`, `R`; `U` and `D` bump into the wall) is simulated and shown to the executor, whose
 * list is executed (with `seats: ['executor']` it plays alone). The kit runs turns, records, signals and observations;
 * this file states the game. Replace the corridor with your game and keep the shape.
 */
import { injectable, readConfigSchema, type EnvironmentContribution, type Rng, type Split } from '@troupe/kernel';
import * as kit from '@troupe/game-kit';
import type { Direction, MovesGameConfig, MovesProposal, MovesRun, MovesState, MovesTurn } from '@troupe/game-kit';

/** The contribution id. Bump the `-vN` suffix whenever dynamics or rewards change. */
export const ID = '__ID__';

/** The config schema, read from `schemas/config.json` (the file the manifest declares; it states the defaults). */
export const CONFIG_SCHEMA = readConfigSchema(new URL('../schemas/config.json', import.meta.url));

/** The validated config: the kit's keys (turns, reward, observation, seats, splits, moves) and the corridor lengths. */
export interface CorridorConfig extends MovesGameConfig {
  readonly minLength: number;
  readonly maxLength: number;
}

/** Fills the schema's defaults and checks every key; errors name `environment.config.KEY` and the allowed values. */
export function resolveConfig(raw: Record<string, unknown> = {}): CorridorConfig {
  const r = new kit.ConfigReader(ID, kit.schemaDefaults(CONFIG_SCHEMA), raw);
  const [minLength, maxLength] = [r.integer('minLength', 4, 64), r.integer('maxLength', 6, 64)];
  if (minLength > maxLength) r.fail('minLength', `(${minLength}) must not exceed maxLength (${maxLength})`);
  return Object.freeze({ ...kit.readMovesGameConfig(r, 64), minLength, maxLength });
}

/** One task: a corridor of `size` cells, the start cell and the goal cell (0-based, start ≠ goal). */
export interface CorridorInstance {
  readonly size: number;
  readonly start: number;
  readonly goal: number;
}

/** The proposal, simulated: the kit's record (moves, end cell, invalid moves, reward) and whether it reaches the goal. */
export interface Proposal extends MovesProposal<number> {
  readonly reachesGoal: boolean;
}

/** One finished turn: the kit's record (executed moves, from, to, invalid and ignored moves, reward). */
export type Turn = MovesTurn<number, Proposal>;

/** A state (never mutated: `step` returns a new frozen one): the kit's fields and where the walker stands now. */
export interface CorridorState extends MovesState<CorridorInstance, Proposal, Turn> {
  readonly position: number;
}

/** Shaped reward of one move: −0.01 if valid, −0.1 if invalid (the walker stays); reaching the goal adds +1. */
export const SHAPED = Object.freeze({ validMove: -0.01, invalidMove: -0.1, goal: 1 });

/** Renders the corridor as text: `#` walls, `.` floor, `@` walker, `G` goal. */
export function renderCorridor(size: number, position: number, goal: number): string {
  return `#${Array.from({ length: size }, (_, i) => (i === position ? '@' : i === goal ? 'G' : '.')).join('')}#`;
}

/** The corridor for one config: what the walker's moves do, the texts, the oracle. */
export class CorridorEnvironment extends kit.MovesGame<CorridorState, MovesRun<number>, CorridorConfig> {
  constructor(config: Record<string, unknown> = {}) {
    super(ID, resolveConfig(config));
  }

  /** Instance `index` of `split`: the first candidate of the seeded streams whose CONTENT hashes into `split`. */
  instance(split: Split, index: number, seed: number): CorridorInstance {
    const { minLength, maxLength, splitFractions } = this.config;
    const draw = (rng: Rng): CorridorInstance | null => {
      const size = minLength + rng.int(maxLength - minLength + 1);
      const [start, goal] = [rng.int(size), rng.int(size)];
      return start === goal ? null : { size, start, goal };
    };
    const key = (i: CorridorInstance): string => this.instanceKey(i);
    const hint = 'widen minLength..maxLength';
    return kit.instanceAt({ id: ID, splitFractions, draw, key, maxAttempts: 100_000, hint }, split, index, seed);
  }

  /** The instance as JSON, with a picture, for `troupe env sample`. */
  describe({ size, start, goal }: CorridorInstance): Record<string, unknown> {
    return { size, start, goal, shortest: Math.abs(goal - start), picture: renderCorridor(size, start, goal) };
  }

  reset(instance: CorridorInstance): CorridorState {
    return this.start(instance, { position: instance.start, movesUsed: 0 });
  }

  taskText(seat: string): string {
    return [
      'Corridor: move the walker @ to the goal G along a corridor whose cells are numbered from 0 at the left.',
      'Moves: L = one cell left, R = one cell right. U, D and a move off either end bump into the wall: the walker stays.',
      'Moves after the goal is reached are ignored.',
      this.turnsLine(),
      ...this.closingLines(seat, 'takes the walker to the goal'),
    ].join('\n');
  }

  stateText(state: CorridorState): string {
    const { position, instance } = state;
    const picture = renderCorridor(instance.size, position, instance.goal);
    if (this.config.observation === 'compact') return `${picture} @=${position} G=${instance.goal}`;
    const where = `walker at cell ${position}, goal at cell ${instance.goal}`;
    return `${this.turnLine(state)} Moves used so far: ${state.movesUsed}.\n${picture}\n${where}`;
  }

  proposalText(p: Proposal): string {
    const outcome = `${p.reachesGoal ? 'reaches' : 'misses'} the goal, ${p.invalid} invalid`;
    if (p.moves) return `${this.formatMoves(p.moves)} -> cell ${p.end}, ${outcome}`;
    if (this.config.observation === 'compact') return 'none';
    return `The proposer's answer could not be used (${p.error ?? 'unparseable'}).`;
  }

  historyText(t: Turn): string {
    const proposed = t.proposal ? `proposed ${this.compactMoves(t.proposal.moves)}; ` : '';
    const invalid = t.invalid ? `, ${t.invalid} invalid` : '';
    return `${proposed}executed ${this.compactMoves(t.executed)}; walker ${t.from} -> ${t.to}${invalid}`;
  }

  protected observationData({ instance, position, movesUsed }: CorridorState): Record<string, unknown> {
    return { size: instance.size, position, goal: instance.goal, movesUsed };
  }

  protected where(state: CorridorState): number {
    return state.position;
  }

  /** Runs a move list: `L` and `R` step along the corridor, anything else (and a step off either end) is invalid. */
  protected run({ position, instance: { size, goal } }: CorridorState, moves: readonly Direction[]): MovesRun<number> {
    const step = (at: number, dir: Direction) => {
      const to = dir === 'L' ? at - 1 : dir === 'R' ? at + 1 : at;
      const valid = to !== at && to >= 0 && to < size;
      const reward = valid ? SHAPED.validMove + (to === goal ? SHAPED.goal : 0) : SHAPED.invalidMove;
      return { to: valid ? to : at, valid, reward };
    };
    const run = kit.runMoveList(position, moves, (at) => at === goal, step);
    return { ...run, ...kit.moveListReward(run.perMove, run.solved, this.config.reward) };
  }

  protected proposalFields(_state: CorridorState, run: MovesRun<number> | null): Pick<Proposal, 'reachesGoal'> {
    return { reachesGoal: run?.solved ?? false };
  }

  protected settle(state: CorridorState, record: Turn, movesUsed: number): kit.Settled<CorridorState, Turn> {
    return { success: record.to === state.instance.goal, next: { position: record.to, movesUsed } };
  }

  /** The oracle: straight to the goal, cut to `maxMoves`. */
  protected solve(state: CorridorState): Direction[] {
    const delta = state.instance.goal - state.position;
    return Array<Direction>(Math.min(Math.abs(delta), this.config.maxMoves)).fill(delta > 0 ? 'R' : 'L');
  }
}

/** The contribution the plugin's module binds to `EnvironmentContribution`. */
@injectable()
export class CorridorContribution implements EnvironmentContribution {
  readonly id = ID;
  readonly description = 'Walk a one-dimensional corridor to the goal cell';
  readonly configSchema = CONFIG_SCHEMA;
  create(config: Record<string, unknown>): CorridorEnvironment {
    return new CorridorEnvironment(config);
  }
}
