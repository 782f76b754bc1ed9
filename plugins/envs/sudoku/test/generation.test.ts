/**
 * Generation: every puzzle has exactly one solution and it keeps every clue; no solution grid (hence no puzzle) is in
 * two splits; repeats within a split are rare on the default config; generation is deterministic in (seed, split,
 * index), each index on its own.
 */
import assert from 'node:assert/strict';
import type { Split } from '@troupe/kernel';
import { SPLITS, contentHash } from '@troupe/kernel';
import type { SudokuInstance } from '../src/index.js';
import { SudokuEnvironment, countSolutions, generateInstance, isSolvedGrid } from '../src/index.js';

const PER_SPLIT = 300;

function checkInstance(inst: SudokuInstance, where: string): void {
  const n = inst.size;
  assert.equal(isSolvedGrid(inst.solution), true, `${where}: the solution is not a valid grid`);
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      const clue = inst.puzzle[r]![c]!;
      if (clue !== 0)
        assert.equal(clue, inst.solution[r]![c], `${where}: the solution changes the clue at ${r + 1},${c + 1}`);
    }
  }
  const found: number[][] = [];
  assert.equal(countSolutions(inst.puzzle, 3, found), 1, `${where}: not exactly one solution`);
  assert.deepEqual(
    found,
    inst.solution.map((row) => [...row]),
  );
  assert.equal(inst.clues, inst.puzzle.flat().filter((v) => v !== 0).length);
}

describe('sudoku generation', () => {
  const env = new SudokuEnvironment({});
  const bySplit = new Map(SPLITS.map((s) => [s, Array.from({ length: PER_SPLIT }, (_, i) => env.instance(s, i, 0))]));

  it(`every 4x4 puzzle has exactly one solution, which keeps every clue (${PER_SPLIT} per split)`, () => {
    for (const [split, list] of bySplit) list.forEach((inst, i) => checkInstance(inst, `${split} ${i}`));
    const clues = [...bySplit.values()].flat().map((i) => i.clues);
    assert.ok(Math.min(...clues) >= 4, 'a 4x4 puzzle with a unique solution needs at least 4 clues');
  });

  it('no solution grid is in two splits; few puzzles repeat within a split (the trainer skips those)', () => {
    const owner = new Map<string, Split>();
    for (const [split, list] of bySplit) {
      const distinct = new Set(list.map((x) => env.instanceKey(x))).size;
      assert.ok(distinct >= 0.9 * list.length, `${split}: ${distinct} distinct of ${list.length}`);
      for (const inst of list) {
        const key = contentHash(inst.solution);
        const prev = owner.get(key);
        assert.ok(prev === undefined || prev === split, `a ${split} solution is also in ${prev}`);
        owner.set(key, split);
      }
    }
  });

  it('is deterministic, and random access equals sequential access', () => {
    const again = new SudokuEnvironment({});
    for (const split of SPLITS) {
      assert.deepEqual(
        Array.from({ length: 25 }, (_, i) => again.instanceKey(again.instance(split, i, 0))),
        bySplit
          .get(split)!
          .slice(0, 25)
          .map((x) => env.instanceKey(x)),
      );
    }
    const fresh = new SudokuEnvironment({});
    assert.equal(
      fresh.instanceKey(fresh.instance('validation', 77, 0)),
      env.instanceKey(bySplit.get('validation')![77]!),
    );
    assert.deepEqual(generateInstance('validation', 77, 0, env.config), bySplit.get('validation')![77]);
    const other = new SudokuEnvironment({});
    const seed1 = Array.from({ length: 25 }, (_, i) => other.instanceKey(other.instance('test', i, 1)));
    const seed0 = new Set(
      bySplit
        .get('test')!
        .slice(0, 25)
        .map((x) => env.instanceKey(x)),
    );
    assert.ok(seed1.filter((k) => seed0.has(k)).length < 5);
  });

  it('9x9 puzzles have exactly one solution too', () => {
    const big = new SudokuEnvironment({ size: 9 });
    for (let i = 0; i < 12; i++) {
      const inst = big.instance('train', i, 4);
      assert.equal(inst.size, 9);
      checkInstance(inst, `9x9 train ${i}`);
      assert.ok(inst.clues >= 17 && inst.clues <= 40, `${inst.clues} clues`);
    }
  });

  it('rejects a split with fraction 0', () => {
    const env0 = new SudokuEnvironment({ splitFractions: { train: 1, validation: 0, test: 0 } });
    assert.throws(() => env0.instance('test', 0, 0), /fraction 0/);
  });
});
