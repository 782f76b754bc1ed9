import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import type { Observation, SeatContext } from '@troupe/kernel';
import { moduleConformance, roleConformance } from '@troupe/testing';
import { SolverContribution, SolverRole, lastBoxed } from '../src/index.js';

const seat: SeatContext = { seat: 'solver', actionType: 'answer' };
const role = new SolverRole({});

const observation: Observation = {
  task: 'Problem:\nWhat is 6 times 7?',
  state: 'Turn 1 of 3. You are the solver.',
  context: [
    { label: "Coder's program (turn 1)", text: '```python\nprint(6 * 7)\n```' },
    {
      label: 'Program output (turn 1)',
      text: "Verdict: ok, exit code 0.\nOutput:\n42\nProgram's answer (last printed line): 42",
    },
  ],
  turn: 0,
};

describe('solver-v0', () => {
  it('prompts with the task, the current state, every context block and the \\boxed{} instruction', () => {
    const [system, user] = role.prompt(observation, seat);
    assert.equal(system!.role, 'system');
    assert.match(system!.content, /solver/);
    assert.ok(user!.content.includes(observation.task) && user!.content.includes(observation.state));
    for (const c of observation.context) assert.ok(user!.content.includes(c.text) && user!.content.includes(c.label));
    assert.ok(user!.content.trimEnd().endsWith('put your final answer in \\boxed{}.'));
    assert.deepEqual(role.prompt(observation, seat), role.prompt(observation, seat));
  });

  it('parses the LAST \\boxed{} with balanced braces', () => {
    const move = role.parse('First guess \\boxed{41}. Wait, 6*7 = 42, so \\boxed{\\frac{84}{2}}', seat);
    assert.deepEqual(move, {
      kind: 'action',
      action: { answer: '\\frac{84}{2}' },
      text: 'First guess \\boxed{41}. Wait, 6*7 = 42, so \\boxed{\\frac{84}{2}}',
    });
    assert.equal(lastBoxed('so $\\boxed 7$.'), '7');
    assert.equal(lastBoxed('\\fbox{x^{2}}'), 'x^{2}');
    assert.equal(lastBoxed('\\boxed{\\{1,2\\}}'), '\\{1,2\\}');
    assert.equal(lastBoxed('\\boxed{3} then \\boxed{4'), '3');
  });

  it('returns an invalid move with a clear error when there is no usable \\boxed{}', () => {
    const none = role.parse('The answer is 42.', seat);
    assert.equal(none.kind, 'invalid');
    assert.match(
      (none as { error: string }).error,
      /no \\boxed\{\} answer found .*end the reply with \\boxed\{ANSWER\}/,
    );
    const unclosed = role.parse('\\boxed{42', seat);
    assert.equal(unclosed.kind, 'invalid');
    assert.match((unclosed as { error: string }).error, /never closed/);
    assert.match((role.parse('\\boxed{ }', seat) as { error: string }).error, /empty/);
    const long = new SolverRole({ maxAnswerChars: 5 }).parse('\\boxed{123456}', seat);
    assert.match((long as { error: string }).error, /more than maxAnswerChars 5/);
  });

  it('renders "... \\boxed{A}" that parses back to A', () => {
    for (const answer of ['42', '\\frac{3}{4}', '(1, 2]', '\\{1,2\\}', 'x^{2}+1']) {
      const text = role.render({ answer }, seat);
      assert.match(text, /\\boxed\{/);
      assert.deepEqual(role.parse(text, seat), { kind: 'action', action: { answer }, text });
    }
  });

  it('offers a grammar only when asked, and it matches rendered integer answers', () => {
    assert.equal(role.grammar(seat), undefined);
    const g = new SolverRole({ grammar: 'integer' }).grammar(seat);
    assert.equal(g?.kind, 'regex');
    const re = new RegExp(`^(?:${(g as { pattern: string }).pattern})$`);
    assert.ok(re.test('\\boxed{-17}'));
    assert.ok(!re.test('\\boxed{1/2}'));
    const n = new RegExp(
      `^(?:${(new SolverRole({ grammar: 'number' }).grammar(seat) as { pattern: string }).pattern})$`,
    );
    assert.ok(n.test('\\boxed{1/2}') && n.test('\\boxed{0.25}') && !n.test('\\boxed{x}'));
  });

  it('rejects unknown or bad config with the key named', () => {
    assert.throws(() => new SolverRole({ colour: 1 }), /roleConfig\.colour is not a known key/);
    assert.throws(() => new SolverRole({ grammar: 'regex' }), /roleConfig\.grammar must be/);
  });
});

roleConformance(new SolverContribution(), {
  observations: [observation, { ...observation, context: [], turn: 2 }],
  actions: [{ answer: '42' }, { answer: '\\frac{1}{2}' }, { answer: '(-\\infty, 3]' }],
  seats: [seat],
  actionSchema: {
    type: 'object',
    required: ['answer'],
    additionalProperties: false,
    properties: { answer: { type: 'string' } },
  },
  garbage: ['\\boxed{', '\\boxed{}', 'boxed{42}', '\\boxedx'],
});
moduleConformance(fileURLToPath(new URL('..', import.meta.url)));
