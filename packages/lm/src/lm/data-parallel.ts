/**
 * Data-parallel training of ONE model over worker threads: tfjs-wasm runs one thread per isolate, so a single model's
 * update uses one core however many the machine has. Here the main thread and `threads - 1` replicas in worker
 * threads each compute the gradients of a contiguous share of a step's loss parts; the shares' sums are added in
 * thread order (main first) and AdamW applies them once, in the main thread, which owns the weights and the optimizer
 * (what generation, checkpoints and a resume read). The replicas get the trainable weights with their next request.
 *
 * ```
 * start:      base weights, LoRA config, trainable values, the loss module      main ──▶ each worker (its own replica)
 * each step:  share k of the parts (+ the weights, when they changed)           main ──▶ worker k
 *             each thread: Σ over its share of ∇ loss(model, part)
 *             the share's gradients and loss values                             worker k ──▶ main
 *             main: (share 0) + (share 1) + …, AdamW (clipping on the sum)
 * ```
 *
 * The summed gradient equals one thread's {@link accumulatedTrainStep} over the same parts up to float rounding (the
 * order of the additions differs); the result depends only on the parts and the thread count, so a run is
 * reproducible, and a resume continues it bit for bit at the same thread count.
 *
 * The loss is code both threads run: a module exporting `(model, part) => tf.Scalar` under `lossExport`, named by URL
 * (parts are structured-cloned to the workers; loss functions cannot be).
 */
import { Worker } from 'node:worker_threads';
import * as tf from '@tensorflow/tfjs';
import { currentBackend } from '../backend/index.js';
import type { CausalLM, HostTensor } from './model.js';
import type { AdamW } from './train.js';

/** A loss over one part of a step, as the loss module exports it. */
export type PartLoss<P> = (model: CausalLM, part: P) => tf.Scalar;

/** Where the threads find the loss. */
export interface LossModule {
  /** URL of the module (`import.meta.url`-relative: `new URL('./my-loss.js', import.meta.url).href`). */
  readonly url: string;
  /** Its export: a {@link PartLoss}. */
  readonly name: string;
}

/** What a replica starts from (see the module comment). */
export interface ReplicaInit {
  readonly backend: string;
  readonly hfConfig: Record<string, unknown>;
  /** Base weights, Hugging Face layout. */
  readonly tensors: [string, HostTensor][];
  /** LoRA adapters' config when the model trains adapters. */
  readonly lora?: { r: number; alpha: number; targetModules: string[] };
  /** Values of the trainable variables, in `trainableVariables()` order. */
  readonly trainable: Float32Array[];
  readonly loss: LossModule;
}

/** A request to a replica. */
export interface ReplicaRequest {
  readonly id: number;
  /** The trainable values to take first (absent: unchanged since the last request). */
  readonly trainable?: Float32Array[];
  readonly parts: unknown[];
}

/**
 * A replica's answer: its share's summed gradients (trainable order; null where the loss does not reach a variable)
 * and each part's loss value, or an error.
 */
export type ReplicaMessage =
  | { readonly type: 'grads'; readonly id: number; readonly grads: (Float32Array | null)[]; readonly losses: number[] }
  | { readonly type: 'error'; readonly id?: number; readonly message: string };

/**
 * Σ over `parts` of the gradients of `loss` with respect to `vars` (each part's graph freed before the next), and each
 * part's loss value. The caller owns the gradients (null: a variable the loss does not reach).
 */
export function sumGradients<P>(
  model: CausalLM,
  vars: readonly tf.Variable[],
  parts: readonly P[],
  loss: PartLoss<P>,
): { grads: (tf.Tensor | null)[]; losses: number[] } {
  const sum: (tf.Tensor | null)[] = vars.map(() => null);
  const losses: number[] = [];
  try {
    for (const part of parts) {
      const { value, grads } = tf.variableGrads(() => tf.tidy(() => loss(model, part)), vars as tf.Variable[]);
      losses.push(value.dataSync()[0]!);
      value.dispose();
      vars.forEach((v, i) => {
        const g = grads[v.name];
        if (!g) return;
        const prev = sum[i];
        sum[i] = prev ? prev.add(g) : g;
        if (prev) {
          prev.dispose();
          g.dispose();
        }
      });
    }
    return { grads: sum, losses };
  } catch (err) {
    tf.dispose(sum.filter((g): g is tf.Tensor => g !== null));
    throw err;
  }
}

/** Contiguous shares of `n` items over `k` threads, the first shares one larger when `n` does not divide. */
export function shares(n: number, k: number): [number, number][] {
  const out: [number, number][] = [];
  let at = 0;
  for (let i = 0; i < k; i++) {
    const len = Math.floor(n / k) + (i < n % k ? 1 : 0);
    out.push([at, at + len]);
    at += len;
  }
  return out;
}

/** The main thread's side: the replicas and the step (see the module comment). */
export class DataParallel<P> {
  private nextId = 0;
  private sent = false;
  private readonly pending = new Map<number, { resolve: (m: ReplicaMessage) => void; reject: (e: Error) => void }>();
  private failure: Error | undefined;

  private constructor(
    private readonly model: CausalLM,
    private readonly optimizer: AdamW,
    private readonly loss: PartLoss<P>,
    private readonly workers: Worker[],
  ) {
    for (const w of workers) {
      w.on('message', (m: ReplicaMessage) => this.onMessage(m));
      w.on('error', (err) => this.fail(err.message));
      w.on('exit', (code) => this.fail(`a replica's thread exited with code ${code}`));
      w.unref();
    }
  }

