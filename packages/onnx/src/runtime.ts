/**
 * A causal LM run by ONNX Runtime on the CPU: the exported decoder graph ({@link exportCheckpoint}) in one session
 * (all cores, every graph optimisation), a batch of left-padded prompts prefilled at once, then one token per row
 * per step with the KV cache fed back. Sampling is `@troupe/lm`'s (`decodeBatch`): the same seeds, temperature, top-k,
 * top-p, stop strings, grammars and log-probs as the tfjs model.
 */
import { availableParallelism } from 'node:os';
import * as ort from 'onnxruntime-node';
import { cacheNames } from './decoder-graph.js';
import { exportCheckpoint, type ExportedModel, type ExportOptions } from './export.js';
import {
  CheckpointError,
  decodeBatch,
  type GeneratedSample,
  type GenerateOptions,
  type GenerationItem,
  type GenerationShared,
  type LmConfig,
  type StepDecoder,
} from './lm.js';

/** Options of {@link OnnxCausalLM.load}. */
export interface OnnxLoadOptions extends ExportOptions {
  /** Threads of the session's operators (default: every core). */
  readonly threads?: number;
  /** Write ONNX Runtime's profile (a JSON trace, `<prefix>_<date>.json`) with this file name prefix. */
  readonly profilePrefix?: string;
  /**
   * Whether idle operator threads spin waiting for work (default false: between tokens the JavaScript side samples,
   * and spinning threads would take its core).
   */
  readonly spin?: boolean;
}

/** One layer's cache: keys and values `[rows, kv_heads, columns, head_dim]`. */
interface LayerCache {
  readonly key: ort.Tensor;
  readonly value: ort.Tensor;
}

/** The rows `index` of a `[rows, ...]` float tensor, as a new tensor (row i of the result is row index[i]). */
function takeRows(t: ort.Tensor, index: readonly number[]): ort.Tensor {
  const [rows, ...rest] = t.dims;
  const per = rest.reduce((a, b) => a * b, 1);
  const src = t.data as Float32Array;
  if (index.length === rows && index.every((r, i) => r === i)) return t;
  const out = new Float32Array(index.length * per);
  index.forEach((r, i) => out.set(src.subarray(r * per, (r + 1) * per), i * per));
  return new ort.Tensor('float32', out, [index.length, ...rest]);
}

/** A causal LM in an ONNX Runtime session. Create with {@link OnnxCausalLM.load}; `release()` when done. */
export class OnnxCausalLM {
  private constructor(
    /** The export it runs. */
    readonly exported: ExportedModel,
    private readonly session: ort.InferenceSession,
  ) {}

  /** The model's architecture. */
  get config(): LmConfig {
    return this.exported.config;
  }

  /** Exports `dir` (or reuses its cached export) and opens it. Errors name the checkpoint's file. */
  static async load(dir: string, options: OnnxLoadOptions = {}): Promise<OnnxCausalLM> {
    const exported = await exportCheckpoint(dir, options);
    let session: ort.InferenceSession;
    try {
      session = await ort.InferenceSession.create(exported.modelPath, {
        executionProviders: ['cpu'],
        graphOptimizationLevel: 'all',
        intraOpNumThreads: options.threads ?? availableParallelism(),
        interOpNumThreads: 1,
        executionMode: 'sequential',
        extra: {
          session: {
            intra_op: { allow_spinning: options.spin ? '1' : '0' },
            inter_op: { allow_spinning: options.spin ? '1' : '0' },
          },
        },
        ...(options.profilePrefix ? { enableProfiling: true, profileFilePrefix: options.profilePrefix } : {}),
      });
    } catch (err) {
      throw new CheckpointError(
        `${exported.source}: ONNX Runtime cannot load its export ${exported.modelPath}: ${(err as Error).message}`,
      );
    }
    return new OnnxCausalLM(exported, session);
  }

