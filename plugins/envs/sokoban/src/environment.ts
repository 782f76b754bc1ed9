/**
 * `sokoban-v0`: Sokoban with the proposer/executor game-team workflow (as in the Stronger-MAS paper).
 * With `seats: ['executor']` it is the single-agent baseline: the executor plays alone, with no proposal.
 */
import type { EnvironmentContribution, ProgramLanguage, Split } from '@troupe/kernel';
import { injectable } from '@troupe/kernel';
import type { MovesProposal, MovesState, MovesTurn, Settled } from '@troupe/game-kit';
import { MOVES_LEGEND, MovesGame, compactPos } from '@troupe/game-kit';
import type { Direction, Placement, Pos, RunOutcome } from './board.js';
import {
  boxesOnGoals,
  cornerDeadlocks,
  formatPos,
  formatPositions,
  isSolved,
  renderBoard,
  runMoves,
  solve,
} from './board.js';
import type { SokobanConfig } from './config.js';
import { SOKOBAN_CONFIG_SCHEMA, resolveSokobanConfig } from './config.js';
import type { SokobanInstance } from './instance.js';
import { generateInstance, sokobanInstanceKey } from './instance.js';
import { sokobanOracleProgram } from './oracle-program.js';

export { movesSchema } from '@troupe/game-kit';

/** The contribution id. */
export const SOKOBAN_ID = 'sokoban-v0';

/** The proposer's proposal of the current turn, simulated on a copy of the state (the placement at its `end`). */
export interface ProposalRecord extends MovesProposal<Placement> {
  /** Whether the simulation solves the puzzle. */
  readonly solves: boolean;
  /** Boxes the simulation leaves in a non-goal corner (deadlocked). */
  readonly deadlocked: readonly Pos[];
}

/** What happened in one finished turn: the placements `from` and `to`. */
export interface TurnRecord extends MovesTurn<Placement, ProposalRecord> {
  /** Pushes. */
  readonly pushes: number;
}

/** A Sokoban state: a plain, deeply frozen value. `step` returns a new one. */
export interface SokobanState extends MovesState<SokobanInstance, ProposalRecord, TurnRecord> {
  /** Where the player and the boxes are NOW. */
  readonly placement: Placement;
  /** Boxes in a non-goal corner (the puzzle can no longer be solved). */
  readonly deadlocked: readonly Pos[];
}

/** `(r,c)(r,c)`: positions without separators, for the compact observation. */
function compactPositions(list: readonly Pos[]): string {
  return list.map(compactPos).join('');
}

/** `@(r,c) $(r,c)`: a placement for the compact observation. */
function compactPlacement(p: Placement): string {
  return `@${compactPos(p.player)} $${compactPositions(p.boxes)}`;
}

/** The Sokoban environment for one config. */
export class SokobanEnvironment extends MovesGame<SokobanState, RunOutcome, SokobanConfig> {
  /** Builds the environment; `config` is filled with defaults and range-checked. */
  constructor(config: Record<string, unknown> = {}) {
    super(SOKOBAN_ID, resolveSokobanConfig(config));
  }

  /** {@inheritDoc Environment.instance} Each instance is searched on its own (`generateInstance`). */
  instance(split: Split, index: number, seed: number): SokobanInstance {
    return generateInstance(split, index, seed, this.config);
  }

  /** {@inheritDoc Environment.instanceKey} */
  override instanceKey(instance: SokobanInstance): string {
    return sokobanInstanceKey(instance);
  }

  /** Grid rows, goals, boxes, player, the optimal length, the oracle solution and a picture. */
  describe(instance: SokobanInstance): Record<string, unknown> {
    const start: Placement = { player: instance.player, boxes: instance.boxes };
    const result = solve(instance, start, this.config.oracleNodeCap);
    const picture = renderBoard(instance, start, { floor: this.config.floorSymbol, coordinates: false });
    return { ...instance, oracleMoves: result.status === 'solved' ? result.moves : [], picture };
  }

  /** {@inheritDoc Environment.reset} */
  reset(instance: SokobanInstance): SokobanState {
    const placement = { player: instance.player, boxes: instance.boxes };
    return this.start(instance, { placement, movesUsed: 0, deadlocked: [] }, isSolved(instance, instance.boxes));
  }

  /** The task statement for a seat. */
  taskText(seat: string): string {
    const { size, boxes, floorSymbol } = this.config;
    return [
      `Sokoban: push ${boxes === 1 ? 'the box onto the goal' : `all ${boxes} boxes onto the goals`} in a ${size}x${size} room.`,
      `Legend: @ player, $ box, . goal, * box on a goal, + player on a goal, # wall, ${floorSymbol === '_' ? '_' : '(space)'} floor.`,
      ...MOVES_LEGEND,
      'Walking into a box pushes it one cell if the cell behind it is free floor; boxes can be pushed, never pulled.',
      'A move into a wall, or into a box that cannot move, is invalid: the player stays. Moves after the puzzle is solved are ignored.',
      'A box pushed into a corner that is not a goal can never be moved again.',
      this.turnsLine(),
      ...this.closingLines(seat, 'pushes every box onto a goal'),
    ].join('\n');
  }

