/**
 * Faults on a real redis-server with real worker processes (test/fixtures/worker.ts): a worker SIGKILLed mid-job,
 * Redis restarted mid-batch (with and without persistence), Redis gone for good, a poisoned job, a slow worker.
 */
import { strict as assert } from 'node:assert';
import { Dispatcher, QueueUnavailableError, RedisServer, type JobOutcome } from '@troupe/scale-out';
import type { FakePayload } from './fixtures/worker.js';
import { collect, keysOf, sleep, spawnWorker, type ChildWorker } from './helpers.js';

type Result = { echo: number; by: string };

const STALL_MS = 1000;

describe('faults (real redis-server, worker processes)', function () {
  this.timeout(60_000);
  let redis: RedisServer | undefined;
  let dispatcher: Dispatcher | undefined;
  let workers: ChildWorker[] = [];

  afterEach(async () => {
    await Promise.all(workers.map((w) => w.kill('SIGKILL')));
    workers = [];
    await dispatcher?.close();
    dispatcher = undefined;
    await redis?.stop();
    redis = undefined;
  });

  async function setUp(queue: string, names: string[], persistence: 'none' | 'aof' = 'none') {
    redis = await RedisServer.start({ persistence });
    workers = await Promise.all(names.map((name) => spawnWorker({ url: redis!.url, queue, name, stallMs: STALL_MS })));
    return redis;
  }

  const jobsOf = (n: number, payload: (i: number) => Partial<FakePayload> = () => ({})) =>
    Array.from({ length: n }, (_, i) => ({ key: `run/7/${i}`, payload: { value: i, ...payload(i) } }));

  /** Each key exactly once, and every success echoes its own value. */
  function assertEachOnce(outcomes: JobOutcome<Result>[], n: number) {
    assert.deepEqual(
      keysOf(outcomes),
      keysOf(jobsOf(n).map((j) => ({ key: j.key, ok: false, error: '', attempts: 0 }))),
    );
    for (const o of outcomes) if (o.ok) assert.equal(o.result.echo, Number(o.key.split('/')[2]));
  }

  it('a worker SIGKILLed mid-job: another worker takes the job after the stall timeout; each key once', async () => {
    const server = await setUp('kill', ['victim', 'survivor']);
    dispatcher = new Dispatcher({ url: server.url, queue: 'kill' });
    const [victim] = workers;
    const outcomes: JobOutcome<Result>[] = [];
    const done = (async () => {
      for await (const o of dispatcher!.dispatch<FakePayload, Result>(
        'b',
        jobsOf(8, () => ({ ms: 300 })),
      )) {
        outcomes.push(o);
      }
    })();
    const started = await victim!.waitFor((e) => e.event === 'start');
    await victim!.kill('SIGKILL');
    const t0 = Date.now();
    await done;
    assertEachOnce(outcomes, 8);
    assert.ok(
      outcomes.every((o) => o.ok),
      JSON.stringify(outcomes.filter((o) => !o.ok)),
    );
    const retried = outcomes.find((o) => o.key === started.key)!;
    assert.ok(retried.ok);
    assert.equal(retried.worker, 'survivor');
    assert.equal(retried.attempts, 2, 'the stall counts as a try');
    assert.ok(Date.now() - t0 < 10 * STALL_MS, 'picked up within a few stall intervals');
    const stats = await dispatcher.stats();
    assert.ok(stats.jobs.stalls >= 1, JSON.stringify(stats.jobs));
    assert.equal(stats.jobs.succeeded, 8);
  });

  it('Redis restarted mid-batch without persistence: lost jobs are enqueued again; each key once', async () => {
    const server = await setUp('restart', ['w1', 'w2']);
    dispatcher = new Dispatcher({ url: server.url, queue: 'restart', redisTimeoutMs: 10_000 });
    const outcomes: JobOutcome<Result>[] = [];
    let restarted = false;
    for await (const o of dispatcher.dispatch<FakePayload, Result>(
      'b',
      jobsOf(12, () => ({ ms: 150 })),
    )) {
      outcomes.push(o);
      if (outcomes.length === 3 && !restarted) {
        restarted = true;
        await server.restart({ downMs: 300 });
      }
    }
    assertEachOnce(outcomes, 12);
    assert.ok(outcomes.every((o) => o.ok));
    const stats = await dispatcher.stats();
    assert.ok(stats.jobs.requeued >= 1, `requeued ${stats.jobs.requeued}`);
  });

  it('Redis restarted mid-batch with AOF persistence: the batch completes; each key once', async () => {
    const server = await setUp('aof', ['w1', 'w2'], 'aof');
    dispatcher = new Dispatcher({ url: server.url, queue: 'aof', redisTimeoutMs: 10_000 });
    const outcomes: JobOutcome<Result>[] = [];
    let restarted = false;
    for await (const o of dispatcher.dispatch<FakePayload, Result>(
      'b',
      jobsOf(12, () => ({ ms: 150 })),
    )) {
      outcomes.push(o);
      if (outcomes.length === 3 && !restarted) {
        restarted = true;
        await server.restart({ downMs: 300 });
      }
    }
    assertEachOnce(outcomes, 12);
    assert.ok(outcomes.every((o) => o.ok));
  });

  it('Redis gone for good: dispatch throws a clear error within redisTimeoutMs, never hangs', async () => {
    const server = await setUp('gone', ['w1']);
    dispatcher = new Dispatcher({ url: server.url, queue: 'gone', redisTimeoutMs: 1500 });
    const outcomes: JobOutcome<Result>[] = [];
    let stoppedAt = 0;
    await assert.rejects(
      (async () => {
        for await (const o of dispatcher!.dispatch<FakePayload, Result>(
          'b',
          jobsOf(10, () => ({ ms: 100 })),
        )) {
          outcomes.push(o);
          if (outcomes.length === 2) {
            await server.halt('SIGKILL');
            stoppedAt = Date.now();
          }
        }
      })(),
      (error: Error) => {
        assert.ok(error instanceof QueueUnavailableError, String(error));
        assert.match(error.message, /has not answered for \d+ s \(limit redisTimeoutMs = 1500\)/);
        assert.match(error.message, /batch b stopped with \d+ job\(s\) unfinished/);
        assert.match(error.message, /--resume/);
        return true;
      },
    );
    const waited = Date.now() - stoppedAt;
    assert.ok(waited >= 1000 && waited < 5000, `gave up after ${waited} ms`);
    await assert.rejects(dispatcher.stats(), QueueUnavailableError);
  });

  it('a poisoned job fails after N attempts with its error; the others succeed', async () => {
    const server = await setUp('poison', ['w1', 'w2']);
    dispatcher = new Dispatcher({ url: server.url, queue: 'poison' });
    const jobs = jobsOf(6, (i) => ({ poison: i === 4 }));
    const outcomes = await collect(dispatcher.dispatch<FakePayload, Result>('b', jobs, { attempts: 3 }));
    assertEachOnce(outcomes, 6);
    const poisoned = outcomes.find((o) => o.key === 'run/7/4')!;
    assert.equal(poisoned.ok, false);
    assert.ok(!poisoned.ok);
    assert.equal(poisoned.error, 'poisoned payload 4');
    assert.equal(poisoned.attempts, 3);
    assert.ok(['w1', 'w2'].includes(poisoned.worker!));
    const tries = workers.flatMap((w) => w.events).filter((e) => e.event === 'start' && e.key === 'run/7/4');
    assert.deepEqual(tries.map((e) => e.attempt).sort(), [1, 2, 3]);
    assert.equal(outcomes.filter((o) => o.ok).length, 5);
    const stats = await dispatcher.stats();
    assert.equal(stats.jobs.failed, 1);
    assert.equal(stats.jobs.retries, 2);
  });

  it('a slow worker does not block the batch past deadlineMs; its late result is ignored, not counted twice', async () => {
    const server = await setUp('slow', ['slow', 'fast']);
    dispatcher = new Dispatcher({ url: server.url, queue: 'slow' });
    const [slow] = workers;
    // Job 0 goes to whoever takes it first; make every job slow enough that the deadline catches the slow ones.
    const jobs = jobsOf(4, (i) => ({ ms: i === 0 ? 3000 : 50 }));
    const t0 = Date.now();
    const outcomes = await collect(dispatcher.dispatch<FakePayload, Result>('b', jobs, { deadlineMs: 1200 }));
    const took = Date.now() - t0;
    assert.ok(took >= 1100 && took < 2500, `the batch took ${took} ms`);
    assertEachOnce(outcomes, 4);
    const late = outcomes.find((o) => o.key === 'run/7/0')!;
    assert.ok(!late.ok);
    assert.match(late.error, /^deadline: run\/7\/0 did not finish within 1200 ms/);
    assert.equal(outcomes.filter((o) => o.ok).length, 3);
    // The slow job still finishes on its worker; the dispatcher sees its result arrive and ignores it.
    const finisher = workers.find((w) => w.events.some((e) => e.event === 'start' && e.key === 'run/7/0'))!;
    await finisher.waitFor((e) => e.event === 'done' && e.key === 'run/7/0', 5000);
    let stats = await dispatcher.stats();
    for (let i = 0; i < 40 && stats.jobs.late === 0; i++) {
      await sleep(50);
      stats = await dispatcher.stats();
    }
    assert.equal(stats.jobs.late, 1);
    assert.equal(stats.jobs.succeeded, 3);
    assert.equal(stats.jobs.failed, 1);
    void slow;
  });
});
