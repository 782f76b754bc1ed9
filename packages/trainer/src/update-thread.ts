/**
 * Persistent worker threads for the RL (PPO) updates of policies, one per policy for the whole run. tfjs-wasm is
 * single-threaded per isolate, so two policies updated at once (in a worker and the main thread, or in two workers)
 * use two cores. A LoRA policy's worker trains its adapters on its own copy of the frozen base (a wasm heap belongs
 * to one thread; the base cannot be shared with it): memory for one more base per such worker.
 *
 * ```
 * start (at the first training step, while its rollouts run): weights, frozen reference (KL only), AdamW
 *        options, moments and step count (a resumed run's)               main ──▶ worker   (the worker's own copy)
 * each step: the update plan (groups, advantages, mini-batches) and lr    main ──▶ worker
 *            ppoUpdate (ppo-update.ts) on the worker's copy
 *            the stats, the updated weights, AdamW moments and step count worker ──▶ main
 *            weights assigned to the policy's SAME variables, moments to its own AdamW (checkpoints read those)
 * ```
 *
 * The worker's copy and the main thread's stay equal after every step: the main thread's weights are what rollouts
 * sample from and what checkpoints save, the worker's are what the next update starts from. A failed update leaves
 * the two apart, so any failure ends the worker: the trainer then fails the step.
 */
import type { Worker } from 'node:worker_threads';
import * as tf from '@tensorflow/tfjs';
import type { CausalLM, HostTensor, AdamW, AdamWOptions, LoraConfig } from '@troupe/lm/model';
import type { PpoUpdatePlan, PpoUpdateSettings } from './ppo-update.js';
import { startTrainerWorker } from './worker-script.js';

/** AdamW settings a worker's optimizer is built with (the learning rate comes with every job). */
export type UpdateOptimizerOptions = Required<Omit<AdamWOptions, 'lr'>>;

/** AdamW state in the layout of the model's trainable variables (index i: variable i, its own shape). */
export interface OptimizerState {
  /** First moments. */
  readonly m: HostTensor[];
  /** Second moments. */
  readonly v: HostTensor[];
  /** Optimizer steps taken. */
  readonly stepCount: number;
}

/** What the main thread starts a worker with. */
export interface UpdateWorkerInit {
  /** The policy it updates (named in errors). */
  readonly policy: string;
  /** The tfjs backend to activate (the main thread's). */
  readonly backend: string;
  /** The model's Hugging Face config. */
  readonly hfConfig: Record<string, unknown>;
  /** The model's weights, Hugging Face layout (of a LoRA policy: its frozen base, a copy of its own). */
  readonly tensors: [string, HostTensor][];
  /** A LoRA policy's adapters: their settings and values (`trainableVariables()` order); its reference is the base. */
  readonly lora?: { readonly config: LoraConfig; readonly adapters: Float32Array[] };
  /** The frozen reference's weights, when the KL penalty is on. */
  readonly reference?: [string, HostTensor][];
  /** AdamW settings. */
  readonly optimizer: UpdateOptimizerOptions;
  /** The optimizer's moments and step count (zeros and 0 for a fresh run; a resumed run's checkpointed ones). */
  readonly state: OptimizerState;
}

/** One step's update of one policy. */
export interface UpdateJob {
  /** Learning rate of this step (from the trainer's schedule). */
  readonly lr: number;
  /** What to train on, in which mini-batches. */
  readonly plan: PpoUpdatePlan;
  /** Loss settings. */
  readonly settings: PpoUpdateSettings;
}

/** What a worker sends back after an update. */
export interface UpdateJobResult {
  /** The update's statistics (see `ppoUpdate`). */
  readonly stats: Record<string, number>;
  /** The updated weights, Hugging Face layout (a LoRA policy: none, its base is frozen). */
  readonly tensors: [string, HostTensor][];
  /** A LoRA policy's updated adapters (`trainableVariables()` order). */
  readonly adapters?: Float32Array[];
  /** The optimizer's state after the update. */
  readonly state: OptimizerState;
}

