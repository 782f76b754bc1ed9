/**
 * The dynamics and the reward of Plan-Path: executing (or simulating) a move list from a position.
 */
import type { RewardKind } from '@troupe/game-kit';
import { moveListReward, runMoveList } from '@troupe/game-kit';
import type { PlanPathMovesAfterGoal, PlanPathPotential } from './config.js';
import type { Direction, Pos } from './grid.js';
import { distancesTo, manhattan, moveTarget, samePos } from './grid.js';

/** Reward constants of the shaped variant (as in the Stronger-MAS paper). */
export const SHAPED = Object.freeze({
  /** Cost of a valid move. */
  validMove: -0.01,
  /** Cost of an invalid move (wall or border; the walker stays). */
  invalidMove: -0.1,
  /** Discount of the potential-based shaping term γ·φ(next) − φ(cur). */
  gamma: 0.99,
  /** Bonus for reaching the goal. */
  goal: 1,
  /** Extra bonus when the whole episode used exactly the shortest number of moves. */
  optimal: 0.5,
});

/** What the walker's task is: the part of an instance the dynamics need. */
export interface Board {
  /** Rows of `.` (free) and `#` (wall). */
  readonly grid: readonly string[];
  /** The goal cell. */
  readonly goal: Pos;
  /** Length of a shortest path from the start to the goal. */
  readonly shortest: number;
}

/** The outcome of running a move list from a position. */
export interface RunOutcome {
  /** Where the walker ends. */
  readonly end: Pos;
  /** Moves actually processed (a list stops at the goal; later moves are ignored). */
  readonly processed: number;
  /** Moves that hit a wall or the border (the walker stayed). */
  readonly invalid: number;
  /** Moves after the goal was reached, not executed. */
  readonly ignored: number;
  /** Whether the walker is on the goal at the end. */
  readonly reachedGoal: boolean;
  /** Whether it reached the goal using exactly the shortest number of moves over the whole episode. */
  readonly optimal: boolean;
  /** The reward of this move list (shaped: the sum of per-move rewards; sparse: 1 if the goal is reached, else 0). */
  readonly reward: number;
  /** The per-move shaped rewards, in order (for traces and tests); with `afterGoal: 'penalized'`, also the unexecuted moves'. */
  readonly perMove: readonly number[];
}

/** φ(pos) = −Manhattan distance to the goal (the paper's shaping potential, `potential: manhattan`). */
export function potential(pos: Pos, goal: Pos): number {
  return -manhattan(pos, goal);
}

/** The BFS distance field of each board, computed once (boards are immutable values shared by an episode's states). */
const PATH_DISTANCES = new WeakMap<Board, Int32Array>();

/**
 * φ(pos) = −(length of a shortest path from pos to the goal around the walls) (`potential: path`). The walker can only
 * stand on cells connected to the goal, so every cell it visits has a finite distance.
 */
export function pathPotential(board: Board, pos: Pos): number {
  let field = PATH_DISTANCES.get(board);
  if (!field) PATH_DISTANCES.set(board, (field = distancesTo(board.grid, board.goal)));
  const d = field[pos.row * (board.grid[0]?.length ?? 0) + pos.col];
  if (d === undefined || d < 0) throw new Error(`plan-path: cell (${pos.row},${pos.col}) is not connected to the goal`);
  return -d;
}

/** The shaping potential of `kind` on `board`. */
function potentialOn(board: Board, kind: PlanPathPotential): (pos: Pos) => number {
  return kind === 'path' ? (pos) => pathPotential(board, pos) : (pos) => potential(pos, board.goal);
}

/**
 * Runs `moves` from `start` after `movesUsed` moves already used in the episode. Used both to execute the executor's
 * list and to simulate the proposer's list on a copy (the inputs are never modified).
 *
 * Shaped reward of one move: −0.01 if valid, −0.1 if invalid (the walker stays), plus 0.99·φ(next) − φ(cur) (φ of
 * `potentialKind`: −Manhattan distance to the goal, the paper's, or −shortest-path distance around the walls); reaching
 * the goal adds +1, and +0.5 more if the episode's total number of moves equals the shortest path length. Moves after
 * the goal are not executed; with `afterGoal: 'penalized'` each of them costs what an invalid move costs (−0.1) and a
 * list that has any gets no +0.5 (it was not a shortest plan), so a list that overshoots the goal scores below the
 * exact one; with `'ignored'` (the default) they cost nothing.
 */
export function runMoves(
  board: Board,
  start: Pos,
  movesUsed: number,
  moves: readonly Direction[],
  kind: RewardKind,
  afterGoal: PlanPathMovesAfterGoal = 'ignored',
  potentialKind: PlanPathPotential = 'manhattan',
): RunOutcome {
  const phi = potentialOn(board, potentialKind);
  let optimal = false;
  const run = runMoveList(
    start,
    moves,
    (pos) => samePos(pos, board.goal),
    (pos, dir, i) => {
      const next = moveTarget(board.grid, pos, dir);
      const to = next ?? pos;
      let r = (next ? SHAPED.validMove : SHAPED.invalidMove) + (SHAPED.gamma * phi(to) - phi(pos));
      if (samePos(to, board.goal)) {
        r += SHAPED.goal;
        optimal = movesUsed + i + 1 === board.shortest;
        if (optimal) r += SHAPED.optimal;
      }
      return { to, valid: next !== null, reward: r };
    },
  );
  const perMove = run.perMove;
  if (afterGoal === 'penalized' && run.ignored > 0) {
    if (optimal) perMove[perMove.length - 1]! -= SHAPED.optimal;
    optimal = false;
    for (let i = 0; i < run.ignored; i++) perMove.push(SHAPED.invalidMove);
  }
  const { processed, invalid, ignored, end, solved } = run;
  return { end, processed, invalid, ignored, reachedGoal: solved, optimal, ...moveListReward(perMove, solved, kind) };
}
