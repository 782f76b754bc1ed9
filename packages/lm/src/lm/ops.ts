/**
 * Tensor ops tuned for the wasm backend (measured here): matmuls whose gradients use explicit transposes (wasm's
 * matMul with transpose flags is ~10× slower) and an embedding lookup by one-hot matmul where gradients flow (wasm
 * lacks UnsortedSegmentSum, the gradient of `gather`).
 */
import * as tf from '@tensorflow/tfjs';
import { matMulUnpacked } from '../backend/wasm-kernels.js';
import type { RopeScaling } from './config.js';

function swapLast(x: tf.Tensor): tf.Tensor {
  const r = x.rank;
  const perm = [...Array(r).keys()];
  perm[r - 2] = r - 1;
  perm[r - 1] = r - 2;
  return tf.transpose(x, perm);
}

/** `mm` with its custom gradient. */
const mmGrad: (a: tf.Tensor, b: tf.Tensor) => tf.Tensor = tf.customGrad(((
  a: tf.Tensor,
  b: tf.Tensor,
  save: tf.GradSaveFunc,
) => {
  save([a, b]);
  return {
    value: tf.matMul(a as tf.Tensor3D, b as tf.Tensor3D),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sa, sb] = saved as [tf.Tensor, tf.Tensor];
      return [
        tf.matMul(dy as tf.Tensor3D, swapLast(sb) as tf.Tensor3D),
        tf.matMul(swapLast(sa) as tf.Tensor3D, dy as tf.Tensor3D),
      ];
    },
  };
}) as never) as (a: tf.Tensor, b: tf.Tensor) => tf.Tensor;

/** Whether a gradient tape is recording (inside `tf.grad`/`variableGrads`); tfjs has no public API for it. */
export function tapeOn(): boolean {
  const e = tf.engine() as unknown as { isTapeOn?: () => boolean };
  return typeof e.isTapeOn === 'function' ? e.isTapeOn() : true;
}

/**
 * `a @ b` for tensors of equal rank ≥ 2 (batch dims equal), with a gradient that uses explicit transposes instead of
 * matMul's transpose flags. Outside a gradient tape it is a plain `matMul` (same kernel, no custom-gradient scope).
 */
export function mm(a: tf.Tensor, b: tf.Tensor): tf.Tensor {
  return tapeOn() ? mmGrad(a, b) : tf.matMul(a as tf.Tensor3D, b as tf.Tensor3D);
}

/**
 * `x @ w` (rank 2) for a FROZEN `w`: the gradient flows to `x` only, as `dy @ wT` (`wT`: `w` transposed, when the
 * caller holds it; else a transpose on wasm, the transpose flag elsewhere), and the weight's own gradient, which `mm` computes whether or not anyone
 * asked for it, is never computed: a LoRA update's backward pass then costs the activations' gradients alone.
 */
export function mmFrozen(x: tf.Tensor, w: tf.Tensor, wT?: tf.Tensor, unpacked = false): tf.Tensor {
  const times = (a: tf.Tensor): tf.Tensor =>
    unpacked ? matMulUnpacked(a, w) : tf.matMul(a as tf.Tensor2D, w as tf.Tensor2D);
  if (!tapeOn()) return times(x);
  return tf.customGrad(((a: tf.Tensor) => ({
    value: times(a),
    // wasm: an explicit transpose (its matMul with a transpose flag is ~10× slower); elsewhere the flag, no copy
    gradFunc: (dy: tf.Tensor) =>
      wT || tf.getBackend() !== 'wasm'
        ? tf.matMul(dy as tf.Tensor2D, (wT ?? w) as tf.Tensor2D, false, !wT)
        : tf.matMul(dy as tf.Tensor2D, swapLast(w) as tf.Tensor2D),
  })) as never)(x) as tf.Tensor;
}

/**
 * `x @ w` where x is `[..., in]` and w is `[in, out]`; returns `[..., out]`. `frozen`: no gradient for `w`
 * ({@link mmFrozen}). `unpacked` (wasm): no packed copy of `w` is kept after the matmul (`matMulUnpacked`), where
 * `w` gets no gradient (a frozen weight, or no gradient tape).
 */
export function linear(x: tf.Tensor, w: tf.Tensor, bias?: tf.Tensor, frozen = false, unpacked = false): tf.Tensor {
  const inDim = x.shape[x.rank - 1]!;
  const lead = x.shape.slice(0, -1);
  const x2 = x.reshape([-1, inDim]);
  const y = frozen ? mmFrozen(x2, w, undefined, unpacked) : unpacked && !tapeOn() ? matMulUnpacked(x2, w) : mm(x2, w);
  const out = y.reshape([...lead, w.shape[1]!]);
  return bias ? out.add(bias) : out;
}

/** RMSNorm over the last axis: `x * rsqrt(mean(x²) + eps) * w`. */
export function rmsNorm(x: tf.Tensor, w: tf.Tensor, eps: number): tf.Tensor {
  const ms = x.square().mean(-1, true);
  return x.mul(ms.add(eps).rsqrt()).mul(w);
}

