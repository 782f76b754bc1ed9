/**
 * The sudoku-filler role on its own (parsing, rendering, grammar, prompts) and with the environment and the signals
 * reward, the way the kernel plays it (the game kit's team checks).
 */
import assert from 'node:assert/strict';
import type { SeatContext } from '@troupe/kernel';
import { createRng } from '@troupe/kernel';
import { playTeam, teamEpisodes } from '@troupe/game-kit/testing';
import { SignalsRewardContribution } from '@troupe/reward-signals';
import { rewardConformance, roleConformance } from '@troupe/testing';
import type { SudokuState } from '../src/index.js';
import {
  SUDOKU_FILLER_SYSTEM_PROMPT,
  SUDOKU_FILLS,
  SudokuEnvironment,
  SudokuFillerContribution,
  fillsPattern,
  parseFills,
  renderGrid,
} from '../src/index.js';

const env = new SudokuEnvironment({});
const role = new SudokuFillerContribution().create({ size: 4 });
const rewardConfig = {
  team: 'executed_reward',
  seats: { proposer: { local: 'proposal_reward' }, executor: { local: 'executed_reward' } },
};
const reward = new SignalsRewardContribution().create(rewardConfig);
const seatOf = (seat: string): SeatContext => ({ seat, actionType: SUDOKU_FILLS });

describe('sudoku-filler parsing', () => {
  it('reads the last #### line, with spaces, after any reasoning', () => {
    assert.deepEqual(parseFills('Row 1 needs a 2.\n#### [[1,2,2]]'), { ok: true, fills: [[1, 2, 2]] });
    assert.deepEqual(parseFills('#### [[9,9,9]]\nno wait\n####  [ [1, 2, 3] , [4,4,1] ]  '), {
      ok: true,
      fills: [
        [1, 2, 3],
        [4, 4, 1],
      ],
    });
    assert.deepEqual(parseFills('#### []'), { ok: true, fills: [] });
    // Out-of-range numbers parse: the environment rejects them as invalid (-1), not unparseable (-2).
    assert.deepEqual(parseFills('#### [[5,1,0]]'), { ok: true, fills: [[5, 1, 0]] });
  });

  it('rejects what is not a list of integer triples, with the expected format in the error', () => {
    for (const text of [
      '',
      'the answer is 3',
      '#### [1,2,3]',
      '#### [[1,2]]',
      '#### [[1,2,3],]',
      '#### [[1,2,3]',
      '#### [[1,2,-3]]',
      '#### [[1.5,2,3]]',
      '#### [[1,2,3]] extra',
      '#### [[1,2,3][4,4,1]]',
      '#### [[1234,1,1]]',
    ]) {
      const r = parseFills(text);
      assert.equal(r.ok, false, text);
      assert.match((r as { error: string }).error, /####/);
    }
  });

  it('the grammar accepts canonical answers of at most size² fills with digits 1..size', () => {
    const re = new RegExp(`^(?:${fillsPattern(4)})$`);
    assert.ok(re.test('#### [[1,2,3],[4,4,1]]'));
    assert.ok(re.test('#### []'));
    assert.ok(!re.test('#### [[5,1,1]]'));
    assert.ok(!re.test(`#### [${Array.from({ length: 17 }, () => '[1,1,1]').join(',')}]`));
    assert.ok(new RegExp(`^(?:${fillsPattern(9)})$`).test('#### [[9,9,9]]'));
  });

  it('prompts never show a complete grid: the example is two fills, and the solution is never rendered', () => {
    const example = parseFills(
      SUDOKU_FILLER_SYSTEM_PROMPT.split('\n')
        .find((l) => l.includes('for example'))!
        .replace(/^.*"(#### [^"]*)".*$/, '$1'),
    );
    assert.deepEqual(example, {
      ok: true,
      fills: [
        [1, 2, 3],
        [4, 1, 2],
      ],
    });
    for (let i = 0; i < 20; i++) {
      const inst = env.instance('test', i, 0);
      const s = env.reset(inst);
      for (const seat of ['proposer', 'executor']) {
        const text = role
          .prompt(env.observe(s, seat), seatOf(seat))
          .map((m) => m.content)
          .join('\n');
        assert.ok(!text.includes(renderGrid(inst.solution)), 'the prompt shows the solution');
      }
    }
  });
});

const { sample, oracle } = teamEpisodes<SudokuState>('sudoku team (filler role + signals reward)', {
  env,
  role,
  seatOf,
  reward,
  oracleReward: (local) => assert.equal(local, 3), // progress 1 + the solved bonus 2
  malformedReward: -2,
  nonsense: 'I think the grid is solved already.',
  where: (s) => s.grid,
});

describe('sudoku team observations', () => {
  it('the executor sees the proposal and its simulated grid, and every prompt shows the current grid', () => {
    const rng = createRng(5);
    const { observations, transitions } = playTeam(env, role, seatOf, 3, (s, seat) =>
      role.render(env.randomAction(s, seat, rng), seatOf(seat)),
    );
    for (let k = 0; k < observations.length; k++) {
      const obs = observations[k]!;
      const before = transitions[k]!.before as SudokuState;
      assert.ok(obs.state.includes(`Current grid:\n${renderGrid(before.grid)}`));
      if (transitions[k]!.seat === 'executor')
        assert.ok(obs.context.some((c) => c.label === 'proposal' && c.text.includes('Proposed fills:')));
    }
  });
});

roleConformance(new SudokuFillerContribution(), {
  config: { size: 4 },
  observations: [...sample.observations, ...oracle.observations],
  actions: [...oracle.transitions, ...sample.transitions].flatMap((t) =>
    t.move.kind === 'action' ? [t.move.action] : [],
  ),
  seats: env.seats.map((s) => seatOf(s.name)),
  actionSchema: env.actionTypes[0]!.schema,
});
rewardConformance(new SignalsRewardContribution(), {
  config: rewardConfig,
  transitions: [...sample.transitions, ...oracle.transitions],
  checkContext: { environment: env.id, seats: env.seats.map((s) => s.name), signals: env.signals },
});
