/**
 * Worker-thread entry of the parallel warm start (see sft-thread.ts): activates the main thread's backend, rebuilds
 * the model from the weights it was sent, runs {@link sftRun} and posts the trained weights back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { initBackend, type BackendName, CausalLM } from '@troupe/lm/model';
import { sftRun } from './sft-run.js';
import type { SftWorkerInput, SftWorkerMessage } from './sft-thread.js';

async function main(): Promise<void> {
  const input = workerData as SftWorkerInput;
  const post = (m: SftWorkerMessage, transfer: ArrayBuffer[] = []): void => parentPort!.postMessage(m, transfer);
  try {
    await initBackend({ backend: input.backend as BackendName });
    const model = CausalLM.fromTensors(input.hfConfig, new Map(input.tensors), 'warm-start worker input');
    try {
      const result = await sftRun(model, input.pairs, input.config, input.settings, (epoch, loss) =>
        post({ type: 'epoch', epoch, loss }),
      );
      const tensors = [...model.exportTensors()];
      post(
        { type: 'done', result, tensors },
        tensors.map(([, t]) => t.data.buffer as ArrayBuffer),
      );
    } finally {
      model.dispose();
    }
  } catch (err) {
    const e = err as Error;
    post({ type: 'error', message: e?.message ?? String(err), ...(e?.stack ? { stack: e.stack } : {}) });
  }
}

void main();
