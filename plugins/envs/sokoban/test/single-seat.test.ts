/**
 * The single-agent variant (`seats: ['executor']`, the paper's "single agent" baseline): one seat plays alone, sees the
 * task and the CURRENT state with no proposal context, and its list is executed. Also the compact observation.
 */
import assert from 'node:assert/strict';
import type { Move } from '@troupe/kernel';
import { compileSchema } from '@troupe/kernel';
import { PlannerContribution } from '@troupe/role-planner';
import { SignalsRewardContribution } from '@troupe/reward-signals';
import { singleSeatConformance } from '@troupe/testing';
import type { Direction } from '../src/index.js';
import { SokobanContribution, SokobanEnvironment, parseInstance } from '../src/index.js';

const act = (action: Direction[]): Move<Direction[]> => ({
  kind: 'action',
  action,
  text: `#### [${action.join(',')}]`,
});
const room = parseInstance(['######', '#    #', '#@$ .#', '#    #', '#    #', '######']);

describe('sokoban single-agent variant (config.seats)', () => {
  it('the config schema defaults to the team and rejects unknown seat names', () => {
    const validate = compileSchema(new SokobanContribution().configSchema);
    const filled: Record<string, unknown> = {};
    assert.equal(validate(filled), true);
    assert.deepEqual(filled.seats, ['proposer', 'executor']);
    assert.equal(filled.observation, 'full');
    assert.equal(validate({ seats: ['executor'], observation: 'compact' }), true);
    assert.equal(validate({ seats: ['coder'] }), false);
    assert.equal(validate({ observation: 'tiny' }), false);
  });

  it('the executor sees the task and the current state, never a proposal; the proposer seat does not exist', () => {
    const env = new SokobanEnvironment({ maxTurns: 2, seats: ['executor'] });
    const s0 = env.reset(room);
    const o0 = env.observe(s0, 'executor');
    assert.match(o0.task, /You play alone/);
    assert.doesNotMatch(o0.task, /proposer|proposal/);
    assert.deepEqual(o0.context, []);
    assert.throws(
      () => env.observe(s0, 'proposer'),
      /unknown seat "proposer"; the seats are executor \(config\.seats is \["executor"\]/,
    );
    assert.throws(() => env.step(s0, 'proposer', act(['R'])), /unknown seat "proposer"/);

    const r1 = env.step(s0, 'executor', act(['R'])); // push: -0.01 + 0.1·(0.99·(-1) + 2) = 0.091
    assert.deepEqual(r1.signals, { proposal_reward: 0, executed_reward: 0.091, success: 0, malformed: 0 });
    assert.equal(r1.state.history[0]!.proposal, null);
    const o1 = env.observe(r1.state, 'executor');
    assert.match(o1.state, /Player @ at \(2, 2\)\. Boxes \$ at \(2, 3\)/, 'the CURRENT placement');
    assert.deepEqual(o1.context, [
      { label: 'turn 1', text: 'Turn 1: executed [R]; player (2, 1) -> (2, 2), boxes (2, 2) -> (2, 3).' },
    ]);
    const r2 = env.step(r1.state, 'executor', act(env.oracle(r1.state, 'executor')));
    assert.equal(r2.success, true);
    assert.deepEqual(r2.done, { terminated: true, truncated: false });
    assert.equal(r2.signals.proposal_reward, 0);
  });
});

// The checks every game's single-agent variant shares (@troupe/testing): seat lists, same instances as the team, no
// proposer and no proposal, truncation, and the oracle through the role solving every test instance in one turn.
const reward = new SignalsRewardContribution().create({
  team: 'executed_reward',
  seats: { executor: { local: 'executed_reward' } },
});
singleSeatConformance(new SokobanContribution(), {
  instances: 5,
  role: new PlannerContribution().create({ maxMoves: new SokobanEnvironment({}).config.maxMoves }),
  reward,
});

describe('sokoban compact observation', () => {
  it('state: one line of positions and the bare board rows, a few characters instead of a paragraph', () => {
    const full = new SokobanEnvironment({});
    const compact = new SokobanEnvironment({ observation: 'compact' });
    const s0 = compact.reset(room);
    assert.equal(
      compact.observe(s0, 'proposer').state,
      '@=(2,1) $=(2,2) .=(2,4)\n######\n#____#\n#@$_.#\n#____#\n#____#\n######',
    );
    assert.ok(
      compact.observe(s0, 'proposer').state.length * 3 < full.observe(full.reset(room), 'proposer').state.length,
    );
    assert.equal(
      compact.observe(s0, 'proposer').task,
      full.observe(full.reset(room), 'proposer').task,
      'the same task statement',
    );
  });

  it('marks a solved room and a box stuck in a corner; the proposal block says where the simulation ends', () => {
    const env = new SokobanEnvironment({ observation: 'compact', maxTurns: 2 });
    const stuckRoom = parseInstance(['######', '#    #', '#  $ #', '#  @ #', '#  . #', '######']);
    const p = env.step(env.reset(stuckRoom), 'proposer', act(['U', 'L', 'U', 'R']));
    assert.deepEqual(env.observe(p.state, 'executor').context, [
      { label: 'proposal', text: '[U,L,U,R] -> @(1,3) $(1,4) miss stuck(1,4)' },
    ]);
    const e = env.step(p.state, 'executor', act(['U', 'L', 'U', 'R']));
    assert.equal(e.done.terminated, true);
    assert.match(env.observe(e.state, 'proposer').state, /^@=\(1,3\) \$=\(1,4\) \.=\(4,3\) stuck\(1,4\)\n/);
    const solved = env.step(env.step(env.reset(room), 'proposer', act(['R', 'R'])).state, 'executor', act(['R', 'R']));
    assert.match(env.observe(solved.state, 'proposer').state, /^@=\(2,3\) \$=\(2,4\) \.=\(2,4\) solved\n/);
  });

  it('runs notation: the proposal and the history are written as runs; dynamics and rewards unchanged; bad values named', () => {
    const env = new SokobanEnvironment({ observation: 'compact', maxTurns: 2, notation: 'runs' });
    const plain = new SokobanEnvironment({ observation: 'compact', maxTurns: 2 });
    const p = env.step(env.reset(room), 'proposer', act(['U', 'R', 'R', 'D']));
    assert.match(env.observe(p.state, 'executor').context[0]!.text, /^\[U1,R2,D1\] -> /);
    assert.deepEqual(p.signals, plain.step(plain.reset(room), 'proposer', act(['U', 'R', 'R', 'D'])).signals);
    const e = env.step(p.state, 'executor', act(['R', 'R']));
    assert.match(env.observe(e.state, 'proposer').context.at(-1)!.text, /^\[U1,R2,D1\] \[R2\] /);
    assert.throws(
      () => new SokobanEnvironment({ notation: 'rle' }),
      /environment\.config\.notation must be "moves" or "runs", got "rle"/,
    );
  });

  it('the dynamics, rewards and data are the same as with the full observation', () => {
    const full = new SokobanEnvironment({});
    const compact = new SokobanEnvironment({ observation: 'compact' });
    const a = full.step(full.reset(room), 'proposer', act(['R', 'U', 'R']));
    const b = compact.step(compact.reset(room), 'proposer', act(['R', 'U', 'R']));
    assert.deepEqual(a.signals, b.signals);
    assert.deepEqual(a.state.proposal, b.state.proposal);
    assert.deepEqual(full.observe(a.state, 'executor').data, compact.observe(b.state, 'executor').data);
  });
});
