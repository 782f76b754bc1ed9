/**
 * `troupe bench model --model DIR --runtime onnx`: the checkpoint benchmark (load time with the export or its cache,
 * peak RSS, KV-cached sampling tokens/s at each batch size) run by ONNX Runtime, in a fresh Node process like the
 * tfjs one, so that the same workload and the same result fields compare side by side.
 */
import { fileURLToPath } from 'node:url';
import { benchCheckpoint, type BenchCheckpointOptions, type BenchCheckpointResult } from './lm.js';

/** Options of {@link benchOnnxCheckpoint}: `@troupe/lm`'s, plus where the export is cached. */
export interface BenchOnnxOptions extends BenchCheckpointOptions {
  /** Cache root of the export (default: `defaultCacheDir()`). */
  readonly cacheDir?: string;
  /** Operator threads (default: every core). */
  readonly threads?: number;
  /** Whether idle operator threads spin (default false). */
  readonly spin?: boolean;
  /** Weight mode of the export (default `reference`). */
  readonly weights?: 'reference' | 'copy';
}

/** What the ONNX benchmark adds to `@troupe/lm`'s result. */
export interface BenchOnnxResult extends BenchCheckpointResult {
  /** Seconds of the load spent exporting (0 when the cached export was reused). */
  readonly export_s: number;
  /** Whether the export came from the cache. */
  readonly export_cached: boolean;
}

const child = fileURLToPath(import.meta.url).replace(/bench(\.[cm]?[jt]s)$/, 'bench-child$1');

/** Runs the ONNX Runtime checkpoint benchmark in a fresh Node process. */
export async function benchOnnxCheckpoint(o: BenchOnnxOptions): Promise<BenchOnnxResult> {
  return (await benchCheckpoint(o, child)) as BenchOnnxResult;
}
