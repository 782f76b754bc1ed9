/**
 * The ONNX Runtime decoder against the tfjs CausalLM on the same checkpoints: greedy tokens identical and log-probs
 * within 1e-3, seeded sampling identical, on tied and untied, Llama, Qwen2 (biases) and Qwen3 (q/k norm) configs,
 * a batch of prompts of different lengths (left padding), F32 weights read in place and BF16 shards converted; the
 * export cache; and clear errors for corrupt or unsupported checkpoints.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CausalLM,
  CheckpointError,
  generateBatch,
  initBackend,
  loadCheckpoint,
  saveCheckpoint,
  type GeneratedSample,
  type GenerationItem,
} from '@troupe/lm';
import { exportCheckpoint, OnnxCausalLM, type ExportedModel, type OnnxLoadOptions } from '@troupe/onnx';

/** A small GQA shape (4 query heads on 2 kv heads). */
const SHAPE = {
  vocab_size: 384,
  hidden_size: 64,
  intermediate_size: 128,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 16,
};
const BASE = {
  ...SHAPE,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  max_position_embeddings: 512,
  bos_token_id: 1,
  eos_token_id: 2,
};

const CASES = [
  { name: 'qwen3 untied (q/k norm)', config: { ...BASE, model_type: 'qwen3', tie_word_embeddings: false } },
  { name: 'qwen3 tied', config: { ...BASE, model_type: 'qwen3', tie_word_embeddings: true } },
  {
    name: 'qwen2 (attention biases)',
    config: { ...BASE, model_type: 'qwen2', attention_bias: true, tie_word_embeddings: false },
  },
  {
    name: 'llama tied, MHA, llama3 rope scaling',
    config: {
      ...BASE,
      model_type: 'llama',
      num_key_value_heads: 4,
      tie_word_embeddings: true,
      rope_scaling: {
        rope_type: 'llama3',
        factor: 8,
        low_freq_factor: 1,
        high_freq_factor: 4,
        original_max_position_embeddings: 64,
      },
    },
  },
];

/** Prompts of different lengths, so the batch is left-padded. */
const ITEMS: GenerationItem[] = [
  { promptIds: [5, 17, 99, 3, 250, 41, 8], options: { maxNewTokens: 10, temperature: 0, eosTokenIds: [] } },
  { promptIds: [300, 12], options: { maxNewTokens: 10, temperature: 0, eosTokenIds: [] } },
  {
    promptIds: [7, 7, 61, 200],
    options: { maxNewTokens: 10, temperature: 0.8, topP: 0.9, n: 2, seed: 4, eosTokenIds: [] },
  },
];

/**
 * A random model whose weights are scaled up from the N(0, 0.02) initialisation, so its next-token distributions are
 * peaked and position-dependent (at the default scale every logit is near log(1/V) and any decoder would "agree").
 */
function peakedModel(config: Record<string, unknown>, seed: number): CausalLM {
  const m = CausalLM.random(config, seed);
  const t = m.exportTensors();
  for (const [name, x] of t) {
    if (name.endsWith('norm.weight')) continue;
    const k = name.includes('embed') || name.startsWith('lm_head') ? 30 : 15;
    for (let i = 0; i < x.data.length; i++) x.data[i]! *= k;
  }
  m.assignTensors(t);
  return m;
}

/** Saves a {@link peakedModel} as checkpoint `dir`. */
async function savePeaked(
  dir: string,
  config: Record<string, unknown>,
  seed: number,
  options: Parameters<typeof saveCheckpoint>[2] = {},
): Promise<void> {
  const m = peakedModel(config, seed);
  try {
    await saveCheckpoint(dir, m, options);
  } finally {
    m.dispose();
  }
}

/** What the tfjs model loaded from checkpoint `dir` generates for {@link ITEMS}. */
async function tfjsOutput(dir: string): Promise<GeneratedSample[][]> {
  const model = await loadCheckpoint(dir);
  try {
    return await generateBatch(model, ITEMS);
  } finally {
    model.dispose();
  }
}

/** What ONNX Runtime generates for {@link ITEMS} from checkpoint `dir`, and the export it ran. */
async function onnxOutput(
  dir: string,
  options: OnnxLoadOptions,
): Promise<{ out: GeneratedSample[][]; exported: ExportedModel }> {
  const onnx = await OnnxCausalLM.load(dir, options);
  try {
    return { out: await onnx.generateBatch(ITEMS), exported: onnx.exported };
  } finally {
    await onnx.release();
  }
}

