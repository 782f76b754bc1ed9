/**
 * Grid geometry for Plan-Path: positions, directions, BFS shortest paths and ASCII rendering.
 * Everything here is a pure function over plain, immutable data.
 */

export {
  DELTAS,
  DIRECTIONS,
  formatPos,
  isDirection,
  manhattan,
  samePos,
  type Direction,
  type Pos,
} from '@troupe/game-kit';
import { DELTAS, DIRECTIONS, drawGrid, samePos, shortestMoves, type Direction, type Pos } from '@troupe/game-kit';

/** Cell symbols of a grid row string: `.` free, `#` wall. */
export const FREE = '.';
/** Wall symbol. */
export const WALL = '#';

/** Whether `pos` is inside the grid and not a wall. */
export function isFree(grid: readonly string[], pos: Pos): boolean {
  const line = grid[pos.row];
  return line !== undefined && pos.col >= 0 && pos.col < line.length && line[pos.col] === FREE;
}

/**
 * The cell one move away, or `null` when the move is invalid (it would leave the grid or enter a wall). An invalid
 * move leaves the walker where it is.
 */
export function moveTarget(grid: readonly string[], pos: Pos, dir: Direction): Pos | null {
  const d = DELTAS[dir];
  const next = { row: pos.row + d.row, col: pos.col + d.col };
  return isFree(grid, next) ? next : null;
}

/**
 * Shortest-path distance from every cell to `goal` (moves are reversible, so this is also the distance from the goal),
 * row-major (`row * cols + col`); −1 for walls and cells not connected to the goal.
 */
export function distancesTo(grid: readonly string[], goal: Pos): Int32Array {
  const cols = grid[0]?.length ?? 0;
  const dist = new Int32Array(grid.length * cols).fill(-1);
  if (!isFree(grid, goal)) return dist;
  dist[goal.row * cols + goal.col] = 0;
  const queue: Pos[] = [goal];
  for (let head = 0; head < queue.length; head++) {
    const cur = queue[head]!;
    for (const dir of DIRECTIONS) {
      const next = moveTarget(grid, cur, dir);
      if (!next || dist[next.row * cols + next.col]! >= 0) continue;
      dist[next.row * cols + next.col] = dist[cur.row * cols + cur.col]! + 1;
      queue.push(next);
    }
  }
  return dist;
}

/**
 * Breadth-first search from `start` to `goal`. Returns a shortest list of moves (directions explored in the order
 * U, D, L, R, so the answer is deterministic), `[]` when start is the goal, or `null` when the goal is unreachable.
 */
export function bfs(grid: readonly string[], start: Pos, goal: Pos): Direction[] | null {
  if (!isFree(grid, start) || !isFree(grid, goal)) return null;
  const cols = grid[0]?.length ?? 0;
  const found = shortestMoves(start, {
    key: (p) => p.row * cols + p.col,
    next: (p, dir) => moveTarget(grid, p, dir),
    solved: (p) => samePos(p, goal),
  });
  return found.status === 'solved' ? found.moves : null;
}

/**
 * A canonical shortest path: among all shortest paths from `start` to `goal`, the one with the fewest changes of
 * direction; remaining ties go to the earlier direction in the order U, D, L, R at each step (so an open grid gives
 * the vertical leg first, then the horizontal one). `[]` when start is the goal, `null` when it is unreachable.
 *
 * This is the oracle's answer: demonstrations made of straight legs are far easier for a small model to learn than
 * the zig-zags a plain BFS tree returns.
 */
export function canonicalPath(grid: readonly string[], start: Pos, goal: Pos): Direction[] | null {
  if (!isFree(grid, start) || !isFree(grid, goal)) return null;
  const cols = grid[0]?.length ?? 0;
  const key = (p: Pos): number => p.row * cols + p.col;
  const dist = distancesTo(grid, goal);
  if (dist[key(start)]! < 0) return null;
  // turns(p, d): the fewest direction changes from p to the goal along shortest moves, having arrived moving d.
  const memo = new Map<string, number>();
  const turns = (p: Pos, last: Direction | null): number => {
    if (samePos(p, goal)) return 0;
    const id = `${key(p)}:${last ?? ''}`;
    const known = memo.get(id);
    if (known !== undefined) return known;
    let best = Infinity;
    for (const dir of DIRECTIONS) {
      const next = moveTarget(grid, p, dir);
      if (!next || dist[key(next)] !== dist[key(p)]! - 1) continue;
      best = Math.min(best, (last !== null && dir !== last ? 1 : 0) + turns(next, dir));
    }
    memo.set(id, best);
    return best;
  };
  const path: Direction[] = [];
  let at = start;
  let last: Direction | null = null;
  while (!samePos(at, goal)) {
    let choice: { dir: Direction; next: Pos; cost: number } | null = null;
    for (const dir of DIRECTIONS) {
      const next = moveTarget(grid, at, dir);
      if (!next || dist[key(next)] !== dist[key(at)]! - 1) continue;
      const cost: number = (last !== null && dir !== last ? 1 : 0) + turns(next, dir);
      if (!choice || cost < choice.cost) choice = { dir, next, cost };
    }
    path.push(choice!.dir);
    at = choice!.next;
    last = choice!.dir;
  }
  return path;
}

/** Options of {@link renderGrid}. */
export interface RenderGridOptions {
  /** Where the walker is now (drawn `A`). */
  readonly agent?: Pos;
  /** The goal (drawn `G`; `*` when the walker stands on it). */
  readonly goal?: Pos;
  /** Draw row and column numbers around the grid (default true). */
  readonly coordinates?: boolean;
}

/** ASCII rendering of a grid: `.` free, `#` wall, `A` the walker, `G` the goal, `*` the walker on the goal (see `drawGrid`). */
export function renderGrid(grid: readonly string[], options: RenderGridOptions = {}): string {
  return drawGrid(
    grid,
    (ch, here) => {
      const isAgent = options.agent !== undefined && samePos(options.agent, here);
      const isGoal = options.goal !== undefined && samePos(options.goal, here);
      return isAgent && isGoal ? '*' : isAgent ? 'A' : isGoal ? 'G' : ch;
    },
    { coordinates: options.coordinates ?? true, separator: ' ' },
  );
}
