import assert from 'node:assert/strict';
import { bfs, manhattan, moveTarget, renderGrid } from '../src/index.js';

const grid = [
  '.#...',
  '.#.#.',
  '...#.',
  '##...',
  '.....',
];

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
    assert.equal(renderGrid(grid, { agent: { row: 2, col: 1 }, goal: { row: 0, col: 2 } }), [
      '   0 1 2 3 4',
      '0  . # G . .',
      '1  . # . # .',
      '2  . A . # .',
      '3  # # . . .',
      '4  . . . . .',
    ].join('\n'));
    assert.equal(renderGrid(['..', '..'], { agent: { row: 1, col: 1 }, goal: { row: 1, col: 1 }, coordinates: false }), '. .\n. *');
  });

  it('renderGrid pads two-digit coordinates', () => {
    const big = Array.from({ length: 11 }, () => '.'.repeat(11));
    const lines = renderGrid(big).split('\n');
    assert.equal(lines[0], '     0  1  2  3  4  5  6  7  8  9 10');
    assert.equal(lines[11], '10   .  .  .  .  .  .  .  .  .  .  .');
  });
});
