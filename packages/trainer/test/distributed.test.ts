/**
 * The distributed engine's parts in one process: the job player (a worker's side) against the trainer's own rollouts,
 * policy versions (published atomically, pruned, refused when unreadable), and the engine over an in-memory queue
 * that gives outcomes out of order and fails one job, and update jobs (`execution.updatePools`) against the trainer's own
 * updates. The real queue (BullMQ on redis-server) and `troupe worker`
 * processes are tested end to end in the repository's test/scale-out.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  composeTeam,
  loadTeamSpec,
  resolveExecution,
  resolveTrainerConfig,
  SpecError,
  withSpecChanges,
} from '@troupe/kernel';
import {
  DistributedRollouts,
  evaluateTeam,
  InstanceSchedule,
  JobPlayer,
  instanceEpisodes,
  jobKey,
  playEpisodes,
  playStepRollouts,
  policyHandles,
  treeSeats,
  Trainer,
  UpdatePlayer,
  VersionPublisher,
  type RolloutJob,
  type RolloutJobResult,
  type RolloutQueue,
  type UpdateJobOutcome,
  type UpdateJobPayload,
} from '../src/index.js';
import type { JobOutcome } from '@troupe/scale-out';
import { microTeamSpec } from './trainer-helpers.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'troupe-dist-'));

/**
 * An in-memory queue (tests only): plays every job with one JobPlayer, gives the outcomes in reverse order, and fails
 * the jobs `poison` names as a real queue would after its attempts.
 */
class ReversedQueue implements RolloutQueue {
  readonly player = new JobPlayer();
  readonly updater = new UpdatePlayer();
  dispatched: string[] = [];
  pools: (string | undefined)[] = [];
  updates: UpdateJobPayload[] = [];
  /** Called after each update job ran (its result folder written), before the trainer reads it. */
  afterUpdate: ((p: UpdateJobPayload) => Promise<void>) | undefined;
  constructor(private readonly poison: (key: string) => boolean = () => false) {}
  async *dispatch(
    _batch: string,
    jobs: { key: string; payload: RolloutJob | UpdateJobPayload; pool?: string }[],
    options: { attempts?: number },
  ): AsyncIterable<JobOutcome<RolloutJobResult | UpdateJobOutcome>> {
    const out: JobOutcome<RolloutJobResult | UpdateJobOutcome>[] = [];
    for (const j of jobs) {
      this.dispatched.push(j.key);
      this.pools.push(j.pool);
      const p = j.payload;
      if (this.poison(j.key)) out.push({ key: j.key, ok: false, error: 'boom', attempts: options.attempts ?? 1 });
      else if ('kind' in p) {
        this.updates.push(p);
        out.push({ key: j.key, ok: true, result: await this.updater.run(p), worker: 'w', attempts: 1, ms: 1 });
        await this.afterUpdate?.(p);
      } else out.push({ key: j.key, ok: true, result: await this.player.play(p), worker: 'w', attempts: 1, ms: 1 });
    }
    yield* out.reverse();
  }
  stats(): Promise<never> {
    return Promise.reject(new Error('no stats in memory'));
  }
  async close(): Promise<void> {
    await this.updater.dispose();
    await this.player.dispose();
  }
}

