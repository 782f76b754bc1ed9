import assert from 'node:assert/strict';
import { composeTeam, createRng, resolveTrainerConfig } from '@troupe/kernel';
import { collectDemonstrations, epochBatches, LENGTH_GROUP_BATCHES, policyHandles, warmStart } from '../src/index.js';
import { CausalLmPolicy } from '@troupe/lm';
import { microTeamSpec } from './trainer-helpers.js';

/** Warm-starts a fresh per-role micro team with `workers` threads; returns the trained weights and the result. */
async function warmStartWith(workers: number, schedule: 'constant' | 'cosine', groupByLength = false) {
  const spec = await microTeamSpec({
    mapping: 'per-role',
    algorithm: {
      warmStart: {
        demonstrations: 6,
        epochs: 2,
        lr: 1e-2,
        miniBatchSize: 2,
        schedule,
        warmupSteps: 2,
        workers,
        groupByLength,
      },
    },
  });
  const config = resolveTrainerConfig(spec);
  const team = await composeTeam(spec);
  try {
    const handles = policyHandles(
      spec,
      team.policies,
      team.seats.map((s) => s.name),
      config,
    );
    const before = new Map(handles.map((h) => [h.name, h.trainable!.model.exportTensors()]));
    const demos = await collectDemonstrations(team.environment, team.seats, { count: 6, seed: 3 });
    const epochs: string[] = [];
    const result = await warmStart(handles, demos, config.warmStart!, {
      seed: spec.seed,
      maxGradNorm: 1,
      onProgress: (p, e) => epochs.push(`${p}:${e}`),
    });
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
      assert.ok(
        Math.abs(par.result.lastEpochLoss[name]! - seq.result.lastEpochLoss[name]!) <= 1e-5,
        `${name} last-epoch loss`,
      );
      let moved = 0;
      for (const [tensor, t] of par.after.get(name)!) {
        const s = seq.after.get(name)!.get(tensor)!;
        assert.deepEqual(t.shape, s.shape);
        assert.ok(
          maxAbsDiff(t.data, s.data) <= 1e-5,
          `${name} ${tensor} differs between threaded and in-thread training`,
        );
        moved = Math.max(moved, maxAbsDiff(t.data, par.before.get(name)!.get(tensor)!.data));
      }
      assert.ok(moved > 1e-3, `${name}: the worker's training reached the policy's own variables`);
    }
  });

  it('maxSamples caps the named seat to its first demonstration samples; an unknown seat is a clear error', async () => {
    const warm = { demonstrations: 6, epochs: 2, lr: 1e-2, miniBatchSize: 2, workers: 1, maxSamples: { proposer: 3 } };
    const spec = await microTeamSpec({ mapping: 'per-role', algorithm: { warmStart: warm } });
    const config = resolveTrainerConfig(spec);
    const team = await composeTeam(spec);
    try {
      const demos = await collectDemonstrations(team.environment, team.seats, { count: 6, seed: 3 });
      const all = (p: string): number => demos.filter((d) => d.policy === p).length;
      assert.ok(all('proposer') > 3);
      const handles = policyHandles(
        spec,
        team.policies,
        team.seats.map((s) => s.name),
        config,
      );
      const result = await warmStart(handles, demos, config.warmStart!, { seed: spec.seed, maxGradNorm: 1 });
      assert.deepEqual(result.samples, { proposer: 3, executor: all('executor') });
      assert.deepEqual(result.optimizerSteps, { proposer: 2 * 2, executor: 2 * Math.ceil(all('executor') / 2) });
    } finally {
      await team.dispose?.();
    }
    // The cap is the seat's, whatever policy plays it: one shared policy gets 3 proposer samples and every executor one.
    const shared = await microTeamSpec({ mapping: 'shared', algorithm: { warmStart: warm } });
    const sharedTeam = await composeTeam(shared);
    try {
      const sharedConfig = resolveTrainerConfig(shared);
      const demos = await collectDemonstrations(sharedTeam.environment, sharedTeam.seats, { count: 6, seed: 3 });
      const handles = policyHandles(
        shared,
        sharedTeam.policies,
        sharedTeam.seats.map((s) => s.name),
        sharedConfig,
      );
      const result = await warmStart(handles, demos, sharedConfig.warmStart!, { seed: shared.seed, maxGradNorm: 1 });
      assert.deepEqual(result.samples, { shared: 3 + demos.filter((d) => d.seat === 'executor').length });
    } finally {
      await sharedTeam.dispose?.();
    }
    const bad = { ...spec, algorithm: { ...spec.algorithm, warmStart: { ...warm, maxSamples: { coder: 3 } } } };
    assert.throws(
      () => resolveTrainerConfig(bad),
      /algorithm\.warmStart\.maxSamples\.coder: no seat 'coder' in 'seats' \(the team's seats: proposer, executor\)/,
    );
    assert.throws(
      () =>
        resolveTrainerConfig({
          ...bad,
          algorithm: { ...spec.algorithm, warmStart: { ...warm, maxSamples: { proposer: 0 } } },
        }),
      /algorithm\.warmStart\.maxSamples\.proposer: must be >= 1/,
    );
    // per-seat branches: known seats only, at least 1, AT-GRPO only
    assert.deepEqual(
      resolveTrainerConfig({ ...spec, algorithm: { ...spec.algorithm, seatBranches: { proposer: 1 } } }).seatBranches,
      { proposer: 1 },
    );
    assert.throws(
      () => resolveTrainerConfig({ ...spec, algorithm: { ...spec.algorithm, seatBranches: { coder: 1 } } }),
      /algorithm\.seatBranches\.coder: no seat 'coder' in 'seats' \(the team's seats: proposer, executor\)/,
    );
    assert.throws(
      () => resolveTrainerConfig({ ...spec, algorithm: { ...spec.algorithm, seatBranches: { proposer: 0 } } }),
      /algorithm\.seatBranches\.proposer: must be >= 1/,
    );
    assert.throws(
      () =>
        resolveTrainerConfig({
          ...spec,
          algorithm: { ...spec.algorithm, name: 'grpo-naive', seatBranches: { proposer: 1 } },
        }),
      /algorithm\.seatBranches: per-seat branches are AT-GRPO's .*'grpo-naive' has none/,
    );
  });

  it('groupByLength reaches the worker threads: threaded and in-thread grouped runs agree, and differ from ungrouped ones', async () => {
    const seq = await warmStartWith(1, 'cosine', true);
    const par = await warmStartWith(2, 'cosine', true);
    const plain = await warmStartWith(1, 'cosine', false);
    assert.equal(par.result.workers, 2);
    assert.deepEqual(par.result.optimizerSteps, plain.result.optimizerSteps, 'the same number of mini-batches');
    let grouping = 0;
    for (const name of ['proposer', 'executor']) {
      for (const [tensor, t] of par.after.get(name)!) {
        assert.ok(
          maxAbsDiff(t.data, seq.after.get(name)!.get(tensor)!.data) <= 1e-5,
          `${name} ${tensor}: threaded and in-thread grouped runs differ`,
        );
        grouping = Math.max(grouping, maxAbsDiff(t.data, plain.after.get(name)!.get(tensor)!.data));
      }
    }
    assert.ok(grouping > 1e-4, 'grouped mini-batches train differently from shuffled ones');
  });

  it('demonstration noise: random actions are played, oracle actions are the targets, so recoveries are demonstrated', async () => {
    const spec = await microTeamSpec({ mapping: 'per-role' });
    const team = await composeTeam(spec);
    try {
      const clean = await collectDemonstrations(team.environment, team.seats, { count: 40, seed: 3 });
      const noisy = await collectDemonstrations(team.environment, team.seats, { count: 40, seed: 3, noise: 0.5 });
      const again = await collectDemonstrations(team.environment, team.seats, { count: 40, seed: 3, noise: 0.5 });
      assert.deepEqual(noisy, again, 'seeded');
      // Oracle play-throughs solve 5x5 Plan-Path in the first turn; with noise some episodes reach a second turn and
      // the executor is shown proposals that miss the goal, with the oracle's answer as its target.
      assert.ok(clean.every((d) => d.turn === 0));
      assert.ok(
        noisy.some((d) => d.turn === 1),
        'a second turn is demonstrated',
      );
      const missed = noisy.filter(
        (d) => d.seat === 'executor' && /does not reach the goal/.test(d.messages.at(-1)!.content),
      );
      assert.ok(missed.length > 0, 'the executor is shown wrong proposals');
      // The targets are the oracle's: the same state gives the same target with or without noise.
      for (const d of noisy.filter((x) => x.turn === 0 && x.seat === 'proposer')) {
        const twin = clean.find((c) => c.index === d.index && c.seat === 'proposer' && c.turn === 0);
        if (twin) assert.equal(d.text, twin.text);
      }
      await assert.rejects(
        Promise.resolve().then(() =>
          resolveTrainerConfig({ file: 'x.yaml', algorithm: { name: 'at-grpo', warmStart: { noise: 1.5 } } } as never),
        ),
        /warmStart\.noise/,
      );
    } finally {
      await team.dispose?.();
    }
  });

  it('demonstration noise per seat: only the named seats play random actions; the others are shown oracle play only', async () => {
    const spec = await microTeamSpec({ mapping: 'per-role' });
    const team = await composeTeam(spec);
    try {
      const scalar = await collectDemonstrations(team.environment, team.seats, { count: 40, seed: 3, noise: 0.5 });
      const asMap = await collectDemonstrations(team.environment, team.seats, {
        count: 40,
        seed: 3,
        noise: { proposer: 0.5, executor: 0.5 },
      });
      assert.deepEqual(asMap, scalar, 'a map with every seat at p is the number p');
      const executorOnly = await collectDemonstrations(team.environment, team.seats, {
        count: 40,
        seed: 3,
        noise: { executor: 0.5 },
      });
      // The executor's random actions leave the walker short of the goal, so later turns are demonstrated to both
      // seats; the proposer always plays the oracle, so every proposal the executor is shown is the oracle's.
      assert.ok(
        executorOnly.some((d) => d.seat === 'proposer' && d.turn >= 1),
        'the proposer is shown later turns',
      );
      const offOracle = (demos: typeof scalar) =>
        demos.filter((d) => {
          if (d.seat !== 'executor') return false;
          const target = demos
            .find((p) => p.seat === 'proposer' && p.index === d.index && p.turn === d.turn)!
            .text.replace('#### ', '');
          return !d.messages.at(-1)!.content.includes(`Proposed moves: ${target}\n`);
        }).length;
      assert.equal(offOracle(executorOnly), 0, "the executor is shown the oracle's proposals only");
      assert.ok(offOracle(scalar) > 0, 'with noise on both seats it is shown others');
      const none = await collectDemonstrations(team.environment, team.seats, { count: 40, seed: 3, noise: {} });
      assert.deepEqual(
        none,
        await collectDemonstrations(team.environment, team.seats, { count: 40, seed: 3 }),
        'an empty map is no noise',
      );
      const config = (noise: unknown) =>
        resolveTrainerConfig({
          file: 'x.yaml',
          seats: { proposer: {}, executor: {} },
          algorithm: { name: 'at-grpo', warmStart: { noise } },
        } as never);
      assert.deepEqual(config({ executor: 0.3 }).warmStart!.noise, { executor: 0.3 });
      assert.throws(() => config({ coder: 0.3 }), /algorithm\.warmStart\.noise\.coder: no seat 'coder'/);
      assert.throws(() => config({ executor: 2 }), /warmStart\.noise/);
    } finally {
      await team.dispose?.();
    }
  });
});

