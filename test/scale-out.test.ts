/**
 * The distributed engine end to end: `troupe train --redis` with `troupe worker` child processes on a real
 * redis-server (Debian's, started here on a free port). The in-process run of the same spec (lockstep batching per
 * instance, the default `execution.batching`) is the reference: distributed traces must equal it byte for byte (trace
 * records hold no timing fields), with one worker, two, a worker SIGKILLed mid-step and Redis killed and restarted
 * mid-step. A poisoned job fails after its attempts, its instance is dropped from the step, logged, and the run ends.
 * With update pools (execution.updatePools), each policy's RL update runs on a worker of its own pool, and the trace
 * and the final weights equal the in-process run's byte for byte, also when the worker running an update is SIGKILLed
 * mid-update (the pool's other worker runs it after the stall timeout).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisServer } from '@troupe/scale-out';
import { ROOT, troupe, type CliResult } from '../packages/cli/test/helpers/cli.js';

const spec = join(ROOT, 'test', 'fixtures', 'scale-out.yaml');
const poisonSpec = join(ROOT, 'test', 'fixtures', 'scale-out-poison.yaml');
const updatesSpec = join(ROOT, 'test', 'fixtures', 'scale-out-updates.yaml');

/** A `troupe worker` child process: its stderr so far, its exit. */
interface WorkerChild {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<CliResult>;
}

