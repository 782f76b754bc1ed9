/** The public shapes of the queue layer: what a dispatcher sends, what comes back, and what `stats()` reports. */

/** One unit of work. `key` is its idempotency key (e.g. `${run}/${step}/${instanceUid}`): unique in a batch, and a
 * key whose job already finished in Redis is not run again (its stored result is returned). */
export interface DispatchJob<P> {
  key: string;
  payload: P;
  /** Only workers started with this pool take the job (default: the default pool). */
  pool?: string;
}

/** A job's end, yielded once per key: its result, or why it failed (after every attempt, or past the deadline). */
export type JobOutcome<R> =
  | { key: string; ok: true; result: R; worker: string; attempts: number; ms: number }
  | { key: string; ok: false; error: string; attempts: number; worker?: string };

export interface DispatchOptions {
  /** Tries per job before it fails (a thrown error or a stall, i.e. a dead worker, counts as one). Default 3. */
  attempts?: number;
  /** Jobs of the batch not finished this many ms after `dispatch` began come back as failed (a deadline error);
   * their late results are ignored. Default: no deadline. */
  deadlineMs?: number;
  /** Wait between a job's failed try and the next. Default 0. */
  backoffMs?: number;
}

export interface DispatcherOptions {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://` for TLS). */
  url: string;
  /** Queue name, scoped to the run (no `:` or whitespace); pools add a suffix. */
  queue: string;
  /** How long Redis may stay unreachable before `dispatch` throws a `QueueUnavailableError`. Default 30000. */
  redisTimeoutMs?: number;
  /** Safety net for lost events: how often pending jobs' states are read from Redis. Default 5000. */
  reconcileMs?: number;
  /** A worker heartbeat older than this is dropped from `stats().workers`. Default 5000. */
  workerStaleMs?: number;
}

export interface WorkerOptions<P, R> {
  url: string;
  queue: string;
  /** Take only jobs dispatched with this pool (default: the default pool). */
  pool?: string;
  /** Jobs this worker runs at once. Default 1. */
  concurrency?: number;
  /** Shown in outcomes and stats; unique per worker. Default `${hostname}-${pid}-${n}`. */
  name?: string;
  /** A job whose worker stopped renewing its lock for this long (it died, or blocked its event loop) is handed to
   * another worker. Keep it well above the longest synchronous stretch of `process`. Default 30000. */
  stallMs?: number;
  /** How many times one job may stall before it fails. Default 2. */
  maxStalls?: number;
  /** How often the worker publishes its stats to Redis. Default 1000. */
  heartbeatMs?: number;
  /** The work: its result must be JSON-serialisable. A thrown error fails this attempt (retried up to `attempts`). */
  process: (payload: P, job: JobInfo) => Promise<R>;
}

export interface JobInfo {
  key: string;
  batch: string;
  /** 1 on the first try; counts tries started, stalls included. */
  attempt: number;
}

/** One worker's counters; rates are over the last `windowMs` (up to 10 s), totals since it started. */
export interface WorkerStats {
  name: string;
  pool: string;
  concurrency: number;
  /** Jobs running now. */
  active: number;
  completed: number;
  failed: number;
  /** Milliseconds spent inside `process`, summed over its slots. */
  busyMs: number;
  upMs: number;
  windowMs: number;
  episodesPerSec: number;
  /** Busy time / (concurrency × window), 0..1. */
  busyFraction: number;
  /** Epoch ms of this snapshot. */
  at: number;
}

export interface WorkerHandle {
  readonly name: string;
  /** Stops taking jobs, lets running ones finish (or `force`: abandons them to be retried elsewhere). */
  close(force?: boolean): Promise<void>;
  stats(): WorkerStats;
}

export interface QueueDepth {
  waiting: number;
  active: number;
  delayed: number;
}

/** A JSON-ready snapshot for metrics.jsonl. */
export interface QueueStats {
  /** Epoch ms. */
  at: number;
  queue: string;
  /** Summed over the pools' queues. */
  depth: QueueDepth;
  /** Per pool ('default' for jobs without one). */
  pools: Record<string, QueueDepth>;
  /** This dispatcher's jobs since it was made. */
  jobs: {
    dispatched: number;
    succeeded: number;
    failed: number;
    /** Extra tries: Σ (attempts − 1) over finished jobs. */
    retries: number;
    /** Jobs handed back to the queue because their worker stopped renewing its lock. */
    stalls: number;
    /** Jobs enqueued again because Redis had lost them (a restart without persistence). */
    requeued: number;
    /** Results that arrived after their job's deadline had failed it: ignored. */
    late: number;
  };
  /** Workers whose heartbeat is fresh, any pool. */
  workers: WorkerStats[];
}
