/**
 * `troupe train --resume` replays the uninterrupted run: 3 steps, then a resume to 6, against 6 straight steps, with
 * one policy, two (updates in the main thread and in worker threads) and two LoRA adapters; the first part ends by
 * `--steps 3` or dies right after step 3's checkpoint (its observer throws, which leaves the folder a kill -9 would).
 * The settings make every piece of update state matter: several shuffled mini-batches per update and two epochs (the
 * trainer's RNG), lr warm-up or a cosine decay (the schedule's position), a KL penalty (the frozen reference), replay
 * (the instance queue), AdamW (moments and step counts). The runs share one process, as the CLI's do not; the CLI's
 * 3 + 3 against 6 steps, and a kill -9, were measured identical too (docs/training.md, "Crash safety and --resume").
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { type TeamSpec, createRng } from '@troupe/kernel';
import { RunFolderError, Trainer, type MetricsRecord, type TrainerEvent } from '../src/index.js';
import { microTeamSpec, type MicroTeamOptions } from './trainer-helpers.js';

const readJsonl = (file: string): MetricsRecord[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as MetricsRecord);
/** Metrics without the wall-clock fields (time/*, perf/*). */
const stable = (m: MetricsRecord): Record<string, unknown> =>
  Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('time/') && !k.startsWith('perf/')));

/** Every file under `dir`, by path relative to it, with its bytes. */
function filesOf(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else out.set(relative(dir, join(d, e.name)), readFileSync(join(d, e.name)));
    }
  };
  walk(dir);
  return out;
}

/** How the first part of a run ends: `--steps 3`, or a crash (a kill) right after step 3's checkpoint. */
type Stop = 'steps' | 'crash';

/**
 * Runs (`steps`) or resumes (`resume`) the spec in `out` without a final evaluation; `crashAfter`: the process "dies"
 * once that step's checkpoint is written. Returns the warnings the run started with.
 */
async function train(
  spec: TeamSpec,
  out: string,
  options: { steps?: number; resume?: boolean; crashAfter?: number } = {},
): Promise<readonly string[]> {
  const { crashAfter, ...rest } = options;
  let warnings: readonly string[] = [];
  const onEvent = (e: TrainerEvent): void => {
    if (e.type === 'start') warnings = e.warnings ?? [];
    if (e.type === 'checkpoint' && e.step === crashAfter) throw new Error(`killed after step ${e.step}`);
  };
  const trainer = await Trainer.create(spec, { outDir: out, skipFinalEval: true, onEvent, ...rest });
  try {
    await (crashAfter !== undefined ? assert.rejects(trainer.run(), /killed/) : trainer.run());
  } finally {
    await trainer.dispose();
  }
  return warnings;
}

/** Settings under which every piece of the update's state changes what the next step does. */
const ALGORITHM = {
  steps: 6,
  batchSize: 2,
  branches: 2,
  miniBatchSize: 2,
  epochs: 2,
  lr: 1e-2,
  keepCheckpoints: 1,
  lrSchedule: { kind: 'constant', warmupSteps: 5 },
  loss: { klCoef: 0.05 },
  replay: { fraction: 0.5 },
};
/** A decaying schedule: its rate at a step depends on the run's steps, so a run stopped by `--steps 3` trained on another. */
const COSINE = { kind: 'cosine', warmupSteps: 1, minLr: 1e-3 };

const CASES: {
  name: string;
  mapping: MicroTeamOptions['mapping'];
  workers: number;
  threads: number;
  stop: Stop;
  lrSchedule?: object;
}[] = [
  { name: 'one policy (L1: both seats share it)', mapping: 'shared', workers: 2, threads: 0, stop: 'steps' },
  {
    name: 'two policies, updated in the main thread (workers: 1)',
    mapping: 'per-role',
    workers: 1,
    threads: 0,
    stop: 'steps',
  },
  {
    name: 'two policies, updated in two worker threads (workers: 2), a cosine schedule',
    mapping: 'per-role',
    workers: 2,
    threads: 2,
    stop: 'crash',
    lrSchedule: COSINE,
  },
  {
    name: 'two LoRA adapters on frozen bases (L2; the second updates in a worker thread), a cosine schedule',
    mapping: 'lora',
    workers: 2,
    threads: 1,
    stop: 'crash',
    lrSchedule: COSINE,
  },
];

