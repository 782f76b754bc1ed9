/**
 * Training primitives: log-prob recomputation for (prompt, completion) batches, AdamW with global grad-norm clipping,
 * optimizer steps on any loss (with gradient accumulation), and learning-rate schedules. The losses themselves (PPO,
 * SFT) are the trainer's (@troupe/trainer).
 *
 * Layout: a batch of B sequences `prompt ++ completion` is right-padded to length L; position t of the `[B, L-1]`
 * "shifted" layout scores token t+1 from the logits at t. A completion token j of row b sits at t = P_b - 1 + j.
 * Right padding needs no attention mask: causal attention never looks at later (pad) positions.
 */
import * as tf from '@tensorflow/tfjs';
import type { CausalLM } from './model.js';
import { oneHotF32 } from './ops.js';

/** One (prompt, completion) pair. */
export interface SequencePair {
  /** Prompt token ids (non-empty). */
  readonly promptIds: readonly number[];
  /** Completion token ids. */
  readonly completionIds: readonly number[];
  /**
   * Temperature of the distribution scored, `softmax(logits / temperature)`: the one the completion was sampled at
   * (as `generate` records its log-probs). Absent: 1.
   */
  readonly temperature?: number;
}

/** A right-padded batch in the shifted layout. */
export interface PackedBatch {
  /** Rows. */
  readonly B: number;
  /** Padded length. */
  readonly L: number;
  /** Input ids `[B][L]` (pads are `padId`). */
  readonly ids: number[][];
  /** Completion mask in the shifted layout, `B*(L-1)` (1 where a completion token is scored). */
  readonly mask: Float32Array;
  /** Offset of each row's first completion token in the shifted layout (`P_b - 1`). */
  readonly offsets: readonly number[];
  /** Completion lengths. */
  readonly lengths: readonly number[];
  /** Each row's scoring temperature (1 unless its pair gave one). */
  readonly temperatures: readonly number[];
}

/** Packs pairs into the shifted layout. Throws naming the row for an empty prompt. */
export function packBatch(pairs: readonly SequencePair[], padId = 0): PackedBatch {
  if (pairs.length === 0) throw new Error('packBatch: empty batch');
  const B = pairs.length;
  let L = 2;
  pairs.forEach((p, b) => {
    if (p.promptIds.length === 0) throw new Error(`packBatch: row ${b} has an empty prompt`);
    if (p.temperature !== undefined && !(p.temperature > 0))
      throw new Error(`packBatch: row ${b} has temperature ${p.temperature}; it must be positive`);
    L = Math.max(L, p.promptIds.length + p.completionIds.length);
  });
  const ids: number[][] = [];
  const mask = new Float32Array(B * (L - 1));
  const offsets: number[] = [];
  const lengths: number[] = [];
  pairs.forEach((p, b) => {
    const row = [...p.promptIds, ...p.completionIds];
    while (row.length < L) row.push(padId);
    ids.push(row);
    const off = p.promptIds.length - 1;
    offsets.push(off);
    lengths.push(p.completionIds.length);
    for (let j = 0; j < p.completionIds.length; j++) mask[b * (L - 1) + off + j] = 1;
  });
  return { B, L, ids, mask, offsets, lengths, temperatures: pairs.map((p) => p.temperature ?? 1) };
}

/** Spreads per-completion-token values (`values[b][j]`) or per-row scalars into the shifted layout `[B, L-1]`. */
export function scatterToLayout(packed: PackedBatch, values: readonly (readonly number[] | number)[]): Float32Array {
  const { B, L, offsets, lengths } = packed;
  const out = new Float32Array(B * (L - 1));
  for (let b = 0; b < B; b++) {
    const v = values[b];
    if (v === undefined) throw new Error(`scatterToLayout: no values for row ${b}`);
    for (let j = 0; j < lengths[b]!; j++) {
      const x = typeof v === 'number' ? v : v[j];
      if (x === undefined)
        throw new Error(
          `scatterToLayout: row ${b} has ${typeof v === 'number' ? 0 : v.length} values for ${lengths[b]} completion tokens`,
        );
      out[b * (L - 1) + offsets[b]! + j] = x;
    }
  }
  return out;
}

