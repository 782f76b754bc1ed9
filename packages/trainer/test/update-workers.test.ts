import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCheckpoint, initBackend, AdamW, CausalLmPolicy, type HostTensor } from '@troupe/lm';
import type { TraceRecord } from '@troupe/kernel';
import { Trainer, type MetricsRecord, type PolicyHandle } from '../src/index.js';
import { UpdateWorker } from '../src/update-thread.js';
import { microCheckpoint, microTeamSpec } from './trainer-helpers.js';

const readJsonl = <T>(file: string): T[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
const outDir = (): string => mkdtempSync(join(tmpdir(), 'troupe-update-workers-'));
/** Metrics without the wall-clock fields and the thread count (the only things the worker count may change). */
const stable = (m: MetricsRecord): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(m).filter(([k]) => !k.startsWith('time/') && !k.startsWith('perf/') && k !== 'update/workers'),
  );

/** What a finished run leaves: its logs, each policy's weights, optimizer moments and step count. */
interface RunResult {
  readonly metrics: MetricsRecord[];
  readonly trace: TraceRecord[];
  readonly weights: Map<string, Map<string, HostTensor>>;
  readonly moments: Map<string, { m: Float32Array[]; v: Float32Array[]; steps: number }>;
}

/** Runs (or resumes) a per-role micro team in `out`; returns what it left, then disposes the trainer. */
async function train(
  algorithm: Record<string, unknown>,
  options: { out?: string; steps?: number; resume?: boolean; mapping?: 'per-role' | 'lora' } = {},
): Promise<RunResult & { out: string }> {
  const spec = await microTeamSpec({ mapping: options.mapping ?? 'per-role', algorithm });
  const out = options.out ?? outDir();
  const trainer = await Trainer.create(spec, {
    outDir: out,
    skipFinalEval: true,
    ...(options.steps !== undefined ? { steps: options.steps } : {}),
    ...(options.resume ? { resume: true } : {}),
  });
  try {
    await trainer.run();
    const trainable = trainer.handles.filter((h): h is PolicyHandle & { trainable: CausalLmPolicy } => !!h.trainable);
    const copy = (x: { dataSync(): unknown }): Float32Array => new Float32Array(x.dataSync() as Float32Array);
    return {
      out,
      metrics: readJsonl<MetricsRecord>(join(out, 'metrics.jsonl')),
      trace: readJsonl<TraceRecord>(join(out, 'trace.jsonl')),
      // the base weights and, of a LoRA policy, its adapters
      weights: new Map(
        trainable.map((h) => {
          const m = h.trainable.model;
          const all = m.exportTensors();
          for (const [mod, { a, b }] of m.lora) {
            all.set(`${mod}.lora_a`, { shape: [...a.shape], data: copy(a) });
            all.set(`${mod}.lora_b`, { shape: [...b.shape], data: copy(b) });
          }
          return [h.name, all];
        }),
      ),
      moments: new Map(
        trainable.map((h) => {
          const { m, v } = h.optimizer!.moments();
          return [h.name, { m: m.map(copy), v: v.map(copy), steps: h.optimizer!.stepCount }];
        }),
      ),
    };
  } finally {
    await trainer.dispose();
  }
}

function maxRelDiff(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!) / Math.max(1, Math.abs(a[i]!)));
  return m;
}

/**
 * Asserts two runs are the same run: identical rollout numbers, counts and trace; loss values, weights and AdamW
 * moments equal to 1e-5 (relative, floored at 1); identical optimizer step counts.
 */
