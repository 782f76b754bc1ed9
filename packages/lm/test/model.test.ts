import assert from 'node:assert/strict';
import {
  CausalLM,
  presetHfConfig,
  parseHfConfig,
  parameterShapes,
  initBackend,
  tf,
  generateIds,
  generateBatch,
  recomputeLogprobs,
  AdamW,
  lrAt,
  packBatch,
  scatterToLayout,
  tokenLogprobs,
  trainStep,
  ropeInvFreq,
  type SequencePair,
} from '@troupe/lm';

/** A small GQA config (4 query heads on 2 kv heads) so the suite stays fast. */
function micro(modelType: 'qwen3' | 'qwen2' | 'llama', tie = false): Record<string, unknown> {
  return {
    model_type: modelType,
    vocab_size: 64,
    hidden_size: 32,
    intermediate_size: 48,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: 8,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    tie_word_embeddings: tie,
    attention_bias: modelType === 'qwen2',
    eos_token_id: 2,
    bos_token_id: 1,
  };
}

/**
 * One AdamW step on the token-mean negative log-likelihood of the completions: a training step of the model's own ops
 * (the trainer's losses are tested with @troupe/trainer).
 */
function nllStep(m: CausalLM, opt: AdamW, pairs: readonly SequencePair[]): { loss: number; gradNorm: number } {
  const packed = packBatch(pairs);
  const shape: [number, number] = [packed.B, packed.L - 1];
  return trainStep(opt, () => {
    const mask = tf.tensor2d(packed.mask, shape);
    return tokenLogprobs(m, packed).mul(mask).sum().div(mask.sum()).neg() as tf.Scalar;
  });
}

