import assert from 'node:assert/strict';
import { createRng, SPLITS } from '@troupe/kernel';
import { CorridorContribution, ID, type CorridorEnvironment, type Moves } from '../src/environment.js';

const env = new CorridorContribution().create({}) as CorridorEnvironment;
const act = (action: Moves) => ({ kind: 'action' as const, action, text: action.join(',') });

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

  it('never mutates a state, and reaches the goal with the oracle', () => {
    for (let i = 0; i < 50; i++) {
      const instance = env.instance('test', i, 3);
      const start = env.reset(instance);
      const snapshot = JSON.stringify(start);
      const result = env.step(start, 'walker', act(env.oracle(start, 'walker')));
      assert.equal(JSON.stringify(start), snapshot);
      assert.equal(result.success, true);
      assert.equal(result.done.terminated, true);
      assert.equal(result.signals.distance, 0);
      assert.ok(result.signals.executed_reward! > 0);
    }
  });

  it('stays in place on a move into the wall and charges for it', () => {
    const state = env.reset({ length: 6, start: 0, goal: 5 });
    const result = env.step(state, 'walker', act(['L', 'U']));
    assert.equal(result.state.position, 0);
    assert.equal(result.signals.invalid_moves, 2);
    assert.ok(Math.abs(result.signals.executed_reward! - -0.2) < 1e-9);
  });

  it('truncates after maxTurns turns without success', () => {
    const short = new CorridorContribution().create({ maxTurns: 2 });
    let state = short.reset({ length: 8, start: 0, goal: 7 });
    let result = short.step(state, 'walker', act(['R']));
    assert.deepEqual(result.done, { terminated: false, truncated: false });
    state = result.state;
    result = short.step(state, 'walker', { kind: 'invalid', error: 'no moves', text: '???' });
    assert.deepEqual(result.done, { terminated: false, truncated: true });
    assert.equal(result.signals.parse_error, 1);
  });

  it('observes the CURRENT position', () => {
    const state = env.reset({ length: 6, start: 1, goal: 4 });
    const after = env.step(state, 'walker', act(['R'])).state;
    assert.match(env.observe(after, 'walker').state, /walker at cell 2/);
  });

  it('draws random actions from the seeded stream', () => {
    const state = env.reset(env.instance('train', 0, 0));
    assert.deepEqual(env.randomAction(state, 'walker', createRng(5)), env.randomAction(state, 'walker', createRng(5)));
  });
});
