/**
 * The process `benchCheckpoint` forks: loads one checkpoint into a fresh heap, times KV-cached sampling at each batch
 * size, and sends one `BenchCheckpointMessage` to its parent. Not an entry point of its own.
 */
import * as tf from '@tensorflow/tfjs';
import { loadCheckpoint } from '../lm/hf-checkpoint.js';
import { createRng } from '@troupe/kernel';
import { initBackend } from '../backend/index.js';
import { generateIds } from '../lm/generate.js';
import type { BenchCheckpointMessage, BenchCheckpointOptions, BenchCheckpointResult } from './bench-checkpoint.js';

const peakRssMb = (): number => Math.round(process.resourceUsage().maxRSS / 102.4) / 10; // maxRSS is in KiB
const round = (x: number): number => Math.round(x * 1000) / 1000;

async function main(o: BenchCheckpointOptions): Promise<BenchCheckpointResult> {
  const batches = o.genBatches ?? [1, 8], N = o.genTokens ?? 32, P = o.promptLen ?? 16;
  const report = await initBackend(o.backend ? { backend: o.backend } : {});
  let t0 = performance.now();
  const model = await loadCheckpoint(o.model);
  const loadS = (performance.now() - t0) / 1000;
  const rssLoad = peakRssMb();
  try {
    const rng = createRng('bench-checkpoint');
    const prompt = Array.from({ length: P }, () => rng.int(model.config.vocabSize));
    const gen = (n: number, tokens: number): Promise<unknown> =>
      generateIds(model, prompt, { maxNewTokens: tokens, n, seed: 1, temperature: 1, eosTokenIds: [] });
    const speeds: Record<string, number> = {};
    for (const G of batches) {
      await gen(G, 2); // warm-up: kernels and buffers of this batch size
      t0 = performance.now();
      await gen(G, N);
      speeds[`gen_tokens_per_s_b${G}`] = round((G * N) / ((performance.now() - t0) / 1000));
    }
    return {
      impl: `tfjs ${tf.version.tfjs} (${report.backend})`, backend: report.backend, params: model.numParams(),
      load_s: round(loadS), peak_rss_mb: rssLoad, peak_rss_mb_after_gen: peakRssMb(), gen_tokens: N, prompt_len: P, ...speeds,
    } as BenchCheckpointResult;
  } finally {
    model.dispose();
  }
}

const send = (m: BenchCheckpointMessage): Promise<void> => new Promise((res) => process.send!(m, () => res()));
main(JSON.parse(process.argv[2]!) as BenchCheckpointOptions)
  .then((result) => send({ result }))
  .catch((err: unknown) => send({ error: err instanceof Error ? { name: err.name, message: err.message } : { name: 'Error', message: String(err) } }))
  .finally(() => process.exit()); // a backend's worker threads must not keep the process alive
