/**
 * The decoder-only causal LM (Llama / Qwen2 / Qwen3): RMSNorm, RoPE, GQA, SwiGLU, optional q/k-norm and attention
 * biases, tied or untied head. Parameters are tfjs Variables keyed by their Hugging Face names; linear weights are
 * stored transposed (`[in, out]`) so the forward pass needs no transposes, and are transposed back on export.
 */
import * as tf from '@tensorflow/tfjs';
import { parameterShapes, parseHfConfig, type LmConfig } from './config.js';
import { matMulKT, matMulUnpacked } from '../backend/wasm-kernels.js';
import {
  applyRope,
  causalMask,
  causalPadMask,
  embed,
  linear,
  mm,
  mmFrozen,
  oneHotF32,
  rmsNorm,
  ropeMatrix,
  ropeTables,
  rotateHalfMatrix,
  silu,
  tapeOn,
} from './ops.js';

/** A float32 tensor on the host, in Hugging Face layout. */
export interface HostTensor {
  /** Shape. */
  readonly shape: readonly number[];
  /** Row-major values. */
  readonly data: Float32Array;
}

/** Per-layer key/value cache: `k`, `v` are `[B, KV, S, hd]`. */
export type KvCache = { k: tf.Tensor; v: tf.Tensor }[];

/** Options of `CausalLM.forward`. */
export interface ForwardOptions {
  /** Cache of earlier positions (its keys come first); when given, the result carries the extended cache. */
  readonly cache?: KvCache;
  /** Absolute position of the first input token (default: the cache length, else 0). */
  readonly start?: number;
  /** Only compute logits for the last position (generation). */
  readonly lastOnly?: boolean;
  /** Use the one-hot embedding (needed when the embedding gets gradients on wasm). Default: embedding is trainable. */
  readonly differentiableEmbedding?: boolean;
  /** Whether to return the new cache (default: when `cache` is given). */
  readonly returnCache?: boolean;
  /**
   * Left-padding per row (batched prompts of different lengths): row b's first `padLeft[b]` columns are padding,
   * masked as keys, and its positions count from its first real token. Constant over a cached generation.
   */
  readonly padLeft?: readonly number[];
  /**
   * The model whose LoRA adapters each row runs through (`B` entries; models sharing this model's base, see
   * {@link CausalLM.shareBase}): the base matmuls run once for the whole batch, each row's low-rank update from its
   * own adapter ({@link AdapterStack}). A model without adapters leaves its rows on the base. Default: every row uses
   * this model's own adapters.
   */
  readonly rowAdapters?: readonly CausalLM[];
  /**
   * The rows' adapters concatenated per module, kept by the caller across the forward passes of one decode
   * ({@link AdapterStack}; it must hold every model of `rowAdapters`). Default: concatenated afresh in this pass.
   */
  readonly adapterStack?: AdapterStack;
  /**
   * Treat the base weights as constants under a gradient tape: gradients flow to the activations (and so to LoRA
   * adapters) only, and the base weights' own gradients are never computed. Default: when the model trains only
   * adapters (it has some, or shares its base). The adapters' gradients are the same either way.
   */
  readonly frozenBase?: boolean;
}

/** One LoRA adapter on a linear module: `y += (x @ A) @ B * scale` with A `[in, r]`, B `[r, out]` (stored transposed). */
export interface LoraPair {
  /** `[in, r]` (PEFT's lora_A.weight transposed). */
  readonly a: tf.Variable;
  /** `[r, out]` (PEFT's lora_B.weight transposed). */
  readonly b: tf.Variable;
}

/** LoRA settings (PEFT names). */
export interface LoraConfig {
  /** Rank r. */
  readonly r: number;
  /** Scale numerator: the update is scaled by `alpha / r`. */
  readonly alpha: number;
  /** Module names to adapt, e.g. `['q_proj', 'v_proj']`. */
  readonly targetModules: readonly string[];
}

function isLinear(name: string): boolean {
  return name.endsWith('_proj.weight') || name === 'lm_head.weight';
}

function transpose2d(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c]!;
  return out;
}

/**
 * The frozen base weights, shared by every model made from one by {@link CausalLM.shareBase} and freed when the last
 * of them is disposed.
 */
class BaseWeights {
  /** Parameters by Hugging Face name (linear weights transposed to `[in, out]`). */
  readonly params = new Map<string, tf.Variable>();
  /** The models holding it (not yet disposed). */
  holders = 1;
  /** The tied head on wasm: the embedding transposed, and the embedding data it was taken from (`CausalLM.head`). */
  tiedHead: { readonly source: object; readonly t: tf.Tensor } | undefined;
  /** `CausalLM.lowMemory` when set; undefined: by the base's size. */
  lowMemory: boolean | undefined;

  constructor(readonly rot: tf.Tensor2D) {}

  dispose(): void {
    for (const v of this.params.values()) v.dispose();
    this.params.clear();
    this.tiedHead?.t.dispose();
    this.tiedHead = undefined;
    this.rot.dispose();
  }
}

/** The adapters of several models on one linear module, side by side: `A` `[in, Σr]`, `B` `[Σr, out]`. */
interface StackedModule {
  readonly a: tf.Tensor;
  readonly b: tf.Tensor;
  /** Σr. */
  readonly width: number;
  /** Each model's columns in `A` (rows in `B`) and its scale α/r. */
  readonly cols: ReadonlyMap<CausalLM, { readonly start: number; readonly r: number; readonly scale: number }>;
}

