import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CausalLM,
  initBackend,
  tf,
  saveCheckpoint,
  loadCheckpoint,
  readCheckpoint,
  writeCheckpoint,
  parseSafetensors,
  serializeSafetensors,
  saveLoraAdapter,
  loadLoraAdapter,
  tinyTokenizerDir,
  peftTensorName,
} from '@troupe/lm';
import { TINY_QWEN3 } from './helpers/tiny-config.js';

const cfg = TINY_QWEN3;

function logits(m: CausalLM): Float32Array {
  return tf.tidy(() => m.forward(tf.tensor2d([[1, 5, 7, 9]], [1, 4], 'int32')).logits.dataSync() as Float32Array);
}

/** Builds raw safetensors bytes with a given dtype. */
function rawSafetensors(entries: { name: string; dtype: string; shape: number[]; bytes: Uint8Array }[]): Uint8Array {
  const header: Record<string, unknown> = {};
  let off = 0;
  for (const e of entries) {
    header[e.name] = { dtype: e.dtype, shape: e.shape, data_offsets: [off, off + e.bytes.length] };
    off += e.bytes.length;
  }
  const h = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + h.length + off);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  let p = 8 + h.length;
  for (const e of entries) {
    out.set(e.bytes, p);
    p += e.bytes.length;
  }
  return out;
}

