/**
 * Worker-thread entry of the threaded RL updates (see update-thread.ts): activates the main thread's backend, builds
 * the policy's model, its frozen reference (KL only) and its AdamW from what it was started with, then runs one
 * {@link ppoUpdate} per request for the whole run, posting back the statistics, the updated weights and the
 * optimizer's moments and step count. Requests run one at a time, in order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { initBackend, type BackendName, CausalLM, AdamW } from '@troupe/lm/model';
import { baseGroupLogprobs, recomputeGroupLogprobs } from './loss.js';
import { ppoUpdate } from './ppo-update.js';
import {
  assignAdapters,
  assignOptimizerState,
  optimizerState,
  type UpdateJobResult,
  type UpdateWorkerInit,
  type UpdateWorkerMessage,
  type UpdateWorkerRequest,
} from './update-thread.js';

/** The worker's copy of the policy. */
interface WorkerState {
  readonly model: CausalLM;
  readonly reference: CausalLM | undefined;
  readonly optimizer: AdamW;
  /** The optimizer's options; `lr` is set from each job. */
  readonly options: { lr: number } & UpdateWorkerInit['optimizer'];
}

const init = workerData as UpdateWorkerInit;
const post = (m: UpdateWorkerMessage, transfer: ArrayBuffer[] = []): void => parentPort!.postMessage(m, transfer);
const errorFields = (err: unknown): { message: string; stack?: string } => {
  const e = err as Error;
  return { message: e?.message ?? String(err), ...(e?.stack ? { stack: e.stack } : {}) };
};

async function start(): Promise<WorkerState> {
  await initBackend({ backend: init.backend as BackendName });
  const where = `update worker of policy '${init.policy}'`;
  const model = CausalLM.fromTensors(init.hfConfig, new Map(init.tensors), where);
  if (init.lora) {
    model.addLora(init.lora.config, 0);
    assignAdapters(model, init.lora.adapters);
  }
  const reference = init.reference
    ? CausalLM.fromTensors(init.hfConfig, new Map(init.reference), `${where} (reference)`)
    : undefined;
  const options = { lr: 0, ...init.optimizer };
  const optimizer = new AdamW(model.trainableVariables(), options);
  assignOptimizerState(optimizer, init.state, `${where} (optimizer state)`);
  return { model, reference, optimizer, options };
}

async function run(s: WorkerState, req: UpdateWorkerRequest): Promise<void> {
  const { lr, plan, settings } = req.job;
  s.options.lr = lr;
  const reference = s.reference;
  const stats = await ppoUpdate(
    s.model,
    s.optimizer,
    plan,
    settings,
    reference
      ? (groups) => recomputeGroupLogprobs(reference, groups, settings.padId, settings.microBatchSize)
      : init.lora
        ? (groups) => baseGroupLogprobs(s.model, groups, settings.padId, settings.microBatchSize)
        : undefined,
  );
  const lora = init.lora !== undefined;
  const result: UpdateJobResult = {
    stats,
    tensors: lora ? [] : [...s.model.exportTensors()],
    ...(lora
      ? { adapters: s.model.trainableVariables().map((v) => new Float32Array(v.dataSync() as Float32Array)) }
      : {}),
    state: optimizerState(s.optimizer),
  };
  const buffers = [
    ...result.tensors.map(([, t]) => t.data),
    ...(result.adapters ?? []),
    ...result.state.m.map((t) => t.data),
    ...result.state.v.map((t) => t.data),
  ];
  post(
    { type: 'done', id: req.id, result },
    buffers.map((d) => d.buffer as ArrayBuffer),
  );
}

const ready = start();
ready.catch((err: unknown) => post({ type: 'error', ...errorFields(err) }));
let queue: Promise<unknown> = ready;
parentPort!.on('message', (req: UpdateWorkerRequest) => {
  queue = queue.then(
    async (s) => {
      try {
        await run(s as WorkerState, req);
      } catch (err) {
        post({ type: 'error', id: req.id, ...errorFields(err) });
      }
      return s;
    },
    () => undefined,
  ); // a failed start was reported; the main thread ends the worker
});
