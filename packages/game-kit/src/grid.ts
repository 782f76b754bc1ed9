/**
 * Cells of a grid, `(row, col)` with row 0 at the top: equality, distance, the two ways observations write them, and
 * drawing a grid with or without row and column numbers.
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

/** Options of {@link drawGrid}. */
export interface DrawGridOptions {
  /** Head the grid with column numbers and start each row with its number (default true). */
  readonly coordinates?: boolean;
  /** What separates the cells of a row without coordinates (default none: `#@$_.#`). */
  readonly separator?: string;
}

/**
 * Draws a grid given as rows of cell characters, each drawn as `cell(ch, pos)` returns. With coordinates (the
 * default), column numbers head the grid and each row starts with its number, all padded to the widest number:
 *
 * ```
 *    0 1 2
 * 0  A . #
 * 1  . # G
 * ```
 */
export function drawGrid(
  grid: readonly string[],
  cell: (ch: string, pos: Pos) => string,
  options: DrawGridOptions = {},
): string {
  const coords = options.coordinates ?? true;
  const cols = grid[0]?.length ?? 0;
  const width = coords ? String(Math.max(grid.length, cols) - 1).length : 0;
  const lines = coords
    ? [`${' '.repeat(width)}  ${Array.from({ length: cols }, (_, c) => String(c).padStart(width)).join(' ')}`]
    : [];
  grid.forEach((line, row) => {
    const cells = Array.from(line, (ch, col) => cell(ch, { row, col }).padStart(width));
    lines.push(coords ? `${String(row).padStart(width)}  ${cells.join(' ')}` : cells.join(options.separator ?? ''));
  });
  return lines.join('\n');
}