function maxAbsDiff(a: Float32Array | number[], b: Float32Array | number[]): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe('causal LM', () => {
  before(async () => {
    await initBackend();
  });

  it('presets have the shapes and parameter counts of torch_ref.py', () => {
    // counts printed by `torch_ref.py make-checkpoint` for the tiny preset
    const expected: [Record<string, unknown>, number][] = [
      [{}, 984448],
      [{ model_type: 'qwen2' }, 985728],
      [{ model_type: 'llama' }, 984192],
      [{ tie_word_embeddings: true }, 918912],
    ];
    for (const [over, n] of expected) {
      const c = parseHfConfig(presetHfConfig('tiny', over));
      assert.equal(
        parameterShapes(c).reduce((s, [, sh]) => s + sh.reduce((a, b) => a * b, 1), 0),
        n,
        JSON.stringify(over),
      );
    }
    const small = parseHfConfig(presetHfConfig('small'));
    assert.deepEqual(
      [small.vocabSize, small.hiddenSize, small.numLayers, small.numHeads, small.numKvHeads, small.headDim],
      [2048, 256, 6, 8, 4, 32],
    );
  });

  it('rejects unknown model types and inconsistent head counts, naming the key', () => {
    assert.throws(
      () => parseHfConfig({ ...micro('qwen3'), model_type: 'gpt2' }, 'x/config.json'),
      /x\/config.json: unknown model_type "gpt2"/,
    );
    assert.throws(
      () => parseHfConfig({ ...micro('qwen3'), num_key_value_heads: 3 }),
      /num_attention_heads \(4\) must be a multiple of num_key_value_heads \(3\)/,
    );
    assert.throws(
      () => parseHfConfig({ ...micro('llama'), hidden_size: undefined }),
      /'hidden_size' must be a number \(missing\)/,
    );
    assert.throws(
      () => parseHfConfig({ ...micro('llama'), rope_scaling: { rope_type: 'yarn', factor: 4 } }),
      /rope_scaling of type "yarn" is not supported/,
    );
  });

  it('RoPE scaling: linear divides the frequencies; llama3 keeps high and divides low frequencies', () => {
    const base = ropeInvFreq(64, 500000);
    const lin = ropeInvFreq(64, 500000, { type: 'linear', factor: 4 });
    base.forEach((f, i) => assert.ok(Math.abs(lin[i]! - f / 4) < 1e-12));
    const l3 = ropeInvFreq(64, 500000, {
      type: 'llama3',
      factor: 8,
      lowFreqFactor: 1,
      highFreqFactor: 4,
      originalMaxPositionEmbeddings: 8192,
    });
    assert.equal(l3[0], base[0]); // wavelength 2π < 8192/4: unchanged
    assert.ok(Math.abs(l3[31]! - base[31]! / 8) < 1e-12); // longest wavelength > 8192: divided by the factor
    const cfg = parseHfConfig({
      ...micro('llama'),
      rope_scaling: {
        rope_type: 'llama3',
        factor: 8,
        low_freq_factor: 1,
        high_freq_factor: 4,
        original_max_position_embeddings: 8192,
      },
    });
    assert.equal(cfg.ropeScaling?.type, 'llama3');
  });

  for (const [mt, tie] of [
    ['qwen3', false],
    ['qwen2', false],
    ['llama', true],
  ] as const) {
    it(`${mt}${tie ? ' (tied)' : ''}: decoding with the KV cache gives the logits of the full forward pass`, () => {
      const m = CausalLM.random(micro(mt, tie), 3);
      try {
        const ids = [
          [5, 9, 11, 3, 7, 20],
          [1, 2, 3, 4, 5, 6],
        ];
        const full = tf.tidy(() => m.forward(tf.tensor2d(ids, [2, 6], 'int32')).logits.arraySync() as number[][][]);
        const inc: number[][][] = [[], []];
        let cache = tf.tidy(() => {
          const o = m.forward(
            tf.tensor2d(
              ids.map((r) => r.slice(0, 3)),
              [2, 3],
              'int32',
            ),
            { cache: [] },
          );
          const l = o.logits.arraySync() as number[][][];
          for (let b = 0; b < 2; b++) inc[b]!.push(...l[b]!);
          return o.cache!.map((c) => ({ k: tf.keep(c.k), v: tf.keep(c.v) }));
        });
        for (let t = 3; t < 6; t++) {
          const prev = cache;
          cache = tf.tidy(() => {
            const o = m.forward(
              tf.tensor2d(
                ids.map((r) => [r[t]!]),
                [2, 1],
                'int32',
              ),
              { cache: prev },
            );
            const l = o.logits.arraySync() as number[][][];
            for (let b = 0; b < 2; b++) inc[b]!.push(l[b]![0]!);
            return o.cache!.map((c) => ({ k: tf.keep(c.k), v: tf.keep(c.v) }));
          });
          for (const c of prev) {
            c.k.dispose();
            c.v.dispose();
          }
        }
        for (const c of cache) {
          c.k.dispose();
          c.v.dispose();
        }
        assert.ok(maxAbsDiff(full.flat(2), inc.flat(2)) < 1e-4);
        // causality: changing a later token leaves earlier logits unchanged
        const alt = tf.tidy(
          () => m.forward(tf.tensor2d([[5, 9, 11, 3, 7, 21]], [1, 6], 'int32')).logits.arraySync() as number[][][],
        );
        assert.ok(maxAbsDiff(alt[0]!.slice(0, 5).flat(), full[0]!.slice(0, 5).flat()) < 1e-5);
      } finally {
        m.dispose();
      }
    });
  }

  it('generation log-probs equal recomputed log-probs; a training step on the completion raises its log-prob', async () => {
    const m = CausalLM.random(micro('qwen3'), 1);
    try {
      const prompt = [1, 10, 11, 12];
      const [s] = await generateIds(m, prompt, { maxNewTokens: 6, temperature: 1, seed: 7, eosTokenIds: [] });
      const [re] = await recomputeLogprobs(m, [{ promptIds: prompt, completionIds: s!.tokenIds }]);
      assert.ok(maxAbsDiff(re!, s!.logprobs) < 1e-4);
      const opt = new AdamW(m.trainableVariables(), { lr: 1e-2, maxGradNorm: 1 });
      const pair = { promptIds: prompt, completionIds: s!.tokenIds };
      const before = re!.reduce((a, b) => a + b, 0);
      for (let i = 0; i < 3; i++) {
        const r = nllStep(m, opt, [pair]);
        assert.ok(Number.isFinite(r.loss) && r.gradNorm > 0);
      }
      const after = (await recomputeLogprobs(m, [pair]))[0]!.reduce((a, b) => a + b, 0);
      assert.ok(after > before + 0.1, `log-prob ${before} -> ${after}`);
      opt.dispose();
    } finally {
      m.dispose();
    }
  });

  it('an optimizer and a model leave no tensor behind once disposed', () => {
    const before = tf.memory().numTensors;
    const m = CausalLM.random(micro('qwen3'), 4);
    const opt = new AdamW(m.trainableVariables(), { lr: 1e-3 });
    opt.dispose();
    m.dispose();
    assert.equal(tf.memory().numTensors, before);
  });

  it('keeps tf.memory().numTensors flat across 50 training steps and 50 generations', async () => {
    const m = CausalLM.random(micro('qwen2'), 2);
    const opt = new AdamW(m.trainableVariables(), { lr: 1e-3, maxGradNorm: 1, weightDecay: 0.01 });
    const pairs = [
      { promptIds: [1, 5, 6], completionIds: [7, 8, 2] },
      { promptIds: [1, 9], completionIds: [10] },
    ];
    try {
      nllStep(m, opt, pairs);
      await generateIds(m, [1, 3, 4], { maxNewTokens: 4, n: 3, seed: 0 });
      const start = tf.memory().numTensors;
      for (let i = 0; i < 50; i++) nllStep(m, opt, pairs);
      assert.equal(tf.memory().numTensors, start, 'after training steps');
      for (let i = 0; i < 50; i++) {
        if (i % 2) await generateIds(m, [1, 3, 4 + (i % 5)], { maxNewTokens: 4, n: 1 + (i % 3), seed: i });
        else
          await generateBatch(m, [
            { promptIds: [1, 3], options: { maxNewTokens: 3, n: 2, seed: i } },
            { promptIds: [1, 5, 6, 7], options: { maxNewTokens: 4, seed: i } },
          ]);
      }
      assert.equal(tf.memory().numTensors, start, 'after generations');
      const ac = new AbortController();
      ac.abort();
      await assert.rejects(generateIds(m, [1, 3], { maxNewTokens: 4, signal: ac.signal }), { name: 'AbortError' });
      assert.equal(tf.memory().numTensors, start, 'after an aborted generation');
    } finally {
      opt.dispose();
      m.dispose();
    }
  });

  it('LoRA: fresh adapters leave outputs unchanged; training moves only the adapters', async () => {
    const m = CausalLM.random(micro('llama'), 4);
    try {
      const ids = [[1, 4, 9, 16, 25]];
      const base = tf.tidy(() =>
        m
          .forward(tf.tensor2d(ids, [1, 5], 'int32'))
          .logits.dataSync()
          .slice(),
      );
      const q0 = m.params.get('model.layers.0.self_attn.q_proj.weight')!.dataSync().slice();
      m.addLora({ r: 4, alpha: 8, targetModules: ['q_proj', 'v_proj'] }, 1);
      assert.equal(m.lora.size, 4);
      assert.equal(m.trainableVariables().length, 8);
      const same = tf.tidy(() =>
        m
          .forward(tf.tensor2d(ids, [1, 5], 'int32'))
          .logits.dataSync()
          .slice(),
      );
      assert.ok(maxAbsDiff(base as Float32Array, same as Float32Array) < 1e-6);
      const opt = new AdamW(m.trainableVariables(), { lr: 1e-2 });
      for (let i = 0; i < 2; i++) nllStep(m, opt, [{ promptIds: [1, 4], completionIds: [9, 16] }]);
      opt.dispose();
      const moved = tf.tidy(() =>
        m
          .forward(tf.tensor2d(ids, [1, 5], 'int32'))
          .logits.dataSync()
          .slice(),
      );
      assert.ok(maxAbsDiff(base as Float32Array, moved as Float32Array) > 1e-4, 'adapters changed the output');
      assert.deepEqual(m.params.get('model.layers.0.self_attn.q_proj.weight')!.dataSync(), q0, 'base frozen');
      assert.throws(() => m.addLora({ r: 2, alpha: 2, targetModules: ['q_proj'] }), /already attached/);
      m.removeLora();
      assert.throws(() => m.addLora({ r: 2, alpha: 2, targetModules: ['nope'] }), /match no linear module/);
    } finally {
      m.dispose();
    }
  });

  it('packs pairs right-padded in the shifted layout and scatters per-row values onto their completion tokens', () => {
    const packed = packBatch([
      { promptIds: [1, 2], completionIds: [3, 4] },
      { promptIds: [1], completionIds: [5] },
    ]);
    assert.equal(packed.L, 4);
    assert.deepEqual(Array.from(packed.mask), [0, 1, 1, 1, 0, 0]);
    assert.deepEqual(Array.from(scatterToLayout(packed, [2, -1])), [0, 2, 2, -1, 0, 0]);
  });

  it('learning-rate schedules: warmup, linear and cosine decay', () => {
    assert.equal(lrAt({ kind: 'constant', lr: 1, warmupSteps: 4 }, 0), 0.25);
    assert.equal(lrAt({ kind: 'constant', lr: 1, warmupSteps: 4 }, 10), 1);
    assert.equal(lrAt({ kind: 'linear', lr: 1, totalSteps: 10 }, 5), 0.5);
    assert.ok(Math.abs(lrAt({ kind: 'cosine', lr: 1, totalSteps: 10, minLr: 0.1 }, 5) - 0.55) < 1e-12);
    assert.equal(lrAt({ kind: 'cosine', lr: 1, totalSteps: 10 }, 20), 0);
    assert.throws(() => lrAt({ kind: 'linear', lr: 1 }, 3), /needs totalSteps/);
  });
});
