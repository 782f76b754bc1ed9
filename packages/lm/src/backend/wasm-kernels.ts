/**
 * Faster replacements for four kernels of `@tensorflow/tfjs-backend-wasm` 4.x, installed by `initBackend` when the
 * wasm backend starts. All compute exactly what the originals compute (same values, up to the summation order of
 * a matmul); they only avoid slow paths measured here:
 *
 * - `BatchMatMul` with a batch dimension > 1 runs a naive loop in the wasm build (~1 GFLOP/s) while a single 2-D
 *   matmul runs through XNNPACK (~13 GFLOP/s). The replacement runs one XNNPACK 2-D matmul per batch entry, on
 *   sub-ranges of the wasm heap (no copies), by registering temporary tensor ids with the wasm runtime.
 * - `Slice` copies its WHOLE input to the JS heap (`readSync`) before copying the slice out, so cutting a tensor
 *   into n pieces costs n full copies. The replacement reads the input through a view of the wasm heap.
 * - `GatherV2` walks element by element (about 40 M elements/s measured here: 13% of a 32-row KV-cached decode, which
 *   tiles the prompt's cache to its rows and drops finished rows by gathers). The replacement copies each gathered
 *   slice as one block inside the wasm heap (`copyWithin`).
 * - `BatchMatMul` of KV-cached decoding (one query row per batch entry against the cache, batch > 1) runs the
 *   original's scalar loop at about 1.7 GFLOP/s. The replacement (`wasm/attention.wat`) sums in the original's
 *   order (blocks of 48 along the shared dimension, each summed in order and added to the output) and so gives the
 *   same bits, with four outputs at a time in SIMD lanes.
 * - `Concat` (the KV cache grows by one column per step) copies through a fresh typed-array view per slice; the
 *   replacement copies the same blocks inside the heap with no view per block.
 *
 * Anything outside the fast cases (transpose flags outside decode attention: XNNPACK gains nothing there; broadcast
 * batches, other dtypes) goes to the original kernel.
 */
import * as tf from '@tensorflow/tfjs';
import { ATTENTION_WASM } from './wasm/attention-wasm.js';

/** The parts of the wasm backend these kernels use (not in tfjs's public types). */
interface WasmBackendLike {
  readonly wasm: {
    readonly asm?: { readonly memory?: WasmMemory };
    readonly HEAPU8: Uint8Array;
    cwrap(name: string, ret: null, args: string[]): (...args: unknown[]) => void;
    readonly tfjs: {
      registerTensor(id: number, size: number, memoryOffset: number): void;
      disposeData(id: number): void;
    };
  };
  readonly dataIdMap: { get(dataId: object): { id: number; memoryOffset: number } | undefined };
  makeOutput(shape: number[], dtype: tf.DataType): tf.TensorInfo;
}

type KernelArgs = { inputs: Record<string, tf.TensorInfo>; backend: unknown; attrs?: Record<string, unknown> };
type KernelFn = (args: KernelArgs) => tf.TensorInfo | tf.TensorInfo[];

// Temporary ids far above the backend's own counter (which starts at 0 and counts up by one per tensor).
const TMP_A = 0x7ff0_0001,
  TMP_B = 0x7ff0_0002,
  TMP_O = 0x7ff0_0003;

/** Smallest row count of A for which per-batch XNNPACK matmuls beat the original kernel. */
const MIN_ROWS = 24;

let installed = false;

/**
 * Whether the decode kernels (attention, gather, concat) are on; see {@link setDecodeKernels}. The environment
 * variable `TROUPE_DECODE_KERNELS=0` starts them off (A/B runs of whole commands, e.g. `troupe bench model`).
 */
let decodeKernels =
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.TROUPE_DECODE_KERNELS !==
  '0';

/**
 * Turns the decode kernels (attention matmuls, `GatherV2`, `Concat`) off or on, for A/B runs and the tests that
 * check they give the same bits as the originals. Returns the previous setting.
 */
export function setDecodeKernels(on: boolean): boolean {
  const was = decodeKernels;
  decodeKernels = on;
  return was;
}

