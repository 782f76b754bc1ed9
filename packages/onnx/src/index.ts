/**
 * @troupe/onnx — real-size inference of Llama / Qwen2 / Qwen3 checkpoints through ONNX Runtime on the CPU: a
 * TypeScript exporter (config.json + safetensors → a cached ONNX decoder graph with a KV cache, weights as external
 * data) and a batched, KV-cached generator with `@troupe/lm`'s sampling.
 */
export {
  exportCheckpoint,
  defaultCacheDir,
  EXPORTER_VERSION,
  type ExportOptions,
  type ExportedModel,
  type WeightMode,
} from './export.js';
export { OnnxCausalLM, type OnnxLoadOptions } from './runtime.js';
export { decoderGraph, cacheNames } from './decoder-graph.js';
export { benchOnnxCheckpoint, type BenchOnnxOptions, type BenchOnnxResult } from './bench.js';