describe('distributed engine (in one process)', function () {
  this.timeout(120_000);

  it('a job played by a worker gives the records the trainer plays in-process with per-instance batching', async () => {
    const spec = await microTeamSpec({ mapping: 'per-role', algorithm: { batchSize: 3, concurrency: 3 } });
    const config = resolveTrainerConfig(spec, {});
    const team = await composeTeam(spec);
    const player = new JobPlayer();
    try {
      const setup = {
        environment: team.environment,
        seats: team.seats,
        treeSeats: treeSeats(team.seats, config),
        reward: team.reward,
        seed: spec.seed,
        config,
        batching: 'instance' as const,
      };
      const inProcess = await playStepRollouts(1, new InstanceSchedule(config.replay), setup);
      const planned = new InstanceSchedule(config.replay).next(config.batchSize);
      const viaJobs = [];
      for (const instance of planned) {
        const r = await player.play({
          format: 1,
          runId: 'r',
          step: 1,
          instance,
          spec,
          config,
          policies: { versions: { proposer: 0, executor: 0 } },
        });
        viaJobs.push(...r.records);
      }
      assert.equal(JSON.stringify(viaJobs), JSON.stringify(inProcess.records));
      // the same instance alone, in lockstep with nobody else, is what the job played
      const alone = await playEpisodes([instanceEpisodes(1, planned[1]!, setup)], 3, 'instance', () => {});
      assert.equal(
        JSON.stringify(alone.flatMap((e) => e.steps)),
        JSON.stringify(inProcess.records.filter((r) => r.instanceUid.startsWith('step-1/train/1/'))),
      );
    } finally {
      await player.dispose();
      await team.dispose();
    }
  });

  it('versions: published atomically per step, pruned to the newest two; a missing one is refused without retry', async () => {
    const spec = await microTeamSpec({ mapping: 'per-role' });
    const config = resolveTrainerConfig(spec, {});
    const team = await composeTeam(spec);
    const player = new JobPlayer();
    try {
      const handles = policyHandles(
        spec,
        team.policies,
        team.seats.map((s) => s.name),
        config,
      );
      const root = tmp();
      const pub = new VersionPublisher(root, handles);
      for (const step of [0, 1, 2]) await pub.publish(step);
      assert.deepEqual(readdirSync(root).sort(), ['step-1', 'step-2'], 'no temporary folder left, two kept');
      assert.ok(existsSync(join(root, 'step-2', 'executor', 'model.safetensors')));
      const job: RolloutJob = {
        format: 1,
        runId: 'r',
        step: 1,
        instance: { index: 0, replays: 0 },
        spec,
        config,
        policies: { dir: join(root, 'step-0'), versions: { proposer: 0, executor: 0 } },
      };
      await assert.rejects(player.play(job), (err: Error & { unrecoverable?: boolean }) => {
        assert.equal(err.unrecoverable, true);
        assert.match(err.message, /step-0 is not there: the worker must see the trainer's shared folder/);
        return true;
      });
      const played = await player.play({
        ...job,
        policies: { dir: join(root, 'step-2'), versions: { proposer: 7, executor: 7 } },
      });
      assert.ok(played.records.length > 0 && played.records.every((r) => r.policyVersion === 7));
      await assert.rejects(player.play({ ...job, format: 2 } as unknown as RolloutJob), /format 1/);
      // a spec plugin this worker does not have: refused, naming what to install
      const missing = withSpecChanges(spec, { environment: { id: 'sokobanana', config: {} } });
      await assert.rejects(player.play({ ...job, spec: missing }), (err: Error & { unrecoverable?: boolean }) => {
        assert.equal(err.unrecoverable, true);
        assert.match(
          err.message,
          /this worker cannot build team 'micro-per-role': [\s\S]*sokobanana[\s\S]*npm install/,
        );
        return true;
      });
    } finally {
      await player.dispose();
      await team.dispose();
    }
  });

  it('the trainer over a queue: outcomes out of order give plan order; a failed job drops its instance and is logged; pools', async () => {
    const spec = await microTeamSpec({ mapping: 'per-role', algorithm: { batchSize: 3, concurrency: 3, steps: 1 } });
    const reference = tmp();
    const t0 = await Trainer.create(spec, {
      outDir: reference,
      skipFinalEval: true,
    });
    try {
      await t0.run();
    } finally {
      await t0.dispose();
    }
    const out = tmp();
    const queue = new ReversedQueue((key) => key.endsWith('/step-1/train/1'));
    // the proposer's policy has no pool, the executor's has: jobs go to the first seat's pool there is, 'gpu'
    const pooled = withSpecChanges(spec, { execution: { pools: { executor: 'gpu' } } });
    const t = await Trainer.create(pooled, {
      outDir: out,
      skipFinalEval: true,
      execution: { redis: 'redis://x:1' },
      queue,
    });
    try {
      await t.run();
    } finally {
      await t.dispose();
    }
    assert.deepEqual(
      queue.dispatched.map((k) => k.split('/').slice(1).join('/')),
      ['step-1/train/0', 'step-1/train/1', 'step-1/train/2'],
    );
    assert.ok(queue.dispatched[0]!.startsWith(`${spec.name}-`), 'keys are (run id, step, instance)');
    assert.deepEqual(queue.pools, ['gpu', 'gpu', 'gpu']);
    assert.equal(jobKey('r', 3, { index: 9, replays: 2 }), 'r/step-3/replay-2/train/9');
    const kept = readFileSync(join(reference, 'trace.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .filter((l) => !l.includes('"step-1/train/1/'));
    assert.deepEqual(readFileSync(join(out, 'trace.jsonl'), 'utf8').trim().split('\n'), kept);
    const failures = readFileSync(join(out, 'failures.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(failures, [{ step: 1, index: 1, replays: 0, error: 'boom', attempts: 3 }]);
    const m = readFileSync(join(out, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const step = m.find((r) => r.kind === 'train');
    assert.equal(step['rollout/failed_instances'], 1);
    assert.equal(step['scale/failed_jobs'], 1);
    assert.ok(existsSync(join(out, 'policies', 'step-0', 'proposer')), 'the version step 1 played');
  });

  it("the trainer's evaluations on workers equal in-process ones with per-instance batching; a failed one counts as unsolved", async () => {
    const spec = await microTeamSpec({
      mapping: 'per-role',
      algorithm: { batchSize: 2, concurrency: 2, steps: 1, evalEvery: 1, evalEpisodes: 3 },
    });
    const evalOf = async (options: { queue?: RolloutQueue }): Promise<Record<string, unknown>> => {
      const out = tmp();
      const t = await Trainer.create(spec, {
        outDir: out,
        skipFinalEval: true,
        ...(options.queue ? { execution: { redis: 'redis://x:1' }, queue: options.queue } : {}),
      });
      try {
        await t.run();
      } finally {
        await t.dispose();
      }
      const m = readFileSync(join(out, 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const step = m.find((r) => r.kind === 'train');
      return Object.fromEntries(Object.entries(step).filter(([k]) => k.startsWith('eval/')));
    };
    const inProcess = await evalOf({});
    assert.ok(Object.keys(inProcess).length > 0 && inProcess['eval/episodes'] === 3, JSON.stringify(inProcess));
    const queue = new ReversedQueue();
    assert.deepEqual(await evalOf({ queue }), inProcess);
    assert.equal(queue.dispatched.filter((k) => k.includes('/eval-1/validation/')).length, 3);
    // an evaluation episode whose job failed: played, not solved, counted
    const team = await composeTeam(spec);
    try {
      const r = await evaluateTeam(team, {
        split: 'test',
        episodes: 2,
        seed: 1,
        engine: { playEval: (indices) => Promise.resolve(indices.map(() => ({ error: 'boom' }))) },
      });
      assert.deepEqual([r.episodes, r.successes, r.failedEpisodes, r.outcomes], [2, 0, 2, [false, false]]);
    } finally {
      await team.dispose();
    }
  });

  it('update pools: the same trace, weights and optimizer state as in-process, also resumed; a redelivered job gives the same bytes; a failed one names the policy and pool', async () => {
    const spec = await microTeamSpec({ mapping: 'per-role', algorithm: { batchSize: 2, concurrency: 2, steps: 2 } });
    const train = async (
      s: typeof spec,
      queue?: ReversedQueue,
      more: { out?: string; steps?: number; resume?: boolean } = {},
    ): Promise<string> => {
      const out = more.out ?? tmp();
      const t = await Trainer.create(s, {
        outDir: out,
        skipFinalEval: true,
        ...(queue ? { execution: { redis: 'redis://x:1' }, queue } : {}),
        ...(more.steps !== undefined ? { steps: more.steps } : {}),
        ...(more.resume ? { resume: true } : {}),
      });
      try {
        await t.run();
      } finally {
        await t.dispose();
      }
      return out;
    };
    const reference = await train(spec);
    const pooled = withSpecChanges(spec, { execution: { updatePools: { proposer: 'up-a', executor: 'up-b' } } });
    const queue = new ReversedQueue();
    // the last job redelivered: its result folder is there, so it returns it as it is; and a fresh worker that loads
    // the starting version from the shared folder (as if the first had died) writes the same bytes
    let redelivered = false;
    queue.afterUpdate = async (p) => {
      if (p.step !== 2 || p.policy !== 'executor') return;
      const first = await queue.updater.run(p);
      assert.equal(queue.updater.updates, 4, 'not run again');
      const fresh = new UpdatePlayer();
      try {
        const again = await fresh.run({ ...p, out: `${p.out}-again` });
        assert.deepEqual([fresh.updates, fresh.loads], [1, 1]);
        assert.deepEqual(again.stats, first.stats);
        for (const f of ['model.safetensors', 'optimizer.safetensors', 'stats.json'])
          assert.ok(
            readFileSync(join(p.out, f)).equals(readFileSync(join(`${p.out}-again`, f))),
            `${f}: the same bytes`,
          );
      } finally {
        await fresh.dispose();
      }
      redelivered = true;
    };
    const out = await train(pooled, queue);
    assert.ok(redelivered);
    assert.deepEqual(
      readdirSync(join(out, 'policies', 'updates')),
      [],
      "the run's version folders are removed at its end",
    );
    const bytes = (run: string, file: string): Buffer => readFileSync(join(run, 'checkpoints', 'step-2', file));
    assert.equal(readFileSync(join(out, 'trace.jsonl'), 'utf8'), readFileSync(join(reference, 'trace.jsonl'), 'utf8'));
    for (const file of [
      'proposer/model.safetensors',
      'executor/model.safetensors',
      'trainer/proposer.optimizer.safetensors',
      'trainer/executor.optimizer.safetensors',
    ])
      assert.ok(bytes(out, file).equals(bytes(reference, file)), `${file} equals the in-process run's`);
    const updates = queue.dispatched.filter((k) => k.includes('/update/'));
    assert.deepEqual(
      updates.map((k) => k.split('/').slice(1).join('/')),
      ['step-1/update/proposer', 'step-1/update/executor', 'step-2/update/proposer', 'step-2/update/executor'],
    );
    assert.deepEqual(
      queue.pools.filter((_, i) => queue.dispatched[i]!.includes('/update/')),
      ['up-a', 'up-b', 'up-a', 'up-b'],
    );
    // the worker held each policy between steps: it loaded each starting version once
    assert.deepEqual([queue.updater.updates, queue.updater.loads], [4, 2]);
    const metrics = readFileSync(join(out, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>)
      .filter((m) => (m.kind as unknown) === 'train');
    assert.deepEqual(
      metrics.map((m) => [m['update/remote'], m['loss/proposer/version'], m['loss/executor/version']]),
      [
        [2, 1, 1],
        [2, 2, 2],
      ],
    );
    // stopped after step 1 and resumed (a new trainer process: a new run id, its starting versions written afresh)
    const resumed = await train(pooled, new ReversedQueue(), { steps: 1 });
    await train(pooled, new ReversedQueue(), { out: resumed, resume: true });
    assert.equal(
      readFileSync(join(resumed, 'trace.jsonl'), 'utf8'),
      readFileSync(join(reference, 'trace.jsonl'), 'utf8'),
    );
    for (const file of ['proposer/model.safetensors', 'trainer/executor.optimizer.safetensors'])
      assert.ok(bytes(resumed, file).equals(bytes(reference, file)), `resumed: ${file} equals the in-process run's`);
    // a failed update job fails the step, naming the policy and its pool
    const poisoned = new ReversedQueue((key) => key.endsWith('/step-1/update/executor'));
    await assert.rejects(
      train(withSpecChanges(pooled, { algorithm: { ...pooled.algorithm, steps: 1 } }), poisoned),
      (err: Error) =>
        err.name === 'ConfigError' && // user-facing: the CLI prints it without a stack
        /RL update of policy 'executor' in update pool 'up-b' failed after 3 attempts: boom\n.*--resume/.test(
          err.message,
        ),
    );
  });

  it('update pools of LoRA adapters (L2, KL on): the same trace, adapters and optimizer state as in-process; a version holds the adapter only; the base loads once', async () => {
    const spec = await microTeamSpec({
      mapping: 'lora',
      algorithm: { batchSize: 2, concurrency: 2, steps: 2, loss: { klCoef: 0.5 } },
    });
    const train = async (s: typeof spec, queue?: ReversedQueue): Promise<string> => {
      const out = tmp();
      const t = await Trainer.create(s, {
        outDir: out,
        skipFinalEval: true,
        ...(queue ? { execution: { redis: 'redis://x:1' }, queue } : {}),
      });
      try {
        await t.run();
      } finally {
        await t.dispose();
      }
      return out;
    };
    const reference = await train(spec);
    const pooled = withSpecChanges(spec, { execution: { updatePools: { proposer: 'up-a', executor: 'up-b' } } });
    const queue = new ReversedQueue();
    const folders: string[][] = [];
    let again = false;
    queue.afterUpdate = async (p) => {
      assert.equal(p.team?.spec.name, spec.name, 'a LoRA job names its team');
      assert.equal(p.reference, undefined, "a LoRA policy's KL reference is its base: no reference folder");
      folders.push(readdirSync(p.out).sort());
      if (p.step !== 2 || p.policy !== 'proposer') return;
      // another worker (nothing kept) composes the team, loads the starting adapter and writes the same bytes; jobs of
      // other runs get teams of their own, and a team no kept policy uses is freed
      const fresh = new UpdatePlayer({ keep: 1 });
      try {
        for (const run of ['', '-b', '-c']) {
          await fresh.run({ ...p, runId: `${p.runId}${run}`, out: `${p.out}-again${run}` });
          for (const f of ['adapter_model.safetensors', 'optimizer.safetensors', 'stats.json'])
            assert.ok(
              readFileSync(join(p.out, f)).equals(readFileSync(join(`${p.out}-again${run}`, f))),
              `${f}: same bytes`,
            );
        }
        assert.deepEqual([fresh.updates, fresh.loads, fresh.teamsComposed, fresh.teamsHeld], [3, 3, 3, 2]);
      } finally {
        await fresh.dispose();
      }
      again = true;
    };
    const out = await train(pooled, queue);
    assert.ok(again);
    const version = ['adapter_config.json', 'adapter_model.safetensors', 'optimizer.safetensors', 'stats.json'];
    assert.deepEqual(folders, [version, version, version, version], 'a version folder holds the adapter only');
    assert.equal(readFileSync(join(out, 'trace.jsonl'), 'utf8'), readFileSync(join(reference, 'trace.jsonl'), 'utf8'));
    const bytes = (run: string, file: string): Buffer => readFileSync(join(run, 'checkpoints', 'step-2', file));
    for (const file of [
      'proposer/adapter_model.safetensors',
      'executor/adapter_model.safetensors',
      'trainer/proposer.optimizer.safetensors',
      'trainer/executor.optimizer.safetensors',
    ])
      assert.ok(bytes(out, file).equals(bytes(reference, file)), `${file} equals the in-process run's`);
    // one team composed (one base) for both adapters; each starting adapter loaded once, then held between steps
    assert.deepEqual([queue.updater.updates, queue.updater.loads, queue.updater.teamsComposed], [4, 2, 1]);
    const metrics = readFileSync(join(out, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>)
      .filter((m) => (m.kind as unknown) === 'train');
    assert.deepEqual(
      metrics.map((m) => [m['update/remote'], m['update/workers'], m['loss/proposer/version']]),
      [
        [2, 0, 1],
        [2, 0, 2],
      ],
    );
    for (const p of ['proposer', 'executor'])
      assert.ok(metrics[1]![`loss/${p}/kl`]! > 0, `${p}: the adapter moved away from the base`);
  });

  it('update jobs waiting in a pool no live worker takes: the notice names the pool and the command to start one', async () => {
    const spec = await microTeamSpec({ mapping: 'per-role' });
    const told: string[] = [];
    const queue: RolloutQueue = {
      // the jobs end after a while; meanwhile only a default-pool worker is alive
      async *dispatch(_batch, jobs) {
        await new Promise((r) => setTimeout(r, 150));
        for (const j of jobs) yield { key: j.key, ok: false, error: 'late', attempts: 1 };
      },
      stats: () =>
        Promise.resolve({
          depth: { waiting: 1, active: 0, delayed: 0 },
          jobs: { dispatched: 1, succeeded: 0, failed: 0, retries: 0, stalls: 0, requeued: 0 },
          workers: [{ name: 'w', pool: 'default', episodesPerSec: 0, busyFraction: 0, completed: 0 }],
        }),
      close: () => Promise.resolve(),
    };
    const engine = new DistributedRollouts(queue, spec, resolveTrainerConfig(spec, {}), [], {
      attempts: 1,
      pools: {},
      versionsDir: tmp(),
      watchMs: 20,
      onNoWorkers: (m) => told.push(m),
    });
    const payload = {} as UpdateJobPayload; // never run: the queue only waits
    const got = await engine.runUpdates(1, [
      { key: 'r/step-1/update/proposer', payload, pool: 'up-a' },
      { key: 'r/step-1/update/executor', payload },
    ]);
    assert.equal(got.size, 2);
    assert.ok(told.length > 0, 'told while the jobs waited');
    assert.ok(
      told.every((m) => m.startsWith('the updates of step 1: 1 job waiting')),
      told.join('\n'),
    );
    assert.ok(
      told.some((m) =>
        m.endsWith("no live worker takes pool 'up-a'; start one: troupe worker --redis URL --pool up-a"),
      ),
    );
    assert.ok(!told.some((m) => m.includes("pool 'default'")), 'the default pool has a live worker');
  });

  it('execution: bullmq needs a Redis URL, pools name policies, --redis and --shared override the spec', async () => {
    const spec = await microTeamSpec({ mapping: 'per-role' });
    assert.equal(resolveExecution(spec).engine, 'in-process');
    assert.equal(resolveExecution(spec).batching, 'instance');
    assert.equal(resolveExecution(withSpecChanges(spec, { execution: { batching: 'step' } })).batching, 'step');
    const e = resolveExecution(spec, { redis: 'redis://h:1', shared: 'shared-dir' });
    assert.deepEqual([e.engine, e.redis, e.batching, e.attempts], ['bullmq', 'redis://h:1', 'instance', 3]);
    assert.equal(e.checkpoints, join(process.cwd(), 'shared-dir'));
    assert.throws(
      () => resolveExecution(withSpecChanges(spec, { execution: { engine: 'bullmq' } })),
      (err: Error) => err instanceof SpecError && /execution\.engine.*needs a Redis URL/s.test(err.message),
    );
    assert.throws(() => resolveExecution(spec, { redis: 'localhost:6379' }), /not a Redis URL/);
    const file = join(tmp(), 'pools.yaml');
    writeFileSync(file, `extends: ${spec.file}\nexecution:\n  pools: { proposer: gpu, planner: cpu }\n`);
    assert.throws(
      () => loadTeamSpec(file),
      (err: Error) =>
        err instanceof SpecError &&
        /pools\.yaml:3:\d+ execution\.pools\.planner: unknown policy "planner"/.test(err.message),
    );
    writeFileSync(file, `extends: ${spec.file}\nexecution:\n  updatePools: { proposer: a, planner: b }\n`);
    assert.throws(
      () => loadTeamSpec(file),
      (err: Error) =>
        err instanceof SpecError &&
        /pools\.yaml:3:\d+ execution\.updatePools\.planner: unknown policy "planner"/.test(err.message),
    );
    const updates = withSpecChanges(spec, { execution: { updatePools: { proposer: 'a' } } });
    assert.throws(
      () => resolveExecution(updates),
      (err: Error) => err instanceof SpecError && /execution\.updatePools.*need the bullmq engine/s.test(err.message),
    );
    assert.deepEqual(resolveExecution(updates, { redis: 'redis://h:1' }).updatePools, { proposer: 'a' });
  });
});