/** The attention kernels of `wasm/attention.wat`, instantiated over the wasm backend's memory. */
interface AttentionKernels {
  qkT(q: number, k: number, out: number, batch: number, M: number, S: number, hd: number): void;
  av(a: number, v: number, out: number, batch: number, M: number, S: number, N: number): void;
}

/** A `WebAssembly.Memory` (the WebAssembly API is not in this package's type libraries). */
interface WasmMemory {
  readonly buffer: ArrayBufferLike;
}

/** The parts of the WebAssembly API used here. */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { readonly exports: unknown };
}

function attentionKernels(memory: WasmMemory | undefined): AttentionKernels | undefined {
  // a shared memory (the threaded build) would need a shared import: leave those to the original kernel
  if (!memory || !(memory.buffer instanceof ArrayBuffer)) return undefined;
  try {
    const api = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
    const mod = new api.Module(Uint8Array.from(atob(ATTENTION_WASM), (c) => c.charCodeAt(0)));
    return new api.Instance(mod, { env: { memory } }).exports as AttentionKernels;
  } catch {
    return undefined; // no SIMD in this runtime
  }
}

/** The `BatchMatMul` attribute asking the fast kernel for {@link matMulUnpacked}'s behaviour. */
const UNPACKED_B = 'troupeUnpackedB';

/**
 * `a @ b` (rank 2 or batched, no transposes) leaving no packed copy of `b` behind. tfjs-wasm's `BatchMatMul` hands a
 * 2-D matmul to XNNPACK, which packs `b` (the weights) into its own buffer of about `b`'s size and keeps it, cached
 * by `b`'s tensor id, until `b` is freed: fast when a weight is multiplied again and again, but for a frozen base it
 * doubles the base's memory (2274 MB more on the Qwen3-0.6B shape, past the 4 GiB wasm heap). This runs the same
 * XNNPACK matmul on a temporary id over `b`'s memory and drops that id, and with it the packed copy, right after
 * (packing then costs one pass over `b` per call: small beside a matmul of many rows). The same values as
 * `tf.matMul(a, b)` on wasm. Outside wasm with these kernels installed, it is `tf.matMul(a, b)`.
 */
export function matMulUnpacked(a: tf.Tensor, b: tf.Tensor): tf.Tensor {
  if (!installed || tf.getBackend() !== 'wasm') return tf.matMul(a as tf.Tensor3D, b as tf.Tensor3D);
  if (a.rank !== b.rank) throw new Error(`matMulUnpacked: ranks ${a.rank} and ${b.rank} differ`);
  const attrs = { transposeA: false, transposeB: false, [UNPACKED_B]: true };
  return tf.engine().runKernel('BatchMatMul', { a, b }, attrs as never) as tf.Tensor;
}

/**
 * `q @ kᵀ` for `q` `[..., M, hd]` and `k` `[..., S, hd]` (equal batch dims, no gradient tape), by the transpose flag
 * where that gives the same bits as transposing `k` first (wasm with the decode kernels on, batch > 1, fewer than
 * MIN_ROWS query rows: both then sum in the original batched loop's order, see `wasm/attention.wat`), so no copy of
 * `k` is made; else by the explicit transpose, as before. Padded prompts' decode steps (one query row) use it.
 */
export function matMulKT(q: tf.Tensor, k: tf.Tensor): tf.Tensor {
  const r = q.rank;
  const perm = [...Array(r).keys()];
  perm[r - 2] = r - 1;
  perm[r - 1] = r - 2;
  const batch = sizeOf(q.shape.slice(0, -2));
  if (installed && decodeKernels && tf.getBackend() === 'wasm' && batch > 1 && q.shape[r - 2]! < MIN_ROWS)
    return tf.matMul(q as tf.Tensor3D, k as tf.Tensor3D, false, true);
  return tf.matMul(q as tf.Tensor3D, tf.transpose(k, perm) as tf.Tensor3D);
}

function sizeOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/**
 * Replaces the wasm backend's `BatchMatMul`, `Slice`, `GatherV2` and `Concat` kernels with the faster versions
 * described above. Call after the wasm backend is active; idempotent. Returns false (and changes nothing) when the backend does not look
 * like tfjs-backend-wasm 4.x.
 */
