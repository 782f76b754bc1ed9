/**
 * Queue overhead and worker utilisation on a private redis-server, with K worker PROCESSES (one BullMQ worker of
 * concurrency 1 each) on this machine. Two batches after a warm-up:
 *   - trivial jobs (0 ms of work): overheadMsPerJob = K × wall / N, the worker-slot time each job costs;
 *   - jobs of `--ms` ms: busyFraction = Σ time inside process / (K × wall), and
 *     overheadMsPerJob = (K × wall − Σ work) / N.
 * Between batches it pauses `--pause-ms` (the trainer's update phase), in which the dispatcher removes the ended
 * batch's jobs from Redis. Prints one JSON line.
 *
 *   npx tsx --conditions=troupe:source packages/scale-out/bench/queue.ts [--workers 16] [--jobs 2000] [--ms 20]
 *     [--work-jobs 1600] [--pause-ms 1000]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Dispatcher, RedisServer } from '@troupe/scale-out';

const { values } = parseArgs({
  options: {
    workers: { type: 'string', default: '16' },
    jobs: { type: 'string', default: '2000' },
    ms: { type: 'string', default: '20' },
    'work-jobs': { type: 'string', default: '1600' },
    'pause-ms': { type: 'string', default: '1000' },
  },
});
const K = Number(values.workers);
const N = Number(values.jobs);
const MS = Number(values.ms);
const WORK_N = Number(values['work-jobs']);
const PAUSE_MS = Number(values['pause-ms']);
const pause = () => new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));

const redis = await RedisServer.start();
const queue = 'bench';
const children: ChildProcess[] = [];
try {
  await Promise.all(
    Array.from({ length: K }, async (_, i) => {
      const child = spawn(
        process.execPath,
        [
          '--conditions=troupe:source',
          '--import',
          'tsx',
          WORKER,
          JSON.stringify({ url: redis.url, queue, name: `w${i}` }),
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      children.push(child);
      await once(child.stdout!, 'data');
    }),
  );
  const dispatcher = new Dispatcher({ url: redis.url, queue });
  const run = async (batch: string, n: number, ms: number) => {
    const jobs = Array.from({ length: n }, (_, i) => ({ key: `${batch}/${i}`, payload: { ms } }));
    const t0 = performance.now();
    let work = 0;
    let failed = 0;
    for await (const outcome of dispatcher.dispatch<{ ms: number }, number>(batch, jobs)) {
      if (outcome.ok) work += outcome.ms;
      else failed++;
    }
    const wall = performance.now() - t0;
    return { wall, work, failed };
  };
  await run('warm-up', 4 * K, 0);
  await pause();
  const load = loadavg()[0]!;
  const first = Date.now();
  const trivial = await run('trivial', N, 0);
  await pause();
  const timed = await run('timed', WORK_N, MS);
  const { jobs } = await dispatcher.stats();
  await dispatcher.close();
  const round = (x: number, digits = 3) => Number(x.toFixed(digits));
  console.log(
    JSON.stringify({
      bench: 'scale-out-queue',
      workers: K,
      workerKind: 'processes (one BullMQ worker, concurrency 1, each)',
      pauseMs: PAUSE_MS,
      trivial: {
        jobs: N,
        wallMs: round(trivial.wall, 1),
        jobsPerSec: round((N * 1000) / trivial.wall, 1),
        wallMsPerJob: round(trivial.wall / N),
        overheadMsPerJob: round((K * trivial.wall - trivial.work) / N),
        failed: trivial.failed,
      },
      timed: {
        jobs: WORK_N,
        msPerJob: MS,
        wallMs: round(timed.wall, 1),
        idealWallMs: round((WORK_N * MS) / K, 1),
        busyFraction: round(timed.work / (K * timed.wall)),
        overheadMsPerJob: round((K * timed.wall - timed.work) / WORK_N),
        failed: timed.failed,
      },
      retries: jobs.retries,
      stalls: jobs.stalls,
      cpus: availableParallelism(),
      loadavg1m: { start: round(load, 2), end: round(loadavg()[0]!, 2) },
      benchSeconds: round((Date.now() - first - PAUSE_MS) / 1000, 1),
      node: process.version,
    }),
  );
} finally {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((child) => (child.exitCode === null ? once(child, 'exit') : undefined)));
  await redis.stop();
}
