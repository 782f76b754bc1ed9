/**
 * A replica's thread of data-parallel training (data-parallel.ts): activates the main thread's backend, builds the
 * model (and its LoRA adapters) from what it was started with, imports the loss module, then answers each request with
 * its share's summed gradients. Requests run one at a time, in order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import * as tf from '@tensorflow/tfjs';
import { initBackend, type BackendName } from '../backend/index.js';
import { CausalLM } from './model.js';
import {
  sumGradients,
  type PartLoss,
  type ReplicaInit,
  type ReplicaMessage,
  type ReplicaRequest,
} from './data-parallel.js';

const init = workerData as ReplicaInit;
const post = (m: ReplicaMessage, transfer: ArrayBuffer[] = []): void => parentPort!.postMessage(m, transfer);

async function start(): Promise<{ model: CausalLM; vars: tf.Variable[]; loss: PartLoss<unknown> }> {
  await initBackend({ backend: init.backend as BackendName });
  const model = CausalLM.fromTensors(init.hfConfig, new Map(init.tensors), 'data-parallel replica');
  if (init.lora) model.addLora(init.lora, 0);
  const vars = model.trainableVariables();
  const loss = ((await import(init.loss.url)) as Record<string, unknown>)[init.loss.name];
  if (typeof loss !== 'function') throw new Error(`${init.loss.url} exports no function '${init.loss.name}'`);
  assign(vars, init.trainable);
  return { model, vars, loss: loss as PartLoss<unknown> };
}

function assign(vars: readonly tf.Variable[], values: readonly Float32Array[]): void {
  if (values.length !== vars.length) throw new Error(`${values.length} trainable values for ${vars.length} variables`);
  vars.forEach((v, i) => tf.tidy(() => v.assign(tf.tensor(values[i]!, v.shape, 'float32'))));
}

const ready = start();
ready.catch((err: unknown) => post({ type: 'error', message: (err as Error)?.message ?? String(err) }));
let queue: Promise<unknown> = ready;
parentPort!.on('message', (req: ReplicaRequest) => {
  queue = queue.then(
    async () => {
      const s = await ready;
      try {
        if (req.trainable) assign(s.vars, req.trainable);
        const { grads, losses } = sumGradients(s.model, s.vars, req.parts, s.loss);
        const out = grads.map((g) => {
          const data = g ? new Float32Array(g.dataSync() as Float32Array) : null;
          g?.dispose();
          return data;
        });
        const transfer = out.flatMap((d) => (d ? [d.buffer as ArrayBuffer] : []));
        post({ type: 'grads', id: req.id, grads: out, losses }, transfer);
      } catch (err) {
        post({ type: 'error', id: req.id, message: (err as Error)?.message ?? String(err) });
      }
    },
    () => undefined, // a failed start was reported; the main thread ends the replica
  );
});