/**
 * Log-prob of every next token in the shifted layout, `[B, L-1]`, under each row's temperature (differentiable; call
 * inside `tf.tidy` or a gradient function). Pads are scored too; mask them.
 */
export function tokenLogprobs(model: CausalLM, packed: PackedBatch): tf.Tensor2D {
  const { B, L } = packed;
  const V = model.config.vocabSize;
  const ids = tf.tensor2d(packed.ids, [B, L], 'int32');
  const T = packed.temperatures;
  if (model.baseFrozen) {
    const { hidden } = model.hidden(ids);
    // a frozen base (LoRA): the head's logits a chunk of rows at a time (`CausalLM.headLogprobs`), the same values
    const D = hidden.shape[2]!;
    const x = hidden.slice([0, 0, 0], [B, L - 1, D]).reshape([-1, D]);
    const targets = ids.slice([0, 1], [B, L - 1]).reshape([-1]);
    const temps = T.every((t) => t === 1)
      ? undefined
      : Float32Array.from({ length: B * (L - 1) }, (_, i) => T[Math.floor(i / (L - 1))]!);
    return model.headLogprobs(x, targets, temps).reshape([B, L - 1]);
  }
  const { logits } = model.forward(ids);
  const scored = logits.slice([0, 0, 0], [B, L - 1, V]);
  const lp = tf.logSoftmax(T.every((t) => t === 1) ? scored : scored.div(tf.tensor3d(Array.from(T), [B, 1, 1])));
  const targets = ids.slice([0, 1], [B, L - 1]);
  return lp.mul(oneHotF32(targets.reshape([-1]), V).reshape([B, L - 1, V])).sum(-1) as tf.Tensor2D;
}

/**
 * Recomputes the log-prob of each completion token (no gradients), in chunks of `batchSize` rows.
 * Returns `out[b][j]` aligned with `pairs[b].completionIds[j]`.
 */
export async function recomputeLogprobs(
  model: CausalLM,
  pairs: readonly SequencePair[],
  options: { batchSize?: number; padId?: number } = {},
): Promise<number[][]> {
  const bs = options.batchSize ?? 16;
  const out: number[][] = [];
  for (let s = 0; s < pairs.length; s += bs) {
    const chunk = pairs.slice(s, s + bs);
    const packed = packBatch(chunk, options.padId ?? 0);
    const t = tf.tidy(() => tokenLogprobs(model, packed));
    const data = (await t.data()) as Float32Array;
    t.dispose();
    chunk.forEach((_, b) => {
      const row: number[] = [];
      for (let j = 0; j < packed.lengths[b]!; j++) row.push(data[b * (packed.L - 1) + packed.offsets[b]! + j]!);
      out.push(row);
    });
  }
  return out;
}

/** A learning-rate schedule. */
export interface LrSchedule {
  /** Shape after warmup: constant, linear decay to `minLr`, or cosine decay to `minLr`. */
  readonly kind: 'constant' | 'linear' | 'cosine';
  /** Peak learning rate. */
  readonly lr: number;
  /** Linear warmup from 0 over this many steps. Default 0. */
  readonly warmupSteps?: number;
  /** Steps until the decay reaches `minLr` (needed for linear and cosine). */
  readonly totalSteps?: number;
  /** Final learning rate. Default 0. */
  readonly minLr?: number;
}

/** The learning rate at optimizer step `step` (0-based). */
export function lrAt(s: LrSchedule, step: number): number {
  const warm = s.warmupSteps ?? 0;
  if (warm > 0 && step < warm) return (s.lr * (step + 1)) / warm;
  if (s.kind === 'constant') return s.lr;
  const total = s.totalSteps;
  if (!total || total <= warm) throw new Error(`lr schedule '${s.kind}' needs totalSteps > warmupSteps (got ${total})`);
  const min = s.minLr ?? 0;
  const p = Math.min(1, Math.max(0, (step - warm) / (total - warm)));
  if (s.kind === 'linear') return s.lr + (min - s.lr) * p;
  return min + 0.5 * (s.lr - min) * (1 + Math.cos(Math.PI * p));
}