export function installWasmKernels(): boolean {
  if (installed) return true;
  const backend = tf.findBackend('wasm') as unknown as WasmBackendLike | null;
  const bmm = tf.getKernel('BatchMatMul', 'wasm');
  const slice = tf.getKernel('Slice', 'wasm');
  const gather = tf.getKernel('GatherV2', 'wasm');
  const concat = tf.getKernel('Concat', 'wasm');
  if (
    !backend ||
    !bmm ||
    !slice ||
    !gather ||
    !concat ||
    typeof backend.wasm?.cwrap !== 'function' ||
    typeof backend.wasm.tfjs?.registerTensor !== 'function'
  )
    return false;
  const wasm = backend.wasm;
  const wasmBmm = wasm.cwrap('BatchMatMul', null, [
    'number',
    'array',
    'number',
    'number',
    'array',
    'number',
    'number',
    'number',
    'number',
  ]);
  const origBmm = bmm.kernelFunc as unknown as KernelFn;
  const attention = attentionKernels(wasm.asm?.memory);
  const origSlice = slice.kernelFunc as unknown as KernelFn;
  const origGather = gather.kernelFunc as unknown as KernelFn;
  const origConcat = concat.kernelFunc as unknown as KernelFn;
  /** Offset of a tensor's data in 4-byte words of the wasm heap. */
  const word = (t: tf.TensorInfo): number => backend.dataIdMap.get(t.dataId)!.memoryOffset >> 2;
  const fourBytes = (dtype: tf.DataType): boolean => dtype === 'float32' || dtype === 'int32';
  const shapeBytes = (s: readonly number[]): Uint8Array => new Uint8Array(new Int32Array(s).buffer);

  const fastBmm: KernelFn = (args) => {
    const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
    const transposeA = Boolean(args.attrs?.transposeA),
      transposeB = Boolean(args.attrs?.transposeB);
    const ra = a.shape.length,
      rb = b.shape.length;
    const batch = sizeOf(a.shape.slice(0, -2));
    // `unpackedB` ({@link matMulUnpacked}): one matmul whose packed copy of B is dropped right after it
    const unpacked = Boolean(args.attrs?.[UNPACKED_B]);
    // decode attention: batch > 1 (the original's own loop, whose summation order the kernel follows), same batches
    if (
      attention &&
      decodeKernels &&
      !unpacked &&
      !transposeA &&
      batch > 1 &&
      a.dtype === 'float32' &&
      b.dtype === 'float32' &&
      ra === rb &&
      a.shape.slice(0, -2).every((d, i) => d === b.shape[i])
    ) {
      const M = a.shape[ra - 2]!,
        K = a.shape[ra - 1]!;
      const N = transposeB ? b.shape[rb - 2]! : b.shape[rb - 1]!;
      const bK = transposeB ? b.shape[rb - 1]! : b.shape[rb - 2]!;
      // without the transpose flag, rows from MIN_ROWS on go to XNNPACK below (as before)
      const qk = transposeB && K % 4 === 0;
      const av = !transposeB && M < MIN_ROWS && N % 16 === 0;
      if (bK === K && (qk || av) && M * N * K > 0) {
        const out = backend.makeOutput([...a.shape.slice(0, -2), M, N], 'float32');
        const aOff = backend.dataIdMap.get(a.dataId)!.memoryOffset;
        const bOff = backend.dataIdMap.get(b.dataId)!.memoryOffset;
        const oOff = backend.dataIdMap.get(out.dataId)!.memoryOffset;
        if (qk) attention.qkT(aOff, bOff, oOff, batch, M, N, K);
        else attention.av(aOff, bOff, oOff, batch, M, K, N);
        return out;
      }
    }
    if (
      transposeA ||
      transposeB ||
      a.dtype !== 'float32' ||
      b.dtype !== 'float32' ||
      (batch <= 1 && !unpacked) ||
      ra !== rb ||
      a.shape.slice(0, -2).some((d, i) => d !== b.shape[i])
    )
      return origBmm(args);
    const M = a.shape[ra - 2]!,
      K = a.shape[ra - 1]!;
    const N = transposeB ? b.shape[rb - 2]! : b.shape[rb - 1]!;
    // per-call weight packing makes XNNPACK lose for short A (e.g. one query row in KV-cached decoding): measured
    // 6× slower at M = 1, even at M = 16, 3.6× faster at M = 128
    if ((M < MIN_ROWS && !unpacked) || (transposeB ? b.shape[rb - 1] : b.shape[rb - 2]) !== K) return origBmm(args);
    const out = backend.makeOutput([...a.shape.slice(0, -2), M, N], 'float32');
    if (M * N === 0) return out;
    const aOff = backend.dataIdMap.get(a.dataId)!.memoryOffset;
    const bOff = backend.dataIdMap.get(b.dataId)!.memoryOffset;
    const oOff = backend.dataIdMap.get(out.dataId)!.memoryOffset;
    const aShape = shapeBytes([1, M, K]);
    const bShape = shapeBytes(transposeB ? [1, N, K] : [1, K, N]);
    for (let i = 0; i < batch; i++) {
      wasm.tfjs.registerTensor(TMP_A, M * K, aOff + i * M * K * 4);
      wasm.tfjs.registerTensor(TMP_B, K * N, bOff + i * K * N * 4);
      wasm.tfjs.registerTensor(TMP_O, M * N, oOff + i * M * N * 4);
      try {
        wasmBmm(TMP_A, aShape, 3, TMP_B, bShape, 3, false, transposeB, TMP_O);
      } finally {
        // also drops the XNNPACK operator cached for TMP_B's weights
        wasm.tfjs.disposeData(TMP_A);
        wasm.tfjs.disposeData(TMP_B);
        wasm.tfjs.disposeData(TMP_O);
      }
    }
    return out;
  };

  const fastSlice: KernelFn = (args) => {
    const { x } = args.inputs as { x: tf.TensorInfo };
    if (x.dtype === 'string' || x.dtype === 'complex64') return origSlice(args);
    const [begin, size] = tf.slice_util.parseSliceParams(
      x as unknown as tf.Tensor,
      args.attrs!.begin as number[],
      args.attrs!.size as number[],
    );
    const out = backend.makeOutput(size, x.dtype);
    const n = sizeOf(size);
    if (n === 0) return out;
    // views taken AFTER makeOutput (which may grow the heap and detach older views)
    const heap = wasm.HEAPU8.buffer as ArrayBuffer;
    const inSize = sizeOf(x.shape);
    const Arr = x.dtype === 'float32' ? Float32Array : x.dtype === 'int32' ? Int32Array : Uint8Array;
    const xv = new Arr(heap, backend.dataIdMap.get(x.dataId)!.memoryOffset, inSize);
    const ov = new Arr(heap, backend.dataIdMap.get(out.dataId)!.memoryOffset, n);
    const r = x.shape.length;
    const strides = new Array<number>(r);
    let s = 1;
    for (let d = r - 1; d >= 0; d--) {
      strides[d] = s;
      s *= x.shape[d]!;
    }
    // innermost contiguous run: trailing dims taken whole
    let inner = 1,
      d0 = r - 1;
    while (d0 >= 0 && begin[d0] === 0 && size[d0] === x.shape[d0]) {
      inner *= size[d0]!;
      d0--;
    }
    if (d0 < 0) {
      ov.set(xv.subarray(0, n));
      return out;
    }
    inner *= size[d0]!;
    const runs = n / inner;
    const idx = new Array<number>(d0).fill(0);
    let o = 0;
    for (let k = 0; k < runs; k++) {
      let off = begin[d0]! * strides[d0]!;
      for (let d = 0; d < d0; d++) off += (begin[d]! + idx[d]!) * strides[d]!;
      ov.set(xv.subarray(off, off + inner), o);
      o += inner;
      for (let d = d0 - 1; d >= 0; d--) {
        if (++idx[d]! < size[d]!) break;
        idx[d] = 0;
      }
    }
    return out;
  };

  // axis gathers of 4-byte values (batchDims 0): each gathered slice `x[o, idx[j], :]` is one contiguous block
  const fastGather: KernelFn = (args) => {
    const { x, indices } = args.inputs as { x: tf.TensorInfo; indices: tf.TensorInfo };
    const batchDims = Number(args.attrs?.batchDims ?? 0);
    if (!decodeKernels || !fourBytes(x.dtype) || indices.dtype !== 'int32' || batchDims !== 0) return origGather(args);
    const axis = tf.util.parseAxisParam(args.attrs!.axis as number, x.shape)[0]!;
    const n = sizeOf(indices.shape);
    const dim = x.shape[axis]!;
    const outer = sizeOf(x.shape.slice(0, axis));
    const inner = sizeOf(x.shape.slice(axis + 1));
    const idx = new Int32Array(wasm.HEAPU8.buffer, backend.dataIdMap.get(indices.dataId)!.memoryOffset, n).slice();
    // out-of-range ids: the original kernel's behaviour
    for (let j = 0; j < n; j++) if (idx[j]! < 0 || idx[j]! >= dim) return origGather(args);
    const out = backend.makeOutput([...x.shape.slice(0, axis), ...indices.shape, ...x.shape.slice(axis + 1)], x.dtype);
    if (outer * n * inner === 0) return out;
    // a view taken AFTER makeOutput (which may grow the heap)
    const heap = new Int32Array(wasm.HEAPU8.buffer);
    const src = word(x),
      dst = word(out);
    let o = dst;
    for (let b = 0; b < outer; b++) {
      const base = src + b * dim * inner;
      for (let j = 0; j < n; j++) {
        const from = base + idx[j]! * inner;
        heap.copyWithin(o, from, from + inner);
        o += inner;
      }
    }
    return out;
  };

  // concatenation of 4-byte values along any axis: per outer index, each input's slice as one block
  const fastConcat: KernelFn = (args) => {
    const inputs = args.inputs as unknown as tf.TensorInfo[];
    const first = inputs[0];
    if (
      !decodeKernels ||
      !first ||
      !fourBytes(first.dtype) ||
      inputs.some((t) => t.dtype !== first.dtype || sizeOf(t.shape) === 0)
    )
      return origConcat(args);
    if (inputs.length < 2) return origConcat(args);
    const axis = tf.util.parseAxisParam(args.attrs!.axis as number, first.shape)[0]!;
    const shapes = inputs.map((t) => t.shape);
    tf.backend_util.assertParamsConsistent(shapes, axis);
    const out = backend.makeOutput(tf.backend_util.computeOutShape(shapes, axis), first.dtype);
    const outer = sizeOf(first.shape.slice(0, axis));
    const inners = inputs.map((t) => sizeOf(t.shape.slice(axis)));
    const total = inners.reduce((a, b) => a + b, 0);
    const heap = new Int32Array(wasm.HEAPU8.buffer);
    const srcs = inputs.map(word);
    const dst = word(out);
    for (let b = 0; b < outer; b++) {
      let o = dst + b * total;
      for (let i = 0; i < inputs.length; i++) {
        const w = inners[i]!,
          from = srcs[i]! + b * w;
        heap.copyWithin(o, from, from + w);
        o += w;
      }
    }
    return out;
  };

  tf.unregisterKernel('BatchMatMul', 'wasm');
  tf.registerKernel({ ...bmm, kernelFunc: fastBmm as unknown as tf.KernelFunc });
  tf.unregisterKernel('Slice', 'wasm');
  tf.registerKernel({ ...slice, kernelFunc: fastSlice as unknown as tf.KernelFunc });
  tf.unregisterKernel('GatherV2', 'wasm');
  tf.registerKernel({ ...gather, kernelFunc: fastGather as unknown as tf.KernelFunc });
  tf.unregisterKernel('Concat', 'wasm');
  tf.registerKernel({ ...concat, kernelFunc: fastConcat as unknown as tf.KernelFunc });
  installed = true;
  return true;
}
