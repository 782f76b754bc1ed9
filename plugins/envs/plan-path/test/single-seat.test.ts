/**
 * The single-agent variant (`seats: ['executor']`, the paper's "single agent" baseline): one seat plays alone, sees the
 * task and the CURRENT state with no proposal context, and its list is executed.
 */
import assert from 'node:assert/strict';
import type { Move } from '@troupe/kernel';
import { PlannerContribution } from '@troupe/role-planner';
import { SignalsRewardContribution } from '@troupe/reward-signals';
import { singleSeatConformance } from '@troupe/testing';
import type { Direction } from '../src/index.js';
import { PlanPathContribution, PlanPathEnvironment, makeInstance } from '../src/index.js';

const act = (action: Direction[]): Move<Direction[]> => ({
  kind: 'action',
  action,
  text: `#### [${action.join(',')}]`,
});

describe('plan-path single-agent variant (config.seats)', () => {
  it('the executor sees the task and the current state, never a proposal; the proposer seat does not exist', () => {
    const env = new PlanPathEnvironment({ size: 5, maxTurns: 2, seats: ['executor'] });
    const instance = makeInstance(
      ['.....', '.....', '.....', '.....', '.....'],
      { row: 0, col: 0 },
      { row: 0, col: 3 },
    );
    const s0 = env.reset(instance);
    const o0 = env.observe(s0, 'executor');
    assert.match(o0.task, /You play alone/);
    assert.doesNotMatch(o0.task, /proposer|proposal/);
    assert.deepEqual(o0.context, []);
    assert.equal((o0.data as { proposal: unknown }).proposal, null);
    assert.throws(
      () => env.observe(s0, 'proposer'),
      /unknown seat "proposer"; the seats are executor \(config\.seats is \["executor"\]/,
    );
    assert.throws(() => env.step(s0, 'proposer', act(['R'])), /unknown seat "proposer"/);
    assert.throws(() => env.oracle(s0, 'proposer'), /unknown seat "proposer"/);

    const r1 = env.step(s0, 'executor', act(['R'])); // -0.01 + (0.99·(-2) + 3) = 1.01
    assert.deepEqual(r1.signals, { proposal_reward: 0, executed_reward: 1.01, success: 0, malformed: 0 });
    assert.deepEqual(r1.done, { terminated: false, truncated: false });
    assert.equal(r1.state.seatIndex, 0);
    assert.equal(r1.state.history[0]!.proposal, null);
    const o1 = env.observe(r1.state, 'executor');
    assert.match(o1.state, /Walker A at \(0, 1\)/, 'the CURRENT position');
    assert.deepEqual(o1.context, [{ label: 'turn 1', text: 'Turn 1: executed [R]; walker (0, 0) -> (0, 1).' }]);

    const r2 = env.step(r1.state, 'executor', act(env.oracle(r1.state, 'executor')));
    assert.equal(r2.success, true);
    assert.deepEqual(r2.done, { terminated: true, truncated: false });
    assert.equal(r2.signals.success, 1);
    assert.equal(r2.signals.proposal_reward, 0);
    assert.ok(r2.signals.executed_reward! > 1);
  });

  it('compact observation: the turn block is "<executed> (r,c)->(r,c)" with no proposal', () => {
    const env = new PlanPathEnvironment({ size: 5, maxTurns: 3, seats: ['executor'], observation: 'compact' });
    const instance = makeInstance(
      ['.....', '.....', '.....', '.....', '.....'],
      { row: 0, col: 0 },
      { row: 2, col: 3 },
    );
    const r1 = env.step(env.reset(instance), 'executor', act(['U', 'D']));
    assert.deepEqual(env.observe(r1.state, 'executor').context, [
      { label: 'turn 1', text: '[U,D] (0,0)->(1,0) 1 invalid' },
    ]);
  });
});

// The checks every game's single-agent variant shares (@troupe/testing): seat lists, same instances as the team, no
// proposer and no proposal, truncation, and the oracle through the role solving every test instance in one turn.
const reward = new SignalsRewardContribution().create({
  team: 'executed_reward',
  seats: { executor: { local: 'executed_reward' } },
});
singleSeatConformance(new PlanPathContribution(), {
  config: { size: 6 },
  role: new PlannerContribution().create({ maxMoves: 24 }),
  reward,
});
