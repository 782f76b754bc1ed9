/** The worker side: takes jobs of one queue (and pool) from BullMQ, runs `process`, and reports its stats. */
import { hostname } from 'node:os';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import {
  checkName,
  connectionOptions,
  DEFAULT_POOL,
  queueName,
  workersKey,
  type JobData,
  type ResultEnvelope,
} from './names.js';
import type { WorkerHandle, WorkerOptions, WorkerStats } from './types.js';

let counter = 0;
const WINDOW_MS = 10_000;

/** Starts a worker; it runs until `close()`. Connection trouble is reported on stderr (at most every 5 s), never
 * thrown: the worker reconnects by itself. */
export function startWorker<P, R>(o: WorkerOptions<P, R>): WorkerHandle {
  const what = 'startWorker';
  checkName(what, 'queue', o.queue);
  if (o.pool !== undefined) checkName(what, 'pool', o.pool);
  const concurrency = positive(what, 'concurrency', o.concurrency ?? 1);
  const stallMs = positive(what, 'stallMs', o.stallMs ?? 30_000);
  const heartbeatMs = positive(what, 'heartbeatMs', o.heartbeatMs ?? 1000);
  const maxStalls = o.maxStalls ?? 2;
  if (!Number.isInteger(maxStalls) || maxStalls < 0) throw new Error(`${what}: maxStalls must be an integer ≥ 0`);
  const name = o.name ?? `${hostname()}-${process.pid}-${++counter}`;
  const pool = o.pool ?? DEFAULT_POOL;
  const connection = connectionOptions(o.url, what);

  const started = Date.now();
  const running = new Map<string, number>(); // job id → start time
  let completed = 0;
  let failed = 0;
  let finishedBusyMs = 0;
  const history: { at: number; completed: number; busyMs: number }[] = [];

  const busyMs = (now: number) => {
    let sum = finishedBusyMs;
    for (const start of running.values()) sum += now - start;
    return sum;
  };
  const stats = (): WorkerStats => {
    const now = Date.now();
    const busy = busyMs(now);
    const since = history.find((h) => now - h.at <= WINDOW_MS) ?? { at: started, completed: 0, busyMs: 0 };
    const windowMs = Math.max(1, now - since.at);
    return {
      name,
      pool,
      concurrency,
      active: running.size,
      completed,
      failed,
      busyMs: Math.round(busy),
      upMs: now - started,
      windowMs,
      episodesPerSec: ((completed - since.completed) * 1000) / windowMs,
      busyFraction: Math.min(1, (busy - since.busyMs) / (concurrency * windowMs)),
      at: now,
    };
  };

  const worker = new Worker<JobData<P>, ResultEnvelope<R>>(
    queueName(o.queue, o.pool),
    async (job: Job<JobData<P>, ResultEnvelope<R>>) => {
      const { k: key, b: batch, p: payload, d: deadline } = job.data;
      if (deadline !== undefined && Date.now() > deadline) {
        throw new UnrecoverableError(
          `deadline: batch ${batch} had already passed its deadline when ${name} took the job`,
        );
      }
      const start = Date.now();
      running.set(job.id!, start);
      try {
        const attempt = Math.max(job.attemptsStarted ?? 0, job.attemptsMade + 1);
        const result = await o.process(payload, { key, batch, attempt });
        completed++;
        return { r: result, w: name, ms: Date.now() - start, a: attempt };
      } catch (error) {
        failed++;
        throw error instanceof Error ? error : new Error(String(error));
      } finally {
        running.delete(job.id!);
        finishedBusyMs += Date.now() - start;
      }
    },
    {
      connection,
      concurrency,
      name,
      lockDuration: stallMs,
      stalledInterval: stallMs,
      maxStalledCount: maxStalls,
      runRetryDelay: 500,
      drainDelay: 1,
      removeOnComplete: { age: 3600 },
      removeOnFail: { age: 24 * 3600 },
    },
  );
  let lastComplaint = 0;
  worker.on('error', (error) => {
    if (Date.now() - lastComplaint < 5000) return;
    lastComplaint = Date.now();
    process.stderr.write(`troupe worker ${name}: ${error.message} (retrying)\n`);
  });

  // Heartbeats: this worker's stats in a hash the dispatcher reads.
  const publisher = new Redis({ ...connection, lazyConnect: false });
  publisher.on('error', () => {});
  const beat = () => {
    const s = stats();
    history.push({ at: s.at, completed: s.completed, busyMs: s.busyMs });
    while (history.length > 0 && s.at - history[0]!.at > WINDOW_MS) history.shift();
    if (publisher.status === 'ready') publisher.hset(workersKey(o.queue), name, JSON.stringify(s)).catch(() => {});
  };
  publisher.on('ready', beat);
  const timer = setInterval(beat, heartbeatMs);
  timer.unref();

  let closing: Promise<void> | undefined;
  return {
    name,
    stats,
    close(force = false) {
      closing ??= (async () => {
        clearInterval(timer);
        const closing = worker.close(force);
        if (publisher.status !== 'ready' || force) {
          // Redis gone (or no waiting): BullMQ's close would wait for it; end the connections instead.
          let wait: NodeJS.Timeout | undefined;
          await Promise.race([closing, new Promise((resolve) => (wait = setTimeout(resolve, 2000)))]);
          clearTimeout(wait);
          await worker.disconnect().catch(() => {});
        } else {
          await closing;
        }
        if (publisher.status === 'ready') await publisher.hdel(workersKey(o.queue), name).catch(() => {});
        publisher.disconnect();
      })();
      return closing;
    },
  };
}

function positive(what: string, key: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`${what}: ${key} must be a positive integer, not ${value}`);
  return value;
}
