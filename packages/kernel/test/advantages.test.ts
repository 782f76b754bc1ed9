import assert from 'node:assert/strict';
import {
  atGroupKey,
  computeAdvantages,
  computeTrajectoryAdvantages,
  groupAdvantages,
  groupByTrajectory,
  groupByTurnSeat,
  type GroupableSample,
} from '../src/algorithms/index.js';
import { collectEpisodes, planEpisodes, runEpisodes } from '../src/rollout/index.js';
import { counterEnv, counterReward, counterRole, listPolicy } from './helpers/counter.js';

const close = (a: readonly number[], b: readonly number[], tol = 1e-9): void => {
  assert.equal(a.length, b.length);
  a.forEach((x, i) => assert.ok(Math.abs(x - b[i]!) <= tol, `index ${i}: ${x} vs ${b[i]}`));
};

const s = (
  instanceUid: string,
  turn: number,
  seat: string,
  reward: number,
  episodeId?: string,
): GroupableSample & { episodeId?: string } => ({
  instanceUid,
  turn,
  seat,
  reward,
  ...(episodeId ? { episodeId } : {}),
});

describe('advantages: one group', () => {
  it('unbiased: (r − mean) / (std_{n−1} + 1e-6)', () => {
    // rewards 1, 2, 3, 6: mean 3, ss = 4 + 1 + 0 + 9 = 14, unbiased std = sqrt(14/3)
    const std = Math.sqrt(14 / 3);
    close(
      groupAdvantages([1, 2, 3, 6]),
      [-2, -1, 0, 3].map((d) => d / (std + 1e-6)),
    );
    close(
      groupAdvantages([1, 2, 3, 6], { std: 'unbiased' }),
      [-2, -1, 0, 3].map((d) => d / (std + 1e-6)),
    );
  });
  it('biased: divides by the n standard deviation', () => {
    const std = Math.sqrt(14 / 4);
    close(
      groupAdvantages([1, 2, 3, 6], { std: 'biased' }),
      [-2, -1, 0, 3].map((d) => d / (std + 1e-6)),
    );
  });
  it('dr-grpo: no std division', () => {
    close(groupAdvantages([1, 2, 3, 6], { std: 'dr-grpo' }), [-2, -1, 0, 3]);
  });
  it('a custom epsilon is used', () => {
    close(groupAdvantages([0, 2], { std: 'biased', epsilon: 1 }), [-0.5, 0.5]);
  });
  it('a group of one gets 0; equal rewards give exactly 0', () => {
    assert.deepEqual(groupAdvantages([5]), [0]);
    assert.deepEqual(groupAdvantages([0.1 + 0.2, 0.1 + 0.2, 0.1 + 0.2]), [0, 0, 0]);
    assert.deepEqual(groupAdvantages([]), []);
  });
  it('advantages of a normalised group have mean 0 and (biased) std ≈ 1', () => {
    const a = groupAdvantages([0.3, -1.2, 4, 2.5, 0], { std: 'biased' });
    const mean = a.reduce((x, y) => x + y, 0) / a.length;
    const std = Math.sqrt(a.reduce((x, y) => x + (y - mean) ** 2, 0) / a.length);
    assert.ok(Math.abs(mean) < 1e-12);
    assert.ok(Math.abs(std - 1) < 1e-5);
  });
  it('rejects non-finite rewards and unknown modes', () => {
    assert.throws(() => groupAdvantages([1, NaN]), /reward 1 of group group is NaN/);
    assert.throws(
      () => groupAdvantages([1, 2], { std: 'zscore' as never }),
      /std must be 'unbiased', 'biased' or 'dr-grpo'/,
    );
  });
});

describe('advantages: AT-GRPO grouping by (instance uid, turn, seat)', () => {
  const samples = [
    s('i1', 0, 'a', 1),
    s('i1', 0, 'a', 3), // group 1
    s('i1', 0, 'b', 5),
    s('i1', 0, 'b', 5), // group 2 (zero variance)
    s('i2', 0, 'a', 0),
    s('i2', 0, 'a', 10), // group 3: another instance, never merged with group 1
    s('i1', 1, 'a', 2), // group 4: another turn, never merged with group 1 (singleton)
    s('i1', 0, 'a', 2), // back to group 1 (interleaved order)
  ];
  it('never merges instances, seats or turns; keeps first-appearance order and input indices', () => {
    const groups = groupByTurnSeat(samples);
    assert.deepEqual(
      groups.map((g) => [g.instanceUid, g.turn, g.seat, g.indices]),
      [
        ['i1', 0, 'a', [0, 1, 7]],
        ['i1', 0, 'b', [2, 3]],
        ['i2', 0, 'a', [4, 5]],
        ['i1', 1, 'a', [6]],
      ],
    );
    assert.equal(groups[0]!.key, atGroupKey(samples[0]!));
  });
  it('keys are unambiguous even when names contain separators', () => {
    const g = groupByTurnSeat([s('x|1', 0, 'a', 1), s('x', 1, '|a', 2)]);
    assert.equal(g.length, 2);
  });
  it('computes per-group advantages aligned with the input and reports zero-variance groups', () => {
    const r = computeAdvantages(samples, { std: 'biased' });
    const g1 = groupAdvantages([1, 3, 2], { std: 'biased' });
    close(r.advantages, [g1[0]!, g1[1]!, 0, 0, ...groupAdvantages([0, 10], { std: 'biased' }), 0, g1[2]!]);
    assert.equal(r.groups.length, 4);
    assert.equal(r.zeroVarianceGroups, 2, 'the equal-reward group and the singleton');
    assert.equal(r.singletonGroups, 1);
    assert.equal(r.zeroVarianceFraction, 0.5);
    assert.deepEqual(
      r.groups.map((g) => g.size),
      [3, 2, 2, 1],
    );
    assert.equal(r.groups[0]!.mean, 2);
    assert.equal(computeAdvantages([]).zeroVarianceFraction, 0);
  });
});