function assertSameRun(a: RunResult, b: RunResult, what: string): void {
  const ma = a.metrics.map(stable),
    mb = b.metrics.map(stable);
  assert.deepEqual(
    mb.map((m) => m.step),
    ma.map((m) => m.step),
    `${what}: steps`,
  );
  for (let i = 0; i < ma.length; i++) {
    assert.deepEqual(
      Object.keys(mb[i]!).sort(),
      Object.keys(ma[i]!).sort(),
      `${what}: metric keys of step ${ma[i]!.step}`,
    );
    for (const [k, v] of Object.entries(ma[i]!)) {
      const w = mb[i]![k];
      if (typeof v === 'number' && (k.startsWith('loss/') || k.startsWith('warmstart/'))) {
        assert.ok(
          Math.abs(v - (w as number)) <= 1e-5 * Math.max(1, Math.abs(v)),
          `${what}: step ${ma[i]!.step} ${k}: ${v} vs ${w}`,
        );
      } else {
        assert.deepEqual(w, v, `${what}: step ${ma[i]!.step} ${k}`);
      }
    }
  }
  assert.deepEqual(b.trace, a.trace, `${what}: trace`);
  for (const [policy, tensors] of a.weights) {
    for (const [name, t] of tensors) {
      const u = b.weights.get(policy)!.get(name)!;
      assert.deepEqual(u.shape, t.shape);
      assert.ok(maxRelDiff(t.data, u.data) <= 1e-5, `${what}: ${policy} ${name} differs`);
    }
    const x = a.moments.get(policy)!,
      y = b.moments.get(policy)!;
    assert.equal(y.steps, x.steps, `${what}: ${policy} optimizer steps`);
    assert.ok(x.steps > 0, `${what}: ${policy} took optimizer steps`);
    x.m.forEach((d, i) => assert.ok(maxRelDiff(d, y.m[i]!) <= 1e-5, `${what}: ${policy} first moment ${i} differs`));
    x.v.forEach((d, i) => assert.ok(maxRelDiff(d, y.v[i]!) <= 1e-5, `${what}: ${policy} second moment ${i} differs`));
  }
}

const trainSteps = (ms: readonly MetricsRecord[]): MetricsRecord[] => ms.filter((m) => m.kind === 'train');

