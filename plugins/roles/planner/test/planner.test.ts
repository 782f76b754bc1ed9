import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import type { Observation, SeatContext } from '@troupe/kernel';
import { moduleConformance, roleConformance } from '@troupe/testing';
import { PlannerContribution, PlannerRole, moveListPattern, parseMoveList } from '../src/index.js';

const seat: SeatContext = { seat: 'executor', actionType: 'moves' };
const role = new PlannerRole({});

const observation: Observation = {
  task: 'Plan-Path: move the walker A to the goal G.',
  state: 'Walker A at (1, 1).\n   0 1 2\n0  . . G\n1  . A .\n2  # . .',
  context: [
    { label: 'proposal', text: 'Proposed moves: [U,R]\nSimulated from (1, 1): ends at (0, 2), reaches the goal.' },
  ],
  turn: 0,
};

describe('planner parsing', () => {
  const ok = (text: string, moves: string[]): void => {
    const m = role.parse(text, seat);
    assert.equal(m.kind, 'action', m.kind === 'invalid' ? m.error : '');
    assert.deepEqual(m.kind === 'action' ? m.action : null, moves);
  };
  const invalid = (text: string, error: string | RegExp): void => {
    const m = role.parse(text, seat);
    assert.equal(m.kind, 'invalid');
    if (m.kind === 'invalid') {
      if (typeof error === 'string') assert.equal(m.error, error);
      else assert.match(m.error, error);
    }
  };

  it('reads the canonical form', () => {
    ok('#### [U,R,D]', ['U', 'R', 'D']);
    ok('#### []', []);
  });
  it('reads the LAST #### line, after reasoning', () => {
    ok('Let me think. #### [L] would hit a wall.\n#### [D]\nso:\n#### [U, R]\n', ['U', 'R']);
    ok('I first wrote\n#### [L]\nbut the answer is\n  ####   [ R , R ]  ', ['R', 'R']);
  });
  it('accepts words, any case, and quoted moves (acceptWords, the default)', () => {
    ok('#### [up, Right, d, "L", \'U\']', ['U', 'R', 'D', 'L', 'U']);
  });
  it('rejects words when acceptWords is false', () => {
    const strict = new PlannerRole({ acceptWords: false });
    const m = strict.parse('#### [up]', seat);
    assert.equal(m.kind, 'invalid');
    assert.equal(
      m.kind === 'invalid' && m.error,
      'expected "#### [U,D,...]", found "up" as move 1 (moves are U, D, L, R)',
    );
    assert.equal(strict.parse('#### [u]', seat).kind, 'invalid');
  });
  it('gives precise errors', () => {
    invalid('', 'expected "#### [U,D,...]", found an empty answer');
    invalid(
      'I would go up then right',
      'expected "#### [U,D,...]", found no "####" line (last line "I would go up then right")',
    );
    invalid('#### U,R', 'expected "#### [U,D,...]", found "#### U,R"');
    invalid('#### [U,R] done', 'expected "#### [U,D,...]", found "#### [U,R] done"');
    invalid('#### [U,X]', 'expected "#### [U,D,...]", found "X" as move 2 (moves are U, D, L, R)');
    invalid('#### [U,,R]', 'expected "#### [U,D,...]", found "" as move 2 (moves are U, D, L, R)');
    invalid('#### [[U]]', /found "#### \[\[U\]\]"/);
  });
  it('enforces maxMoves', () => {
    const r = parseMoveList(`#### [${Array(25).fill('U').join(',')}]`);
    assert.deepEqual(r, { ok: false, error: 'expected "#### [U,D,...]" with at most 24 moves, found 25 moves' });
    assert.equal(parseMoveList(`#### [${Array(24).fill('U').join(',')}]`).ok, true);
  });
  it('keeps the raw text in the move', () => {
    assert.equal(role.parse('x\n#### [U]', seat).text, 'x\n#### [U]');
    assert.equal(role.parse('nothing', seat).text, 'nothing');
  });
});

