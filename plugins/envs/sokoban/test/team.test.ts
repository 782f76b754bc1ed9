/**
 * Sokoban with the planner role and the signals reward, the way the kernel plays it (the game kit's team checks), and
 * the role and reward suites on real Sokoban observations and transitions.
 */
import assert from 'node:assert/strict';
import type { SeatContext } from '@troupe/kernel';
import { createRng } from '@troupe/kernel';
import { playTeam, teamEpisodes } from '@troupe/game-kit/testing';
import { PlannerContribution } from '@troupe/role-planner';
import { SignalsRewardContribution } from '@troupe/reward-signals';
import { rewardConformance, roleConformance } from '@troupe/testing';
import type { SokobanState } from '../src/index.js';
import { SokobanEnvironment } from '../src/index.js';

const env = new SokobanEnvironment({});
const role = new PlannerContribution().create({ maxMoves: env.config.maxMoves });
const rewardConfig = {
  team: 'executed_reward',
  seats: { proposer: { local: 'proposal_reward' }, executor: { local: 'executed_reward' } },
};
const seatOf = (seat: string): SeatContext => ({ seat, actionType: 'moves' });

const { sample, oracle } = teamEpisodes<SokobanState>('sokoban team (planner role + signals reward)', {
  env,
  role,
  seatOf,
  reward: new SignalsRewardContribution().create(rewardConfig),
  oracleReward: (local) => assert.ok(local > 10, `executed reward ${local}`),
  malformedReward: -2,
  nonsense: 'I push the box, trust me.',
  where: (s) => s.placement,
});

describe('sokoban team play', () => {
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
    const { observations, transitions } = playTeam(env, role, seatOf, 2, (s, seat) =>
      role.render(env.randomAction(s, seat, rng), seatOf(seat)),
    );
    for (let k = 2; k < observations.length; k += 2) {
      const executed = transitions[k - 1]!.result.state as SokobanState;
      assert.match(
        observations[k]!.state,
        new RegExp(`Player @ at \\(${executed.placement.player.row}, ${executed.placement.player.col}\\)`),
      );
    }
  });
});

// The suites, on real Sokoban data.
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
