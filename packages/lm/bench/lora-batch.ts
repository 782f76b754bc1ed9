/**
 * Speed of a lockstep step of an L2 team: two roles (one LoRA adapter each on one preset base), `--requests` episodes
 * per role waiting at once, each asking its role for `--n` samples of `--tokens` tokens. Timed two ways on the same
 * models: the two roles' merged calls decoded as ONE batch over the shared base (`SharedBaseBatcher`, what an L2 team
 * does now), and as two batches, one per role (each policy's own batched decode, what it did before; the two decodes
 * interleave token by token as they did in a run). Also checks that both give the same tokens, and the largest
 * log-prob gap. Prints one JSON line.
 *
 * Run: npx tsx --conditions=troupe:source packages/lm/bench/lora-batch.ts [--preset tiny] [--requests 8] [--rounds 5]
 */
import { parseArgs } from 'node:util';
import { LockstepBatcher, type Completion, type GenerationRequest, type Policy } from '@troupe/kernel';
import { CausalLmPolicy, createCausalLmPolicy, tf, type PresetName } from '@troupe/lm';

const { values: args } = parseArgs({
  options: {
    preset: { type: 'string', default: 'tiny' },
    backend: { type: 'string', default: 'auto' },
    requests: { type: 'string', default: '8' },
    n: { type: 'string', default: '1' },
    tokens: { type: 'string', default: '24' },
    rounds: { type: 'string', default: '5' },
  },
});
const R = Number(args.requests),
  rounds = Number(args.rounds);

const ctx = { baseDir: process.cwd(), seed: 0 };
const config = {
  preset: args.preset as PresetName,
  seed: 3,
  backend: args.backend as 'auto',
  lora: { r: 8, alpha: 16, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj'] },
};
const roles = [await createCausalLmPolicy('planner', config, ctx), await createCausalLmPolicy('coder', config, ctx)];
// move B off its zero init so that the two adapters answer differently
roles.forEach((p, i) => {
  for (const { b } of p.model.lora.values())
    tf.tidy(() => b.assign(tf.randomNormal(b.shape, 0, 0.3, 'float32', 17 + i)));
});
// the same models without the shared base's batcher: each role decodes its own call
const alone = roles.map((p) => new CausalLmPolicy(p.name, p.model, p.tokenizer));

const request = (role: number, k: number): GenerationRequest => ({
  messages: [{ role: 'user', content: `${role === 0 ? 'plan' : 'code'} task ${k}: reach the goal in few moves` }],
  sampling: { temperature: 1, topP: 1, topK: 0, maxTokens: Number(args.tokens) },
  n: Number(args.n),
  seed: 1000 * role + k,
});

/** One lockstep step: R episodes per role, every one waiting on its role at once. */
async function step(policies: readonly Policy[]): Promise<{ seconds: number; cpu: number; out: Completion[][][] }> {
  const lockstep = new LockstepBatcher(2 * R, 2 * R);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const out = await Promise.all(
    Array.from({ length: 2 * R }, (_, e) =>
      lockstep.wrap(e, policies[e < R ? 0 : 1]!).generate([request(e < R ? 0 : 1, e % R)]),
    ),
  );
  const c = process.cpuUsage(c0);
  return { seconds: (performance.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6, out };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
await step(roles);
await step(alone); // warm-up: kernels and buffers of both shapes
const merged: number[] = [];
const separate: number[] = [];
const mergedCpu: number[] = [];
const separateCpu: number[] = [];
let sameTokens = true;
let maxGap = 0;
for (let i = 0; i < rounds; i++) {
  const a = await step(roles);
  const b = await step(alone);
  merged.push(a.seconds);
  separate.push(b.seconds);
  mergedCpu.push(a.cpu);
  separateCpu.push(b.cpu);
  a.out.forEach((call, e) =>
    call[0]!.forEach((c, j) => {
      const d = b.out[e]![0]![j]!;
      if (c.tokenIds.join() !== d.tokenIds.join()) sameTokens = false;
      else
        for (let t = 0; t < c.logprobs.length; t++)
          maxGap = Math.max(maxGap, Math.abs(c.logprobs[t]! - d.logprobs[t]!));
    }),
  );
}
const batcher = roles[0]!.settings.sharedBase!.batcher;
console.log(
  JSON.stringify({
    preset: args.preset,
    backend: tf.getBackend(),
    requests_per_role: R,
    samples_per_request: Number(args.n),
    max_tokens: Number(args.tokens),
    rounds,
    one_batch_s: +median(merged).toFixed(4),
    two_batches_s: +median(separate).toFixed(4),
    speedup: +(median(separate) / median(merged)).toFixed(2),
    // CPU seconds of this process (user + system): less sensitive than wall time to other load on the machine
    one_batch_cpu_s: +median(mergedCpu).toFixed(4),
    two_batches_cpu_s: +median(separateCpu).toFixed(4),
    cpu_speedup: +(median(separateCpu) / median(mergedCpu)).toFixed(2),
    merged_decodes_per_step: batcher.stats.batches / (rounds + 1),
    same_tokens: sameTokens,
    max_logprob_gap: maxGap,
  }),
);
for (const p of roles) p.dispose();
