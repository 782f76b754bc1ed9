import assert from 'node:assert/strict';
import { CausalLM, generateBatch, initBackend, presetHfConfig, tf, type GenerationItem } from '@troupe/lm';
import { setDecodeKernels } from '../src/backend/wasm-kernels.js';
import { GQA_SMALL, TINY_QWEN3 } from './helpers/tiny-config.js';

/** `f` with the decode kernels off (the original tfjs-wasm kernels), then on. */
function offOn<T>(f: () => T): [T, T] {
  const was = setDecodeKernels(false);
  try {
    const off = f();
    setDecodeKernels(true);
    return [off, f()];
  } finally {
    setDecodeKernels(was);
  }
}

async function offOnAsync<T>(f: () => Promise<T>): Promise<[T, T]> {
  const was = setDecodeKernels(false);
  try {
    const off = await f();
    setDecodeKernels(true);
    return [off, await f()];
  } finally {
    setDecodeKernels(was);
  }
}

const bits = (t: tf.Tensor): number[] => Array.from(new Uint32Array((t.dataSync() as Float32Array).slice().buffer));

describe('wasm decode kernels (attention, gather, concat): the same bits as the original kernels', () => {
  before(async () => {
    await initBackend({ backend: 'wasm', fresh: true });
  });

  it('attention matmuls: one or a few query rows per batch entry, keys not a multiple of 4, more than 48 keys', () => {
    // [batch, M, S, hd]: hd 8 (q·kᵀ only; a·v needs hd % 16), tails of S % 4, S past the 48-key block, hd 128
    const cases: [number, number, number, number][] = [
      [16, 1, 64, 32],
      [6, 3, 7, 16],
      [5, 1, 49, 48],
      [4, 2, 150, 128],
      [8, 1, 13, 8],
    ];
    for (const [B, M, S, hd] of cases) {
      tf.tidy(() => {
        const q = tf.randomNormal([B, 2, M, hd], 0, 1, 'float32', 1);
        const k = tf.randomNormal([B, 2, S, hd], 0, 1, 'float32', 2);
        const a = tf.randomNormal([B, 2, M, S], 0, 1, 'float32', 3);
        const [qk0, qk1] = offOn(() => bits(tf.matMul(q, k, false, true)));
        assert.deepEqual(qk1, qk0, `q·kᵀ ${[B, M, S, hd].join('×')}`);
        const [av0, av1] = offOn(() => bits(tf.matMul(a, k)));
        assert.deepEqual(av1, av0, `a·v ${[B, M, S, hd].join('×')}`);
      });
    }
  });

  it('gather and concat along any axis; an out-of-range id still fails as before', () => {
    tf.tidy(() => {
      const x = tf.randomNormal([5, 3, 4, 2], 0, 1, 'float32', 4);
      const ids = tf.tensor1d([4, 0, 0, 2], 'int32');
      for (const axis of [0, 1, 2, 3]) {
        const idx = axis === 0 ? ids : tf.tensor1d([1, 0, 1], 'int32');
        const [g0, g1] = offOn(() => tf.gather(x, idx, axis));
        assert.deepEqual(g1.shape, g0.shape);
        assert.deepEqual(bits(g1), bits(g0), `gather axis ${axis}`);
        const y = tf.randomNormal(
          [5, 3, 4, 2].map((d, i) => (i === axis ? 1 : d)),
          0,
          1,
          'float32',
          5,
        );
        const [c0, c1] = offOn(() => tf.concat([x, y, x], axis));
        assert.deepEqual(c1.shape, c0.shape);
        assert.deepEqual(bits(c1), bits(c0), `concat axis ${axis}`);
      }
      const ints = tf.tensor2d([1, 2, 3, 4, 5, 6], [3, 2], 'int32');
      const [gi0, gi1] = offOn(() => tf.gather(ints, tf.tensor1d([2, 1], 'int32')).arraySync());
      assert.deepEqual(gi1, gi0);
      const [e0, e1] = offOn(() => {
        try {
          return String(tf.gather(x, tf.tensor1d([7], 'int32')).dataSync()[0]);
        } catch (e) {
          return (e as Error).message;
        }
      });
      assert.equal(e1, e0);
    });
  });

  // the configs of the generation and parity tests, and the tiny preset the benchmarks use
  const configs: [string, Record<string, unknown>][] = [
    ['tiny qwen3 (hd 8, GQA 2:1)', TINY_QWEN3],
    ['qwen2 with attention biases (hd 16, GQA 4:2)', { ...GQA_SMALL, model_type: 'qwen2', attention_bias: true }],
    ['tiny preset (hd 32)', presetHfConfig('tiny')],
  ];
  for (const [name, cfg] of configs)
    it(`generation on ${name}: the same tokens and log-probs, with and without LoRA, mixed adapters, rows ending early`, async () => {
      const base = CausalLM.random(cfg, 7);
      const a = base.shareBase();
      const b = base.shareBase();
      try {
        const lora = { r: 4, alpha: 8, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj'] };
        [a, b].forEach((m, i) => {
          m.addLora(lora);
          for (const p of m.lora.values())
            tf.tidy(() => p.b.assign(tf.randomNormal(p.b.shape, 0, 0.3, 'float32', 9 + i)));
        });
        const V = base.config.vocabSize;
        const prompt = (len: number, s: number): number[] => Array.from({ length: len }, (_, i) => (i * 31 + s) % V);
        // prompts of different lengths (left padding) and budgets (rows leave the batch: keepSlots), and of one length (the unpadded decode path); no EOS, so the
        // budgets decide who leaves when
        const items = (adapters: (CausalLM | undefined)[], padded = true): GenerationItem[] =>
          adapters.map((adapter, i) => ({
            promptIds: prompt(padded ? 5 + 7 * i : 9, i),
            options: { maxNewTokens: 6 + 5 * i, n: 3, seed: 40 + i, eosTokenIds: [] },
            ...(adapter ? { adapter } : {}),
          }));
        const runs: [string, CausalLM, GenerationItem[]][] = [
          ['no LoRA', base, items([undefined, undefined, undefined])],
          ['own LoRA', a, items([undefined, undefined])],
          ['mixed adapters', base, items([a, b, undefined])],
          ['prompts of one length (no padding)', base, items([a, b], false)],
        ];
        for (const [what, model, its] of runs) {
          const [off, on] = await offOnAsync(() => generateBatch(model, its));
          const key = (r: typeof off): string =>
            JSON.stringify(
              r.map((s) => s.map((x) => [x.tokenIds, x.logprobs.map((l) => (Object.is(l, -0) ? '-0' : l))])),
            );
          assert.equal(key(on), key(off), `${name}, ${what}`);
          assert.ok(on.flat().some((s) => s.tokenIds.length === 6) && on.flat().some((s) => s.tokenIds.length > 6));
        }
      } finally {
        a.dispose();
        b.dispose();
        base.dispose();
      }
    });
});
