/**
 * The dispatcher (the trainer's side): enqueues a batch of jobs on BullMQ and yields each job's outcome once, as
 * jobs finish. Outcomes come from BullMQ's event stream (QueueEvents); a reconciliation pass — after Redis comes
 * back from an outage, and every `reconcileMs` — reads the pending jobs' states from Redis, so a lost event never
 * hangs a batch and a job that Redis lost (a restart without persistence) is enqueued again.
 */
import { Job, Queue, QueueEvents } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import {
  checkName,
  connectionOptions,
  DEFAULT_POOL,
  jobId,
  queueName,
  workersKey,
  type JobData,
  type ResultEnvelope,
} from './names.js';
import type {
  DispatcherOptions,
  DispatchJob,
  DispatchOptions,
  JobOutcome,
  QueueDepth,
  QueueStats,
  WorkerStats,
} from './types.js';

/** Redis stayed unreachable longer than `redisTimeoutMs`: the batch stopped; a resumed run continues it. */
export class QueueUnavailableError extends Error {
  override readonly name = 'QueueUnavailableError';
}

interface Lane {
  pool: string;
  queue: Queue<JobData<unknown>, ResultEnvelope<unknown>>;
  events: QueueEvents;
  /** The queue's connection, ours to end (BullMQ's close of its own would wait for a Redis that may be gone). */
  client: Redis;
}

interface Pending {
  key: string;
  pool: string;
  payload: unknown;
}

type Anything = JobOutcome<unknown>;

/** One running `dispatch`: its pending jobs and the outcomes not yet yielded. */
class Batch {
  readonly pending = new Map<string, Pending>(); // job id → job
  readonly outbox: Anything[] = [];
  /** Jobs failed by an earlier dispatch and made again for this one. */
  readonly remade = new Set<string>();
  /** Every job of the batch, removed from Redis when the batch ends. */
  readonly all: [string, Pending][] = [];
  /** Its timers (cleared when it ends, or when the dispatcher closes under it). */
  readonly timers: NodeJS.Timeout[] = [];
  error: Error | undefined;
  private wake: (() => void) | undefined;

  constructor(
    readonly name: string,
    readonly startedAt: number,
    readonly o: Required<Pick<DispatchOptions, 'attempts' | 'backoffMs'>> & { deadlineAt?: number },
  ) {}

  /** Queues the outcome of job `id` if it is still pending (so each key comes out once). */
  settle(id: string, outcome: Anything): boolean {
    if (!this.pending.delete(id)) return false;
    this.outbox.push(outcome);
    this.poke();
    return true;
  }

  fail(error: Error): void {
    this.error ??= error;
    this.poke();
  }

  next(): Promise<void> {
    if (this.outbox.length > 0 || this.error) return Promise.resolve();
    return new Promise((resolve) => (this.wake = resolve));
  }

