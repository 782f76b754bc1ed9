/**
 * The corridor, a complete Troupe environment on `@troupe/game-kit`: a walker must reach the goal cell of a corridor;
 * the proposer's move list (`L`, `R`; `U` and `D` bump into the wall) is simulated and shown to the executor, whose
 * list is executed (with `seats: ['executor']` it plays alone). The kit runs turns, records, signals and observations;
 * this file states the game. Replace the corridor with your game and keep the shape.
 */
import { injectable, readConfigSchema, splitOfContent, contentHash, type EnvironmentContribution, type Split } from '@troupe/kernel';
import {
  ConfigReader, GAME_CONFIG_DEFAULTS, MOVE_NOTATIONS, MovesGame, deepFreeze, instanceAt, moveListReward, runMoveList,
  type Direction, type MovesGameConfig, type MovesProposal, type MovesRun, type MovesState, type MovesTurn, type Settled,
} from '@troupe/game-kit';

/** The contribution id. Bump the `-vN` suffix whenever dynamics or rewards change. */
export const ID = '__ID__';

/** The validated config: the kit's keys (turns, reward, observation, seats, splits, notation, malformed penalty) and the corridor's. */
export interface CorridorConfig extends MovesGameConfig {
  /** Shortest and longest corridor generated. */
  readonly minLength: number;
  readonly maxLength: number;
}

/** The defaults, as in `schemas/config.json`. */
export const DEFAULT_CONFIG: CorridorConfig = Object.freeze({
  ...GAME_CONFIG_DEFAULTS, minLength: 6, maxLength: 16, maxMoves: 32, malformedPenalty: -1, notation: 'moves',
});

/** Fills defaults and checks every key; errors name `environment.config.KEY` and the allowed values. */
export function resolveConfig(raw: Record<string, unknown> = {}): CorridorConfig {
  const r = new ConfigReader(ID, DEFAULT_CONFIG, raw);
  const config = {
    ...r.game(), minLength: r.integer('minLength', 4, 64), maxLength: r.integer('maxLength', 6, 64), maxMoves: r.integer('maxMoves', 1, 64),
    malformedPenalty: r.finite('malformedPenalty'), notation: r.oneOf('notation', MOVE_NOTATIONS),
  };
  if (config.minLength > config.maxLength) r.fail('minLength', `(${config.minLength}) must not exceed maxLength (${config.maxLength})`);
  return Object.freeze(config);
}

/** One task: a corridor of `size` cells, the start cell and the goal cell (0-based, start ≠ goal). */
export interface CorridorInstance { readonly size: number; readonly start: number; readonly goal: number }

/** The proposal, simulated: the kit's record (moves, where it ends, invalid moves, reward) and whether it reaches the goal. */
export interface Proposal extends MovesProposal<number> { readonly reachesGoal: boolean }

/** One finished turn: the kit's record (executed moves, from, to, invalid and ignored moves, reward). */
export type Turn = MovesTurn<number, Proposal>;

/** A state (never mutated: `step` returns a new frozen one): the kit's fields and where the walker stands now. */
export interface CorridorState extends MovesState<CorridorInstance, Proposal, Turn> { readonly position: number }

/** Shaped reward of one move: −0.01 if valid, −0.1 if invalid (the walker stays); reaching the goal adds +1. */
export const SHAPED = Object.freeze({ validMove: -0.01, invalidMove: -0.1, goal: 1 });

/** Renders the corridor as text: `#` walls, `.` floor, `@` walker, `G` goal. */
export function renderCorridor(size: number, position: number, goal: number): string {
  return `#${Array.from({ length: size }, (_, i) => (i === position ? '@' : i === goal ? 'G' : '.')).join('')}#`;
}

/** The corridor for one config. */
export class CorridorEnvironment extends MovesGame<CorridorInstance, number, MovesRun<number>, CorridorState, Proposal, Turn, CorridorConfig> {
  constructor(config: Record<string, unknown> = {}) {
    super(ID, resolveConfig(config));
  }

