/**
 * `action: grid`: the seats answer with the completed grid (action type `sudoku-grid`), and the filler role reads and
 * writes it as `#### 1234 3412 ...`. Rules, rewards, observations and the role on the hand-made puzzle of rules.test.ts.
 */
import assert from 'node:assert/strict';
import type { Move, SeatContext } from '@troupe/kernel';
import { createRng } from '@troupe/kernel';
import { SignalsRewardContribution } from '@troupe/reward-signals';
import { roleConformance } from '@troupe/testing';
import type { GridAnswer, SudokuState } from '../src/index.js';
import {
  SUDOKU_GRID,
  SUDOKU_GRID_SYSTEM_PROMPT,
  SudokuEnvironment,
  SudokuFillerContribution,
  applyGridAnswer,
  formatGridLine,
  gridAnswerPattern,
  gridAnswerSchema,
  makeInstance,
  parseGridAnswer,
} from '../src/index.js';

// Puzzle (5 clues, 11 empty cells; exactly one solution) and its solution:
const PUZZLE = [
  [1, 0, 0, 0],
  [0, 4, 0, 0],
  [0, 0, 0, 3],
  [4, 0, 2, 0],
];
const SOLUTION = [
  [1, 2, 3, 4],
  [3, 4, 1, 2],
  [2, 1, 4, 3],
  [4, 3, 2, 1],
];
const role = new SudokuFillerContribution().create({ size: 4 });
const seatOf = (seat: string): SeatContext => ({ seat, actionType: SUDOKU_GRID });
const act = (grid: GridAnswer): Move<GridAnswer> => ({
  kind: 'action',
  action: grid,
  text: `#### ${formatGridLine(grid)}`,
});
const signals = new SignalsRewardContribution().create({
  team: 'executed_reward',
  seats: { proposer: { local: 'proposal_reward' }, executor: { local: 'executed_reward' } },
});