  /**
   * Starts `threads - 1` replicas of `model` (the main thread is the first). `loss` is the same function as the
   * module's export, used in the main thread; `optimizer` must be over `model.trainableVariables()`.
   */
  static start<P>(
    model: CausalLM,
    optimizer: AdamW,
    threads: number,
    loss: PartLoss<P>,
    module: LossModule,
  ): DataParallel<P> {
    if (!Number.isInteger(threads) || threads < 1) throw new Error(`data-parallel threads must be ≥ 1, got ${threads}`);
    const backend = currentBackend()?.backend;
    if (threads > 1 && backend !== 'wasm' && backend !== 'cpu')
      throw new Error(`data-parallel threads need the wasm or cpu backend (one thread each); this is ${backend}`);
    const workers = Array.from({ length: threads - 1 }, () => {
      const init: ReplicaInit = {
        backend: backend!,
        hfConfig: model.hfConfig,
        tensors: [...model.exportTensors()],
        ...(model.loraConfig
          ? { lora: { ...model.loraConfig, targetModules: [...model.loraConfig.targetModules] } }
          : {}),
        trainable: optimizer.vars.map((v) => new Float32Array(v.dataSync() as Float32Array)),
        loss: module,
      };
      const transfer = [...init.tensors.map(([, t]) => t.data.buffer), ...init.trainable.map((t) => t.buffer)];
      return startReplica({ workerData: init, transferList: transfer as ArrayBuffer[] });
    });
    const dp = new DataParallel(model, optimizer, loss, workers);
    dp.sent = true; // the replicas start from the current weights
    return dp;
  }

  /** Threads in all (the main thread included). */
  get threads(): number {
    return this.workers.length + 1;
  }

  /**
   * One optimizer step on the sum of the parts' losses, the parts shared out over the threads. Returns the summed
   * loss, the pre-clip global gradient norm and the learning rate used (as {@link accumulatedTrainStep}).
   */
  async step(parts: readonly P[]): Promise<{ loss: number; gradNorm: number; lr: number }> {
    if (this.failure) throw this.failure;
    if (parts.length === 0) throw new Error('data-parallel step: no loss parts');
    const vars = this.optimizer.vars;
    const cut = shares(parts.length, this.threads);
    const trainable = this.sent ? undefined : vars.map((v) => new Float32Array(v.dataSync() as Float32Array));
    const remote = this.workers.map((w, k) => {
      const [a, b] = cut[k + 1]!;
      return a === b ? undefined : this.request(w, parts.slice(a, b), trainable);
    });
    this.sent = true;
    // the main thread's share runs while the replicas compute theirs
    const [a0, b0] = cut[0]!;
    const mine = sumGradients(this.model, vars, parts.slice(a0, b0), this.loss);
    const total = mine.grads;
    let losses = mine.losses;
    try {
      for (const r of remote) {
        if (!r) continue;
        const m = await r;
        if (m.type !== 'grads') throw this.fail(m.message);
        losses = losses.concat(m.losses);
        vars.forEach((v, i) => {
          if (!m.grads[i]) return;
          const g = tf.tensor(m.grads[i], v.shape, 'float32');
          const prev = total[i];
          total[i] = prev ? prev.add(g) : g;
          if (prev) {
            prev.dispose();
            g.dispose();
          }
        });
      }
      const named: tf.NamedTensorMap = {};
      vars.forEach((v, i) => {
        if (total[i]) named[v.name] = total[i]!;
      });
      const { gradNorm, lr } = this.optimizer.apply(named);
      this.sent = false; // the weights changed: the replicas take them with the next request
      return { loss: losses.reduce((s, x) => s + x, 0), gradNorm, lr };
    } finally {
      tf.dispose(total.filter((g): g is tf.Tensor => g !== null));
    }
  }

  /** The trainable weights were changed outside {@link step} (a checkpoint restored): send them with the next one. */
  weightsChanged(): void {
    this.sent = false;
  }

  /** Ends the replicas (idempotent). */
  async terminate(): Promise<void> {
    this.failure ??= new Error('data-parallel training: the replicas were terminated');
    const all = this.workers.splice(0);
    await Promise.all(all.map((w) => w.terminate()));
  }

  private request(w: Worker, parts: P[], trainable: Float32Array[] | undefined): Promise<ReplicaMessage> {
    const id = this.nextId++;
    w.ref();
    return new Promise<ReplicaMessage>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      const req: ReplicaRequest = { id, parts, ...(trainable ? { trainable } : {}) };
      w.postMessage(req); // the weights are copied, not moved: every replica gets them
    }).finally(() => w.unref());
  }

  private onMessage(m: ReplicaMessage): void {
    if (m.id === undefined) {
      this.fail(m.type === 'error' ? m.message : 'a replica answered without a request id');
      return;
    }
    const p = this.pending.get(m.id);
    this.pending.delete(m.id);
    p?.resolve(m);
  }

  private fail(message: string): Error {
    if (this.failure) return this.failure;
    this.failure = new Error(`data-parallel training failed in a replica's thread: ${message}`);
    for (const p of this.pending.values()) p.reject(this.failure);
    this.pending.clear();
    for (const w of this.workers) void w.terminate();
    return this.failure;
  }
}

/** A replica's thread: the compiled entry from dist; from source, through the tsx bootstrap. */
function startReplica(options: ConstructorParameters<typeof Worker>[1]): Worker {
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./data-parallel-worker.js', import.meta.url), options);
  return new Worker(new URL('./worker-source.mjs', import.meta.url), {
    ...options,
    argv: ['data-parallel-worker'],
  });
}