/**
 * Embedding lookup by `gather`. With `differentiable` (and a gradient tape recording), its gradient is a one-hot
 * matmul (wasm lacks UnsortedSegmentSum, the gradient of `gather`).
 * `ids` is int32 `[B, T]`; returns `[B, T, D]`.
 */
export function embed(table: tf.Tensor, ids: tf.Tensor, differentiable: boolean): tf.Tensor {
  const [B, T] = ids.shape as [number, number];
  const [V, D] = table.shape as [number, number];
  const flat = ids.reshape([-1]);
  if (!tapeOn()) return tf.gather(table, flat).reshape([B, T, D]);
  if (!differentiable) {
    // a constant lookup under a tape: tfjs may save the whole table for a gradient nobody asks for (a copy of it on
    // wasm, seen at 594 MB on the Qwen3-0.6B vocab); as a function of the ids only, nothing of the table is saved
    const lookup = tf.customGrad(((i: tf.Tensor) => ({
      value: tf.gather(table, i),
      gradFunc: () => tf.zeros(i.shape),
    })) as never) as (i: tf.Tensor) => tf.Tensor;
    return lookup(flat).reshape([B, T, D]);
  }
  // forward: a gather (equal to the one-hot matmul, whose sums add exact zeros); gradient: onehotᵀ @ dy
  const lookup = tf.customGrad(((tb: tf.Tensor, save: tf.GradSaveFunc) => {
    save([flat]); // kept by the engine until the gradient runs (a closure reference would be disposed by then)
    return {
      value: tf.gather(tb, flat),
      // webgpu in Node cannot read ids back synchronously: its one-hot is built on the device
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
        tf.getBackend() === 'webgpu'
          ? tf.matMul(oneHotF32(saved[0]!, V), dy as tf.Tensor2D, true, false)
          : tf.matMul(oneHotT(saved[0]!, V), dy as tf.Tensor2D),
    };
  }) as never) as (tb: tf.Tensor) => tf.Tensor;
  return lookup(table).reshape([B, T, D]);
}

/**
 * One-hot float32 `[N, depth]` of int32 ids `[N]`. (wasm's OneHot kernel ignores a float dtype and writes int32
 * bits, so this builds the int32 one-hot and casts.)
 */
export function oneHotF32(ids: tf.Tensor, depth: number): tf.Tensor2D {
  return tf.oneHot(ids.reshape([-1]) as tf.Tensor1D, depth).cast('float32') as tf.Tensor2D;
}

/** The transposed one-hot `[depth, N]` of int32 ids `[N]`, built on the host (no OneHot, Cast and Transpose kernels). */
function oneHotT(ids: tf.Tensor, depth: number): tf.Tensor2D {
  const v = ids.dataSync() as Int32Array;
  const N = v.length;
  const m = new Float32Array(depth * N);
  for (let n = 0; n < N; n++) {
    const id = v[n]!;
    if (id >= 0 && id < depth) m[id * N + n] = 1;
  }
  return tf.tensor2d(m, [depth, N]);
}

/** SiLU (x·sigmoid(x)). */
export function silu(x: tf.Tensor): tf.Tensor {
  return x.mul(tf.sigmoid(x));
}

const rotCache = new Map<number, Float32Array>();

/** The `[hd, hd]` matrix R with `x @ R = rotate_half(x) = concat(-x2, x1)` (exact: entries are 0 and ±1). */
export function rotateHalfMatrix(hd: number): tf.Tensor2D {
  let data = rotCache.get(hd);
  if (!data) {
    data = new Float32Array(hd * hd);
    const h = hd / 2;
    for (let j = 0; j < h; j++) {
      data[(j + h) * hd + j] = -1; // out[j] = -x[j + h]
      data[j * hd + (j + h)] = 1; // out[j + h] = x[j]
    }
    rotCache.set(hd, data);
  }
  return tf.tensor2d(data, [hd, hd]);
}

/**
 * RoPE inverse frequencies `1 / theta^(2i/hd)` in float32 (as PyTorch computes them), with Hugging Face's `linear`
 * or `llama3` scaling applied when given.
 */
export function ropeInvFreq(hd: number, theta: number, scaling?: RopeScaling): Float32Array {
  const h = hd / 2;
  const inv = new Float32Array(h);
  for (let i = 0; i < h; i++) inv[i] = Math.fround(1 / Math.fround(Math.pow(theta, Math.fround((2 * i) / hd))));
  if (scaling?.type === 'linear') for (let i = 0; i < h; i++) inv[i] = inv[i]! / scaling.factor;
  if (scaling?.type === 'llama3') {
    const { factor, lowFreqFactor: lo, highFreqFactor: hi, originalMaxPositionEmbeddings: old } = scaling;
    const lowWavelen = old / lo,
      highWavelen = old / hi;
    for (let i = 0; i < h; i++) {
      const f = inv[i]!;
      const wavelen = (2 * Math.PI) / f;
      if (wavelen < highWavelen) continue;
      if (wavelen > lowWavelen) {
        inv[i] = f / factor;
        continue;
      }
      const smooth = (old / wavelen - lo) / (hi - lo);
      inv[i] = (1 - smooth) * (f / factor) + smooth * f;
    }
  }
  return inv;
}

