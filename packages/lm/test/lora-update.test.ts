import assert from 'node:assert/strict';
import {
  AdamW,
  CausalLM,
  accumulatedTrainStep,
  initBackend,
  matMulUnpacked,
  oneHotF32,
  packBatch,
  tf,
  tokenLogprobs,
  type PackedBatch,
} from '@troupe/lm';
import { TINY_QWEN3 } from './helpers/tiny-config.js';

const LORA = { r: 4, alpha: 8, targetModules: ['q_proj', 'v_proj', 'down_proj'] };

/** A LoRA model on a fresh random base, its adapters' B moved off zero so that they change the output. */
function loraModel(config: Record<string, unknown>): { root: CausalLM; model: CausalLM } {
  const root = CausalLM.random(config, 5);
  const model = root.shareBase();
  model.addLora(LORA, 1);
  let s = 100;
  for (const { b } of model.lora.values()) tf.tidy(() => b.assign(tf.randomNormal(b.shape, 0, 0.5, 'float32', ++s)));
  return { root, model };
}

/** The log-probs as tokenLogprobs computed them before chunking: the full `[B, L-1, V]` logits at once. */
function fullLogprobs(model: CausalLM, packed: PackedBatch): tf.Tensor {
  const { B, L } = packed;
  const V = model.config.vocabSize;
  const ids = tf.tensor2d(packed.ids, [B, L], 'int32');
  const scored = model.forward(ids).logits.slice([0, 0, 0], [B, L - 1, V]);
  const lp = tf.logSoftmax(scored.div(tf.tensor3d(Array.from(packed.temperatures), [B, 1, 1])));
  return lp.mul(oneHotF32(ids.slice([0, 1], [B, L - 1]).reshape([-1]), V).reshape([B, L - 1, V])).sum(-1);
}

/** The advantage-weighted log-prob sum's value, log-probs and adapter gradients (as the PPO update takes them). */
function gradients(model: CausalLM, packed: PackedBatch, lp: () => tf.Tensor) {
  const w = tf.tensor2d(
    Float32Array.from({ length: packed.B * (packed.L - 1) }, (_, i) => ((i * 7) % 5) - 2),
    [packed.B, packed.L - 1],
  );
  const { value, grads } = tf.variableGrads(
    () => tf.tidy(() => lp().mul(w).sum() as tf.Scalar),
    model.trainableVariables(),
  );
  const out = {
    loss: value.dataSync()[0]!,
    grads: model.trainableVariables().map((v) => Array.from(grads[v.name]!.dataSync())),
    logprobs: tf.tidy(() => Array.from(lp().dataSync())),
  };
  tf.dispose([value, w, ...Object.values(grads)]);
  return out;
}

function maxAbsDiff(a: readonly number[], b: readonly number[]): number {
  assert.equal(a.length, b.length);
  return a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0);
}

const PACKED = packBatch([
  { promptIds: [1, 4, 7], completionIds: [9, 16, 25], temperature: 0.7 },
  { promptIds: [1, 5], completionIds: [8, 13, 21, 34] },
]);

