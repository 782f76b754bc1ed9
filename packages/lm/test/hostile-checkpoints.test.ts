/**
 * Checkpoint folders written by an attacker (or corrupted): shard names that leave the folder, links and special
 * files, configs whose sizes would exhaust memory, safetensors headers out of bounds, non-finite weights. Every one
 * must be refused quickly with a CheckpointError naming the file (and the key or tensor), before any large allocation.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CausalLM,
  CheckpointError,
  initBackend,
  loadCheckpoint,
  loadLoraAdapter,
  loadTokenizer,
  saveLoraAdapter,
  tinyTokenizerDir,
  writeCheckpoint,
  MAX_SAFETENSORS_HEADER_BYTES,
  type SafeTensor,
} from '@troupe/lm';
import { TINY_QWEN3 } from './helpers/tiny-config.js';

const cfg = TINY_QWEN3;

/** Safetensors bytes with a header given as is (offsets, shapes and dtypes unchecked) and `dataBytes` of data. */
function rawFile(header: Record<string, unknown>, dataBytes: number, headerLength?: bigint): Uint8Array {
  const h = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + h.length + dataBytes);
  new DataView(out.buffer).setBigUint64(0, headerLength ?? BigInt(h.length), true);
  out.set(h, 8);
  return out;
}

const entry = (dtype: string, shape: unknown, offsets: unknown): Record<string, unknown> => ({
  dtype,
  shape,
  data_offsets: offsets,
});

interface Case {
  readonly name: string;
  /** Which base checkpoint to start from. */
  readonly base: 'single' | 'sharded' | 'adapter';
  /** Tampers with the copy in folder `d`. */
  readonly tamper: (d: string) => Promise<void>;
  /** The file the message must name, relative to the folder. */
  readonly names: string;
  readonly message: RegExp;
}

const INDEX = 'model.safetensors.index.json';

async function editJson(file: string, edit: (v: Record<string, unknown>) => void): Promise<void> {
  const v = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  edit(v);
  await writeFile(file, JSON.stringify(v));
}

/** Points the index's first tensor at `shard`. */
const shardName = (shard: unknown) => (d: string) =>
  editJson(join(d, INDEX), (v) => {
    const map = v.weight_map as Record<string, unknown>;
    map[Object.keys(map)[0]!] = shard;
  });

/** Replaces model.safetensors by raw bytes. */
const rawWeights = (bytes: Uint8Array) => (d: string) => writeFile(join(d, 'model.safetensors'), bytes);

/** Sets one value of one tensor of model.safetensors (F32, so at data offset + 4 * index). */
function poison(tensor: string, index: number, value: number) {
  return async (d: string): Promise<void> => {
    const buf = await readFile(join(d, 'model.safetensors'));
    const n = Number(buf.readBigUInt64LE(0));
    const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8')) as Record<
      string,
      { data_offsets: [number, number] }
    >;
    buf.writeFloatLE(value, 8 + n + header[tensor]!.data_offsets[0] + 4 * index);
    await writeFile(join(d, 'model.safetensors'), buf);
  };
}