/**
 * RoPE tables `[R, T, 1, hd]` for R rows: row r's token at column `start + t` sits at position
 * `start + t - pads[r]` (left padding; pad columns get position 0). Rotate-half convention, as Hugging Face;
 * computed like PyTorch in float32: `angle = pos * inv_freq`. Without `pads`: one row, no padding.
 */
export function ropeTables(
  start: number,
  T: number,
  hd: number,
  theta: number,
  scaling?: RopeScaling,
  pads?: readonly number[],
): { cos: tf.Tensor; sin: tf.Tensor } {
  const h = hd / 2;
  const inv = ropeInvFreq(hd, theta, scaling);
  const rows = pads ?? [0];
  const R = rows.length;
  const cos = new Float32Array(R * T * hd);
  const sin = new Float32Array(R * T * hd);
  for (let r = 0; r < R; r++) {
    for (let t = 0; t < T; t++) {
      const pos = Math.max(0, start + t - rows[r]!);
      const o = (r * T + t) * hd;
      for (let i = 0; i < h; i++) {
        const a = Math.fround(pos * inv[i]!);
        const c = Math.cos(a),
          s = Math.sin(a);
        cos[o + i] = c;
        cos[o + i + h] = c;
        sin[o + i] = s;
        sin[o + i + h] = s;
      }
    }
  }
  return { cos: tf.tensor4d(cos, [R, T, 1, hd]), sin: tf.tensor4d(sin, [R, T, 1, hd]) };
}

/**
 * RoPE at one position as a `[hd, hd]` matrix M with `x @ M = (x·cos + rotate_half(x)·sin) · scale`:
 * `M = (diag(cos) + R·diag(sin)) · scale`, R from `rotateHalfMatrix`. Each output sums two products (the other terms
 * are exact zeros), so it equals `applyRope` up to the rounding of `scale`. Used for one-token decoding steps.
 */
export function ropeMatrix(pos: number, hd: number, theta: number, scaling?: RopeScaling, scale = 1): tf.Tensor2D {
  const h = hd / 2;
  const inv = ropeInvFreq(hd, theta, scaling);
  const m = new Float32Array(hd * hd);
  for (let i = 0; i < h; i++) {
    const a = Math.fround(pos * inv[i]!);
    const c = Math.fround(Math.cos(a)),
      s = Math.fround(Math.sin(a));
    m[i * hd + i] = c * scale; // out[i] = x[i]·cos - x[i+h]·sin
    m[(i + h) * hd + i] = -s * scale;
    m[(i + h) * hd + i + h] = c * scale; // out[i+h] = x[i+h]·cos + x[i]·sin
    m[i * hd + i + h] = s * scale;
  }
  return tf.tensor2d(m, [hd, hd]);
}

/** Applies RoPE to `x` of shape `[B, T, nHeads, hd]` with tables `[1 or B, T, 1, hd]` from `ropeTables`. */
export function applyRope(x: tf.Tensor, cos: tf.Tensor, sin: tf.Tensor, rot: tf.Tensor): tf.Tensor {
  const [B, T, Hn, hd] = x.shape as [number, number, number, number];
  const rotated = mm(x.reshape([-1, hd]), rot).reshape([B, T, Hn, hd]);
  return x.mul(cos).add(rotated.mul(sin));
}

/**
 * Additive mask `[R, 1, 1, T, S]` (0 allowed, -1e9 masked) for queries at columns `S-T .. S-1`: causal, and for
 * each row r the first `pads[r]` key columns (left padding) are masked too.
 */
export function causalPadMask(T: number, S: number, pads: readonly number[]): tf.Tensor {
  const R = pads.length;
  const m = new Float32Array(R * T * S);
  const off = S - T;
  for (let r = 0; r < R; r++) {
    const p = pads[r]!;
    for (let i = 0; i < T; i++) {
      const o = (r * T + i) * S;
      for (let j = 0; j < S; j++) if (j > i + off || j < p) m[o + j] = -1e9;
    }
  }
  return tf.tensor(m, [R, 1, 1, T, S]);
}

/** Additive causal mask `[T, S]` for queries at absolute positions `S-T .. S-1` (0 allowed, -1e9 masked). */
export function causalMask(T: number, S: number): tf.Tensor2D {
  const m = new Float32Array(T * S);
  const off = S - T;
  for (let i = 0; i < T; i++) for (let j = i + off + 1; j < S; j++) m[i * S + j] = -1e9;
  return tf.tensor2d(m, [T, S]);
}
