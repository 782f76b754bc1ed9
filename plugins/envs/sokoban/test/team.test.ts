/**
 * Sokoban with the planner role and the signals reward, the way the kernel plays it: observe → prompt → text →
 * parse → step → reward terms. Also runs the role and reward suites on real Sokoban observations and transitions.
 */
import assert from 'node:assert/strict';
import type { Move, Observation, SeatContext, Transition } from '@troupe/kernel';
import { createRng } from '@troupe/kernel';
import { PlannerContribution } from '@troupe/role-planner';
import { SignalsRewardContribution } from '@troupe/reward-signals';
import { rewardConformance, roleConformance } from '@troupe/testing';
import type { SokobanState } from '../src/index.js';
import { SOKOBAN_SIGNALS, SokobanEnvironment } from '../src/index.js';

const env = new SokobanEnvironment({});
const role = new PlannerContribution().create({ maxMoves: env.config.maxMoves });
const rewardConfig = { team: 'executed_reward', seats: { proposer: { local: 'proposal_reward' }, executor: { local: 'executed_reward' } } };
const reward = new SignalsRewardContribution().create(rewardConfig);
const seatOf = (seat: string): SeatContext => ({ seat, actionType: 'moves' });

/** Plays one episode; `speak` gives each seat's text. */
function play(index: number, speak: (state: SokobanState, seat: string) => string) {
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

describe('sokoban team (planner role + signals reward)', () => {
  it('the oracle, spoken through the planner format, solves every test instance in one turn', () => {
    for (let i = 0; i < 20; i++) {
      const { transitions, state } = play(i, (s, seat) => `Let me think.\n${role.render(env.oracle(s, seat), seatOf(seat))}`);
      assert.equal(state.success, true);
      assert.equal(transitions.length, 2);
      const [p, e] = transitions.map((t) => reward.terms(t));
      assert.equal(p!.local, e!.local);
      assert.equal(p!.team, 0);
      assert.equal(e!.team, e!.local);
      assert.ok(e!.local > 10, `executed reward ${e!.local}`);
    }
  });

  it('unparseable text costs -2 and never moves anything', () => {
    const { transitions, state } = play(0, () => 'I push the box, trust me.');
    assert.equal(transitions.length, 2 * env.maxTurns);
    assert.equal(state.done && !state.success, true);
    assert.deepEqual(state.placement, { player: state.instance.player, boxes: state.instance.boxes });
    for (const t of transitions) assert.equal(reward.terms(t).local, -2);
  });

  it('the oracle solves from states reached by random play (unless a box is stuck)', () => {
    const rng = createRng(4);
    let checked = 0;
    for (let i = 0; i < 30; i++) {
      let state = env.reset(env.instance('validation', i, 2));
      const random = env.randomAction(state, 'proposer', rng);
      state = env.step(state, 'proposer', { kind: 'action', action: random, text: '' }).state;
      const r = env.step(state, 'executor', { kind: 'action', action: random, text: '' });
      if (r.done.terminated || r.done.truncated) continue;
      const oracle = env.oracle(r.state, 'proposer');
      if (oracle.length === 0) continue; // unsolvable without a corner (e.g. a box against a goal-less wall)
      assert.deepEqual(env.oracle(r.state, 'executor'), oracle);
      const p = env.step(r.state, 'proposer', { kind: 'action', action: oracle, text: '' });
      assert.equal(env.step(p.state, 'executor', { kind: 'action', action: oracle, text: '' }).success, true);
      checked++;
    }
    assert.ok(checked >= 10, `only ${checked} states checked`);
  });

  it('every prompt shows the placement after the previous execution', () => {
    const rng = createRng(3);
    const { observations, transitions } = play(2, (s, seat) => role.render(env.randomAction(s, seat, rng), seatOf(seat)));
    for (let k = 2; k < observations.length; k += 2) {
      const executed = transitions[k - 1]!.result.state as SokobanState;
      assert.match(observations[k]!.state, new RegExp(`Player @ at \\(${executed.placement.player.row}, ${executed.placement.player.col}\\)`));
    }
  });
});

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
  config: rewardConfig,
  transitions: [...sample.transitions, ...oracle.transitions],
  checkContext: { environment: env.id, seats: env.seats.map((s) => s.name), signals: env.signals },
});
describe('sokoban signals', () => {
  it('are exactly the documented ones', () => {
    for (const t of [...sample.transitions, ...oracle.transitions]) assert.deepEqual(Object.keys(t.result.signals).sort(), [...SOKOBAN_SIGNALS].sort());
  });
});
