import assert from 'node:assert/strict';
import { oracleText, playOracle } from '../src/runtime/oracle-play.js';
import { createRng } from '../src/util/index.js';
import { counterEnv, counterRole } from './helpers/counter.js';

describe('runtime: oracle play through the turn loop', () => {
  it('plays every seat with the oracle until the episode ends, one step record per (turn, seat)', async () => {
    const env = counterEnv();
    const play = (await playOracle(env, { start: 0, target: 3 }, { split: 'test', instanceUid: 'test/0/x' }))!;
    assert.deepEqual(
      play.steps.map((s) => [s.turn, s.seat, s.action, s.completion, s.signals.progress, s.reward]),
      [
        [0, 'a', 2, '2', 2, 0],
        [0, 'b', 1, '1', 1, 0],
      ],
    );
    assert.ok(
      play.steps.every(
        (s) => s.policy === 'oracle' && s.split === 'test' && s.instanceUid === 'test/0/x' && s.prompt.length === 0,
      ),
    );
    assert.equal(play.end.success, true);
    assert.equal(play.end.turns, 1);
    assert.deepEqual(
      env.steps.map((s) => s.move.kind),
      ['action', 'action'],
      'the oracle actions were stepped as given',
    );

    const long = (await playOracle(counterEnv(), { start: 0, target: 100 }))!;
    assert.equal(long.steps.length, 4 * 2, 'truncated at the turn limit');
    assert.deepEqual(long.end.termination, { terminated: false, truncated: true });
    assert.equal(long.end.success, false);
  });

  it("with the team's roles, records each prompt and the role's rendering of the oracle action", async () => {
    const role = counterRole();
    const play = (await playOracle(
      counterEnv(),
      { start: 1, target: 6 },
      {
        seats: [
          { name: 'a', role, policy: 'pa' },
          { name: 'b', role, policy: 'pb' },
        ],
      },
    ))!;
    assert.deepEqual(
      play.steps.map((s) => [s.seat, s.policy, s.completion, oracleText(s)]),
      [
        ['a', 'pa', '+2', '+2'],
        ['b', 'pb', '+2', '+2'],
        ['a', 'pa', '+1', '+1'],
      ],
    );
    assert.match(
      play.steps[2]!.prompt[1]!.content,
      /value=5/,
      "the prompt is the role's, from the state the oracle reached",
    );
  });

  it('with noise, plays random actions from a seeded stream and keeps the oracle text as the target', async () => {
    const role = counterRole();
    const seats = [
      { name: 'a', role },
      { name: 'b', role },
    ];
    const noisy = async (probability: number | Record<string, number>) =>
      (await playOracle(counterEnv(), { start: 0, target: 100 }, { seats, noise: { probability, rng: createRng(5) } }))!
        .steps;
    const all = await noisy(0.5);
    assert.deepEqual(await noisy(0.5), all, 'the same stream gives the same play');
    const off = all.filter((s) => s.details !== undefined);
    assert.ok(off.length > 0 && off.length < all.length, 'some steps, not all, played a random action');
    for (const s of all) {
      // the counter's oracle wants +2 towards a far target; a random draw of +2 is the oracle's action and left unmarked
      assert.equal(oracleText(s), '+2');
      if (s.details !== undefined) assert.notEqual(s.completion, '+2');
      else assert.equal(s.completion, '+2');
    }
    const onlyB = await noisy({ b: 1 });
    assert.ok(
      onlyB.filter((s) => s.seat === 'a').every((s) => s.details === undefined),
      'a seat the map does not name plays the oracle',
    );
    assert.ok(
      onlyB.some((s) => s.seat === 'b' && s.details !== undefined),
      'the seat it names (probability 1) plays random actions',
    );
  });

  it('gives undefined for an environment without an oracle', async () => {
    const { oracle: _, ...env } = counterEnv();
    assert.equal(await playOracle(env, { start: 0, target: 3 }), undefined);
  });
});
