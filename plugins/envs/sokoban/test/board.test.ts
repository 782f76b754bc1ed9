/**
 * Hand-computed rewards, push rules, deadlocks and the BFS oracle on small hand-made rooms.
 */
import assert from 'node:assert/strict';
import type { Move } from '@troupe/kernel';
import type { Direction, Placement } from '../src/index.js';
import {
  SHAPED,
  SokobanEnvironment,
  applyMove,
  cornerDeadlocks,
  parseInstance,
  potential,
  pushDistances,
  renderBoard,
  runMoves,
  solve,
} from '../src/index.js';

const ROOM = parseInstance(['######', '#    #', '#@$ .#', '#    #', '#    #', '######']);
const start: Placement = { player: ROOM.player, boxes: ROOM.boxes };
const close = (a: number, b: number): void => assert.ok(Math.abs(a - b) < 1e-9, `${a} != ${b}`);

describe('sokoban rules', () => {
  it('parses a picture and renders it back with the classic symbols (floor as _ or space)', () => {
    assert.deepEqual(ROOM.goals, [{ row: 2, col: 4 }]);
    assert.deepEqual(ROOM.boxes, [{ row: 2, col: 2 }]);
    assert.deepEqual(ROOM.player, { row: 2, col: 1 });
    assert.equal(ROOM.shortest, 2);
    assert.equal(renderBoard(ROOM, start, { coordinates: false }), '######\n#____#\n#@$_.#\n#____#\n#____#\n######');
    assert.equal(
      renderBoard(ROOM, start, { coordinates: false, floor: ' ' }),
      '######\n#    #\n#@$ .#\n#    #\n#    #\n######',
    );
    const onGoal = renderBoard(
      ROOM,
      { player: { row: 2, col: 4 }, boxes: [{ row: 2, col: 3 }] },
      { coordinates: false },
    );
    assert.equal(onGoal.split('\n')[2], '#__$+#');
    const boxOnGoal = renderBoard(
      ROOM,
      { player: { row: 2, col: 3 }, boxes: [{ row: 2, col: 4 }] },
      { coordinates: false },
    );
    assert.equal(boxOnGoal.split('\n')[2], '#__@*#');
  });

  it('walks, pushes, and refuses walls and unpushable boxes', () => {
    const walk = applyMove(ROOM, start, 'U');
    assert.equal(walk.valid, true);
    assert.deepEqual(walk.placement.player, { row: 1, col: 1 });
    const wall = applyMove(ROOM, start, 'L');
    assert.equal(wall.valid, false);
    assert.equal(wall.placement, start);
    const push = applyMove(ROOM, start, 'R');
    assert.equal(push.pushed, true);
    assert.deepEqual(push.placement.boxes, [{ row: 2, col: 3 }]);
    // A box against the wall cannot be pushed into it.
    const stuck = applyMove(ROOM, { player: { row: 2, col: 3 }, boxes: [{ row: 2, col: 4 }] }, 'R');
    assert.equal(stuck.valid, false);
    // Two boxes in a row cannot be pushed.
    const two = applyMove(
      ROOM,
      {
        player: { row: 2, col: 1 },
        boxes: [
          { row: 2, col: 2 },
          { row: 2, col: 3 },
        ],
      },
      'R',
    );
    assert.equal(two.valid, false);
  });

  it('shaped rewards match hand computations', () => {
    // Walk U, box 2 from the goal: -0.01 + 0.1*(0.99*(-2) - (-2)) = -0.01 + 0.002.
    close(runMoves(ROOM, start, ['U'], 'shaped').reward, -0.008);
    // Invalid L into the wall: -0.05 + 0.002.
    close(runMoves(ROOM, start, ['L'], 'shaped').reward, -0.048);
    // Push R (distance 2 -> 1): -0.01 + 0.1*(0.99*(-1) + 2) = 0.091; second push onto the goal: -0.01 + 1 + 0.1*(0 + 1) + 10.
    const solved = runMoves(ROOM, start, ['R', 'R', 'U', 'D'], 'shaped');
    assert.deepEqual(solved.perMove, [0.091, 11.09]);
    close(solved.reward, 11.181);
    assert.equal(solved.solved, true);
    assert.equal(solved.ignored, 2);
    assert.equal(solved.processed, 2);
    // Pushing a box off a goal: -0.01 - 0.5 + 0.1*(0.99*(-1) - 0).
    // Two goals: φ goes from -(0 + 3) to -(1 + 3): -0.01 - 0.5 + 0.1*(0.99*(-4) + 3).
    const twoGoals = {
      grid: ROOM.grid,
      goals: [
        { row: 2, col: 4 },
        { row: 4, col: 4 },
      ],
    };
    const off = runMoves(
      twoGoals,
      {
        player: { row: 3, col: 4 },
        boxes: [
          { row: 2, col: 4 },
          { row: 4, col: 1 },
        ],
      },
      ['U'],
      'shaped',
    );
    close(off.reward, -0.606);
    // Pushing a box onto a goal from distance 1 (φ from -4 to -3): -0.01 + 1 + 0.1*(0.99*(-3) + 4).
    close(
      runMoves(
        twoGoals,
        {
          player: { row: 2, col: 2 },
          boxes: [
            { row: 2, col: 3 },
            { row: 4, col: 1 },
          ],
        },
        ['R'],
        'shaped',
      ).reward,
      1.093,
    );
    assert.equal(SHAPED.solved, 10);
  });

  it('sparse rewards are 1 on solving, else 0', () => {
    assert.equal(runMoves(ROOM, start, ['R', 'R'], 'sparse').reward, 1);
    assert.equal(runMoves(ROOM, start, ['R'], 'sparse').reward, 0);
    assert.equal(runMoves(ROOM, start, [], 'sparse').reward, 0);
  });

  it('φ is minus the sum of box-to-nearest-goal distances', () => {
    assert.equal(potential(ROOM, ROOM.boxes), -2);
    assert.equal(
      potential(
        {
          grid: ROOM.grid,
          goals: [
            { row: 1, col: 1 },
            { row: 4, col: 4 },
          ],
        },
        [
          { row: 2, col: 2 },
          { row: 3, col: 3 },
        ],
      ),
      -4,
    );
  });

  describe("potential 'push': the shaping distance counts pushes around the walls", () => {
    // Box (2,2), goal (2,4), a wall between them at (2,3). Row 1 runs along the top wall: a box there can never be
    // pushed down again (the player would have to stand in the wall), so it is dead. The way is D, R, R, U: 4 pushes.
    const walled = parseInstance(['######', '#    #', '#@$#.#', '#    #', '#    #', '######']);
    const box = walled.boxes;
    const fromAbove: Placement = { player: { row: 1, col: 2 }, boxes: box };
    const fromBelow: Placement = { player: { row: 3, col: 2 }, boxes: box };
    const fromLeft: Placement = { player: { row: 2, col: 1 }, boxes: box };
    it('pushDistances: fewest pushes to a goal, -1 on dead squares and walls', () => {
      const d = pushDistances(walled);
      const at = (r: number, c: number): number => d[r * 6 + c]!;
      assert.equal(at(2, 4), 0);
      assert.equal(at(3, 4), 1); // pushed up, the player at (4,4)
      assert.equal(at(3, 2), 3); // R, R, U
      assert.equal(at(2, 2), 4); // D first
      assert.equal(at(1, 2), -1); // along the top wall
      assert.equal(at(1, 1), -1); // a corner
      assert.equal(at(2, 3), -1); // the wall itself
      assert.equal(pushDistances(walled), d, 'computed once per board');
    });
    it("manhattan (the paper's): the useful push scores like the push onto a dead square, and below bumping the wall", () => {
      close(runMoves(walled, fromAbove, ['D'], 'shaped').reward, -0.107); // -0.01 + 0.1*(0.99*(-3) + 2)
      close(runMoves(walled, fromBelow, ['U'], 'shaped').reward, -0.107); // onto (1,2), dead: the same
      close(runMoves(walled, fromLeft, ['R'], 'shaped').reward, -0.048); // into the wall: -0.05 + 0.1*(0.99*(-2) + 2)
    });
    it('push: the useful push earns, bumping costs a little, the push onto a dead square costs the most', () => {
      close(runMoves(walled, fromAbove, ['D'], 'shaped', 'push').reward, 0.093); // -0.01 + 0.1*(0.99*(-3) + 4)
      close(runMoves(walled, fromLeft, ['R'], 'shaped', 'push').reward, -0.046); // -0.05 + 0.1*(0.99*(-4) + 4)
      close(runMoves(walled, fromBelow, ['U'], 'shaped', 'push').reward, -3.174); // dead = 36 cells: -0.01 + 0.1*(0.99*(-36) + 4)
      // Pushes of the oracle's solution all earn with push (with manhattan its first push is a loss).
      const sol = solve(walled, fromLeft, 100_000);
      assert.equal(sol.status, 'solved');
      const moves = (sol as { moves: Direction[] }).moves;
      const run = runMoves(walled, fromLeft, moves, 'shaped', 'push');
      assert.equal(run.solved, true);
      let at = fromLeft;
      let firstPush = -1;
      moves.forEach((dir, i) => {
        const o = applyMove(walled, at, dir);
        if (o.pushed) assert.ok(run.perMove[i]! > 0, `push ${i} (${dir}) earns: ${run.perMove.join(' ')}`);
        if (o.pushed && firstPush < 0) firstPush = i;
        at = o.placement;
      });
      assert.ok(runMoves(walled, fromLeft, moves, 'shaped').perMove[firstPush]! < 0);
    });
    it('the environment passes it to the executed and the proposal rewards; a bad value names the key', () => {
      const act = (action: Direction[]): Move<Direction[]> => ({
        kind: 'action',
        action,
        text: `#### [${action.join(',')}]`,
      });
      const env = new SokobanEnvironment({ potential: 'push' });
      const prop = env.step(env.reset(walled), 'proposer', act(['U', 'R', 'D']));
      close(prop.signals.proposal_reward as number, 0.081); // two walks, -0.01 + 0.1*(0.99*(-4) + 4) = -0.006 each, then the push D, 0.093
      close(env.step(prop.state, 'executor', act(['R'])).signals.executed_reward as number, -0.046);
      assert.throws(
        () => new SokobanEnvironment({ potential: 'path' }),
        /environment\.config\.potential must be "manhattan" or "push", got "path"/,
      );
    });
  });

  it('detects boxes in non-goal corners only', () => {
    assert.deepEqual(cornerDeadlocks(ROOM, [{ row: 1, col: 1 }]), [{ row: 1, col: 1 }]);
    assert.deepEqual(cornerDeadlocks(ROOM, [{ row: 1, col: 2 }]), []);
    assert.deepEqual(cornerDeadlocks({ grid: ROOM.grid, goals: [{ row: 1, col: 1 }] }, [{ row: 1, col: 1 }]), []);
  });

  it('the BFS oracle finds a shortest solution, reports unsolvable puzzles and stops at its cap', () => {
    const r = solve(ROOM, start, 1000);
    assert.equal(r.status, 'solved');
    assert.deepEqual((r as { moves: Direction[] }).moves, ['R', 'R']);
    // Box in a corner: no solution.
    assert.equal(
      solve(ROOM, { player: { row: 2, col: 2 }, boxes: [{ row: 1, col: 1 }] }, 100_000).status,
      'unsolvable',
    );
    // The player must walk around the box to push it down and right.
    const around = parseInstance(['######', '#@   #', '# $  #', '#    #', '#  . #', '######']);
    const sol = solve(around, { player: around.player, boxes: around.boxes }, 100_000);
    assert.equal(sol.status, 'solved');
    const moves = (sol as { moves: Direction[] }).moves;
    assert.equal(moves.length, around.shortest);
    assert.equal(runMoves(around, { player: around.player, boxes: around.boxes }, moves, 'sparse').reward, 1);
    assert.equal(solve(around, { player: around.player, boxes: around.boxes }, 2).status, 'cap');
  });

  it('refuses unsolvable or malformed pictures', () => {
    assert.throws(() => parseInstance(['#####', '#$  #', '#  .#', '# @ #', '#####']), /not solvable/);
    assert.throws(() => parseInstance(['#####', '# $ #', '#  .#', '#   #', '#####']), /exactly one player/);
    assert.throws(() => parseInstance(['####', '#@$#', '####']), /square/);
  });
});
