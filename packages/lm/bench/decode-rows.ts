/**
 * The per-row cost of KV-cached decoding: `generateIds` on the tiny preset (LoRA on q/k/v/o), one prompt of 40
 * tokens, `n` rows, 24 new tokens (no EOS), for n = 8 and 32; prints one JSON line with each n's milliseconds per decode
 * step (wall and this process's CPU) and the fitted fixed and per-row parts of a step. `TROUPE_DECODE_KERNELS=0`
 * runs it on the original tfjs-wasm kernels (A/B: run both, alternating).
 *
 * Run: npx tsx --conditions=troupe:source packages/lm/bench/decode-rows.ts [--iters 20]
 */
import { parseArgs } from 'node:util';
import { CausalLM, generateIds, initBackend, presetHfConfig, tf } from '@troupe/lm';

const { values: args } = parseArgs({ options: { iters: { type: 'string', default: '20' } } });
const iters = Number(args.iters);
await initBackend();
const model = CausalLM.random(presetHfConfig('tiny'), 0);
model.addLora({ r: 8, alpha: 16, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj'] });
const prompt = Array.from({ length: 40 }, (_, i) => (i * 7) % model.config.vocabSize);
const tokens = 24;

async function perStep(n: number): Promise<{ wall: number; cpu: number }> {
  const opts = (seed: number) => ({ maxNewTokens: tokens, n, seed, eosTokenIds: [] });
  await generateIds(model, prompt, opts(0));
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let i = 0; i < iters; i++) await generateIds(model, prompt, opts(i));
  const c = process.cpuUsage(c0);
  return { wall: (performance.now() - t0) / iters / tokens, cpu: (c.user + c.system) / 1000 / iters / tokens };
}

const lo = await perStep(8);
const hi = await perStep(32);
const perRow = (hi.cpu - lo.cpu) / 24;
console.log(
  JSON.stringify({
    backend: tf.getBackend(),
    decode_kernels: process.env.TROUPE_DECODE_KERNELS !== '0',
    step_ms_8_rows: +lo.wall.toFixed(3),
    step_ms_32_rows: +hi.wall.toFixed(3),
    cpu_ms_8_rows: +lo.cpu.toFixed(3),
    cpu_ms_32_rows: +hi.cpu.toFixed(3),
    // (includes the prompt's prefill and its tiling to the rows, spread over the 24 steps)
    cpu_ms_per_row: +perRow.toFixed(3),
    cpu_ms_fixed: +(lo.cpu - 8 * perRow).toFixed(3),
  }),
);
model.dispose();
