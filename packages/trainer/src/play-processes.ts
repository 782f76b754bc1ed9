/**
 * Episodes played side by side: the trainer's process and `processes − 1` persistent play workers play the episodes of
 * an evaluation, or the planned instances of a training step, each on its own copy of the team with the trainer's
 * weights. tfjs-wasm is single-threaded and decoding keeps one core busy, so on two cores two of them play in about
 * half the time. A play worker is a child process, not a worker thread: playing needs the tokenizers, whose native
 * add-ons (@huggingface/transformers) must not load in worker threads (an isolate torn down with them aborts).
 *
 * ```
 * start (once):   backend, spec, trainer config           main ──▶ worker   (it composes the team from the spec)
 * each call:      every policy's weights and version       main ──▶ worker   (assigned to its copy)
 *                 what to play (an evaluation's options, or a step number) and how many lanes
 * per lane:       "next" (a lane is free)                  worker ──▶ main
 *                 the next item: an evaluation index or a planned instance, or none (the lane ends)
 *                 the item's events (and step records)     worker ──▶ main
 * ```
 *
 * Every item is played alone — an evaluation episode, or one planned instance's episodes (its K-branch tree) with
 * lockstep batching per instance — exactly as the in-process run with `batching: instance` and the distributed
 * engine's jobs play it, so which process plays an item changes none of its tokens: the same episodes, event for
 * event, and the same step records. Items are handed out one at a time as lanes free up, so a process that drew the
 * long episodes (turns 2–4) does not hold the others back. A worker that fails leaves its items to the trainer.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { EpisodeEvent, StepRecord, TeamSpec, TrainerConfig } from '@troupe/kernel';
import { currentBackend } from '@troupe/lm';
import type { HostTensor } from '@troupe/lm/model';
import { evalEpisode, type EvalEngine, type EvalJobOptions } from './evaluate.js';
import type { ScheduledInstance } from './instances.js';
import type { PolicyHandle } from './policies.js';
import {
  instanceEpisodes,
  playEpisodes,
  summaryEvent,
  type InstanceOutcome,
  type RolloutEngine,
  type RolloutSetup,
} from './rollouts.js';

/** What the trainer starts a worker with (its first message). */
export interface PlayWorkerInit {
  /** The tfjs backend to activate (the trainer's). */
  readonly backend: string;
  /** The team spec (the worker composes its own team from it). */
  readonly spec: TeamSpec;
  /** The trainer config (policy handles, the tree's seats). */
  readonly config: TrainerConfig;
}

/** What a call plays. */
export type PlayWork =
  { readonly kind: 'eval'; readonly job: EvalJobOptions } | { readonly kind: 'step'; readonly step: number };

/** An item of a call: an evaluation index, or a planned instance of the step. */
export type PlayItem = number | ScheduledInstance;

/** What the trainer sends a worker. */
export type PlayWorkerCommand =
  | { readonly type: 'init'; readonly init: PlayWorkerInit }
  | {
      readonly type: 'begin';
      /** Every policy's weights (Hugging Face layout) and version. */
      readonly weights: Record<string, [string, HostTensor][]>;
      readonly versions: Record<string, number>;
      readonly work: PlayWork;
      /** Items it plays at once. */
      readonly lanes: number;
    }
  | { readonly type: 'item'; readonly lane: number; readonly slot: number | null; readonly item: PlayItem | null }
  /** Dispose of the team and exit. */
  | { readonly type: 'close' };

/** What an item gave: its events (a step's cut down by `summaryEvent`) and, for a step, its records. */
export interface PlayResult {
  readonly events: EpisodeEvent[];
  readonly records: StepRecord[];
  readonly solved: boolean;
}

/** What a worker sends the trainer. */
export type PlayWorkerMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'next'; readonly lane: number }
  | { readonly type: 'result'; readonly slot: number; readonly result: PlayResult }
  | { readonly type: 'end' }
  | { readonly type: 'error'; readonly message: string; readonly stack?: string };

/** A play process as the trainer tracks it. */
interface PlayWorker {
  readonly worker: ChildProcess;
  /** It failed a call: no more items for it. */
  failed: boolean;
  /** Resolves when it has composed its team, or failed to, or exited. */
  readonly ready: Promise<void>;
  /** Resolves when it has exited. */
  readonly exited: Promise<void>;
}

/** The team the processes play with: the trainer's spec, config, handles, and what the trainer plays on. */
export interface PlayTeam {
  readonly spec: TeamSpec;
  readonly config: TrainerConfig;
  readonly handles: readonly PolicyHandle[];
  /** The team evaluation episodes are played on (the trainer's own, untimed). */
  readonly team: Parameters<typeof evalEpisode>[0];
}

