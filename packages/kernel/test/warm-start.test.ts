import assert from 'node:assert/strict';
import { collectDemonstrations, composeTrainableTeam, policyHandles, resolveTrainerConfig, warmStart } from '../src/trainer/index.js';
import { CausalLmPolicy } from '../src/policy/lm/index.js';
import { microTeamSpec } from './trainer-helpers.js';

/** Warm-starts a fresh per-role micro team with `workers` threads; returns the trained weights and the result. */
async function warmStartWith(workers: number, schedule: 'constant' | 'cosine') {
  const spec = await microTeamSpec({ mapping: 'per-role', algorithm: { warmStart: { demonstrations: 6, epochs: 2, lr: 1e-2, miniBatchSize: 2, schedule, warmupSteps: 2, workers } } });
  const config = resolveTrainerConfig(spec);
  const team = await composeTrainableTeam(spec);
  try {
    const handles = policyHandles(spec, team.policies, team.seats.map((s) => s.name), config);
    const before = new Map(handles.map((h) => [h.name, h.trainable!.model.exportTensors()]));
    const demos = await collectDemonstrations(team.environment, team.seats, { count: 6, seed: 3 });
    const epochs: string[] = [];
    const result = await warmStart(handles, demos, config.warmStart!, { seed: spec.seed, maxGradNorm: 1, onProgress: (p, e) => epochs.push(`${p}:${e}`) });
    const after = new Map(handles.map((h) => [h.name, h.trainable!.model.exportTensors()]));
    const versions = Object.fromEntries(handles.map((h) => [h.name, (h.policy as CausalLmPolicy).version]));
    return { before, after, result, epochs: epochs.sort(), versions };
  } finally {
    await team.dispose?.();
  }
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe('warm start in worker threads', function () {
  this.timeout(240_000);

  it('two policies trained in two worker threads end with the weights and losses of training them in turn', async () => {
    const seq = await warmStartWith(1, 'cosine');
    const par = await warmStartWith(2, 'cosine');
    assert.equal(seq.result.workers, 0, 'workers: 1 trains in the main thread');
    assert.equal(par.result.workers, 2, 'workers: 2 trains the two policies in two threads');
    assert.deepEqual(Object.keys(par.result.samples).sort(), ['executor', 'proposer']);
    assert.deepEqual(par.result.optimizerSteps, seq.result.optimizerSteps);
    assert.deepEqual(par.epochs, seq.epochs, 'every epoch of every policy is reported');
    assert.deepEqual(par.versions, seq.versions);
    for (const name of ['proposer', 'executor']) {
      assert.ok(Math.abs(par.result.lastEpochLoss[name]! - seq.result.lastEpochLoss[name]!) <= 1e-5, `${name} last-epoch loss`);
      let moved = 0;
      for (const [tensor, t] of par.after.get(name)!) {
        const s = seq.after.get(name)!.get(tensor)!;
        assert.deepEqual(t.shape, s.shape);
        assert.ok(maxAbsDiff(t.data, s.data) <= 1e-5, `${name} ${tensor} differs between threaded and in-thread training`);
        moved = Math.max(moved, maxAbsDiff(t.data, par.before.get(name)!.get(tensor)!.data));
      }
      assert.ok(moved > 1e-3, `${name}: the worker's training reached the policy's own variables`);
    }
  });
});
