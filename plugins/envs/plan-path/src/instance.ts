/**
 * Seeded instance generation with content-hash splits.
 */
import type { Rng, Split } from '@troupe/kernel';
import { contentHash, splitOfContent } from '@troupe/kernel';
import { deepFreeze, instanceAt } from '@troupe/game-kit';
import type { PlanPathConfig } from './config.js';
import type { Direction, Pos } from './grid.js';
import { FREE, WALL, bfs, isFree, samePos } from './grid.js';

/** One Plan-Path task: a grid, a start and a goal. Plain frozen data. */
export interface PlanPathInstance {
  /** Side of the square grid. */
  readonly size: number;
  /** Rows of `.` (free) and `#` (wall), top to bottom. */
  readonly grid: readonly string[];
  /** Where the walker starts (free, not the goal). */
  readonly start: Pos;
  /** Where it must go (free, reachable from the start). */
  readonly goal: Pos;
  /** Length of a shortest path from start to goal (≥ 1). */
  readonly shortest: number;
}

/** The content that defines an instance (and its key): grid, start and goal. */
export function instanceContent(instance: Pick<PlanPathInstance, 'grid' | 'start' | 'goal'>): unknown {
  return { grid: instance.grid, start: instance.start, goal: instance.goal };
}

/** The content hash of an instance: SHA-256 of the canonical JSON of its grid, start and goal. */
export function planPathInstanceKey(instance: Pick<PlanPathInstance, 'grid' | 'start' | 'goal'>): string {
  return contentHash(instanceContent(instance));
}

/**
 * Builds an instance from a hand-written grid (rows of `.` and `#`), start and goal, checking that it is square,
 * that start ≠ goal, both free, and the goal reachable. For tests and hand-made tasks.
 */
export function makeInstance(grid: readonly string[], start: Pos, goal: Pos): PlanPathInstance {
  const size = grid.length;
  if (size === 0 || grid.some((row) => row.length !== size || /[^.#]/.test(row))) {
    throw new Error(`plan-path: a grid must be square with rows of "." and "#", got ${JSON.stringify(grid)}`);
  }
  if (!isFree(grid, start)) throw new Error(`plan-path: the start (${start.row}, ${start.col}) is not a free cell`);
  if (!isFree(grid, goal)) throw new Error(`plan-path: the goal (${goal.row}, ${goal.col}) is not a free cell`);
  if (samePos(start, goal)) throw new Error('plan-path: the start and the goal must differ');
  const path = bfs(grid, start, goal);
  if (!path) throw new Error('plan-path: the goal is not reachable from the start');
  return deepFreeze({ size, grid: [...grid], start: { ...start }, goal: { ...goal }, shortest: path.length });
}

/**
 * One candidate drawn from `rng`: each cell is a wall with probability `wallProbability`; start and goal are drawn
 * uniformly among the free cells (distinct). Returns `null` when the candidate is rejected (too few free cells, goal
 * unreachable, or shortest path longer than `maxMoves`).
 */
export function drawCandidate(
  rng: Rng,
  config: Pick<PlanPathConfig, 'size' | 'wallProbability' | 'maxMoves'>,
): PlanPathInstance | null {
  const { size } = config;
  const grid: string[] = [];
  const free: Pos[] = [];
  for (let r = 0; r < size; r++) {
    let line = '';
    for (let c = 0; c < size; c++) {
      const wall = rng.next() < config.wallProbability;
      line += wall ? WALL : FREE;
      if (!wall) free.push({ row: r, col: c });
    }
    grid.push(line);
  }
  if (free.length < 2) return null;
  const startIndex = rng.int(free.length);
  const g = rng.int(free.length - 1);
  const start = free[startIndex]!;
  const goal = free[g >= startIndex ? g + 1 : g]!;
  const path: Direction[] | null = bfs(grid, start, goal);
  if (!path || path.length === 0 || path.length > config.maxMoves) return null;
  return deepFreeze({ size, grid, start, goal, shortest: path.length });
}

/** Safety limit on candidates per instance (a split holds ≥ 5% of the hash space, so ~20 attempts are typical). */
export const MAX_ATTEMPTS = 100_000;

/**
 * The `index`-th instance of `split` for `seed`: candidates are drawn from the seeded streams
 * `deriveSeed(seed, split, index, attempt)` for attempt = 0, 1, ... until one is valid and its content hash falls in
 * `split` (see `splitOfContent`). Splits are therefore disjoint by content whatever the seeds.
 */
export function generateInstance(split: Split, index: number, seed: number, config: PlanPathConfig): PlanPathInstance {
  return instanceAt(
    {
      id: 'plan-path-v0',
      splitFractions: config.splitFractions,
      maxAttempts: MAX_ATTEMPTS,
      hint: 'lower wallProbability or raise maxMoves',
      draw: (rng, wanted) => {
        const candidate = drawCandidate(rng, config);
        return candidate && splitOfContent(planPathInstanceKey(candidate), config.splitFractions) === wanted
          ? candidate
          : null;
      },
    },
    split,
    index,
    seed,
  );
}
