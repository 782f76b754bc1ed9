/**
 * Where a KV-cached decode step spends its time: the tiny preset (LoRA on q/k/v/o), one prompt of `--prompt` tokens
 * prefilled and tiled to `--rows` rows, then `--steps` decode steps of one token each. Prints one JSON line: the
 * median wall milliseconds of a step, and the kernels' milliseconds per step summed by kernel name (`tf.profile`).
 *
 * Run: npx tsx --conditions=troupe:source packages/lm/bench/decode-profile.ts [--rows 16] [--prompt 40] [--steps 24]
 */
import { parseArgs } from 'node:util';
import { CausalLM, initBackend, presetHfConfig, tf, type KvCache } from '@troupe/lm';

const { values: args } = parseArgs({
  options: {
    preset: { type: 'string', default: 'tiny' },
    rows: { type: 'string', default: '16' },
    prompt: { type: 'string', default: '40' },
    steps: { type: 'string', default: '24' },
  },
});
await initBackend();
const model = CausalLM.random(presetHfConfig(args.preset as 'tiny'), 0);
model.addLora({ r: 8, alpha: 16, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj'] });
const B = Number(args.rows),
  P = Number(args.prompt),
  steps = Number(args.steps);
const V = model.config.vocabSize;

function prefill(): KvCache {
  return tf.tidy(() => {
    const ids = tf.tensor2d([Array.from({ length: P }, (_, i) => (i * 7) % V)], [1, P], 'int32');
    const out = model.forward(ids, { cache: [], lastOnly: true, differentiableEmbedding: false });
    const idx = tf.zeros([B], 'int32');
    return out.cache!.map((l) => ({ k: tf.keep(tf.gather(l.k, idx)), v: tf.keep(tf.gather(l.v, idx)) }));
  });
}

async function run(profile: boolean): Promise<{ ms: number[]; kernels: Map<string, number> }> {
  let cache = prefill();
  const ms: number[] = [];
  const kernels = new Map<string, number>();
  for (let s = 0; s < steps; s++) {
    const body = (): tf.Tensor =>
      tf.tidy(() => {
        const out = model.forward(tf.tensor2d(new Array(B).fill(s + 1), [B, 1], 'int32'), {
          cache,
          start: P + s,
          differentiableEmbedding: false,
        });
        const next = out.cache!.map((l) => ({ k: tf.keep(l.k), v: tf.keep(l.v) }));
        for (const l of cache) {
          l.k.dispose();
          l.v.dispose();
        }
        cache = next;
        return out.logits;
      });
    const t0 = performance.now();
    if (profile) {
      const info = await tf.profile(() => body());
      for (const k of info.kernels) {
        const key =
          k.name === 'BatchMatMul'
            ? k.inputShapes[0]!.length > 2
              ? 'BatchMatMul (attention)'
              : `BatchMatMul ${JSON.stringify(k.inputShapes)}`
            : k.name;
        kernels.set(key, (kernels.get(key) ?? 0) + Number(k.kernelTimeMs));
      }
      tf.dispose(info.result as tf.Tensor);
    } else {
      const l = body();
      await l.data();
      l.dispose();
    }
    ms.push(performance.now() - t0);
  }
  for (const l of cache) {
    l.k.dispose();
    l.v.dispose();
  }
  return { ms, kernels };
}

await run(false);
const timed = await run(false);
const prof = await run(true);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const kernels = Object.fromEntries(
  [...prof.kernels].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, +(v / steps).toFixed(3)]),
);
console.log(
  JSON.stringify({
    backend: tf.getBackend(),
    rows: B,
    prompt: P,
    steps,
    step_ms: +median(timed.ms).toFixed(3),
    kernels,
  }),
);
model.dispose();
