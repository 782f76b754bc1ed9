/**
 * The solver, the rules of fill lists, and hand-computed rewards on a small hand-made puzzle.
 */
import assert from 'node:assert/strict';
import { createRng } from '@troupe/kernel';
import type { Fill, FillOutcome, Grid } from '../src/index.js';
import {
  SudokuEnvironment,
  applyFills,
  conflictCount,
  countSolutions,
  fillReward,
  isSolvedGrid,
  makeInstance,
  randomSolution,
  removeClues,
  renderGrid,
} from '../src/index.js';

// Solution:      Puzzle (5 clues, 11 empty cells; exactly one solution):
// 1 2 | 3 4      1 . | . .
// 3 4 | 1 2      . 4 | . .
// 2 1 | 4 3      . . | . 3
// 4 3 | 2 1      4 . | 2 .
const PUZZLE = [
  [1, 0, 0, 0],
  [0, 4, 0, 0],
  [0, 0, 0, 3],
  [4, 0, 2, 0],
];
const SOLUTION = [
  [1, 2, 3, 4],
  [3, 4, 1, 2],
  [2, 1, 4, 3],
  [4, 3, 2, 1],
];
/** The grid of a successful fill outcome (fails the test otherwise). */
function gridOf(out: FillOutcome): Grid {
  assert.equal(out.ok, true, out.ok ? '' : out.error);
  return (out as { grid: Grid }).grid;
}
const close = (a: number, b: number): void => assert.ok(Math.abs(a - b) < 1e-9, `${a} != ${b}`);

describe('sudoku solver and grids', () => {
  it('counts solutions up to the limit', () => {
    const found: number[][] = [];
    assert.equal(countSolutions(PUZZLE, 2, found), 1);
    assert.deepEqual(found, SOLUTION);
    const empty = [
      [0, 0, 0, 0],
      [0, 0, 0, 0],
      [0, 0, 0, 0],
      [0, 0, 0, 0],
    ];
    assert.equal(countSolutions(empty, 2), 2);
    assert.equal(countSolutions(empty, 300), 288); // the number of 4x4 Sudoku grids
    assert.equal(
      countSolutions(
        [
          [1, 1, 0, 0],
          [0, 0, 0, 0],
          [0, 0, 0, 0],
          [0, 0, 0, 0],
        ],
        2,
      ),
      0,
    );
  });

  it('counts conflicting pairs per unit', () => {
    assert.equal(conflictCount(SOLUTION), 0);
    // Two 1s in row 1 that also share box 1: one pair for the row, one for the box.
    assert.equal(
      conflictCount([
        [1, 1, 0, 0],
        [0, 0, 0, 0],
        [0, 0, 0, 0],
        [0, 0, 0, 0],
      ]),
      2,
    );
    // Three 2s in column 1 (rows 1, 2, 4): 3 column pairs, and rows 1-2 share box 1.
    assert.equal(
      conflictCount([
        [2, 0, 0, 0],
        [2, 0, 0, 0],
        [0, 0, 0, 0],
        [2, 0, 0, 0],
      ]),
      4,
    );
    assert.equal(isSolvedGrid(SOLUTION), true);
    assert.equal(isSolvedGrid(PUZZLE), false);
  });

  it('generates valid solutions and minimal puzzles with one solution', () => {
    for (let i = 0; i < 20; i++) {
      const rng = createRng(i);
      const size = i % 4 === 0 ? 9 : 4;
      const solution = randomSolution(size, rng);
      assert.equal(isSolvedGrid(solution), true);
      const puzzle = removeClues(solution, rng);
      assert.equal(countSolutions(puzzle, 3), 1);
      // Minimal: removing any remaining clue gives several solutions.
      if (size === 4) {
        for (let r = 0; r < 4; r++) {
          for (let c = 0; c < 4; c++) {
            if (!puzzle[r]![c]) continue;
            const fewer = puzzle.map((row) => row.slice());
            fewer[r]![c] = 0;
            assert.ok(countSolutions(fewer, 2) > 1);
          }
        }
      }
    }
  });

  it('renders 1-based coordinates, dots and box separators', () => {
    assert.equal(
      renderGrid(PUZZLE),
      '    1 2   3 4\n1   1 . | . .\n2   . 4 | . .\n    ----+----\n3   . . | . 3\n4   4 . | 2 .',
    );
  });

  it('makeInstance refuses puzzles without exactly one solution', () => {
    assert.throws(
      () =>
        makeInstance([
          [1, 0, 0, 0],
          [0, 0, 0, 0],
          [0, 0, 0, 0],
          [0, 0, 0, 0],
        ]),
      /several/,
    );
    assert.throws(
      () =>
        makeInstance([
          [1, 1, 0, 0],
          [0, 0, 0, 0],
          [0, 0, 0, 0],
          [0, 0, 0, 0],
        ]),
      /conflict/,
    );
    assert.throws(
      () =>
        makeInstance([
          [1, 2, 3],
          [0, 0, 0],
          [0, 0, 0],
        ]),
      /size must be 4 or 9/,
    );
    assert.equal(makeInstance(PUZZLE).clues, 5);
  });
});

