import { strict as assert } from 'node:assert';
import {
  Dispatcher,
  QueueUnavailableError,
  RedisServer,
  startWorker,
  UnrecoverableError,
  type JobOutcome,
  type WorkerHandle,
} from '@troupe/scale-out';
import { Redis } from 'ioredis';
import { collect, keysOf, sleep } from './helpers.js';

describe('Dispatcher and workers (in-process workers)', function () {
  this.timeout(30_000);
  let redis: RedisServer;
  let dispatcher: Dispatcher | undefined;
  const workers: WorkerHandle[] = [];

  before(async () => {
    redis = await RedisServer.start();
  });
  after(async () => {
    await redis?.stop();
  });
  afterEach(async () => {
    await dispatcher?.close();
    dispatcher = undefined;
    await Promise.all(workers.splice(0).map((w) => w.close(true)));
  });

  const echo = (queue: string, name: string, calls: string[], pool?: string) =>
    startWorker<{ n: number; ms?: number }, { twice: number; pool: string }>({
      url: redis.url,
      queue,
      name,
      pool,
      heartbeatMs: 100,
      async process(payload, job) {
        calls.push(job.key);
        if (payload.ms) await sleep(payload.ms);
        return { twice: payload.n * 2, pool: pool ?? 'default' };
      },
    });

  it('yields every key once with its result, worker, attempts and time; stats() shows the workers', async () => {
    const calls: string[] = [];
    workers.push(echo('echo', 'a', calls), echo('echo', 'b', calls));
    dispatcher = new Dispatcher({ url: redis.url, queue: 'echo' });
    const jobs = Array.from({ length: 20 }, (_, i) => ({ key: `run/1/${i}`, payload: { n: i, ms: 20 } }));
    const outcomes = await collect(dispatcher.dispatch<{ n: number }, { twice: number }>('step-1', jobs));
    assert.deepEqual(keysOf(outcomes), keysOf(jobs.map((j) => ({ key: j.key, ok: false, error: '', attempts: 0 }))));
    for (const o of outcomes) {
      assert.ok(o.ok, JSON.stringify(o));
      assert.equal(o.result.twice, Number(o.key.split('/')[2]) * 2);
      assert.ok(['a', 'b'].includes(o.worker));
      assert.equal(o.attempts, 1);
      assert.ok(o.ms >= 15, `ms ${o.ms}`);
    }
    assert.equal(calls.length, 20, 'each job ran once');
    await sleep(250); // a heartbeat
    const stats = await dispatcher.stats();
    assert.deepEqual(stats.depth, { waiting: 0, active: 0, delayed: 0 });
    assert.deepEqual(stats.jobs, {
      dispatched: 20,
      succeeded: 20,
      failed: 0,
      retries: 0,
      stalls: 0,
      requeued: 0,
      late: 0,
    });
    assert.deepEqual(
      stats.workers.map((w) => w.name),
      ['a', 'b'],
    );
    const completed = stats.workers.reduce((sum, w) => sum + w.completed, 0);
    assert.equal(completed, 20);
    for (const w of stats.workers) {
      assert.ok(w.busyFraction > 0 && w.busyFraction <= 1, `busy ${w.busyFraction}`);
      assert.ok(w.episodesPerSec > 0);
    }
    JSON.parse(JSON.stringify(stats)); // JSON-ready
  });

  it('sends pool jobs only to workers of that pool', async () => {
    const calls: string[] = [];
    const gpuCalls: string[] = [];
    workers.push(echo('pools', 'cpu', calls), echo('pools', 'gpu', gpuCalls, 'gpu'));
    dispatcher = new Dispatcher({ url: redis.url, queue: 'pools' });
    const jobs = Array.from({ length: 8 }, (_, i) => ({
      key: `k${i}`,
      payload: { n: i },
      ...(i % 2 ? { pool: 'gpu' } : {}),
    }));
    const outcomes = await collect(dispatcher.dispatch<{ n: number }, { pool: string }>('b', jobs));
    assert.equal(outcomes.length, 8);
    for (const o of outcomes) {
      assert.ok(o.ok);
      const odd = Number(o.key.slice(1)) % 2 === 1;
      assert.equal(o.worker, odd ? 'gpu' : 'cpu', o.key);
      assert.equal(o.result.pool, odd ? 'gpu' : 'default');
    }
    assert.deepEqual(gpuCalls.sort(), ['k1', 'k3', 'k5', 'k7']);
    const stats = await dispatcher.stats();
    assert.deepEqual(Object.keys(stats.pools).sort(), ['default', 'gpu']);
  });

  it('a dispatch that takes over a stopped one reuses its stored results and runs its failures again', async () => {
    const calls: string[] = [];
    let failFirst = true;
    workers.push(
      startWorker<{ n: number }, number>({
        url: redis.url,
        queue: 'again',
        name: 'w',
        async process(payload, job) {
          calls.push(job.key);
          if (job.key === 'bad' && failFirst) throw new Error('first time fails');
          return payload.n;
        },
      }),
    );
    const jobs = [
      { key: 'good', payload: { n: 1 } },
      { key: 'bad', payload: { n: 2 } },
    ];
    // The first dispatcher sees both outcomes, then stops before its batch ends (a trainer that died): the jobs
    // stay in Redis.
    const stopped = new Dispatcher({ url: redis.url, queue: 'again' });
    const first = stopped.dispatch<{ n: number }, number>('one', jobs, { attempts: 1 })[Symbol.asyncIterator]();
    const seen = [(await first.next()).value, (await first.next()).value] as JobOutcome<number>[];
    assert.deepEqual(seen.map((o) => [o.key, o.ok]).sort(), [
      ['bad', false],
      ['good', true],
    ]);
    await stopped.close();
    assert.equal(calls.length, 2);
    failFirst = false;
    dispatcher = new Dispatcher({ url: redis.url, queue: 'again' });
    const second = await collect(dispatcher.dispatch<{ n: number }, number>('two', jobs, { attempts: 1 }));
    assert.deepEqual(second.map((o) => [o.key, o.ok && o.result]).sort(), [
      ['bad', 2],
      ['good', 1],
    ]);
    assert.deepEqual(calls.sort(), ['bad', 'bad', 'good'], "'good' was not run again, 'bad' was");
    // This batch ended: its jobs left Redis, so the same keys would run again.
    const client = new Redis(redis.url);
    try {
      for (let i = 0; i < 40 && (await client.keys('bull:again:k.*')).length > 0; i++) await sleep(25);
      assert.deepEqual(await client.keys('bull:again:k.*'), []);
    } finally {
      client.disconnect();
    }
  });

  it('an UnrecoverableError fails the job at once, without its other attempts', async () => {
    const calls: string[] = [];
    workers.push(
      startWorker<number, number>({
        url: redis.url,
        queue: 'refuse',
        name: 'w',
        async process(n, job) {
          calls.push(job.key);
          if (n < 0) throw new UnrecoverableError(`cannot play ${n}`);
          return n;
        },
      }),
    );
    dispatcher = new Dispatcher({ url: redis.url, queue: 'refuse' });
    const jobs = [
      { key: 'bad', payload: -1 },
      { key: 'good', payload: 1 },
    ];
    const outcomes = await collect(dispatcher.dispatch<number, number>('b', jobs, { attempts: 5 }));
    const bad = outcomes.find((o) => o.key === 'bad')!;
    assert.ok(!bad.ok);
    assert.equal(bad.error, 'cannot play -1');
    assert.equal(bad.attempts, 1);
    assert.deepEqual(calls.sort(), ['bad', 'good']);
  });

  it('after a dispatcher died, dispatching its keys again runs its waiting jobs under the new batch', async () => {
    const crashed = new Dispatcher({ url: redis.url, queue: 'resume' });
    const jobs = Array.from({ length: 4 }, (_, i) => ({ key: `run/3/${i}`, payload: { n: i } }));
    // No worker yet: the first batch enqueues, then its dispatcher goes away with the jobs waiting in Redis.
    const abandoned = crashed.dispatch('one', jobs, { deadlineMs: 400 })[Symbol.asyncIterator]();
    const gone = abandoned.next();
    await sleep(200);
    await crashed.close();
    await assert.rejects(gone, /closed while batch one was running/);
    await sleep(400); // the first batch's deadline has passed
    const calls: string[] = [];
    workers.push(echo('resume', 'w', calls));
    dispatcher = new Dispatcher({ url: redis.url, queue: 'resume' });
    const outcomes = await collect(dispatcher.dispatch<{ n: number }, { twice: number }>('two', jobs));
    assert.deepEqual(
      outcomes.map((o) => [o.key, o.ok]).sort(),
      jobs.map((j) => [j.key, true]),
    );
    assert.deepEqual(
      calls.sort(),
      jobs.map((j) => j.key),
      'each ran once',
    );
  });

  it("a worker's close() lets its running job finish and takes no other", async () => {
    const calls: string[] = [];
    const worker = echo('drain', 'w', calls);
    dispatcher = new Dispatcher({ url: redis.url, queue: 'drain' });
    const jobs = [
      { key: 'first', payload: { n: 1, ms: 300 } },
      { key: 'second', payload: { n: 2 } },
    ];
    const outcomes = dispatcher.dispatch<{ n: number }, { twice: number }>('b', jobs, { deadlineMs: 1000 });
    const iterator = outcomes[Symbol.asyncIterator]();
    const first = iterator.next();
    while (calls.length === 0) await sleep(10);
    assert.equal(worker.stats().active, 1);
    await worker.close();
    const done = (await first).value as JobOutcome<{ twice: number }>;
    assert.ok(done.ok && done.result.twice === 2 && done.key === calls[0], JSON.stringify(done));
    const rest = (await iterator.next()).value as JobOutcome<unknown>;
    assert.ok(!rest.ok && rest.error.startsWith('deadline:'), 'the other job waited for a worker until the deadline');
    assert.equal(calls.length, 1);
    assert.equal(worker.stats().completed, 1);
  });

  it('leaving the loop early removes the jobs no worker has taken', async () => {
    const calls: string[] = [];
    workers.push(echo('early', 'w', calls));
    dispatcher = new Dispatcher({ url: redis.url, queue: 'early' });
    const jobs = Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, payload: { n: i, ms: 50 } }));
    for await (const outcome of dispatcher.dispatch('b', jobs)) {
      assert.ok(outcome.ok);
      break;
    }
    await sleep(300);
    const stats = await dispatcher.stats();
    assert.equal(stats.depth.waiting, 0, 'the waiting jobs were removed');
    assert.ok(calls.length <= 3, `ran ${calls.length} of 10`);
  });

  it('a Redis that never answers: dispatch throws QueueUnavailableError within redisTimeoutMs; close() returns', async () => {
    const down = await RedisServer.start();
    await down.stop(); // a port where nothing listens now
    dispatcher = new Dispatcher({ url: down.url, queue: 'down', redisTimeoutMs: 600 });
    const t0 = Date.now();
    await assert.rejects(
      collect(dispatcher.dispatch('b', [{ key: 'k', payload: 1 }])),
      (error: Error) =>
        error instanceof QueueUnavailableError &&
        /has not answered for \d+ s \(limit redisTimeoutMs = 600\).*--resume/.test(error.message),
    );
    assert.ok(Date.now() - t0 < 3000, `gave up after ${Date.now() - t0} ms`);
    const closing = Date.now();
    await dispatcher.close();
    assert.ok(Date.now() - closing < 3000);
  });

  it('refuses bad input with the key named', async () => {
    assert.throws(() => new Dispatcher({ url: 'http://x', queue: 'q' }), /url "http:\/\/x" must start with redis:\/\//);
    assert.throws(() => new Dispatcher({ url: redis.url, queue: 'a:b' }), /queue "a:b" must be a non-empty name/);
    dispatcher = new Dispatcher({ url: redis.url, queue: 'bad' });
    const run = (jobs: { key: string; payload: unknown; pool?: string }[], o = {}) =>
      collect(dispatcher!.dispatch('b', jobs, o));
    await assert.rejects(
      run([
        { key: 'x', payload: 1 },
        { key: 'x', payload: 2 },
      ]),
      /jobs\[1\]\.key "x" appears twice/,
    );
    await assert.rejects(run([{ key: '', payload: 1 }]), /jobs\[0\]\.key must be a non-empty string/);
    await assert.rejects(run([{ key: 'x', payload: 1, pool: 'a b' }]), /jobs\[0\]\.pool "a b"/);
    await assert.rejects(run([{ key: 'x', payload: 1 }], { attempts: 0 }), /attempts must be an integer ≥ 1/);
    assert.throws(
      () => startWorker({ url: redis.url, queue: 'q', concurrency: 0, process: async () => 1 }),
      /startWorker: concurrency must be a positive integer/,
    );
  });
});