/** What the main thread sends a running worker. */
export type UpdateWorkerRequest = { readonly type: 'update'; readonly id: number; readonly job: UpdateJob };

/** What a worker sends back (an error without `id` is a start-up failure). */
export type UpdateWorkerMessage =
  | { readonly type: 'done'; readonly id: number; readonly result: UpdateJobResult }
  | { readonly type: 'error'; readonly id?: number; readonly message: string; readonly stack?: string };

/** A copy of a variable's values, in its own layout. */
export function hostTensorOf(x: tf.Variable): HostTensor {
  return { shape: [...x.shape], data: new Float32Array(x.dataSync() as Float32Array) };
}

/** The optimizer's moments and step count as host tensors. */
export function optimizerState(optimizer: AdamW): OptimizerState {
  const { m, v } = optimizer.moments();
  return { m: m.map(hostTensorOf), v: v.map(hostTensorOf), stepCount: optimizer.stepCount };
}

/**
 * Overwrites an optimizer's moments and step count (same variables, same order). Throws naming `where` and the
 * moment for a missing one or a wrong size, before changing anything.
 */
export function assignOptimizerState(optimizer: AdamW, state: OptimizerState, where: string): void {
  const { m, v } = optimizer.moments();
  const pairs: [tf.Variable, HostTensor | undefined, string][] = [
    ...m.map((x, i): [tf.Variable, HostTensor | undefined, string] => [x, state.m[i], `m.${i}`]),
    ...v.map((x, i): [tf.Variable, HostTensor | undefined, string] => [x, state.v[i], `v.${i}`]),
  ];
  if (state.m.length !== m.length || state.v.length !== v.length) {
    throw new Error(
      `${where}: ${state.m.length} first and ${state.v.length} second moments for an optimizer over ${m.length} variables`,
    );
  }
  for (const [x, t, name] of pairs) {
    if (!t || t.data.length !== x.size)
      throw new Error(`${where}: moment '${name}' has ${t?.data.length ?? 0} values, expected ${x.size}`);
  }
  for (const [x, t] of pairs) tf.tidy(() => x.assign(tf.tensor(t!.data, x.shape, 'float32')));
  optimizer.stepCount = state.stepCount;
}

/** Overwrites a LoRA model's adapters with values in `trainableVariables()` order; throws on a wrong count or size. */
export function assignAdapters(model: CausalLM, values: readonly Float32Array[]): void {
  const vars = model.trainableVariables();
  if (values.length !== vars.length) throw new Error(`${values.length} adapter tensors for ${vars.length} variables`);
  vars.forEach((x, i) => {
    if (values[i]!.length !== x.size)
      throw new Error(`adapter tensor ${i} has ${values[i]!.length} values, expected ${x.size}`);
  });
  vars.forEach((x, i) => tf.tidy(() => x.assign(tf.tensor(values[i]!, x.shape, 'float32'))));
}

/**
 * A persistent worker thread that runs one policy's PPO updates on its own copy of the model and AdamW,
 * and mirrors every result into the policy's model and optimizer in the main thread. Start with
 * {@link UpdateWorker.start}; end with {@link UpdateWorker.terminate}.
 */
