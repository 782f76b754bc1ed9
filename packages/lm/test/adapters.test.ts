import assert from 'node:assert/strict';
import {
  AdamW,
  CausalLM,
  SharedBaseBatcher,
  generateBatch,
  initBackend,
  packBatch,
  tf,
  tokenLogprobs,
  trainStep,
  type GenerationItem,
} from '@troupe/lm';
import { CausalLmPolicy, createCausalLmPolicy } from '@troupe/lm';
import { LockstepBatcher, type GenerationRequest } from '@troupe/kernel';
import { TINY_QWEN3 } from './helpers/tiny-config.js';

const LORA = { r: 4, alpha: 8, targetModules: ['q_proj', 'v_proj', 'down_proj'] };

/** A model sharing `root`'s base with its own adapters, B moved off zero so that each adapter changes the output. */
function adapterOn(root: CausalLM, seed: number): CausalLM {
  const m = root.shareBase();
  m.addLora(LORA, seed);
  let s = seed * 100;
  for (const { b } of m.lora.values()) tf.tidy(() => b.assign(tf.randomNormal(b.shape, 0, 0.5, 'float32', ++s)));
  return m;
}

function values(x: tf.Variable): Float32Array {
  return (x.dataSync() as Float32Array).slice();
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe('LoRA adapters on one shared base', () => {
  before(async () => {
    await initBackend();
  });

  it('shares the base tensors, keeps adapters apart, and frees the base with the last model', () => {
    const before = tf.memory().numTensors;
    const root = CausalLM.random(TINY_QWEN3, 5);
    const a = adapterOn(root, 1);
    const b = adapterOn(root, 2);
    assert.equal(a.params, root.params, 'one Map of base variables');
    assert.equal(a.params.get('model.norm.weight'), b.params.get('model.norm.weight'));
    assert.ok(a.sharesBaseWith(b) && a.baseShared);
    assert.notEqual(a.lora.get('model.layers.0.self_attn.q_proj'), b.lora.get('model.layers.0.self_attn.q_proj'));
    assert.equal(a.baseBytes(), root.numParams() * 4);
    assert.equal(
      a.adapterBytes(),
      a.trainableVariables().reduce((n, v) => n + v.size * 4, 0),
    );
    const bare = root.shareBase();
    assert.throws(() => bare.trainableVariables(), /only LoRA adapters train/);
    assert.throws(() => bare.assignTensors(root.exportTensors(), 'x'), /x: this model shares its base weights/);
    bare.dispose();
    root.dispose();
    a.dispose();
    const norm = b.params.get('model.norm.weight')!;
    assert.equal(norm.isDisposed, false, 'the base lives while a model holds it');
    b.dispose();
    assert.equal(norm.isDisposed, true);
    assert.equal(tf.memory().numTensors, before, 'no tensor left behind');
  });

  it('one forward pass over rows of different adapters equals each adapter alone', () => {
    const root = CausalLM.random(TINY_QWEN3, 5);
    const a = adapterOn(root, 1);
    const b = adapterOn(root, 2);
    try {
      const ids = [
        [3, 9, 27, 81],
        [4, 8, 15, 16],
        [23, 42, 5, 6],
      ];
      const V = TINY_QWEN3.vocab_size;
      const alone = (m: CausalLM, row: number[]): Float32Array =>
        tf.tidy(() => m.forward(tf.tensor2d([row], [1, 4], 'int32')).logits.dataSync() as Float32Array);
      const mixed = tf.tidy(
        () =>
          root
            .forward(tf.tensor2d(ids, [3, 4], 'int32'), { rowAdapters: [a, b, root] })
            .logits.dataSync() as Float32Array,
      );
      // two more adapters of other ranks, each on a module of its own: the stack's columns and row masks differ per
      // module (gate_proj: c's alone, up_proj: d's alone)
      const c = root.shareBase();
      const d = root.shareBase();
      c.addLora({ r: 3, alpha: 5, targetModules: ['v_proj', 'gate_proj'] }, 9);
      d.addLora({ r: 2, alpha: 2, targetModules: ['up_proj'] }, 8);
      for (const m of [c, d])
        for (const { b: bm } of m.lora.values())
          tf.tidy(() => bm.assign(tf.randomNormal(bm.shape, 0, 0.5, 'float32', 4)));
      const mixed4 = tf.tidy(
        () =>
          root
            .forward(tf.tensor2d([ids[0]!, ids[1]!, ids[2]!, ids[2]!], [4, 4], 'int32'), { rowAdapters: [c, a, d, b] })
            .logits.dataSync() as Float32Array,
      );
      [alone(c, ids[0]!), alone(a, ids[1]!), alone(d, ids[2]!), alone(b, ids[2]!)].forEach((w, r) =>
        assert.ok(maxAbsDiff(mixed4.subarray(r * 4 * V, (r + 1) * 4 * V), w) < 1e-5, `four adapters: row ${r}`),
      );
      c.dispose();
      d.dispose();
      const want = [alone(a, ids[0]!), alone(b, ids[1]!), alone(root, ids[2]!)];
      want.forEach((w, r) => assert.ok(maxAbsDiff(mixed.subarray(r * 4 * V, (r + 1) * 4 * V), w) < 1e-5, `row ${r}`));
      assert.ok(maxAbsDiff(want[0]!, alone(b, ids[0]!)) > 1e-3, 'the adapters differ');
      const stranger = CausalLM.random(TINY_QWEN3, 5);
      assert.throws(
        () => tf.tidy(() => root.forward(tf.tensor2d([ids[0]!], [1, 4], 'int32'), { rowAdapters: [stranger] })),
        /rowAdapters\[0\] does not share this model's base/,
      );
      stranger.dispose();
    } finally {
      for (const m of [a, b, root]) m.dispose();
    }
  });

  it('decodes prompts of two adapters in one batch with the tokens and log-probs of each alone', async () => {
    const root = CausalLM.random(TINY_QWEN3, 5);
    const a = adapterOn(root, 1);
    const b = adapterOn(root, 2);
    try {
      const item = (promptIds: number[], seed: number): GenerationItem => ({
        promptIds,
        options: { maxNewTokens: 6, n: 3, seed, temperature: 1.3, eosTokenIds: [] },
      });
      const ia = [item([1, 5, 9], 11), item([1, 7], 12)];
      const ib = [item([1, 5, 9, 13, 2], 21), item([1, 6, 6], 22)];
      const aloneA = await generateBatch(a, ia);
      const aloneB = await generateBatch(b, ib);
      const tensors = tf.memory().numTensors;
      const together = await generateBatch(root, [
        ...ia.map((it) => ({ ...it, adapter: a })),
        ...ib.map((it) => ({ ...it, adapter: b })),
      ]);
      assert.equal(tf.memory().numTensors, tensors, 'the decode freed its cache and stacked adapters');
      const want = [...aloneA, ...aloneB];
      let worst = 0;
      together.forEach((samples, i) =>
        samples.forEach((s, j) => {
          assert.deepEqual(s.tokenIds, want[i]![j]!.tokenIds, `item ${i} sample ${j}`);
          worst = Math.max(worst, maxAbsDiff(s.logprobs, want[i]![j]!.logprobs));
        }),
      );
      assert.ok(worst < 1e-4, `log-probs within 1e-4 (max gap ${worst})`);
      const otherA = await generateBatch(b, ia);
      assert.notDeepEqual(
        otherA.map((g) => g.map((s) => s.tokenIds)),
        aloneA.map((g) => g.map((s) => s.tokenIds)),
        'adapter b samples other tokens',
      );
    } finally {
      for (const m of [a, b, root]) m.dispose();
    }
  });

  it('merges the calls of one event-loop turn into one decode, one call per adapter per batch', async () => {
    const root = CausalLM.random(TINY_QWEN3, 5);
    const a = adapterOn(root, 1);
    const b = adapterOn(root, 2);
    try {
      const batcher = new SharedBaseBatcher(root);
      const items = (seed: number): GenerationItem[] => [
        { promptIds: [1, 4, seed], options: { maxNewTokens: 4, n: 2, seed, eosTokenIds: [] } },
      ];
      const [ra, rb, ra2] = await Promise.all([
        batcher.generate(a, items(3)),
        batcher.generate(b, items(4)),
        batcher.generate(a, items(5)),
      ]);
      assert.deepEqual(batcher.stats, { batches: 2, calls: 3 }, 'a and b together, a’s second call after');
      assert.deepEqual(ra, await generateBatch(a, items(3)));
      assert.deepEqual(
        rb!.map((g) => g.map((s) => s.tokenIds)),
        (await generateBatch(b, items(4))).map((g) => g.map((s) => s.tokenIds)),
      );
      assert.deepEqual(ra2![0]!.length, 2);
      // an aborted caller is answered at once; the other's decode goes on
      const ctl = new AbortController();
      const pa = batcher.generate(a, items(3), { signal: ctl.signal });
      const pb = batcher.generate(b, items(4));
      ctl.abort();
      await assert.rejects(pa, { name: 'AbortError' });
      assert.deepEqual(
        (await pb).map((g) => g.map((s) => s.tokenIds)),
        rb!.map((g) => g.map((s) => s.tokenIds)),
      );
    } finally {
      for (const m of [a, b, root]) m.dispose();
    }
  });

  it('a frozen base gives the adapters the same gradients without computing the base’s own', async () => {
    for (const tie of [true, false]) {
      const root = CausalLM.random({ ...TINY_QWEN3, tie_word_embeddings: tie }, 5);
      const a = adapterOn(root, 1);
      try {
        const packed = packBatch([
          { promptIds: [1, 4, 7], completionIds: [9, 16, 25] },
          { promptIds: [1, 5], completionIds: [8, 13, 21, 34] },
        ]);
        const grads = (frozenBase: boolean): Float32Array[] => {
          const { value, grads: g } = tf.variableGrads(
            () =>
              tf.tidy(() => {
                const ids = tf.tensor2d(packed.ids, [packed.B, packed.L], 'int32');
                const { logits } = a.forward(ids, { frozenBase });
                return tf.logSoftmax(logits).mean().neg() as tf.Scalar;
              }),
            a.trainableVariables(),
          );
          value.dispose();
          const out = a.trainableVariables().map((v) => (g[v.name]!.dataSync() as Float32Array).slice());
          for (const t of Object.values(g)) t.dispose();
          return out;
        };
        /** Matmul kernels a forward + backward pass runs. */
        const matmuls = async (frozenBase: boolean): Promise<number> => {
          const info = await tf.profile(() => {
            const { value, grads: g } = tf.variableGrads(() => {
              const ids = tf.tensor2d(packed.ids, [packed.B, packed.L], 'int32');
              return a.forward(ids, { frozenBase }).logits.mean() as tf.Scalar;
            }, a.trainableVariables());
            value.dispose();
            for (const t of Object.values(g)) t.dispose();
          });
          return info.kernels.filter((k) => k.name === 'BatchMatMul').length;
        };
        const frozen = grads(true);
        const full = grads(false);
        frozen.forEach((g, i) => assert.deepEqual(g, full[i], `tied=${tie}: adapter gradient ${i} bitwise equal`));
        assert.ok(
          frozen.some((g) => g.some((x) => x !== 0)),
          'non-zero gradients',
        );
        const [mf, mu] = [await matmuls(true), await matmuls(false)];
        assert.ok(mf < mu, `tied=${tie}: fewer matmuls with a frozen base (${mf} < ${mu}): no base weight gradients`);
      } finally {
        a.dispose();
        root.dispose();
      }
    }
  });

  it('a gradient step of one adapter leaves the other adapter and the base bitwise unchanged', () => {
    const root = CausalLM.random(TINY_QWEN3, 5);
    const a = adapterOn(root, 1);
    const b = adapterOn(root, 2);
    try {
      const baseBefore = [...root.params.values()].map(values);
      const bBefore = b.trainableVariables().map(values);
      const aBefore = a.trainableVariables().map(values);
      const opt = new AdamW(a.trainableVariables(), { lr: 1e-2 });
      const packed = packBatch([{ promptIds: [1, 4], completionIds: [9, 16, 25] }]);
      trainStep(opt, () => {
        const mask = tf.tensor2d(packed.mask, [packed.B, packed.L - 1]);
        return tokenLogprobs(a, packed).mul(mask).sum().neg() as tf.Scalar;
      });
      opt.dispose();
      [...root.params.values()].forEach((v, i) => assert.deepEqual(values(v), baseBefore[i], `base ${v.name}`));
      b.trainableVariables().forEach((v, i) => assert.deepEqual(values(v), bBefore[i], 'adapter b'));
      assert.ok(
        a.trainableVariables().some((v, i) => maxAbsDiff(values(v), aBefore[i]!) > 0),
        'adapter a moved',
      );
    } finally {
      for (const m of [a, b, root]) m.dispose();
    }
  });

  it('LoRA policies of one base hold it once and answer a lockstep step in one batched decode', async () => {
    const ctx = { baseDir: process.cwd(), seed: 0 };
    const cfg = { preset: 'tiny' as const, seed: 3, lora: { r: 2, alpha: 4, targetModules: ['q_proj', 'v_proj'] } };
    const req = (seed: number): GenerationRequest => ({
      messages: [{ role: 'user', content: `plan ${seed}` }],
      sampling: { temperature: 1, topP: 1, topK: 0, maxTokens: 5 },
      n: 2,
      seed,
    });
    const make = async (name: string, lr: number, c: object = cfg): Promise<CausalLmPolicy> => {
      const p = await createCausalLmPolicy(name, c, ctx);
      for (const { b } of p.model.lora.values()) tf.tidy(() => b.assign(tf.randomNormal(b.shape, 0, lr, 'float32', 7)));
      return p;
    };
    const planner = await make('planner', 0.3);
    const coder = await make('coder', 0.6);
    const full = await createCausalLmPolicy('full', { preset: 'tiny', seed: 3 }, ctx);
    try {
      assert.ok(planner.model.sharesBaseWith(coder.model), 'one base for both LoRA policies');
      assert.ok(!full.model.sharesBaseWith(planner.model), 'a full-model policy keeps its own weights');
      assert.deepEqual(planner.memory().sharedWith, ['planner', 'coder']);
      assert.equal(planner.memory().base, planner.model.numParams() * 4);
      // a lockstep step where one episode waits on each role: both calls in one decode
      const lockstep = new LockstepBatcher(2, 2);
      const batcher = planner.settings.sharedBase!.batcher;
      const before = { ...batcher.stats };
      const [outP, outC] = await Promise.all([
        lockstep.wrap(0, planner).generate([req(1), req(2)]),
        lockstep.wrap(1, coder).generate([req(3)]),
      ]);
      assert.deepEqual(batcher.stats, { batches: before.batches + 1, calls: before.calls + 2 });
      // the same tokens as each policy's own batched call, log-probs within float rounding
      const ownP = await generateBatchOf(planner, [req(1), req(2)]);
      const ownC = await generateBatchOf(coder, [req(3)]);
      for (const [got, want] of [
        [outP, ownP],
        [outC, ownC],
      ] as const) {
        assert.deepEqual(
          got.map((g) => g.map((c) => c.tokenIds)),
          want.map((g) => g.map((c) => c.tokenIds)),
        );
        got.forEach((g, i) => g.forEach((c, j) => assert.ok(maxAbsDiff(c.logprobs, want[i]![j]!.logprobs) < 1e-4)));
      }
    } finally {
      planner.dispose();
      coder.dispose();
      full.dispose();
    }
    // the last policy gave the base back: a new one loads it afresh
    const again = await make('again', 0.1);
    assert.deepEqual(again.memory().sharedWith, ['again']);
    again.dispose();
  });
});

/** A policy's own batched decode of `requests`: the same model and tokenizer in a policy without the shared base. */
function generateBatchOf(p: CausalLmPolicy, requests: GenerationRequest[]): ReturnType<CausalLmPolicy['generate']> {
  return new CausalLmPolicy(p.name, p.model, p.tokenizer).generate(requests, { batch: true });
}
