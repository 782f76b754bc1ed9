import assert from 'node:assert/strict';
import { ID, MovesLineContribution } from '../src/role.js';

const role = new MovesLineContribution().create({ maxMoves: 4 });
const seat = { seat: 'walker', actionType: 'moves' };

describe(ID, () => {
  it('parses the last MOVES line', () => {
    const move = role.parse('I think right.\nMOVES: L\nNo wait:\nMOVES: R R U', seat);
    assert.deepEqual(move, {
      kind: 'action',
      action: ['R', 'R', 'U'],
      text: 'I think right.\nMOVES: L\nNo wait:\nMOVES: R R U',
    });
  });

  it('turns bad text into an invalid move with a reason, never throwing', () => {
    for (const text of ['', 'go right', 'MOVES:', 'MOVES: X', 'MOVES: R R R R R']) {
      const move = role.parse(text, seat);
      assert.equal(move.kind, 'invalid', text);
      assert.ok(move.kind === 'invalid' && move.error.length > 0);
    }
  });

  it('renders what it parses, and the rendering matches its grammar', () => {
    const text = role.render(['U', 'L'], seat);
    assert.deepEqual(role.parse(text, seat), { kind: 'action', action: ['U', 'L'], text });
    const grammar = role.grammar(seat);
    assert.equal(grammar.kind, 'regex');
    assert.match(text, new RegExp(`^(?:${grammar.kind === 'regex' ? grammar.pattern : ''})$`));
    assert.doesNotMatch('MOVES: U U U U U', new RegExp(`^(?:${grammar.kind === 'regex' ? grammar.pattern : ''})$`));
  });

  it('prompts with the task, the current state and the context', () => {
    const messages = role.prompt(
      { task: 'Reach G.', state: '#@.G#', context: [{ label: 'proposal', text: 'R R' }], turn: 1 },
      seat,
    );
    assert.equal(messages[0]!.role, 'system');
    assert.match(messages[1]!.content, /Reach G\.[\s\S]*#@\.G#[\s\S]*proposal:\nR R/);
  });
});
