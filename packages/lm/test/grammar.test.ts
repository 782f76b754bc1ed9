/**
 * Grammar masks: exactly the feasible tokens without a budget, the budget rule (a sample that can finish within its
 * tokens always does), exact token distances, and masks kept per grammar state (a second visit walks nothing).
 */
import assert from 'node:assert/strict';
import {
  CausalLM,
  cachedGrammar,
  compileGrammar,
  generateIds,
  GrammarCursor,
  grammarTable,
  initBackend,
  loadTokenizer,
  tinyTokenizerDir,
  type Nfa,
  type Tokenizer,
} from '@troupe/lm';
import { createRng } from '@troupe/kernel';
import { TINY_QWEN3 } from './helpers/tiny-config.js';

/** A small vocabulary of multi-character tokens (id 0 is a special token: empty text). */
const TEXTS = [
  '',
  'ANSWER',
  'ANSWER: ',
  'ANS',
  'WER',
  ':',
  ' ',
  ': ',
  ...'ANSWER0123456789abcxyz'.split(''),
  '12',
  '123',
  '1234',
  'ab',
  'abc ',
  'x1',
  ' 9',
];

const regex = (pattern: string): Nfa => compileGrammar({ kind: 'regex', pattern });
const matches = (nfa: Nfa, text: string): boolean => nfa.accepts(nfa.run(nfa.initial(), text));
const feasible = (nfa: Nfa, text: string): boolean => nfa.run(nfa.initial(), text).length > 0;

/** The fewest tokens of `texts` that extend `prefix` to a match, by brute force over texts (depth ≤ `max`). */
function bruteDistance(nfa: Nfa, texts: readonly string[], prefix: string, max: number): number {
  let level = [prefix];
  for (let d = 0; d <= max; d++) {
    if (level.some((p) => matches(nfa, p))) return d;
    const next = new Set<string>();
    for (const p of level) for (const t of texts) if (t && feasible(nfa, p + t)) next.add(p + t);
    level = [...next];
  }
  return Infinity;
}

/** A random walk that takes any allowed token (EOS, as `null`, when the text matches) with `budget` tokens. */
function randomWalk(nfa: Nfa, texts: readonly string[], budget: number, seed: number): { text: string; ended: string } {
  const rng = createRng(seed);
  const cur = new GrammarCursor(nfa, texts);
  let text = '';
  for (let left = budget; left > 0; left--) {
    const options: (number | null)[] = [...cur.allowed(left)];
    if (cur.complete) options.push(null);
    if (options.length === 0) return { text, ended: 'stop' };
    const pick = options[rng.int(options.length)]!;
    if (pick === null) return { text, ended: 'eos' };
    cur.advance(pick);
    text += texts[pick];
  }
  return { text, ended: 'length' };
}

