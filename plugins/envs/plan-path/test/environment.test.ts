import assert from 'node:assert/strict';
import type { Move } from '@troupe/kernel';
import { createRng } from '@troupe/kernel';
import type { Direction } from '../src/index.js';
import {
  PLAN_PATH_SIGNALS,
  PlanPathEnvironment,
  bfs,
  distancesTo,
  makeInstance,
  runMoves,
  samePos,
} from '../src/index.js';

const act = (action: Direction[]): Move<Direction[]> => ({
  kind: 'action',
  action,
  text: `#### [${action.join(',')}]`,
});
const bad = (error: string): Move<Direction[]> => ({ kind: 'invalid', error, text: '???' });
const close = (a: number, b: number): void => assert.ok(Math.abs(a - b) < 1e-9, `${a} ≉ ${b}`);

// Start (0,0), goal (0,2), shortest 2 (R,R). (0,1)... open row.
const open = makeInstance(['.....', '.....', '.....', '.....', '.....'], { row: 0, col: 0 }, { row: 0, col: 2 });
const walled = makeInstance(['.#...', '.#.#.', '...#.', '##...', '.....'], { row: 0, col: 0 }, { row: 0, col: 2 });

describe('plan-path rewards (hand-computed)', () => {
  it('a valid step towards the goal: -0.01 + (0.99*(-1) - (-2)) = 1.00', () => {
    close(runMoves(open, { row: 0, col: 0 }, 0, ['R'], 'shaped').reward, 1.0);
  });
  it('a valid step away from the goal: -0.01 + (0.99*(-3) - (-2)) = -0.98', () => {
    close(runMoves(open, { row: 0, col: 0 }, 0, ['D'], 'shaped').reward, -0.98);
  });
  it('an invalid step (border) stays: -0.1 + (0.99*(-2) - (-2)) = -0.08', () => {
    const r = runMoves(open, { row: 0, col: 0 }, 0, ['U'], 'shaped');
    close(r.reward, -0.08);
    assert.deepEqual(r.end, { row: 0, col: 0 });
    assert.equal(r.invalid, 1);
  });
  it('an invalid step (wall) stays', () => {
    const r = runMoves(walled, { row: 0, col: 0 }, 0, ['R'], 'shaped');
    assert.deepEqual(r.end, { row: 0, col: 0 });
    close(r.reward, -0.08);
  });
  it('reaching the goal optimally: 1.00 + (-0.01 + 1 + 1 + 0.5) = 3.49; later moves ignored', () => {
    const r = runMoves(open, { row: 0, col: 0 }, 0, ['R', 'R', 'D', 'D'], 'shaped');
    close(r.reward, 3.49);
    assert.equal(r.processed, 2);
    assert.equal(r.ignored, 2);
    assert.equal(r.optimal, true);
    assert.deepEqual(
      r.perMove.map((x) => Math.round(x * 100) / 100),
      [1, 2.49],
    );
  });
  it('reaching the goal with a detour gets no optimal bonus: -0.08 + 1.00 + 1.99 = 2.91', () => {
    const r = runMoves(open, { row: 0, col: 0 }, 0, ['U', 'R', 'R'], 'shaped');
    close(r.reward, 2.91);
    assert.equal(r.optimal, false);
  });
  it('the optimal bonus counts the moves of earlier turns', () => {
    close(runMoves(open, { row: 0, col: 1 }, 1, ['R'], 'shaped').reward, 2.49);
    close(runMoves(open, { row: 0, col: 1 }, 2, ['R'], 'shaped').reward, 1.99);
  });
  it('sparse: 1 on reaching the goal, else 0', () => {
    assert.equal(runMoves(open, { row: 0, col: 0 }, 0, ['R', 'R'], 'sparse').reward, 1);
    assert.equal(runMoves(open, { row: 0, col: 0 }, 0, ['R'], 'sparse').reward, 0);
    assert.equal(runMoves(open, { row: 0, col: 0 }, 0, [], 'sparse').reward, 0);
  });
  it('rewards are rounded to 1e-9, so equal rewards compare equal exactly', () => {
    assert.equal(runMoves(open, { row: 0, col: 0 }, 0, ['R', 'R'], 'shaped').reward, 3.49);
    const a = runMoves(open, { row: 2, col: 4 }, 0, ['U', 'L', 'U', 'L'], 'shaped').reward;
    const b = runMoves(open, { row: 2, col: 4 }, 0, ['L', 'U', 'L', 'U'], 'shaped').reward;
    assert.equal(a, b);
  });
  it("movesAfterGoal 'penalized': each move after the goal costs -0.1 and the list loses the optimal bonus", () => {
    // 3.49 exact; two extra moves: 3.49 - 0.5 - 2 * 0.1 = 2.79
    const r = runMoves(open, { row: 0, col: 0 }, 0, ['R', 'R', 'D', 'D'], 'shaped', 'penalized');
    close(r.reward, 2.79);
    assert.equal(r.optimal, false);
    assert.equal(r.ignored, 2);
    assert.ok(samePos(r.end, { row: 0, col: 2 }), 'the extra moves are still not made');
    assert.deepEqual(r.perMove.length, 4);
    close(runMoves(open, { row: 0, col: 0 }, 0, ['R', 'R'], 'shaped', 'penalized').reward, 3.49); // an exact list is unchanged
    // a detour (no bonus to lose) that overshoots pays for the extra move only: 2.91 - 0.1
    close(runMoves(open, { row: 0, col: 0 }, 0, ['U', 'R', 'R', 'R'], 'shaped', 'penalized').reward, 2.81);
    assert.equal(
      runMoves(open, { row: 0, col: 0 }, 0, ['R', 'R', 'D'], 'sparse', 'penalized').reward,
      1,
      'sparse counts success alone',
    );
  });
  it("movesAfterGoal 'penalized' reaches the executed and the proposal rewards, and the task text says so", () => {
    const env = new PlanPathEnvironment({ size: 5, movesAfterGoal: 'penalized' });
    const plain = new PlanPathEnvironment({ size: 5 });
    const inst = env.instance('train', 3, 7);
    const path = env.oracle(env.reset(inst), 'executor');
    const over: Direction[] = [...path, 'U', 'U'];
    for (const e of [env, plain]) {
      let s = e.reset(inst);
      const prop = e.step(s, 'proposer', act(over));
      s = prop.state;
      const exec = e.step(s, 'executor', act(over));
      assert.equal(exec.success, true, 'the overshooting list still reaches the goal');
      const exact = runMoves(inst, inst.start, 0, path, 'shaped').reward;
      const want = e === env ? exact - 0.5 - 0.2 : exact;
      close(prop.signals.proposal_reward as number, want);
      close(exec.signals.executed_reward as number, want);
    }
    assert.match(env.taskText('executor'), /after the goal is reached are not made and cost as much as invalid moves/);
    assert.match(plain.taskText('executor'), /after the goal is reached are ignored/);
    assert.throws(
      () => new PlanPathEnvironment({ movesAfterGoal: 'free' }),
      /environment\.config\.movesAfterGoal must be "ignored" or "penalized"/,
    );
  });
  describe("potential 'path': the shaping distance goes around the walls", () => {
    // The walker at (2,2), the goal at (4,2), a wall between them at (3,2): the way is R, D, D, L (4 moves).
    const behindWall = makeInstance(
      ['.....', '.....', '.....', '.##..', '.....'],
      { row: 2, col: 2 },
      { row: 4, col: 2 },
    );
    const at = { row: 2, col: 2 };
    it("manhattan (the paper's): bumping into the wall scores above the first move of the detour", () => {
      close(runMoves(behindWall, at, 0, ['D'], 'shaped').reward, -0.08); // -0.1 + (0.99*(-2) + 2)
      close(runMoves(behindWall, at, 0, ['R'], 'shaped').reward, -0.98); // -0.01 + (0.99*(-3) + 2)
    });
    it('path: the first move of the detour earns ~+1, bumping costs, and the detour is the best list', () => {
      close(runMoves(behindWall, at, 0, ['R'], 'shaped', 'ignored', 'path').reward, 1.02); // -0.01 + (0.99*(-3) + 4)
      close(runMoves(behindWall, at, 0, ['D'], 'shaped', 'ignored', 'path').reward, -0.06); // -0.1 + (0.99*(-4) + 4)
      close(runMoves(behindWall, at, 0, ['L'], 'shaped', 'ignored', 'path').reward, -0.96); // away: -0.01 + (0.99*(-5) + 4)
      const detour = runMoves(behindWall, at, 0, ['R', 'D', 'D', 'L'], 'shaped', 'ignored', 'path');
      assert.equal(detour.reachedGoal, true);
      assert.equal(detour.optimal, true);
      const perMove = detour.perMove.map((x) => Math.round(x * 100) / 100);
      assert.ok(
        perMove.slice(0, 3).every((r) => r > 0.9),
        `every move of a shortest path earns: ${perMove.join(' ')}`,
      );
      // with Manhattan, the same shortest path's first move is a loss
      assert.ok(runMoves(behindWall, at, 0, ['R', 'D', 'D', 'L'], 'shaped').perMove[0]! < -0.9);
    });
    it('on an open grid both potentials agree (the path distance is the Manhattan distance there)', () => {
      for (const moves of [['R'], ['D'], ['U'], ['R', 'R', 'D']] as Direction[][]) {
        close(
          runMoves(open, { row: 0, col: 0 }, 0, moves, 'shaped', 'ignored', 'path').reward,
          runMoves(open, { row: 0, col: 0 }, 0, moves, 'shaped').reward,
        );
      }
    });
    it('distancesTo: BFS distances to the goal, -1 for walls and cells cut off', () => {
      const d = distancesTo(['..#..', '..#..', '###..', '.....', '.....'], { row: 0, col: 0 });
      assert.deepEqual([...d.slice(0, 5)], [0, 1, -1, -1, -1]);
      assert.deepEqual([...d.slice(5, 10)], [1, 2, -1, -1, -1]);
      assert.equal(d[24], -1);
      const e = distancesTo(behindWall.grid, behindWall.goal);
      assert.equal(e[2 * 5 + 2], 4);
      assert.equal(e[2 * 5 + 1], 5);
    });
    it('the environment passes it to the executed and the proposal rewards; a bad value names the key', () => {
      const env = new PlanPathEnvironment({ size: 5, potential: 'path' });
      let s = env.reset(behindWall);
      const prop = env.step(s, 'proposer', act(['R']));
      close(prop.signals.proposal_reward as number, 1.02);
      s = prop.state;
      close(env.step(s, 'executor', act(['D'])).signals.executed_reward as number, -0.06);
      assert.throws(
        () => new PlanPathEnvironment({ potential: 'euclid' }),
        /environment\.config\.potential must be "manhattan" or "path"/,
      );
    });
  });
  it('an empty list earns 0 and does not move', () => {
    const r = runMoves(open, { row: 0, col: 0 }, 0, [], 'shaped');
    assert.equal(r.reward, 0);
    assert.deepEqual(r.end, { row: 0, col: 0 });
  });
});

