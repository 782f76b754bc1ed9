/**
 * Rollout throughput of the distributed engine on this machine: the default team's rollouts (the embedded spec
 * `troupe train` uses, its B instances a step as AT-GRPO trees; no updates) played in this process — lockstep batching
 * across the step (the default) and per instance (what workers play) — and by 1 and 2 local `troupe worker`
 * processes on a private redis-server. Each mode plays one warm-up step (not counted: team composition, first
 * version load), then `steps` steps; a distributed step publishes its policy version as training would. Prints one
 * JSON line: episodes/s and s/step per mode, the machine's cores and load average before and after.
 * Run: npx tsx --conditions=troupe:source bench/scale-out.ts [steps=3] [workers=1,2]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { composeTeam, PRESETS_DIR, loadTeamSpec, resolveTrainerConfig } from '@troupe/kernel';
import { RedisServer } from '@troupe/scale-out';
import {
  DistributedRollouts,
  InstanceSchedule,
  playStepRollouts,
  policyHandles,
  treeSeats,
  type RolloutEngine,
  type RolloutSetup,
} from '@troupe/trainer';
import { redisQueue } from '../packages/trainer/src/distributed/start.js';

const STEPS = Number(process.argv[2] ?? 3);
const WORKERS = (process.argv[3] ?? '1,2').split(',').map(Number);
const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const TSX = import.meta.resolve('tsx');

const spec = loadTeamSpec(join(PRESETS_DIR, 'default-team.yaml'));
const config = resolveTrainerConfig(spec, {});
const team = await composeTeam(spec);
const handles = policyHandles(
  spec,
  team.policies,
  team.seats.map((s) => s.name),
  config,
);
const setup = (batching: 'step' | 'instance'): RolloutSetup => ({
  environment: team.environment,
  seats: team.seats,
  treeSeats: treeSeats(team.seats, config),
  reward: team.reward,
  seed: spec.seed,
  config,
  batching,
});

/** Plays a warm-up step and `STEPS` steps; episodes/s and s/step of the counted ones. */
async function measure(batching: 'step' | 'instance', engine?: RolloutEngine) {
  const schedule = new InstanceSchedule(config.replay);
  await playStepRollouts(1, schedule, setup(batching), engine);
  let episodes = 0;
  const started = performance.now();
  for (let step = 2; step <= STEPS + 1; step++)
    episodes += (await playStepRollouts(step, schedule, setup(batching), engine)).summary.episodes;
  const seconds = (performance.now() - started) / 1000;
  return { episodes_per_s: episodes / seconds, s_per_step: seconds / STEPS, episodes };
}

function startWorker(url: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--conditions=troupe:source', '--import', TSX, join(ROOT, 'packages/cli/src/main.ts'), 'worker', '--redis', url],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('waiting for jobs')) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`troupe worker exited (${code}): ${err}`)));
  });
}

const load = { before: loadavg() };
const result: Record<string, unknown> = {
  bench: 'scale-out',
  spec: spec.name,
  steps: STEPS,
  batch_size: config.batchSize,
  branches: config.branches,
  cpus: availableParallelism(),
};
result['in_process_step_batching'] = await measure('step');
result['in_process_instance_batching'] = await measure('instance');
const redis = await RedisServer.start();
const dir = mkdtempSync(join(tmpdir(), 'troupe-bench-scale-out-'));
const workers: ChildProcess[] = [];
try {
  for (const n of WORKERS) {
    while (workers.length < n) workers.push(await startWorker(redis.url));
    const queue = await redisQueue({
      engine: 'bullmq',
      redis: redis.url,
      queue: 'troupe-rollouts',
      pools: {},
      updatePools: {},
      attempts: 3,
      deadlineMs: undefined,
      redisTimeoutMs: 30_000,
      checkpoints: undefined,
      batching: 'instance',
    });
    const engine = new DistributedRollouts(queue, spec, config, handles, {
      attempts: 3,
      pools: {},
      versionsDir: join(dir, `workers-${n}`),
    });
    try {
      result[`workers_${n}`] = await measure('instance', engine);
    } finally {
      await engine.close();
    }
  }
} finally {
  for (const w of workers) w.kill('SIGTERM');
  await Promise.all(workers.map((w) => new Promise((r) => (w.exitCode !== null ? r(null) : w.on('exit', r)))));
  await redis.stop();
  await team.dispose();
  rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify({ ...result, load: { ...load, after: loadavg() } }) + '\n');