describe('grammar masks', () => {
  it('without a budget, a mask is exactly the tokens that keep the text a feasible prefix', () => {
    for (const pattern of ['ANSWER: \\d{3}', 'ANSWER: [a-z ]*\\d{3}', '(ab|x)+1?', '[^:]*:']) {
      const nfa = regex(pattern);
      for (let seed = 0; seed < 5; seed++) {
        const rng = createRng(seed);
        const cur = new GrammarCursor(nfa, TEXTS);
        let text = '';
        for (let step = 0; step < 6; step++) {
          const want = TEXTS.flatMap((t, id) => (t && feasible(nfa, text + t) ? [id] : []));
          const got = cur.allowed();
          assert.deepEqual(
            [...got].sort((a, b) => a - b),
            want,
            `/${pattern}/ after ${JSON.stringify(text)}`,
          );
          if (got.length === 0) break;
          const id = got[rng.int(got.length)]!;
          cur.advance(id);
          text += TEXTS[id];
          assert.equal(cur.complete, matches(nfa, text));
        }
      }
    }
  });

  it('a limit drops the ids at or above it (the model vocabulary is smaller than the tokenizer)', () => {
    const nfa = regex('[0-9]+');
    const all = new GrammarCursor(nfa, TEXTS).allowed();
    const below = new GrammarCursor(nfa, TEXTS, 20).allowed();
    assert.ok(all.some((id) => id >= 20));
    assert.deepEqual(
      below,
      all.filter((id) => id < 20),
    );
  });

  it('distances count tokens exactly: the fewest vocabulary tokens that complete the match', () => {
    for (const pattern of ['ANSWER: \\d{3}', 'ANSWER: [a-z ]*\\d{3}', '(ab|x)+1?', 'a{5}', 'abc abc ']) {
      const nfa = regex(pattern);
      const rng = createRng(pattern);
      const cur = new GrammarCursor(nfa, TEXTS);
      let text = '';
      for (let step = 0; step < 4; step++) {
        assert.equal(cur.distance, bruteDistance(nfa, TEXTS, text, 8), `/${pattern}/ after ${JSON.stringify(text)}`);
        const ids = cur.allowed();
        if (!ids.length) break;
        const id = ids[rng.int(ids.length)]!;
        cur.advance(id);
        text += TEXTS[id];
      }
    }
    assert.equal(new GrammarCursor(regex('ANSWER: \\d{3}'), TEXTS).distance, 2, "'ANSWER: ' + '123'");
    assert.equal(new GrammarCursor(regex('q'), TEXTS).distance, Infinity, 'no token has a q');
  });

  it('with the budget exactly enough every walk completes; one short, walks end on a feasible prefix', () => {
    const nfa = regex('ANSWER: \\d{3}');
    const cur = new GrammarCursor(nfa, TEXTS);
    assert.deepEqual(
      cur.allowed(2).map((id) => TEXTS[id]),
      ['ANSWER: '],
    );
    assert.deepEqual(cur.allowed(1), cur.allowed(), 'finishing is impossible: the plain feasibility mask');
    cur.advance(2);
    assert.deepEqual(
      cur.allowed(1).map((id) => TEXTS[id]),
      ['123'],
    );
    assert.deepEqual(
      new Set(cur.allowed(2).map((id) => TEXTS[id])),
      new Set(['1', '2', '3', '4', '5', '6', '7', '8', '9', '0', '12', '123']),
      "'1234' overshoots; two tokens can still make three digits",
    );
    for (let seed = 0; seed < 40; seed++) {
      const exact = randomWalk(nfa, TEXTS, 2, seed);
      assert.match(exact.text, /^ANSWER: \d{3}$/, `seed ${seed}`);
      const short = randomWalk(nfa, TEXTS, 1, seed);
      assert.equal(short.ended, 'length');
      assert.ok(feasible(nfa, short.text) && !matches(nfa, short.text), short.text);
    }
  });

  it('a budget that allows finishing is never spent on an unfinishable prefix, for any walk', () => {
    for (const pattern of ['ANSWER: [a-z ]*\\d{3}', '(ab|x)+1?', '(abc |x1)* 9', '[^:]*: \\d+']) {
      const nfa = regex(pattern);
      const d = new GrammarCursor(nfa, TEXTS).distance;
      assert.ok(d < Infinity);
      for (const budget of [d, d + 1, d + 3])
        for (let seed = 0; seed < 30; seed++) {
          const w = randomWalk(nfa, TEXTS, budget, seed);
          assert.ok(matches(nfa, w.text), `/${pattern}/ budget ${budget} seed ${seed}: ${JSON.stringify(w.text)}`);
        }
    }
  });

  it('keeps masks per grammar state: a second visit returns the kept mask; equal grammars share one NFA', () => {
    const g = { kind: 'regex' as const, pattern: 'ANSWER: [a-z ]*\\d{3}' };
    const nfa = cachedGrammar(g);
    assert.equal(cachedGrammar({ ...g }), nfa);
    assert.notEqual(cachedGrammar({ kind: 'choices', choices: ['ANSWER: [a-z ]*\\d{3}'] }), nfa);
    const a = new GrammarCursor(nfa, TEXTS);
    const b = new GrammarCursor(nfa, TEXTS);
    assert.equal(a.allowed(), b.allowed(), 'the same array: the second cursor walked nothing');
    assert.equal(a.allowed(5), b.allowed(5));
    assert.equal(grammarTable(nfa, TEXTS), grammarTable(nfa, TEXTS));
    assert.notEqual(grammarTable(nfa, TEXTS, 20), grammarTable(nfa, TEXTS));
  });
});

describe('generation under a grammar and a token budget', () => {
  let m: CausalLM;
  let tok: Tokenizer;
  let prompt: number[];
  before(async () => {
    await initBackend();
    m = CausalLM.random(TINY_QWEN3, 7);
    tok = await loadTokenizer(tinyTokenizerDir());
    prompt = tok.encode(tok.applyChatTemplate([{ role: 'user', content: 'Answer.' }]));
  });
  after(() => m.dispose());

  const sample = (maxNewTokens: number, pattern: string) =>
    generateIds(m, prompt, {
      maxNewTokens,
      n: 8,
      seed: 3,
      temperature: 1.5,
      tokenizer: tok,
      grammar: { kind: 'regex', pattern },
    });

  it('completes a grammar whose shortest match is exactly the budget (byte tokens: 11 for ANSWER: ddd)', async () => {
    const pattern = 'ANSWER: [a-z ]*\\d{3}';
    for (const s of await sample(11, pattern)) {
      assert.match(s.text, /^ANSWER: \d{3}$/);
      assert.equal(s.tokenIds.length, 11);
      assert.equal(s.finishReason, 'stop', 'the grammar admits nothing after its last token: a stop, not a cut');
    }
    const roomy = await sample(16, pattern);
    for (const s of roomy) assert.match(s.text, /^ANSWER: [a-z ]*\d{3}$/, s.text);
    assert.ok(
      roomy.some((s) => /[a-z ]/.test(s.text.slice(8))),
      'with room to spare, the optional part is still sampled',
    );
    for (const s of await sample(10, pattern)) {
      assert.equal(s.finishReason, 'length');
      assert.equal(s.tokenIds.length, 10);
      assert.ok(s.text.startsWith('ANSWER: ') && !/^ANSWER: [a-z ]*\d{3}$/.test(s.text), s.text);
    }
  });
});
