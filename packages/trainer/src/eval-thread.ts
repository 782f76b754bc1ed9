/**
 * Evaluation over worker threads: the main thread and `threads − 1` worker threads play the episodes of one
 * evaluation side by side, each on its own copy of the team with the main thread's weights. tfjs-wasm is
 * single-threaded per isolate and an evaluation's decoding keeps one core busy, so on two cores two threads play it
 * in about half the time.
 *
 * ```
 * start:    spec, trainer config, backend, every policy's weights                        main ──▶ worker
 *           the worker composes the team from the spec and assigns the weights
 * per lane: "next" (a lane is free)                                                       worker ──▶ main
 *           the next index of the evaluation (or none: the lane ends)                     main ──▶ worker
 *           the episode's events, once it ended                                           worker ──▶ main
 * ```
 *
 * Every episode is played alone (lockstep batching per instance, the way the in-process evaluation and the
 * distributed engine's evaluation jobs play it), so which thread plays an episode changes none of its tokens: the
 * threaded evaluation gives the same episodes, event for event, as the in-process one. The indices are handed out
 * one at a time as lanes free up, so a thread that drew the long episodes (turns 2–4) does not hold the others back.
 */
import type { Worker } from 'node:worker_threads';
import { defaultWorkers, type EpisodeEvent, type TeamSpec, type TrainerConfig } from '@troupe/kernel';
import { currentBackend } from '@troupe/lm';
import type { HostTensor } from '@troupe/lm/model';
import { evalEpisode, type EvalEngine, type EvalJobOptions } from './evaluate.js';
import type { PolicyHandle } from './policies.js';
import { playEpisodes } from './rollouts.js';
import { startTrainerWorker } from './worker-script.js';

/** What the main thread starts an evaluation worker with. */
export interface EvalWorkerInit {
  /** The tfjs backend to activate (the main thread's). */
  readonly backend: string;
  /** The team spec (the worker composes its own team from it). */
  readonly spec: TeamSpec;
  /** The trainer config (for the policy handles). */
  readonly config: TrainerConfig;
  /** Every policy's weights, Hugging Face layout. */
  readonly weights: Record<string, [string, HostTensor][]>;
  /** How the episodes are played. */
  readonly job: EvalJobOptions;
  /** Episodes the worker plays at once. */
  readonly lanes: number;
}

/** What a worker sends the main thread. */
export type EvalWorkerMessage =
  | { readonly type: 'next'; readonly lane: number }
  | { readonly type: 'episode'; readonly index: number; readonly events: EpisodeEvent[] }
  | { readonly type: 'done' }
  | { readonly type: 'error'; readonly message: string; readonly stack?: string };

/** What the main thread answers a lane's "next": the evaluation index it plays next, or null (the lane ends). */
export interface EvalWorkerAssignment {
  readonly lane: number;
  readonly index: number | null;
}

/** The team an evaluation plays with (the trainer's own, untimed). */
export interface EvalTeam {
  readonly spec: TeamSpec;
  readonly config: TrainerConfig;
  readonly team: Parameters<typeof evalEpisode>[0];
  readonly handles: readonly PolicyHandle[];
}

/**
 * Why the evaluation cannot be split over threads (undefined: it can): a worker rebuilds the team from the spec and
 * copies full-model weights, so every policy must be a full tfjs model on a single-threaded backend (wasm, cpu), and
 * the team must be the spec's own (not one given to the trainer).
 */
export function evalThreadsUnavailable(t: EvalTeam, ownTeam: boolean): string | undefined {
  const backend = currentBackend()?.backend;
  if (backend !== 'wasm' && backend !== 'cpu') return `backend ${backend ?? 'none'} (threads: wasm or cpu only)`;
  if (!ownTeam) return 'the team was given to the trainer, not composed from its spec';
  const other = t.handles.find((h) => !h.trainable || h.lora);
  if (other) return `policy '${other.name}' is not a full tfjs model`;
  return undefined;
}

/**
 * An {@link EvalEngine} that plays an evaluation in this thread and `threads − 1` worker threads (see the module
 * comment), `concurrency` episodes at once in all: the same events as the in-process evaluation.
 */
export class ThreadedEval implements EvalEngine {
  constructor(
    private readonly t: EvalTeam,
    private readonly concurrency: number,
    private readonly threads: number = defaultWorkers(),
  ) {}

  /** Why worker threads failed (their episodes were played in this thread instead), for the run's log. */
  readonly workerErrors: string[] = [];

  async playEval(indices: readonly number[], job: EvalJobOptions): Promise<EpisodeEvent[][]> {
    const threads = Math.max(1, Math.min(this.threads, this.concurrency, indices.length));
    const lanes = Math.max(1, Math.ceil(this.concurrency / threads));
    const out: (EpisodeEvent[] | undefined)[] = indices.map(() => undefined);
    let next = 0;
    const take = (): number | null => (next < indices.length ? next++ : null);
    const workers: Promise<void>[] = [];
    for (let w = 1; w < threads; w++) workers.push(this.runWorker(job, lanes, take, out, indices));
    const local = async (): Promise<void> => {
      for (let i = take(); i !== null; i = take()) {
        const events: EpisodeEvent[] = [];
        await playEpisodes([[evalEpisode(this.t.team, indices[i]!, job)]], 1, 'instance', (e) => events.push(e));
        out[i] = events;
      }
    };
    await Promise.all([...workers, ...Array.from({ length: lanes }, local)]);
    // a worker that failed left the episodes it held: this thread plays them (the same episodes, only later)
    for (const [i, events] of out.entries()) {
      if (events) continue;
      const again: EpisodeEvent[] = [];
      await playEpisodes([[evalEpisode(this.t.team, indices[i]!, job)]], 1, 'instance', (e) => again.push(e));
      out[i] = again;
    }
    return out as EpisodeEvent[][];
  }

  /** One worker thread: composes its team, then plays the indices its lanes ask for until none are left. */
  private runWorker(
    job: EvalJobOptions,
    lanes: number,
    take: () => number | null,
    out: (EpisodeEvent[] | undefined)[],
    indices: readonly number[],
  ): Promise<void> {
    const weights: EvalWorkerInit['weights'] = {};
    for (const h of this.t.handles) weights[h.name] = [...h.trainable!.model.exportTensors()];
    const init: EvalWorkerInit = {
      backend: currentBackend()!.backend,
      spec: this.t.spec,
      config: this.t.config,
      weights,
      job,
      lanes,
    };
    // the slot each index was handed out at, to put the worker's episode where it belongs
    const slotOf = new Map<number, number>();
    return new Promise<void>((resolve) => {
      const worker: Worker = startTrainerWorker('eval-worker', { workerData: init });
      let settled = false;
      const finish = (err?: Error): void => {
        if (settled) return;
        settled = true;
        void worker.terminate();
        if (err) this.workerErrors.push(err.message);
        resolve();
      };
      worker.on('message', (m: EvalWorkerMessage) => {
        if (m.type === 'next') {
          const slot = take();
          if (slot !== null) slotOf.set(indices[slot]!, slot);
          const answer: EvalWorkerAssignment = { lane: m.lane, index: slot === null ? null : indices[slot]! };
          worker.postMessage(answer);
        } else if (m.type === 'episode') out[slotOf.get(m.index)!] = m.events;
        else if (m.type === 'done') finish();
        else finish(Object.assign(new Error(`evaluation worker: ${m.message}`), { stack: m.stack }));
      });
      worker.on('error', (err) => finish(err));
      worker.on('exit', (code) => finish(new Error(`evaluation worker exited with code ${code} before finishing`)));
    });
  }
}