const CASES: readonly Case[] = [
  // Shard names in model.safetensors.index.json.
  {
    name: 'a shard ../../etc/passwd',
    base: 'sharded',
    tamper: shardName('../../etc/passwd'),
    names: INDEX,
    message: /"\.\.\/\.\.\/etc\/passwd", which lies outside the folder/,
  },
  {
    name: 'a shard /dev/zero',
    base: 'sharded',
    tamper: shardName('/dev/zero'),
    names: INDEX,
    message: /"\/dev\/zero", which is an absolute path/,
  },
  {
    name: 'a shard /etc/passwd',
    base: 'sharded',
    tamper: shardName('/etc/passwd'),
    names: INDEX,
    message: /which is an absolute path/,
  },
  {
    name: 'a shard sub/../../x',
    base: 'sharded',
    tamper: shardName('sub/../../x.safetensors'),
    names: INDEX,
    message: /lies outside the folder/,
  },
  {
    name: 'a shard name that is not a string',
    base: 'sharded',
    tamper: shardName(42),
    names: INDEX,
    message: /must be a shard file name, got 42/,
  },
  { name: 'an empty shard name', base: 'sharded', tamper: shardName(''), names: INDEX, message: /is not a file name/ },
  {
    name: 'a shard linked to /etc/passwd',
    base: 'sharded',
    names: INDEX,
    message: /is a link to \/etc\/passwd, outside the folder/,
    tamper: async (d) => {
      await symlink('/etc/passwd', join(d, 'evil.safetensors'));
      await shardName('evil.safetensors')(d);
    },
  },
  {
    name: 'a shard linked to /dev/zero',
    base: 'sharded',
    names: INDEX,
    message: /is a link to \/dev\/zero, outside the folder/,
    tamper: async (d) => {
      await symlink('/dev/zero', join(d, 'zero.safetensors'));
      await shardName('zero.safetensors')(d);
    },
  },
  {
    name: 'a shard that is a FIFO',
    base: 'sharded',
    names: 'fifo.safetensors',
    message: /is a FIFO, not a regular file/,
    tamper: async (d) => {
      execFileSync('mkfifo', [join(d, 'fifo.safetensors')]);
      await shardName('fifo.safetensors')(d);
    },
  },
  {
    name: 'a shard that is a folder',
    base: 'sharded',
    names: 'dir.safetensors',
    message: /is a folder, not a regular file/,
    tamper: async (d) => {
      await mkdir(join(d, 'dir.safetensors'));
      await shardName('dir.safetensors')(d);
    },
  },
  {
    name: 'a shard that does not exist',
    base: 'sharded',
    tamper: shardName('gone.safetensors'),
    names: 'gone.safetensors',
    message: /no such file/,
  },
  // The fixed files of the folder.
  {
    name: 'model.safetensors linked to /dev/zero',
    base: 'single',
    names: 'model.safetensors',
    message: /is a link to \/dev\/zero, outside the folder/,
    tamper: async (d) => {
      await rm(join(d, 'model.safetensors'));
      await symlink('/dev/zero', join(d, 'model.safetensors'));
    },
  },
  {
    name: 'config.json linked outside the folder',
    base: 'single',
    names: 'config.json',
    message: /is a link to \/etc\/passwd, outside the folder/,
    tamper: async (d) => {
      await rm(join(d, 'config.json'));
      await symlink('/etc/passwd', join(d, 'config.json'));
    },
  },
  {
    name: 'a 17 MB config.json',
    base: 'single',
    names: 'config.json',
    message: /over the limit of 16 MB/,
    tamper: (d) => writeFile(join(d, 'config.json'), ' '.repeat(17 << 20)),
  },
  // config.json sizes.
  {
    name: 'num_hidden_layers: 1e9',
    base: 'single',
    names: 'config.json',
    message: /'num_hidden_layers' is 1000000000, over the largest supported value 1024/,
    tamper: (d) =>
      editJson(join(d, 'config.json'), (v) => {
        v.num_hidden_layers = 1e9;
      }),
  },
  {
    name: 'head_dim: 1e6',
    base: 'single',
    names: 'config.json',
    message: /'head_dim' is 1000000, over the largest supported value 1024/,
    tamper: (d) =>
      editJson(join(d, 'config.json'), (v) => {
        v.head_dim = 1e6;
      }),
  },
  {
    name: 'vocab_size: 1e300',
    base: 'single',
    names: 'config.json',
    message: /'vocab_size' is 1e\+300, over the largest supported value/,
    tamper: (d) =>
      editJson(join(d, 'config.json'), (v) => {
        v.vocab_size = 1e300;
      }),
  },
  {
    name: 'num_hidden_layers: 3 for 2 layers of weights',
    base: 'single',
    names: 'config.json',
    message: /'num_hidden_layers' is 3 but the weights have 2 layers \(model\.layers\.0 to 1\)/,
    tamper: (d) =>
      editJson(join(d, 'config.json'), (v) => {
        v.num_hidden_layers = 3;
      }),
  },
  {
    name: 'intermediate_size: 4096 for 24-wide weights',
    base: 'single',
    names: 'config.json',
    message:
      /'intermediate_size' 4096 give model\.layers\.0\.mlp\.gate_proj\.weight the shape \[4096, 16\] but the weights have \[24, 16\]/,
    tamper: (d) =>
      editJson(join(d, 'config.json'), (v) => {
        v.intermediate_size = 4096;
      }),
  },
  {
    name: 'num_attention_heads: 512 for 2 heads of weights',
    base: 'single',
    names: 'config.json',
    message: /'num_attention_heads' 512 and 'head_dim' 8 give/,
    tamper: (d) =>
      editJson(join(d, 'config.json'), (v) => {
        v.num_attention_heads = 512;
        v.num_key_value_heads = 1;
      }),
  },
  {
    name: 'rope_theta: 0',
    base: 'single',
    names: 'config.json',
    message: /'rope_theta' must be above 0/,
    tamper: (d) =>
      editJson(join(d, 'config.json'), (v) => {
        v.rope_theta = 0;
      }),
  },
  {
    name: 'bos_token_id outside the vocabulary',
    base: 'single',
    names: 'config.json',
    message: /'bos_token_id' is 1000000, not a token id of the vocabulary \(0 to 299\)/,
    tamper: (d) =>
      editJson(join(d, 'config.json'), (v) => {
        v.bos_token_id = 1e6;
      }),
  },
  // Safetensors headers.
  {
    name: 'a header length of 2^40',
    base: 'single',
    names: 'model.safetensors',
    message: new RegExp(`header length 1099511627776 is over the limit of ${MAX_SAFETENSORS_HEADER_BYTES} bytes`),
    tamper: rawWeights(rawFile({}, 0, 1n << 40n)),
  },
  {
    name: 'data offsets past the end',
    base: 'single',
    names: 'model.safetensors',
    message: /ends at byte 1099511627776 of the data but the file has only 16/,
    tamper: rawWeights(rawFile({ w: entry('F32', [4], [0, 2 ** 40]) }, 16)),
  },
  {
    name: 'data offsets beyond 2^53',
    base: 'single',
    names: 'model.safetensors',
    message: /tensor 'w' has invalid data_offsets/,
    tamper: rawWeights(rawFile({ w: entry('F32', [4], [0, 2 ** 60]) }, 16)),
  },
  {
    name: 'negative data offsets',
    base: 'single',
    names: 'model.safetensors',
    message: /tensor 'w' has invalid data_offsets \[-16,0\]/,
    tamper: rawWeights(rawFile({ w: entry('F32', [4], [-16, 0]) }, 16)),
  },
  {
    name: 'a fractional dimension',
    base: 'single',
    names: 'model.safetensors',
    message: /tensor 'w' has shape \[2\.5\]: dimensions must be non-negative integers/,
    tamper: rawWeights(rawFile({ w: entry('F32', [2.5], [0, 10]) }, 16)),
  },
  {
    name: 'a negative dimension',
    base: 'single',
    names: 'model.safetensors',
    message: /dimensions must be non-negative integers/,
    tamper: rawWeights(rawFile({ w: entry('F32', [-4, -1], [0, 16]) }, 16)),
  },
  {
    name: 'a shape of 2^48 values in 16 bytes',
    base: 'single',
    names: 'model.safetensors',
    message: /tensor 'w' spans 16 bytes but shape \[65536, 65536, 65536\] × F32 needs/,
    tamper: rawWeights(rawFile({ w: entry('F32', [65536, 65536, 65536], [0, 16]) }, 16)),
  },
  {
    name: 'overlapping tensors',
    base: 'single',
    names: 'model.safetensors',
    message: /tensors 'a' and 'b' overlap/,
    tamper: rawWeights(rawFile({ a: entry('F32', [4], [0, 16]), b: entry('F32', [2], [8, 16]) }, 16)),
  },
  {
    name: 'non-string metadata',
    base: 'single',
    names: 'model.safetensors',
    message: /__metadata__ must map names to strings/,
    tamper: rawWeights(rawFile({ __metadata__: { format: { nested: 1 } } }, 0)),
  },
  // Non-finite weights.
  {
    name: 'a NaN in model.norm.weight',
    base: 'single',
    names: 'model.safetensors',
    message: /tensor 'model\.norm\.weight' has 1 non-finite value \(the first, NaN, at index 3\)/,
    tamper: poison('model.norm.weight', 3, NaN),
  },
  {
    name: 'an Infinity in the embedding',
    base: 'single',
    names: 'model.safetensors',
    message: /tensor 'model\.embed_tokens\.weight' has 1 non-finite value \(the first, -Infinity, at index 100\)/,
    tamper: poison('model.embed_tokens.weight', 100, -Infinity),
  },
  // LoRA adapters.
  {
    name: 'an adapter with r: 1e9',
    base: 'adapter',
    names: 'adapter_config.json',
    message: /'r' must be an integer from 1 to 4096, got 1000000000/,
    tamper: (d) =>
      editJson(join(d, 'adapter_config.json'), (v) => {
        v.r = 1e9;
      }),
  },
  {
    name: 'an adapter linked outside the folder',
    base: 'adapter',
    names: 'adapter_model.safetensors',
    message: /is a link to \/dev\/zero, outside the folder/,
    tamper: async (d) => {
      await rm(join(d, 'adapter_model.safetensors'));
      await symlink('/dev/zero', join(d, 'adapter_model.safetensors'));
    },
  },
];

