/**
 * Breadth-first search for a shortest move list: the oracle of grid games whose states change by U / D / L / R moves.
 */
import type { Direction } from './moves.js';
import { DIRECTIONS } from './moves.js';

/** What {@link shortestMoves} found: a shortest move list, or why there is none; `nodes`: states expanded. */
export type SearchResult =
  | { readonly status: 'solved'; readonly moves: Direction[]; readonly nodes: number }
  | { readonly status: 'unsolvable' | 'cap'; readonly nodes: number };

/** The moves of a search. */
export interface SearchSpace<S> {
  /** A state's identity: states with the same key are the same state. */
  key(state: S): number | string;
  /** The state one move away, or `null` when the move cannot be made. */
  next(state: S, dir: Direction): S | null;
  /** Whether a state is a goal. */
  solved(state: S): boolean;
}

/**
 * Breadth-first search from `start` for a shortest move list to a goal. Directions are tried in the order U, D, L, R
 * and a state is a goal as soon as it is generated, so the answer is deterministic. Stops with `cap` after expanding
 * `nodeCap` states, `unsolvable` when the reachable space holds no goal; `[]` when `start` is a goal.
 */
export function shortestMoves<S>(start: S, space: SearchSpace<S>, nodeCap = Infinity): SearchResult {
  if (space.solved(start)) return { status: 'solved', moves: [], nodes: 0 };
  const nodes: { readonly state: S; readonly parent: number; readonly dir: Direction | null }[] = [
    { state: start, parent: -1, dir: null },
  ];
  const seen = new Set([space.key(start)]);
  for (let head = 0; head < nodes.length; head++) {
    if (head >= nodeCap) return { status: 'cap', nodes: head };
    for (const dir of DIRECTIONS) {
      const state = space.next(nodes[head]!.state, dir);
      if (state === null) continue;
      const key = space.key(state);
      if (seen.has(key)) continue;
      seen.add(key);
      nodes.push({ state, parent: head, dir });
      if (space.solved(state)) {
        const moves: Direction[] = [];
        for (let i = nodes.length - 1; i > 0; i = nodes[i]!.parent) moves.push(nodes[i]!.dir!);
        return { status: 'solved', moves: moves.reverse(), nodes: head + 1 };
      }
    }
  }
  return { status: 'unsolvable', nodes: nodes.length };
}