function assertSame(ours: GeneratedSample[][], ref: GeneratedSample[][], what: string): void {
  ref.forEach((samples, i) =>
    samples.forEach((r, j) => {
      const o = ours[i]![j]!;
      assert.deepEqual(o.tokenIds, r.tokenIds, `${what}: item ${i} sample ${j} tokens`);
      r.logprobs.forEach((lp, k) =>
        assert.ok(
          Math.abs(o.logprobs[k]! - lp) < 1e-3,
          `${what}: item ${i} sample ${j} logprob ${k}: ${o.logprobs[k]} vs ${lp}`,
        ),
      );
    }),
  );
}

describe('ONNX Runtime decoder', function () {
  this.timeout(120_000);
  let dir: string;
  let cacheDir: string;

  before(async () => {
    await initBackend({ backend: 'cpu' });
    dir = await mkdtemp(join(tmpdir(), 'troupe-onnx-'));
    cacheDir = join(dir, 'cache');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const [i, c] of CASES.entries()) {
    it(`matches the tfjs model: ${c.name}`, async () => {
      const ck = join(dir, `case-${i}`);
      await savePeaked(ck, c.config, 10 + i);
      const ref = await tfjsOutput(ck);
      // the reference is not degenerate: rows differ, and greedy steps are not all the same token
      assert.notDeepEqual(ref[0]![0]!.tokenIds, ref[1]![0]!.tokenIds);
      assert.ok(new Set(ref[0]![0]!.tokenIds).size > 2, `${c.name}: greedy output too repetitive to compare`);
      assertSame((await onnxOutput(ck, { cacheDir })).out, ref, c.name);
    });
  }

  it('converts BF16 shards to float32, with the same output as tfjs on the same checkpoint', async () => {
    const ck = join(dir, 'bf16');
    await savePeaked(ck, CASES[0]!.config, 21, { dtype: 'BF16', maxShardBytes: 40_000 });
    assert.ok(existsSync(join(ck, 'model.safetensors.index.json')), 'sharded');
    const { out, exported } = await onnxOutput(ck, { cacheDir });
    assertSame(out, await tfjsOutput(ck), 'bf16 shards');
    assert.ok(existsSync(join(exported.dir, 'weights.bin')), 'converted weights are in the cache');
  });

  it('gives the same output with F32 weights copied into the cache as with them read in place', async () => {
    const ck = join(dir, 'copy');
    await savePeaked(ck, CASES[2]!.config, 22);
    const inPlace = await onnxOutput(ck, { cacheDir });
    const copied = await onnxOutput(ck, { cacheDir, weights: 'copy' });
    assert.notEqual(copied.exported.dir, inPlace.exported.dir);
    assert.ok(!existsSync(join(inPlace.exported.dir, 'weights.bin')), 'F32 weights read in place need no copy');
    assert.ok(existsSync(join(copied.exported.dir, 'weights.bin')));
    assertSame(copied.out, inPlace.out, 'copy vs in place');
  });

  it('reuses a cached export until the checkpoint changes', async () => {
    const ck = join(dir, 'cached');
    await savePeaked(ck, CASES[1]!.config, 30);
    const first = await exportCheckpoint(ck, { cacheDir });
    assert.equal(first.cached, false);
    const again = await exportCheckpoint(ck, { cacheDir });
    assert.equal(again.cached, true);
    assert.equal(again.dir, first.dir);
    const cfg = JSON.parse(await readFile(join(ck, 'config.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(join(ck, 'config.json'), JSON.stringify({ ...cfg, rope_theta: 20000 }));
    const changed = await exportCheckpoint(ck, { cacheDir });
    assert.equal(changed.cached, false);
    assert.notEqual(changed.dir, first.dir);
  });

  it('refuses corrupt and unsupported checkpoints with an error naming the file', async () => {
    const bad = join(dir, 'bad');
    await savePeaked(bad, CASES[0]!.config, 40);
    const cfgPath = join(bad, 'config.json');
    const cfg = JSON.parse(await readFile(cfgPath, 'utf8')) as Record<string, unknown>;
    await writeFile(cfgPath, JSON.stringify({ ...cfg, model_type: 'gpt2' }));
    await assert.rejects(
      OnnxCausalLM.load(bad, { cacheDir }),
      (e: Error) =>
        e instanceof CheckpointError && e.message.includes(cfgPath) && /unknown model_type "gpt2"/.test(e.message),
    );
    await writeFile(cfgPath, JSON.stringify({ ...cfg, intermediate_size: 256 }));
    await assert.rejects(
      OnnxCausalLM.load(bad, { cacheDir }),
      (e: Error) =>
        e instanceof CheckpointError && e.message.includes(cfgPath) && e.message.includes("'intermediate_size'"),
    );
    await writeFile(cfgPath, JSON.stringify(cfg));
    const weights = join(bad, 'model.safetensors');
    await truncate(weights, 5000);
    await assert.rejects(
      OnnxCausalLM.load(bad, { cacheDir }),
      (e: Error) => e instanceof CheckpointError && e.message.startsWith(weights) && /truncated/.test(e.message),
    );
  });
});