describe('advantages: grpo-naive trajectory grouping', () => {
  const samples = [
    s('i1', 0, 'a', 1, 'e0'),
    s('i1', 0, 'b', 2, 'e0'),
    s('i1', 1, 'a', 3, 'e0'),
    s('i1', 1, 'b', 4, 'e0'),
    s('i1', 0, 'a', 0, 'e1'),
    s('i1', 0, 'b', 8, 'e1'), // e1 ended in turn 0
    s('i2', 0, 'a', 7, 'e2'),
    s('i2', 0, 'b', 7, 'e2'),
  ];
  it('one group per instance over seats, turns and episodes; last turn of each episode by default', () => {
    const groups = groupByTrajectory(samples);
    assert.deepEqual(
      groups.map((g) => [g.instanceUid, g.turn, g.seat, g.indices]),
      [
        ['i1', null, null, [2, 3, 4, 5]],
        ['i2', null, null, [6, 7]],
      ],
    );
    const all = groupByTrajectory(samples, { lastTurnOnly: false });
    assert.deepEqual(
      all.map((g) => g.indices),
      [
        [0, 1, 2, 3, 4, 5],
        [6, 7],
      ],
    );
  });
  it('normalises over the whole instance group; left-out samples get null', () => {
    const r = computeTrajectoryAdvantages(samples, { std: 'unbiased' });
    const g = groupAdvantages([3, 4, 0, 8]);
    assert.deepEqual(r.advantages.slice(0, 2), [null, null]);
    close(r.advantages.slice(2, 6) as number[], g);
    assert.deepEqual(r.advantages.slice(6), [0, 0]);
    assert.equal(r.zeroVarianceGroups, 1);
    assert.equal(r.zeroVarianceFraction, 0.5);
  });
  it('differs from AT-GRPO grouping: it mixes prompts of different seats and turns', () => {
    const at = groupByTurnSeat(samples);
    const naive = groupByTrajectory(samples, { lastTurnOnly: false });
    assert.ok(at.length > naive.length);
  });
});

describe('advantages: on a real rollout', () => {
  it('groups = (instance, turn, seat) of K samples sharing one prompt; advantages match the formula to 1e-6', async () => {
    const env = counterEnv();
    const policy = listPolicy('p', (r, call) =>
      Array.from({ length: r.n }, (_, c) => ['+0', '+1', '+2', '-1', 'x'][(c * 3 + call) % 5]!),
    );
    const K = 4;
    const contexts = planEpisodes({
      environment: env,
      split: 'train',
      count: 5,
      seed: 8,
      uidPrefix: 'step-0/',
      branches: K,
      reward: counterReward(),
      seats: env.seats.map((x) => ({
        name: x.name,
        role: counterRole(),
        policy,
        sampling: { temperature: 1, topP: 1, topK: 0, maxTokens: 4 },
      })),
    });
    const episodes = await collectEpisodes(runEpisodes(contexts, { concurrency: 2 }));
    const samples = episodes.flatMap((e) => e.steps);
    const result = computeAdvantages(samples);
    const groups = groupByTurnSeat(samples);
    assert.equal(
      groups.length,
      episodes.reduce((a, e) => a + e.groups.length, 0),
      'one advantage group per played (episode, turn, seat)',
    );
    for (const g of groups) {
      assert.equal(g.members.length, K);
      assert.ok(
        g.members.every((m) => JSON.stringify(m.prompt) === JSON.stringify(g.members[0]!.prompt)),
        'one prompt per group',
      );
      const rewards = g.members.map((m) => m.reward);
      const mean = rewards.reduce((a, b) => a + b, 0) / K;
      const std = Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / (K - 1));
      g.indices.forEach((idx, j) => {
        const want = std === 0 ? 0 : (rewards[j]! - mean) / (std + 1e-6);
        assert.ok(Math.abs(result.advantages[idx]! - want) <= 1e-6);
      });
      const selected = g.members.filter((m) => m.selected);
      assert.equal(selected.length, 1);
      assert.equal(selected[0]!.reward, Math.max(...rewards));
    }
    assert.ok(result.zeroVarianceFraction < 1, 'the rollout has groups with signal');
  });
});
