/**
 * The Sokoban oracle as a program: what the coder (the paper's tool agent) learns to write when it plays the proposer.
 * The program carries the board as data (the rows as the compact observation draws them: `#` wall, the floor symbol,
 * `.` goal, `$` box, `@` player, `*` box on a goal, `+` player on a goal) and searches it; it prints exactly the BFS
 * oracle's move list (`solve` in board.ts, cut to `maxMoves`).
 *
 * The search is the oracle's own: breadth-first over (player cell, sorted box cells), neighbours in the order U, D, L,
 * R, a state marked seen when it is first generated, and the answer taken when a generated state has every box on a
 * goal. Cells are indices into the board string; a row is `w` characters long with its newline, so the neighbours are
 * ±1 and ±w, and index order is row-major order (the box lists sort as the oracle's do). Short names keep the program
 * short: a byte-level model writes every character as one token.
 */
import type { ProgramLanguage } from '@troupe/kernel';
import type { Board, Placement } from './board.js';
import { SYMBOLS, renderBoard } from './board.js';

/**
 * The Python search after the board, for any number of boxes (see the module comment); `{maxMoves}` is replaced by the
 * move-list limit.
 */
const PYTHON_SEARCH = `w=g.find("\\n")+1;f=lambda s:tuple(i for i,c in enumerate(g)if c in s)
o=set(f(".*+"));s=f("@+")[0],f("$*");q=[s+("",)];v={s}
for p,b,m in q:
 for d,k in zip("UDLR",(-w,w,-1,1)):
  n=p+k;c=b
  if g[n]=="#":continue
  if n in b:
   if g[n+k]=="#"or n+k in b:continue
   c=tuple(sorted(n+k if x==n else x for x in b))
  if(n,c)in v:continue
  v.add((n,c));q+=[(n,c,m+d)]
  if set(c)<=o:print(*(m+d)[:{maxMoves}]);exit()
`;

/**
 * The same search for ONE box (the paper's setting), a third shorter: the box is a cell index, a move pushes it when
 * it walks into it (\`c=b+k*(n==b)\`), and the board is solved when the box's cell is a goal in the picture (\`.\`,
 * \`*\` or \`+\`: a state with the box on a goal is never expanded, so only a push can get there).
 */
const PYTHON_SEARCH_ONE_BOX = `w=g.find("\\n")+1;f=g.find
s=max(f("@"),f("+")),max(f("$"),f("*"));q=[s+("",)];v={s}
for p,b,m in q:
 for d,k in zip("UDLR",(-w,w,-1,1)):
  n=p+k;c=b+k*(n==b)
  if"#"in g[n]+g[c]or(n,c)in v:continue
  v.add((n,c));q+=[(n,c,m+d)]
  if g[c]in".*+":print(*(m+d)[:{maxMoves}]);exit()
`;

/** Whether every cell of the outer ring is a wall (the program's neighbour arithmetic needs it; generated rooms have it). */
function walledIn(grid: readonly string[]): boolean {
  const last = grid.length - 1;
  return grid.every((row, r) =>
    [...row].every((ch, c) => ch === SYMBOLS.wall || (r > 0 && r < last && c > 0 && c < row.length - 1)),
  );
}

/**
 * The Python program that prints the BFS oracle's moves from `placement` (at most `maxMoves` of them), or `undefined`
 * for another language and for a board whose outer ring is not all wall. Where the oracle has no moves (solved,
 * deadlocked, unsolvable) the program prints nothing: `SokobanEnvironment.oracleProgram` gives no program there.
 */
export function sokobanOracleProgram(
  board: Board,
  placement: Placement,
  options: { readonly maxMoves: number; readonly floor: '_' | ' ' },
  language: ProgramLanguage,
): string | undefined {
  if (language !== 'python' || !walledIn(board.grid)) return undefined;
  const rows = renderBoard(board, placement, { floor: options.floor, coordinates: false });
  const search = placement.boxes.length === 1 ? PYTHON_SEARCH_ONE_BOX : PYTHON_SEARCH;
  return `g="""${rows}"""\n${search.replace('{maxMoves}', String(options.maxMoves))}`;
}