  private poke(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

export class Dispatcher {
  private readonly connection: RedisOptions;
  private readonly queue: string;
  private readonly redisTimeoutMs: number;
  private readonly reconcileMs: number;
  private readonly workerStaleMs: number;
  private readonly lanes = new Map<string, Promise<Lane>>();
  private readonly made: Lane[] = []; // every lane's BullMQ objects, ready or not, for close()
  private readonly owners = new Map<string, Batch>(); // job id → the running batch waiting for it
  private readonly expired = new Set<string>(); // job ids failed by a deadline, whose late results are ignored
  private readonly probe: Redis;
  private readonly counters = { dispatched: 0, succeeded: 0, failed: 0, retries: 0, stalls: 0, requeued: 0, late: 0 };
  private lastPong = Date.now();
  private running = 0; // batches being dispatched
  private readonly batches = new Set<Batch>();
  private sawOutage = false;
  private closed = false;

  constructor(o: DispatcherOptions) {
    const what = 'Dispatcher';
    checkName(what, 'queue', o.queue);
    this.connection = connectionOptions(o.url, what);
    this.queue = o.queue;
    this.redisTimeoutMs = o.redisTimeoutMs ?? 30_000;
    this.reconcileMs = o.reconcileMs ?? 5000;
    this.workerStaleMs = o.workerStaleMs ?? 5000;
    this.probe = new Redis(this.connection);
    this.probe.on('error', () => {});
    this.probe.on('close', () => (this.sawOutage = true));
  }

  /** Enqueues the batch and yields each job's outcome once, as they complete (any order); never a duplicate key.
   * Throws `QueueUnavailableError` when Redis stays unreachable longer than `redisTimeoutMs`. Leaving the loop early
   * removes the batch's jobs that no worker has taken yet. */
  async *dispatch<P, R>(
    batch: string,
    jobs: readonly DispatchJob<P>[],
    o: DispatchOptions = {},
  ): AsyncIterable<JobOutcome<R>> {
    if (this.closed) throw new Error('Dispatcher: dispatch after close()');
    const b = this.open(batch, jobs, o);
    const timers = b.timers;
    this.batches.add(b);
    try {
      timers.push(setInterval(() => this.watch(b), Math.min(500, Math.max(50, this.redisTimeoutMs / 4))));
      if (b.o.deadlineAt !== undefined) {
        timers.push(setTimeout(() => void this.expire(b, o.deadlineMs!), b.o.deadlineAt - Date.now()));
      }
      const earlier = await this.bounded(b, this.existing(b));
      await this.bounded(b, this.enqueue(b, [...b.pending]));
      if (earlier.length > 0) await this.bounded(b, this.reconcile(b, earlier));
      timers.push(setInterval(() => void this.reconcile(b).catch((error) => b.fail(error)), this.reconcileMs));
      while (b.pending.size > 0 || b.outbox.length > 0) {
        await b.next();
        if (b.error) throw b.error;
        const outcome = b.outbox.shift();
        if (outcome) yield outcome as JobOutcome<R>;
      }
    } finally {
      this.batches.delete(b);
      this.running--;
      for (const timer of timers) clearInterval(timer);
      for (const [id] of b.pending) this.owners.delete(id);
      // The batch is over: its jobs (and their payloads) leave Redis, except one a worker still holds (it is removed
      // an hour after it finishes). A batch stopped by an error keeps its jobs for the dispatch that resumes it.
      if (!b.error) void this.remove(b.all);
    }
  }

  /** Queue depth, this dispatcher's job counters and the workers' latest heartbeats (one JSON-ready object). */
  async stats(): Promise<QueueStats> {
    const read = async (): Promise<QueueStats> => {
      const pools: Record<string, QueueDepth> = {};
      const depth: QueueDepth = { waiting: 0, active: 0, delayed: 0 };
      for (const lane of await Promise.all(this.lanes.values())) {
        const c = await lane.queue.getJobCounts('waiting', 'prioritized', 'paused', 'active', 'delayed');
        const d = {
          waiting: (c.waiting ?? 0) + (c.prioritized ?? 0) + (c.paused ?? 0),
          active: c.active ?? 0,
          delayed: c.delayed ?? 0,
        };
        pools[lane.pool] = d;
        depth.waiting += d.waiting;
        depth.active += d.active;
        depth.delayed += d.delayed;
      }
      const now = Date.now();
      const beats = Object.values(await this.probe.hgetall(workersKey(this.queue))).map(
        (text) => JSON.parse(text) as WorkerStats,
      );
      const workers = beats
        .filter((w) => now - w.at <= this.workerStaleMs)
        .sort((a, b) => a.name.localeCompare(b.name));
      // A worker that died without closing (SIGKILL) leaves its last heartbeat: forget it after a while.
      const dead = beats.filter((w) => now - w.at > 10 * this.workerStaleMs).map((w) => w.name);
      if (dead.length > 0) await this.probe.hdel(workersKey(this.queue), ...dead);
      return { at: now, queue: this.queue, depth, pools, jobs: { ...this.counters }, workers };
    };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(this.unavailable('stats()')), this.redisTimeoutMs);
    });
    try {
      return await Promise.race([read(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const b of this.batches) {
      for (const timer of b.timers) clearInterval(timer);
      b.fail(new Error(`Dispatcher: closed while batch ${b.name} was running`));
    }
    this.probe.disconnect();
    const lanes = this.made;
    const closing = Promise.allSettled(lanes.flatMap((lane) => [lane.events.close(), lane.queue.close()]));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closing, new Promise((resolve) => (timer = setTimeout(resolve, 2000)))]);
    clearTimeout(timer);
    for (const lane of lanes) lane.client.disconnect();
  }

