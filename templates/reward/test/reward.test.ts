import assert from 'node:assert/strict';
import type { Transition } from '@troupe/kernel';
import { ID, SignalTermsContribution, TERMS } from '../src/reward.js';

function transition(signals: Record<string, number>, success = false): Transition {
  return {
    seat: 'walker',
    turn: 0,
    before: {},
    move: { kind: 'action', action: ['R'], text: 'MOVES: R' },
    result: { state: {}, done: { terminated: success, truncated: false }, success, signals },
  };
}

describe(ID, () => {
  it('copies the named signals into the team and local terms', () => {
    const reward = new SignalTermsContribution().create({ team: 'executed', local: 'proposal' });
    assert.deepEqual(reward.terms(transition({ executed: 0.5, proposal: -2 })), { team: 0.5, local: -2, bonus: 0 });
  });

  it('pays the success bonus only on a solving step', () => {
    const reward = new SignalTermsContribution().create({ successBonus: 2 });
    assert.equal(reward.terms(transition({ executed_reward: 1 }, true)).bonus, 2);
    assert.equal(reward.terms(transition({ executed_reward: 1 }, false)).bonus, 0);
  });

  it('always reports every declared term, using `missing` for absent signals', () => {
    const reward = new SignalTermsContribution().create({ missing: -1 });
    const terms = reward.terms(transition({}));
    assert.deepEqual(Object.keys(terms).sort(), [...TERMS].sort());
    assert.deepEqual(terms, { team: -1, local: -1, bonus: 0 });
  });
});
