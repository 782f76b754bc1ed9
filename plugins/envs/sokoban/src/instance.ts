/**
 * Seeded Sokoban generation (the classic reverse-play generator) with content-hash splits.
 */
import type { Rng, Split } from '@troupe/kernel';
import { contentHash, splitOfContent } from '@troupe/kernel';
import { deepFreeze, instanceAt } from '@troupe/game-kit';
import type { Board, Placement, Pos } from './board.js';
import { DELTAS, DIRECTIONS, SYMBOLS, cellsOf, solve, sortedPositions } from './board.js';
import type { SokobanConfig } from './config.js';

/** One Sokoban puzzle. Plain, deeply frozen data. */
export interface SokobanInstance {
  /** Side of the square room, outer walls included. */
  readonly size: number;
  /** Rows of `#` (wall) and ` ` (floor), top to bottom; the outer ring is wall. */
  readonly grid: readonly string[];
  /** Goal cells, sorted. */
  readonly goals: readonly Pos[];
  /** Box cells at the start, sorted. */
  readonly boxes: readonly Pos[];
  /** The player's start. */
  readonly player: Pos;
  /** Length (in moves) of an optimal solution, found by the BFS oracle. */
  readonly shortest: number;
}

/** The hash of the layout (walls, goals, boxes; no player): it decides the split. */
export function contentHashOfLayout(i: Pick<SokobanInstance, 'grid' | 'goals' | 'boxes'>): string {
  return contentHash(layoutContent(i));
}

/** The layout content: see {@link contentHashOfLayout}. */
export function layoutContent(i: Pick<SokobanInstance, 'grid' | 'goals' | 'boxes'>): unknown {
  return { grid: i.grid, goals: i.goals, boxes: i.boxes };
}

/** The content key of an instance: SHA-256 of the canonical JSON of grid, goals, boxes and player. */
export function sokobanInstanceKey(i: Pick<SokobanInstance, 'grid' | 'goals' | 'boxes' | 'player'>): string {
  return contentHash({ grid: i.grid, goals: i.goals, boxes: i.boxes, player: i.player });
}

/** The split of an instance: decided by the hash of its LAYOUT, so a layout never appears in two splits. */
export function sokobanSplitOf(
  i: Pick<SokobanInstance, 'grid' | 'goals' | 'boxes'>,
  config: Pick<SokobanConfig, 'splitFractions'>,
): Split {
  return splitOfContent(contentHashOfLayout(i), config.splitFractions);
}

/**
 * Builds an instance from a classic Sokoban picture (`#` wall, ` ` or `_` floor, `.` goal, `$` box, `@` player,
 * `*` box on goal, `+` player on goal), proving it solvable with the BFS oracle. For tests and hand-made puzzles.
 */
