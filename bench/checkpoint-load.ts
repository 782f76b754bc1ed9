/**
 * Does a checkpoint over Node's 2 GiB buffer limit load, how fast, and in how much memory? Writes a random-weight
 * Qwen3-0.6B-shaped checkpoint (hidden 1024, 16 heads, 8 KV heads, head_dim 128, intermediate 3072, vocab 151,936,
 * tied embeddings; 25 layers instead of 28, so the single F32 file is ~2.2 GB) into a temporary folder under the OS
 * temp dir as ONE model.safetensors, then loads it into a CausalLM in a fresh process and runs one forward step on
 * one token. Prints JSON: file size, load_s, peak RSS of the loading process and its ratio to the F32 weights.
 * Deletes the folder.
 * Run: npx tsx --conditions=troupe:source bench/checkpoint-load.ts [layers=25] [dtype=F32|BF16|F16] [backend=cpu]
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  initBackend,
  loadCheckpoint,
  parameterShapes,
  parseHfConfig,
  tf,
  writeCheckpoint,
  type SafeTensor,
  type StoredDtype,
} from '@troupe/lm';

const MB = 1 << 20;

if (process.argv[2] === '--load') {
  // The loading process: nothing but the load and one forward step.
  const [dir, backend] = [process.argv[3]!, process.argv[4]!];
  await initBackend({ backend: backend as 'cpu' });
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  const model = await loadCheckpoint(dir);
  const loadS = (performance.now() - t0) / 1000;
  const peakAfterLoad = process.resourceUsage().maxRSS * 1024;
  const t1 = performance.now();
  const logits = tf.tidy(() =>
    model.forward(tf.tensor2d([[1]], [1, 1], 'int32'), { lastOnly: true }).logits.dataSync(),
  );
  const forwardS = (performance.now() - t1) / 1000;
  const finite = logits.every((x) => Number.isFinite(x));
  process.stdout.write(
    JSON.stringify({
      rssBefore,
      loadS,
      peakAfterLoad,
      peakAfterForward: process.resourceUsage().maxRSS * 1024,
      forwardS,
      finite,
    }),
  );
  model.dispose();
} else {
  const layers = Number(process.argv[2] ?? 25);
  const dtype = (process.argv[3] ?? 'F32') as StoredDtype;
  const backend = process.argv[4] ?? 'cpu';
  const config = {
    model_type: 'qwen3',
    vocab_size: 151936,
    hidden_size: 1024,
    intermediate_size: 3072,
    num_hidden_layers: layers,
    num_attention_heads: 16,
    num_key_value_heads: 8,
    head_dim: 128,
    tie_word_embeddings: true,
    rope_theta: 1_000_000,
    max_position_embeddings: 40960,
    rms_norm_eps: 1e-6,
    bos_token_id: 151643,
    eos_token_id: 151645,
  };
  const dir = await mkdtemp(join(tmpdir(), 'troupe-bench-ckload-'));
  try {
    // Random weights: N(0, 0.02)-ish uniform matrices, unit norms (a cheap LCG: the values do not matter, the bytes do).
    const tensors = new Map<string, SafeTensor>();
    let s = 12345;
    let params = 0;
    for (const [name, shape] of parameterShapes(parseHfConfig(config))) {
      const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
      if (name.endsWith('norm.weight')) data.fill(1);
      else
        for (let i = 0; i < data.length; i++) {
          s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
          data[i] = (s / 2 ** 32 - 0.5) * 0.07;
        }
      tensors.set(name, { shape, data });
      params += data.length;
    }
    const tw = performance.now();
    await writeCheckpoint(dir, config, tensors, { maxShardBytes: Infinity, dtype });
    const writeS = (performance.now() - tw) / 1000;
    tensors.clear();
    const fileBytes = (await stat(join(dir, 'model.safetensors'))).size;
    const self = fileURLToPath(import.meta.url);
    const out = execFileSync(
      process.execPath,
      ['--conditions=troupe:source', '--import', 'tsx', self, '--load', dir, backend],
      { maxBuffer: 1 << 20, encoding: 'utf8' },
    );
    const r = JSON.parse(out) as {
      rssBefore: number;
      loadS: number;
      peakAfterLoad: number;
      peakAfterForward: number;
      forwardS: number;
      finite: boolean;
    };
    const f32Bytes = params * 4;
    console.log(
      JSON.stringify(
        {
          layers,
          params,
          stored_dtype: dtype,
          backend,
          file_mb: Math.round(fileBytes / MB),
          f32_weights_mb: Math.round(f32Bytes / MB),
          write_s: +writeS.toFixed(2),
          load_s: +r.loadS.toFixed(2),
          rss_before_load_mb: Math.round(r.rssBefore / MB),
          peak_rss_mb: Math.round(r.peakAfterLoad / MB),
          peak_rss_over_f32_weights: +(r.peakAfterLoad / f32Bytes).toFixed(3),
          first_forward_s: +r.forwardS.toFixed(2),
          peak_rss_after_forward_mb: Math.round(r.peakAfterForward / MB),
          logits_finite: r.finite,
        },
        null,
        2,
      ),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
