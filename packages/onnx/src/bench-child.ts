/**
 * The process {@link benchOnnxCheckpoint} forks: exports (or reuses the export of) one checkpoint, opens it in ONNX
 * Runtime, times KV-cached sampling at each batch size and sends one message to its parent. Not an entry point of its
 * own.
 */
import { benchPrompt, parameterShapes, peakRssMb, reportToParent, timeSampling } from './lm.js';
import * as ort from 'onnxruntime-node';
import type { BenchOnnxOptions, BenchOnnxResult } from './bench.js';
import { OnnxCausalLM } from './runtime.js';

const round = (x: number): number => Math.round(x * 1000) / 1000;

async function main(o: BenchOnnxOptions): Promise<BenchOnnxResult> {
  const batches = o.genBatches ?? [1, 8],
    N = o.genTokens ?? 32,
    P = o.promptLen ?? 16;
  const t0 = performance.now();
  const model = await OnnxCausalLM.load(o.model, {
    ...(o.cacheDir ? { cacheDir: o.cacheDir } : {}),
    ...(o.threads ? { threads: o.threads } : {}),
    ...(o.weights ? { weights: o.weights } : {}),
    spin: o.spin ?? false,
  });
  const loadS = (performance.now() - t0) / 1000;
  const rssLoad = peakRssMb();
  try {
    const prompt = benchPrompt(model.config.vocabSize, P);
    const gen = (n: number, tokens: number): Promise<unknown> =>
      model.generateIds(prompt, { maxNewTokens: tokens, n, seed: 1, temperature: 1, eosTokenIds: [] });
    const speeds = await timeSampling(gen, batches, N);
    const params = parameterShapes(model.config).reduce((a, [, s]) => a + s.reduce((x, y) => x * y, 1), 0);
    return {
      impl: `onnxruntime-node ${ort.env.versions.common} (cpu)`,
      backend: 'onnxruntime-cpu',
      params,
      load_s: round(loadS),
      export_s: round(model.exported.seconds),
      export_cached: model.exported.cached,
      peak_rss_mb: rssLoad,
      peak_rss_mb_after_gen: peakRssMb(),
      gen_tokens: N,
      prompt_len: P,
      ...speeds,
    } as BenchOnnxResult;
  } finally {
    await model.release();
  }
}

reportToParent(main(JSON.parse(process.argv[2]!) as BenchOnnxOptions));
