/**
 * Where the default team's warm start goes: demonstration generation (oracle play-throughs; the coder's oracle
 * programs are rendered, not run), each policy's SFT time per sample on a few demonstrations (extrapolated to its
 * capped sample count), and the padding of its mini-batches (real against padded tokens, random and grouped by
 * length). The two policies train at once in two worker threads, so the warm start takes about the longer of the two.
 *
 * Run: npx tsx --conditions=troupe:source bench/warm-start-profile.ts [samplesTimed=32]
 */
import { loadavg } from 'node:os';
import { composeTeam, createRng, deriveSeed, loadTeamSpec, resolveTrainerConfig } from '@troupe/kernel';
import { collectDemonstrations, DEFAULT_TEAM_SPEC_FILE, epochBatches, policyHandles } from '@troupe/trainer';
import { sftRun } from '../packages/trainer/src/sft-run.js';

const SAMPLES = Number(process.argv[2] ?? 32);
const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const spec = loadTeamSpec(DEFAULT_TEAM_SPEC_FILE);
const config = resolveTrainerConfig(spec);
const w = config.warmStart!;
const team = await composeTeam(spec);
console.log(`load ${load()}`);
let t = performance.now();
const demos = await collectDemonstrations(team.environment, team.seats, {
  count: w.demonstrations,
  seed: deriveSeed(spec.seed, 'demonstrations'),
  noise: w.noise,
});
console.log(
  `demonstrations: ${w.demonstrations} play-throughs, ${demos.length} samples in ${((performance.now() - t) / 1000).toFixed(1)} s`,
);
const handles = policyHandles(
  spec,
  team.policies,
  team.seats.map((s) => s.name),
  config,
);
for (const h of handles) {
  const lm = h.trainable!;
  const eos = lm.tokenizer.eosTokenId ?? lm.model.config.eosTokenIds[0]!;
  const mine = demos.filter((d) => d.policy === h.name).slice(0, w.maxSamples?.[h.name] ?? Infinity);
  const pairs = mine.map((d) => ({
    promptIds: lm.promptIds(d.messages),
    completionIds: [...lm.tokenizer.encode(d.text), eos],
  }));
  const lengths = pairs.map((p) => p.promptIds.length + p.completionIds.length);
  for (const grouped of [false, true]) {
    let real = 0;
    let padded = 0;
    for (const b of epochBatches(lengths, w.miniBatchSize, createRng(1), grouped)) {
      const L = Math.max(...b.map((i) => lengths[i]!));
      for (const i of b) real += lengths[i]!;
      padded += L * b.length;
    }
    console.log(
      `${h.name}: ${pairs.length} samples, ${grouped ? 'grouped by length' : 'random'} mini-batches of ${w.miniBatchSize}: ${real} real tokens, ${padded} padded (${(100 * (1 - real / padded)).toFixed(1)}% padding)`,
    );
  }
  const settings = { rngSeed: 1, maxGradNorm: 1, padId: lm.tokenizer.padTokenId ?? 0 };
  await sftRun(lm.model, pairs.slice(0, w.miniBatchSize), w, settings); // warm-up (kernels, first allocations)
  const sample = pairs.slice(w.miniBatchSize, w.miniBatchSize + SAMPLES);
  t = performance.now();
  const r = await sftRun(lm.model, sample, w, settings);
  const perSample = (performance.now() - t) / sample.length;
  console.log(
    `${h.name}: SFT ${sample.length} samples (${r.steps} steps) at ${perSample.toFixed(0)} ms a sample → ~${((perSample * pairs.length) / 1000).toFixed(0)} s for ${pairs.length}`,
  );
}
console.log(`load ${load()}`);
await team.dispose?.();
