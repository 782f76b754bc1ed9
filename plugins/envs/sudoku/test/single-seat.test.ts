/**
 * The single-agent variant (`seats: ['executor']`, the paper's "single agent" baseline): one seat plays alone, sees the
 * task and the CURRENT grid with no proposal context, and its fills are applied. Also the compact observation.
 */
import assert from 'node:assert/strict';
import type { Move } from '@troupe/kernel';
import { compileSchema } from '@troupe/kernel';
import { SignalsRewardContribution } from '@troupe/reward-signals';
import { singleSeatConformance } from '@troupe/testing';
import type { Fill } from '../src/index.js';
import { SudokuContribution, SudokuEnvironment, SudokuFillerContribution, makeInstance } from '../src/index.js';

const act = (action: Fill[]): Move<Fill[]> => ({ kind: 'action', action, text: '' });
const puzzle = makeInstance([
  [1, 0, 0, 0],
  [0, 4, 0, 0],
  [0, 0, 0, 3],
  [4, 0, 2, 0],
]);

describe('sudoku single-agent variant (config.seats)', () => {
  it('the config schema defaults to the team and rejects unknown seat names', () => {
    const validate = compileSchema(new SudokuContribution().configSchema);
    const filled: Record<string, unknown> = {};
    assert.equal(validate(filled), true);
    assert.deepEqual(filled.seats, ['proposer', 'executor']);
    assert.equal(filled.observation, 'full');
    assert.equal(validate({ seats: ['executor'], observation: 'compact' }), true);
    assert.equal(validate({ seats: ['filler'] }), false);
    assert.equal(validate({ observation: 'tiny' }), false);
  });

  it('the executor sees the task and the current grid, never a proposal; the proposer seat does not exist', () => {
    const env = new SudokuEnvironment({ maxTurns: 2, seats: ['executor'] });
    const s0 = env.reset(puzzle);
    const o0 = env.observe(s0, 'executor');
    assert.match(o0.task, /You play alone/);
    assert.doesNotMatch(o0.task, /proposer|proposal|team/);
    assert.deepEqual(o0.context, []);
    assert.throws(
      () => env.observe(s0, 'proposer'),
      /unknown seat "proposer"; the seats are executor \(config\.seats is \["executor"\]/,
    );
    assert.throws(() => env.step(s0, 'proposer', act([[1, 2, 2]])), /unknown seat "proposer"/);

    const r1 = env.step(s0, 'executor', act([[1, 2, 2]])); // one of 11 empty cells correct: 1/11
    assert.deepEqual(r1.signals, { proposal_reward: 0, executed_reward: 0.090909091, success: 0, malformed: 0 });
    assert.equal(r1.state.history[0]!.proposal, null);
    const o1 = env.observe(r1.state, 'executor');
    assert.match(o1.state, /Current grid:\n[^]*1 {3}1 2 \| \. \./, 'the CURRENT grid');
    assert.deepEqual(o1.context, [
      { label: 'turn 1', text: 'Turn 1: executed [[1,2,2]]; 6 cells filled, 0 conflicts.' },
    ]);
    const r2 = env.step(r1.state, 'executor', act(env.oracle(r1.state, 'executor') as Fill[]));
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
singleSeatConformance(new SudokuContribution(), { role: new SudokuFillerContribution().create({ size: 4 }), reward });

describe('sudoku compact observation', () => {
  it('state: the bare rows of the current grid; the task is unchanged', () => {
    const full = new SudokuEnvironment({});
    const env = new SudokuEnvironment({ observation: 'compact' });
    const s0 = env.reset(puzzle);
    assert.equal(env.observe(s0, 'proposer').state, '1...\n.4..\n...3\n4.2.');
    assert.equal(env.observe(s0, 'proposer').task, full.observe(full.reset(puzzle), 'proposer').task);
    const nine = new SudokuEnvironment({ size: 9, observation: 'compact' });
    const rows = nine.observe(nine.reset(nine.instance('test', 0, 0)), 'proposer').state.split('\n');
    assert.equal(rows.length, 9);
    for (const r of rows) assert.match(r, /^[1-9.]{9}$/);
  });

  it('the proposal block is "<fills> -> filled/cells c=conflicts" or "solved"; turn blocks add the executed fills', () => {
    const env = new SudokuEnvironment({ observation: 'compact', maxTurns: 2 });
    const p = env.step(
      env.reset(puzzle),
      'proposer',
      act([
        [1, 2, 2],
        [1, 3, 2],
      ]),
    ); // the 2 at (1,3) meets row 1's 2 and column 3's clue 2
    assert.deepEqual(env.observe(p.state, 'executor').context, [
      { label: 'proposal', text: '[[1,2,2],[1,3,2]] -> 7/16 c=2' },
    ]);
    const e = env.step(p.state, 'executor', act([[1, 2, 2]]));
    assert.equal(env.observe(e.state, 'proposer').state, '12..\n.4..\n...3\n4.2.');
    assert.deepEqual(env.observe(e.state, 'proposer').context, [
      { label: 'turn 1', text: '[[1,2,2],[1,3,2]] [[1,2,2]] -> 6/16 c=0' },
    ]);
    const solving = env.step(e.state, 'proposer', act(env.oracle(e.state, 'proposer') as Fill[]));
    assert.match(env.observe(solving.state, 'executor').context.at(-1)!.text, / -> solved$/);
  });

  it('the dynamics, rewards and data are the same as with the full observation', () => {
    const full = new SudokuEnvironment({});
    const compact = new SudokuEnvironment({ observation: 'compact' });
    const a = full.step(
      full.reset(puzzle),
      'proposer',
      act([
        [1, 2, 2],
        [2, 1, 1],
      ]),
    );
    const b = compact.step(
      compact.reset(puzzle),
      'proposer',
      act([
        [1, 2, 2],
        [2, 1, 1],
      ]),
    );
    assert.deepEqual(a.signals, b.signals);
    assert.deepEqual(full.observe(a.state, 'executor').data, compact.observe(b.state, 'executor').data);
  });
});