/** AdamW settings. */
export interface AdamWOptions {
  /** Learning rate or schedule. */
  readonly lr: number | LrSchedule;
  /** Default 0.9. */
  readonly beta1?: number;
  /** Default 0.999. */
  readonly beta2?: number;
  /** Default 1e-8. */
  readonly eps?: number;
  /** Decoupled weight decay. Default 0. */
  readonly weightDecay?: number;
  /** Clip the global gradient norm to this (0 or absent: no clipping). */
  readonly maxGradNorm?: number;
}

/** AdamW (decoupled weight decay) with global grad-norm clipping, over a fixed list of variables. */
export class AdamW {
  /** Optimizer steps taken. */
  stepCount = 0;
  private readonly m: tf.Variable[];
  private readonly v: tf.Variable[];

  /** Creates moment buffers for `vars`. */
  constructor(
    readonly vars: readonly tf.Variable[],
    readonly options: AdamWOptions,
  ) {
    // a variable shares its initial value's data: free that tensor (else every optimizer left 2 tensors per variable)
    const zeros = (x: tf.Variable): tf.Variable => {
      const z = tf.zerosLike(x);
      const v = tf.variable(z, false);
      z.dispose();
      return v;
    };
    this.m = vars.map(zeros);
    this.v = vars.map(zeros);
  }

  /** The learning rate the next step will use. */
  currentLr(): number {
    const lr = this.options.lr;
    return typeof lr === 'number' ? lr : lrAt(lr, this.stepCount);
  }

  /**
   * Applies one update from gradients keyed by variable name (as `tf.variableGrads` returns them). Variables
   * without a gradient are left alone. Returns the pre-clip global gradient norm and the learning rate used.
   */
  apply(grads: tf.NamedTensorMap): { gradNorm: number; lr: number } {
    const { gradNorm, lr } = this.applyOnDevice(grads);
    try {
      return { gradNorm: gradNorm.dataSync()[0]!, lr };
    } finally {
      gradNorm.dispose();
    }
  }

  /**
   * {@link apply} without reading anything back (the clipping factor is computed on the device): for backends that
   * cannot read synchronously (webgpu in Node). The caller owns the returned gradient-norm scalar.
   */
  applyOnDevice(grads: tf.NamedTensorMap): { gradNorm: tf.Scalar; lr: number } {
    const lr = this.currentLr();
    const b1 = this.options.beta1 ?? 0.9,
      b2 = this.options.beta2 ?? 0.999,
      eps = this.options.eps ?? 1e-8;
    const wd = this.options.weightDecay ?? 0;
    const t = this.stepCount + 1;
    const gradNorm = tf.tidy(() => {
      const sq = this.vars
        .map((x) => grads[x.name])
        .filter((g): g is tf.Tensor => !!g)
        .map((g) => g.square().sum());
      return (sq.length ? tf.addN(sq).sqrt() : tf.scalar(0)) as tf.Scalar;
    });
    const max = this.options.maxGradNorm ?? 0;
    tf.tidy(() => {
      // max / (norm + 1e-6) where the norm exceeds max, else 1
      const scale = max > 0 ? tf.where(gradNorm.greater(max), tf.scalar(max).div(gradNorm.add(1e-6)), 1) : undefined;
      this.vars.forEach((x, i) => {
        let g = grads[x.name];
        if (!g) return;
        if (scale) g = g.mul(scale);
        const m = this.m[i]!.mul(b1).add(g.mul(1 - b1));
        const v = this.v[i]!.mul(b2).add(g.square().mul(1 - b2));
        this.m[i]!.assign(m);
        this.v[i]!.assign(v);
        const mhat = m.div(1 - b1 ** t);
        const vhat = v.div(1 - b2 ** t);
        let upd = mhat.div(vhat.sqrt().add(eps));
        if (wd > 0) upd = upd.add(x.mul(wd));
        x.assign(x.sub(upd.mul(lr)));
      });
    });
    this.stepCount = t;
    return { gradNorm, lr };
  }

  /**
   * One step with a gradient of exactly 0 for every variable (what a loss whose terms are all 0 gives): the moments
   * decay and the update carries on from them, as in {@link apply} with zero gradients, without computing any.
   */
  applyZeroGradient(): { gradNorm: number; lr: number } {
    const zeros: tf.NamedTensorMap = {};
    try {
      for (const x of this.vars) zeros[x.name] = tf.zerosLike(x);
      // the norm of zero gradients is 0: nothing to read back
      const { gradNorm, lr } = this.applyOnDevice(zeros);
      gradNorm.dispose();
      return { gradNorm: 0, lr };
    } finally {
      for (const z of Object.values(zeros)) z.dispose();
    }
  }

