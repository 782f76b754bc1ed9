/**
 * The trainer side of the distributed engine: each step's planned instances become jobs on a queue (BullMQ on Redis,
 * @troupe/scale-out), one per instance, played by `troupe worker` processes; the outcomes come back in any order and
 * are put back in plan order, so the step builds the same groups, in the same order, as in one process. Before a
 * step's jobs go out, the weights they play with are published (versions.ts).
 */
import { createHash } from 'node:crypto';
import type { TeamSpec, TrainerConfig } from '@troupe/kernel';
import type { DispatchJob, JobOutcome } from '@troupe/scale-out';
import type { ScheduledInstance } from '../instances.js';
import type { PolicyHandle } from '../policies.js';
import type { InstanceOutcome, RolloutEngine } from '../rollouts.js';
import type { EvalJobOptions } from '../evaluate.js';
import type { RemoteUpdater } from '../policy-updates.js';
import {
  evalJobKey,
  jobKey,
  runJobKey,
  type PolicyVersions,
  type RolloutJob,
  type RolloutJobResult,
  type RunJobOptions,
} from './job.js';
import type { UpdateJobOutcome, UpdateJobPayload } from './update-job.js';
import { VersionPublisher } from './versions.js';

/** What the engine needs of a queue (@troupe/scale-out's `Dispatcher`). */
export interface RolloutQueue {
  dispatch(
    batch: string,
    jobs: DispatchJob<RolloutJob | UpdateJobPayload>[],
    options: { attempts?: number; deadlineMs?: number },
  ): AsyncIterable<JobOutcome<RolloutJobResult | UpdateJobOutcome>>;
  /** Queue depth, retries and per-worker rates (JSON). */
  stats(): Promise<ScaleOutStats>;
  close(): Promise<void>;
}

/** The part of @troupe/scale-out's `QueueStats` the metrics read. */
export interface ScaleOutStats {
  depth: { waiting: number; active: number; delayed: number };
  jobs: { dispatched: number; succeeded: number; failed: number; retries: number; stalls: number; requeued: number };
  workers: { name: string; pool: string; episodesPerSec: number; busyFraction: number; completed: number }[];
}

/** How the engine runs the jobs. */
export interface DistributedOptions {
  /** Tries per job before it fails (a worker's death counts as one). */
  readonly attempts: number;
  /** A step's jobs not done this long after they went out fail (undefined: no deadline). */
  readonly deadlineMs?: number;
  /** Pool of each policy (`execution.pools`); a job goes to the pool of the first seat's policy that has one. */
  readonly pools: Readonly<Record<string, string>>;
  /** The shared folder of policy versions (default `<run>/policies`). */
  readonly versionsDir: string;
  /** Told when a step's jobs wait and no live worker takes the jobs' pool (checked every `watchMs`). */
  readonly onNoWorkers?: (message: string) => void;
  /** How often a running step checks for live workers. Default 10000. */
  readonly watchMs?: number;
}

/** The distributed engine of one run (see the module comment). */
export class DistributedRollouts implements RolloutEngine {
  /** Unique per trainer process: a restarted trainer never takes the old process's results for its own. */
  readonly runId: string;
  private readonly publisher: VersionPublisher;
  /** The updates of the policies with an update pool (`execution.updatePools`; set by start.ts), if any. */
  updates: RemoteUpdater | undefined;
  private evaluations = 0;
  /** Outcomes of the last step (workers, attempts), for the metrics. */
  lastStep: { jobs: number; failed: number; attempts: number; workers: Record<string, number>; seconds: number } = {
    jobs: 0,
    failed: 0,
    attempts: 0,
    workers: {},
    seconds: 0,
  };

  constructor(
    private readonly queue: RolloutQueue,
    private readonly spec: TeamSpec,
    private readonly config: TrainerConfig,
    handles: readonly PolicyHandle[],
    private readonly options: DistributedOptions,
  ) {
    const nonce = createHash('sha256')
      .update(`${options.versionsDir}\0${process.pid}\0${Date.now()}\0${Math.random()}`)
      .digest('hex')
      .slice(0, 10);
    this.runId = `${spec.name.replace(/[^A-Za-z0-9_.-]/g, '_')}-${nonce}`;
    this.publisher = new VersionPublisher(options.versionsDir, handles);
  }

