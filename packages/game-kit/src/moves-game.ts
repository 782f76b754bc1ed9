/**
 * Grid games played with the `moves` action type (Plan-Path, Sokoban, community mazes): both seats answer with a
 * list of U / D / L / R moves; the proposer's list is simulated, the executor's executed. {@link MovesGame} adds to
 * the proposer/executor skeleton the action type, the seat texts, parsing with the malformed penalty, the notation
 * of move lists in observations, the task-text lines about moves, and random move lists.
 */
import type { Move, Rng } from '@troupe/kernel';
import type { GameConfig } from './config.js';
import type { GameState, ProposalBase, TurnBase } from './game.js';
import { ProposerExecutorGame } from './game.js';
import type { Direction, MoveNotation } from './moves.js';
import { DIRECTIONS, MOVES_ACTION_TYPE, formatMoveList, movesOf, movesSchema } from './moves.js';

/** The config keys of a moves game, beyond {@link GameConfig}. */
export interface MovesGameConfig extends GameConfig {
  /** Most moves in one list (the `moves` action type's `maxItems`). */
  readonly maxMoves: number;
  /** Shaped reward of a move list that could not be used (the sparse variant gives 0). */
  readonly malformedPenalty: number;
  /** How observations write move lists: `moves` `[U,U,R]` or `runs` `[U2,R1]` (match the planner role's). */
  readonly notation: MoveNotation;
}

/** The task-text lines every moves game states: coordinates and what each move does. */
export const MOVES_LEGEND: readonly string[] = Object.freeze([
  'Coordinates are (row, col): row 0 is the top row, col 0 the left column.',
  'Moves: U = up (row - 1), D = down (row + 1), L = left (col - 1), R = right (col + 1).',
]);

/** A moves game for one resolved config; instances have a `size` (random lists are at most 2·size long). */
export abstract class MovesGame<I extends { readonly size: number }, S extends GameState<I, P, T>, P extends ProposalBase, T extends TurnBase<P>, C extends MovesGameConfig>
  extends ProposerExecutorGame<I, S, Direction[], P, T, C> {
  constructor(id: string, config: C) {
    super(id, config, {
      name: MOVES_ACTION_TYPE, schema: movesSchema(config.maxMoves), description: `A list of at most ${config.maxMoves} moves, each U, D, L or R.`,
    }, {
      proposer: 'Proposes a move list; it is simulated on a copy, never executed.',
      executor: 'Sees the proposal and its simulated outcome; its move list is executed.',
      alone: 'Plays alone (single agent): sees the task and the current state; its move list is executed.',
    });
  }

  /** The moves of a seat's answer, or why they cannot be used and the reward that costs. */
  protected parse(move: Move<Direction[]>): { readonly moves: Direction[] } | { readonly error: string; readonly reward: number } {
    const parsed = movesOf(move, this.config.maxMoves);
    if ('error' in parsed) return { error: parsed.error, reward: this.config.reward === 'sparse' ? 0 : this.config.malformedPenalty };
    return { moves: parsed.moves.slice() };
  }

  /** A move list as observations write it, in the configured notation. */
  formatMoves(moves: readonly Direction[]): string {
    return formatMoveList(moves, this.config.notation);
  }

  /** The seat's duty line, then the answer line (the last two lines of the task). */
  protected closingLines(seat: string, goal: string): string[] {
    return [
      this.duty(seat, {
        alone: 'You play alone: give the move list that is executed.',
        proposer: `You are the proposer: propose a move list that ${goal}. It is simulated on a copy and shown to the executor; it is not executed.`,
        executor: `You are the executor: you see the proposer's list and ${this.executorSees}. Give the move list that is actually executed (copy the proposal if it is right, fix it if not).`,
      }),
      `Answer with a list of at most ${this.config.maxMoves} moves.`,
    ];
  }

  /** What the executor's duty line says it sees with the proposal. */
  protected readonly executorSees: string = 'its simulated outcome';

  /** 1 to min(maxMoves, 2·size) uniformly random moves. */
  protected random(state: S, rng: Rng): Direction[] {
    const n = 1 + rng.int(Math.min(this.config.maxMoves, 2 * state.instance.size));
    return Array.from({ length: n }, () => DIRECTIONS[rng.int(4)]!);
  }
}
