/**
 * Test helpers of the trainer suites: a micro causal LM checkpoint (one layer, width 32, the tiny byte tokenizer) so
 * that training steps take well under a second, and Plan-Path team specs that use it.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { saveCheckpoint, CausalLM, presetHfConfig, tinyTokenizerDir, initBackend } from '@troupe/lm';
import { loadTeamSpec, type TeamSpec } from '@troupe/kernel';

// The trainer composes its teams through the plugin host, which imports `@troupe/policy-causal-lm` as an ES module.
// A test file loaded as CommonJS (mocha's require() under tsx) holds a second copy of @troupe/lm, and a process with
// both copies training models aborts natively (`free(): invalid pointer`). This package's .mocharc.json loads the tests
// as ES modules (`--no-experimental-require-module`); refuse to run otherwise rather than crash later.
if (typeof require === 'function') {
  throw new Error(
    'the trainer tests must load as ES modules: run mocha with packages/trainer/.mocharc.json, or add -n no-experimental-require-module',
  );
}

let microDir: string | undefined;

/** A saved micro model (HF layout with the tiny tokenizer), created once per process. */
export async function microCheckpoint(): Promise<string> {
  if (microDir) return microDir;
  await initBackend();
  const dir = join(mkdtempSync(join(tmpdir(), 'troupe-micro-')), 'micro');
  const cfg = presetHfConfig('tiny', {
    vocab_size: 264,
    hidden_size: 32,
    intermediate_size: 64,
    num_hidden_layers: 1,
    num_attention_heads: 2,
    num_key_value_heads: 2,
    head_dim: 16,
  });
  const model = CausalLM.random(cfg, 5);
  await saveCheckpoint(dir, model, { tokenizerDir: tinyTokenizerDir() });
  model.dispose();
  microDir = dir;
  return dir;
}

/** Options of {@link microTeamSpec}. */
export interface MicroTeamOptions {
  /** `shared` (L1), `per-role` (L3), `lora` (L2). */
  readonly mapping: 'shared' | 'per-role' | 'lora';
  /** Algorithm block (merged over small defaults). */
  readonly algorithm?: Record<string, unknown>;
  /** Max new tokens per seat. */
  readonly maxTokens?: number;
  /** Sampling temperature of a seat (default 1). */
  readonly temperatures?: Readonly<Partial<Record<'proposer' | 'executor', number>>>;
}

/** Writes a Plan-Path team spec using the micro model into a fresh folder and loads it. */
export async function microTeamSpec(options: MicroTeamOptions): Promise<TeamSpec> {
  const model = await microCheckpoint();
  const dir = mkdtempSync(join(tmpdir(), 'troupe-spec-'));
  mkdirSync(dir, { recursive: true });
  const base = { kind: 'tfjs-causal-lm', model, tokenizer: 'tiny', backend: 'wasm' };
  const lora = { ...base, lora: { r: 2, alpha: 4, targetModules: ['q_proj', 'v_proj'] }, seed: 3 };
  const policies =
    options.mapping === 'shared'
      ? { shared: base }
      : options.mapping === 'per-role'
        ? { proposer: base, executor: base }
        : { proposer: lora, executor: lora };
  const seatPolicy = (seat: string): string => (options.mapping === 'shared' ? 'shared' : seat);
  const algorithm = {
    name: 'at-grpo',
    branches: 2,
    batchSize: 2,
    steps: 2,
    concurrency: 2,
    lr: 1e-2,
    miniBatchSize: 8,
    evalEvery: 0,
    ...(options.algorithm ?? {}),
  };
  const spec = {
    name: `micro-${options.mapping}`,
    seed: 3,
    environment: {
      id: 'plan-path',
      config: { size: 5, wallProbability: 0.2, maxTurns: 2, maxMoves: 4, reward: 'shaped' },
    },
    policies,
    seatDefaults: {
      role: 'planner',
      roleConfig: { maxMoves: 4, includeTask: false, systemPrompt: '{seat}' },
      sampling: { temperature: 1, topP: 1, topK: 0, maxTokens: options.maxTokens ?? 16 },
    },
    seats: Object.fromEntries(
      (['proposer', 'executor'] as const).map((seat) => {
        const T = options.temperatures?.[seat];
        return [
          seat,
          {
            policy: seatPolicy(seat),
            ...(T !== undefined
              ? { sampling: { temperature: T, topP: 1, topK: 0, maxTokens: options.maxTokens ?? 16 } }
              : {}),
          },
        ];
      }),
    ),
    rewards: {
      id: 'signals',
      config: { team: 'executed_reward' },
      seats: {
        proposer: { alpha: 1, config: { local: 'proposal_reward' } },
        executor: { alpha: 1, config: { local: 'executed_reward' } },
      },
    },
    algorithm,
    evaluation: { split: 'test', episodes: 4 },
  };
  const file = join(dir, 'team.yaml');
  writeFileSync(file, JSON.stringify(spec, null, 2)); // JSON is YAML
  return loadTeamSpec(file);
}