/** Plays one item on a team (either process): see the module comment. */
export async function playItem(
  work: PlayWork,
  item: PlayItem,
  evalTeam: Parameters<typeof evalEpisode>[0],
  setup: RolloutSetup,
): Promise<PlayResult> {
  const events: EpisodeEvent[] = [];
  if (work.kind === 'eval') {
    const ep = await playEpisodes([[evalEpisode(evalTeam, item as number, work.job)]], 1, 'instance', (e) =>
      events.push(e),
    );
    return { events, records: [], solved: ep.some((e) => e.end.success) };
  }
  const contexts = instanceEpisodes(work.step, item as ScheduledInstance, setup);
  const episodes = await playEpisodes([contexts], setup.config.concurrency, 'instance', (e) => {
    const s = summaryEvent(e);
    if (s) events.push(s);
  });
  return { events, records: episodes.flatMap((e) => e.steps), solved: episodes.some((e) => e.end.success) };
}

/**
 * Why episodes cannot be played over processes (undefined: they can): a worker rebuilds the team from the spec and
 * copies full-model weights, so every policy must be a full tfjs model on a single-threaded backend (wasm, cpu), and
 * the team must be the spec's own (not one given to the trainer).
 */
export function playProcessesUnavailable(t: Pick<PlayTeam, 'handles'>, ownTeam: boolean): string | undefined {
  const backend = currentBackend()?.backend;
  if (backend !== 'wasm' && backend !== 'cpu') return `backend ${backend ?? 'none'} (play processes: wasm or cpu only)`;
  if (!ownTeam) return 'the team was given to the trainer, not composed from its spec';
  const other = t.handles.find((h) => !h.trainable || h.lora);
  if (other) return `policy '${other.name}' is not a full tfjs model`;
  return undefined;
}

/**
 * Plays evaluations ({@link EvalEngine}) and training steps' instances ({@link RolloutEngine}) in this process and
 * `processes − 1` persistent play processes (see the module comment), `concurrency` episodes at once in all. Call
 * {@link close} when done.
 */
export class PlayProcesses implements EvalEngine, RolloutEngine {
  private workers: PlayWorker[] | undefined;
  /** Why play processes failed (their items were played in this process instead), for the run's log. */
  readonly workerErrors: string[] = [];
  /** Items the play processes played, since the start. */
  workerItems = 0;

  constructor(
    private readonly t: PlayTeam,
    /** What the trainer's step items are played with (the trainer's timed setup). */
    private readonly setup: RolloutSetup,
    private readonly processes: number,
  ) {}

  async playEval(indices: readonly number[], job: EvalJobOptions): Promise<EpisodeEvent[][]> {
    const lanes = Math.ceil(this.t.config.concurrency / this.processes);
    const results = await this.play({ kind: 'eval', job }, indices, lanes);
    return results.map((r) => r.events);
  }

  async playInstances(step: number, planned: readonly ScheduledInstance[]): Promise<InstanceOutcome[]> {
    // as in-process: as many instances at once as `concurrency` holds their episodes
    const c = this.t.config;
    const per = c.name === 'grpo-naive' ? c.branches : 1;
    const slots = Math.max(1, Math.min(planned.length, Math.floor(c.concurrency / per)));
    const results = await this.play({ kind: 'step', step }, planned, Math.ceil(slots / this.processes));
    return results.map((r) => ({ ok: true, records: r.records, solved: r.solved, events: r.events }));
  }

  /** Plays `items` in this process and the workers, `lanes` at once in each; results in the order of `items`. */
  private async play(work: PlayWork, items: readonly PlayItem[], lanes: number): Promise<PlayResult[]> {
    const out: (PlayResult | undefined)[] = items.map(() => undefined);
    let next = 0;
    const take = (): number | null => (next < items.length ? next++ : null);
    const local = async (): Promise<void> => {
      for (let i = take(); i !== null; i = take()) out[i] = await playItem(work, items[i]!, this.t.team, this.setup);
    };
    const workers = items.length > 1 ? this.start() : [];
    // the trainer's weights and versions, read once for every worker of this call
    const begin: PlayWorkerCommand | undefined = workers.length > 0 ? this.begin(work, lanes) : undefined;
    await Promise.all([
      ...workers.map((w) => this.runWorker(w, begin!, items, take, out)),
      ...Array.from({ length: lanes }, local),
    ]);
    // a worker that failed left the items it held: this process plays them (the same items, only later)
    for (const [i, r] of out.entries()) if (!r) out[i] = await playItem(work, items[i]!, this.t.team, this.setup);
    return out as PlayResult[];
  }

