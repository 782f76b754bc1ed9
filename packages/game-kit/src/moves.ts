/**
 * The `moves` action type shared by the grid games (Plan-Path, Sokoban, community mazes) and the roles that produce
 * it (planner, coder as proposer): a list of U / D / L / R steps on a grid whose row 0 is at the top.
 */
import type { JsonSchema, Move } from '@troupe/kernel';

/** The action type's name, as environments declare it for a seat and roles list it in `produces`. */
export const MOVES_ACTION_TYPE = 'moves';

/** A cell, `row` 0 at the top, `col` 0 at the left. */
export interface Pos {
  /** Row index, 0 at the top. */
  readonly row: number;
  /** Column index, 0 at the left. */
  readonly col: number;
}

/** One move: Up (row − 1), Down (row + 1), Left (col − 1), Right (col + 1). */
export type Direction = 'U' | 'D' | 'L' | 'R';

/** The four directions, in the fixed order searches explore them (so oracle solutions are deterministic). */
export const DIRECTIONS: readonly Direction[] = Object.freeze(['U', 'D', 'L', 'R'] as const);

/** Row/column offset of each direction. */
export const DELTAS: Readonly<Record<Direction, Pos>> = Object.freeze({
  U: Object.freeze({ row: -1, col: 0 }),
  D: Object.freeze({ row: 1, col: 0 }),
  L: Object.freeze({ row: 0, col: -1 }),
  R: Object.freeze({ row: 0, col: 1 }),
});

/** Whether a value is one of `U`, `D`, `L`, `R`. */
export function isDirection(value: unknown): value is Direction {
  return value === 'U' || value === 'D' || value === 'L' || value === 'R';
}

/** JSON schema of a `moves` action of at most `maxMoves` steps. */
export function movesSchema(maxMoves: number): JsonSchema {
  return { type: 'array', items: { type: 'string', enum: [...DIRECTIONS] }, maxItems: maxMoves };
}

/**
 * Checks a seat's move as a `moves` action of at most `maxMoves` steps: the moves, or why they cannot be used
 * (an unparseable text, a wrong type, too many moves, an unknown direction).
 */
export function movesOf(move: Move, maxMoves: number): { moves: Direction[] } | { error: string } {
  if (move.kind === 'invalid') return { error: move.error || 'unparseable output' };
  const a = move.action;
  if (!Array.isArray(a)) return { error: `expected a list of moves, got ${typeof a}` };
  if (a.length > maxMoves) return { error: `${a.length} moves is more than maxMoves (${maxMoves})` };
  const bad = a.findIndex((d) => !isDirection(d));
  if (bad >= 0) return { error: `move ${bad} is ${JSON.stringify(a[bad])}, expected one of U, D, L, R` };
  return { moves: a as Direction[] };
}

/**
 * How a move list is written: `moves`, one letter per step (`[U,U,R]`), or `runs`, each letter with its repeat count
 * (`[U2,R1]`). Runs let a small model copy a count (the goal is 2 rows up: `U2`) instead of counting repeated tokens,
 * which byte-level models trained from scratch get wrong; they also shorten answers. A role and the environment that
 * shows its proposals should use the same notation.
 */
export type MoveNotation = 'moves' | 'runs';

/** The notations, for config validation. */
export const MOVE_NOTATIONS: readonly MoveNotation[] = Object.freeze(['moves', 'runs'] as const);

/** Longest run written as one item (`R9`); a longer run is written as several (`R9,R3`) so that a count is one digit. */
export const MAX_RUN = 9;

/** The runs of a move list: consecutive equal directions, each run at most {@link MAX_RUN} long. */
export function moveRuns(moves: readonly Direction[]): { readonly dir: Direction; readonly count: number }[] {
  const runs: { dir: Direction; count: number }[] = [];
  for (const d of moves) {
    const last = runs.at(-1);
    if (last && last.dir === d && last.count < MAX_RUN) last.count++;
    else runs.push({ dir: d, count: 1 });
  }
  return runs;
}

/** The items of a move list in a notation: `['U','U','R']` or `['U2','R1']`. */
export function moveItems(moves: readonly Direction[], notation: MoveNotation): string[] {
  return notation === 'runs' ? moveRuns(moves).map((r) => `${r.dir}${r.count}`) : [...moves];
}

/** A move list as text in a notation: `[U,U,R]` or `[U2,R1]`. */
export function formatMoveList(moves: readonly Direction[], notation: MoveNotation = 'moves'): string {
  return `[${moveItems(moves, notation).join(',')}]`;
}
