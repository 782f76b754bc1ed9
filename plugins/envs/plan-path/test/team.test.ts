/**
 * Plan-Path with the planner role and the signals reward, the way the kernel plays it (the game kit's team checks),
 * and the role and reward suites on real Plan-Path observations and transitions.
 */
import assert from 'node:assert/strict';
import type { SeatContext } from '@troupe/kernel';
import { createRng } from '@troupe/kernel';
import { playTeam, teamEpisodes } from '@troupe/game-kit/testing';
import { PlannerContribution } from '@troupe/role-planner';
import { SignalsRewardContribution } from '@troupe/reward-signals';
import { rewardConformance, roleConformance } from '@troupe/testing';
import type { PlanPathState } from '../src/index.js';
import { PlanPathEnvironment } from '../src/index.js';

const env = new PlanPathEnvironment({});
const role = new PlannerContribution().create({ maxMoves: env.config.maxMoves });
const rewardConfig = {
  team: 'executed_reward',
  seats: { proposer: { local: 'proposal_reward' }, executor: { local: 'executed_reward' } },
};
const seatOf = (seat: string): SeatContext => ({ seat, actionType: 'moves' });

const { sample, oracle } = teamEpisodes<PlanPathState>('plan-path team (planner role + signals reward)', {
  env,
  role,
  seatOf,
  reward: new SignalsRewardContribution().create(rewardConfig),
  // optimal play earns the goal bonus and the optimal-length bonus
  oracleReward: (local) => assert.ok(local > 1.5, `executed reward ${local}`),
  malformedReward: -2,
  nonsense: 'I refuse to answer in the format.',
  where: (s) => s.position,
});

describe('plan-path team observations', () => {
  it('observations track the walker: each prompt shows the position after the previous execution', () => {
    const rng = createRng(3);
    const { observations, transitions } = playTeam(env, role, seatOf, 2, (s, seat) =>
      role.render(env.randomAction(s, seat, rng), seatOf(seat)),
    );
    for (let k = 2; k < observations.length; k += 2) {
      const executed = transitions[k - 1]!.result.state as PlanPathState;
      assert.match(
        observations[k]!.state,
        new RegExp(`Walker A at \\(${executed.position.row}, ${executed.position.col}\\)`),
      );
    }
  });
});

// The suites, on real Plan-Path data.
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