  private open(batch: string, jobs: readonly DispatchJob<unknown>[], o: DispatchOptions): Batch {
    const what = `Dispatcher.dispatch(${JSON.stringify(batch)})`;
    const attempts = o.attempts ?? 3;
    if (!Number.isInteger(attempts) || attempts < 1) throw new Error(`${what}: attempts must be an integer ≥ 1`);
    const backoffMs = o.backoffMs ?? 0;
    if (!Number.isInteger(backoffMs) || backoffMs < 0) throw new Error(`${what}: backoffMs must be an integer ≥ 0`);
    if (o.deadlineMs !== undefined && (!Number.isInteger(o.deadlineMs) || o.deadlineMs < 1)) {
      throw new Error(`${what}: deadlineMs must be a positive integer`);
    }
    const startedAt = Date.now();
    const b = new Batch(batch, startedAt, {
      attempts,
      backoffMs,
      deadlineAt: o.deadlineMs === undefined ? undefined : startedAt + o.deadlineMs,
    });
    for (const [index, job] of jobs.entries()) {
      if (typeof job.key !== 'string' || job.key === '')
        throw new Error(`${what}: jobs[${index}].key must be a non-empty string`);
      if (job.pool !== undefined) checkName(what, `jobs[${index}].pool`, job.pool);
      const id = jobId(job.key);
      if (b.pending.has(id))
        throw new Error(`${what}: jobs[${index}].key ${JSON.stringify(job.key)} appears twice in the batch`);
      if (this.owners.has(id)) {
        throw new Error(
          `${what}: jobs[${index}].key ${JSON.stringify(job.key)} is already being dispatched by batch ${this.owners.get(id)!.name}`,
        );
      }
      b.pending.set(id, { key: job.key, pool: job.pool ?? DEFAULT_POOL, payload: job.payload });
    }
    // The watchdog's clock starts with the first running batch (an idle dispatcher pings nobody).
    if (this.running++ === 0) this.lastPong = Date.now();
    for (const entry of b.pending) {
      this.owners.set(entry[0], b);
      b.all.push(entry);
    }
    this.counters.dispatched += b.pending.size;
    return b;
  }

  /** The pool's BullMQ queue and event reader, made once; events are read from Redis's clock now on. */
  private lane(pool: string): Promise<Lane> {
    let lane = this.lanes.get(pool);
    if (!lane) {
      lane = (async () => {
        const name = queueName(this.queue, pool);
        // Redis answers first (while it is down, only the probe waits: close() ends it, and nothing else lingers).
        const [seconds, micros] = await this.probe.time();
        if (this.closed) throw new Error('Dispatcher: closed');
        const lastEventId = `${Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - 1}-0`;
        const client = new Redis(this.connection);
        client.on('error', () => {});
        const queue = new Queue<JobData<unknown>, ResultEnvelope<unknown>>(name, { connection: client });
        queue.on('error', () => {});
        const events = new QueueEvents(name, { connection: this.connection, lastEventId, blockingTimeout: 1000 });
        events.on('error', () => {});
        this.made.push({ pool, queue, events, client });
        events.on('completed', ({ jobId: id, returnvalue }) =>
          this.completed(id, returnvalue as unknown as ResultEnvelope<unknown>),
        );
        events.on('failed', ({ jobId: id }) => void this.failedEvent(queue, id));
        events.on('stalled', ({ jobId: id }) => {
          if (this.owners.has(id)) this.counters.stalls++;
        });
        await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
        return { pool, queue, events, client };
      })();
      lane.catch(() => this.lanes.delete(pool));
      this.lanes.set(pool, lane);
    }
    return lane;
  }

  private completed(id: string, envelope: ResultEnvelope<unknown> | null | undefined): void {
    const b = this.owners.get(id);
    if (!b) {
      if (this.expired.delete(id)) this.counters.late++;
      return;
    }
    if (!envelope || typeof envelope !== 'object' || !('w' in envelope)) return; // not ours: reconciliation decides
    const p = b.pending.get(id)!;
    this.owners.delete(id);
    this.counters.succeeded++;
    this.counters.retries += Math.max(0, envelope.a - 1);
    b.settle(id, {
      key: p.key,
      ok: true,
      result: envelope.r,
      worker: envelope.w,
      attempts: envelope.a,
      ms: envelope.ms,
    });
  }