/**
 * The LoRA adapters of several models sharing one base, concatenated module by module, so that one forward pass
 * applies each row's own adapter with two matmuls for all rows: `((x @ A) ⊙ M) @ B`, where the row mask `M` keeps
 * (and scales by α/r) the row's own adapter's columns and zeroes the others'. A decode builds one for its adapters
 * and passes it to every step (`ForwardOptions.adapterStack`): the adapters must not change meanwhile. Dispose it after.
 */
export class AdapterStack {
  private readonly modules = new Map<string, StackedModule | null>();
  private readonly owned: tf.Tensor[] = [];

  /**
   * @param models the models whose adapters it stacks (they share one base)
   * @param persistent keep the stacked tensors out of any enclosing `tf.tidy` (until {@link dispose}); false: they
   *   are the enclosing tidy's (one forward pass)
   */
  constructor(
    readonly models: readonly CausalLM[],
    private readonly persistent = true,
  ) {}

  /** The module's stacked adapters (built on first use, kept until {@link dispose}); null when no model adapts it. */
  module(mod: string): StackedModule | null {
    let m = this.modules.get(mod);
    if (m !== undefined) return m;
    const cols = new Map<CausalLM, { start: number; r: number; scale: number }>();
    const as: tf.Tensor[] = [];
    const bs: tf.Tensor[] = [];
    let width = 0;
    for (const model of this.models) {
      const l = model.lora.get(mod);
      if (!l || !model.loraConfig || cols.has(model)) continue;
      const r = l.a.shape[1]!;
      cols.set(model, { start: width, r, scale: model.loraConfig.alpha / model.loraConfig.r });
      as.push(l.a);
      bs.push(l.b);
      width += r;
    }
    m =
      width === 0
        ? null
        : {
            a: as.length === 1 ? as[0]! : this.hold(tf.concat(as, 1)),
            b: bs.length === 1 ? bs[0]! : this.hold(tf.concat(bs, 0)),
            width,
            cols,
          };
    this.modules.set(mod, m);
    return m;
  }

  private hold(t: tf.Tensor): tf.Tensor {
    if (this.persistent) {
      tf.keep(t);
      this.owned.push(t);
    }
    return t;
  }

  /** Frees the stacked tensors (a module of one model's adapter is that model's own variables, never freed here). */
  dispose(): void {
    for (const t of this.owned) t.dispose();
    this.owned.length = 0;
    this.modules.clear();
  }
}

/** How one forward pass applies adapters: every row this model's own, or each row its own model's from a stack. */
type RowLora =
  | { readonly kind: 'own'; readonly model: CausalLM }
  | {
      readonly kind: 'mixed';
      readonly rows: readonly CausalLM[];
      readonly stack: AdapterStack;
      /** Row masks of this pass by column layout (`[B·T, Σr]`). */
      readonly masks: Map<string, tf.Tensor>;
    };

/** The base size past which {@link CausalLM.lowMemory} is on by default: 1 GiB. */
export const LOW_MEMORY_BASE_BYTES = 2 ** 30;

/**
 * `fn(x, consts)` whose backward pass recomputes it: the forward keeps only `x` and `consts` (no intermediate
 * tensor), the backward runs `fn` again under a gradient tape of its own and returns the gradients of `x` and of
 * `vars` (the variables `fn` reads that take gradients). Memory of one call instead of every call's intermediates,
 * for one more forward pass. `consts` are tensors `fn` reads that the caller's scope frees before the backward runs.
 */
function recomputedInBackward(
  x: tf.Tensor,
  consts: tf.Tensor[],
  vars: tf.Variable[],
  fn: (x: tf.Tensor, consts: tf.Tensor[]) => tf.Tensor,
): tf.Tensor {
  const f = tf.customGrad(((...args: unknown[]) => {
    const save = args.pop() as tf.GradSaveFunc;
    const a = args[0] as tf.Tensor;
    save([a, ...consts]);
    return {
      value: fn(a, consts),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [sa, ...sc] = saved as [tf.Tensor, ...tf.Tensor[]];
        // a gradient tape inside a backward pass: tfjs's engine keeps one active tape (its own backward pass still
        // frees the outer tape's saved tensors at the end), so the outer tape is put back after the inner one
        const engine = tf.engine() as unknown as { state: { activeTape: unknown } };
        const outer = engine.state.activeTape;
        try {
          return tf.grads((xi: tf.Tensor) => fn(xi, sc))([sa, ...vars], dy);
        } finally {
          engine.state.activeTape = outer;
        }
      },
    };
  }) as never) as (...inputs: tf.Tensor[]) => tf.Tensor;
  return f(x, ...vars);
}

/** Logit values {@link CausalLM.headLogprobs} computes at once (16 MB of float32): rows per chunk = this / vocab. */
export const LOGIT_CHUNK = 2 ** 22;

/** tfjs treats seed 0 as "no seed" (a fresh random stream per process), so 0 maps to 2^32. */
function tfSeed(s: number): number {
  return s === 0 ? 2 ** 32 : s;
}