describe('a LoRA update that fits the wasm heap', () => {
  before(async () => {
    await initBackend({ backend: 'wasm' });
  });

  it('matMulUnpacked gives tf.matMul’s values and leaves no tensor behind', () => {
    const a = tf.randomNormal([40, 64], 0, 1, 'float32', 1);
    const b = tf.randomNormal([64, 48], 0, 1, 'float32', 2);
    try {
      const before = tf.memory().numTensors;
      const want = tf.tidy(() => tf.matMul(a as tf.Tensor2D, b as tf.Tensor2D).dataSync());
      for (let i = 0; i < 3; i++) {
        const got = tf.tidy(() => matMulUnpacked(a, b).dataSync());
        assert.deepEqual(got, want, `call ${i}: the same values`);
      }
      assert.equal(tf.memory().numTensors, before);
    } finally {
      tf.dispose([a, b]);
    }
  });

  it('log-probs through the head a chunk of rows at a time equal the full logits’, values and gradients bitwise', () => {
    for (const tie of [true, false]) {
      const { root, model } = loraModel({ ...TINY_QWEN3, tie_word_embeddings: tie });
      try {
        const want = gradients(model, PACKED, () => fullLogprobs(model, PACKED));
        const whole = gradients(model, PACKED, () => tokenLogprobs(model, PACKED));
        // 3 rows a chunk: 2 × 6 shifted positions in 4 chunks, the last one short
        const chunked = gradients(model, PACKED, () => {
          const { B, L } = PACKED;
          const ids = tf.tensor2d(PACKED.ids, [B, L], 'int32');
          const { hidden } = model.hidden(ids);
          const D = hidden.shape[2]!;
          const temps = Float32Array.from(
            { length: B * (L - 1) },
            (_, i) => PACKED.temperatures[Math.floor(i / (L - 1))]!,
          );
          const x = hidden.slice([0, 0, 0], [B, L - 1, D]).reshape([-1, D]);
          return model.headLogprobs(x, ids.slice([0, 1], [B, L - 1]).reshape([-1]), temps, 3).reshape([B, L - 1]);
        });
        for (const [name, got] of [
          ['tokenLogprobs', whole],
          ['3-row chunks', chunked],
        ] as const) {
          assert.deepEqual(got.logprobs, want.logprobs, `tied=${tie} ${name}: log-probs`);
          assert.equal(got.loss, want.loss, `tied=${tie} ${name}: loss`);
          got.grads.forEach((g, i) => assert.deepEqual(g, want.grads[i], `tied=${tie} ${name}: adapter gradient ${i}`));
        }
        assert.ok(
          want.grads.some((g) => g.some((x) => x !== 0)),
          'non-zero gradients',
        );
      } finally {
        model.dispose();
        root.dispose();
      }
    }
  });

  it('low-memory mode keeps the log-probs, gradients and AdamW steps, with less memory and no tensor left behind', async () => {
    // 4 layers, 32 tokens: enough intermediates per layer for the recomputation to show in the peak
    const config = { ...TINY_QWEN3, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 4, head_dim: 16 };
    const long = packBatch([
      { promptIds: [1, 4, 7, 3], completionIds: Array.from({ length: 28 }, (_, j) => (j * 37 + 11) % 300) },
    ]);
    for (const tie of [true, false]) {
      const { root, model } = loraModel({ ...config, tie_word_embeddings: tie });
      try {
        assert.equal(model.lowMemory, false, 'off by default for a small base');
        const run = async () => {
          const grads = gradients(model, long, () => tokenLogprobs(model, long));
          const info = await tf.profile(() => {
            const { value, grads: g } = tf.variableGrads(
              () => tf.tidy(() => tokenLogprobs(model, long).sum() as tf.Scalar),
              model.trainableVariables(),
            );
            tf.dispose([value, ...Object.values(g)]);
          });
          return {
            ...grads,
            peak: info.peakBytes,
            matmuls: info.kernels.filter((k) => k.name === 'BatchMatMul').length,
          };
        };
        const normal = await run();
        model.lowMemory = true;
        assert.ok(root.lowMemory, 'the setting is the shared base’s');
        const tensors = tf.memory().numTensors;
        const lean = await run();
        assert.equal(tf.memory().numTensors, tensors, `tied=${tie}: no tensor left behind by the recomputed layers`);
        assert.ok(maxAbsDiff(lean.logprobs, normal.logprobs) <= 1e-6, `tied=${tie}: log-probs`);
        lean.grads.forEach((g, i) =>
          assert.ok(
            maxAbsDiff(g, normal.grads[i]!) <= 1e-6 * Math.max(1, ...normal.grads[i]!.map(Math.abs)),
            `tied=${tie}: adapter gradient ${i}`,
          ),
        );
        assert.ok(
          lean.matmuls > normal.matmuls,
          `tied=${tie}: the layers run again in the backward pass (${lean.matmuls} > ${normal.matmuls} matmuls)`,
        );
        assert.ok(
          lean.peak < normal.peak,
          `tied=${tie}: lower peak tensor memory (${lean.peak} < ${normal.peak} bytes)`,
        );
        // a tied head keeps no transposed copy of the embedding: a forward pass leaves no tensor behind
        const before = tf.memory().numTensors;
        tf.tidy(() => {
          model.forward(tf.tensor2d([[1, 2, 3]], [1, 3], 'int32'));
        });
        assert.equal(tf.memory().numTensors, before, `tied=${tie}: no kept tensor`);
        // one AdamW step each way: the same adapters after it
        const step = (lowMemory: boolean): number[][] => {
          const { root: r, model: m } = loraModel({ ...config, tie_word_embeddings: tie });
          try {
            m.lowMemory = lowMemory;
            const opt = new AdamW(m.trainableVariables(), { lr: 1e-2, maxGradNorm: 1 });
            accumulatedTrainStep(opt, [() => tokenLogprobs(m, long).sum().neg() as tf.Scalar]);
            opt.dispose();
            return m.trainableVariables().map((v) => Array.from(v.dataSync()));
          } finally {
            m.dispose();
            r.dispose();
          }
        };
        const [a, b] = [step(false), step(true)];
        a.forEach((v, i) => assert.ok(maxAbsDiff(v, b[i]!) <= 1e-6, `tied=${tie}: adapter ${i} after a step`));
      } finally {
        model.dispose();
        root.dispose();
      }
    }
  });
});