  private async failedEvent(queue: Lane['queue'], id: string): Promise<void> {
    if (!this.owners.has(id)) {
      if (this.expired.delete(id)) this.counters.late++;
      return;
    }
    const job = await Job.fromId<JobData<unknown>, ResultEnvelope<unknown>>(queue, id).catch(() => undefined);
    if (job) this.failed(id, job);
  }

  private failed(id: string, job: Job<JobData<unknown>, ResultEnvelope<unknown>>): void {
    const b = this.owners.get(id);
    // Not finished: a newer job under the same id (made again meanwhile) whose own end is still to come.
    if (!b || !job.finishedOn) return;
    if (job.data?.b !== b.name || job.timestamp < b.startedAt) {
      // A failure left by an earlier dispatch of the key (its deadline, its attempts): run the job again, once. A
      // second sight of the old job (an event and a reconciliation both saw it) is ignored.
      if (b.remade.has(id)) return;
      b.remade.add(id);
      const p = b.pending.get(id)!;
      void job.remove().then(
        () => this.enqueue(b, [[id, p]]).catch((error: Error) => b.fail(error)),
        () => this.settleFailed(b, id, job), // it could not be removed: its failure stands
      );
      return;
    }
    this.settleFailed(b, id, job);
  }

  private settleFailed(b: Batch, id: string, job: Job<JobData<unknown>, ResultEnvelope<unknown>>): void {
    const p = b.pending.get(id);
    if (!p) return;
    const attempts = Math.max(job.attemptsMade, job.attemptsStarted ?? 0);
    this.owners.delete(id);
    this.counters.failed++;
    this.counters.retries += Math.max(0, attempts - 1);
    b.settle(id, {
      key: p.key,
      ok: false,
      error: job.failedReason || 'failed without a reason',
      attempts,
      ...(job.processedBy ? { worker: job.processedBy } : {}),
    });
  }

  /** Adds the jobs (an existing job with the same id is kept: BullMQ ignores the duplicate). */
  private async enqueue(b: Batch, jobs: [string, Pending][]): Promise<void> {
    const byPool = new Map<string, [string, Pending][]>();
    for (const entry of jobs) byPool.set(entry[1].pool, [...(byPool.get(entry[1].pool) ?? []), entry]);
    for (const [pool, entries] of byPool) {
      const lane = await this.lane(pool);
      for (let i = 0; i < entries.length; i += 500) {
        await lane.queue.addBulk(
          entries.slice(i, i + 500).map(([id, p]) => ({
            name: b.name,
            data: { k: p.key, b: b.name, p: p.payload, ...(b.o.deadlineAt === undefined ? {} : { d: b.o.deadlineAt }) },
            opts: {
              jobId: id,
              attempts: b.o.attempts,
              ...(b.o.backoffMs > 0 ? { backoff: { type: 'fixed', delay: b.o.backoffMs } } : {}),
              removeOnComplete: { age: 3600 },
              removeOnFail: { age: 24 * 3600 },
            },
          })),
        );
      }
    }
  }

  /** The ids of the batch's jobs that Redis holds already (an earlier dispatch of the same keys). */
  private async existing(b: Batch): Promise<string[]> {
    const ids = [...b.pending.keys()];
    const found = await Promise.all(
      ids.map(async (id) => {
        const lane = await this.lane(b.pending.get(id)!.pool);
        return (await lane.client.exists(lane.queue.toKey(id))) === 1;
      }),
    );
    return ids.filter((_, i) => found[i]);
  }