  /** Instance `index` of `split`: the first candidate of the seeded streams whose CONTENT hashes into `split`. */
  instance(split: Split, index: number, seed: number): CorridorInstance {
    const { minLength, maxLength, splitFractions } = this.config;
    return instanceAt({
      id: ID, splitFractions, maxAttempts: 100_000, hint: 'widen minLength..maxLength',
      draw: (rng, wanted) => {
        const size = minLength + rng.int(maxLength - minLength + 1);
        const candidate = { size, start: rng.int(size), goal: rng.int(size) };
        return candidate.start !== candidate.goal && splitOfContent(this.instanceKey(candidate), splitFractions) === wanted ? deepFreeze(candidate) : null;
      },
    }, split, index, seed);
  }

  /** A hash of the instance's content (not of its seed). */
  instanceKey(instance: CorridorInstance): string {
    return contentHash({ size: instance.size, start: instance.start, goal: instance.goal });
  }

  /** The instance as JSON, with a picture, for `troupe env sample`. */
  describe(instance: CorridorInstance): Record<string, unknown> {
    return { ...instance, shortest: Math.abs(instance.goal - instance.start), picture: renderCorridor(instance.size, instance.start, instance.goal) };
  }

  reset(instance: CorridorInstance): CorridorState {
    return deepFreeze({ instance, position: instance.start, turn: 0, seatIndex: 0, movesUsed: 0, proposal: null, history: [], success: false, done: false });
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
    const { size, goal } = state.instance;
    const picture = renderCorridor(size, state.position, goal);
    if (this.config.observation === 'compact') return `${picture} @=${state.position} G=${goal}`;
    return `${this.turnLine(state)} Moves used so far: ${state.movesUsed}.\n${picture}\nwalker at cell ${state.position}, goal at cell ${goal}`;
  }

  proposalText(p: Proposal): string {
    if (!p.moves) return this.config.observation === 'compact' ? 'none' : `The proposer's answer could not be used (${p.error ?? 'unparseable'}).`;
    return `${this.formatMoves(p.moves)} -> cell ${p.end}, ${p.reachesGoal ? 'reaches the goal' : 'misses the goal'}, ${p.invalid} invalid`;
  }

  historyText(t: Turn): string {
    const proposed = t.proposal ? `proposed ${this.compactMoves(t.proposal.moves)}; ` : '';
    return `${proposed}executed ${this.compactMoves(t.executed)}; walker ${t.from} -> ${t.to}${t.invalid ? `, ${t.invalid} invalid` : ''}`;
  }

  protected observationData(state: CorridorState): Record<string, unknown> {
    return { size: state.instance.size, position: state.position, goal: state.instance.goal, movesUsed: state.movesUsed };
  }

  protected where(state: CorridorState): number {
    return state.position;
  }

  /** Runs a move list: `L` and `R` step along the corridor, anything else (and a step off either end) is invalid. */
  protected run(state: CorridorState, moves: readonly Direction[]): MovesRun<number> {
    const { size, goal } = state.instance;
    const run = runMoveList(state.position, moves, (at) => at === goal, (at, dir) => {
      const to = dir === 'L' ? at - 1 : dir === 'R' ? at + 1 : at;
      const valid = to !== at && to >= 0 && to < size;
      return { to: valid ? to : at, valid, reward: (valid ? SHAPED.validMove : SHAPED.invalidMove) + (valid && to === goal ? SHAPED.goal : 0) };
    });
    return { ...run, ...moveListReward(run.perMove, run.solved, this.config.reward) };
  }

  protected proposalFields(_state: CorridorState, run: MovesRun<number> | null): Pick<Proposal, 'reachesGoal'> {
    return { reachesGoal: run?.solved ?? false };
  }

  protected settle(state: CorridorState, record: Turn, movesUsed: number): Settled<CorridorState, Turn> {
    return { success: record.to === state.instance.goal, next: { position: record.to, movesUsed } };
  }

  /** The oracle: straight to the goal, cut to `maxMoves`. */
  protected solve(state: CorridorState): Direction[] {
    const delta = state.instance.goal - state.position;
    return Array.from({ length: Math.min(Math.abs(delta), this.config.maxMoves) }, (): Direction => (delta > 0 ? 'R' : 'L'));
  }
}

/** The config schema, read from `schemas/config.json` (the same file the manifest declares). */
export const CONFIG_SCHEMA = readConfigSchema(new URL('../schemas/config.json', import.meta.url));

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
