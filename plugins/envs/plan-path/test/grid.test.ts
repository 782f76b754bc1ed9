import assert from 'node:assert/strict';
import { bfs, canonicalPath, manhattan, moveTarget, renderGrid } from '../src/index.js';

const grid = ['.#...', '.#.#.', '...#.', '##...', '.....'];

describe('plan-path grid', () => {
  it('bfs returns a shortest path around walls, deterministically', () => {
    assert.deepEqual(bfs(grid, { row: 0, col: 0 }, { row: 0, col: 2 }), ['D', 'D', 'R', 'R', 'U', 'U']);
    assert.deepEqual(bfs(grid, { row: 0, col: 0 }, { row: 0, col: 0 }), []);
    assert.deepEqual(bfs(grid, { row: 4, col: 0 }, { row: 4, col: 4 }), ['R', 'R', 'R', 'R']);
  });

  it('bfs returns null when the goal is unreachable or blocked', () => {
    const closed = ['.#...', '##...', '.....', '.....', '.....'];
    assert.equal(bfs(closed, { row: 0, col: 0 }, { row: 4, col: 4 }), null);
    assert.equal(bfs(grid, { row: 0, col: 0 }, { row: 0, col: 1 }), null);
  });

  it('canonicalPath is a shortest path with the fewest turns, vertical leg first on ties', () => {
    const open = ['.....', '.....', '.....', '.....', '.....'];
    // BFS's tree zig-zags; the canonical path is two straight legs, the vertical one first.
    assert.deepEqual(canonicalPath(open, { row: 3, col: 4 }, { row: 1, col: 2 }), ['U', 'U', 'L', 'L']);
    assert.deepEqual(canonicalPath(open, { row: 0, col: 0 }, { row: 2, col: 3 }), ['D', 'D', 'R', 'R', 'R']);
    // The vertical-first L is blocked at (1,4): the horizontal leg goes first.
    const blocked = ['.....', '....#', '.....', '.....', '.....'];
    assert.deepEqual(canonicalPath(blocked, { row: 0, col: 4 }, { row: 2, col: 2 }), ['L', 'L', 'D', 'D']);
    // Around walls it stays shortest (same length as BFS) and takes the route with fewest direction changes.
    assert.deepEqual(canonicalPath(grid, { row: 0, col: 0 }, { row: 0, col: 2 }), ['D', 'D', 'R', 'R', 'U', 'U']);
    assert.deepEqual(canonicalPath(grid, { row: 0, col: 0 }, { row: 0, col: 0 }), []);
    assert.equal(canonicalPath(grid, { row: 0, col: 0 }, { row: 0, col: 1 }), null);
  });

  it('canonicalPath has the BFS length on many random grids', () => {
    let seed = 12345;
    const rand = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    let checked = 0;
    for (let t = 0; t < 300; t++) {
      const g = Array.from({ length: 6 }, () => Array.from({ length: 6 }, () => (rand() < 0.25 ? '#' : '.')).join(''));
      const s = { row: Math.floor(rand() * 6), col: Math.floor(rand() * 6) };
      const e = { row: Math.floor(rand() * 6), col: Math.floor(rand() * 6) };
      const a = bfs(g, s, e);
      const c = canonicalPath(g, s, e);
      assert.equal(c === null, a === null);
      if (!a || !c) continue;
      assert.equal(c.length, a.length);
      let at = s;
      for (const d of c)
        at = moveTarget(g, at, d) ?? assert.fail(`invalid move ${d} in ${c.join('')} on ${g.join('/')}`);
      assert.deepEqual(at, e);
      checked++;
    }
    assert.ok(checked > 100, `only ${checked} reachable cases`);
  });

  it('moveTarget refuses walls and borders', () => {
    assert.equal(moveTarget(grid, { row: 0, col: 0 }, 'R'), null);
    assert.equal(moveTarget(grid, { row: 0, col: 0 }, 'U'), null);
    assert.equal(moveTarget(grid, { row: 0, col: 0 }, 'L'), null);
    assert.deepEqual(moveTarget(grid, { row: 0, col: 0 }, 'D'), { row: 1, col: 0 });
    assert.equal(moveTarget(grid, { row: 4, col: 4 }, 'D'), null);
  });

  it('manhattan distance', () => {
    assert.equal(manhattan({ row: 0, col: 0 }, { row: 3, col: 4 }), 7);
  });

  it('renderGrid draws the walker, the goal and coordinates', () => {
    assert.equal(
      renderGrid(grid, { agent: { row: 2, col: 1 }, goal: { row: 0, col: 2 } }),
      ['   0 1 2 3 4', '0  . # G . .', '1  . # . # .', '2  . A . # .', '3  # # . . .', '4  . . . . .'].join('\n'),
    );
    assert.equal(
      renderGrid(['..', '..'], { agent: { row: 1, col: 1 }, goal: { row: 1, col: 1 }, coordinates: false }),
      '. .\n. *',
    );
  });

  it('renderGrid pads two-digit coordinates', () => {
    const big = Array.from({ length: 11 }, () => '.'.repeat(11));
    const lines = renderGrid(big).split('\n');
    assert.equal(lines[0], '     0  1  2  3  4  5  6  7  8  9 10');
    assert.equal(lines[11], '10   .  .  .  .  .  .  .  .  .  .  .');
  });
});