/** The causal LM. Create with `CausalLM.random` or `CausalLM.fromTensors`; call `dispose()` when done. */
export class CausalLM {
  /** The resolved architecture. */
  readonly config: LmConfig;
  /** The Hugging Face config it came from (written back on save). */
  readonly hfConfig: Record<string, unknown>;
  /**
   * Parameters by Hugging Face name (linear weights transposed to `[in, out]`): the base, the same Map (and
   * variables) in every model that shares it ({@link shareBase}).
   */
  readonly params: Map<string, tf.Variable>;
  /** LoRA adapters by module path (e.g. `model.layers.0.self_attn.q_proj`), when attached. */
  readonly lora = new Map<string, LoraPair>();
  /** The LoRA settings, when attached. */
  loraConfig: LoraConfig | undefined;
  private readonly base: BaseWeights;
  private disposed = false;

  private constructor(hfConfig: Record<string, unknown>, where: string, base?: BaseWeights) {
    this.hfConfig = { ...hfConfig };
    this.config = parseHfConfig(hfConfig, where);
    this.base = base ?? new BaseWeights(tf.keep(rotateHalfMatrix(this.config.headDim)));
    this.params = this.base.params;
  }

  /**
   * A model over THIS model's base weights (the same tensors, not a copy) with no LoRA adapters of its own: attach
   * its own with {@link addLora} or a saved adapter. Each model's adapters, optimizer and checkpoint stay its own; the
   * base is frozen for all of them ({@link trainableVariables} refuses to train it) and freed when the last model
   * sharing it is disposed. Rows of several such models decode together in one forward pass
   * (`ForwardOptions.rowAdapters`).
   */
  shareBase(): CausalLM {
    if (this.disposed) throw new Error('CausalLM.shareBase: the model was disposed');
    this.base.holders++;
    return new CausalLM(this.hfConfig, 'config', this.base);
  }

  /** Whether `other` runs on the same base weights (one made from the other by {@link shareBase}, or itself). */
  sharesBaseWith(other: CausalLM): boolean {
    return other.base === this.base;
  }

  /** Whether another live model shares this model's base ({@link shareBase}). */
  get baseShared(): boolean {
    return this.base.holders > 1;
  }

  /** Bytes of the base weights (float32), held once however many models share them. */
  baseBytes(): number {
    return this.numParams() * 4;
  }

  /**
   * wasm's low-memory mode, for a base near the 4 GiB wasm heap (Qwen3-0.6B: 2274 MB of float32). tfjs-wasm's XNNPACK
   * keeps a packed copy of every weight matrix it multiplies (about the base's size again), the tied head keeps the
   * embedding transposed (594 MB on that shape), and a gradient tape copies every tensor a backward pass needs. In
   * this mode the base's matmuls leave no packed copy behind (`matMulUnpacked`), the tied head multiplies by the
   * embedding itself (`(embedding @ x^T)^T`, and unpacked in the backward pass), and training adapters keeps each decoder layer's input only and
   * recomputes the layer in the backward pass (one more forward pass of compute). Values and gradients are the
   * same, up to a matmul's summation order. Default: on when the base exceeds {@link LOW_MEMORY_BASE_BYTES}. Set it
   * (for the whole shared base) to choose. Other backends ignore it.
   */
  get lowMemory(): boolean {
    return this.base.lowMemory ?? this.baseBytes() > LOW_MEMORY_BASE_BYTES;
  }

  set lowMemory(on: boolean) {
    this.base.lowMemory = on;
    if (on) {
      this.base.tiedHead?.t.dispose();
      this.base.tiedHead = undefined;
    }
  }

  /** Whether this pass runs in {@link lowMemory} mode (on wasm). */
  private lean(): boolean {
    return tf.getBackend() === 'wasm' && this.lowMemory;
  }

  /** Whether a forward pass treats the base as frozen by default: the model trains adapters only (`frozenBase`). */
  get baseFrozen(): boolean {
    return this.lora.size > 0 || this.baseShared;
  }

  /** Bytes of this model's own LoRA adapters (float32); 0 without adapters. */
  adapterBytes(): number {
    let n = 0;
    for (const { a, b } of this.lora.values()) n += a.size + b.size;
    return n * 4;
  }

  /**
   * A randomly initialised model (as `torch_ref.py`: N(0, 0.02) matrices, unit norms, q/k-norm 1 + N(0, 0.1)),
   * seeded, so the same seed gives the same weights on the same backend.
   */
  static random(hfConfig: Record<string, unknown>, seed = 0): CausalLM {
    const m = new CausalLM(hfConfig, 'config');
    let s = seed >>> 0;
    for (const [name, shape] of parameterShapes(m.config)) {
      const init = tf.tidy(() => {
        if (name.endsWith('q_norm.weight') || name.endsWith('k_norm.weight'))
          return tf.randomNormal(shape, 1, 0.1, 'float32', tfSeed(s++));
        if (name.endsWith('norm.weight')) return tf.ones(shape);
        const t = tf.randomNormal(shape, 0, 0.02, 'float32', tfSeed(s++));
        return isLinear(name) ? t.transpose() : t;
      });
      m.params.set(name, tf.variable(init, true));
      init.dispose();
    }
    return m;
  }

