/**
 * Seeded Sudoku generation: a random full solution, then clues removed while the puzzle keeps exactly one solution.
 * Splits by the content hash of the SOLUTION grid.
 */
import type { Split } from '@troupe/kernel';
import { contentHash, splitOfContent } from '@troupe/kernel';
import { deepFreeze, instanceAt } from '@troupe/game-kit';
import type { SudokuConfig } from './config.js';
import type { Grid } from './grid.js';
import { boxShape, conflictCount, copyGrid, countSolutions, filledCount, randomSolution, removeClues } from './grid.js';

/** One Sudoku puzzle. Plain, deeply frozen data. */
export interface SudokuInstance {
  /** 4 or 9. */
  readonly size: number;
  /** The puzzle: the given clues, 0 for empty cells. */
  readonly puzzle: Grid;
  /** Its unique solution. */
  readonly solution: Grid;
  /** Number of clues. */
  readonly clues: number;
}

/** The content key of an instance: SHA-256 of the canonical JSON of its size and puzzle (which fixes the solution). */
export function sudokuInstanceKey(i: Pick<SudokuInstance, 'size' | 'puzzle'>): string {
  return contentHash({ size: i.size, puzzle: i.puzzle });
}

/** The split of a solution grid (and of every puzzle made from it). */
export function sudokuSplitOf(size: number, solution: Grid, config: Pick<SudokuConfig, 'splitFractions'>): Split {
  return splitOfContent(contentHash({ size, solution }), config.splitFractions);
}

/**
 * Builds an instance from a hand-written puzzle (rows of numbers, 0 empty), checking that it has EXACTLY one
 * solution. For tests and hand-made puzzles.
 */
export function makeInstance(puzzle: readonly (readonly number[])[]): SudokuInstance {
  const size = puzzle.length;
  boxShape(size);
  if (puzzle.some((row) => row.length !== size || row.some((v) => !Number.isInteger(v) || v < 0 || v > size))) {
    throw new Error(`sudoku: a puzzle must be ${size} rows of ${size} integers from 0 to ${size}`);
  }
  if (conflictCount(puzzle) > 0) throw new Error('sudoku: the clues conflict');
  const solution: number[][] = [];
  const n = countSolutions(puzzle, 2, solution);
  if (n !== 1)
    throw new Error(`sudoku: the puzzle must have exactly one solution, it has ${n === 0 ? 'none' : 'several'}`);
  return frozenInstance(copyGrid(puzzle), solution);
}

/** An instance of a puzzle and its solution, deeply frozen. */
function frozenInstance(puzzle: Grid, solution: Grid): SudokuInstance {
  return deepFreeze({ size: puzzle.length, puzzle, solution, clues: filledCount(puzzle) });
}

/** Most candidates tried for one instance before generation gives up with an error. */
export const MAX_ATTEMPTS = 100_000;

/**
 * The `index`-th instance of `split` for `seed` (see the game kit's `instanceAt`): candidate solutions come from the
 * seeded streams `deriveSeed(seed, split, index, attempt)` for attempt = 0, 1, …; a solution is used only if its hash
 * falls in `split`; its clues are then removed (same stream) while the solver still counts exactly one solution. No
 * solution grid, hence no puzzle, is in two splits, and instance N costs the same whatever N.
 */
export function generateInstance(split: Split, index: number, seed: number, config: SudokuConfig): SudokuInstance {
  const { size } = config;
  return instanceAt(
    {
      id: 'sudoku-v0',
      splitFractions: config.splitFractions,
      maxAttempts: MAX_ATTEMPTS,
      hint: 'raise environment.config.splitFractions of this split',
      draw: (rng, wanted) => {
        const solution = randomSolution(size, rng);
        if (sudokuSplitOf(size, solution, config) !== wanted) return null;
        return frozenInstance(removeClues(solution, rng), solution);
      },
    },
    split,
    index,
    seed,
  );
}
