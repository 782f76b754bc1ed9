/**
 * Plan-Path with the planner role and the signals reward, the way the kernel plays it: observe → prompt → text →
 * parse → step → reward terms. Also runs the role and reward suites on real Plan-Path observations and transitions.
 */
import assert from 'node:assert/strict';
import type { Move, Observation, SeatContext, Transition } from '@troupe/kernel';
import { createRng } from '@troupe/kernel';
import { PlannerContribution } from '@troupe/role-planner';
import { SignalsRewardContribution } from '@troupe/reward-signals';
import { rewardConformance, roleConformance } from '@troupe/testing';
import type { PlanPathState } from '../src/index.js';
import { PLAN_PATH_SIGNALS, PlanPathEnvironment } from '../src/index.js';

const env = new PlanPathEnvironment({});
const role = new PlannerContribution().create({ maxMoves: env.config.maxMoves });
const reward = new SignalsRewardContribution().create({
  team: 'executed_reward', seats: { proposer: { local: 'proposal_reward' }, executor: { local: 'executed_reward' } },
});
const seatOf = (seat: string): SeatContext => ({ seat, actionType: 'moves' });

/** Plays one episode; `speak` gives each seat's text. Returns observations, transitions and the outcome. */
function play(index: number, speak: (state: PlanPathState, seat: string) => string) {
  let state = env.reset(env.instance('test', index, 11));
  const observations: Observation[] = [];
  const transitions: Transition[] = [];
  for (let turn = 0; turn < env.maxTurns; turn++) {
    for (const { name } of env.seats) {
      const obs = env.observe(state, name);
      observations.push(obs);
      const messages = role.prompt(obs, seatOf(name));
      assert.ok(messages.some((m) => m.content.includes(obs.state)), 'the prompt shows the current state');
      const move = role.parse(speak(state, name), seatOf(name)) as Move;
      const result = env.step(state, name, move as Move<never>);
      transitions.push({ seat: name, turn, before: state, move, result });
      state = result.state;
      if (result.done.terminated || result.done.truncated) return { observations, transitions, state };
    }
  }
  return { observations, transitions, state };
}

describe('plan-path team (planner role + signals reward)', () => {
  it('the oracle, spoken through the planner format, solves every test instance in one turn', () => {
    for (let i = 0; i < 20; i++) {
      const { transitions, state } = play(i, (s, seat) => `Thinking...\n${role.render(env.oracle(s, seat), seatOf(seat))}`);
      assert.equal(state.success, true);
      assert.equal(transitions.length, 2);
      const [p, e] = transitions.map((t) => reward.terms(t));
      // Optimal play earns the same simulated and executed reward, and the optimal-length bonus.
      assert.equal(p!.local, e!.local);
      assert.equal(p!.team, 0);
      assert.equal(e!.team, e!.local);
      assert.ok(e!.local > 1.5, `executed reward ${e!.local}`);
    }
  });

  it('unparseable text costs the malformed penalty and never moves the walker', () => {
    const { transitions, state } = play(0, () => 'I refuse to answer in the format.');
    assert.equal(transitions.length, 2 * env.maxTurns);
    assert.equal(state.done && !state.success, true);
    assert.deepEqual(state.position, state.instance.start);
    for (const t of transitions) assert.equal(reward.terms(t).local, -2);
  });

  it('observations track the walker: each prompt shows the position after the previous execution', () => {
    const rng = createRng(3);
    const { observations, transitions } = play(2, (s, seat) => role.render(env.randomAction(s, seat, rng), seatOf(seat)));
    for (let k = 2; k < observations.length; k += 2) {
      const executed = transitions[k - 1]!.result.state as PlanPathState;
      assert.match(observations[k]!.state, new RegExp(`Walker A at \\(${executed.position.row}, ${executed.position.col}\\)`));
    }
  });
});

// The suites, on real Plan-Path data.
const sampleRng = createRng(9);
const sample = play(1, (s, seat) => role.render(env.randomAction(s, seat, sampleRng), seatOf(seat)));
const oracle = play(1, (s, seat) => role.render(env.oracle(s, seat), seatOf(seat)));
roleConformance(new PlannerContribution(), {
  config: { maxMoves: env.config.maxMoves },
  observations: [...sample.observations, ...oracle.observations],
  actions: oracle.transitions.map((t) => (t.move as { action: unknown }).action),
  seats: env.seats.map((s) => seatOf(s.name)),
  actionSchema: env.actionTypes[0]!.schema,
});
rewardConformance(new SignalsRewardContribution(), {
  config: { team: 'executed_reward', seats: { proposer: { local: 'proposal_reward' }, executor: { local: 'executed_reward' } } },
  transitions: [...sample.transitions, ...oracle.transitions],
  checkContext: { environment: env.id, seats: env.seats.map((s) => s.name), signals: env.signals },
});
describe('plan-path signals', () => {
  it('are exactly the documented ones', () => {
    for (const t of [...sample.transitions, ...oracle.transitions]) assert.deepEqual(Object.keys(t.result.signals).sort(), [...PLAN_PATH_SIGNALS].sort());
  });
});
