/**
 * Checkpoints of real size, at small scale: streamed reads by byte ranges, sharded writes with the Hugging Face index,
 * 16-bit weights kept 16-bit on save, and the tied head (cached outside training, differentiable inside it).
 */
import assert from 'node:assert/strict';
import { mkdtemp, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CausalLM,
  initBackend,
  currentBackend,
  tf,
  saveCheckpoint,
  loadCheckpoint,
  readCheckpoint,
  writeCheckpoint,
  parseSafetensors,
  serializeSafetensors,
  readSafetensors,
  writeSafetensors,
  DEFAULT_MAX_SHARD_BYTES,
  type SafeTensor,
  type StoredDtype,
} from '@troupe/lm';
import { TINY_QWEN3 } from './helpers/tiny-config.js';

const cfg = TINY_QWEN3;

const IDS = [[1, 5, 7, 9]];

function logits(m: CausalLM): Float32Array {
  return tf.tidy(() => m.forward(tf.tensor2d(IDS, [1, 4], 'int32')).logits.dataSync() as Float32Array);
}

/** The bytes of every tensor of a file, by name, as stored. */
function rawTensors(file: Uint8Array): Map<string, { dtype: string; shape: number[]; bytes: Uint8Array }> {
  const n = Number(new DataView(file.buffer, file.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + n))) as Record<
    string,
    { dtype: string; shape: number[]; data_offsets: [number, number] }
  >;
  const out = new Map<string, { dtype: string; shape: number[]; bytes: Uint8Array }>();
  for (const [name, e] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    out.set(name, {
      dtype: e.dtype,
      shape: e.shape,
      bytes: file.subarray(8 + n + e.data_offsets[0], 8 + n + e.data_offsets[1]),
    });
  }
  return out;
}

/** Every tensor of a checkpoint folder (single file or shards), as stored. */
async function folderTensors(dir: string): Promise<Map<string, { dtype: string; shape: number[]; bytes: Uint8Array }>> {
  const all = new Map<string, { dtype: string; shape: number[]; bytes: Uint8Array }>();
  for (const f of (await readdir(dir)).filter((x) => x.endsWith('.safetensors'))) {
    for (const [k, v] of rawTensors(await readFile(join(dir, f)))) all.set(k, v);
  }
  return all;
}

/** Pseudo-random values (mixed signs and magnitudes, some subnormal in F16). */
function values(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 2 ** 32 - 0.5) * 2 ** ((i % 24) - 16);
  }
  return out;
}

/** A random model's tensors stored as `dtype` (values rounded to it by a write and read). */
function asDtype(tensors: ReadonlyMap<string, SafeTensor>, dtype: StoredDtype): Map<string, SafeTensor> {
  return parseSafetensors(serializeSafetensors(tensors, undefined, { dtype })).tensors;
}

