import type { Command } from 'commander';
import { EXECUTION_DEFAULTS } from '@troupe/kernel';
import { CliError, positiveInt } from '../errors.js';
import { importOptional } from '../optional.js';

interface WorkerOptions {
  redis?: string;
  pool?: string;
  queue: string;
  concurrency: number;
  stallMs?: number;
  progress: boolean;
}

/**
 * `troupe worker --redis URL`: a long-running worker of the distributed engine. It takes rollout jobs (one planned
 * instance of one training step each) from the queue, rebuilds the job's team, loads the policy version the job names
 * from the shared folder, plays it and sends the step records back; in an update pool (`execution.updatePools`) it
 * takes update jobs (one policy's RL update of one step), keeps the policy between steps and writes each updated
 * version to the shared folder. SIGINT/SIGTERM: it stops taking jobs and finishes the ones it plays (a second signal
 * releases them to other workers at once).
 */
export function register(program: Command): void {
  program
    .command('worker')
    .description(
      "play rollout jobs (and run policy updates, execution.updatePools) of distributed runs (docs/scale-out.md): `troupe train --redis URL` dispatches, workers on any machine that sees the run's shared folder play",
    )
    .option('--redis <url>', 'Redis URL, e.g. redis://127.0.0.1:6379 (default: $TROUPE_REDIS)')
    .option(
      '--pool <name>',
      "take only jobs of this pool (the spec's execution.pools or execution.updatePools; default: the default pool)",
    )
    .option('--queue <name>', "the trainer's execution.queue", EXECUTION_DEFAULTS.queue)
    .option('--concurrency <n>', 'jobs played at once', positiveInt('--concurrency', 64), 1)
    .option(
      '--stall-ms <ms>',
      "a job whose worker stopped renewing its lock this long goes to another worker (default 30000; keep it above a job's longest synchronous stretch)",
      positiveInt('--stall-ms'),
    )
    .option('--no-progress', 'no progress line on stderr')
    .action(async (opts: WorkerOptions) => {
      const redis = opts.redis ?? process.env.TROUPE_REDIS;
      if (!redis)
        throw new CliError('troupe worker needs --redis URL (or TROUPE_REDIS), e.g. --redis redis://127.0.0.1:6379');
      const trainer = await importOptional('@troupe/trainer', 'troupe worker', () => import('@troupe/trainer'));
      const problem = await trainer.redisProblem(redis);
      if (problem) throw new CliError(`${problem}; ${trainer.START_REDIS_HINT} with --redis`);
      const started = performance.now();
      let jobs = 0;
      let failed = 0;
      let samples = 0;
      let last = '';
      const tty = Boolean(process.stderr.isTTY);
      const line = (text: string): void => {
        if (!opts.progress) return;
        if (tty) process.stderr.write(`\r${text}\x1b[K`);
        else process.stderr.write(`${text}\n`);
      };
      let name = 'worker';
      const worker = await trainer.startRolloutWorker({
        redis,
        queue: opts.queue,
        ...(opts.pool !== undefined ? { pool: opts.pool } : {}),
        concurrency: opts.concurrency,
        ...(opts.stallMs !== undefined ? { stallMs: opts.stallMs } : {}),
        onStart: (e) => {
          if (!tty) line(`worker ${name}: playing ${e.key}${e.attempt > 1 ? ` (attempt ${e.attempt})` : ''}`);
        },
        onJob: (e) => {
          jobs++;
          if (!e.ok) failed++;
          samples += e.samples;
          if (!e.ok) last = `; last failure ${e.key}: ${e.error}`;
          const s = (performance.now() - started) / 1000;
          line(
            `worker ${name}: ${jobs} jobs (${failed} failed), ${samples} samples, ${(jobs / s).toFixed(2)} jobs/s${last}`,
          );
        },
      });
      name = worker.name;
      if (opts.progress)
        process.stderr.write(
          `troupe worker ${worker.name}: waiting for jobs on ${redis} (queue ${opts.queue}, pool ${opts.pool ?? 'default'}, concurrency ${opts.concurrency})\n`,
        );
      await new Promise<void>((resolve) => {
        let stopping = false;
        const stop = (signal: NodeJS.Signals): void => {
          if (stopping) {
            process.stderr.write(`\ntroupe worker: ${signal} again: releasing the running jobs to other workers\n`);
            void worker.close(true).then(resolve, resolve);
            return;
          }
          stopping = true;
          process.stderr.write(`\ntroupe worker: ${signal}: finishing the running jobs, then stopping\n`);
          void worker.close(false).then(resolve, resolve);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      if (tty && opts.progress) process.stderr.write('\n');
      process.stderr.write(`troupe worker: stopped after ${jobs} jobs (${failed} failed)\n`);
    });
}
