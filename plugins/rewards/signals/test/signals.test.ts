import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import type { Transition } from '@troupe/kernel';
import { moduleConformance, rewardConformance } from '@troupe/testing';
import { GAME_TEAM_SIGNALS, SignalsReward, SignalsRewardContribution, checkSignalNames } from '../src/index.js';

const signals = ['proposal_reward', 'executed_reward', 'success', 'malformed'];
function transition(seat: string, s: Record<string, number>, turn = 0): Transition {
  return {
    seat,
    turn,
    before: {},
    move: { kind: 'action', action: ['U'], text: '#### [U]' },
    result: { state: {}, done: { terminated: false, truncated: false }, success: false, signals: s },
  };
}
const proposerStep = transition('proposer', { proposal_reward: 0.03, executed_reward: 0, success: 0, malformed: 0 });
const executorStep = transition('executor', { proposal_reward: 0, executed_reward: 4.5, success: 1, malformed: 0 });
const paper = {
  team: 'executed_reward',
  seats: { proposer: { local: 'proposal_reward' }, executor: { local: 'executed_reward' } },
};

describe('signals-v0', () => {
  it("the paper's game-team mapping: proposer local = proposal_reward, executor local = team = executed_reward", () => {
    const r = new SignalsReward(paper);
    assert.deepEqual(r.terms(proposerStep), { team: 0, local: 0.03 });
    assert.deepEqual(r.terms(executorStep), { team: 4.5, local: 4.5 });
    assert.deepEqual(new SignalsReward({ ...GAME_TEAM_SIGNALS }).terms(executorStep), { team: 4.5, local: 4.5 });
  });

  it('a seat without a local signal uses config.local, else 0', () => {
    assert.deepEqual(new SignalsReward({ team: 'success' }).terms(executorStep), { team: 1, local: 0 });
    assert.deepEqual(
      new SignalsReward({
        team: 'success',
        local: 'executed_reward',
        seats: { proposer: { local: 'proposal_reward' } },
      }).terms(executorStep),
      { team: 1, local: 4.5 },
    );
  });

  it('a missing signal is a clear error naming it, the config key and the available signals', () => {
    const r = new SignalsReward({ team: 'executed_reward', seats: { proposer: { local: 'proposal' } } });
    assert.throws(() => r.terms(proposerStep), {
      message:
        'signals-v0: signal "proposal" (rewards.seats.proposer.config.local) is not produced by the environment at seat proposer, turn 0; available signals: proposal_reward, executed_reward, success, malformed',
    });
    assert.throws(
      () => new SignalsReward({ team: 'reward' }).terms(executorStep),
      /signal "reward" \(rewards\.config\.team\)/,
    );
  });

  it('a non-finite signal is an error', () => {
    const r = new SignalsReward({ team: 'executed_reward' });
    assert.throws(
      () => r.terms(transition('executor', { executed_reward: Number.NaN })),
      /signal "executed_reward" \(rewards\.config\.team\) is NaN/,
    );
  });

  it('bad configs name the key', () => {
    assert.throws(() => new SignalsReward({}), /rewards\.config\.team must name a signal/);
    assert.throws(() => new SignalsReward({ team: 'x', tema: 'y' }), /rewards\.config\.tema is not a known key/);
    assert.throws(
      () => new SignalsReward({ team: 'x', seats: { proposer: { locl: 'y' } } }),
      /rewards\.seats\.proposer\.config\.locl is not a known key/,
    );
    assert.throws(
      () => new SignalsReward({ team: 'x', seats: { proposer: { local: 3 } } }),
      /rewards\.seats\.proposer\.config\.local must name a signal, got 3/,
    );
  });

  it('checkSignalNames lists names an environment does not produce', () => {
    assert.deepEqual(checkSignalNames(new SignalsReward(paper).config, signals), []);
    assert.deepEqual(
      checkSignalNames(new SignalsReward({ team: 'win', seats: { executor: { local: 'executed' } } }).config, signals),
      [
        'rewards.config.team: signal "win" is not produced by the environment; available signals: proposal_reward, executed_reward, success, malformed',
        'rewards.seats.executor.config.local: signal "executed" is not produced by the environment; did you mean "executed_reward"? available signals: proposal_reward, executed_reward, success, malformed',
      ],
    );
  });

  it('check() reports undeclared signals and unknown seats at config paths', () => {
    const c = new SignalsRewardContribution();
    const context = { environment: 'plan-path-v0', seats: ['proposer', 'executor'], signals };
    assert.deepEqual(c.check(paper, context), []);
    assert.deepEqual(
      c.check({ team: 'executed_reward', seats: { proposer: { local: 'proposal' }, critic: {} } }, context),
      [
        {
          path: ['seats', 'proposer', 'local'],
          message: 'signal "proposal" is not produced by plan-path-v0',
          hint: 'did you mean "proposal_reward"? available signals: proposal_reward, executed_reward, success, malformed',
        },
        {
          path: ['seats', 'critic'],
          message: 'plan-path-v0 has no seat "critic"',
          hint: 'its seats are: proposer, executor',
        },
      ],
    );
    // An environment that declares no signals cannot be checked for names.
    assert.deepEqual(c.check({ team: 'anything' }, { environment: 'x-v0', seats: [] }), []);
    assert.equal(
      c.check({}, context)[0]!.message,
      'signals-v0: rewards.config.team must name a signal (e.g. "executed_reward"), got undefined',
    );
  });
});

rewardConformance(new SignalsRewardContribution(), {
  config: paper,
  transitions: [proposerStep, executorStep, transition('observer', { executed_reward: -2 })],
  checkContext: { environment: 'plan-path-v0', seats: ['proposer', 'executor'], signals },
});
moduleConformance(fileURLToPath(new URL('..', import.meta.url)));