describe('planner rendering, prompt and grammar', () => {
  it('render gives the canonical form', () => {
    assert.equal(role.render(['U', 'R'], seat), '#### [U,R]');
    assert.equal(role.render([], seat), '#### []');
  });
  it('the prompt is a system message and a user message with task, state and context blocks', () => {
    const messages = role.prompt(observation, seat);
    assert.equal(messages.length, 2);
    assert.equal(messages[0]!.role, 'system');
    assert.match(messages[0]!.content, /You are the executor of a team/);
    assert.match(messages[0]!.content, /At most 24 moves/);
    assert.equal(messages[1]!.role, 'user');
    assert.equal(
      messages[1]!.content,
      [
        observation.task,
        `Current state:\n${observation.state}`,
        `### proposal\n${observation.context[0]!.text}`,
        'Answer with one final line: #### [U,D,...]',
      ].join('\n\n'),
    );
  });
  it('terse: the state and `label: text` context lines only', () => {
    const terse = new PlannerRole({ terse: true, systemPrompt: '{seat}' });
    const messages = terse.prompt(observation, seat);
    assert.equal(messages[0]!.content, 'executor');
    assert.equal(messages[1]!.content, `${observation.state}\nproposal: ${observation.context[0]!.text}`);
    assert.doesNotMatch(messages[1]!.content, /Current state|Answer with/);
    assert.throws(() => new PlannerRole({ terse: 'yes' }), /roleConfig\.terse must be a boolean/);
  });
  it('a custom system prompt substitutes {seat} and {maxMoves}', () => {
    const custom = new PlannerRole({ systemPrompt: 'Seat {seat}, up to {maxMoves}.', maxMoves: 3 });
    assert.equal(custom.prompt(observation, seat)[0]!.content, 'Seat executor, up to 3.');
  });
  it('the grammar is bounded by maxMoves', () => {
    const g = new PlannerRole({ maxMoves: 3 }).grammar(seat);
    assert.deepEqual(g, { kind: 'regex', pattern: '#### \\[(?:[UDLR](?:,[UDLR]){0,2})?\\]' });
    const re = new RegExp(`^(?:${g.pattern})$`);
    for (const t of ['#### []', '#### [U]', '#### [U,R,D]']) assert.ok(re.test(t), t);
    for (const t of ['#### [U,R,D,L]', '#### [U,]', '#### [u]', '#### U', '#### [U R]']) assert.ok(!re.test(t), t);
    assert.equal(moveListPattern(1), '#### \\[(?:[UDLR])?\\]');
  });
  it('rejects bad configs', () => {
    assert.throws(() => new PlannerRole({ maxMoves: 0 }), /roleConfig\.maxMoves must be an integer from 1 to 200/);
    assert.throws(() => new PlannerRole({ maxmoves: 3 }), /roleConfig\.maxmoves is not a known key/);
  });
});

describe('planner runs notation', () => {
  const runs = new PlannerRole({ notation: 'runs', maxMoves: 12 });
  const parse = (text: string) => runs.parse(text, seat);
  it('renders runs of equal directions with their counts; a run longer than 9 is split', () => {
    assert.equal(runs.render(['U', 'U', 'R', 'D', 'D', 'D'], seat), '#### [U2,R1,D3]');
    assert.equal(runs.render([], seat), '#### []');
    assert.equal(new PlannerRole({ notation: 'runs', maxMoves: 24 }).render(Array(12).fill('R'), seat), '#### [R9,R3]');
  });
  it('parses counts (a bare letter counts 1), words and spaces, and round-trips render', () => {
    for (const moves of [['U', 'U', 'R'], ['L'], ['D', 'D', 'D', 'D', 'R', 'U', 'U']] as const) {
      const m = parse(runs.render([...moves], seat));
      assert.deepEqual(m.kind === 'action' ? m.action : m, [...moves]);
    }
    const m = parse('thinking...\n#### [ U2 , r , up3 ]');
    assert.deepEqual(m.kind === 'action' ? m.action : m, ['U', 'U', 'R', 'U', 'U', 'U']);
  });
  it('bounds the steps in all by maxMoves and rejects zero counts and unknown items with the runs format in the error', () => {
    const tooMany = parse('#### [U9,R4]');
    assert.equal(tooMany.kind, 'invalid');
    assert.match(
      tooMany.kind === 'invalid' ? tooMany.error : '',
      /expected "#### \[U2,R1,\.\.\.\]" with at most 12 moves in all, found more \(item 2 brings the total to 13\)/,
    );
    const zero = parse('#### [U0]');
    assert.match(zero.kind === 'invalid' ? zero.error : '', /a count of 0 in item 1/);
    const bad = parse('#### [U2,X1]');
    assert.match(
      bad.kind === 'invalid' ? bad.error : '',
      /found "X1" as item 2 \(moves are U, D, L, R, each with a count\)/,
    );
  });
  it('the grammar admits canonical runs only, and the default system prompt explains counts', () => {
    const g = runs.grammar(seat);
    assert.equal(g.kind === 'regex' ? g.pattern : '', moveListPattern(12, 'runs'));
    const re = new RegExp(`^(?:${g.kind === 'regex' ? g.pattern : ''})$`);
    for (const t of ['#### []', '#### [U2]', '#### [U2,R1,D9]']) assert.ok(re.test(t), t);
    for (const t of ['#### [U]', '#### [U0]', '#### [U10]', '#### [U2,]', '#### [U,R]']) assert.ok(!re.test(t), t);
    assert.match(runs.prompt(observation, seat)[0]!.content, /#### \[U2,R1\]\n.*U2 = two steps up/s);
  });
  it('the moves notation is unchanged and rejects counts; a bad notation is named', () => {
    assert.equal(role.render(['U', 'U'], seat), '#### [U,U]');
    assert.equal(role.parse('#### [U2]', seat).kind, 'invalid');
    assert.throws(
      () => new PlannerRole({ notation: 'rle' }),
      /roleConfig\.notation must be one of "moves", "runs", got "rle"/,
    );
  });
});

roleConformance(new PlannerContribution(), {
  observations: [observation, { ...observation, context: [], turn: 2 }],
  actions: [[], ['U'], ['U', 'R', 'D', 'L'], Array(24).fill('R')],
  seats: [{ seat: 'proposer', actionType: 'moves' }, seat],
  actionSchema: { type: 'array', items: { enum: ['U', 'D', 'L', 'R'] }, maxItems: 24 },
  garbage: ['#### [U, R', '####', '#### [north]', '####[U]]'],
});
moduleConformance(fileURLToPath(new URL('..', import.meta.url)));
