/**
 * Generation: every instance is proven solvable by the BFS oracle within maxMoves, boxes start away from the goals,
 * layouts never cross splits, repeats within a split are rare on the default config, and generation is deterministic
 * in (seed, split, index), each index on its own.
 */
import assert from 'node:assert/strict';
import type { Split } from '@troupe/kernel';
import { SPLITS } from '@troupe/kernel';
import type { SokobanInstance } from '../src/index.js';
import { SokobanEnvironment, contentHashOfLayout, generateInstance, manhattan, runMoves, solve } from '../src/index.js';

const PER_SPLIT = 250;

function sample(env: SokobanEnvironment, split: Split, count: number, seed = 0): SokobanInstance[] {
  return Array.from({ length: count }, (_, i) => env.instance(split, i, seed));
}

describe('sokoban generation', () => {
  const env = new SokobanEnvironment({});
  const bySplit = new Map(SPLITS.map((s) => [s, sample(env, s, PER_SPLIT)]));

  it(`proves every instance solvable with the BFS oracle (${PER_SPLIT} per split)`, () => {
    for (const [split, list] of bySplit) {
      for (const [i, inst] of list.entries()) {
        const r = solve(inst, { player: inst.player, boxes: inst.boxes }, env.config.oracleNodeCap);
        assert.equal(r.status, 'solved', `${split} ${i}`);
        const moves = (r as { moves: string[] }).moves;
        assert.equal(moves.length, inst.shortest);
        assert.ok(inst.shortest >= 1 && inst.shortest <= env.config.maxMoves);
        assert.equal(runMoves(inst, { player: inst.player, boxes: inst.boxes }, moves as never, 'sparse').reward, 1);
      }
    }
  });

  it('builds walled 6x6 rooms with one box at least 2 from the goal, the player on free floor', () => {
    for (const list of bySplit.values()) {
      for (const inst of list) {
        assert.equal(inst.size, 6);
        assert.equal(inst.grid.length, 6);
        assert.ok(inst.grid.every((row) => row.length === 6 && row[0] === '#' && row[5] === '#'));
        assert.equal(inst.grid[0], '######');
        assert.equal(inst.grid[5], '######');
        assert.equal(inst.boxes.length, 1);
        assert.equal(inst.goals.length, 1);
        assert.ok(manhattan(inst.boxes[0]!, inst.goals[0]!) >= 2);
        assert.equal(inst.grid[inst.player.row]![inst.player.col], ' ');
        assert.ok(!inst.boxes.some((b) => b.row === inst.player.row && b.col === inst.player.col));
      }
    }
  });

  it('has no layout in two splits, and few repeats within a split (the trainer skips those)', () => {
    const owner = new Map<string, Split>();
    for (const [split, list] of bySplit) {
      const keys = new Set(list.map((x) => env.instanceKey(x)));
      assert.ok(keys.size >= 0.85 * list.length, `${split}: ${keys.size} distinct of ${list.length}`);
      for (const inst of list) {
        const layout = contentHashOfLayout(inst);
        const prev = owner.get(layout);
        assert.ok(prev === undefined || prev === split, `layout of a ${split} instance is also in ${prev}`);
        owner.set(layout, split);
      }
    }
  });

  it('is deterministic: a fresh environment gives the same instances; another seed gives others', () => {
    const again = new SokobanEnvironment({});
    for (const split of SPLITS) {
      const a = bySplit
        .get(split)!
        .slice(0, 30)
        .map((x) => env.instanceKey(x));
      const b = sample(again, split, 30).map((x) => again.instanceKey(x));
      assert.deepEqual(b, a);
    }
    // Random access gives the same instance as sequential access, and it is instanceAt's candidate search.
    const fresh = new SokobanEnvironment({});
    assert.equal(fresh.instanceKey(fresh.instance('test', 40, 0)), env.instanceKey(bySplit.get('test')![40]!));
    assert.deepEqual(generateInstance('test', 40, 0, env.config), bySplit.get('test')![40]);
    const other = sample(new SokobanEnvironment({}), 'test', 30, 1).map((x) => env.instanceKey(x));
    assert.ok(
      other.filter((k) =>
        bySplit
          .get('test')!
          .slice(0, 30)
          .some((x) => env.instanceKey(x) === k),
      ).length < 10,
    );
  });

  it('generates two-box puzzles in bigger rooms, each solvable within maxMoves', () => {
    const big = new SokobanEnvironment({ size: 7, boxes: 2, maxMoves: 40 });
    for (let i = 0; i < 20; i++) {
      const inst = big.instance('train', i, 3);
      assert.equal(inst.boxes.length, 2);
      assert.equal(inst.grid.length, 7);
      const r = solve(inst, { player: inst.player, boxes: inst.boxes }, big.config.oracleNodeCap);
      assert.equal(r.status, 'solved');
      assert.ok(inst.shortest <= 40);
    }
  });

  it('rejects a split with fraction 0', () => {
    const env0 = new SokobanEnvironment({ splitFractions: { train: 0.9, validation: 0.1, test: 0 } });
    assert.throws(() => env0.instance('test', 0, 0), /fraction 0/);
  });
});