describe('checkpoints', () => {
  let dir: string;
  before(async () => {
    await initBackend();
    dir = await mkdtemp(join(tmpdir(), 'troupe-ck-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('saves a HF-layout folder (config, safetensors, tokenizer) that loads back to the same model', async () => {
    const m = CausalLM.random(cfg, 5);
    const out = join(dir, 'full');
    await saveCheckpoint(out, m, { tokenizerDir: tinyTokenizerDir() });
    const files = (await readdir(out)).sort();
    assert.deepEqual(files, [
      'config.json',
      'model.safetensors',
      'special_tokens_map.json',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    const saved = JSON.parse(await readFile(join(out, 'config.json'), 'utf8'));
    assert.equal(saved.model_type, 'qwen3');
    assert.equal(saved.torch_dtype, 'float32');
    const m2 = await loadCheckpoint(out);
    assert.deepEqual(logits(m2), logits(m));
    const st = parseSafetensors(await readFile(join(out, 'model.safetensors')));
    assert.deepEqual(st.tensors.get('model.layers.0.self_attn.q_proj.weight')!.shape, [16, 16]);
    assert.deepEqual(st.tensors.get('model.layers.0.self_attn.k_proj.weight')!.shape, [8, 16]);
    assert.equal(st.dtypes.get('lm_head.weight'), 'F32');
    // overwrite in place: atomic swap leaves no temporary folders behind
    await saveCheckpoint(out, m2);
    assert.deepEqual(
      (await readdir(dir)).filter((f) => f.startsWith('.')),
      [],
    );
    m.dispose();
    m2.dispose();
  });

  it('writes and reads sharded checkpoints through model.safetensors.index.json', async () => {
    const m = CausalLM.random(cfg, 6);
    const out = join(dir, 'sharded');
    await saveCheckpoint(out, m, { maxShardBytes: 8000 });
    const files = await readdir(out);
    assert.ok(files.includes('model.safetensors.index.json'));
    assert.ok(files.filter((f) => /^model-\d{5}-of-\d{5}\.safetensors$/.test(f)).length > 2);
    const m2 = await loadCheckpoint(out);
    assert.deepEqual(logits(m2), logits(m));
    m.dispose();
    m2.dispose();
  });

  it('reads F16 and BF16 tensors', () => {
    const f16 = new Uint8Array(new Uint16Array([0x3c00, 0xc000, 0x3555, 0x0000]).buffer); // 1, -2, ~0.333, 0
    const bf16 = new Uint8Array(new Uint16Array([0x3f80, 0xc040]).buffer); // 1, -3
    const st = parseSafetensors(
      rawSafetensors([
        { name: 'a', dtype: 'F16', shape: [2, 2], bytes: f16 },
        { name: 'b', dtype: 'BF16', shape: [2], bytes: bf16 },
      ]),
    );
    const a = Array.from(st.tensors.get('a')!.data);
    assert.deepEqual([a[0], a[1], a[3]], [1, -2, 0]);
    assert.ok(Math.abs(a[2]! - 1 / 3) < 1e-3);
    assert.deepEqual(Array.from(st.tensors.get('b')!.data), [1, -3]);
  });

  it('names the file and tensor for truncated or corrupt safetensors', async () => {
    const good = serializeSafetensors(new Map([['w', { shape: [2, 3], data: new Float32Array(6) }]]));
    assert.throws(
      () => parseSafetensors(good.subarray(0, good.length - 4), 'm.safetensors'),
      /m\.safetensors: tensor 'w' ends at byte 24 .* truncated/,
    );
    assert.throws(
      () => parseSafetensors(good.subarray(0, 20), 'm.safetensors'),
      /header length .* exceeds the file size/,
    );
    assert.throws(() => parseSafetensors(new Uint8Array(3), 'm.safetensors'), /truncated/);
    const bad = good.slice();
    bad[9] = 0x7b;
    bad[10] = 0x7b;
    assert.throws(() => parseSafetensors(bad, 'm.safetensors'), /header is not valid JSON/);
    const i64 = rawSafetensors([{ name: 'ids', dtype: 'I64', shape: [1], bytes: new Uint8Array(8) }]);
    assert.throws(() => parseSafetensors(i64, 'm.safetensors'), /tensor 'ids' has dtype I64/);
  });

  it('names the tensor or key for missing tensors, wrong shapes and unknown model types', async () => {
    const m = CausalLM.random(cfg, 7);
    const tensors = m.exportTensors();
    m.dispose();
    const missing = new Map(tensors);
    missing.delete('model.layers.1.mlp.up_proj.weight');
    await writeCheckpoint(join(dir, 'missing'), cfg, missing);
    await assert.rejects(
      loadCheckpoint(join(dir, 'missing')),
      /tensor 'model\.layers\.1\.mlp\.up_proj\.weight' is missing/,
    );
    const wrong = new Map(tensors);
    wrong.set('model.norm.weight', { shape: [15], data: new Float32Array(15) });
    await writeCheckpoint(join(dir, 'wrong'), cfg, wrong);
    await assert.rejects(
      loadCheckpoint(join(dir, 'wrong')),
      /tensor 'model\.norm\.weight' has shape \[15\], expected \[16\]/,
    );
    await writeCheckpoint(join(dir, 'unknown'), { ...cfg, model_type: 'mamba' }, tensors);
    await assert.rejects(loadCheckpoint(join(dir, 'unknown')), /config\.json: unknown model_type "mamba"/);
    await assert.rejects(loadCheckpoint(join(dir, 'nope')), /does not exist/);
    await mkdir(join(dir, 'noweights'));
    await writeFile(join(dir, 'noweights', 'config.json'), JSON.stringify(cfg));
    await assert.rejects(readCheckpoint(join(dir, 'noweights')), /no model\.safetensors/);
    await writeFile(join(dir, 'noweights', 'config.json'), '{ nope');
    await assert.rejects(readCheckpoint(join(dir, 'noweights')), /config\.json: invalid JSON/);
  });

  it('saves and loads LoRA adapters in PEFT layout', async () => {
    const m = CausalLM.random(cfg, 8);
    m.addLora({ r: 2, alpha: 4, targetModules: ['q_proj', 'o_proj'] }, 3);
    // give B non-zero values so the adapter matters
    for (const p of m.lora.values()) p.b.assign(tf.randomNormal(p.b.shape, 0, 0.5, 'float32', 1));
    const want = logits(m);
    const out = join(dir, 'adapter');
    await saveLoraAdapter(out, m, { baseModel: 'tiny' });
    const acfg = JSON.parse(await readFile(join(out, 'adapter_config.json'), 'utf8'));
    assert.equal(acfg.peft_type, 'LORA');
    assert.equal(acfg.r, 2);
    assert.equal(acfg.lora_alpha, 4);
    const st = parseSafetensors(await readFile(join(out, 'adapter_model.safetensors')));
    assert.deepEqual(st.tensors.get(peftTensorName('model.layers.0.self_attn.q_proj', 'A'))!.shape, [2, 16]);
    assert.deepEqual(st.tensors.get('base_model.model.model.layers.1.self_attn.o_proj.lora_B.weight')!.shape, [16, 2]);
    const base = m.exportTensors();
    m.dispose();
    const m2 = CausalLM.fromTensors(cfg, base);
    await loadLoraAdapter(out, m2);
    const got = logits(m2);
    let diff = 0;
    for (let i = 0; i < got.length; i++) diff = Math.max(diff, Math.abs(got[i]! - want[i]!));
    assert.ok(diff < 1e-5);
    m2.dispose();
    assert.ok(!existsSync(join(dir, 'adapter', 'model.safetensors')));
  });
});
