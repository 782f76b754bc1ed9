/**
 * Hugging Face-layout checkpoints: `config.json`, `model.safetensors` (or shards listed in
 * `model.safetensors.index.json`), and the tokenizer files. A checkpoint trained here loads in PyTorch, and a real
 * checkpoint downloaded by a user loads here. Files are read by ranges (any size). Writes are atomic: the whole folder is
 * written to a temporary sibling and renamed into place, so a half-written folder of shards is never a checkpoint.
 * Weights larger than a shard (2 GB by default, like transformers' `max_shard_size`) are split into
 * `model-0000i-of-0000N.safetensors` with the `model.safetensors.index.json` Hugging Face tools read. Each tensor keeps
 * the dtype it was loaded in (F16/BF16 stay 16-bit on disk) unless the writer is told a dtype.
 */
import { copyFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { writeFileAtomic } from '@troupe/kernel';
import { CheckpointError } from '../checkpoint/errors.js';
import { checkpointFile, MAX_JSON_BYTES, readCheckpointFile } from '../checkpoint/files.js';
import {
  readSafetensors,
  storedBytes,
  writeSafetensors,
  type SafeTensor,
  type StoredDtype,
} from '../checkpoint/safetensors.js';
import { CausalLM } from './model.js';
import { syncReadable } from '../backend/index.js';
import { checkConfigAgainstTensors, parseHfConfig } from './config.js';

/** Tokenizer and generation files copied along with a checkpoint when present. */
export const TOKENIZER_FILES = [
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'vocab.json',
  'merges.txt',
  'added_tokens.json',
  'generation_config.json',
  'chat_template.jinja',
  'chat_template.json',
] as const;

/** A checkpoint read into host memory. */
export interface CheckpointData {
  /** The folder. */
  readonly dir: string;
  /** The parsed config.json. */
  readonly config: Record<string, unknown>;
  /** Every tensor, as float32, by name. */
  readonly tensors: Map<string, SafeTensor>;
}

/** Default largest shard written: 2 GB (10^9 bytes, like transformers' `max_shard_size="2GB"`). */
export const DEFAULT_MAX_SHARD_BYTES = 2_000_000_000;

/** The dtype each tensor of a loaded model was stored in, by Hugging Face name (kept for its saves). */
const loadedDtypes = new WeakMap<CausalLM, ReadonlyMap<string, StoredDtype>>();

/** The dtypes model's tensors were stored in when it was loaded by {@link loadCheckpoint} (empty for other models). */
export function storedDtypesOf(model: CausalLM): ReadonlyMap<string, StoredDtype> {
  return loadedDtypes.get(model) ?? new Map();
}

/** Hugging Face's `torch_dtype` name of a stored dtype. */
const TORCH_DTYPE: Record<StoredDtype, string> = { F32: 'float32', F16: 'float16', BF16: 'bfloat16' };

/** Largest LoRA rank accepted from an adapter_config.json (released adapters use 4 to 256). */
const MAX_LORA_RANK = 4096;

async function readJson(dir: string, name: string, what: string): Promise<Record<string, unknown>> {
  const path = join(dir, name);
  const text = (await readCheckpointFile(dir, name, MAX_JSON_BYTES)).toString('utf8');
  try {
    const v = JSON.parse(text) as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not a JSON object');
    return v as Record<string, unknown>;
  } catch (err) {
    throw new CheckpointError(`${path}: invalid JSON in ${what} (${(err as Error).message})`);
  }
}

/** Refuses tensors with NaN or ±Infinity values, naming the file and the tensor. */
function assertFinite(tensors: ReadonlyMap<string, SafeTensor>, file: string): void {
  for (const [name, t] of tensors) {
    const d = t.data;
    for (let i = 0; i < d.length; i++) {
      if (Number.isFinite(d[i]!)) continue;
      let bad = 0;
      for (let j = i; j < d.length; j++) if (!Number.isFinite(d[j]!)) bad++;
      throw new CheckpointError(
        `${file}: tensor '${name}' has ${bad} non-finite value${bad === 1 ? '' : 's'} (the first, ${d[i]}, at index ${i}): the weights are corrupt or training diverged; load an earlier checkpoint`,
      );
    }
  }
}

/** The weight files of a checkpoint folder: its config and each safetensors file with the tensors it is to give. */
export interface CheckpointFiles {
  /** The folder (resolved). */
  readonly dir: string;
  /** The parsed config.json. */
  readonly config: Record<string, unknown>;
  /**
   * Each weight file: its name in the folder, its real path (checked to stay inside the folder), and the tensors the
   * shard index assigns to it (absent for a single `model.safetensors`: all of its tensors).
   */
  readonly files: readonly { readonly name: string; readonly path: string; readonly tensors?: readonly string[] }[];
  /** The file that lists the shards (the index), or the folder for a single file. */
  readonly listedBy: string;
}

/**
 * Finds config.json and the weight files of a checkpoint folder (single file or sharded), reading no tensor. Every
 * shard name of an index is checked before anything is read. Errors name the file.
 */
export async function checkpointFiles(dir: string): Promise<CheckpointFiles> {
  const d = resolve(dir);
  if (!existsSync(d)) throw new CheckpointError(`checkpoint folder ${d} does not exist`);
  const config = await readJson(d, 'config.json', 'the model config');
  const single = join(d, 'model.safetensors');
  const index = join(d, 'model.safetensors.index.json');
  if (existsSync(single))
    return {
      dir: d,
      config,
      files: [{ name: 'model.safetensors', path: await checkpointFile(d, 'model.safetensors', d) }],
      listedBy: d,
    };
  if (!existsSync(index))
    throw new CheckpointError(
      `${d}: no model.safetensors or model.safetensors.index.json (only safetensors checkpoints are supported)`,
    );
  const idx = await readJson(d, 'model.safetensors.index.json', 'the shard index');
  const map = idx.weight_map as Record<string, unknown> | undefined;
  if (!map || typeof map !== 'object' || Array.isArray(map))
    throw new CheckpointError(`${index}: missing 'weight_map' (tensor names to shard files)`);
  const byShard = new Map<string, string[]>();
  for (const [name, shard] of Object.entries(map)) {
    if (typeof shard !== 'string')
      throw new CheckpointError(
        `${index}: weight_map['${name}'] must be a shard file name, got ${JSON.stringify(shard)}`,
      );
    if (!byShard.has(shard)) byShard.set(shard, []);
    byShard.get(shard)!.push(name);
  }
  const files = [];
  for (const [shard, tensors] of byShard)
    files.push({ name: shard, path: await checkpointFile(d, shard, index), tensors });
  return { dir: d, config, files, listedBy: index };
}

/** Reads config.json and all tensors of a checkpoint folder (single file or sharded). Errors name the file. */
export async function readCheckpoint(dir: string): Promise<CheckpointData> {
  const { dir: d, config, files, listedBy } = await checkpointFiles(dir);
  const tensors = new Map<string, SafeTensor>();
  for (const f of files) {
    const st = (await readSafetensors(f.path)).tensors;
    assertFinite(st, join(d, f.name));
    if (!f.tensors) {
      for (const [k, v] of st) tensors.set(k, v);
      continue;
    }
    for (const name of f.tensors) {
      const t = st.get(name);
      if (!t)
        throw new CheckpointError(
          `${join(d, f.name)}: tensor '${name}' is listed in ${basename(listedBy)} but not in the shard`,
        );
      tensors.set(name, t);
    }
  }
  return { dir: d, config, tensors };
}

/** A map whose entries are forgotten as they are read (`get`): each value is handed over exactly once. */
class ReadOnce<K, V> extends Map<K, V> {
  override get(key: K): V | undefined {
    const v = super.get(key);
    this.delete(key);
    return v;
  }
}

/**
 * Loads a checkpoint folder into a `CausalLM`. The config is checked against the weights' shapes before anything is
 * allocated from it. Errors name the folder, file, tensor or key.
 */
export async function loadCheckpoint(dir: string): Promise<CausalLM> {
  const ck = await readCheckpoint(dir);
  const where = join(ck.dir, 'config.json');
  try {
    checkConfigAgainstTensors(parseHfConfig(ck.config, where), ck.tensors, where);
    const dtypes = new Map([...ck.tensors].map(([name, t]) => [name, t.dtype ?? 'F32'] as const));
    // The model transposes its linear weights into new arrays: handing it tensors it reads once (and that nothing
    // else holds) frees each original as soon as it is copied, so loading peaks near the float32 weights, not twice.
    const once = new ReadOnce(ck.tensors);
    ck.tensors.clear();
    const model = CausalLM.fromTensors(ck.config, once, ck.dir);
    loadedDtypes.set(model, dtypes);
    return model;
  } catch (err) {
    // The config's and the tensors' problems name the checkpoint: they are the user's to fix, not internal errors.
    if (err instanceof Error && !(err instanceof CheckpointError) && err.message.startsWith(ck.dir))
      throw new CheckpointError(err.message);
    throw err;
  }
}

/** Options of `saveCheckpoint`. */
export interface SaveCheckpointOptions {
  /** Folder whose tokenizer files (`TOKENIZER_FILES`) are copied into the checkpoint. */
  readonly tokenizerDir?: string;
  /**
   * Split weights into shards of at most this many bytes on disk (with model.safetensors.index.json); a tensor larger
   * than this gets a shard of its own. Default {@link DEFAULT_MAX_SHARD_BYTES}; `Infinity` writes one file whatever
   * the size. Weights that fit one shard are one `model.safetensors`.
   */
  readonly maxShardBytes?: number;
  /**
   * Store every tensor in this dtype. By default each tensor keeps its own (`SafeTensor.dtype`; for
   * {@link saveCheckpoint}, the dtype it was loaded in), F32 when it has none. F32 keeps trained weights exact.
   */
  readonly dtype?: StoredDtype;
  /** Extra keys merged into config.json. */
  readonly configExtra?: Record<string, unknown>;
}

/** Replaces folder `target` by folder `tmp` (rename; the old one, if any, is moved aside first then removed). */
async function swapInto(tmp: string, target: string): Promise<void> {
  if (existsSync(target)) {
    const old = join(dirname(target), `.${basename(target)}.old-${randomBytes(4).toString('hex')}`);
    await rename(target, old);
    try {
      await rename(tmp, target);
    } catch (err) {
      await rename(old, target).catch(() => undefined);
      throw err;
    }
    await rm(old, { recursive: true, force: true });
  } else {
    await rename(tmp, target);
  }
}

/**
 * Writes tensors + config (+ tokenizer files) as a Hugging Face-layout folder, atomically: everything goes to a
 * temporary sibling folder that is renamed over `dir` at the end.
 */
export async function writeCheckpoint(
  dir: string,
  config: Record<string, unknown>,
  tensors: ReadonlyMap<string, SafeTensor>,
  options: SaveCheckpointOptions = {},
): Promise<void> {
  const target = resolve(dir);
  await mkdir(dirname(target), { recursive: true });
  if (existsSync(target) && !(await stat(target)).isDirectory())
    throw new Error(`${target} exists and is not a folder`);
  const tmp = join(dirname(target), `.${basename(target)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(tmp, { recursive: true });
  try {
    const cfg = {
      ...config,
      ...(options.configExtra ?? {}),
      torch_dtype: TORCH_DTYPE[mainDtype(tensors, options.dtype)],
    };
    await writeFileAtomic(join(tmp, 'config.json'), JSON.stringify(cfg, null, 2) + '\n');
    const max = options.maxShardBytes ?? DEFAULT_MAX_SHARD_BYTES;
    if (!(max > 0)) throw new Error(`writeCheckpoint: maxShardBytes must be a positive number of bytes, got ${max}`);
    const shards: Map<string, SafeTensor>[] = [];
    let cur = new Map<string, SafeTensor>();
    let bytes = 0;
    let total = 0;
    for (const [name, t] of tensors) {
      const b = storedBytes(t, options.dtype);
      if (cur.size > 0 && bytes + b > max) {
        shards.push(cur);
        cur = new Map();
        bytes = 0;
      }
      cur.set(name, t);
      bytes += b;
      total += b;
    }
    if (cur.size > 0 || shards.length === 0) shards.push(cur);
    const write = { dtype: options.dtype };
    if (shards.length === 1) {
      await writeSafetensors(join(tmp, 'model.safetensors'), shards[0]!, { format: 'pt' }, write);
    } else {
      const n = shards.length;
      const weightMap: Record<string, string> = {};
      for (let i = 0; i < n; i++) {
        const file = `model-${String(i + 1).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.safetensors`;
        for (const name of shards[i]!.keys()) weightMap[name] = file;
        await writeSafetensors(join(tmp, file), shards[i]!, { format: 'pt' }, write);
      }
      await writeFileAtomic(
        join(tmp, 'model.safetensors.index.json'),
        JSON.stringify({ metadata: { total_size: total }, weight_map: weightMap }, null, 2) + '\n',
      );
    }
    if (options.tokenizerDir) {
      let copied = 0;
      for (const f of TOKENIZER_FILES) {
        const src = join(options.tokenizerDir, f);
        if (existsSync(src)) {
          await copyFile(src, join(tmp, f));
          copied++;
        }
      }
      if (copied === 0)
        throw new Error(`tokenizer folder ${options.tokenizerDir} has none of ${TOKENIZER_FILES.join(', ')}`);
    }
    await swapInto(tmp, target);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}

/** Saves a model as a Hugging Face-layout checkpoint folder (see `writeCheckpoint`). LoRA adapters are not merged. */
export async function saveCheckpoint(dir: string, model: CausalLM, options: SaveCheckpointOptions = {}): Promise<void> {
  const stored = storedDtypesOf(model);
  const tensors = new Map<string, SafeTensor>();
  await syncReadable([...model.params.values()]);
  for (const [name, t] of model.exportTensors()) tensors.set(name, { ...t, dtype: stored.get(name) ?? 'F32' });
  await writeCheckpoint(dir, model.hfConfig, tensors, options);
}

/** The dtype most of the weights are stored in: the checkpoint's `torch_dtype`. */
function mainDtype(tensors: ReadonlyMap<string, SafeTensor>, forced: StoredDtype | undefined): StoredDtype {
  if (forced) return forced;
  const values: Record<StoredDtype, number> = { F32: 0, F16: 0, BF16: 0 };
  for (const t of tensors.values()) values[t.dtype ?? 'F32'] += t.data.length;
  return (Object.keys(values) as StoredDtype[]).reduce((a, b) => (values[b] > values[a] ? b : a), 'F32');
}

/** PEFT tensor name of a LoRA matrix: `base_model.model.<module>.lora_A.weight`. */
export function peftTensorName(module: string, which: 'A' | 'B'): string {
  return `base_model.model.${module}.lora_${which}.weight`;
}

/**
 * Saves the model's LoRA adapters in PEFT layout: `adapter_config.json` + `adapter_model.safetensors`
 * (`base_model.model.<module>.lora_A.weight` `[r, in]`, `lora_B.weight` `[out, r]`). Atomic like checkpoints.
 */
export async function saveLoraAdapter(
  dir: string,
  model: CausalLM,
  options: { baseModel?: string } = {},
): Promise<void> {
  const cfg = model.loraConfig;
  if (!cfg || model.lora.size === 0)
    throw new Error('saveLoraAdapter: the model has no LoRA adapters (call addLora first)');
  const tensors = new Map<string, SafeTensor>();
  await syncReadable([...model.lora.values()].flatMap((p) => [p.a, p.b]));
  for (const [mod, { a, b }] of model.exportLora()) {
    tensors.set(peftTensorName(mod, 'A'), a);
    tensors.set(peftTensorName(mod, 'B'), b);
  }
  const adapterConfig = {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    r: cfg.r,
    lora_alpha: cfg.alpha,
    lora_dropout: 0.0,
    target_modules: [...cfg.targetModules],
    bias: 'none',
    fan_in_fan_out: false,
    inference_mode: true,
    base_model_name_or_path: options.baseModel ?? null,
    modules_to_save: null,
  };
  const target = resolve(dir);
  await mkdir(dirname(target), { recursive: true });
  const tmp = join(dirname(target), `.${basename(target)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(tmp, { recursive: true });
  try {
    await writeFileAtomic(join(tmp, 'adapter_config.json'), JSON.stringify(adapterConfig, null, 2) + '\n');
    await writeSafetensors(join(tmp, 'adapter_model.safetensors'), tensors, { format: 'pt' });
    await swapInto(tmp, target);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Loads a PEFT LoRA adapter folder onto `model` (replacing any attached adapters). Errors name the file and tensor.
 */
export async function loadLoraAdapter(dir: string, model: CausalLM): Promise<void> {
  const d = resolve(dir);
  const cfgPath = join(d, 'adapter_config.json');
  const cfg = await readJson(d, 'adapter_config.json', 'the adapter config');
  if (cfg.peft_type !== undefined && cfg.peft_type !== 'LORA')
    throw new CheckpointError(`${cfgPath}: peft_type ${JSON.stringify(cfg.peft_type)} is not supported (only LORA)`);
  const r = cfg.r,
    alpha = cfg.lora_alpha,
    targets = cfg.target_modules;
  if (typeof r !== 'number' || !Number.isInteger(r) || r < 1 || r > MAX_LORA_RANK)
    throw new CheckpointError(
      `${cfgPath}: 'r' must be an integer from 1 to ${MAX_LORA_RANK}, got ${JSON.stringify(r)}`,
    );
  if (typeof alpha !== 'number' || !Number.isFinite(alpha))
    throw new CheckpointError(`${cfgPath}: 'lora_alpha' must be a finite number, got ${JSON.stringify(alpha)}`);
  if (!Array.isArray(targets) || !targets.every((t) => typeof t === 'string'))
    throw new CheckpointError(`${cfgPath}: 'target_modules' must be a list of module names`);
  if (cfg.use_rslora === true || cfg.use_dora === true)
    throw new CheckpointError(`${cfgPath}: rsLoRA and DoRA are not supported`);
  const file = join(d, 'adapter_model.safetensors');
  const st = await readSafetensors(await checkpointFile(d, 'adapter_model.safetensors', d));
  assertFinite(st.tensors, file);
  if (model.lora.size > 0) model.removeLora();
  model.addLora({ r, alpha, targetModules: targets as string[] });
  try {
    for (const mod of model.lora.keys()) {
      const a =
        st.tensors.get(peftTensorName(mod, 'A')) ?? st.tensors.get(`base_model.model.${mod}.lora_A.default.weight`);
      const b =
        st.tensors.get(peftTensorName(mod, 'B')) ?? st.tensors.get(`base_model.model.${mod}.lora_B.default.weight`);
      if (!a) throw new CheckpointError(`${file}: tensor '${peftTensorName(mod, 'A')}' is missing`);
      if (!b) throw new CheckpointError(`${file}: tensor '${peftTensorName(mod, 'B')}' is missing`);
      model.setLoraPair(mod, a, b);
    }
  } catch (err) {
    model.removeLora();
    throw new CheckpointError(`${(err as Error).message.startsWith(file) ? '' : file + ': '}${(err as Error).message}`);
  }
}