describe('plan-path environment', () => {
  const env = new PlanPathEnvironment({ size: 5 });

  it('the proposal is simulated on a copy, never executed', () => {
    const s0 = env.reset(open);
    const r = env.step(s0, 'proposer', act(['R', 'R']));
    assert.deepEqual(r.state.position, { row: 0, col: 0 });
    assert.equal(r.state.movesUsed, 0);
    close(r.signals.proposal_reward!, 3.49);
    assert.equal(r.signals.executed_reward, 0);
    assert.equal(r.success, false);
    assert.deepEqual(r.done, { terminated: false, truncated: false });
    assert.deepEqual(r.state.proposal?.end, { row: 0, col: 2 });
  });

  it('the executor sees the proposal and its simulated end position', () => {
    const s1 = env.step(env.reset(walled), 'proposer', act(['D', 'D', 'R'])).state;
    const obs = env.observe(s1, 'executor');
    const proposal = obs.context.find((c) => c.label === 'proposal');
    assert.ok(proposal);
    assert.match(proposal.text, /Proposed moves: \[D,D,R\]/);
    assert.match(proposal.text, /ends at \(2, 1\), does not reach the goal/);
    assert.equal(
      env.observe(s1, 'proposer').context.length,
      0,
      'the proposer is not shown its own proposal as context',
    );
  });

  it('observations render the CURRENT position, not the start (the official bug)', () => {
    let s = env.reset(walled);
    s = env.step(s, 'proposer', act([])).state;
    s = env.step(s, 'executor', act(['D', 'D', 'R'])).state;
    const obs = env.observe(s, 'proposer');
    assert.match(obs.state, /Walker A at \(2, 1\)/);
    const rows = obs.state.split('\n');
    assert.equal(
      rows.find((l) => l.startsWith('2  ')),
      '2  . A . # .',
    );
    assert.equal(
      rows.find((l) => l.startsWith('0  ')),
      '0  . # G . .',
      'the start cell no longer shows the walker',
    );
    assert.match(obs.state, /Moves used so far: 3/);
    assert.match(obs.state, /Turn 2 of 4/);
    assert.match(obs.context[0]!.text, /executed \[D,D,R\]; walker \(0, 0\) -> \(2, 1\)/);
  });

  it('a malformed proposal costs malformedPenalty; a malformed executor answer costs it and does not move', () => {
    const s0 = env.reset(open);
    const r1 = env.step(s0, 'proposer', bad('nope'));
    assert.equal(r1.signals.proposal_reward, -2);
    assert.equal(r1.signals.malformed, 1);
    const r2 = env.step(r1.state, 'executor', bad('nope'));
    assert.equal(r2.signals.executed_reward, -2);
    assert.deepEqual(r2.state.position, { row: 0, col: 0 });
    assert.equal(r2.state.turn, 1);
    const custom = new PlanPathEnvironment({ size: 5, malformedPenalty: -0.5 });
    assert.equal(custom.step(custom.reset(open), 'proposer', bad('x')).signals.proposal_reward, -0.5);
  });

  it('actions that break the action type are treated as malformed', () => {
    const s0 = env.reset(open);
    const tooLong = new PlanPathEnvironment({ size: 5, maxMoves: 2 });
    assert.equal(tooLong.step(tooLong.reset(open), 'proposer', act(['R', 'R', 'R'])).signals.malformed, 1);
    const weird = { kind: 'action', action: ['X'], text: '' } as unknown as Move<Direction[]>;
    assert.equal(env.step(s0, 'proposer', weird).signals.malformed, 1);
    const notArray = { kind: 'action', action: 'RR', text: '' } as unknown as Move<Direction[]>;
    assert.equal(env.step(s0, 'proposer', notArray).signals.proposal_reward, -2);
  });

  it('every step returns every documented signal', () => {
    const s0 = env.reset(open);
    const r1 = env.step(s0, 'proposer', act(['R']));
    const r2 = env.step(r1.state, 'executor', act(['R']));
    for (const r of [r1, r2]) assert.deepEqual(Object.keys(r.signals).sort(), [...PLAN_PATH_SIGNALS].sort());
  });

  it('steps out of turn, on unknown seats or after the end throw clear errors', () => {
    const s0 = env.reset(open);
    assert.throws(() => env.step(s0, 'executor', act([])), /it is proposer's move in turn 0, not executor's/);
    assert.throws(() => env.step(s0, 'critic', act([])), /unknown seat "critic"; the seats are proposer, executor/);
    const s1 = env.step(env.step(s0, 'proposer', act([])).state, 'executor', act(['R', 'R'])).state;
    assert.equal(s1.done, true);
    assert.throws(() => env.step(s1, 'proposer', act([])), /finished episode/);
  });

  it('truncates after maxTurns turns', () => {
    const short = new PlanPathEnvironment({ size: 5, maxTurns: 1 });
    const s1 = short.step(short.reset(open), 'proposer', act([])).state;
    const r = short.step(s1, 'executor', act(['D']));
    assert.deepEqual(r.done, { terminated: false, truncated: true });
    assert.equal(r.state.done, true);
  });

  it('the oracle is a BFS shortest path from the current position', () => {
    let s = env.reset(walled);
    assert.deepEqual(env.oracle(s, 'proposer'), ['D', 'D', 'R', 'R', 'U', 'U']);
    s = env.step(s, 'proposer', act([])).state;
    s = env.step(s, 'executor', act(['D', 'D', 'R'])).state;
    assert.deepEqual(env.oracle(s, 'proposer'), ['R', 'U', 'U']);
  });

  it('describe returns grid, start, goal, shortest length and the oracle path', () => {
    const d = env.describe(walled);
    assert.deepEqual(d.grid, walled.grid);
    assert.deepEqual(d.start, { row: 0, col: 0 });
    assert.deepEqual(d.goal, { row: 0, col: 2 });
    assert.equal(d.shortest, 6);
    assert.deepEqual(d.oraclePath, ['D', 'D', 'R', 'R', 'U', 'U']);
  });

  it('compact observation: current position, goal and walls in a few characters; same task, same data', () => {
    const compact = new PlanPathEnvironment({ size: 5, observation: 'compact' });
    let s = compact.reset(walled);
    assert.equal(compact.observe(s, 'proposer').state, 'A=(0,0) G=(0,2) d=(0,+2)\nA#G..\n.#.#.\n...#.\n##...\n.....');
    assert.equal(compact.observe(s, 'proposer').task, env.observe(env.reset(walled), 'proposer').task);
    s = compact.step(s, 'proposer', act(['D', 'D', 'R', 'U'])).state;
    const proposal = compact.observe(s, 'executor').context.find((c) => c.label === 'proposal');
    assert.equal(proposal?.text, '[D,D,R,U] -> (2,1) miss 1 invalid');
    s = compact.step(s, 'executor', act(['D', 'D', 'R'])).state;
    const obs = compact.observe(s, 'proposer');
    assert.equal(
      obs.state,
      'A=(2,1) G=(0,2) d=(-2,+1)\n.#G..\n.#.#.\n.A.#.\n##...\n.....',
      'the walker is drawn where it is NOW',
    );
    assert.deepEqual(obs.context, [{ label: 'turn 1', text: '[D,D,R,U] [D,D,R] (0,0)->(2,1)' }]);
    assert.deepEqual(
      obs.data,
      env.observe(
        env.step(
          env.step(env.reset(walled), 'proposer', act(['D', 'D', 'R', 'U'])).state,
          'executor',
          act(['D', 'D', 'R']),
        ).state,
        'proposer',
      ).data,
    );
    const s2 = compact.step(compact.reset(open), 'proposer', act(['R', 'R'])).state;
    assert.equal(compact.observe(s2, 'executor').context[0]?.text, '[R,R] -> (0,2) goal');
    const s3 = compact.step(compact.reset(open), 'proposer', bad('no list')).state;
    assert.equal(compact.observe(s3, 'executor').context[0]?.text, 'none');
    const done = compact.step(s2, 'executor', act(['R', 'R'])).state;
    assert.match(
      compact.observe(done, 'proposer').state,
      /^A=\(0,2\) G=\(0,2\) d=\(0,0\)\n\.\.\*\.\./,
      'the walker on the goal is drawn *',
    );
    assert.equal(new PlanPathEnvironment({ size: 5 }).config.observation, 'full', 'full is the default');
  });

  it('runs notation: proposals and history are written as runs; full observations too; instances, dynamics and rewards unchanged', () => {
    const runs = new PlanPathEnvironment({ size: 5, observation: 'compact', notation: 'runs' });
    let s = runs.step(runs.reset(walled), 'proposer', act(['D', 'D', 'R', 'U'])).state;
    assert.equal(
      runs.observe(s, 'executor').context.find((c) => c.label === 'proposal')?.text,
      '[D2,R1,U1] -> (2,1) miss 1 invalid',
    );
    s = runs.step(s, 'executor', act(['D', 'D', 'R'])).state;
    assert.deepEqual(runs.observe(s, 'proposer').context, [
      { label: 'turn 1', text: '[D2,R1,U1] [D2,R1] (0,0)->(2,1)' },
    ]);
    const fullRuns = new PlanPathEnvironment({ size: 5, notation: 'runs' });
    const f = fullRuns.step(fullRuns.reset(walled), 'proposer', act(['D', 'D', 'R', 'U']));
    assert.match(fullRuns.observe(f.state, 'executor').context[0]!.text, /^Proposed moves: \[D2,R1,U1\]\n/);
    const plain = new PlanPathEnvironment({ size: 5, observation: 'compact' });
    assert.deepEqual(f.signals, plain.step(plain.reset(walled), 'proposer', act(['D', 'D', 'R', 'U'])).signals);
    assert.deepEqual(runs.instance('test', 3, 9), plain.instance('test', 3, 9));
    assert.equal(plain.config.notation, 'moves', 'moves is the default');
    assert.throws(
      () => new PlanPathEnvironment({ notation: 'rle' }),
      /environment\.config\.notation must be "moves" or "runs", got "rle"/,
    );
  });

  it('the observation variant does not change instances, dynamics or rewards', () => {
    const full = new PlanPathEnvironment({ size: 5, maxTurns: 2 });
    const compact = new PlanPathEnvironment({ size: 5, maxTurns: 2, observation: 'compact' });
    for (let i = 0; i < 5; i++) {
      const a = full.instance('train', i, 3);
      const b = compact.instance('train', i, 3);
      assert.deepEqual(b, a);
      const ra = full.step(full.reset(a), 'proposer', act(['R', 'D']));
      const rb = compact.step(compact.reset(b), 'proposer', act(['R', 'D']));
      assert.deepEqual(rb.signals, ra.signals);
      assert.deepEqual(compact.oracle(rb.state, 'executor'), full.oracle(ra.state, 'executor'));
    }
  });

  it('rejects bad configs with the key and the allowed values', () => {
    assert.throws(
      () => new PlanPathEnvironment({ observation: 'short' }),
      /environment\.config\.observation must be "full" or "compact", got "short"/,
    );
    assert.throws(
      () => new PlanPathEnvironment({ size: 11 }),
      /environment\.config\.size must be an integer from 5 to 10, got 11/,
    );
    assert.throws(() => new PlanPathEnvironment({ sise: 6 }), /environment\.config\.sise is not a known key/);
    assert.throws(() => new PlanPathEnvironment({ reward: 'dense' }), /config\.reward must be "shaped" or "sparse"/);
    assert.throws(
      () => new PlanPathEnvironment({ splitFractions: { train: 0.5, validation: 0.1, test: 0.1 } }),
      /must add up to 1/,
    );
  });

  it('makeInstance refuses bad hand-made instances', () => {
    assert.throws(() => makeInstance(['..', '..'], { row: 0, col: 0 }, { row: 0, col: 0 }), /must differ/);
    assert.throws(() => makeInstance(['.#', '#.'], { row: 0, col: 0 }, { row: 1, col: 1 }), /not reachable/);
    assert.throws(
      () => makeInstance(['..', '.#'], { row: 0, col: 0 }, { row: 1, col: 1 }),
      /goal \(1, 1\) is not a free cell/,
    );
  });
});