describe('checkpoints of real size', () => {
  let dir: string;
  before(async () => {
    await initBackend();
    dir = await mkdtemp(join(tmpdir(), 'troupe-cksize-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads a file by ranges smaller than its tensors, F32, F16 and BF16 alike, to the values of a whole read', async () => {
    const tensors = new Map<string, SafeTensor>([
      ['a', { shape: [37, 11], data: values(407, 1), dtype: 'F32' }],
      ['b', { shape: [501], data: values(501, 2), dtype: 'F16' }],
      ['c', { shape: [3, 129], data: values(387, 3), dtype: 'BF16' }],
      ['empty', { shape: [0, 4], data: new Float32Array(0), dtype: 'BF16' }],
    ]);
    const file = join(dir, 'ranges.safetensors');
    await writeSafetensors(file, tensors, { note: 'x' });
    const bytes = await readFile(file);
    const whole = parseSafetensors(bytes, file);
    for (const chunkBytes of [8, 60, 512]) {
      assert.ok(bytes.length > 4 * chunkBytes);
      const ranged = await readSafetensors(file, { chunkBytes });
      assert.deepEqual(ranged.metadata, { note: 'x' });
      assert.deepEqual(
        [...ranged.dtypes],
        [
          ['a', 'F32'],
          ['b', 'F16'],
          ['c', 'BF16'],
          ['empty', 'BF16'],
        ],
      );
      for (const [name, t] of whole.tensors)
        assert.deepEqual(ranged.tensors.get(name), t, `${name} at ${chunkBytes}-byte reads`);
    }
    // F32 is exact; 16-bit values are the nearest representable ones.
    assert.deepEqual(whole.tensors.get('a')!.data, tensors.get('a')!.data);
    const b = whole.tensors.get('b')!.data;
    for (let i = 0; i < b.length; i++)
      assert.ok(
        Math.abs(b[i]! - tensors.get('b')!.data[i]!) <= Math.max(Math.abs(b[i]!) * 2 ** -11, 2 ** -25),
        `b[${i}]`,
      );
  });

  it('loads a model.safetensors over 2 GiB (sparse: the tensors, then unused bytes) by ranges', async () => {
    const m = CausalLM.random(cfg, 10);
    const big = join(dir, 'big');
    await saveCheckpoint(big, m);
    const file = await open(join(big, 'model.safetensors'), 'r+');
    await file.truncate(2 ** 31 + 4096); // a hole: no disk space, no bytes written
    await file.close();
    const back = await loadCheckpoint(big);
    assert.deepEqual(logits(back), logits(m));
    m.dispose();
    back.dispose();
    await rm(big, { recursive: true, force: true });
  });

  it('encodes every F16 and BF16 value back to its own bits, rounding float32 to the nearest even', () => {
    for (const dtype of ['F16', 'BF16'] as const) {
      const bits = new Uint8Array(65536 * 2);
      const dv = new DataView(bits.buffer);
      for (let i = 0; i < 65536; i++) dv.setUint16(i * 2, i, true);
      const decoded = parseSafetensors(serializeRaw(dtype, bits)).tensors.get('x')!;
      const again = rawTensors(serializeSafetensors(new Map([['x', decoded]]))).get('x')!;
      const back = new DataView(again.bytes.buffer, again.bytes.byteOffset, again.bytes.byteLength);
      for (let i = 0; i < 65536; i++) {
        const nan = Number.isNaN(decoded.data[i]!);
        const got = back.getUint16(i * 2, true);
        if (nan)
          assert.ok(
            Number.isNaN(decoded.data[i]!) &&
              (dtype === 'F16' ? (got & 0x7c00) === 0x7c00 && got & 0x3ff : (got & 0x7f80) === 0x7f80 && got & 0x7f),
            `${dtype} NaN ${i}`,
          );
        else assert.equal(got, i, `${dtype} ${i}`);
      }
    }
    // ties go to even: 1 + 2^-11 is halfway between F16 1 and 1 + 2^-10; 1 + 3·2^-11 rounds up to 1 + 2^-9.
    const half = rawTensors(
      serializeSafetensors(
        new Map([
          ['x', { shape: [3], data: new Float32Array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 70000]), dtype: 'F16' as const }],
        ]),
      ),
    );
    const h = new DataView(half.get('x')!.bytes.buffer, half.get('x')!.bytes.byteOffset, 6);
    assert.deepEqual([h.getUint16(0, true), h.getUint16(2, true), h.getUint16(4, true)], [0x3c00, 0x3c02, 0x7c00]);
  });

  it('shards by a max shard size with the Hugging Face index, and round-trips bit-exactly', async () => {
    const m = CausalLM.random(cfg, 7);
    const single = join(dir, 'single');
    await saveCheckpoint(single, m);
    assert.ok(DEFAULT_MAX_SHARD_BYTES === 2_000_000_000);
    assert.deepEqual((await readdir(single)).sort(), ['config.json', 'model.safetensors']);
    const sharded = join(dir, 'sharded');
    const max = 6000;
    await saveCheckpoint(sharded, m, { maxShardBytes: max });
    const files = (await readdir(sharded)).sort();
    const shards = files.filter((f) => f.endsWith('.safetensors'));
    const n = shards.length;
    assert.ok(n > 3, `${n} shards`);
    assert.deepEqual(
      shards,
      Array.from(
        { length: n },
        (_, i) => `model-${String(i + 1).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.safetensors`,
      ),
    );
    assert.ok(files.includes('model.safetensors.index.json') && !files.includes('model.safetensors'));
    const index = JSON.parse(await readFile(join(sharded, 'model.safetensors.index.json'), 'utf8')) as {
      metadata: { total_size: number };
      weight_map: Record<string, string>;
    };
    const stored = await folderTensors(sharded);
    const reference = await folderTensors(single);
    assert.equal(
      index.metadata.total_size,
      [...reference.values()].reduce((a, t) => a + t.bytes.length, 0),
    );
    assert.deepEqual(Object.keys(index.weight_map).sort(), [...reference.keys()].sort());
    for (const shard of shards) {
      const inShard = [...rawTensors(await readFile(join(sharded, shard))).keys()];
      assert.deepEqual(
        inShard.sort(),
        Object.keys(index.weight_map)
          .filter((k) => index.weight_map[k] === shard)
          .sort(),
      );
      const bytes = inShard.reduce((a, k) => a + stored.get(k)!.bytes.length, 0);
      assert.ok(bytes <= max || inShard.length === 1, `${shard} holds ${bytes} bytes`);
    }
    for (const [name, t] of reference) assert.deepEqual(stored.get(name), t, name);
    const back = await loadCheckpoint(sharded);
    assert.deepEqual(logits(back), logits(m));
    for (const [name, t] of back.exportTensors()) assert.deepEqual(t.data, m.exportTensors().get(name)!.data, name);
    // a tensor larger than the max gets a shard of its own; nothing is left beside the folder
    await saveCheckpoint(sharded, m, { maxShardBytes: 100 });
    const big = JSON.parse(await readFile(join(sharded, 'model.safetensors.index.json'), 'utf8')) as {
      weight_map: Record<string, string>;
    };
    for (const [name, t] of reference) {
      if (t.bytes.length <= 100) continue;
      assert.deepEqual(
        Object.keys(big.weight_map).filter((k) => big.weight_map[k] === big.weight_map[name]),
        [name],
        `${name} has a shard of its own`,
      );
    }
    assert.deepEqual(
      (await readdir(dir)).filter((f) => f.startsWith('.')),
      [],
    );
    m.dispose();
    back.dispose();
  });

  it('keeps F16 and BF16 weights 16-bit on save, bit for bit, unless told F32', async () => {
    const m = CausalLM.random({ ...cfg, tie_word_embeddings: true }, 8);
    for (const dtype of ['BF16', 'F16'] as const) {
      const src = join(dir, `src-${dtype}`);
      const tensors = asDtype(m.exportTensors(), dtype);
      tensors.set('model.norm.weight', { ...tensors.get('model.norm.weight')!, dtype: 'F32' });
      await writeCheckpoint(src, m.hfConfig, tensors, { maxShardBytes: 10_000 });
      const loaded = await loadCheckpoint(src);
      const out = join(dir, `out-${dtype}`);
      await saveCheckpoint(out, loaded, { maxShardBytes: 10_000 });
      const [before, after] = [await folderTensors(src), await folderTensors(out)];
      assert.deepEqual(after, before);
      assert.equal(after.get('model.embed_tokens.weight')!.dtype, dtype);
      assert.equal(after.get('model.norm.weight')!.dtype, 'F32');
      assert.equal(
        JSON.parse(await readFile(join(out, 'config.json'), 'utf8')).torch_dtype,
        dtype === 'F16' ? 'float16' : 'bfloat16',
      );
      const f32 = join(dir, `f32-${dtype}`);
      await saveCheckpoint(f32, loaded, { dtype: 'F32' });
      const wide = await folderTensors(f32);
      assert.ok([...wide.values()].every((t) => t.dtype === 'F32'));
      assert.equal(JSON.parse(await readFile(join(f32, 'config.json'), 'utf8')).torch_dtype, 'float32');
      assert.ok(
        (await stat(join(f32, 'model.safetensors'))).size >
          1.9 * [...before.values()].reduce((a, t) => a + t.bytes.length, 0),
      );
      const again = await readCheckpoint(f32);
      for (const [name, t] of (await readCheckpoint(src)).tensors)
        assert.deepEqual(again.tensors.get(name)!.data, t.data, name);
      loaded.dispose();
    }
    m.dispose();
  });

  for (const backend of ['wasm', 'cpu'] as const) {
    it(`the tied head gives the logits of an explicit head, follows training steps, and passes gradients to the embedding (${backend})`, async () => {
      const was = currentBackend()!.backend;
      await initBackend({ backend, fresh: true });
      try {
        tiedHead();
      } finally {
        await initBackend({ backend: was, fresh: true });
      }
    });
  }
});

/** The tied head against an explicit head equal to the embedding; after an optimizer step; its gradients. */
function tiedHead(): void {
  const tied = CausalLM.random({ ...cfg, tie_word_embeddings: true }, 9);
  const tensors = tied.exportTensors();
  tensors.set('lm_head.weight', {
    shape: tensors.get('model.embed_tokens.weight')!.shape,
    data: new Float32Array(tensors.get('model.embed_tokens.weight')!.data),
  });
  const untied = CausalLM.fromTensors({ ...cfg, tie_word_embeddings: false }, tensors);
  assert.deepEqual(logits(tied), logits(untied));
  assert.deepEqual(logits(tied), logits(untied)); // the cached head, a second time
  // A token absent from the input gets gradient on its embedding row only through the head.
  const emb = tied.params.get('model.embed_tokens.weight')!;
  const loss = (): tf.Scalar =>
    tf.tidy(
      () =>
        tied
          .forward(tf.tensor2d(IDS, [1, 4], 'int32'))
          .logits.slice([0, 0, 250], [1, 4, 1])
          .sum() as tf.Scalar,
    );
  const { grads } = tf.variableGrads(loss, [emb]);
  const row = tf.tidy(() => grads[emb.name]!.slice([250, 0], [1, cfg.hidden_size]).abs().sum().dataSync()[0]!);
  assert.ok(row > 0, `embedding row 250 got gradient ${row}`);
  tf.dispose(grads);
  // An optimizer step changes the embedding: the head follows it.
  const before = logits(tied);
  const opt = tf.train.sgd(0.5);
  opt.minimize(loss, false, [emb]);
  const after = logits(tied);
  assert.notDeepEqual(after, before);
  const fresh = CausalLM.fromTensors({ ...cfg, tie_word_embeddings: true }, tied.exportTensors());
  assert.deepEqual(after, logits(fresh));
  opt.dispose();
  tied.dispose();
  untied.dispose();
  fresh.dispose();
}

/** A one-tensor safetensors file of 65536 raw 16-bit values. */
function serializeRaw(dtype: 'F16' | 'BF16', bits: Uint8Array): Uint8Array {
  const json = new TextEncoder().encode(
    JSON.stringify({ x: { dtype, shape: [65536], data_offsets: [0, bits.length] } }),
  );
  const out = new Uint8Array(8 + json.length + bits.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  out.set(bits, 8 + json.length);
  return out;
}
