/**
 * A rollout worker (`troupe worker`): takes rollout jobs from the queue (one pool), plays each with a
 * {@link JobPlayer} and sends back its step records. A job it refuses (a spec plugin not installed here, a version it
 * cannot read) fails at once, without retries, with the reason.
 */
import type { RolloutJob, RolloutJobResult } from './job.js';
import { JobPlayer } from './play-job.js';

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
  /** Told after each job: its key, whether it went well, and the samples (step records) it sends back. */
  readonly onJob?: (e: { key: string; ok: boolean; error?: string; seconds: number; samples: number }) => void;
}

/** A running rollout worker. */
export interface RolloutWorker {
  readonly name: string;
  /** Jobs and episodes played so far. */
  readonly player: JobPlayer;
  /** Stops taking jobs and lets running ones finish (`force`: releases them to other workers). */
  close(force?: boolean): Promise<void>;
}

/** Starts a rollout worker on @troupe/scale-out (loaded here only). */
export async function startRolloutWorker(o: RolloutWorkerOptions): Promise<RolloutWorker> {
  const { startWorker, UnrecoverableError } = await import('@troupe/scale-out');
  const player = new JobPlayer({ teams: Math.max(2, (o.concurrency ?? 1) + 1) });
  const handle = startWorker<RolloutJob, RolloutJobResult>({
    url: o.redis,
    queue: o.queue,
    ...(o.pool !== undefined ? { pool: o.pool } : {}),
    concurrency: o.concurrency ?? 1,
    ...(o.stallMs !== undefined ? { stallMs: o.stallMs } : {}),
    process: async (payload, job) => {
      const started = performance.now();
      o.onStart?.({ key: job.key, attempt: job.attempt });
      try {
        const result = await player.play(payload);
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
    async close(force = false) {
      try {
        await handle.close(force);
      } finally {
        await player.dispose();
      }
    },
  };
}
