/**
 * What share of an AT-GRPO training step is the training loop's OWN overhead — everything outside generation,
 * environment stepping (with the roles' prompt/parse) and the update (log-prob recomputation + PPO)? That is: RxJS
 * streams, event assembly, advantages, packing, trace writing, bookkeeping. Target: ≤ 5%.
 *
 * The trainer times each category as the union of its in-flight intervals (concurrent episodes overlap), and the
 * overhead as step wall time minus the union of all categories. Runs the default team's shape (Plan-Path 5x5,
 * proposer + executor, K = 4, B = 4, constrained decoding) with two models of the given preset.
 *
 * Run: npx tsx --conditions=troupe:source bench/train-overhead.ts [steps=3] [preset=tiny|micro]
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTeamSpec } from '@troupe/kernel';
import { CausalLM, initBackend, presetHfConfig, saveCheckpoint, tinyTokenizerDir } from '@troupe/lm';
import { DEFAULT_TEAM_SPEC_FILE, Trainer } from '@troupe/trainer';

const STEPS = Number(process.argv[2] ?? 3);
const PRESET = process.argv[3] ?? 'tiny';

const base = loadTeamSpec(DEFAULT_TEAM_SPEC_FILE);
let policies = base.policies;
if (PRESET === 'micro') {
  await initBackend();
  const dir = join(mkdtempSync(join(tmpdir(), 'troupe-bench-')), 'micro');
  const cfg = presetHfConfig('tiny', {
    vocab_size: 264,
    hidden_size: 32,
    intermediate_size: 64,
    num_hidden_layers: 1,
    num_attention_heads: 2,
    num_key_value_heads: 2,
    head_dim: 16,
  });
  const m = CausalLM.random(cfg, 5);
  await saveCheckpoint(dir, m, { tokenizerDir: tinyTokenizerDir() });
  m.dispose();
  policies = {
    proposer: { kind: 'tfjs-causal-lm', model: dir, tokenizer: 'tiny' },
    executor: { kind: 'tfjs-causal-lm', model: dir, tokenizer: 'tiny' },
  };
}
const spec = { ...base, policies, algorithm: { ...base.algorithm, steps: STEPS, evalEvery: 0, warmStart: undefined } };
const out = mkdtempSync(join(tmpdir(), 'troupe-bench-train-'));
const trainer = await Trainer.create(spec as typeof base, { outDir: out, skipFinalEval: true });
try {
  await trainer.run();
} finally {
  await trainer.dispose();
}
const rows = readFileSync(join(out, 'metrics.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Record<string, number>)
  .filter((m) => (m as unknown as { kind: string }).kind === 'train');
const sum = (k: string): number => rows.reduce((a, m) => a + (m[k] ?? 0), 0);
const wall = sum('time/step');
const table = {
  steps: rows.length,
  preset: PRESET,
  'wall s': wall,
  'generate s': sum('time/generate'),
  'env + roles s': sum('time/env'),
  'update s': sum('time/update'),
  'overhead s': sum('time/overhead'),
  'overhead %': (100 * sum('time/overhead')) / wall,
  'samples/step': sum('rollout/samples') / rows.length,
  'generated tokens/s': sum('rollout/completion_tokens') / Math.max(1e-9, sum('time/generate')),
};
console.table(table);
writeFileSync(join(out, 'bench.json'), JSON.stringify(table, null, 2));
console.log(`overhead ${table['overhead %'].toFixed(2)}% of the step (target <= 5%)`);