  /** The pool a job goes to (see {@link DistributedOptions.pools}). */
  get pool(): string | undefined {
    for (const seat of Object.values(this.spec.seats)) {
      const pool = this.options.pools[seat.policy];
      if (pool !== undefined) return pool;
    }
    return undefined;
  }

  async playInstances(step: number, planned: readonly ScheduledInstance[]): Promise<InstanceOutcome[]> {
    const started = performance.now();
    const policies = await this.publisher.publish(step - 1);
    const pool = this.pool;
    const jobs: DispatchJob<RolloutJob>[] = planned.map((instance) => ({
      key: jobKey(this.runId, step, instance),
      payload: { format: 1, runId: this.runId, step, instance, spec: this.spec, config: this.config, policies },
      ...(pool !== undefined ? { pool } : {}),
    }));
    const got = await this.collect<RolloutJobResult>(`step ${step}`, `${this.runId}/step-${step}`, jobs);
    const workers: Record<string, number> = {};
    let attempts = 0;
    const out = jobs.map((j): InstanceOutcome => {
      const o = got.get(j.key);
      if (!o) return { ok: false, error: 'the queue gave no outcome for this job', attempts: 0 };
      attempts += o.attempts;
      if (!o.ok) return { ok: false, error: o.error, attempts: o.attempts };
      workers[o.worker] = (workers[o.worker] ?? 0) + 1;
      return { ok: true, records: o.result.records, solved: o.result.solved, events: o.result.events };
    });
    this.lastStep = {
      jobs: jobs.length,
      failed: out.filter((o) => !o.ok).length,
      attempts,
      workers,
      seconds: (performance.now() - started) / 1000,
    };
    return out;
  }

  /** The current weights as jobs name them: published as `step-<step>` once per step (see versions.ts). */
  publish(step: number): Promise<PolicyVersions> {
    return this.publisher.publish(step);
  }

  /**
   * Plays evaluation episodes as jobs (one per index, in the order of `indices`) with `policies`' weights; an
   * episode whose job failed gives its error.
   */
  async playEval(
    indices: readonly number[],
    options: EvalJobOptions,
    policies: PolicyVersions,
  ): Promise<(RolloutJobResult['events'] | { error: string })[]> {
    const n = ++this.evaluations;
    return this.playEpisodes(
      indices,
      (index) => evalJobKey(this.runId, n, options.split, index),
      (index) => ({ policies, eval: { ...options, index } }),
      `evaluation ${n}`,
      `${this.runId}/eval-${n}`,
    );
  }

  /**
   * Plays `troupe run` episodes as jobs (one per index, in the order of `indices`) with the spec's weights; an episode
   * whose job failed gives its error.
   */
  playRun(
    indices: readonly number[],
    options: RunJobOptions,
  ): Promise<(RolloutJobResult['events'] | { error: string })[]> {
    return this.playEpisodes(
      indices,
      (index) => runJobKey(this.runId, options.split, index),
      (index) => ({ policies: { versions: {} }, run: { ...options, index } }),
      'the episodes',
      `${this.runId}/run`,
    );
  }

  /** One job per episode index (key and what it plays from `keyOf` and `work`), each episode's events or its error. */
  private async playEpisodes(
    indices: readonly number[],
    keyOf: (index: number) => string,
    work: (index: number) => Pick<RolloutJob, 'policies' | 'eval' | 'run'>,
    what: string,
    batch: string,
  ): Promise<(RolloutJobResult['events'] | { error: string })[]> {
    const pool = this.pool;
    const jobs: DispatchJob<RolloutJob>[] = indices.map((index) => ({
      key: keyOf(index),
      payload: {
        format: 1,
        runId: this.runId,
        step: 0,
        instance: { index, replays: 0 },
        spec: this.spec,
        config: this.config,
        ...work(index),
      },
      ...(pool !== undefined ? { pool } : {}),
    }));
    const got = await this.collect<RolloutJobResult>(what, batch, jobs);
    return jobs.map((j) => {
      const o = got.get(j.key);
      if (!o) return { error: 'the queue gave no outcome for this job' };
      return o.ok ? o.result.events : { error: o.error };
    });
  }

