import assert from 'node:assert/strict';
import type { Observation, SeatContext } from '@troupe/kernel';
import {
  ANSWER_ROLE_DEFAULTS,
  AnswerLineRole,
  answerMismatch,
  findAnswerLine,
  quoteExcerpt,
  readAnswerRoleConfig,
  roleConfigReader,
  type AnswerRoleConfig,
} from '../src/index.js';

/** A role answering `#### <a word of at most {max} letters>`. */
class WordRole extends AnswerLineRole<string, AnswerRoleConfig & { readonly max: number }> {
  constructor(raw: Record<string, unknown> = {}) {
    const r = roleConfigReader('word-v0', { max: 5, ...ANSWER_ROLE_DEFAULTS }, raw);
    super('word-v0', ['word'], { max: r.integer('max', 1, 9), ...readAnswerRoleConfig(r) });
  }
  protected builtInPrompt(): string {
    return 'You are the {seat}; answer with a word of at most {max} letters.';
  }
  protected substitutions(): Record<string, number> {
    return { max: this.config.max };
  }
  protected format(): string {
    return '#### <word>';
  }
  protected read(text: string): { ok: true; action: string } | { ok: false; error: string } {
    const found = findAnswerLine(text, this.format());
    if (!found.ok) return found;
    const word = found.line.slice(4).trim();
    return /^[a-z]+$/.test(word) ? { ok: true, action: word } : answerMismatch(this.format(), quoteExcerpt(word));
  }
  protected pattern(): string {
    return `#### [a-z]{1,${this.config.max}}`;
  }
  render(action: string): string {
    return `#### ${action}`;
  }
}

const seat: SeatContext = { seat: 'executor', actionType: 'word' } as SeatContext;
const observation: Observation = { task: 'Say a word.', state: 'empty', context: [], turn: 0, data: {} };

describe('AnswerLineRole', () => {
  it("substitutes the seat and the role's names in the built-in or configured system prompt", () => {
    assert.equal(new WordRole().systemPrompt(seat), 'You are the executor; answer with a word of at most 5 letters.');
    assert.equal(new WordRole({ systemPrompt: '{seat}: {max} {max}' }).systemPrompt(seat), 'executor: 5 5');
  });

  it('builds the messages with the task, or terse ones', () => {
    const [system, user] = new WordRole({ max: 3 }).prompt(observation, seat);
    assert.deepEqual(system, {
      role: 'system',
      content: 'You are the executor; answer with a word of at most 3 letters.',
    });
    assert.equal(user!.content, 'Say a word.\n\nCurrent state:\nempty\n\nAnswer with one final line: #### <word>');
    assert.equal(new WordRole({ terse: true }).prompt(observation, seat)[1]!.content, 'empty');
  });

  it('parses the last answer line into a move, or an invalid move naming the format', () => {
    assert.deepEqual(new WordRole().parse('thinking\n#### cat', seat), {
      kind: 'action',
      action: 'cat',
      text: 'thinking\n#### cat',
    });
    const bad = new WordRole().parse('no answer', seat);
    assert.equal(bad.kind, 'invalid');
    assert.match((bad as { error: string }).error, /expected "#### <word>", found no "####" line/);
    assert.deepEqual(new WordRole().parse('#### two words', seat), {
      kind: 'invalid',
      error: 'expected "#### <word>", found "two words"',
      text: '#### two words',
    });
    assert.deepEqual(new WordRole({ max: 2 }).grammar(seat), { kind: 'regex', pattern: '#### [a-z]{1,2}' });
  });

  it('checks its config with roleConfig errors', () => {
    assert.throws(
      () => new WordRole({ terse: 'yes' }),
      /^Error: word-v0: roleConfig\.terse must be a boolean, got "yes"$/,
    );
    assert.throws(() => new WordRole({ systemPrompt: 3 }), /word-v0: roleConfig\.systemPrompt must be a string, got 3/);
    assert.throws(
      () => new WordRole({ colour: 1 }),
      /word-v0: roleConfig\.colour is not a known key; known keys: max, includeTask, terse, systemPrompt/,
    );
    assert.deepEqual(new WordRole().config, { max: 5, includeTask: true, terse: false });
  });
});
