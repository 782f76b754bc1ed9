/**
 * Runs one policy's SFT ({@link sftRun}) in a worker thread: the model's weights go in, the trained weights come back
 * and are assigned to the SAME variables. tfjs-wasm is single-threaded per isolate, so two policies trained in two
 * workers use two cores.
 */
import type { CausalLM, HostTensor, SequencePair } from '@troupe/lm/model';
import type { WarmStartConfig } from '@troupe/kernel';
import type { SftRunResult, SftRunSettings } from './sft-run.js';
import { startTrainerWorker } from './worker-script.js';

/** What the main thread sends a worker. */
export interface SftWorkerInput {
  /** The tfjs backend to activate (the main thread's). */
  readonly backend: string;
  /** The model's Hugging Face config. */
  readonly hfConfig: Record<string, unknown>;
  /** The model's weights, Hugging Face layout. */
  readonly tensors: [string, HostTensor][];
  /** Training pairs. */
  readonly pairs: readonly SequencePair[];
  /** Epochs, lr, schedule, mini-batch size. */
  readonly config: Pick<
    WarmStartConfig,
    'epochs' | 'lr' | 'miniBatchSize' | 'schedule' | 'warmupSteps' | 'groupByLength'
  >;
  /** Seed, clip and padding. */
  readonly settings: SftRunSettings;
}

/** What a worker sends back. */
export type SftWorkerMessage =
  | { readonly type: 'epoch'; readonly epoch: number; readonly loss: number }
  | { readonly type: 'done'; readonly result: SftRunResult; readonly tensors: [string, HostTensor][] }
  | { readonly type: 'error'; readonly message: string; readonly stack?: string };

/** Trains `model` on `pairs` in a worker thread and assigns the result to its variables. */
export function sftInWorker(
  model: CausalLM,
  pairs: readonly SequencePair[],
  config: SftWorkerInput['config'],
  settings: SftRunSettings,
  backend: string,
  onEpoch?: (epoch: number, loss: number) => void,
): Promise<SftRunResult> {
  const input: SftWorkerInput = {
    backend,
    hfConfig: model.hfConfig,
    tensors: [...model.exportTensors()],
    pairs,
    config: {
      epochs: config.epochs,
      lr: config.lr,
      miniBatchSize: config.miniBatchSize,
      schedule: config.schedule,
      warmupSteps: config.warmupSteps,
      groupByLength: config.groupByLength,
    },
    settings,
  };
  return new Promise<SftRunResult>((resolve, reject) => {
    const worker = startTrainerWorker('sft-worker', { workerData: input });
    let settled = false;
    const fail = (err: Error): void => {
      if (settled) return;
      settled = true;
      void worker.terminate();
      reject(err);
    };
    worker.on('message', (m: SftWorkerMessage) => {
      if (m.type === 'epoch') onEpoch?.(m.epoch, m.loss);
      else if (m.type === 'error')
        fail(Object.assign(new Error(`warm-start worker: ${m.message}`), { stack: m.stack }));
      else {
        try {
          model.assignTensors(new Map(m.tensors), 'warm-start worker result');
        } catch (err) {
          fail(err as Error);
          return;
        }
        settled = true;
        void worker.terminate();
        resolve(m.result);
      }
    });
    worker.on('error', (err) => fail(err));
    worker.on('exit', (code) => fail(new Error(`warm-start worker exited with code ${code} before finishing`)));
  });
}