export function parseInstance(rows: readonly string[], nodeCap = 1_000_000): SokobanInstance {
  const size = rows.length;
  if (size === 0 || rows.some((r) => r.length !== size))
    throw new Error(`sokoban: a picture must be square, got ${JSON.stringify(rows)}`);
  const unknown = rows.join('').search(/[^# _.$@*+]/);
  const [row, col] = [Math.floor(unknown / size), unknown % size];
  if (unknown >= 0) throw new Error(`sokoban: unknown symbol ${JSON.stringify(rows[row]![col])} at ${row},${col}`);
  const [goals, boxes, players] = [cellsOf(rows, '.*+'), cellsOf(rows, '$*'), cellsOf(rows, '@+')];
  const grid = rows.map((line) => line.replace(/[^#]/g, SYMBOLS.floor));
  if (players.length !== 1) throw new Error(`sokoban: a picture needs exactly one player, found ${players.length}`);
  if (boxes.length === 0 || boxes.length !== goals.length)
    throw new Error(`sokoban: needs as many boxes as goals (≥ 1), found ${boxes.length} and ${goals.length}`);
  const board: Board = { grid, goals: sortedPositions(goals) };
  const placement: Placement = { player: players[0]!, boxes: sortedPositions(boxes) };
  const result = solve(board, placement, nodeCap);
  if (result.status !== 'solved')
    throw new Error(`sokoban: the puzzle is not solvable (BFS: ${result.status} after ${result.nodes} states)`);
  return deepFreeze<SokobanInstance>({
    size,
    grid,
    goals: board.goals,
    boxes: placement.boxes,
    player: placement.player,
    shortest: result.moves.length,
  });
}

/** Floor-carving masks of the random walk (gym-sokoban's room topology generator), 3×3, centred on the walker. */
const MASKS: readonly (readonly number[])[] = [
  [0, 0, 0, 1, 1, 1, 0, 0, 0],
  [0, 1, 0, 0, 1, 0, 0, 1, 0],
  [0, 0, 0, 1, 1, 0, 0, 1, 0],
  [0, 0, 0, 1, 1, 0, 1, 1, 0],
  [0, 0, 0, 0, 1, 1, 0, 1, 0],
];

/** Random room topology: a random walk through the interior carving 3×3 masks of floor; the outer ring stays wall. */
export function randomRoom(rng: Rng, size: number): string[] {
  const cells: string[][] = Array.from({ length: size }, () =>
    Array.from({ length: size }, (): string => SYMBOLS.wall),
  );
  const inner = size - 2;
  let pos = { row: 1 + rng.int(inner), col: 1 + rng.int(inner) };
  let dir = DELTAS[DIRECTIONS[rng.int(4)]!];
  const steps = Math.round(1.5 * (size + size));
  for (let s = 0; s < steps; s++) {
    if (rng.next() < 0.35) dir = DELTAS[DIRECTIONS[rng.int(4)]!];
    const mask = MASKS[rng.int(MASKS.length)]!;
    for (let k = 0; k < 9; k++) {
      if (!mask[k]) continue;
      const r = pos.row + Math.floor(k / 3) - 1;
      const c = pos.col + (k % 3) - 1;
      if (r >= 1 && r <= inner && c >= 1 && c <= inner) cells[r]![c] = SYMBOLS.floor;
    }
    pos = {
      row: Math.min(inner, Math.max(1, pos.row + dir.row)),
      col: Math.min(inner, Math.max(1, pos.col + dir.col)),
    };
  }
  return cells.map((r) => r.join(''));
}

/**
 * One candidate drawn from `rng`: a random room; goals on random floor cells with the boxes on them and the player on
 * another random floor cell; then REVERSE PLAY: a breadth-first search over every placement reachable by reverse
 * moves (the player walks, or steps away from an adjacent box and PULLS it along), up to `reverseNodeCap`
 * placements. Among the visited placements whose every box is at least `minBoxDistance` from its nearest goal, those
 * with the largest total box displacement (Σ Manhattan distance of each box from the goal it started on) are kept
 * and one is drawn at random. Every reverse move undoes a forward move, so the puzzle is solvable by construction;
 * the candidate is still kept only if the forward BFS oracle solves it within `oracleNodeCap` states and `maxMoves`
 * moves (the proof, and the optimal length). `accept` (e.g. "the layout hashes into the wanted split") is asked before
 * the forward search, to save it. Returns `null` when rejected.
 */
export function drawCandidate(
  rng: Rng,
  config: SokobanConfig,
  accept?: (layout: Pick<SokobanInstance, 'grid' | 'goals' | 'boxes'>) => boolean,
): SokobanInstance | null {
  const { size } = config;
  const grid = randomRoom(rng, size);
  const floorCells = cellsOf(grid, SYMBOLS.floor);
  if (floorCells.length < config.boxes + 2) return null;
  const pool = floorCells.slice();
  const take = (): Pos => pool.splice(rng.int(pool.length), 1)[0]!;
  const goals = Array.from({ length: config.boxes }, take);
  const player0 = take();
  const cells = size * size;
  const floor = new Uint8Array(cells);
  for (const p of floorCells) floor[p.row * size + p.col] = 1;
  const offsets = DIRECTIONS.map((d) => DELTAS[d].row * size + DELTAS[d].col);
  const goalIdx = goals.map((g) => g.row * size + g.col);
  const rowOf = (i: number): number => Math.floor(i / size);
  const dist = (a: number, b: number): number => Math.abs(rowOf(a) - rowOf(b)) + Math.abs((a % size) - (b % size));
  const nearest = new Int32Array(cells);
  for (let i = 0; i < cells; i++) nearest[i] = Math.min(...goalIdx.map((g) => dist(i, g)));
  // States: [player, box_0 .. box_{k-1}] in a flat queue, box i being the one that started on goal i.
  const k = config.boxes;
  const w = k + 1;
  const cap = config.reverseNodeCap;
  let queue = new Int32Array(w * 256);
  const dense = cells ** w <= 1 << 22 ? new Uint8Array(cells ** w) : null;
  const sparse = dense ? null : new Set<number>();
  const visit = (key: number): boolean => {
    if (dense) {
      if (dense[key]) return false;
      dense[key] = 1;
      return true;
    }
    if (sparse!.has(key)) return false;
    sparse!.add(key);
    return true;
  };
  queue[0] = player0.row * size + player0.col;
  for (let i = 0; i < k; i++) queue[1 + i] = goalIdx[i]!;
  let key0 = 0;
  for (let i = 0; i < w; i++) key0 = key0 * cells + queue[i]!;
  visit(key0);
  let len = 1;
  let bestScore = 0;
  let best: number[] = [];
  const cand = new Int32Array(w);
  const consider = (): void => {
    let key = 0;
    for (let i = 0; i < w; i++) key = key * cells + cand[i]!;
    if (len >= cap || !visit(key)) return;
    if ((len + 1) * w > queue.length) {
      const grown = new Int32Array(queue.length * 2);
      grown.set(queue);
      queue = grown;
    }
    queue.set(cand, len * w);
    let far = true;
    let score = 0;
    for (let i = 1; i <= k; i++) {
      if (nearest[cand[i]!]! < config.minBoxDistance) far = false;
      score += dist(cand[i]!, goalIdx[i - 1]!);
    }
    if (far && score >= bestScore) {
      if (score > bestScore) {
        bestScore = score;
        best = [];
      }
      best.push(len);
    }
    len++;
  };
  for (let head = 0; head < len; head++) {
    const base = head * w;
    const p = queue[base]!;
    for (let d = 0; d < 4; d++) {
      const to = p + offsets[d]!;
      if (!floor[to]) continue;
      let blocked = false;
      for (let i = 1; i <= k; i++) if (queue[base + i] === to) blocked = true;
      if (blocked) continue;
      const behind = p - offsets[d]!;
      for (let i = 0; i < w; i++) cand[i] = queue[base + i]!;
      cand[0] = to;
      consider();
      for (let i = 1; i <= k; i++) {
        if (queue[base + i] !== behind) continue;
        for (let j = 0; j < w; j++) cand[j] = queue[base + j]!;
        cand[0] = to;
        cand[i] = p;
        consider();
      }
    }
  }
  if (best.length === 0) return null;
  const at = best[rng.int(best.length)]! * w;
  const pick = Array.from(queue.subarray(at, at + w));
  const toPos = (i: number): Pos => ({ row: rowOf(i), col: i % size });
  const board: Board = { grid, goals: sortedPositions(goals) };
  const placement: Placement = { player: toPos(pick[0]!), boxes: sortedPositions(pick.slice(1).map(toPos)) };
  if (accept && !accept({ grid, goals: board.goals, boxes: placement.boxes })) return null;
  const result = solve(board, placement, config.oracleNodeCap);
  if (result.status !== 'solved' || result.moves.length > config.maxMoves || result.moves.length === 0) return null;
  return deepFreeze<SokobanInstance>({
    size,
    grid,
    goals: board.goals,
    boxes: placement.boxes,
    player: { ...placement.player },
    shortest: result.moves.length,
  });
}

/** Most candidates tried for one instance before generation gives up with an error. */
export const MAX_ATTEMPTS = 200_000;

/**
 * The `index`-th instance of `split` for `seed` (see the game kit's `instanceAt`): candidates are drawn from the
 * seeded streams `deriveSeed(seed, split, index, attempt)` for attempt = 0, 1, …, until one is valid and its LAYOUT
 * hashes into `split` (checked before the forward proof, to save it). Layouts therefore never cross splits, and
 * instance N costs the same whatever N.
 */
export function generateInstance(split: Split, index: number, seed: number, config: SokobanConfig): SokobanInstance {
  return instanceAt(
    {
      id: 'sokoban-v0',
      splitFractions: config.splitFractions,
      maxAttempts: MAX_ATTEMPTS,
      hint: 'valid puzzles of this config are too rare; raise environment.config.size or maxMoves, or lower minBoxDistance',
      draw: (rng, wanted) => drawCandidate(rng, config, (layout) => sokobanSplitOf(layout, config) === wanted),
    },
    split,
    index,
    seed,
  );
}