  /**
   * Starts the play workers (once; the first call does it otherwise) and resolves when each has composed its team
   * or failed: a worker composing its team meanwhile is left the items the trainer has not taken yet.
   */
  async ready(): Promise<void> {
    this.start();
    await Promise.all((this.workers ?? []).map((w) => w.ready));
  }

  /** The live workers (started at the first call). */
  private start(): PlayWorker[] {
    if (!this.workers) {
      const init: PlayWorkerInit = { backend: currentBackend()!.backend, spec: this.t.spec, config: this.t.config };
      // from source the entry is TypeScript: the child inherits this process's flags (tsx's loader, conditions)
      const entry = new URL(import.meta.url.endsWith('.ts') ? './play-worker.ts' : './play-worker.js', import.meta.url);
      this.workers = Array.from({ length: this.processes - 1 }, () => {
        const worker = fork(entry, [], { serialization: 'advanced', stdio: ['ignore', 2, 2, 'ipc'] });
        // its stdout goes to this process's stderr (stdout may be a --json document); it keeps this process alive
        // only while a call or the close waits for it
        worker.unref();
        worker.channel?.unref();
        const ready = new Promise<void>((resolve) => {
          const settle = (): void => {
            worker.off('message', onReady).off('exit', settle);
            resolve();
          };
          const onReady = (m: PlayWorkerMessage): void => {
            if (m.type === 'ready') settle();
          };
          worker.on('message', onReady).on('exit', settle);
        });
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        const w: PlayWorker = { worker, failed: false, ready, exited };
        worker.once('exit', () => (w.failed = true)); // no more calls for it
        const start: PlayWorkerCommand = { type: 'init', init };
        worker.send(start);
        return w;
      });
    }
    return this.workers.filter((w) => !w.failed);
  }

  /** A call's first message to its workers: every policy's weights and version, the work and the lanes. */
  private begin(work: PlayWork, lanes: number): PlayWorkerCommand {
    const weights: Record<string, [string, HostTensor][]> = {};
    const versions: Record<string, number> = {};
    for (const h of this.t.handles) {
      weights[h.name] = [...h.trainable!.model.exportTensors()];
      versions[h.name] = h.trainable!.version;
    }
    return { type: 'begin', weights, versions, work, lanes };
  }

  /** One call on one worker: sends `begin` (the weights and the work), answers its lanes, collects its results. */
  private runWorker(
    w: PlayWorker,
    begin: PlayWorkerCommand,
    items: readonly PlayItem[],
    take: () => number | null,
    out: (PlayResult | undefined)[],
  ): Promise<void> {
    return new Promise<void>((resolve) => {
      const { worker } = w;
      worker.channel?.ref();
      const done = (err?: Error): void => {
        worker.off('message', onMessage).off('error', done).off('exit', onExit);
        worker.channel?.unref();
        if (err) {
          w.failed = true;
          this.workerErrors.push(err.message);
          worker.kill();
        }
        resolve();
      };
      const onExit = (code: number | null, signal: string | null): void =>
        done(new Error(`play worker exited with ${signal ?? `code ${code}`}`));
      const onMessage = (m: PlayWorkerMessage): void => {
        if (m.type === 'next') {
          const slot = take();
          const answer: PlayWorkerCommand = {
            type: 'item',
            lane: m.lane,
            slot,
            item: slot === null ? null : items[slot]!,
          };
          worker.send(answer, (err) => err && done(err));
        } else if (m.type === 'result') {
          out[m.slot] = m.result;
          this.workerItems++;
        } else if (m.type === 'end') done();
        else if (m.type === 'ready') return;
        else done(Object.assign(new Error(`play worker: ${m.message}`), { stack: m.stack }));
      };
      worker.on('message', onMessage).on('error', done).on('exit', onExit);
      worker.send(begin, (err) => err && done(err));
    });
  }

  /**
   * Ends the play workers: each finishes starting, disposes of its team and exits; one that has not exited 30 s after
   * that is killed.
   */
  async close(): Promise<void> {
    const all = this.workers ?? [];
    this.workers = undefined;
    await Promise.all(
      all.map(async ({ worker, ready, exited }) => {
        worker.ref();
        worker.channel?.ref();
        await ready;
        const close: PlayWorkerCommand = { type: 'close' };
        if (worker.connected) worker.send(close);
        const timer = setTimeout(() => worker.kill(), 30_000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }
}