  /** The first and second moment buffers, aligned with `vars` (for saving and restoring optimizer state). */
  moments(): { readonly m: readonly tf.Variable[]; readonly v: readonly tf.Variable[] } {
    return { m: this.m, v: this.v };
  }

  /** Frees the moment buffers. */
  dispose(): void {
    for (const x of [...this.m, ...this.v]) x.dispose();
  }
}

/**
 * One optimizer step on `lossFn` (which builds a scalar from the model's variables): gradients of the optimizer's
 * variables, clipping, AdamW update. Every intermediate tensor is disposed. Returns the loss and extras as numbers.
 */
export function trainStep(optimizer: AdamW, lossFn: () => tf.Scalar): { loss: number; gradNorm: number; lr: number } {
  return accumulatedTrainStep(optimizer, [lossFn]);
}

/** {@link trainStep} reading its numbers asynchronously: the form that also runs on webgpu in Node. */
export function trainStepAsync(
  optimizer: AdamW,
  lossFn: () => tf.Scalar,
): Promise<{ loss: number; gradNorm: number; lr: number }> {
  return accumulatedTrainStepAsync(optimizer, [lossFn]);
}

/**
 * One optimizer step on the SUM of several losses (gradient accumulation): each part builds its graph, its gradients
 * are added to the running sum and its tensors are freed before the next part runs, so peak memory is that of the
 * largest part, not of the whole batch. Each part must already carry its share of the batch's normalisation (e.g.
 * a token sum divided by the whole batch's token count). Returns the summed loss, the pre-clip global gradient norm of
 * the summed gradients and the learning rate used.
 */
export function accumulatedTrainStep(
  optimizer: AdamW,
  parts: readonly (() => tf.Scalar)[],
): { loss: number; gradNorm: number; lr: number } {
  const { values, gradNorm, lr } = stepOnDevice(optimizer, parts);
  try {
    return { loss: values.reduce((a, v) => a + v.dataSync()[0]!, 0), gradNorm: gradNorm.dataSync()[0]!, lr };
  } finally {
    tf.dispose([...values, gradNorm]);
  }
}

/** {@link accumulatedTrainStep} reading its numbers asynchronously: the form that also runs on webgpu in Node. */
export async function accumulatedTrainStepAsync(
  optimizer: AdamW,
  parts: readonly (() => tf.Scalar)[],
): Promise<{ loss: number; gradNorm: number; lr: number }> {
  const { values, gradNorm, lr } = stepOnDevice(optimizer, parts);
  try {
    const read = await Promise.all([...values, gradNorm].map((v) => v.data()));
    return { loss: read.slice(0, -1).reduce((a, d) => a + d[0]!, 0), gradNorm: read.at(-1)![0]!, lr };
  } finally {
    tf.dispose([...values, gradNorm]);
  }
}

/** The step itself, reading nothing back: each part's loss and the gradient norm stay on the device (caller owns). */
function stepOnDevice(
  optimizer: AdamW,
  parts: readonly (() => tf.Scalar)[],
): { values: tf.Scalar[]; gradNorm: tf.Scalar; lr: number } {
  if (parts.length === 0) throw new Error('accumulatedTrainStep: no loss parts');
  const values: tf.Scalar[] = [];
  const sum: tf.NamedTensorMap = {};
  try {
    for (const part of parts) {
      const { value, grads } = tf.variableGrads(() => tf.tidy(part), optimizer.vars as tf.Variable[]);
      values.push(value);
      for (const [name, g] of Object.entries(grads)) {
        const prev = sum[name];
        if (!prev) {
          sum[name] = g;
          continue;
        }
        sum[name] = prev.add(g);
        prev.dispose();
        g.dispose();
      }
    }
    return { values, ...optimizer.applyOnDevice(sum) };
  } catch (err) {
    tf.dispose(values);
    throw err;
  } finally {
    for (const g of Object.values(sum)) g.dispose();
  }
}
