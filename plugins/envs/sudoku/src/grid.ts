/**
 * Sudoku grids as plain data: rows of numbers, 0 = empty. A bitmask backtracking solver that counts solutions (up to
 * a limit), a seeded random full-solution generator, conflict counting and ASCII rendering.
 */
import type { Rng } from '@troupe/kernel';
import { shuffled } from '@troupe/kernel';

/** A grid: `size` rows of `size` numbers, 0 for an empty cell, 1..size otherwise. */
export type Grid = readonly (readonly number[])[];

/** The box shape of a size: 4 → 2×2, 9 → 3×3. */
export function boxShape(size: number): { readonly rows: number; readonly cols: number } {
  if (size === 4) return { rows: 2, cols: 2 };
  if (size === 9) return { rows: 3, cols: 3 };
  throw new Error(`sudoku: size must be 4 or 9, got ${size}`);
}

/** The index of the box holding (row, col), boxes numbered left to right, top to bottom. */
export function boxIndex(size: number, row: number, col: number): number {
  const b = boxShape(size);
  return Math.floor(row / b.rows) * (size / b.cols) + Math.floor(col / b.cols);
}

/** A mutable deep copy of a grid. */
export function copyGrid(grid: Grid): number[][] {
  return grid.map((r) => r.slice());
}

/** The puzzle's empty cells `[row, col]` (0-based), in row-major order: where answers write. */
export function emptyCells(puzzle: Grid): [number, number][] {
  return puzzle.flatMap((row, r) => row.flatMap((v, c): [number, number][] => (v === 0 ? [[r, c]] : [])));
}

/** Number of filled (non-zero) cells. */
export function filledCount(grid: Grid): number {
  return grid.flat().filter((v) => v !== 0).length;
}

const unitTables = new Map<number, Int32Array>();

/** The three units of each cell i = row·size + col at 3i..3i+2: its row, `size` + its column, `2·size` + its box. */
function cellUnits(size: number): Int32Array {
  const table =
    unitTables.get(size) ??
    Int32Array.from({ length: 3 * size * size }, (_, k) => {
      const [r, c] = [Math.floor(k / 3 / size), Math.floor(k / 3) % size];
      return [r, size + c, 2 * size + boxIndex(size, r, c)][k % 3]!;
    });
  unitTables.set(size, table);
  return table;
}

/**
 * Conflicting pairs: two filled cells with the same value in the same row, column or box (a pair sharing two units,
 * e.g. a row and a box, counts once per unit).
 */
export function conflictCount(grid: Grid): number {
  const cells = grid.flat();
  // seen[u·(size+1) + v]: the cells of unit u holding v so far; a new one pairs with each of them
  const seen = new Int32Array(3 * grid.length * (grid.length + 1));
  let pairs = 0;
  const units = cellUnits(grid.length);
  for (let k = 0; k < units.length; k++) {
    const v = cells[Math.floor(k / 3)]!;
    if (v !== 0) pairs += seen[units[k]! * (grid.length + 1) + v]!++;
  }
  return pairs;
}

/** Whether the grid is complete (no 0) and has no conflict. */
export function isSolvedGrid(grid: Grid): boolean {
  return filledCount(grid) === grid.length * grid.length && conflictCount(grid) === 0;
}

/**
 * A grid being filled by backtracking, from a grid without conflicts: its cells (i = row·size + col), the values
 * still free at a cell (as bits: v free when bit v is set), writing a cell, and the rows as they are now.
 */
function fillable(grid: Grid) {
  const size = grid.length;
  const cells = grid.flat();
  const units = cellUnits(size);
  const used = new Int32Array(3 * size); // the values each unit holds, as bits
  const toggle = (i: number, v: number): void => {
    for (let k = 3 * i; k < 3 * i + 3; k++) used[units[k]!]! ^= 1 << v;
  };
  cells.forEach((v, i) => v !== 0 && toggle(i, v));
  return {
    cells,
    free: (i: number): number =>
      ((1 << (size + 1)) - 2) & ~(used[units[3 * i]!]! | used[units[3 * i + 1]!]! | used[units[3 * i + 2]!]!),
    /** Writes v (0: empties) into cell i. */
    set(i: number, v: number): void {
      if (cells[i] !== 0) toggle(i, cells[i]!);
      if (v !== 0) toggle(i, v);
      cells[i] = v;
    },
    rows: (): number[][] => Array.from({ length: size }, (_, r) => cells.slice(r * size, r * size + size)),
  };
}

/**
 * Counts the solutions of `grid` (a partial grid), stopping at `limit`. Backtracking with bitmasks, always branching
 * on the empty cell with the fewest candidates. A grid whose clues already conflict has 0 solutions. When `first`
 * is given, the first solution found is copied into it.
 */