describe('RL updates in persistent worker threads', function () {
  this.timeout(300_000);

  it('two full-model policies updated in two workers give the metrics, trace, weights and optimizer moments of updating them in turn', async () => {
    const inThread = await train({ steps: 3, workers: 1 });
    const threaded = await train({ steps: 3, workers: 2 });
    assert.deepEqual(
      trainSteps(inThread.metrics).map((m) => m['update/workers']),
      [0, 0, 0],
    );
    assert.deepEqual(
      trainSteps(threaded.metrics).map((m) => m['update/workers']),
      [2, 2, 2],
      'both policies update in their workers every step',
    );
    assert.deepEqual(
      trainSteps(threaded.metrics).map((m) => m['loss/executor/version']),
      [1, 2, 3],
    );
    assertSameRun(inThread, threaded, 'workers 2 vs 1');
  });

  it('two LoRA adapters on one base: one updates in a worker (its own copy of the base), the other in the main thread, as in turn (KL to the base)', async () => {
    const algorithm = { steps: 2, loss: { klCoef: 0.5 } };
    const inTurn = await train({ ...algorithm, workers: 1 }, { mapping: 'lora' });
    const threaded = await train({ ...algorithm, workers: 2 }, { mapping: 'lora' });
    assert.deepEqual(
      trainSteps(threaded.metrics).map((m) => m['update/workers']),
      [1, 1],
      'the second adapter updates in a worker every step',
    );
    const last = trainSteps(threaded.metrics).at(-1)!;
    for (const p of ['proposer', 'executor'])
      assert.ok((last[`loss/${p}/kl`] as number) > 0, `${p}: the adapter moved away from the base`);
    assertSameRun(inTurn, threaded, 'LoRA, workers 2 vs 1');
  });

  it('with a KL penalty (the frozen reference lives in the worker), an entropy bonus and two epochs', async () => {
    const algorithm = { steps: 3, epochs: 2, loss: { klCoef: 0.5, entropyCoef: 0.01 } };
    const inThread = await train({ ...algorithm, workers: 1 });
    const threaded = await train({ ...algorithm, workers: 2 });
    const last = trainSteps(threaded.metrics).at(-1)!;
    assert.equal(last['update/workers'], 2);
    for (const p of ['proposer', 'executor']) {
      assert.ok(
        (last[`loss/${p}/kl`] as number) > 0,
        `${p}: the policy moved away from its reference and the KL says so`,
      );
      assert.equal(typeof last[`loss/${p}/entropy`], 'number');
    }
    assertSameRun(inThread, threaded, 'KL, workers 2 vs 1');
  });

  it('a stopped and resumed threaded run equals an uninterrupted one: the checkpointed moments reach the new workers', async () => {
    const algorithm = { steps: 4, workers: 2, warmStart: { demonstrations: 3, epochs: 1, lr: 1e-2, miniBatchSize: 4 } };
    const full = await train(algorithm);
    const part = await train(algorithm, { steps: 2 });
    const resumed = await train(algorithm, { out: part.out, steps: 4, resume: true });
    assert.deepEqual(
      resumed.metrics.map((m) => m.step),
      [0, 1, 2, 3, 4],
    );
    assert.deepEqual(
      trainSteps(resumed.metrics).map((m) => m['update/workers']),
      [2, 2, 2, 2],
    );
    assertSameRun(full, resumed, 'resumed vs uninterrupted');
  });

  it('a worker that dies fails the next step with an error naming its policy, and the trainer still disposes', async () => {
    const spec = await microTeamSpec({ mapping: 'per-role', algorithm: { steps: 2, workers: 2 } });
    const trainer = await Trainer.create(spec, { outDir: outDir(), skipFinalEval: true });
    try {
      await trainer.prepare();
      const m1 = await trainer.step(1);
      assert.equal(m1['update/workers'], 2);
      assert.deepEqual(
        [...trainer.updates.updateWorkers.keys()].sort(),
        ['executor', 'proposer'],
        'one persistent worker per policy',
      );
      const executor = trainer.updates.updateWorkers.get('executor')!;
      await executor.thread.terminate(); // killed from outside, as a crash or the OOM killer would
      assert.equal(executor.alive, false);
      await assert.rejects(
        trainer.step(2),
        (err: Error) => /policy 'executor'/.test(err.message) && /exited with code 1/.test(err.message),
      );
      assert.equal(trainer.updates.updateWorkers.size, 0, 'a failed update ends every worker');
    } finally {
      await trainer.dispose();
    }
  });

  it("an update the worker cannot run rejects with the policy name and the worker's message, and ends the worker", async () => {
    await initBackend({ backend: 'wasm' });
    const model = await loadCheckpoint(await microCheckpoint());
    const optimizer = new AdamW(model.trainableVariables(), { lr: 1e-2 });
    const worker = UpdateWorker.start(
      'solver',
      model,
      optimizer,
      { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 },
      'wasm',
    );
    try {
      const settings = {
        clipLow: 0.2,
        clipHigh: 0.2,
        aggregation: 'token-mean' as const,
        klCoef: 0,
        entropyCoef: 0,
        maxTokens: 8,
        padId: 0,
        microBatchSize: 8,
      };
      const bad = {
        lr: 1e-2,
        plan: { groups: [{ promptIds: [], completions: [[5, 6]] }], advantages: [1], epochs: [[[0]]] },
        settings,
      };
      await assert.rejects(
        worker.update(bad),
        (err: Error) => /policy 'solver'/.test(err.message) && /empty prompt/.test(err.message),
      );
      assert.equal(worker.alive, false);
      const good = {
        lr: 1e-2,
        plan: { groups: [{ promptIds: [1, 2], completions: [[5, 6]] }], advantages: [1], epochs: [[[0]]] },
        settings,
      };
      await assert.rejects(worker.update(good), /policy 'solver'/, 'a failed worker takes no more updates');
    } finally {
      await worker.terminate();
      optimizer.dispose();
      model.dispose();
    }
  });
});