describe('sudoku fill rules', () => {
  const inst = makeInstance(PUZZLE);

  it('applies fills in order; a later fill of a cell overwrites it; restating a clue is allowed', () => {
    const out = applyFills(PUZZLE, PUZZLE, [
      [1, 2, 3],
      [1, 2, 2],
      [1, 1, 1],
    ]);
    assert.equal(out.ok, true);
    assert.deepEqual(gridOf(out)[0], [1, 2, 0, 0]);
  });

  it('rejects a whole list that changes a clue, leaves the range, is not triples, or is too long', () => {
    const bad: [unknown, RegExp][] = [
      [
        [
          [1, 2, 2],
          [1, 1, 3],
        ],
        /changes the given clue 1 at row 1, column 1/,
      ],
      [[[5, 1, 1]], /from 1 to 4/],
      [[[1, 2, 0]], /from 1 to 4/],
      [[[1, 2]], /three integers/],
      [[[1, 2, 2.5]], /three integers/],
      ['[[1,2,3]]', /expected a list/],
      [null, /got null/],
      [Array.from({ length: 17 }, () => [1, 2, 2]), /17 fills is more than 16/],
    ];
    for (const [fills, re] of bad) {
      const out = applyFills(PUZZLE, PUZZLE, fills);
      assert.equal(out.ok, false);
      assert.match((out as { error: string }).error, re);
    }
  });

  it('a valid Sudoku grid that ignores the clues is invalid (the official env accepted it)', () => {
    const other = [
      [2, 1, 4, 3],
      [4, 3, 2, 1],
      [1, 2, 3, 4],
      [3, 4, 1, 2],
    ];
    assert.equal(isSolvedGrid(other), true);
    const fills = other.flatMap((row, r) => row.map((v, c) => [r + 1, c + 1, v]));
    const out = applyFills(PUZZLE, PUZZLE, fills);
    assert.equal(out.ok, false);
  });

  it('shaped rewards match hand computations (11 empty cells)', () => {
    const env = new SudokuEnvironment({});
    const reward = (before: Grid, fills: Fill[]): number => {
      return fillReward(inst, before, gridOf(applyFills(PUZZLE, before, fills)), env.config);
    };
    // One correct fill: 1/11.
    close(reward(PUZZLE, [[1, 2, 2]]), 1 / 11);
    // A wrong fill that conflicts with the clue 1 in row 1 and box 1: 0 progress, 2 pairs: -0.2.
    close(reward(PUZZLE, [[1, 2, 1]]), -0.2);
    // A wrong fill without conflict: 0.
    close(reward(PUZZLE, [[1, 4, 2]]), 0);
    // Overwriting a correct fill with a wrong one: -1/11; fixing a conflict earns its pairs back.
    const withCorrect = gridOf(applyFills(PUZZLE, PUZZLE, [[1, 2, 2]]));
    close(reward(withCorrect, [[1, 2, 3]]), -1 / 11);
    const withConflict = gridOf(applyFills(PUZZLE, PUZZLE, [[1, 2, 1]]));
    close(reward(withConflict, [[1, 2, 2]]), 1 / 11 + 0.2);
    // Solving from the puzzle: 11/11 + 2.
    const all = env.oracle(env.reset(inst), 'proposer') as Fill[];
    assert.equal(all.length, 11);
    close(reward(PUZZLE, all), 3);
    // Sparse.
    const sparse = new SudokuEnvironment({ reward: 'sparse' });
    assert.equal(fillReward(inst, PUZZLE, gridOf(applyFills(PUZZLE, PUZZLE, all)), sparse.config), 1);
    assert.equal(fillReward(inst, PUZZLE, withCorrect, sparse.config), 0);
  });

  it('step: -2 for unparseable text, -1 for rule-breaking fills (nothing applied), malformed signal set', () => {
    const env = new SudokuEnvironment({});
    const s0 = env.reset(inst);
    const p = env.step(s0, 'proposer', { kind: 'invalid', error: 'no #### line', text: 'hmm' });
    assert.deepEqual(p.signals, { proposal_reward: -2, executed_reward: 0, success: 0, malformed: 1 });
    const e = env.step(p.state, 'executor', {
      kind: 'action',
      action: [
        [1, 2, 2],
        [1, 1, 4],
      ],
      text: '',
    });
    assert.deepEqual(e.signals, { proposal_reward: 0, executed_reward: -1, success: 0, malformed: 1 });
    assert.deepEqual(e.state.grid, PUZZLE);
    assert.match(
      env.observe(e.state, 'proposer').context[0]!.text,
      /invalid \(fill 2 \[1,1,4\] changes the given clue 1/,
    );
  });

  it('the oracle solves from any grid the team can reach, overwriting wrong fills', () => {
    const env = new SudokuEnvironment({});
    const rng = createRng(1);
    for (let k = 0; k < 20; k++) {
      let s = env.reset(inst);
      const junk = env.randomAction(s, 'proposer', rng);
      s = env.step(s, 'proposer', { kind: 'action', action: junk, text: '' }).state;
      const r = env.step(s, 'executor', { kind: 'action', action: junk, text: '' });
      if (r.done.terminated) continue;
      const fills = env.oracle(r.state, 'executor');
      assert.deepEqual(env.oracle(r.state, 'proposer'), fills);
      const p = env.step(r.state, 'proposer', { kind: 'action', action: fills, text: '' });
      assert.equal(env.step(p.state, 'executor', { kind: 'action', action: fills, text: '' }).success, true);
    }
  });
});