  /**
   * One forward pass: `ids` (rows of equal length, left-padded by `pads`) after `cache` (or none), the new columns
   * starting at column `start`. Returns the last position's logits (`rows × vocab`) and the grown cache.
   */
  async forward(
    ids: readonly (readonly number[])[],
    pads: readonly number[],
    start: number,
    cache?: readonly LayerCache[],
  ): Promise<{ logits: Float32Array; cache: LayerCache[] }> {
    const c = this.config;
    const B = ids.length,
      T = ids[0]!.length,
      S = start + T;
    const inputIds = new BigInt64Array(B * T);
    const positions = new BigInt64Array(B * T);
    const mask = new BigInt64Array(B * S);
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T; t++) {
        inputIds[b * T + t] = BigInt(ids[b]![t]!);
        positions[b * T + t] = BigInt(Math.max(0, start + t - pads[b]!));
      }
      for (let s = pads[b]!; s < S; s++) mask[b * S + s] = 1n;
    }
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', inputIds, [B, T]),
      attention_mask: new ort.Tensor('int64', mask, [B, S]),
      position_ids: new ort.Tensor('int64', positions, [B, T]),
    };
    const empty = new ort.Tensor('float32', new Float32Array(0), [B, c.numKvHeads, 0, c.headDim]);
    for (let i = 0; i < c.numLayers; i++) {
      const n = cacheNames(i);
      feeds[n.pastKey] = cache ? cache[i]!.key : empty;
      feeds[n.pastValue] = cache ? cache[i]!.value : empty;
    }
    const out = await this.session.run(feeds);
    const next: LayerCache[] = [];
    for (let i = 0; i < c.numLayers; i++) {
      const n = cacheNames(i);
      next.push({ key: out[n.presentKey]!, value: out[n.presentValue]! });
    }
    return { logits: out.logits!.data as Float32Array, cache: next };
  }

  /** A {@link StepDecoder} over this session (for `@troupe/lm`'s `decodeBatch`). */
  decoder(): StepDecoder {
    let cache: LayerCache[] | undefined;
    const V = this.config.vocabSize;
    return {
      prefill: async (ids, pads, rowItems) => {
        const out = await this.forward(ids, pads, 0);
        cache = out.cache.map((l) => ({ key: takeRows(l.key, rowItems), value: takeRows(l.value, rowItems) }));
        const logits = new Float32Array(rowItems.length * V);
        rowItems.forEach((item, r) => logits.set(out.logits.subarray(item * V, (item + 1) * V), r * V));
        return logits;
      },
      step: async (tokens, keep, pos, pads) => {
        const kept = keep
          ? cache!.map((l) => ({ key: takeRows(l.key, keep), value: takeRows(l.value, keep) }))
          : cache!;
        cache = undefined;
        const out = await this.forward(
          tokens.map((t) => [t]),
          pads,
          pos,
          kept,
        );
        cache = out.cache;
        return out.logits;
      },
      dispose: () => {
        cache = undefined;
      },
    };
  }

  /** Samples completions of several prompts at once (`@troupe/lm`'s `generateBatch`, run by ONNX Runtime). */
  generateBatch(items: readonly GenerationItem[], shared: GenerationShared = {}): Promise<GeneratedSample[][]> {
    return decodeBatch(this.decoder(), this.config, items, shared);
  }

  /** Samples `n` completions of one prompt. */
  async generateIds(promptIds: readonly number[], opts: GenerateOptions): Promise<GeneratedSample[]> {
    const { tokenizer, signal, ...options } = opts;
    return (
      await this.generateBatch([{ promptIds, options }], {
        ...(tokenizer ? { tokenizer } : {}),
        ...(signal ? { signal } : {}),
      })
    )[0]!;
  }

  /** Ends profiling (when on) and writes the profile file. */
  endProfiling(): void {
    this.session.endProfiling();
  }

  /** Frees the session. */
  async release(): Promise<void> {
    await this.session.release();
  }
}