describe('sudoku grid answers: parsing, rendering, grammar', () => {
  it('reads the last #### line as size groups of size digits', () => {
    assert.deepEqual(parseGridAnswer('Row 1 has a 1.\n#### 1234 3412 2143 4321', 4), { ok: true, grid: SOLUTION });
    assert.deepEqual(parseGridAnswer('#### 1111 1111 1111 1111\nno:\n####   1234  3412 2143 4321  ', 4), {
      ok: true,
      grid: SOLUTION,
    });
    // Digits out of range parse: the environment rejects them (invalid, -1), not the parser (unparseable, -2).
    assert.deepEqual(parseGridAnswer('#### 0234 3412 2143 4329', 4), {
      ok: true,
      grid: [
        [0, 2, 3, 4],
        [3, 4, 1, 2],
        [2, 1, 4, 3],
        [4, 3, 2, 9],
      ],
    });
  });

  it('rejects the wrong number of rows or digits, and non-digits, naming the expected format', () => {
    for (const text of [
      '',
      'solved',
      '#### 1234 3412 2143',
      '#### 1234 3412 2143 4321 1234',
      '#### 123 3412 2143 4321',
      '#### 12345 3412 2143 4321',
      '#### 1234 34a2 2143 4321',
      '#### 1.34 3412 2143 4321',
      '#### [[1,2,3]]',
      '1234 3412 2143 4321',
    ]) {
      const r = parseGridAnswer(text, 4);
      assert.equal(r.ok, false, text);
      assert.match(
        (r as { error: string }).error,
        /#### <row 1> <row 2> <row 3> <row 4> \(each row its 4 digits\)/,
        text,
      );
    }
  });

  it("the role renders, parses and constrains by its seat's action type", () => {
    assert.equal(role.render(SOLUTION, seatOf('executor')), '#### 1234 3412 2143 4321');
    assert.deepEqual(role.parse('#### 1234 3412 2143 4321', seatOf('executor')), {
      kind: 'action',
      action: SOLUTION,
      text: '#### 1234 3412 2143 4321',
    });
    assert.equal(role.parse('#### [[1,2,3]]', seatOf('executor')).kind, 'invalid');
    assert.equal(role.parse('#### [[1,2,3]]', { seat: 'executor', actionType: 'sudoku-fills' }).kind, 'action');
    assert.deepEqual(role.grammar(seatOf('proposer')), { kind: 'regex', pattern: gridAnswerPattern(4) });
    const re = new RegExp(`^(?:${gridAnswerPattern(4)})$`);
    assert.ok(re.test('#### 1234 3412 2143 4321'));
    for (const bad of [
      '#### 1234 3412 2143 4351',
      '#### 1234 3412 2143',
      '#### 1234  3412 2143 4321',
      '#### 12343412 2143 4321',
    ])
      assert.ok(!re.test(bad), bad);
    assert.ok(
      new RegExp(`^(?:${gridAnswerPattern(9)})$`).test(
        `#### ${Array.from({ length: 9 }, () => '123456789').join(' ')}`,
      ),
    );
  });

  it('terse: the user message is the compact grid and the context lines, nothing else', () => {
    const env = new SudokuEnvironment({ action: 'grid', observation: 'compact' });
    const terse = new SudokuFillerContribution().create({ size: 4, terse: true, systemPrompt: '{seat}' });
    const p = env.step(env.reset(makeInstance(PUZZLE)), 'proposer', act(SOLUTION));
    assert.deepEqual(terse.prompt(env.observe(p.state, 'executor'), seatOf('executor')), [
      { role: 'system', content: 'executor' },
      { role: 'user', content: '1...\n.4..\n...3\n4.2.\nproposal: 1234 3412 2143 4321 -> solved' },
    ]);
    assert.throws(
      () => new SudokuFillerContribution().create({ terse: 'yes' }),
      /sudoku-filler-v0: roleConfig\.terse must be a boolean, got "yes"/,
    );
  });

  it('grid prompts describe the format in words: no complete grid in the system prompt, the task or the state', () => {
    assert.doesNotMatch(SUDOKU_GRID_SYSTEM_PROMPT, /\d{4}/);
    const env = new SudokuEnvironment({ action: 'grid', observation: 'compact' });
    for (let i = 0; i < 20; i++) {
      const s = env.reset(env.instance('test', i, 0));
      for (const seat of ['proposer', 'executor']) {
        const text = role
          .prompt(env.observe(s, seat), seatOf(seat))
          .map((m) => m.content)
          .join('\n');
        assert.ok(
          !text.includes(formatGridLine(s.instance.solution)) && !/\b[1-4]{4}( [1-4]{4}){3}\b/.test(text),
          text,
        );
        assert.match(text, /Answer with one final line: #### <row 1>/);
      }
    }
  });
});

describe('sudoku with action: grid', () => {
  const env = new SudokuEnvironment({ action: 'grid', maxTurns: 2 });
  const inst = makeInstance(PUZZLE);

  it('both seats produce sudoku-grid, whose schema is size rows of size values', () => {
    assert.deepEqual(
      env.seats.map((s) => s.actionType),
      [SUDOKU_GRID, SUDOKU_GRID],
    );
    assert.deepEqual(
      env.actionTypes.map((a) => a.name),
      [SUDOKU_GRID],
    );
    assert.deepEqual(env.actionTypes[0]!.schema, gridAnswerSchema(4));
    assert.deepEqual(
      new SudokuEnvironment({ action: 'grid', seats: ['executor'] }).seats.map((s) => s.actionType),
      [SUDOKU_GRID],
    );
    assert.throws(
      () => new SudokuEnvironment({ action: 'cells' }),
      /environment\.config\.action must be "fills" or "grid", got "cells"/,
    );
  });

  it('a grid is rejected whole when it changes a clue, has a value outside 1..size or the wrong shape', () => {
    assert.deepEqual(applyGridAnswer(PUZZLE, SOLUTION), { ok: true, grid: SOLUTION });
    const cases: [unknown, RegExp][] = [
      [[[2, 2, 3, 4], ...SOLUTION.slice(1)], /row 1, column 1 is 2 but the given clue there is 1/],
      [[[1, 2, 3, 5], ...SOLUTION.slice(1)], /row 1, column 4 is 5: values must be from 1 to 4/],
      [[[1, 2, 3, 0], ...SOLUTION.slice(1)], /values must be from 1 to 4/],
      [SOLUTION.slice(1), /expected 4 rows of 4 numbers, got 3 rows/],
      [[[1, 2, 3], ...SOLUTION.slice(1)], /row 1 is \[1,2,3\], expected 4 integers/],
      ['1234', /expected 4 rows of 4 numbers, got string/],
    ];
    for (const [answer, error] of cases) {
      const out = applyGridAnswer(PUZZLE, answer);
      assert.equal(out.ok, false);
      assert.match((out as { error: string }).error, error);
    }
    const s0 = env.reset(inst);
    const p = env.step(s0, 'proposer', act([[2, 2, 3, 4], ...SOLUTION.slice(1)]));
    assert.deepEqual(p.signals, { proposal_reward: -1, executed_reward: 0, success: 0, malformed: 1 });
    const e = env.step(p.state, 'executor', act([[1, 2, 3, 5], ...SOLUTION.slice(1)]));
    assert.deepEqual(e.signals, { proposal_reward: 0, executed_reward: -1, success: 0, malformed: 1 });
    assert.deepEqual(e.state.grid, PUZZLE, 'nothing applied');
  });

  it('rewards progress like the fills that write the same cells, and a later grid overwrites every empty cell', () => {
    const s0 = env.reset(inst);
    // Two of the 11 empty cells wrong (row 2 ends 2 1 instead of 1 2): 9/11, and columns 3 and 4 each get a conflicting pair.
    const wrong = [
      [1, 2, 3, 4],
      [3, 4, 1, 2],
      [2, 1, 4, 3],
      [4, 3, 2, 1],
    ].map((r) => [...r]);
    wrong[1]![2] = 2;
    wrong[1]![3] = 1;
    const p = env.step(s0, 'proposer', act(wrong));
    const e = env.step(p.state, 'executor', act(wrong));
    assert.equal(e.signals.executed_reward, p.signals.proposal_reward);
    assert.ok(Math.abs(e.signals.executed_reward! - (9 / 11 - 0.1 * 2)) < 1e-9, String(e.signals.executed_reward));
    assert.equal(e.state.history[0]!.executed!.length, 11, 'recorded as the fills of the 11 empty cells');
    const solved = env.step(env.step(e.state, 'proposer', act(SOLUTION)).state, 'executor', act(SOLUTION));
    assert.equal(solved.success, true);
    assert.ok(
      Math.abs(solved.signals.executed_reward! - (2 / 11 + 0.2 + 2)) < 1e-9,
      String(solved.signals.executed_reward),
    );
    assert.deepEqual(solved.done, { terminated: true, truncated: false });
  });

  it('compact observations show grids on one line; full ones show the proposed grid', () => {
    const compact = new SudokuEnvironment({ action: 'grid', observation: 'compact', maxTurns: 2 });
    const s0 = compact.reset(inst);
    const wrong = SOLUTION.map((r) => [...r]);
    wrong[0]![1] = 3;
    wrong[0]![2] = 2;
    const p = compact.step(s0, 'proposer', act(wrong));
    assert.deepEqual(compact.observe(p.state, 'executor').context, [
      { label: 'proposal', text: '1324 3412 2143 4321 -> 16/16 c=4' },
    ]);
    const e = compact.step(p.state, 'executor', act(SOLUTION));
    assert.equal(e.success, true);
    const unsolved = compact.step(p.state, 'executor', { kind: 'invalid', error: 'x', text: 'x' });
    assert.deepEqual(compact.observe(unsolved.state, 'proposer').context, [
      { label: 'turn 1', text: '1324 3412 2143 4321 none -> 5/16 c=0' },
    ]);
    assert.equal(compact.observe(unsolved.state, 'proposer').state, '1...\n.4..\n...3\n4.2.');
    const full = new SudokuEnvironment({ action: 'grid' });
    const fp = full.step(full.reset(inst), 'proposer', act(SOLUTION));
    assert.match(
      full.observe(fp.state, 'executor').context[0]!.text,
      /^Proposed grid \(16 of 16 cells filled, 0 conflicts, solves the puzzle\):\n {4}1 2 {3}3 4/,
    );
    assert.match(
      full.observe(fp.state, 'executor').task,
      /An answer is the completed grid: its 4 rows from top to bottom/,
    );
  });

  it('the oracle, spoken by the role, solves every test instance in one turn; random answers never touch a clue', () => {
    const rng = createRng(3);
    for (const size of [4, 9]) {
      const e = new SudokuEnvironment({ action: 'grid', size });
      const role = new SudokuFillerContribution().create({ size });
      for (let i = 0; i < 10; i++) {
        const s0 = e.reset(e.instance('test', i, 5));
        const speak = (s: SudokuState, seat: string) =>
          role.parse(`${role.render(e.oracle(s, seat), seatOf(seat))}`, seatOf(seat));
        const p = e.step(s0, 'proposer', speak(s0, 'proposer'));
        const x = e.step(p.state, 'executor', speak(p.state, 'executor'));
        assert.equal(x.success, true);
        const t = signals.terms({
          seat: 'executor',
          turn: 0,
          before: p.state,
          move: speak(p.state, 'executor'),
          result: x,
        });
        assert.equal(t.team, 3);
        const random = e.randomAction(s0, 'executor', rng) as GridAnswer;
        assert.equal(applyGridAnswer(s0.instance.puzzle, random).ok, true, JSON.stringify(random));
      }
    }
  });
});

const env = new SudokuEnvironment({ action: 'grid', observation: 'compact' });
const rng = createRng(4);
const observations = [];
const actions: GridAnswer[] = [];
for (let i = 0; i < 4; i++) {
  const s = env.reset(env.instance('train', i, 2));
  for (const seat of ['proposer', 'executor']) observations.push(env.observe(s, seat));
  actions.push(env.oracle(s, 'proposer') as GridAnswer, env.randomAction(s, 'executor', rng) as GridAnswer);
}
roleConformance(new SudokuFillerContribution(), {
  config: { size: 4 },
  observations,
  actions,
  seats: env.seats.map((s) => seatOf(s.name)),
  actionSchema: env.actionTypes[0]!.schema,
});