export function countSolutions(grid: Grid, limit = 2, first?: number[][]): number {
  if (conflictCount(grid) > 0) return 0;
  const g = fillable(grid);
  const empty = [...g.cells.keys()].filter((i) => g.cells[i] === 0);
  let found = 0;
  const search = (): void => {
    let [best, bestMask, bestCount] = [-1, 0, grid.length + 1];
    for (const i of empty) {
      if (g.cells[i] !== 0) continue;
      const mask = g.free(i);
      let n = 0;
      for (let m = mask; m; m &= m - 1) n++;
      if (n < bestCount) [best, bestMask, bestCount] = [i, mask, n];
      if (n <= 1) break;
    }
    if (best < 0) {
      if (++found === 1 && first) first.splice(0, first.length, ...g.rows());
      return;
    }
    for (let m = bestMask; m && found < limit; m &= m - 1) {
      g.set(best, 31 - Math.clz32(m & -m));
      search();
    }
    g.set(best, 0);
  };
  search();
  return found;
}

/** A seeded random complete solution: randomised backtracking, cells in order, values tried in a random order. */
export function randomSolution(size: number, rng: Rng): number[][] {
  boxShape(size);
  const g = fillable(Array.from({ length: size }, () => Array<number>(size).fill(0)));
  const values = Array.from({ length: size }, (_, i) => i + 1);
  const fill = (i: number): boolean => {
    if (i === size * size) return true;
    for (const v of shuffled(values, rng)) {
      if (!(g.free(i) & (1 << v))) continue;
      g.set(i, v);
      if (fill(i + 1)) return true;
      g.set(i, 0);
    }
    return false;
  };
  if (!fill(0)) throw new Error('sudoku: no solution found (cannot happen)');
  return g.rows();
}

/**
 * Removes clues from a full solution in a random order, keeping each removal only if the puzzle still has exactly
 * one solution (the solver counts up to 2 and stops). The result is a minimal puzzle: no clue can be removed.
 */
export function removeClues(solution: Grid, rng: Rng): number[][] {
  const size = solution.length;
  const puzzle = copyGrid(solution);
  for (const i of shuffled([...Array(size * size).keys()], rng)) {
    const [r, c] = [Math.floor(i / size), i % size];
    const v = puzzle[r]![c]!;
    puzzle[r]![c] = 0;
    if (countSolutions(puzzle, 2) !== 1) puzzle[r]![c] = v;
  }
  return puzzle;
}

/**
 * ASCII rendering with 1-based row and column numbers, `.` for empty cells and `|` / `-` between boxes:
 *
 * ```
 *     1 2   3 4
 * 1   1 . | . 4
 * 2   . 3 | . .
 *     ----+----
 * 3   ...
 * ```
 */
export function renderGrid(grid: Grid): string {
  const { rows, cols } = boxShape(grid.length);
  // a line's items in box groups: one space within a group, `between` across groups
  const boxed = (items: readonly string[], between: string): string =>
    items.map((s, c) => (c === 0 ? s : (c % cols === 0 ? between : ' ') + s)).join('');
  const numbers = grid.map((_, c) => String(c + 1));
  const rule = boxed([...'-'.repeat(grid.length)], '-+-').replaceAll(' ', '-');
  const lines = [`    ${boxed(numbers, '   ')}`];
  grid.forEach((row, r) => {
    if (r > 0 && r % rows === 0) lines.push(`    ${rule}`);
    lines.push(`${String(r + 1).padEnd(4)}${boxed(row.map(cellText), ' | ')}`);
  });
  return lines.join('\n');
}

/** A fill list as text: `[[1,2,3],[4,1,2]]`. */
export function formatFills(fills: readonly (readonly number[])[]): string {
  return `[${fills.map((f) => `[${f.join(',')}]`).join(',')}]`;
}

/** A cell as text: its value, `.` when empty. */
const cellText = (v: number): string => (v === 0 ? '.' : String(v));

/** A grid's rows as text, `.` for an empty cell. */
function rowTexts(grid: Grid): string[] {
  return grid.map((row) => row.map(cellText).join(''));
}

/** A grid on one line: its rows top to bottom, separated by spaces, `.` for an empty cell (`1.3. ..2. .... 4...`). */
export function formatGridLine(grid: Grid): string {
  return rowTexts(grid).join(' ');
}

/** The bare rows of a grid, one per line (`.` empty, no labels or box rules): the compact observation's state. */
export function formatCompactGrid(grid: Grid): string {
  return rowTexts(grid).join('\n');
}