  /** The current state as text: turn, moves used, positions and the board as it is NOW. */
  stateText(state: SokobanState): string {
    const { instance, placement } = state;
    if (this.config.observation === 'compact') {
      const status = state.success
        ? ' solved'
        : state.deadlocked.length
          ? ` stuck${compactPositions(state.deadlocked)}`
          : '';
      return [
        `@=${compactPos(placement.player)} $=${compactPositions(placement.boxes)} .=${compactPositions(instance.goals)}${status}`,
        renderBoard(instance, placement, { floor: this.config.floorSymbol, coordinates: false }),
      ].join('\n');
    }
    const on = boxesOnGoals(instance, placement.boxes);
    const status = state.success
      ? ' Solved.'
      : state.deadlocked.length
        ? ` Deadlock: box at ${formatPositions(state.deadlocked)} is stuck in a corner.`
        : '';
    return [
      `${this.turnLine(state)} Moves used so far: ${state.movesUsed}.`,
      `Player @ at ${formatPos(placement.player)}. Boxes $ at ${formatPositions(placement.boxes)}. Goals . at ${formatPositions(instance.goals)}.`,
      `Boxes on goals: ${on} of ${instance.goals.length}.${status}`,
      renderBoard(instance, placement, { floor: this.config.floorSymbol }),
    ].join('\n');
  }

  /** The proposal as the executor is shown it. */
  proposalText(p: ProposalRecord): string {
    if (this.config.observation === 'compact') {
      if (!p.moves) return 'none';
      return (
        `${this.formatMoves(p.moves)} -> ${compactPlacement(p.end)} ${p.solves ? 'solved' : 'miss'}${p.invalid ? ` ${p.invalid} invalid` : ''}` +
        `${p.deadlocked.length ? ` stuck${compactPositions(p.deadlocked)}` : ''}`
      );
    }
    if (!p.moves)
      return `The proposer's answer could not be parsed (${p.error ?? 'unparseable'}); there is no proposal.`;
    const result = p.solves ? 'solves the puzzle' : 'does not solve the puzzle';
    return (
      `Proposed moves: ${this.formatMoves(p.moves)}\nSimulated: player ends at ${formatPos(p.end.player)}, boxes at ${formatPositions(p.end.boxes)}; ` +
      `${result}, ${p.invalid} invalid move${p.invalid === 1 ? '' : 's'}${p.deadlocked.length ? `, box stuck in a corner at ${formatPositions(p.deadlocked)}` : ''}.`
    );
  }

  /** One finished turn as a context block. */
  historyText(t: TurnRecord): string {
    if (this.config.observation === 'compact') {
      return `${t.proposal ? `${this.compactMoves(t.proposal.moves)} ` : ''}${this.compactMoves(t.executed)} -> ${compactPlacement(t.to)}${t.invalid ? ` ${t.invalid} invalid` : ''}`;
    }
    const proposed = t.proposal
      ? `proposed ${t.proposal.moves ? this.formatMoves(t.proposal.moves) : 'unparseable'}; `
      : '';
    const executed = t.executed ? this.formatMoves(t.executed) : `unparseable (${t.error ?? ''}), nothing moved`;
    return (
      `Turn ${t.turn + 1}: ${proposed}executed ${executed}; player ${formatPos(t.from.player)} -> ${formatPos(t.to.player)}, ` +
      `boxes ${formatPositions(t.from.boxes)} -> ${formatPositions(t.to.boxes)}${t.invalid ? `, ${t.invalid} invalid` : ''}.`
    );
  }

  protected observationData(state: SokobanState): Record<string, unknown> {
    const { size, grid, goals } = state.instance;
    return { size, grid, goals, ...state.placement, movesUsed: state.movesUsed };
  }

  protected where(state: SokobanState): Placement {
    return state.placement;
  }

  protected run(state: SokobanState, moves: readonly Direction[]): RunOutcome {
    return runMoves(state.instance, state.placement, moves, this.config.reward, this.config.potential);
  }

  protected proposalFields(state: SokobanState, run: RunOutcome | null): Pick<ProposalRecord, 'solves' | 'deadlocked'> {
    return { solves: run?.solved ?? false, deadlocked: run ? cornerDeadlocks(state.instance, run.end.boxes) : [] };
  }

  protected override turnFields(run: RunOutcome | null): Pick<TurnRecord, 'pushes'> {
    return { pushes: run?.pushes ?? 0 };
  }

  protected settle(state: SokobanState, record: TurnRecord, movesUsed: number): Settled<SokobanState, TurnRecord> {
    const success = isSolved(state.instance, record.to.boxes);
    const deadlocked = success ? [] : cornerDeadlocks(state.instance, record.to.boxes);
    return {
      success,
      stop: this.config.deadlockTermination && deadlocked.length > 0,
      next: { placement: record.to, movesUsed, deadlocked },
      info: { ...record, deadlocked },
    };
  }

  /**
   * A shortest solution (BFS, directions tried U, D, L, R) from the current placement, for either seat, cut to
   * `maxMoves`; `[]` when solved already, deadlocked, unsolvable, or beyond `oracleNodeCap`.
   */
  protected solve(state: SokobanState): Direction[] {
    const result = solve(state.instance, state.placement, this.config.oracleNodeCap);
    return result.status === 'solved' ? result.moves.slice(0, this.config.maxMoves) : [];
  }

  /**
   * The oracle as a Python program that prints exactly the oracle's moves; `undefined` for another language and where
   * the oracle has no moves (solved, deadlocked, unsolvable, beyond `oracleNodeCap`).
   */
  protected override oracleSource(state: SokobanState, language: ProgramLanguage): string | undefined {
    if (this.solve(state).length === 0) return undefined;
    const { maxMoves, floorSymbol: floor } = this.config;
    return sokobanOracleProgram(state.instance, state.placement, { maxMoves, floor }, language);
  }
}

/** The `sokoban-v0` contribution. */
@injectable()
export class SokobanContribution implements EnvironmentContribution {
  readonly id = SOKOBAN_ID;
  readonly description =
    'Sokoban: push every box onto a goal; a proposer proposes a move list, an executor executes one';
  readonly configSchema = SOKOBAN_CONFIG_SCHEMA;
  create(config: Record<string, unknown>): SokobanEnvironment {
    return new SokobanEnvironment(config);
  }
}
