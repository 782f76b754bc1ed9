import assert from 'node:assert/strict';
import { createRng, type Move } from '@troupe/kernel';
import type { Direction } from '../src/index.js';
import { playFixture } from '../src/testing.js';
import { LineGame, type LineState } from './line-game.js';

const act = (action: Direction[], details?: Record<string, unknown>): Move<Direction[]> => ({
  kind: 'action',
  action,
  text: '',
  ...(details ? { details } : {}),
});
const line = { size: 6, start: 1, goal: 4 };

describe('ProposerExecutorGame / MovesGame', () => {
  it('starts a state frozen at turn 0 with no proposal, and keys an instance by its content, whatever its key order', () => {
    const env = new LineGame();
    const s0 = env.reset(line);
    assert.deepEqual(
      { ...s0 },
      {
        instance: line,
        position: 1,
        movesUsed: 0,
        turn: 0,
        seatIndex: 0,
        proposal: null,
        history: [],
        success: false,
        done: false,
      },
    );
    assert.ok(Object.isFrozen(s0) && Object.isFrozen(s0.history));
    assert.equal(env.instanceKey({ goal: 4, start: 1, size: 6 }), env.instanceKey(line));
    assert.notEqual(env.instanceKey({ ...line, goal: 5 }), env.instanceKey(line));
  });

  it("simulates the proposal without executing it, then executes the executor's list", () => {
    const env = new LineGame();
    const s0 = env.reset(line);
    const p = env.step(s0, 'proposer', act(['R', 'R', 'R']));
    assert.equal(p.state.position, 1);
    assert.equal(p.state.seatIndex, 1);
    assert.deepEqual(p.state.proposal, { moves: ['R', 'R', 'R'], end: 4, invalid: 0, reward: 0.8, reachesGoal: true });
    assert.deepEqual(p.signals, { proposal_reward: 0.8, executed_reward: 0, success: 0, malformed: 0 });
    const e = env.step(p.state, 'executor', act(['R', 'R', 'R', 'L']));
    assert.deepEqual(e.state.history[0], {
      turn: 0,
      proposal: p.state.proposal,
      from: 1,
      executed: ['R', 'R', 'R', 'L'],
      to: 4,
      invalid: 0,
      ignored: 1,
      reward: 0.8,
    });
    assert.equal(e.state.movesUsed, 3, 'ignored moves are not used');
    assert.deepEqual(e.done, { terminated: true, truncated: false });
    assert.ok(Object.isFrozen(e.state.history[0]) && Object.isFrozen(e));
  });

  it('charges unparseable text the malformed penalty (0 when sparse) and truncates at maxTurns', () => {
    const env = new LineGame({ maxTurns: 1 });
    const bad: Move<Direction[]> = { kind: 'invalid', error: 'no list', text: '?' };
    const p = env.step(env.reset(line), 'proposer', bad);
    assert.deepEqual(p.state.proposal, {
      moves: null,
      error: 'no list',
      end: 1,
      invalid: 0,
      reward: -2,
      reachesGoal: false,
    });
    const e = env.step(p.state, 'executor', bad);
    assert.deepEqual(e.signals, { proposal_reward: 0, executed_reward: -2, success: 0, malformed: 1 });
    assert.deepEqual(e.done, { terminated: false, truncated: true });
    assert.equal(new LineGame({ reward: 'sparse' }).step(env.reset(line), 'proposer', bad).signals.proposal_reward, 0);
  });

  it('enforces turn order, known seats and unfinished episodes, naming the seats', () => {
    const env = new LineGame();
    const s0 = env.reset(line);
    assert.throws(() => env.step(s0, 'executor', act([])), /line-v0: it is proposer's move in turn 0, not executor's/);
    assert.throws(() => env.observe(s0, 'critic'), /line-v0: unknown seat "critic"; the seats are proposer, executor$/);
    const solo = new LineGame({ seats: ['executor'] });
    assert.throws(
      () => solo.oracle(s0, 'proposer'),
      /the seats are executor \(config\.seats is \["executor"\]: the single-agent variant\)/,
    );
    const done = solo.step(s0, 'executor', act(['R', 'R', 'R'])).state;
    assert.throws(() => solo.step(done, 'executor', act([])), /line-v0: step called on a finished episode/);
  });

  it("shows the executor the proposal, and the proposer's program in the full observation only", () => {
    const tool = { program: 'print("R R R")', stdout: 'R R R' };
    for (const observation of ['full', 'compact'] as const) {
      const env = new LineGame({ observation });
      const p = env.step(env.reset(line), 'proposer', act(['R', 'R', 'R'], tool));
      const labels = env.observe(p.state, 'executor').context.map((c) => c.label);
      assert.deepEqual(labels, observation === 'full' ? ['proposer program', 'proposal'] : ['proposal']);
      assert.deepEqual(env.observe(p.state, 'proposer').context, [], 'the proposer does not see its own proposal');
      assert.equal((env.observe(p.state, 'executor').data as { proposal: unknown }).proposal, p.state.proposal);
    }
  });

  it('words the task for the team and for the executor alone', () => {
    assert.match(
      new LineGame().taskText('proposer'),
      /^The team has at most 4 turns; each turn the proposer speaks first, then the executor\.\nYou are the proposer: propose a move list that reaches the goal\./,
    );
    assert.match(
      new LineGame({ seats: ['executor'] }).taskText('executor'),
      /^You have at most 4 turns\.\nYou play alone: give the move list that is executed\.\nAnswer with a list of at most 8 moves\.$/,
    );
  });

  it('draws 1 to min(maxMoves, 2·size) random moves from the seeded stream', () => {
    const env = new LineGame({ maxMoves: 3 });
    const s0 = env.reset(line);
    const lists = Array.from({ length: 50 }, (_, i) => env.randomAction(s0, 'executor', createRng(i)));
    assert.deepEqual(
      lists,
      Array.from({ length: 50 }, (_, i) => env.randomAction(s0, 'executor', createRng(i))),
    );
    assert.ok(lists.every((l) => l.length >= 1 && l.length <= 3) && new Set(lists.map((l) => l.length)).size === 3);
  });

  it('playFixture plays a scripted case into a transcript and stops when the episode ends', async () => {
    const played = (await playFixture(
      {
        create: (config) => new LineGame(config),
        make: (i) => ({ size: 6, start: i.start as number, goal: i.goal as number }),
        action: (step, env, state) => {
          const moves = step.moves === 'oracle' ? env.oracle!(state, step.seat as string) : (step.moves as Direction[]);
          return { action: moves, text: moves.join('') };
        },
        view: (state: LineState) => ({ position: state.position }),
      },
      {
        description: 'a bad proposal, then the oracle; the last step is never played',
        config: { maxTurns: 2 },
        instance: { start: 1, goal: 3 },
        steps: [
          { seat: 'proposer', invalid: 'no list' },
          { seat: 'executor', moves: 'oracle' },
          { seat: 'proposer', moves: ['L'] },
        ],
      },
    )) as { describe: unknown; transcript: Record<string, unknown>[]; final: string };
    assert.deepEqual(played.describe, { size: 6, start: 1, goal: 3 });
    assert.deepEqual(
      played.transcript.map((t) => [t.seat, t.turn, t.move, t.position]),
      [
        ['proposer', 0, { invalid: 'no list' }, 1],
        ['executor', 0, ['R', 'R'], 3],
      ],
    );
    assert.deepEqual(played.transcript[1]!.signals, {
      proposal_reward: 0,
      executed_reward: 0.9,
      success: 1,
      malformed: 0,
    });
    assert.equal(played.final, 'Turn 2 of 2. at 3, goal 3');
  });
});