describe('plan-path generation', () => {
  for (const size of [5, 6, 10]) {
    it(`size ${size}: square grids, start != goal, both free, goal reachable, shortest path stored`, () => {
      const env = new PlanPathEnvironment({ size });
      let walls = 0;
      let cells = 0;
      for (let i = 0; i < 60; i++) {
        const inst = env.instance('train', i, 3);
        assert.equal(inst.grid.length, size);
        assert.ok(inst.grid.every((r) => r.length === size));
        assert.ok(!samePos(inst.start, inst.goal));
        const path = bfs(inst.grid, inst.start, inst.goal);
        assert.ok(path && path.length === inst.shortest && inst.shortest >= 1 && inst.shortest <= env.config.maxMoves);
        walls += inst.grid.join('').split('#').length - 1;
        cells += size * size;
      }
      const rate = walls / cells;
      assert.ok(rate > 0.15 && rate < 0.26, `wall rate ${rate}`);
    });
  }

  it('size 10 (paper setting): shortest paths span 1..17+ moves with a mean near 8', () => {
    const env = new PlanPathEnvironment({ size: 10 });
    const lengths = Array.from({ length: 200 }, (_, i) => env.instance('validation', i, 0).shortest);
    const mean = lengths.reduce((a, b) => a + b, 0) / lengths.length;
    assert.ok(
      Math.min(...lengths) <= 2 && Math.max(...lengths) >= 15,
      `range ${Math.min(...lengths)}..${Math.max(...lengths)}`,
    );
    assert.ok(mean > 5.5 && mean < 10, `mean ${mean}`);
  });

  it('the same (split, index, seed) gives the same instance; another seed another one', () => {
    const env = new PlanPathEnvironment({});
    assert.deepEqual(env.instance('test', 5, 1), new PlanPathEnvironment({}).instance('test', 5, 1));
    assert.notDeepEqual(env.instance('test', 5, 1), env.instance('test', 5, 2));
  });

  it('randomAction is seeded', () => {
    const env = new PlanPathEnvironment({});
    const s = env.reset(env.instance('train', 0, 0));
    assert.deepEqual(env.randomAction(s, 'proposer', createRng(4)), env.randomAction(s, 'proposer', createRng(4)));
  });
});
