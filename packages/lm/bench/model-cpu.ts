/**
 * The model benchmark's workload (as `torch_ref.py bench`) timed in CPU time of this process (`process.cpuUsage`), which
 * is steadier than wall time on a shared, loaded machine:
 * `npx tsx --conditions=troupe:source bench/model-cpu.ts [tiny|small]`.
 *
 * `TROUPE_WASM_KERNELS=0` turns off the faster wasm BatchMatMul/Slice kernels (A/B them by running both).
 * `STEPS` sets the timed training/forward steps (default 3). Prints one JSON line; each figure is the best of `STEPS`.
 */
import { createRng } from '@troupe/kernel';
import {
  AdamW,
  benchTrainStep,
  CausalLM,
  generateIds,
  initBackend,
  packBatch,
  presetHfConfig,
  scatterToLayout,
  tf,
} from '@troupe/lm';

const preset = (process.argv[2] ?? 'tiny') as 'tiny' | 'small';
const steps = Number(process.env.STEPS ?? 3);
const B = 16,
  T = 128,
  G = 16,
  N = 112,
  P = 16;
const report = await initBackend();
const model = CausalLM.random(presetHfConfig(preset), 0);
const V = model.config.vocabSize;
const rng = createRng('bench');
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Best CPU milliseconds of `n` runs of `f` (after one warm-up run). */
async function best(n: number, f: () => unknown): Promise<number> {
  await f();
  let b = Infinity;
  for (let i = 0; i < n; i++) {
    const c0 = cpuMs();
    await f();
    b = Math.min(b, cpuMs() - c0);
  }
  return b;
}

try {
  const ids = Array.from({ length: B }, () => Array.from({ length: T }, () => rng.int(V)));
  const pairs = ids.map((r) => ({ promptIds: r.slice(0, 1), completionIds: r.slice(1) }));
  const packed = packBatch(pairs);
  const adv = scatterToLayout(
    packed,
    ids.map(() => rng.next() * 2 - 1),
  );
  const opt = new AdamW(model.trainableVariables(), { lr: 1e-4 });
  const train = await best(steps, () => benchTrainStep(model, opt, packed, adv));
  opt.dispose();
  const fwd = await best(steps, () =>
    tf.tidy(() => {
      model.forward(tf.tensor2d(packed.ids, [B, T], 'int32'), { differentiableEmbedding: false }).logits.dataSync();
    }),
  );
  const prompt = Array.from({ length: P }, () => rng.int(V));
  const gen = await best(1, () =>
    generateIds(model, prompt, { maxNewTokens: N, n: G, seed: 1, temperature: 1, eosTokenIds: [] }),
  );
  const perS = (tokens: number, ms: number): number => Math.round(tokens / (ms / 1000));
  console.log(
    JSON.stringify({
      backend: report.backend,
      wasm_kernels: process.env.TROUPE_WASM_KERNELS !== '0',
      preset,
      train_tokens_per_cpu_s: perS(B * T, train),
      forward_tokens_per_cpu_s: perS(B * T, fwd),
      gen_tokens_per_cpu_s: perS(G * N, gen),
    }),
  );
} finally {
  model.dispose();
}
