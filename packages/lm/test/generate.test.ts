import assert from 'node:assert/strict';
import {
  CausalLM,
  initBackend,
  generateIds,
  generateBatch,
  loadTokenizer,
  tinyTokenizerDir,
  compileGrammar,
  GrammarError,
  sampleToken,
  CausalLmPolicyContribution,
  CausalLmPolicy,
  recomputeLogprobs,
  type Tokenizer,
} from '@troupe/lm';
import { createRng } from '@troupe/kernel';
import { TINY_QWEN3 } from './helpers/tiny-config.js';

const cfg = TINY_QWEN3;

describe('generation', () => {
  let m: CausalLM;
  let tok: Tokenizer;
  let prompt: number[];
  before(async () => {
    await initBackend();
    m = CausalLM.random(cfg, 11);
    tok = await loadTokenizer(tinyTokenizerDir());
    prompt = tok.encode(tok.applyChatTemplate([{ role: 'user', content: 'Plan a path.' }]));
  });
  after(() => m.dispose());

  it('is seeded: same seed, same samples; different seeds differ; rows of one request differ', async () => {
    const a = await generateIds(m, prompt, { maxNewTokens: 8, n: 3, seed: 5, temperature: 1.5, eosTokenIds: [] });
    const b = await generateIds(m, prompt, { maxNewTokens: 8, n: 3, seed: 5, temperature: 1.5, eosTokenIds: [] });
    const c = await generateIds(m, prompt, { maxNewTokens: 8, n: 3, seed: 6, temperature: 1.5, eosTokenIds: [] });
    assert.deepEqual(a, b);
    assert.notDeepEqual(
      a.map((s) => s.tokenIds),
      c.map((s) => s.tokenIds),
    );
    assert.notDeepEqual(a[0]!.tokenIds, a[1]!.tokenIds);
    for (const s of a) {
      assert.equal(s.tokenIds.length, 8);
      assert.equal(s.logprobs.length, 8);
      assert.equal(s.finishReason, 'length');
    }
  });

  it('temperature 0 is greedy: every token is the argmax, identical across rows and seeds', async () => {
    const [g1, g2] = await generateIds(m, prompt, { maxNewTokens: 6, n: 2, seed: 1, temperature: 0, eosTokenIds: [] });
    const [g3] = await generateIds(m, prompt, { maxNewTokens: 6, seed: 99, temperature: 0, eosTokenIds: [] });
    assert.deepEqual(g1!.tokenIds, g2!.tokenIds);
    assert.deepEqual(g1!.tokenIds, g3!.tokenIds);
    const re = (await recomputeLogprobs(m, [{ promptIds: prompt, completionIds: g1!.tokenIds }]))[0]!;
    re.forEach((lp, i) => assert.ok(Math.abs(lp - g1!.logprobs[i]!) < 1e-4));
    // argmax: the greedy token's log-prob is the largest possible, so it is ≥ log(1/V)
    for (const lp of g1!.logprobs) assert.ok(lp >= Math.log(1 / 300) - 1e-6);
  });

  it('logprobTemperature: greedy tokens with log-probs of softmax(logits / T), as the trainer scores a greedy branch', async () => {
    const [g] = await generateIds(m, prompt, { maxNewTokens: 6, seed: 1, temperature: 0, eosTokenIds: [] });
    const [h] = await generateIds(m, prompt, {
      maxNewTokens: 6,
      seed: 1,
      temperature: 0,
      logprobTemperature: 0.5,
      eosTokenIds: [],
    });
    assert.deepEqual(h!.tokenIds, g!.tokenIds, 'the same greedy tokens');
    const at = (temperature: number) =>
      recomputeLogprobs(m, [{ promptIds: prompt, completionIds: g!.tokenIds, temperature }]).then((r) => r[0]!);
    const [half, one] = [await at(0.5), await at(1)];
    half.forEach((lp, i) =>
      assert.ok(Math.abs(lp - h!.logprobs[i]!) < 1e-4, `token ${i}: ${h!.logprobs[i]} vs ${lp} at T = 0.5`),
    );
    assert.ok(
      one.some((lp, i) => Math.abs(lp - h!.logprobs[i]!) > 1e-3),
      'and not those at T = 1',
    );
    await assert.rejects(
      generateIds(m, prompt, { maxNewTokens: 2, temperature: 0, logprobTemperature: 0, eosTokenIds: [] }),
      /logprobTemperature must be positive, got 0/,
    );
  });

  it('batches prompts of different lengths (left padding) with the same results as one prompt at a time', async () => {
    const p2 = tok.encode(
      tok.applyChatTemplate([{ role: 'user', content: 'A much longer prompt about grids, walls and goals.' }]),
    );
    const p3 = tok.encode('hi');
    const opts = [
      { maxNewTokens: 6, temperature: 0, eosTokenIds: [] as number[] },
      { maxNewTokens: 4, temperature: 1, n: 2, seed: 3, eosTokenIds: [] as number[] },
      { maxNewTokens: 5, temperature: 0.7, topK: 20, seed: 9, eosTokenIds: [] as number[] },
    ];
    const prompts = [prompt, p2, p3];
    const batched = await generateBatch(
      m,
      prompts.map((promptIds, i) => ({ promptIds, options: opts[i]! })),
      { tokenizer: tok },
    );
    for (let i = 0; i < 3; i++) {
      const alone = await generateIds(m, prompts[i]!, { ...opts[i]!, tokenizer: tok });
      assert.equal(batched[i]!.length, alone.length);
      alone.forEach((s, j) => {
        assert.deepEqual(batched[i]![j]!.tokenIds, s.tokenIds, `prompt ${i} row ${j}`);
        s.logprobs.forEach((lp, k) => assert.ok(Math.abs(batched[i]![j]!.logprobs[k]! - lp) < 1e-4));
      });
    }
    assert.deepEqual(
      batched.map((g) => g.map((s) => s.tokenIds.length)),
      [[6], [4, 4], [5]],
    );
  });

  it('sampleToken applies top-k and top-p and returns the model log-prob', () => {
    const logits = new Float32Array([0, 1, 2, 3, 4]);
    const lse = Math.log([0, 1, 2, 3, 4].reduce((s, x) => s + Math.exp(x), 0));
    const rng = createRng(1);
    const seen = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const r = sampleToken(logits, { temperature: 1, topP: 1, topK: 2 }, rng);
      seen.add(r.token);
      assert.ok(Math.abs(r.logprob - (r.token - lse)) < 1e-9);
    }
    assert.deepEqual([...seen].sort(), [3, 4]);
    for (let i = 0; i < 50; i++)
      assert.equal(sampleToken(logits, { temperature: 1, topP: 0.5, topK: 0 }, rng).token, 4);
    assert.equal(sampleToken(logits, { temperature: 0, topP: 1, topK: 0, allowed: [0, 2] }, rng).token, 2);
  });

  it('sampleToken over the whole vocabulary draws the same tokens as over an explicit list of every id', () => {
    const V = 3000;
    const logits = new Float32Array(V);
    for (let i = 0; i < V; i++) logits[i] = Math.sin(i * 0.37) * 4;
    logits[1234] = 6; // the argmax is not id 0, so the argmax-first order matters
    const every = Array.from({ length: V }, (_, i) => i);
    const [a, b] = [createRng(5), createRng(5)];
    const drawn = new Set<number>();
    for (let i = 0; i < 300; i++) {
      const full = sampleToken(logits, { temperature: 0.9, topP: 1, topK: 0 }, a);
      const listed = sampleToken(logits, { temperature: 0.9, topP: 1, topK: 0, allowed: every }, b);
      assert.equal(full.token, listed.token);
      assert.ok(Math.abs(full.logprob - listed.logprob) < 1e-9, `${full.logprob} vs ${listed.logprob}`);
      drawn.add(full.token);
    }
    assert.ok(drawn.size > 50, `samples spread over the vocabulary (${drawn.size} distinct)`);
  });

  it('sampleToken returns the log-prob of the distribution it samples from: logits / T over the whole vocabulary', () => {
    const logits = new Float32Array([0, 1, 2, 3, 4]);
    const rng = createRng(2);
    for (const T of [0.3, 0.7, 2]) {
      const lseT = Math.log([0, 1, 2, 3, 4].reduce((s, x) => s + Math.exp(x / T), 0));
      const counts = [0, 0, 0, 0, 0];
      for (let i = 0; i < 4000; i++) {
        const r = sampleToken(logits, { temperature: T, topP: 1, topK: 0 }, rng);
        counts[r.token]!++;
        assert.ok(Math.abs(r.logprob - (r.token / T - lseT)) < 1e-9, `T ${T} token ${r.token}: ${r.logprob}`);
      }
      // the frequencies are exp(logprob): the recorded log-probs are of the sampled distribution
      counts.forEach((c, t) =>
        assert.ok(Math.abs(c / 4000 - Math.exp(t / T - lseT)) < 0.03, `T ${T} token ${t}: ${c / 4000}`),
      );
      // truncation and grammar masks do not change the recorded distribution (they are not part of the scored policy)
      const masked = sampleToken(logits, { temperature: T, topP: 1, topK: 0, allowed: [1] }, rng);
      assert.equal(masked.token, 1);
      assert.ok(Math.abs(masked.logprob - (1 / T - lseT)) < 1e-9);
    }
    // greedy records the model's own (temperature 1) log-prob
    const lse = Math.log([0, 1, 2, 3, 4].reduce((s, x) => s + Math.exp(x), 0));
    assert.ok(Math.abs(sampleToken(logits, { temperature: 0, topP: 1, topK: 0 }, rng).logprob - (4 - lse)) < 1e-9);
  });

  it("recomputes the sampler's log-probs at its temperature (and differs from them at temperature 1)", async () => {
    const [s] = await generateIds(m, prompt, { maxNewTokens: 8, seed: 4, temperature: 0.4, eosTokenIds: [] });
    const pair = { promptIds: prompt, completionIds: s!.tokenIds };
    const [atT] = await recomputeLogprobs(m, [{ ...pair, temperature: 0.4 }, pair]);
    atT!.forEach((lp, i) => assert.ok(Math.abs(lp - s!.logprobs[i]!) < 1e-4, `token ${i}: ${lp} vs ${s!.logprobs[i]}`));
    const [, atOne] = await recomputeLogprobs(m, [{ ...pair, temperature: 0.4 }, pair]);
    assert.ok(
      atOne!.some((lp, i) => Math.abs(lp - s!.logprobs[i]!) > 1e-2),
      'temperature 1 scores another distribution',
    );
    await assert.rejects(
      recomputeLogprobs(m, [{ ...pair, temperature: 0 }]),
      /row 0 has temperature 0; it must be positive/,
    );
  });

  it('stops after a stop string (kept in the text) and on EOS', async () => {
    const grammarish = await generateIds(m, prompt, {
      maxNewTokens: 12,
      n: 4,
      seed: 3,
      temperature: 1,
      tokenizer: tok,
      grammar: { kind: 'regex', pattern: '[ab]{3}x.*' },
      stop: ['x'],
    });
    for (const s of grammarish) {
      assert.match(s.text, /^[ab]{3}x$/);
      assert.equal(s.finishReason, 'stop');
    }
    const forced = await generateIds(m, prompt, {
      maxNewTokens: 5,
      temperature: 1,
      seed: 2,
      tokenizer: tok,
      grammar: { kind: 'choices', choices: ['ok'] },
    });
    assert.equal(forced[0]!.text, 'ok');
    assert.equal(forced[0]!.tokenIds.at(-1), 2, 'ends with EOS once the grammar is complete');
    assert.equal(forced[0]!.finishReason, 'stop');
  });

  it('constrained decoding: choices and regex samples always parse', async () => {
    const choices = ['#### [U,R]', '#### [D]', '#### [L,L,U]'];
    const cs = await generateIds(m, prompt, {
      maxNewTokens: 20,
      n: 6,
      seed: 4,
      temperature: 1.3,
      tokenizer: tok,
      grammar: { kind: 'choices', choices },
    });
    for (const s of cs) assert.ok(choices.includes(s.text), s.text);
    const pattern = '^#### \\[(U|D|L|R)(,(U|D|L|R)){0,3}\\]$';
    const rs = await generateIds(m, prompt, {
      maxNewTokens: 24,
      n: 6,
      seed: 8,
      temperature: 1.3,
      tokenizer: tok,
      grammar: { kind: 'regex', pattern },
    });
    for (const s of rs) assert.match(s.text, new RegExp(pattern));
    const num = await generateIds(m, prompt, {
      maxNewTokens: 8,
      n: 4,
      seed: 9,
      temperature: 1,
      tokenizer: tok,
      grammar: { kind: 'regex', pattern: '\\\\boxed\\{-?\\d+\\}' },
    });
    for (const s of num) if (s.finishReason === 'stop') assert.match(s.text, /^\\boxed\{-?\d+\}$/);
  });

  it('the regex compiler supports classes, groups, counted repeats and rejects look-arounds', () => {
    const accepts = (p: string, s: string): boolean => {
      const n = compileGrammar({ kind: 'regex', pattern: p });
      return n.accepts(n.run(n.initial(), s));
    };
    assert.ok(accepts('a{2,3}b?', 'aa'));
    assert.ok(accepts('a{2,3}b?', 'aaab'));
    assert.ok(!accepts('a{2,3}b?', 'aaaa'));
    assert.ok(accepts('[^0-9\\s]+-\\w*', 'xY-_9'));
    assert.ok(accepts('(?:ab|cd)+\\.', 'abcdab.'));
    assert.ok(!accepts('(?:ab|cd)+\\.', 'abc.'));
    assert.ok(accepts('x\\ny', 'x\ny'));
    assert.ok(!accepts('.', '\n'));
    assert.throws(() => compileGrammar({ kind: 'regex', pattern: 'a(?=b)' }), GrammarError);
    assert.throws(() => compileGrammar({ kind: 'regex', pattern: '(a)\\1' }), /back-references/);
    assert.throws(() => compileGrammar({ kind: 'choices', choices: [] }), /empty/);
  });

  it('aborts between tokens with an AbortError', async () => {
    const ac = new AbortController();
    setImmediate(() => ac.abort());
    await assert.rejects(generateIds(m, prompt, { maxNewTokens: 200, seed: 1, eosTokenIds: [], signal: ac.signal }), {
      name: 'AbortError',
    });
  });

  it('is the tfjs-causal-lm contribution and answers Policy.generate requests', async () => {
    const contrib = new CausalLmPolicyContribution();
    assert.equal(contrib.id, 'tfjs-causal-lm');
    const policy = (await contrib.create(
      'shared',
      { preset: 'tiny', seed: 3 },
      { baseDir: process.cwd(), seed: 0, rng: createRng(0) },
    )) as CausalLmPolicy;
    try {
      assert.equal(policy.model.config.vocabSize, 512);
      const req = {
        messages: [{ role: 'user' as const, content: 'Which way?' }],
        n: 2,
        seed: 4,
        sampling: { temperature: 1, topP: 0.95, topK: 0, maxTokens: 12 },
        grammar: { kind: 'choices' as const, choices: ['up', 'down'] },
      };
      const [out] = await policy.generate([req]);
      assert.equal(out!.length, 2);
      for (const s of out!) {
        assert.ok(['up', 'down'].includes(s.text));
        assert.deepEqual(s.promptIds, policy.promptIds(req.messages));
        assert.equal(s.logprobs.length, s.tokenIds.length);
      }
      const [again] = await policy.generate([req]);
      assert.deepEqual(again, out);
      // requests merged by lockstep batching decode as one batch: the same samples per request (up to float rounding)
      const other = {
        ...req,
        messages: [{ role: 'user' as const, content: 'And now, which way to go?' }],
        seed: 9,
        n: 3,
      };
      const alone = [...(await policy.generate([req])), ...(await policy.generate([other]))];
      const merged = await policy.generate([req, other], { batch: true });
      assert.deepEqual(
        merged.map((r) => r.map((x) => x.text)),
        alone.map((r) => r.map((x) => x.text)),
      );
      merged
        .flat()
        .forEach((x, i) =>
          x.logprobs.forEach((lp, j) => assert.ok(Math.abs(lp - alone.flat()[i]!.logprobs[j]!) < 1e-4)),
        );
      // the sampler's log-probs (softmax at T = 1, before the grammar and top-p masks) are what the policy recomputes
      const pairs = out!.map((s) => ({ promptIds: s.promptIds, completionIds: s.tokenIds }));
      (await policy.recomputeLogprobs(pairs)).forEach((row, i) =>
        row.forEach((lp, j) => assert.ok(Math.abs(lp - out![i]!.logprobs[j]!) < 1e-4)),
      );
      await assert.rejects(
        Promise.resolve().then(() => contrib.create('bad', {}, { baseDir: '.', seed: 0, rng: createRng(0) })),
        /policies\.bad: give exactly one of 'model'/,
      );
    } finally {
      policy.dispose();
    }
  });
});
