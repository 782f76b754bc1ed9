/**
 * Starts the trainer's worker threads (the warm start's `sft-worker`, the RL updates' `update-worker`). From dist the
 * compiled entry runs directly. From source (`.ts` through tsx: tests, `--conditions=troupe:source`) Node 20 workers
 * do not inherit the main thread's tsx loader hooks, so every worker boots through `worker-source.mjs`, which
 * registers tsx and then imports the entry named in its argv.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** The worker entries next to this file. */
export type TrainerWorkerEntry = 'sft-worker' | 'update-worker';

/** A worker thread running `entry` with `options` (workerData, transferList, ...). */
export function startTrainerWorker(entry: TrainerWorkerEntry, options: WorkerOptions): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL(`./${entry}.js`, import.meta.url), options);
  return new Worker(new URL('./worker-source.mjs', import.meta.url), {
    ...options,
    argv: [...(options.argv ?? []), entry],
  });
}
