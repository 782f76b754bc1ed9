/**
 * The Plan-Path oracle as a program: what the coder (the paper's tool agent) learns to write when it plays the
 * proposer. The program carries the grid as data (the rows as the compact observation shows them, the walker `A` and
 * the goal `G` in place) and searches it; it prints exactly the oracle's move list (`canonicalPath`): the shortest path
 * with the fewest changes of direction, ties to the earlier direction in the order U, D, L, R.
 *
 * The search is Dijkstra's over (cell, last direction) with the key (moves, turns, directions so far written as digits
 * 0-3 in U, D, L, R order): extending two paths that meet in the same (cell, last direction) by the same moves keeps
 * their keys in order, so the first path to reach the goal is the least key, which is `canonicalPath`'s choice.
 * Short names keep the program short: a byte-level model writes every character as one token.
 */
import type { ProgramLanguage } from '@troupe/kernel';
import type { Pos } from './grid.js';
import { renderGrid } from './grid.js';

/**
 * The Python search after the grid (see the module comment); `{maxMoves}` is replaced by the move-list limit. The grid
 * is one string: a cell's neighbours are ±1 and ±w (w = row length + 1, the newline), and newlines and the ends of the
 * string are walls like `#`.
 */
const PYTHON_SEARCH = `w=g.find("\\n")+1;h=[(0,0,"",g.find("A"))];v=set()
while g[h[0][3]]!="G":
 n,t,p,k=heappop(h);q=k,p[-1:]
 if q in v:continue
 v.add(q)
 for m,d in enumerate((-w,w,-1,1)):
  if-1<k+d<len(g)and g[k+d]in".G":heappush(h,(n+1,t+(p[-1:]not in("",str(m))),p+str(m),k+d))
print(*["UDLR"[int(i)]for i in h[0][2][:{maxMoves}]])
`;

/**
 * The Python program that prints the oracle's moves from `position` to `goal` on `grid` (at most `maxMoves` of them),
 * or `undefined` for another language or when the walker is already on the goal (there is nothing to search).
 */
export function planPathOracleProgram(
  grid: readonly string[],
  position: Pos,
  goal: Pos,
  maxMoves: number,
  language: ProgramLanguage,
): string | undefined {
  if (language !== 'python' || (position.row === goal.row && position.col === goal.col)) return undefined;
  const rows = renderGrid(grid, { agent: position, goal, coordinates: false }).replaceAll(' ', '');
  return `from heapq import*\ng="""${rows}"""\n${PYTHON_SEARCH.replace('{maxMoves}', String(maxMoves))}`;
}
