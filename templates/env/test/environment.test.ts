import assert from 'node:assert/strict';
import { createRng, SPLITS } from '@troupe/kernel';
import type { Direction } from '@troupe/game-kit';
import { CorridorContribution, ID, type CorridorEnvironment } from '../src/environment.js';

const env = new CorridorContribution().create({}) as CorridorEnvironment;
const act = (action: Direction[]) => ({ kind: 'action' as const, action, text: action.join(',') });

describe(ID, () => {
  it('generates the same instance for the same (split, index, seed)', () => {
    assert.deepEqual(env.instance('train', 3, 7), env.instance('train', 3, 7));
  });

  it('keeps splits disjoint by content', () => {
    const keys = new Map<string, string>();
    for (const split of SPLITS) {
      for (let i = 0; i < 200; i++) {
        const key = env.instanceKey(env.instance(split, i, 1));
        const other = keys.get(key);
        assert.ok(other === undefined || other === split, `instance ${key} is in ${other} and ${split}`);
        keys.set(key, split);
      }
    }
  });

  it("simulates the proposal, executes the executor's list, and the oracle reaches the goal", () => {
    for (let i = 0; i < 50; i++) {
      const start = env.reset(env.instance('test', i, 3));
      const snapshot = JSON.stringify(start);
      const proposed = env.step(start, 'proposer', act(env.oracle(start, 'proposer')));
      assert.equal(JSON.stringify(start), snapshot, 'step never mutates a state');
      assert.equal(proposed.state.position, start.position, 'a proposal is only simulated');
      assert.equal(proposed.state.proposal?.reachesGoal, true);
      const executed = env.step(proposed.state, 'executor', act(env.oracle(proposed.state, 'executor')));
      assert.equal(executed.success, true);
      assert.equal(executed.done.terminated, true);
      assert.ok(executed.signals.executed_reward! > 0);
    }
  });

  it('stays in place on a move into the wall and charges for it', () => {
    const solo = new CorridorContribution().create({ seats: ['executor'] }) as CorridorEnvironment;
    const result = solo.step(solo.reset({ size: 6, start: 0, goal: 5 }), 'executor', act(['L', 'U']));
    assert.equal(result.state.position, 0);
    assert.equal(result.info?.invalid, 2);
    assert.ok(Math.abs(result.signals.executed_reward! - -0.2) < 1e-9);
  });

  it('truncates after maxTurns turns without success, and charges unparseable text', () => {
    const short = new CorridorContribution().create({ maxTurns: 1, seats: ['executor'] });
    const result = short.step(short.reset({ size: 8, start: 0, goal: 7 }), 'executor', {
      kind: 'invalid',
      error: 'no moves',
      text: '???',
    });
    assert.deepEqual(result.done, { terminated: false, truncated: true });
    assert.equal(result.signals.malformed, 1);
    assert.equal(result.signals.executed_reward, -1);
  });

  it('shows the executor the proposal and the CURRENT position', () => {
    const s0 = env.reset({ size: 6, start: 1, goal: 4 });
    const s1 = env.step(s0, 'proposer', act(['R', 'R'])).state;
    assert.match(env.observe(s1, 'executor').context.at(-1)!.text, /^\[R,R\] -> cell 3, misses the goal/);
    const s2 = env.step(s1, 'executor', act(['R'])).state;
    assert.match(env.observe(s2, 'proposer').state, /walker at cell 2/);
  });

  it('rejects a bad config with the key and the allowed values', () => {
    assert.throws(
      () => new CorridorContribution().create({ minLength: 9, maxLength: 7 }),
      /environment\.config\.minLength \(9\) must not exceed maxLength \(7\)/,
    );
    assert.throws(
      () => new CorridorContribution().create({ reward: 'dense' }),
      /environment\.config\.reward must be "shaped" or "sparse"/,
    );
  });

  it('draws random actions from the seeded stream', () => {
    const state = env.reset(env.instance('train', 0, 0));
    assert.deepEqual(
      env.randomAction(state, 'proposer', createRng(5)),
      env.randomAction(state, 'proposer', createRng(5)),
    );
  });
});
