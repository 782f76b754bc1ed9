/**
 * The RL updates of the default team (the embedded spec `troupe train` uses: two full-model policies, proposer and
 * executor; no warm start) in the trainer's process — each policy in its own worker thread, the default — and as
 * update jobs in two update pools (`execution.updatePools`), each taken by its own local `troupe worker` process, on
 * a private redis-server. The rollouts are jobs on one more worker in both modes, so only where the updates run
 * differs. Each mode trains `steps` steps from the same start; the first step of an update pool also writes the
 * starting versions, so steps are reported one by one. Prints one JSON line: per mode each step's `time/update` and
 * `time/step` (seconds), whether the final weights of the two modes are byte-equal, the machine's cores and load
 * average before and after.
 * Run: npx tsx --conditions=troupe:source bench/update-pools.ts [steps=3]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PRESETS_DIR, loadTeamSpec, withSpecChanges, type TeamSpec } from '@troupe/kernel';
import { RedisServer } from '@troupe/scale-out';
import { Trainer } from '@troupe/trainer';

const STEPS = Number(process.argv[2] ?? 3);
const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const TSX = import.meta.resolve('tsx');

const base = loadTeamSpec(join(PRESETS_DIR, 'default-team.yaml'));
const spec = withSpecChanges(base, {
  algorithm: { ...base.algorithm, steps: STEPS, evalEvery: 0 },
  evaluation: { ...base.evaluation, baseline: false },
});
const POOLS = { proposer: 'update-a', executor: 'update-b' };

function startWorker(url: string, pool?: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      '--conditions=troupe:source',
      '--import',
      TSX,
      join(ROOT, 'packages/cli/src/main.ts'),
      'worker',
      '--redis',
      url,
      ...(pool ? ['--pool', pool] : []),
    ],
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

/** Trains `STEPS` steps with rollouts on the workers; each step's update and step seconds (metrics.jsonl). */
async function train(s: TeamSpec, out: string, redis: string) {
  const t = await Trainer.create(s, { outDir: out, skipWarmStart: true, skipFinalEval: true, execution: { redis } });
  try {
    await t.run();
  } finally {
    await t.dispose();
  }
  const steps = readFileSync(join(out, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((m) => m.kind === 'train');
  const round = (x: unknown): number => Math.round((x as number) * 100) / 100;
  return { update_s: steps.map((m) => round(m['time/update'])), step_s: steps.map((m) => round(m['time/step'])) };
}

const load = { before: loadavg() };
const result: Record<string, unknown> = {
  bench: 'update-pools',
  spec: spec.name,
  steps: STEPS,
  batch_size: spec.algorithm.batchSize,
  branches: spec.algorithm.branches,
  cpus: availableParallelism(),
};
const redis = await RedisServer.start();
const dir = mkdtempSync(join(tmpdir(), 'troupe-bench-update-pools-'));
const workers: ChildProcess[] = [];
try {
  workers.push(await startWorker(redis.url), await startWorker(redis.url, POOLS.proposer));
  workers.push(await startWorker(redis.url, POOLS.executor));
  result['in_trainer'] = await train(spec, join(dir, 'in-trainer'), redis.url);
  const pooled = withSpecChanges(spec, { execution: { ...spec.execution, updatePools: POOLS } });
  result['update_pools'] = await train(pooled, join(dir, 'update-pools'), redis.url);
  const weights = (mode: string, policy: string): Buffer =>
    readFileSync(join(dir, mode, 'checkpoints', `step-${STEPS}`, policy, 'model.safetensors'));
  result['same_weights'] = Object.keys(POOLS).every((p) => weights('in-trainer', p).equals(weights('update-pools', p)));
} finally {
  for (const w of workers) w.kill('SIGTERM');
  await Promise.all(workers.map((w) => new Promise((r) => (w.exitCode !== null ? r(null) : w.on('exit', r)))));
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify({ ...result, load: { ...load, after: loadavg() } }) + '\n');
