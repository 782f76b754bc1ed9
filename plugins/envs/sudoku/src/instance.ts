/**
 * Seeded Sudoku generation: a random full solution, then clues removed while the puzzle keeps exactly one solution.
 * Splits by the content hash of the SOLUTION grid; no duplicate puzzle within a split.
 */
import type { Split } from '@troupe/kernel';
import { contentHash, createRng, deriveSeed, splitOfContent } from '@troupe/kernel';
import type { SudokuConfig } from './config.js';
import type { Grid } from './grid.js';
import { boxShape, conflictCount, countSolutions, filledCount, randomSolution, removeClues } from './grid.js';

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

function freeze(i: SudokuInstance): SudokuInstance {
  for (const row of i.puzzle) Object.freeze(row);
  for (const row of i.solution) Object.freeze(row);
  Object.freeze(i.puzzle);
  Object.freeze(i.solution);
  return Object.freeze(i);
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
  if (n !== 1) throw new Error(`sudoku: the puzzle must have exactly one solution, it has ${n === 0 ? 'none' : 'several'}`);
  return freeze({ size, puzzle: puzzle.map((r) => r.slice()), solution, clues: filledCount(puzzle) });
}

/** Most consecutive rejected or duplicate candidates before generation gives up with an error. */
export const MAX_ATTEMPTS = 100_000;

/**
 * The instance stream of one (split, seed): candidate solutions come from the seeded streams `deriveSeed(seed, split,
 * attempt)`; a solution is used only if its hash falls in `split`; its clues are then removed (same stream) while the
 * solver still counts exactly one solution; a puzzle already kept in this split is skipped. Instance `index` is the
 * `index`-th kept puzzle (memoised), so access is deterministic and puzzles are unique within a split.
 */
export class SudokuStream {
  private readonly kept: SudokuInstance[] = [];
  private readonly keys = new Set<string>();
  private attempt = 0;

  /** A stream for one config, split and seed. */
  constructor(private readonly config: SudokuConfig, private readonly split: Split, private readonly seed: number) {
    if (config.splitFractions[split] <= 0) {
      throw new Error(`sudoku-v0: split "${split}" has fraction 0 in environment.config.splitFractions; it holds no instances`);
    }
  }

  /** The `index`-th instance. */
  get(index: number): SudokuInstance {
    if (!Number.isInteger(index) || index < 0) throw new Error(`sudoku-v0: instance index must be a non-negative integer, got ${index}`);
    const { size } = this.config;
    while (this.kept.length <= index) {
      let misses = 0;
      for (;;) {
        const rng = createRng(deriveSeed(this.seed, this.split, this.attempt++));
        const solution = randomSolution(size, rng);
        if (sudokuSplitOf(size, solution, this.config) === this.split) {
          const puzzle = removeClues(solution, rng);
          const candidate = { size, puzzle, solution, clues: filledCount(puzzle) };
          const key = sudokuInstanceKey(candidate);
          if (!this.keys.has(key)) {
            this.keys.add(key);
            this.kept.push(freeze(candidate));
            break;
          }
        }
        if (++misses >= MAX_ATTEMPTS) {
          throw new Error(`sudoku-v0: no new ${this.split} puzzle after ${MAX_ATTEMPTS} candidates (seed ${this.seed}, index ${this.kept.length})`);
        }
      }
    }
    return this.kept[index]!;
  }
}