  /**
   * Runs update jobs (one per policy, each in its policy's update pool) as one batch, all at once; returns each
   * key's outcome.
   */
  runUpdates(
    step: number,
    jobs: readonly DispatchJob<UpdateJobPayload>[],
  ): Promise<Map<string, JobOutcome<UpdateJobOutcome>>> {
    return this.collect<UpdateJobOutcome>(`the updates of step ${step}`, `${this.runId}/step-${step}/update`, jobs);
  }

  /**
   * Dispatches `jobs` as batch `batch` and collects each key's outcome, with the run's attempts and deadline; while
   * they run, tells when no live worker takes a pool some of them wait in (`what` names them in that notice).
   */
  private async collect<R extends RolloutJobResult | UpdateJobOutcome>(
    what: string,
    batch: string,
    jobs: readonly DispatchJob<RolloutJob | UpdateJobPayload>[],
  ): Promise<Map<string, JobOutcome<R>>> {
    const got = new Map<string, JobOutcome<R>>();
    const watch = this.watchWorkers(what, jobs, got);
    try {
      for await (const o of this.queue.dispatch(batch, [...jobs], {
        attempts: this.options.attempts,
        ...(this.options.deadlineMs !== undefined ? { deadlineMs: this.options.deadlineMs } : {}),
      }))
        got.set(o.key, o as JobOutcome<R>);
    } finally {
      clearInterval(watch);
    }
    return got;
  }

  /** While jobs run: tells {@link DistributedOptions.onNoWorkers} when no live worker takes a pool jobs wait in. */
  private watchWorkers(
    what: string,
    jobs: readonly DispatchJob<unknown>[],
    got: ReadonlyMap<string, unknown>,
  ): NodeJS.Timeout {
    const timer = setInterval(() => {
      const tell = this.options.onNoWorkers;
      if (!tell) return;
      this.queue.stats().then(
        (s) => {
          const waiting = new Map<string | undefined, number>();
          for (const j of jobs) if (!got.has(j.key)) waiting.set(j.pool, (waiting.get(j.pool) ?? 0) + 1);
          for (const [pool, left] of waiting) {
            const name = pool ?? 'default';
            if (!s.workers.some((w) => w.pool === name))
              tell(
                `${what}: ${left} job${left === 1 ? '' : 's'} waiting and no live worker takes pool '${name}'; start one: troupe worker --redis URL${pool !== undefined ? ` --pool ${pool}` : ''}`,
              );
          }
        },
        () => undefined, // Redis trouble is the dispatch's to report
      );
    }, this.options.watchMs ?? 10_000);
    timer.unref();
    return timer;
  }

  /** `scale/*` metrics of the last step: jobs, failures, retries, queue depth and each worker's episodes/s. */
  async metrics(): Promise<Record<string, number>> {
    const m: Record<string, number> = {
      'scale/jobs': this.lastStep.jobs,
      'scale/failed_jobs': this.lastStep.failed,
      'scale/retries': Math.max(0, this.lastStep.attempts - this.lastStep.jobs),
      'scale/workers_used': Object.keys(this.lastStep.workers).length,
    };
    try {
      const s = await this.queue.stats();
      m['scale/queue_depth'] = s.depth.waiting + s.depth.active + s.depth.delayed;
      m['scale/total_retries'] = s.jobs.retries;
      m['scale/stalls'] = s.jobs.stalls;
      m['scale/workers'] = s.workers.length;
      for (const w of s.workers) m[`scale/episodes_per_s/${w.name}`] = w.episodesPerSec;
    } catch {
      // stats are best effort: a step's outcome never depends on them
    }
    return m;
  }

  /** Closes the queue connection and removes the update pools' version folders of this run. */
  async close(): Promise<void> {
    try {
      await this.updates?.close?.();
    } finally {
      await this.queue.close();
    }
  }
}
