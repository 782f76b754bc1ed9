/**
 * The single-agent variant (`seats: ['executor']`, the paper's "single agent" baseline): one seat plays alone, sees the
 * task and the CURRENT state with no proposal context, and its list is executed.
 */
import assert from 'node:assert/strict';
import type { Move, SeatContext, Transition } from '@troupe/kernel';
import { compileSchema } from '@troupe/kernel';
import { PlannerContribution } from '@troupe/role-planner';
import { SignalsRewardContribution } from '@troupe/reward-signals';
import type { Direction, PlanPathState } from '../src/index.js';
import { PlanPathContribution, PlanPathEnvironment, makeInstance } from '../src/index.js';

const act = (action: Direction[]): Move<Direction[]> => ({ kind: 'action', action, text: `#### [${action.join(',')}]` });
const seatOf = (seat: string): SeatContext => ({ seat, actionType: 'moves' });

describe('plan-path single-agent variant (config.seats)', () => {
  it('defaults to the two-seat team; ["executor"] leaves one seat', () => {
    assert.deepEqual(new PlanPathEnvironment({}).seats.map((s) => s.name), ['proposer', 'executor']);
    assert.deepEqual(new PlanPathEnvironment({ seats: ['proposer', 'executor'] }).seats.map((s) => s.name), ['proposer', 'executor']);
    const single = new PlanPathEnvironment({ seats: ['executor'] });
    assert.deepEqual(single.seats.map((s) => s.name), ['executor']);
    assert.match(single.seats[0]!.description, /alone/);
    assert.deepEqual(single.config.seats, ['executor']);
  });

  it('any other seat list is a config error naming config.seats and the allowed lists', () => {
    for (const seats of [['proposer'], ['executor', 'proposer'], [], 'executor', ['executor', 'executor'], ['solver']]) {
      assert.throws(() => new PlanPathEnvironment({ seats }), (e: Error) => {
        assert.match(e.message, /^plan-path-v0: environment\.config\.seats must be \["proposer", "executor"\] \(the team\) or \["executor"\] \(single agent\), got /);
        assert.ok(e.message.endsWith(JSON.stringify(seats)), e.message);
        return true;
      });
    }
  });

  it('the config schema defaults to the team and rejects unknown seat names (the constructor rejects other lists)', () => {
    const validate = compileSchema(new PlanPathContribution().configSchema);
    const filled: Record<string, unknown> = {};
    assert.equal(validate(filled), true);
    assert.deepEqual(filled.seats, ['proposer', 'executor']);
    assert.equal(validate({ seats: ['executor'] }), true);
    assert.equal(validate({ seats: ['solver'] }), false);
    assert.equal(validate({ seats: [] }), false);
    assert.equal(validate({ seats: ['executor', 'executor'] }), false);
  });

  it('plays the same instances as the team (the baseline is measured on the same tasks)', () => {
    const team = new PlanPathEnvironment({ size: 6 });
    const single = new PlanPathEnvironment({ size: 6, seats: ['executor'] });
    for (let i = 0; i < 10; i++) assert.equal(single.instanceKey(single.instance('test', i, 3)), team.instanceKey(team.instance('test', i, 3)));
  });

  it('the executor sees the task and the current state, never a proposal; the proposer seat does not exist', () => {
    const env = new PlanPathEnvironment({ size: 5, maxTurns: 2, seats: ['executor'] });
    const instance = makeInstance(['.....', '.....', '.....', '.....', '.....'], { row: 0, col: 0 }, { row: 0, col: 3 });
    const s0 = env.reset(instance);
    const o0 = env.observe(s0, 'executor');
    assert.match(o0.task, /You play alone/);
    assert.doesNotMatch(o0.task, /proposer|proposal/);
    assert.deepEqual(o0.context, []);
    assert.equal((o0.data as { proposal: unknown }).proposal, null);
    assert.throws(() => env.observe(s0, 'proposer'), /unknown seat "proposer"; the seats are executor \(config\.seats is \["executor"\]/);
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
    const instance = makeInstance(['.....', '.....', '.....', '.....', '.....'], { row: 0, col: 0 }, { row: 2, col: 3 });
    const r1 = env.step(env.reset(instance), 'executor', act(['U', 'D']));
    assert.deepEqual(env.observe(r1.state, 'executor').context, [{ label: 'turn 1', text: '[U,D] (0,0)->(1,0) 1 invalid' }]);
  });

  it('the episode is truncated after maxTurns executor turns', () => {
    const env = new PlanPathEnvironment({ size: 5, maxTurns: 2, seats: ['executor'] });
    let state: PlanPathState = env.reset(env.instance('test', 0, 1));
    let turns = 0;
    while (!state.done) {
      const r = env.step(state, 'executor', { kind: 'invalid', error: 'no', text: 'no' });
      assert.equal(r.signals.executed_reward, -2);
      state = r.state;
      turns++;
    }
    assert.equal(turns, 2);
    assert.equal(state.success, false);
  });

  it('with the planner role and the signals reward, the oracle solves every test instance in one executor turn', () => {
    const env = new PlanPathEnvironment({ seats: ['executor'] });
    const role = new PlannerContribution().create({ maxMoves: env.config.maxMoves });
    const reward = new SignalsRewardContribution().create({ team: 'executed_reward', seats: { executor: { local: 'executed_reward' } } });
    for (let i = 0; i < 20; i++) {
      const state = env.reset(env.instance('test', i, 11));
      const obs = env.observe(state, 'executor');
      assert.ok(role.prompt(obs, seatOf('executor')).some((m) => m.content.includes(obs.state)));
      const move = role.parse(role.render(env.oracle(state, 'executor'), seatOf('executor')), seatOf('executor')) as Move;
      const result = env.step(state, 'executor', move as Move<never>);
      assert.equal(result.success, true, `test instance ${i}`);
      const transition: Transition = { seat: 'executor', turn: 0, before: state, move, result };
      const terms = reward.terms(transition);
      assert.equal(terms.team, terms.local);
      assert.ok(terms.local > 1.5, `executed reward ${terms.local}`);
    }
  });
});
