/**
 * A worker (`troupe worker`): takes jobs from the queue (one pool). A rollout job is played with a {@link JobPlayer},
 * which sends back its step records; an update job (a policy's RL update, `execution.updatePools`) is run with an
 * {@link UpdatePlayer}, which writes the updated version to the shared folder. A job it refuses (a spec plugin not
 * installed here, a version it cannot read) fails at once, without retries, with the reason.
 */
import type { RolloutJob, RolloutJobResult } from './job.js';
import { JobPlayer } from './play-job.js';
import { UpdatePlayer, type UpdateJobOutcome, type UpdateJobPayload } from './update-job.js';

/** Options of {@link startRolloutWorker}. */
export interface RolloutWorkerOptions {
  /** Redis URL. */
  readonly redis: string;
  /** Queue name (the trainer's `execution.queue`). */
  readonly queue: string;
  /** Pool (default: the default pool). */
  readonly pool?: string;
  /** Jobs played at once. Default 1. */
  readonly concurrency?: number;
  /** A job whose worker went silent this long goes to another worker (default 30000: keep it above a job's longest synchronous stretch). */
  readonly stallMs?: number;
  /** Told when a job starts. */
  readonly onStart?: (e: { key: string; attempt: number }) => void;
  /** Told after each job: its key, whether it went well, and the samples (step records) it sends back (0: an update). */
  readonly onJob?: (e: { key: string; ok: boolean; error?: string; seconds: number; samples: number }) => void;
}

/** A running rollout worker. */
export interface RolloutWorker {
  readonly name: string;
  /** Jobs and episodes played so far. */
  readonly player: JobPlayer;
  /** Update jobs run so far. */
  readonly updater: UpdatePlayer;
  /** Stops taking jobs and lets running ones finish (`force`: releases them to other workers). */
  close(force?: boolean): Promise<void>;
}

/** Starts a rollout worker on @troupe/scale-out (loaded here only). */
export async function startRolloutWorker(o: RolloutWorkerOptions): Promise<RolloutWorker> {
  const { startWorker, UnrecoverableError } = await import('@troupe/scale-out');
  const player = new JobPlayer({ teams: Math.max(2, (o.concurrency ?? 1) + 1) });
  const updater = new UpdatePlayer({ keep: Math.max(2, o.concurrency ?? 1) });
  const handle = startWorker<RolloutJob | UpdateJobPayload, RolloutJobResult | UpdateJobOutcome>({
    url: o.redis,
    queue: o.queue,
    ...(o.pool !== undefined ? { pool: o.pool } : {}),
    concurrency: o.concurrency ?? 1,
    ...(o.stallMs !== undefined ? { stallMs: o.stallMs } : {}),
    process: async (payload, job) => {
      const started = performance.now();
      o.onStart?.({ key: job.key, attempt: job.attempt });
      try {
        if ((payload as { kind?: unknown } | null)?.kind === 'update') {
          const result = await updater.run(payload as UpdateJobPayload);
          o.onJob?.({ key: job.key, ok: true, seconds: result.seconds, samples: 0 });
          return result;
        }
        const result = await player.play(payload as RolloutJob);
        o.onJob?.({ key: job.key, ok: true, seconds: result.seconds, samples: result.records.length });
        return result;
      } catch (err) {
        const error = err instanceof Error ? err : new Error(String(err));
        o.onJob?.({
          key: job.key,
          ok: false,
          error: error.message,
          seconds: (performance.now() - started) / 1000,
          samples: 0,
        });
        if ('unrecoverable' in error) {
          // fails the job at once, without its other attempts: retrying cannot help
          throw new UnrecoverableError(error.message);
        }
        throw error;
      }
    },
  });
  return {
    name: handle.name,
    player,
    updater,
    async close(force = false) {
      try {
        await handle.close(force);
      } finally {
        await updater.dispose();
        await player.dispose();
      }
    },
  };
}