describe('hostile checkpoints', function () {
  this.timeout(30_000);
  let dir: string;
  let model: CausalLM;
  const bases: Record<Case['base'], string> = { single: '', sharded: '', adapter: '' };

  before(async () => {
    await initBackend();
    dir = await mkdtemp(join(tmpdir(), 'troupe-hostile-ck-'));
    model = CausalLM.random(cfg, 3);
    const tensors: Map<string, SafeTensor> = model.exportTensors();
    bases.single = join(dir, 'single');
    bases.sharded = join(dir, 'sharded');
    bases.adapter = join(dir, 'adapter');
    await writeCheckpoint(bases.single, cfg, tensors);
    await writeCheckpoint(bases.sharded, cfg, tensors, { maxShardBytes: 20_000 });
    model.addLora({ r: 2, alpha: 4, targetModules: ['q_proj'] }, 1);
    await saveLoraAdapter(bases.adapter, model);
  });
  after(async () => {
    model.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it('loads the untampered checkpoints', async () => {
    (await loadCheckpoint(bases.single)).dispose();
    (await loadCheckpoint(bases.sharded)).dispose();
    await loadLoraAdapter(bases.adapter, model);
  });

  it('follows links that stay inside the folder, and the Hugging Face hub cache layout (snapshots linking to blobs)', async () => {
    const inside = join(dir, 'inside');
    await cp(bases.single, inside, { recursive: true });
    await mkdir(join(inside, 'weights'));
    await rename(join(inside, 'model.safetensors'), join(inside, 'weights', 'real.safetensors'));
    await symlink(join('weights', 'real.safetensors'), join(inside, 'model.safetensors'));
    (await loadCheckpoint(inside)).dispose();

    const repo = join(dir, 'hub', 'models--org--tiny');
    const snapshot = join(repo, 'snapshots', '0123abcd');
    await mkdir(join(repo, 'blobs'), { recursive: true });
    await mkdir(snapshot, { recursive: true });
    for (const f of ['config.json', 'model.safetensors']) {
      await cp(join(bases.single, f), join(repo, 'blobs', `sha-${f}`));
      await symlink(join('..', '..', 'blobs', `sha-${f}`), join(snapshot, f));
    }
    (await loadCheckpoint(snapshot)).dispose();
  });

  it("reads a tokenizer folder's files under the same rules: inside the folder, regular", async () => {
    const d = join(dir, 'tokenizer');
    await cp(tinyTokenizerDir(), d, { recursive: true });
    await rm(join(d, 'tokenizer.json'));
    await symlink('/dev/zero', join(d, 'tokenizer.json'));
    await assert.rejects(
      loadTokenizer(d),
      (err: Error) =>
        err instanceof CheckpointError &&
        /tokenizer\.json: is a link to \/dev\/zero, outside the folder/.test(err.message),
    );
    await rm(join(d, 'tokenizer.json'));
    await cp(join(tinyTokenizerDir(), 'tokenizer.json'), join(d, 'tokenizer.json'));
    await rm(join(d, 'tokenizer_config.json'));
    execFileSync('mkfifo', [join(d, 'tokenizer_config.json')]);
    await assert.rejects(
      loadTokenizer(d),
      (err: Error) =>
        err instanceof CheckpointError && /tokenizer_config\.json: is a FIFO, not a regular file/.test(err.message),
    );
  });

  it(`refuses ${CASES.length} hostile checkpoints, each with a CheckpointError naming the file`, async () => {
    const failures: string[] = [];
    for (const [i, c] of CASES.entries()) {
      const d = join(dir, `case-${i}`);
      await cp(bases[c.base], d, { recursive: true });
      await c.tamper(d);
      let error: unknown;
      try {
        if (c.base === 'adapter') await loadLoraAdapter(d, model);
        else (await loadCheckpoint(d)).dispose();
      } catch (err) {
        error = err;
      }
      const message = error instanceof Error ? error.message : String(error);
      if (error === undefined) failures.push(`${c.name}: loaded`);
      else if (!(error instanceof CheckpointError))
        failures.push(`${c.name}: not a CheckpointError: ${(error as Error).stack}`);
      else if (!message.includes(join(d, c.names))) failures.push(`${c.name}: does not name ${c.names}: ${message}`);
      else if (!c.message.test(message)) failures.push(`${c.name}: ${message} does not match ${c.message}`);
    }
    assert.deepEqual(failures, []);
  });
});
