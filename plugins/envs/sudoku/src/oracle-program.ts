/**
 * The Sudoku oracle as a program: what the coder (the paper's tool agent) learns to write when it plays the proposer.
 * The program carries the current grid as data (its rows as the compact observation shows them, `.` for an empty
 * cell), fills the empty cells by backtracking (row-major, values in increasing order) and prints, as the coder's JSON
 * output parser reads it, the oracle's action: the fills of the empty cells in row-major order (`action: fills`) or
 * the completed grid (`action: grid`).
 *
 * The puzzle has exactly one solution, so any completion of a grid whose filled cells all agree with it IS the
 * solution: on such a grid the program prints exactly the oracle's action. A grid holding a wrong fill has no
 * completion (and the oracle would overwrite the fill), so there is no program for it. Short names keep the program
 * short: a byte-level model writes every character as one token.
 */
import type { ProgramLanguage } from '@troupe/kernel';
import type { Grid } from './grid.js';
import { boxShape, formatCompactGrid } from './grid.js';

/** What the program prints: the empty cells' fills, or the whole grid. */
export type SudokuProgramAnswer = 'fills' | 'grid';

/**
 * The Python program that completes `grid` and prints the answer (see the module comment), or `undefined` for another
 * language and for a grid with a filled cell that disagrees with `solution` (or with nothing left to fill).
 */
export function sudokuOracleProgram(
  grid: Grid,
  solution: Grid,
  answer: SudokuProgramAnswer,
  language: ProgramLanguage,
): string | undefined {
  if (language !== 'python') return undefined;
  const n = grid.length;
  const consistent = grid.every((row, r) => row.every((v, c) => v === 0 || v === solution[r]![c]));
  if (!consistent || grid.every((row) => row.every((v) => v !== 0))) return undefined;
  const b = boxShape(n);
  // a value v fits cell (r,c) when it is in no cell i of its row, column and box
  const fits = `all(v not in(g[r][i],g[i][c],g[r//${b.rows}*${b.rows}+i//${b.cols}][c//${b.cols}*${b.cols}+i%${b.cols}])for i in range(${n}))`;
  const search =
    n === 4
      ? [
          // the empty cells in row-major order: instant on 4x4
          'def s(k):',
          ' if k==len(e):return 1',
          ' r,c=e[k]',
          ` for v in range(1,${n + 1}):`,
          `  if ${fits}:`,
          '   g[r][c]=v',
          '   if s(k+1):return 1',
          ' g[r][c]=0',
          's(0)',
        ]
      : [
          // the empty cell with the fewest fitting values first: row-major order takes seconds on some 9x9 puzzles
          `def f(r,c):return[v for v in range(1,${n + 1})if ${fits}]`,
          'def s():',
          ' z=[(len(f(r,c)),r,c)for r,c in e if g[r][c]<1]',
          ' if not z:return 1',
          ' r,c=min(z)[1:]',
          ' for v in f(r,c):',
          '  g[r][c]=v',
          '  if s():return 1',
          ' g[r][c]=0',
          's()',
        ];
  return [
    `g=[[int(c)for c in r]for r in"""${formatCompactGrid(grid)}""".replace(".","0").split()]`,
    `e=[(r,c)for r in range(${n})for c in range(${n})if g[r][c]<1]`,
    ...search,
    answer === 'grid' ? 'print(g)' : 'print([[r+1,c+1,g[r][c]]for r,c in e])',
    '',
  ].join('\n');
}
