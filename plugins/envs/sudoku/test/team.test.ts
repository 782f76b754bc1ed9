/**
 * The sudoku-filler role on its own (parsing, rendering, grammar, prompts) and with the environment and the signals
 * reward, the way the kernel plays it: observe → prompt → text → parse → step → reward terms.
 */
import assert from 'node:assert/strict';
import type { Move, Observation, SeatContext, Transition } from '@troupe/kernel';
import { createRng } from '@troupe/kernel';
import { SignalsRewardContribution } from '@troupe/reward-signals';
import { rewardConformance, roleConformance } from '@troupe/testing';
import type { SudokuState } from '../src/index.js';
import {
  SUDOKU_FILLER_SYSTEM_PROMPT, SUDOKU_FILLS, SUDOKU_SIGNALS, SudokuEnvironment, SudokuFillerContribution, fillsPattern, parseFills,
  renderGrid,
} from '../src/index.js';

const env = new SudokuEnvironment({});
const role = new SudokuFillerContribution().create({ size: 4 });
const rewardConfig = { team: 'executed_reward', seats: { proposer: { local: 'proposal_reward' }, executor: { local: 'executed_reward' } } };
const reward = new SignalsRewardContribution().create(rewardConfig);
const seatOf = (seat: string): SeatContext => ({ seat, actionType: SUDOKU_FILLS });

function play(e: SudokuEnvironment, index: number, speak: (state: SudokuState, seat: string) => string) {
  let state = e.reset(e.instance('test', index, 11));
  const observations: Observation[] = [];
  const transitions: Transition[] = [];
  for (let turn = 0; turn < e.maxTurns; turn++) {
    for (const { name } of e.seats) {
      const obs = e.observe(state, name);
      observations.push(obs);
      const move = role.parse(speak(state, name), seatOf(name)) as Move;
      const result = e.step(state, name, move as Move<never>);
      transitions.push({ seat: name, turn, before: state, move, result });
      state = result.state;
      if (result.done.terminated || result.done.truncated) return { observations, transitions, state };
    }
  }
  return { observations, transitions, state };
}

describe('sudoku-filler parsing', () => {
  it('reads the last #### line, with spaces, after any reasoning', () => {
    assert.deepEqual(parseFills('Row 1 needs a 2.\n#### [[1,2,2]]'), { ok: true, fills: [[1, 2, 2]] });
    assert.deepEqual(parseFills('#### [[9,9,9]]\nno wait\n####  [ [1, 2, 3] , [4,4,1] ]  '), { ok: true, fills: [[1, 2, 3], [4, 4, 1]] });
    assert.deepEqual(parseFills('#### []'), { ok: true, fills: [] });
    // Out-of-range numbers parse: the environment rejects them as invalid (-1), not unparseable (-2).
    assert.deepEqual(parseFills('#### [[5,1,0]]'), { ok: true, fills: [[5, 1, 0]] });
  });

  it('rejects what is not a list of integer triples, with the expected format in the error', () => {
    for (const text of ['', 'the answer is 3', '#### [1,2,3]', '#### [[1,2]]', '#### [[1,2,3],]', '#### [[1,2,3]', '#### [[1,2,-3]]', '#### [[1.5,2,3]]', '#### [[1,2,3]] extra', '#### [[1,2,3][4,4,1]]', '#### [[1234,1,1]]']) {
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
    const example = parseFills(SUDOKU_FILLER_SYSTEM_PROMPT.split('\n').find((l) => l.includes('for example'))!.replace(/^.*"(#### [^"]*)".*$/, '$1'));
    assert.deepEqual(example, { ok: true, fills: [[1, 2, 3], [4, 1, 2]] });
    for (let i = 0; i < 20; i++) {
      const inst = env.instance('test', i, 0);
      const s = env.reset(inst);
      for (const seat of ['proposer', 'executor']) {
        const text = role.prompt(env.observe(s, seat), seatOf(seat)).map((m) => m.content).join('\n');
        assert.ok(!text.includes(renderGrid(inst.solution)), 'the prompt shows the solution');
      }
    }
  });
});

describe('sudoku team (filler role + signals reward)', () => {
  it('the oracle, spoken through the filler format, solves every test instance in one turn', () => {
    for (let i = 0; i < 20; i++) {
      const { transitions, state } = play(env, i, (s, seat) => `Thinking.\n${role.render(env.oracle(s, seat), seatOf(seat))}`);
      assert.equal(state.success, true);
      assert.equal(transitions.length, 2);
      const [p, e] = transitions.map((t) => reward.terms(t));
      assert.equal(p!.local, 3);
      assert.equal(p!.team, 0);
      assert.equal(e!.team, 3);
      assert.equal(e!.local, 3);
    }
  });

  it('unparseable text costs -2 and changes nothing', () => {
    const { transitions, state } = play(env, 0, () => 'I think the grid is solved already.');
    assert.equal(transitions.length, 2 * env.maxTurns);
    assert.equal(state.done && !state.success, true);
    assert.deepEqual(state.grid, state.instance.puzzle);
    for (const t of transitions) assert.equal(reward.terms(t).local, -2);
  });

  it('the executor sees the proposal and its simulated grid, and every prompt shows the current grid', () => {
    const rng = createRng(5);
    const { observations, transitions } = play(env, 3, (s, seat) => role.render(env.randomAction(s, seat, rng), seatOf(seat)));
    for (let k = 0; k < observations.length; k++) {
      const obs = observations[k]!;
      const before = transitions[k]!.before as SudokuState;
      assert.ok(obs.state.includes(`Current grid:\n${renderGrid(before.grid)}`));
      if (transitions[k]!.seat === 'executor') assert.ok(obs.context.some((c) => c.label === 'proposal' && c.text.includes('Proposed fills:')));
    }
  });
});

const sampleRng = createRng(9);
const sample = play(env, 1, (s, seat) => role.render(env.randomAction(s, seat, sampleRng), seatOf(seat)));
const oracle = play(env, 1, (s, seat) => role.render(env.oracle(s, seat), seatOf(seat)));
roleConformance(new SudokuFillerContribution(), {
  config: { size: 4 },
  observations: [...sample.observations, ...oracle.observations],
  actions: [...oracle.transitions, ...sample.transitions].flatMap((t) => (t.move.kind === 'action' ? [t.move.action] : [])),
  seats: env.seats.map((s) => seatOf(s.name)),
  actionSchema: env.actionTypes[0]!.schema,
});
rewardConformance(new SignalsRewardContribution(), {
  config: rewardConfig,
  transitions: [...sample.transitions, ...oracle.transitions],
  checkContext: { environment: env.id, seats: env.seats.map((s) => s.name), signals: env.signals },
});
describe('sudoku signals', () => {
  it('are exactly the documented ones', () => {
    for (const t of [...sample.transitions, ...oracle.transitions]) assert.deepEqual(Object.keys(t.result.signals).sort(), [...SUDOKU_SIGNALS].sort());
  });
});
