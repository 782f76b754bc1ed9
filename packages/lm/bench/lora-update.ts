/**
 * One RL update step of ONE role's LoRA adapter on a checkpoint (the figure to plan a CPU smoke run by): `--seqs`
 * sequences of `--len` tokens (a quarter prompt, the rest completion), as the trainer's PPO update runs it: the old
 * log-probs recomputed without gradients, then one AdamW step on the advantage-weighted token log-probs (PPO's loss at
 * ratio 1: the same forward and backward) accumulated over micro-batches of `--micro` sequences. Only the adapter
 * (rank `--r` on q/k/v/o) trains; the base is checked bitwise unchanged. Run it in a fresh process (this command is
 * one): `peak_rss_mb` is the process's peak (loading included), `rss_loaded_mb` its RSS before the update.
 *
 * Run: npx tsx --conditions=troupe:source packages/lm/bench/lora-update.ts --model DIR [--backend wasm] [--micro 1]
 */
import { parseArgs } from 'node:util';
import {
  AdamW,
  accumulatedTrainStep,
  initBackend,
  loadCheckpoint,
  packBatch,
  recomputeLogprobs,
  scatterToLayout,
  tf,
  tokenLogprobs,
  type BackendName,
  type SequencePair,
} from '@troupe/lm';

const { values: args } = parseArgs({
  options: {
    model: { type: 'string' },
    backend: { type: 'string', default: 'wasm' },
    seqs: { type: 'string', default: '8' },
    len: { type: 'string', default: '256' },
    micro: { type: 'string', default: '1' },
    r: { type: 'string', default: '8' },
    'low-memory': { type: 'string', default: 'auto' },
  },
});
if (!args.model) throw new Error('lora-update: give --model DIR (a Hugging Face-layout checkpoint folder)');
const S = Number(args.seqs),
  L = Number(args.len),
  micro = Number(args.micro),
  r = Number(args.r);
const MB = 2 ** 20;
const peak = (): number => Math.round(process.resourceUsage().maxRSS / 1024);
const cpuS = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
/** The wasm heap's size (it only grows: its peak), when the backend is wasm. */
const wasmHeapMb = (): number | undefined => {
  const heap = (tf.backend() as unknown as { wasm?: { HEAPU8?: Uint8Array } }).wasm?.HEAPU8;
  return heap ? Math.round(heap.length / MB) : undefined;
};

const report = await initBackend({ backend: args.backend as BackendName });
const t0 = performance.now();
const model = await loadCheckpoint(args.model);
if (args['low-memory'] === 'on' || args['low-memory'] === 'off') model.lowMemory = args['low-memory'] === 'on';
else if (args['low-memory'] !== 'auto')
  throw new Error(`lora-update: --low-memory is auto, on or off, got '${args['low-memory']}'`);
model.addLora({ r, alpha: 2 * r, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj'] }, 1);
const loadS = (performance.now() - t0) / 1000;
(globalThis as { gc?: () => void }).gc?.();
const rssLoaded = Math.round(process.memoryUsage().rss / MB);
const peakLoad = peak();
const V = model.config.vocabSize;
const P = Math.floor(L / 4);
const pairs: SequencePair[] = Array.from({ length: S }, (_, s) => ({
  promptIds: Array.from({ length: P }, (_, j) => (7919 * (s * 131 + j + 1)) % V),
  completionIds: Array.from({ length: L - P }, (_, j) => (104729 * (s * 17 + j + 3)) % V),
}));
const advantages = pairs.map((_, s) => (s % 2 === 0 ? 1 : -1));
const probe = model.params.get('model.layers.0.self_attn.q_proj.weight')!;
const probeBefore = (probe.dataSync() as Float32Array).slice();

const t1 = performance.now();
const c1 = cpuS();
const old = await recomputeLogprobs(model, pairs, { batchSize: micro });
const oldS = (performance.now() - t1) / 1000;
const oldCpu = cpuS() - c1;
const heapOld = wasmHeapMb();

const optimizer = new AdamW(model.trainableVariables(), { lr: 1e-4, maxGradNorm: 1 });
const tokens = pairs.reduce((n, p) => n + p.completionIds.length, 0);
const parts: (() => tf.Scalar)[] = [];
for (let s = 0; s < S; s += micro) {
  const chunk = pairs.slice(s, s + micro);
  const packed = packBatch(chunk);
  const weights = scatterToLayout(packed, advantages.slice(s, s + micro));
  parts.push(() => {
    const w = tf.tensor2d(weights, [packed.B, packed.L - 1]);
    return tokenLogprobs(model, packed).mul(w).sum().div(-tokens) as tf.Scalar;
  });
}
const t2 = performance.now();
const c2 = cpuS();
const step = accumulatedTrainStep(optimizer, parts);
const updateS = (performance.now() - t2) / 1000;
const updateCpu = cpuS() - c2;
const probeAfter = probe.dataSync() as Float32Array;
const baseUnchanged = probeBefore.every((x, i) => Object.is(x, probeAfter[i]));
console.log(
  JSON.stringify({
    backend: report.backend,
    params: model.numParams(),
    adapter_params: model.trainableVariables().reduce((n, v) => n + v.size, 0),
    sequences: S,
    tokens_per_sequence: L,
    micro_batch: micro,
    load_s: +loadS.toFixed(1),
    old_logprobs_s: +oldS.toFixed(1),
    update_s: +updateS.toFixed(1),
    step_s: +(oldS + updateS).toFixed(1),
    old_logprobs_cpu_s: +oldCpu.toFixed(1),
    update_cpu_s: +updateCpu.toFixed(1),
    low_memory: model.lowMemory && report.tfBackend === 'wasm',
    loss: +step.loss.toFixed(5),
    grad_norm: +step.gradNorm.toFixed(5),
    old_logprobs_finite: old.every((row) => row.every(Number.isFinite)),
    base_unchanged: baseUnchanged,
    rss_loaded_mb: rssLoaded,
    peak_rss_after_load_mb: peakLoad,
    peak_rss_mb: peak(),
    ...(heapOld !== undefined ? { wasm_heap_after_old_logprobs_mb: heapOld, wasm_heap_mb: wasmHeapMb() } : {}),
  }),
);
optimizer.dispose();
model.dispose();