describe('trainer: --resume replays the uninterrupted run', function () {
  this.timeout(120_000);

  it('an RNG rebuilt from its state continues the stream where it stood; a malformed state is refused', () => {
    const rng = createRng(42);
    for (let i = 0; i < 5; i++) rng.next();
    const copy = createRng(rng.state());
    assert.deepEqual(
      Array.from({ length: 8 }, () => copy.int(1000)),
      Array.from({ length: 8 }, () => rng.int(1000)),
    );
    assert.deepEqual(copy.state(), rng.state());
    for (const bad of [
      [1, 2, 3],
      [1, 2, 3, -1],
      [1, 2, 3, 2 ** 32],
      [1, 2, 3, 0.5],
    ])
      assert.throws(() => createRng(bad), /four unsigned 32-bit integers/);
  });

  for (const c of CASES) {
    const first = c.stop === 'steps' ? '3 steps (--steps 3)' : 'a 6-step run killed after step 3';
    it(`${c.name}: ${first} + resume to 6 give the losses, rollouts, trace and final checkpoint of 6 straight steps`, async () => {
      const algorithm = { ...ALGORITHM, workers: c.workers, ...(c.lrSchedule ? { lrSchedule: c.lrSchedule } : {}) };
      const spec = await microTeamSpec({ mapping: c.mapping, maxTokens: 8, algorithm });
      const full = mkdtempSync(join(tmpdir(), 'troupe-resume-full-'));
      const part = mkdtempSync(join(tmpdir(), 'troupe-resume-part-'));
      await train(spec, full);
      await train(spec, part, c.stop === 'steps' ? { steps: 3 } : { crashAfter: 3 });
      assert.deepEqual(await train(spec, part, { resume: true }), [], 'nothing to warn about');

      const a = readJsonl(join(full, 'metrics.jsonl')).filter((m) => m.kind === 'train');
      const b = readJsonl(join(part, 'metrics.jsonl')).filter((m) => m.kind === 'train');
      assert.deepEqual(
        b.map((m) => m.step),
        [1, 2, 3, 4, 5, 6],
      );
      const policies = c.mapping === 'shared' ? ['shared'] : ['proposer', 'executor'];
      // The mini-batch order must matter for this test to mean anything: at the first resumed step, each epoch of a
      // policy's update takes several mini-batches in a shuffled order.
      const steps4 = policies.map((p) => a[3]![`loss/${p}/optimizer_steps`] as number);
      assert.ok(
        steps4.some((n) => n >= 2 * ALGORITHM.epochs),
        `optimizer steps at step 4: ${steps4.join(', ')}`,
      );
      assert.deepEqual(
        a.map((m) => m['update/workers']),
        Array(6).fill(c.threads),
      );
      // Losses, gradient norms, rewards and counts: equal, number for number, at every step (the resumed steps 4–6
      // included); the trace (every sampled token, reward and advantage) too.
      a.forEach((m, i) => assert.deepEqual(stable(b[i]!), stable(m), `step ${m.step}`));
      assert.equal(readFileSync(join(part, 'trace.jsonl'), 'utf8'), readFileSync(join(full, 'trace.jsonl'), 'utf8'));
      // The final checkpoint, byte for byte: weights, AdamW moments and step counts, RNG and schedule state.
      const last = filesOf(join(full, 'checkpoints', 'step-6'));
      const resumed = filesOf(join(part, 'checkpoints', 'step-6'));
      assert.deepEqual([...resumed.keys()].sort(), [...last.keys()].sort());
      for (const [file, bytes] of last)
        assert.ok(bytes.equals(resumed.get(file)!), `checkpoints/step-6/${file} differs`);
    });
  }

  it('a decaying schedule resumed over another span than its steps so far is warned about', async () => {
    const spec = await microTeamSpec({
      mapping: 'shared',
      maxTokens: 8,
      algorithm: { steps: 2, lrSchedule: { kind: 'linear', minLr: 1e-3 } },
    });
    const out = mkdtempSync(join(tmpdir(), 'troupe-resume-lr-'));
    assert.deepEqual(await train(spec, out, { steps: 1 }), []);
    const [warning, ...more] = await train(spec, out, { resume: true });
    assert.equal(more.length, 0);
    assert.match(
      warning ?? '',
      /algorithm\.lrSchedule \(linear\) now decays over 2 steps, but the 1 step before the resume decayed over 1 step, so the run as a whole follows neither schedule/,
    );
    assert.match(warning!, /resume it with the --steps and --sample-budget it was started with/);
  });

  it('a checkpoint whose RNG state is malformed is refused naming its trainer-state.json', async () => {
    const spec = await microTeamSpec({ mapping: 'shared', algorithm: { steps: 0 } });
    const out = mkdtempSync(join(tmpdir(), 'troupe-resume-bad-'));
    await train(spec, out);
    const file = join(out, 'checkpoints', 'step-0', 'trainer-state.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), rng: [1, 2] }));
    await assert.rejects(
      train(spec, out, { resume: true }),
      (err: unknown) =>
        err instanceof RunFolderError &&
        err.message.includes(file) &&
        /rng/.test(err.message) &&
        /previous one/.test(err.message),
    );
  });
});