export class UpdateWorker {
  /** The worker thread (for diagnostics and tests). */
  readonly thread: Worker;
  private readonly pending = new Map<number, { resolve: (r: UpdateJobResult) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  private failure: Error | undefined;
  private closing = false;

  private constructor(
    readonly policy: string,
    private readonly model: CausalLM,
    private readonly optimizer: AdamW,
    init: UpdateWorkerInit,
  ) {
    const transfer = [...init.tensors, ...(init.reference ?? [])]
      .map(([, t]) => t.data.buffer as ArrayBuffer)
      .concat([...init.state.m, ...init.state.v].map((t) => t.data.buffer as ArrayBuffer))
      .concat((init.lora?.adapters ?? []).map((a) => a.buffer as ArrayBuffer));
    this.thread = startTrainerWorker('update-worker', { workerData: init, transferList: transfer });
    this.thread.on('message', (m: UpdateWorkerMessage) => this.onMessage(m));
    this.thread.on('error', (err) => this.fail(err.message, err.stack));
    this.thread.on('exit', (code) => this.fail(`the worker thread exited with code ${code}`));
    // Between updates an idle worker does not keep the process alive (a caller that forgets `terminate` still exits).
    this.thread.unref();
  }

  /**
   * Starts the worker of policy `policy` with the CURRENT weights of `model`, the state of `optimizer` (which must
   * be over `model.trainableVariables()`), and the frozen `reference` when the KL penalty needs one. A model with
   * LoRA adapters trains them on a copy of its base (whose reference is that base).
   */
  static start(
    policy: string,
    model: CausalLM,
    optimizer: AdamW,
    options: UpdateOptimizerOptions,
    backend: string,
    reference?: CausalLM,
  ): UpdateWorker {
    const init: UpdateWorkerInit = {
      policy,
      backend,
      hfConfig: model.hfConfig,
      tensors: [...model.exportTensors()],
      ...(model.loraConfig && model.lora.size > 0
        ? {
            lora: {
              config: { ...model.loraConfig, targetModules: [...model.loraConfig.targetModules] },
              adapters: model.trainableVariables().map((v) => new Float32Array(v.dataSync() as Float32Array)),
            },
          }
        : {}),
      ...(reference ? { reference: [...reference.exportTensors()] } : {}),
      optimizer: options,
      state: optimizerState(optimizer),
    };
    return new UpdateWorker(policy, model, optimizer, init);
  }

  /** Whether the worker can take jobs (not failed, not terminated). */
  get alive(): boolean {
    return !this.failure && !this.closing;
  }

  /**
   * Runs one update in the worker, then assigns the updated weights to the policy's variables and the moments and
   * step count to its optimizer. Returns the update's statistics. Rejects with an Error naming the policy and the
   * worker's message when the update fails or the worker dies; the worker is then ended.
   */
  async update(job: UpdateJob): Promise<Record<string, number>> {
    if (this.failure) throw this.failure;
    if (this.closing) throw new Error(`RL update of policy '${this.policy}': its worker thread was terminated`);
    const id = this.nextId++;
    this.thread.ref();
    const result = await new Promise<UpdateJobResult>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      const request: UpdateWorkerRequest = { type: 'update', id, job };
      try {
        this.thread.postMessage(request);
      } catch (err) {
        this.pending.delete(id);
        reject(this.fail(`cannot send the update: ${(err as Error).message}`));
      }
    }).finally(() => {
      if (this.pending.size === 0) this.thread.unref();
    });
    try {
      if (result.adapters) assignAdapters(this.model, result.adapters);
      else this.model.assignTensors(new Map(result.tensors), `RL update worker of policy '${this.policy}'`);
      assignOptimizerState(this.optimizer, result.state, `RL update worker of policy '${this.policy}'`);
    } catch (err) {
      throw this.fail(`its result does not fit the policy: ${(err as Error).message}`);
    }
    return result.stats;
  }

  /** Ends the worker (idempotent); pending updates reject. */
  async terminate(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.rejectAll(new Error(`RL update of policy '${this.policy}': its worker thread was terminated`));
    await this.thread.terminate();
  }

  private onMessage(m: UpdateWorkerMessage): void {
    if (m.type === 'done') {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      p?.resolve(m.result);
      return;
    }
    this.fail(m.message, m.stack);
  }

  /** Records the first failure, rejects every pending update with it, ends the thread; returns the failure. */
  private fail(message: string, stack?: string): Error {
    if (this.failure || this.closing)
      return this.failure ?? new Error(`RL update of policy '${this.policy}': its worker thread was terminated`);
    const err = new Error(`RL update of policy '${this.policy}' failed in its worker thread: ${message}`);
    if (stack) err.stack = `${err.message}\n--- in the worker ---\n${stack}`;
    this.failure = err;
    this.rejectAll(err);
    void this.thread.terminate();
    return err;
  }

  private rejectAll(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}
