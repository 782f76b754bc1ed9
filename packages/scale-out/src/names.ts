/** Redis connection options and the names of queues, jobs and keys: one place for the layout in Redis. */
import type { RedisOptions } from 'ioredis';

export const DEFAULT_POOL = 'default';

/** ioredis options for `url`: reconnect every ≤ 1 s forever (the dispatcher bounds the wait itself). */
export function connectionOptions(url: string, what: string): RedisOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(
      `${what}: url ${JSON.stringify(url)} is not a URL; give redis://host:port (e.g. redis://127.0.0.1:6379)`,
    );
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new Error(`${what}: url ${JSON.stringify(url)} must start with redis:// or rediss://`);
  }
  const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0) {
    throw new Error(`${what}: url ${JSON.stringify(url)}: the path must be a database number (e.g. /0)`);
  }
  return {
    host: parsed.hostname || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : 6379,
    username: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    db,
    tls: parsed.protocol === 'rediss:' ? {} : undefined,
    maxRetriesPerRequest: null,
    retryStrategy: (times: number) => Math.min(100 * times, 1000),
  };
}

/** Refuses a queue or pool name BullMQ cannot use. */
export function checkName(what: string, key: string, name: string): void {
  if (typeof name !== 'string' || !/^[^\s:]+$/.test(name)) {
    throw new Error(`${what}: ${key} ${JSON.stringify(name)} must be a non-empty name without ':' or whitespace`);
  }
}

/** The BullMQ queue that carries `pool`'s jobs. */
export function queueName(queue: string, pool: string | undefined): string {
  return pool === undefined || pool === DEFAULT_POOL ? queue : `${queue}.pool.${pool}`;
}

/** The BullMQ job id of `key`: ':' is not allowed in ids and digits-only ids are reserved, so it is escaped and
 * prefixed (injective, so two keys never share a job). */
export function jobId(key: string): string {
  return `k.${key.replace(/%/g, '%25').replace(/:/g, '%3A')}`;
}

/** The Redis hash where the workers of `queue` (every pool) publish their stats. */
export function workersKey(queue: string): string {
  return `troupe-scale-out:${queue}:workers`;
}

/** What a worker returns to BullMQ: the result with who made it, how long it took and on which try. */
export interface ResultEnvelope<R> {
  r: R;
  w: string;
  ms: number;
  a: number;
}

/** What the dispatcher puts in a job. `d` is the batch's deadline (epoch ms): a worker skips a job past it. */
export interface JobData<P> {
  k: string;
  b: string;
  p: P;
  d?: number;
}