  /**
   * Reads the state of the pending jobs: a finished job whose event was lost is settled, a job Redis no longer has
   * is enqueued again. `fresh` ids (jobs found before enqueueing): a job left finished by an earlier dispatch of the
   * same key is reused when it succeeded, and run again when it failed.
   */
  private async reconcile(b: Batch, fresh?: readonly string[]): Promise<void> {
    const ids = fresh ?? [...b.pending.keys()];
    const lanes = new Map<string, Lane>();
    for (const id of ids) {
      const pool = b.pending.get(id)?.pool;
      if (pool !== undefined && !lanes.has(pool)) lanes.set(pool, await this.lane(pool));
    }
    const states = await Promise.all(
      ids.map(async (id) => {
        const p = b.pending.get(id);
        return p ? { id, p, state: await lanes.get(p.pool)!.queue.getJobState(id) } : undefined;
      }),
    );
    const again: [string, Pending][] = [];
    for (const entry of states) {
      if (!entry || !b.pending.has(entry.id)) continue;
      const { id, p, state } = entry;
      const queue = lanes.get(p.pool)!.queue;
      if (state === 'unknown') {
        this.counters.requeued++;
        again.push([id, p]);
      } else if (fresh && (state === 'waiting' || state === 'delayed' || state === 'prioritized')) {
        // An earlier dispatch's job nobody has taken yet: made again, so this batch's deadline and attempts apply
        // (a removal fails once a worker holds it; then its result serves this batch).
        if ((await queue.remove(id).catch(() => 0)) === 1) again.push([id, p]);
      } else if (state === 'completed' || state === 'failed') {
        const job = await Job.fromId<JobData<unknown>, ResultEnvelope<unknown>>(queue, id);
        if (!job) {
          again.push([id, p]);
        } else if (state === 'completed') {
          this.completed(id, job.returnvalue);
        } else {
          this.failed(id, job);
        }
      }
    }
    if (again.length > 0) await this.enqueue(b, again);
  }

  /** The deadline passed: every pending job fails; waiting ones are removed, running ones' results will be ignored. */
  private async expire(b: Batch, deadlineMs: number): Promise<void> {
    const left = [...b.pending];
    for (const [id, p] of left) {
      this.owners.delete(id);
      this.expired.add(id);
      this.counters.failed++;
      b.settle(id, {
        key: p.key,
        ok: false,
        error: `deadline: ${p.key} did not finish within ${deadlineMs} ms of dispatching batch ${b.name}`,
        attempts: 0,
      });
    }
    if (this.expired.size > 100_000) this.expired.clear();
    await this.remove(left);
  }

  /** Removes jobs no worker holds (a held one is locked: it finishes, and its result is ignored). Best effort. */
  private async remove(jobs: [string, Pending][]): Promise<void> {
    await Promise.all(
      jobs.map(async ([id, p]) => {
        const lane = await this.lanes.get(p.pool)?.catch(() => undefined);
        await lane?.queue.remove(id).catch(() => 0);
      }),
    ).catch(() => {});
  }

  /** The watchdog: a PING each tick; Redis silent for `redisTimeoutMs` fails the batch; back after an outage, the
   * pending jobs are reconciled. */
  private pinging = false;
  private watch(b: Batch): void {
    if (Date.now() - this.lastPong > this.redisTimeoutMs) {
      b.fail(this.unavailable(`batch ${b.name} stopped with ${b.pending.size} job(s) unfinished`));
      return;
    }
    if (this.pinging) return;
    this.pinging = true;
    const sent = Date.now();
    this.probe.ping().then(
      () => {
        this.pinging = false;
        const outage = this.sawOutage || Date.now() - sent > 2000;
        this.lastPong = Date.now();
        if (outage) {
          this.sawOutage = false;
          for (const batch of new Set(this.owners.values()))
            void this.reconcile(batch).catch((error) => batch.fail(error));
        }
      },
      () => (this.pinging = false),
    );
  }

  private unavailable(what: string): QueueUnavailableError {
    const seconds = Math.round((Date.now() - this.lastPong) / 1000);
    return new QueueUnavailableError(
      `Redis at ${this.connection.host}:${this.connection.port} has not answered for ${seconds} s (limit redisTimeoutMs = ${this.redisTimeoutMs}): ${what}. Start Redis again and rerun with --resume to continue.`,
    );
  }

  /** Awaits `promise`, or throws the batch's error (Redis gone) as soon as the watchdog raises it. */
  private async bounded<T>(b: Batch, promise: Promise<T>): Promise<T> {
    promise.catch(() => {});
    const raised = new Promise<never>((_, reject) => {
      const check = setInterval(() => {
        if (b.error) {
          clearInterval(check);
          reject(b.error);
        }
      }, 50);
      promise.finally(() => clearInterval(check)).catch(() => {});
    });
    raised.catch(() => {});
    return Promise.race([promise, raised]);
  }
}