function readJsonl(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function waitFor(what: string, cond: () => boolean, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('distributed rollouts: troupe train --redis with troupe worker processes', function () {
  this.timeout(600_000);
  let redis: RedisServer | undefined;
  let dir: string;
  let reference: string;
  const workers: WorkerChild[] = [];

  async function startWorker(extra: string[] = []): Promise<WorkerChild> {
    let child: ChildProcess | undefined;
    let err = '';
    const exited = troupe(['worker', '--redis', redis!.url, ...extra], {
      onSpawn: (c) => {
        child = c;
        c.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      },
    });
    const w: WorkerChild = { child: child!, stderr: () => err, exited };
    void exited.then((r) => {
      // a worker that ends by itself is a finding: show why
      if (r.code !== 0 && child!.signalCode === null) console.log(`      a worker exited (${r.code}): ${r.stderr}`);
    });
    workers.push(w);
    await waitFor('the worker to wait for jobs', () => err.includes('waiting for jobs'));
    return w;
  }

  function train(out: string, args: string[] = [], file = spec): Promise<CliResult> {
    return troupe(['train', file, '--out', out, '--no-final-eval', '--no-progress', ...args]);
  }

  before(async function () {
    try {
      redis = await RedisServer.start();
    } catch (err) {
      // an optional system component: say why nothing ran
      console.log(`    redis-server is not usable here, so these tests did not run: ${(err as Error).message}`);
      this.skip();
    }
    dir = mkdtempSync(join(tmpdir(), 'troupe-scale-out-'));
    const r = await train(join(dir, 'in-process'));
    assert.equal(r.code, 0, r.stderr);
    reference = readFileSync(join(dir, 'in-process', 'trace.jsonl'), 'utf8');
  });

  after(async () => {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('one worker: the trace equals the in-process trace byte for byte; troupe eval --redis gives the in-process result; the worker stops cleanly on SIGTERM', async () => {
    const w = await startWorker();
    const out = join(dir, 'one');
    const r = await train(out, ['--redis', redis!.url]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(join(out, 'trace.jsonl'), 'utf8'), reference);
    const metrics = readJsonl(join(out, 'metrics.jsonl')).filter((m) => m.kind === 'train');
    assert.deepEqual(
      metrics.map((m) => [m['scale/jobs'], m['scale/failed_jobs'], m['rollout/failed_instances']]),
      [
        [4, 0, 0],
        [4, 0, 0],
      ],
    );
    assert.ok(existsSync(join(out, 'policies', 'step-1', 'proposer', 'model.safetensors')), 'the published version');
    assert.ok(
      metrics.every((m) => Object.keys(m).some((k) => k.startsWith('scale/episodes_per_s/'))),
      "each worker's episodes/s",
    );
    // troupe eval of the trained checkpoint: the same result on the worker (which loads it from the run folder)
    const evaluate = async (extra: string[]): Promise<Record<string, unknown>> => {
      const e = await troupe(['eval', spec, '--checkpoint', out, '--episodes', '3', '--json', ...extra]);
      assert.equal(e.code, 0, e.stderr);
      const { seconds: _s, ...rest } = JSON.parse(e.stdout) as Record<string, unknown>;
      return rest;
    };
    assert.deepEqual(await evaluate(['--redis', redis!.url]), await evaluate([]));
    w.child.kill('SIGTERM');
    const end = await w.exited;
    assert.equal(end.code, 0, end.stderr);
    assert.match(end.stderr, /stopped after 11 jobs \(0 failed\)/);
  });

  it('two workers: the same trace; both play', async () => {
    const two = [await startWorker(), await startWorker()];
    const out = join(dir, 'two');
    const r = await train(out, ['--redis', redis!.url]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(join(out, 'trace.jsonl'), 'utf8'), reference);
    for (const w of two) assert.match(w.stderr(), /: playing /, 'each worker played jobs');
  });

  it('a worker SIGKILLed mid-step: its job goes to the other worker; every (instance, turn, seat, branch) exactly once', async () => {
    for (const w of workers.splice(0)) {
      w.child.kill('SIGTERM');
      await w.exited;
    }
    const survivor = await startWorker(['--stall-ms', '1500']);
    const victim = await startWorker(['--stall-ms', '1500']);
    const out = join(dir, 'killed');
    const run = train(out, ['--redis', redis!.url]);
    await waitFor('the victim to take a job', () => victim.stderr().includes(': playing '));
    victim.child.kill('SIGKILL');
    const r = await run;
    assert.equal(r.code, 0, r.stderr);
    const trace = readFileSync(join(out, 'trace.jsonl'), 'utf8');
    const keys = readJsonl(join(out, 'trace.jsonl')).map((t) =>
      JSON.stringify([t.step, t.instanceUid, t.turn, t.seat, t.branch]),
    );
    assert.equal(new Set(keys).size, keys.length, 'no (instance, turn, seat, branch) twice');
    assert.equal(trace, reference);
    const metrics = readJsonl(join(out, 'metrics.jsonl')).filter((m) => m.kind === 'train');
    assert.ok(
      metrics.reduce((n, m) => n + (m['scale/retries'] as number), 0) >= 1,
      `the killed worker's job was tried again (${JSON.stringify(metrics.map((m) => m['scale/retries']))})`,
    );
    assert.ok(survivor.stderr().includes('(attempt 2)'), survivor.stderr());
  });

  it('Redis killed and restarted mid-step: the run completes, or stops with a clear error and --resume ends at the same trace', async () => {
    const w = workers[0]!;
    const out = join(dir, 'restarted');
    const before = w.stderr().length;
    const run = train(out, ['--redis', redis!.url]);
    await waitFor('a job of the run', () => w.stderr().slice(before).includes(': playing '));
    await redis!.restart({ kill: true, downMs: 1000 });
    let r = await run;
    const stopped = r.code !== 0;
    if (stopped) {
      assert.match(r.stderr, /--resume/, r.stderr);
      r = await train(out, ['--redis', redis!.url, '--resume']);
    }
    console.log(`      (the run ${stopped ? 'stopped, and --resume continued it' : 'completed by itself'})`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(join(out, 'trace.jsonl'), 'utf8'), reference);
  });

  it('Redis down past execution.redisTimeoutMs: the run stops with a clear error; --resume ends at the same trace', async () => {
    const w = workers[0]!;
    const out = join(dir, 'lost');
    const before = w.stderr().length;
    const run = train(out, ['--redis', redis!.url], join(ROOT, 'test', 'fixtures', 'scale-out-redis-timeout.yaml'));
    await waitFor('a job of step 2', () => w.stderr().slice(before).includes('/step-2/'));
    const back = redis!.restart({ kill: true, downMs: 6000 });
    const r = await run;
    await back;
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /the run stopped in step 2: .*Redis.*checkpoint is step 1 .*--resume/s);
    assert.doesNotMatch(r.stderr, /internal error|\n\s+at /);
    const resumed = await train(out, ['--redis', redis!.url, '--resume']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(readFileSync(join(out, 'trace.jsonl'), 'utf8'), reference);
  });

  it('a poisoned job fails after its attempts: the instance is dropped from the step and logged with the error; the run completes', async () => {
    const out = join(dir, 'poison');
    const r = await train(out, ['--redis', redis!.url], poisonSpec);
    assert.equal(r.code, 0, r.stderr);
    const failures = readJsonl(join(out, 'failures.jsonl'));
    assert.equal(failures.length, 1, JSON.stringify(failures));
    assert.equal(failures[0]!.step, 2);
    assert.equal(failures[0]!.index, 5);
    assert.equal(failures[0]!.attempts, 2, 'execution.attempts');
    assert.match(failures[0]!.error as string, /poisoned train instance 5/);
    const metrics = readJsonl(join(out, 'metrics.jsonl')).filter((m) => m.kind === 'train');
    assert.deepEqual(
      metrics.map((m) => m['rollout/failed_instances']),
      [0, 1],
    );
    const uids = new Set(
      readJsonl(join(out, 'trace.jsonl')).map((t) => (t.instanceUid as string).split('/').slice(0, 3).join('/')),
    );
    assert.deepEqual([...uids].sort(), [
      'step-1/train/0',
      'step-1/train/1',
      'step-1/train/2',
      'step-1/train/3',
      'step-2/train/4',
      'step-2/train/6',
      'step-2/train/7',
    ]);
  });

  it("update pools: each policy's update on a worker of its own pool, one SIGKILLed mid-update and retried on the pool's other worker; the trace and the final weights equal the in-process run's", async () => {
    const live = workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
    // two workers in pool update-a: the one that takes step 1's proposer update is killed while it runs it
    const stall = ['--stall-ms', '1500'];
    const [, a1, a2, b] = await Promise.all([
      live.length === 0 ? startWorker() : undefined, // the rollouts
      startWorker(['--pool', 'update-a', ...stall]),
      startWorker(['--pool', 'update-a', ...stall]),
      startWorker(['--pool', 'update-b']),
    ]);
    const out = join(dir, 'update-pools');
    const training = train(out, ['--redis', redis!.url], updatesSpec);
    const taken = /playing \S+\/step-1\/update\/proposer/;
    await waitFor('a worker of update-a to take the proposer update', () =>
      [a1!, a2!].some((w) => taken.test(w.stderr())),
    );
    const [victim, survivor] = taken.test(a1!.stderr()) ? [a1!, a2!] : [a2!, a1!];
    victim.child.kill('SIGKILL');
    const r = await training;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(join(out, 'trace.jsonl'), 'utf8'), reference);
    for (const policy of ['proposer', 'executor']) {
      const weights = (run: string): Buffer =>
        readFileSync(join(run, 'checkpoints', 'step-2', policy, 'model.safetensors'));
      assert.ok(weights(out).equals(weights(join(dir, 'in-process'))), `${policy}: the in-process run's weights`);
    }
    assert.ok(
      survivor.stderr().includes('step-1/update/proposer (attempt 2)'),
      `the killed worker's update went to the pool's other worker after the stall timeout:\n${survivor.stderr()}`,
    );
    assert.match(survivor.stderr(), /playing \S+\/step-2\/update\/proposer/);
    assert.doesNotMatch(survivor.stderr(), /\/update\/executor|\/train\//);
    assert.match(b!.stderr(), /playing \S+\/step-2\/update\/executor/);
    const metrics = readJsonl(join(out, 'metrics.jsonl')).filter((m) => m.kind === 'train');
    assert.deepEqual(
      metrics.map((m) => m['update/remote']),
      [2, 2],
    );
  });

  it('troupe run --redis plays the episodes on the workers: the in-process report and trace records', async () => {
    if (!workers.some((w) => w.child.exitCode === null && w.child.signalCode === null)) await startWorker();
    const run = async (extra: string[]): Promise<{ report: Record<string, unknown>; trace: string[] }> => {
      const trace = join(dir, `run${extra.length}.jsonl`);
      const r = await troupe(['run', spec, '-n', '3', '--json', '--no-progress', '--trace', trace, ...extra]);
      assert.equal(r.code, 0, r.stderr);
      const {
        seconds: _s,
        trace: _t,
        failed_episodes: failed = 0,
        ...report
      } = JSON.parse(r.stdout) as Record<string, unknown>;
      assert.equal(failed, 0);
      // in-process episodes end in any order; workers' come back in episode order
      return { report, trace: readFileSync(trace, 'utf8').trim().split('\n').sort() };
    };
    const local = await run([]);
    const remote = await run(['--redis', redis!.url]);
    assert.deepEqual(remote.report, local.report);
    assert.equal(remote.report.episodes, 3);
    assert.deepEqual(remote.trace, local.trace);
  });
});
