/**
 * The process `benchCheckpoint` forks: loads one checkpoint into a fresh heap, times KV-cached sampling at each batch
 * size, and sends one `BenchCheckpointMessage` to its parent. Not an entry point of its own.
 */
import * as tf from '@tensorflow/tfjs';
import { loadCheckpoint } from '../lm/hf-checkpoint.js';
import { initBackend } from '../backend/index.js';
import { generateIds } from '../lm/generate.js';
import {
  benchPrompt,
  peakRssMb,
  reportToParent,
  timeSampling,
  type BenchCheckpointOptions,
  type BenchCheckpointResult,
} from './bench-checkpoint.js';

const round = (x: number): number => Math.round(x * 1000) / 1000;

async function main(o: BenchCheckpointOptions): Promise<BenchCheckpointResult> {
  const batches = o.genBatches ?? [1, 8],
    N = o.genTokens ?? 32,
    P = o.promptLen ?? 16;
  const report = await initBackend(o.backend ? { backend: o.backend } : {});
  const t0 = performance.now();
  const model = await loadCheckpoint(o.model);
  const loadS = (performance.now() - t0) / 1000;
  const rssLoad = peakRssMb();
  try {
    const prompt = benchPrompt(model.config.vocabSize, P);
    const gen = (n: number, tokens: number): Promise<unknown> =>
      generateIds(model, prompt, { maxNewTokens: tokens, n, seed: 1, temperature: 1, eosTokenIds: [] });
    const speeds = await timeSampling(gen, batches, N);
    return {
      impl: `tfjs ${tf.version.tfjs} (${report.backend})`,
      backend: report.backend,
      params: model.numParams(),
      load_s: round(loadS),
      peak_rss_mb: rssLoad,
      peak_rss_mb_after_gen: peakRssMb(),
      gen_tokens: N,
      prompt_len: P,
      ...speeds,
    } as BenchCheckpointResult;
  } finally {
    model.dispose();
  }
}

reportToParent(main(JSON.parse(process.argv[2]!) as BenchCheckpointOptions));