describe('SFT mini-batches (epochBatches)', () => {
  const lengths = Array.from({ length: 1000 }, (_, i) => 100 + ((i * 7919) % 211));
  const padded = (batches: number[][]): number =>
    batches.reduce((a, b) => a + Math.max(...b.map((i) => lengths[i]!)) * b.length, 0);

  it('ungrouped: a seeded shuffle cut into slices, the last one shorter', () => {
    const batches = epochBatches(lengths, 8, createRng(3));
    assert.equal(batches.length, 125);
    assert.deepEqual(batches, epochBatches(lengths, 8, createRng(3)), 'seeded');
    const odd = epochBatches(lengths.slice(0, 21), 4, createRng(1));
    assert.deepEqual(
      odd.map((b) => b.length),
      [4, 4, 4, 4, 4, 1],
    );
  });

  it('grouped by length: every index once, as many batches, similar lengths in each, far less padding', () => {
    const plain = epochBatches(lengths, 8, createRng(3));
    const grouped = epochBatches(lengths, 8, createRng(3), true);
    assert.equal(grouped.length, plain.length);
    assert.deepEqual(
      grouped.flat().sort((a, b) => a - b),
      lengths.map((_, i) => i),
    );
    assert.deepEqual(grouped, epochBatches(lengths, 8, createRng(3), true), 'seeded');
    assert.equal(grouped.filter((b) => b.length !== 8).length, 0);
    const real = lengths.reduce((a, b) => a + b, 0);
    assert.ok(padded(plain) / real > 1.3, `ungrouped padding ${padded(plain) / real}`);
    assert.ok(padded(grouped) / real < 1.03, `grouped padding ${padded(grouped) / real}`);
    // The batches are shuffled after grouping: the first megabatch's worth does not come in order of length.
    const maxima = grouped.slice(0, LENGTH_GROUP_BATCHES).map((b) => Math.max(...b.map((i) => lengths[i]!)));
    assert.ok(
      maxima.some((m, k) => k > 0 && m < maxima[k - 1]!),
      'batches come in a shuffled order',
    );
  });
});
