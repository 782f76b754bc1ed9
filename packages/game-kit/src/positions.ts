/**
 * Cells of a grid, `(row, col)` with row 0 at the top: equality, distance, and the two ways observations write them.
 */
import type { Pos } from './moves.js';

/** Equality of positions. */
export function samePos(a: Pos, b: Pos): boolean {
  return a.row === b.row && a.col === b.col;
}

/** Manhattan distance between two cells. */
export function manhattan(a: Pos, b: Pos): number {
  return Math.abs(a.row - b.row) + Math.abs(a.col - b.col);
}

/** `(row, col)` as text, for the full observation. */
export function formatPos(pos: Pos): string {
  return `(${pos.row}, ${pos.col})`;
}

/** `(r,c)`: a position without the space, for the compact observation. */
export function compactPos(pos: Pos): string {
  return `(${pos.row},${pos.col})`;
}