  /**
   * A model from Hugging Face-layout tensors. Throws naming the tensor for a missing tensor or a wrong shape;
   * extra tensors (e.g. `rotary_emb.inv_freq`) are ignored. `where` names the checkpoint in errors.
   */
  static fromTensors(
    hfConfig: Record<string, unknown>,
    tensors: ReadonlyMap<string, HostTensor>,
    where = 'checkpoint',
  ): CausalLM {
    const m = new CausalLM(hfConfig, `${where}/config.json`);
    try {
      for (const [name, shape] of parameterShapes(m.config)) {
        let t = tensors.get(name);
        if (!t && name === 'lm_head.weight') {
          throw new Error(`${where}: tensor 'lm_head.weight' is missing (config has tie_word_embeddings=false)`);
        }
        if (!t) throw new Error(`${where}: tensor '${name}' is missing`);
        if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
          throw new Error(
            `${where}: tensor '${name}' has shape [${t.shape.join(', ')}], expected [${shape.join(', ')}] from config.json`,
          );
        }
        const data = isLinear(name) ? transpose2d(t.data, shape[0]!, shape[1]!) : t.data;
        const s = isLinear(name) ? [shape[1]!, shape[0]!] : shape;
        const init = tf.tensor(data, s, 'float32');
        m.params.set(name, tf.variable(init, true));
        init.dispose(); // the variable holds the data
        t = undefined;
      }
    } catch (err) {
      m.dispose();
      throw err;
    }
    return m;
  }

  /** All parameters in Hugging Face layout (`[out, in]` linear weights), in canonical order. */
  exportTensors(): Map<string, HostTensor> {
    const out = new Map<string, HostTensor>();
    for (const [name, shape] of parameterShapes(this.config)) {
      const v = this.params.get(name)!;
      const data = v.dataSync() as Float32Array;
      out.set(name, { shape, data: isLinear(name) ? transpose2d(data, shape[1]!, shape[0]!) : new Float32Array(data) });
    }
    return out;
  }

  /**
   * Overwrites every base parameter with Hugging Face-layout tensors (the inverse of {@link exportTensors}), in place:
   * the variables (and so any optimizer holding them) stay the same objects. Throws naming the tensor for a missing
   * tensor or a wrong shape, before changing anything.
   */
  assignTensors(tensors: ReadonlyMap<string, HostTensor>, where = 'tensors'): void {
    if (this.baseShared) throw new Error(`${where}: this model shares its base weights with other models; they stay`);
    const shapes = parameterShapes(this.config);
    for (const [name, shape] of shapes) {
      const t = tensors.get(name);
      if (!t) throw new Error(`${where}: tensor '${name}' is missing`);
      if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
        throw new Error(`${where}: tensor '${name}' has shape [${t.shape.join(', ')}], expected [${shape.join(', ')}]`);
      }
    }
    for (const [name, shape] of shapes) {
      const t = tensors.get(name)!;
      const data = isLinear(name) ? transpose2d(t.data, shape[0]!, shape[1]!) : t.data;
      const v = this.params.get(name)!;
      tf.tidy(() => v.assign(tf.tensor(data, v.shape, 'float32')));
    }
  }

  /** Number of base parameters. */
  numParams(): number {
    let n = 0;
    for (const v of this.params.values()) n += v.size;
    return n;
  }

  /**
   * The variables an optimizer should update: the LoRA adapters when attached, else every base parameter. A model
   * sharing its base with another ({@link shareBase}) trains only adapters: without them this throws.
   */
  trainableVariables(): tf.Variable[] {
    if (this.lora.size > 0) return [...this.lora.values()].flatMap((p) => [p.a, p.b]);
    if (this.baseShared)
      throw new Error('this model shares its base weights with other models: only LoRA adapters train; attach some');
    return [...this.params.values()];
  }

  /**
   * Attaches fresh LoRA adapters (PEFT init: A ~ kaiming-uniform(a=√5), B = 0, so the model is unchanged) to every
   * linear module whose last name part is in `targetModules`. The base then stays frozen for `trainableVariables`.
   */
  addLora(cfg: LoraConfig, seed = 0): void {
    if (this.lora.size > 0) throw new Error('LoRA adapters are already attached; call removeLora() first');
    if (!Number.isInteger(cfg.r) || cfg.r <= 0) throw new Error(`LoRA rank r must be a positive integer, got ${cfg.r}`);
    let s = seed >>> 0;
    for (const [name, v] of this.params) {
      if (!name.endsWith('_proj.weight')) continue;
      const mod = name.slice(0, -'.weight'.length);
      if (!cfg.targetModules.includes(mod.split('.').pop()!)) continue;
      const [inDim, outDim] = v.shape as [number, number];
      const bound = 1 / Math.sqrt(inDim); // kaiming_uniform_(a=sqrt(5)) on [r, in] gives U(-1/sqrt(in), 1/sqrt(in))
      const initA = tf.randomUniform([inDim, cfg.r], -bound, bound, 'float32', tfSeed(s++));
      const initB = tf.zeros([cfg.r, outDim]);
      const a = tf.variable(initA, true);
      const b = tf.variable(initB, true);
      initA.dispose(); // the variables hold the data
      initB.dispose();
      this.lora.set(mod, { a, b });
    }
    if (this.lora.size === 0) {
      throw new Error(
        `LoRA target_modules ${JSON.stringify(cfg.targetModules)} match no linear module (have q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj)`,
      );
    }
    this.loraConfig = { r: cfg.r, alpha: cfg.alpha, targetModules: [...cfg.targetModules] };
  }

  /** Sets LoRA tensors from PEFT layout (`lora_A` `[r, in]`, `lora_B` `[out, r]`) for module `mod`. */
  setLoraPair(mod: string, loraA: HostTensor, loraB: HostTensor): void {
    const pair = this.lora.get(mod);
    if (!pair) throw new Error(`no LoRA adapter on module '${mod}'`);
    const [inDim, r] = pair.a.shape as [number, number];
    const outDim = pair.b.shape[1]!;
    if (loraA.shape[0] !== r || loraA.shape[1] !== inDim)
      throw new Error(`'${mod}.lora_A.weight' has shape [${loraA.shape.join(', ')}], expected [${r}, ${inDim}]`);
    if (loraB.shape[0] !== outDim || loraB.shape[1] !== r)
      throw new Error(`'${mod}.lora_B.weight' has shape [${loraB.shape.join(', ')}], expected [${outDim}, ${r}]`);
    tf.tidy(() => {
      pair.a.assign(tf.tensor2d(transpose2d(loraA.data, r, inDim), [inDim, r]));
      pair.b.assign(tf.tensor2d(transpose2d(loraB.data, outDim, r), [r, outDim]));
    });
  }

  /** LoRA tensors in PEFT layout by module path: `{ a: [r, in], b: [out, r] }`. */
  exportLora(): Map<string, { a: HostTensor; b: HostTensor }> {
    const out = new Map<string, { a: HostTensor; b: HostTensor }>();
    for (const [mod, { a, b }] of this.lora) {
      const [inDim, r] = a.shape as [number, number];
      const outDim = b.shape[1]!;
      out.set(mod, {
        a: { shape: [r, inDim], data: transpose2d(a.dataSync() as Float32Array, inDim, r) },
        b: { shape: [outDim, r], data: transpose2d(b.dataSync() as Float32Array, r, outDim) },
      });
    }
    return out;
  }

  /** Detaches and disposes the LoRA adapters. */
  removeLora(): void {
    for (const { a, b } of this.lora.values()) {
      a.dispose();
      b.dispose();
    }
    this.lora.clear();
    this.loraConfig = undefined;
  }

  private p(name: string): tf.Variable {
    const v = this.params.get(name);
    if (!v) throw new Error(`model has no parameter '${name}'`);
    return v;
  }

  /**
   * A linear module: the base matmul once for the whole batch, plus the low-rank update `(x @ A) @ B · α/r` of each
   * row's adapter on this module (none: the base alone). `x` is `[B, T, in]`.
   */
  private proj(x: tf.Tensor, mod: string, bias: boolean, lora: RowLora, frozen: boolean, unpacked: boolean): tf.Tensor {
    const y = linear(x, this.p(mod + '.weight'), bias ? this.p(mod + '.bias') : undefined, frozen, unpacked);
    const inDim = x.shape[x.rank - 1]!;
    if (lora.kind === 'own') {
      const l = lora.model.lora.get(mod);
      const cfg = lora.model.loraConfig;
      if (!l || !cfg) return y;
      const delta = mm(mm(x.reshape([-1, inDim]), l.a), l.b).mul(cfg.alpha / cfg.r);
      return y.add(delta.reshape(y.shape));
    }
    const st = lora.stack.module(mod);
    if (!st) return y;
    const rowsPer = x.size / inDim / lora.rows.length; // T
    const layout = [...st.cols].map(([m, c]) => `${lora.stack.models.indexOf(m)}:${c.start}:${c.r}`).join(',');
    let mask = lora.masks.get(layout);
    if (!mask) {
      const m = new Float32Array((x.size / inDim) * st.width);
      lora.rows.forEach((model, b) => {
        const c = st.cols.get(model);
        if (!c) return;
        for (let t = 0; t < rowsPer; t++)
          m.fill(c.scale, (b * rowsPer + t) * st.width + c.start, (b * rowsPer + t) * st.width + c.start + c.r);
      });
      mask = tf.tensor2d(m, [x.size / inDim, st.width]);
      lora.masks.set(layout, mask);
    }
    const delta = mm(mm(x.reshape([-1, inDim]), st.a).mul(mask), st.b);
    return y.add(delta.reshape(y.shape));
  }

  /** How this pass applies adapters: this model's own without `rows` (or when every row is one model's). */
  private rowLora(B: number, rows: readonly CausalLM[] | undefined, stack: AdapterStack | undefined): RowLora {
    if (!rows) return { kind: 'own', model: this };
    if (rows.length !== B) throw new Error(`CausalLM.forward: rowAdapters has ${rows.length} rows for a batch of ${B}`);
    rows.forEach((m, b) => {
      if (!this.sharesBaseWith(m))
        throw new Error(`CausalLM.forward: rowAdapters[${b}] does not share this model's base weights`);
      if (stack && !stack.models.includes(m))
        throw new Error(`CausalLM.forward: rowAdapters[${b}] is not in the adapterStack`);
    });
    if (rows.every((m) => m === rows[0])) return { kind: 'own', model: rows[0]! };
    return { kind: 'mixed', rows, stack: stack ?? new AdapterStack([...new Set(rows)], false), masks: new Map() };
  }

  /**
   * Runs the model on int32 ids `[B, T]` and returns logits `[B, T, V]` (or `[B, 1, V]` with `lastOnly`).
   * Call it inside `tf.tidy`; `tf.keep` the returned cache tensors if they must outlive the tidy.
   */
  forward(ids: tf.Tensor, opts: ForwardOptions = {}): { logits: tf.Tensor; cache?: KvCache } {
    const { hidden, cache, frozen } = this.trunk(ids, opts);
    const logits = this.head(hidden, frozen);
    return cache ? { logits, cache } : { logits };
  }

  /**
   * {@link forward} without the LM head: the final hidden states `[B, T, hidden]` (after the last norm), and whether
   * the pass treated the base as frozen. With {@link headLogprobs}, the log-probs of long sequences without holding
   * their `[T, vocab]` logits.
   */
  hidden(ids: tf.Tensor, opts: ForwardOptions = {}): { hidden: tf.Tensor; frozen: boolean } {
    const { hidden, frozen } = this.trunk(ids, { ...opts, returnCache: false });
    return { hidden, frozen };
  }

  /** The decoder up to the head's input; see {@link forward}. */
  private trunk(ids: tf.Tensor, opts: ForwardOptions): { hidden: tf.Tensor; cache?: KvCache; frozen: boolean } {
    if (this.disposed) throw new Error('CausalLM.forward: the model was disposed');
    const c = this.config;
    const [B, T] = ids.shape as [number, number];
    const H = c.numHeads,
      KV = c.numKvHeads,
      hd = c.headDim,
      rep = H / KV,
      eps = c.rmsNormEps;
    const past = opts.cache;
    const pastLen = past && past.length > 0 ? past[0]!.k.shape[2]! : 0;
    const start = opts.start ?? pastLen;
    const wantCache = opts.returnCache ?? past !== undefined;
    const lora = this.rowLora(B, opts.rowAdapters, opts.adapterStack);
    const frozen = opts.frozenBase ?? (this.baseFrozen || lora.kind === 'mixed');
    const unpacked = this.lean();
    const diffEmbed =
      opts.differentiableEmbedding ??
      (lora.kind === 'own' ? lora.model.lora.size === 0 : lora.stack.models.every((m) => m.lora.size === 0));
    const pads = opts.padLeft && opts.padLeft.some((p) => p > 0) ? opts.padLeft : undefined;
    if (pads && pads.length !== B)
      throw new Error(`CausalLM.forward: padLeft has ${pads.length} rows for a batch of ${B}`);
    const S = pastLen + T;
    const scale = 1 / Math.sqrt(hd);
    // One-token step without padding (KV-cached decoding): no mask (nothing is masked), RoPE as one [hd, hd] matmul
    // (the query's 1/√hd folded in), and the head transposes are plain reshapes (T = 1).
    const decode = T === 1 && !pads;
    const { cos, sin } = decode
      ? { cos: undefined, sin: undefined }
      : ropeTables(start, T, hd, c.ropeTheta, c.ropeScaling, pads);
    const ropeQ = decode ? ropeMatrix(start, hd, c.ropeTheta, c.ropeScaling, scale) : undefined;
    const ropeK = decode ? ropeMatrix(start, hd, c.ropeTheta, c.ropeScaling) : undefined;
    const mask = decode ? undefined : pads ? causalPadMask(T, S, pads) : causalMask(T, S).reshape([1, 1, 1, T, S]);
    type LayerArgs = [i: number, x: tf.Tensor, cos?: tf.Tensor, sin?: tf.Tensor, mask?: tf.Tensor];
    type LayerOut = { x: tf.Tensor; k: tf.Tensor; v: tf.Tensor };
    /**
     * Decoder layer i on `x`, with its keys and values (`cos`, `sin`, `mask` as above: arguments, for recomputing).
     * Without a tape, its intermediates are freed as it ends, not with the caller's tidy after every layer (at 256
     * tokens on the Qwen3-0.6B shape, 2.5 GB of them).
     */
    // (rows of several adapters build their stacked adapters and row masks lazily, for every layer: kept as before)
    const layer = (...a: LayerArgs): LayerOut =>
      !tapeOn() && lora.kind === 'own' ? tf.tidy(() => layerOps(...a)) : layerOps(...a);
    const layerOps = (...[i, x, cos, sin, mask]: LayerArgs): LayerOut => {
      const pre = `model.layers.${i}.`;
      const h = rmsNorm(x, this.p(pre + 'input_layernorm.weight'), eps);
      let q = this.proj(h, pre + 'self_attn.q_proj', c.attentionBias, lora, frozen, unpacked).reshape([B, T, H, hd]);
      let k = this.proj(h, pre + 'self_attn.k_proj', c.attentionBias, lora, frozen, unpacked).reshape([B, T, KV, hd]);
      let v = this.proj(h, pre + 'self_attn.v_proj', c.attentionBias, lora, frozen, unpacked).reshape([B, T, KV, hd]);
      if (c.qkNorm) {
        q = rmsNorm(q, this.p(pre + 'self_attn.q_norm.weight'), eps);
        k = rmsNorm(k, this.p(pre + 'self_attn.k_norm.weight'), eps);
      }
      if (decode) {
        q = mm(q.reshape([-1, hd]), ropeQ!).reshape([B, H, 1, hd]);
        k = mm(k.reshape([-1, hd]), ropeK!).reshape([B, KV, 1, hd]);
        v = v.reshape([B, KV, 1, hd]);
      } else {
        q = applyRope(q, cos!, sin!, this.base.rot).mul(scale).transpose([0, 2, 1, 3]); // [B, H, T, hd]
        k = applyRope(k, cos!, sin!, this.base.rot).transpose([0, 2, 1, 3]); // [B, KV, T, hd]
        v = v.transpose([0, 2, 1, 3]);
      }
      if (past && past[i]) {
        k = tf.concat([past[i]!.k, k], 2);
        v = tf.concat([past[i]!.v, v], 2);
      }
      // GQA without copies: the `rep` query heads of one kv head are consecutive, so [B, H, T, hd] → [B, KV, rep·T, hd].
      const qg = q.reshape([B, KV, rep * T, hd]);
      // decoding: one query row, where the transpose flag (measured 0.29 vs 0.61 ms at S = 64) beats copying the cache
      // (padded rows' one-token steps: no copy of the cache either, where the bits stay the same; see matMulKT)
      const raw = decode
        ? tf.matMul(qg, k, false, true)
        : T === 1 && !tapeOn()
          ? matMulKT(qg, k)
          : mm(qg, k.transpose([0, 1, 3, 2]));
      const att = mask
        ? tf.softmax(raw.reshape([B, KV, rep, T, S]).add(mask), -1).reshape([B, KV, rep * T, S])
        : tf.softmax(raw, -1);
      const o = decode
        ? mm(att, v).reshape([B, T, H * hd])
        : mm(att, v)
            .reshape([B, H, T, hd])
            .transpose([0, 2, 1, 3])
            .reshape([B, T, H * hd]);
      x = x.add(this.proj(o, pre + 'self_attn.o_proj', false, lora, frozen, unpacked));
      const h2 = rmsNorm(x, this.p(pre + 'post_attention_layernorm.weight'), eps);
      const g = this.proj(h2, pre + 'mlp.gate_proj', false, lora, frozen, unpacked);
      const u = this.proj(h2, pre + 'mlp.up_proj', false, lora, frozen, unpacked);
      return { x: x.add(this.proj(silu(g).mul(u), pre + 'mlp.down_proj', false, lora, frozen, unpacked)), k, v };
    };
    let x = embed(this.p('model.embed_tokens.weight'), ids, diffEmbed);
    const newCache: KvCache = [];
    // low-memory mode, training adapters: keep each layer's input only, and recompute the layer in the backward pass
    const recompute = tapeOn() && frozen && lora.kind === 'own' && !wantCache && !decode && unpacked;
    for (let i = 0; i < c.numLayers; i++) {
      if (recompute) {
        const vars = [...lora.model.lora]
          .filter(([mod]) => mod.startsWith(`model.layers.${i}.`))
          .flatMap(([, p]) => [p.a, p.b]);
        x = recomputedInBackward(x, [cos!, sin!, mask!], vars, (xi, [ci, si, mi]) => layer(i, xi, ci, si, mi).x);
        continue;
      }
      const out = layer(i, x, cos, sin, mask);
      x = out.x;
      if (wantCache) newCache.push({ k: out.k, v: out.v });
    }
    if (opts.lastOnly) x = x.slice([0, T - 1, 0], [B, 1, c.hiddenSize]);
    const hidden = rmsNorm(x, this.p('model.norm.weight'), eps);
    return wantCache ? { hidden, cache: newCache, frozen } : { hidden, frozen };
  }

  /**
   * The LM head: `x @ lm_head`, or for a tied head `x @ embedding^T` without transposing the vocab × hidden embedding
   * on every forward pass. Under a gradient tape the transpose is taken afresh, so gradients flow to the embedding.
   * Outside one, wasm (whose matMul with a transpose flag is slow) keeps the transposed copy until the embedding's data
   * changes (an optimizer step or a load assigns new data); other backends multiply by the transpose flag, no copy
   * (measured on cpu at Qwen3-0.6B widths: 0.44 s a token against 5.6 s transposing each time). With a `frozen` base
   * (LoRA) no gradient goes to the embedding: under a tape the head multiplies by the transposed copy (wasm) or the
   * transpose flag, and its backward by the embedding itself, so no vocab × hidden transpose is taken per pass. With
   * {@link lowMemory} on wasm there is no transposed copy: the head computes `(embedding @ x^T)^T` (XNNPACK then
   * packs the small `x^T`, not the embedding), and the backward of a frozen one multiplies by the embedding unpacked.
   */
  private head(x: tf.Tensor, frozen: boolean): tf.Tensor {
    const unpacked = this.lean();
    if (!this.config.tieWordEmbeddings) return linear(x, this.p('lm_head.weight'), undefined, frozen, unpacked);
    const emb = this.p('model.embed_tokens.weight');
    const lead = x.shape.slice(0, -1);
    const x2 = x.reshape([-1, emb.shape[1]!]);
    const shaped = (y: tf.Tensor): tf.Tensor => y.reshape([...lead, emb.shape[0]!]);
    if (unpacked && (!tapeOn() || frozen)) {
      const value = (a: tf.Tensor): tf.Tensor => {
        const aT = a.transpose();
        const yT = matMulUnpacked(emb, aT);
        aT.dispose();
        const y = yT.transpose();
        yT.dispose();
        return y;
      };
      if (!tapeOn()) return shaped(value(x2));
      return shaped(
        tf.customGrad(((a: tf.Tensor) => ({
          value: value(a),
          gradFunc: (dy: tf.Tensor) => matMulUnpacked(dy, emb),
        })) as never)(x2) as tf.Tensor,
      );
    }
    if (tapeOn() && frozen) {
      const y =
        tf.getBackend() === 'wasm'
          ? mmFrozen(x2, this.tiedTransposed(emb), emb)
          : (tf.customGrad(((a: tf.Tensor) => ({
              value: tf.matMul(a as tf.Tensor2D, emb as tf.Tensor2D, false, true),
              gradFunc: (dy: tf.Tensor) => tf.matMul(dy as tf.Tensor2D, emb as tf.Tensor2D),
            })) as never)(x2) as tf.Tensor);
      return shaped(y);
    }
    if (tapeOn()) return linear(x, emb.transpose());
    if (tf.getBackend() !== 'wasm') return shaped(tf.matMul(x2 as tf.Tensor2D, emb as tf.Tensor2D, false, true));
    return linear(x, this.tiedTransposed(emb));
  }

  /**
   * The log-prob of each target token under the head, `log softmax(head(x) / T)[target]`, for rows `x` `[N, hidden]`
   * (hidden states from {@link hidden}), int32 `targets` `[N]` and optional per-row temperatures (absent: 1), as a
   * differentiable `[N]` tensor for a FROZEN base (gradients flow to `x` only). The vocab-wide logits exist only
   * {@link LOGIT_CHUNK} values at a time: rows go through the head in chunks, the forward keeps nothing of them and
   * the backward recomputes each chunk (on the Qwen3-0.6B vocab, 256 tokens' logits, softmax and gradients would
   * take about 1 GB at once). The same values and gradients as `logSoftmax(head(x) / T)` picked by a one-hot, the
   * same ops row for row. `rowsPerChunk` overrides the chunk's rows.
   */
  headLogprobs(x: tf.Tensor, targets: tf.Tensor, temperatures?: Float32Array, rowsPerChunk?: number): tf.Tensor1D {
    const V = this.config.vocabSize;
    const [N, D] = x.shape as [number, number];
    const rows = rowsPerChunk ?? Math.max(1, Math.floor(LOGIT_CHUNK / V));
    const temps = temperatures ? tf.tensor2d(temperatures, [N, 1]) : undefined;
    // per chunk: the scaled logits' log-softmax and the one-hot of its targets (inside a tidy of the caller's)
    const chunkLp = (xc: tf.Tensor, t: tf.Tensor, tc: tf.Tensor | undefined): { lp: tf.Tensor; hot: tf.Tensor } => {
      const logits = this.head(xc, true);
      return { lp: tf.logSoftmax(tc ? logits.div(tc) : logits), hot: oneHotF32(t, V) };
    };
    const chunks = (n: number): [number, number][] =>
      Array.from({ length: Math.ceil(n / rows) }, (_, i) => [i * rows, Math.min(rows, n - i * rows)]);
    const f = tf.customGrad(((a: tf.Tensor, save: tf.GradSaveFunc) => {
      // saved, not captured: the caller's tidy frees its tensors before the backward pass runs
      save([a, targets, ...(temps ? [temps] : [])]);
      const parts = chunks(N).map(([s, n]) =>
        tf.tidy(() => {
          const tc = temps?.slice([s, 0], [n, 1]);
          const { lp, hot } = chunkLp(a.slice([s, 0], [n, D]), targets.slice([s], [n]), tc);
          return lp.mul(hot).sum(-1);
        }),
      );
      const value = parts.length === 1 ? parts[0]! : tf.concat(parts);
      return {
        value,
        gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
          const [sa, st, stemp] = saved as [tf.Tensor, tf.Tensor, tf.Tensor | undefined];
          const grads = chunks(N).map(([s, n]) =>
            tf.tidy(() => {
              const tc = stemp?.slice([s, 0], [n, 1]);
              const { lp, hot } = chunkLp(sa.slice([s, 0], [n, D]), st.slice([s], [n]), tc);
              // as tfjs differentiates `logSoftmax(z).mul(hot).sum(-1)`: g = dy·hot, dz = g - sum(g)·exp(lp)
              const g = dy.slice([s], [n]).reshape([n, 1]).mul(hot);
              const dz = g.sub(g.sum(-1, true).mul(lp.exp()));
              return this.headGrad(tc ? dz.div(tc) : dz);
            }),
          );
          return grads.length === 1 ? grads[0]! : tf.concat(grads);
        },
      };
    }) as never) as (a: tf.Tensor) => tf.Tensor;
    return f(x) as tf.Tensor1D;
  }

  /** The gradient of the head's input for a frozen base: `dy @ head^T` (the head's own backward, see {@link head}). */
  private headGrad(dy: tf.Tensor): tf.Tensor {
    const emb = this.p('model.embed_tokens.weight');
    if (this.config.tieWordEmbeddings) return this.lean() ? matMulUnpacked(dy, emb) : tf.matMul(dy as tf.Tensor2D, emb);
    const w = this.p('lm_head.weight');
    return tf.getBackend() === 'wasm'
      ? tf.matMul(dy as tf.Tensor2D, w.transpose())
      : tf.matMul(dy as tf.Tensor2D, w, false, true);
  }

  /** The embedding transposed, kept (with the base) until the embedding's data changes. */
  private tiedTransposed(emb: tf.Variable): tf.Tensor {
    const base = this.base;
    if (base.tiedHead?.source !== emb.dataId) {
      base.tiedHead?.t.dispose();
      base.tiedHead = { source: emb.dataId, t: tf.keep(tf.tidy(() => emb.transpose())) };
    }
    return base.tiedHead.t;
  }

  /** Frees the model's adapters, and its base weights unless another model still shares them ({@link shareBase}). */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.removeLora();
    if (--this.base.holders === 0) this.base.dispose();
  }
}
