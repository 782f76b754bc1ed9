/**
 * Crash-safe training state. `checkpoints/step-N/` holds, after step N completed:
 *
 * ```
 * checkpoints/step-N/
 *   <policy>/                     HF layout (config.json, model.safetensors, tokenizer files) — or, for LoRA
 *                                 policies, the PEFT adapter (adapter_config.json, adapter_model.safetensors)
 *   trainer/<policy>.optimizer.safetensors   AdamW moments m.<i>, v.<i> (i: trainable variable index)
 *   trainer-state.json            step, policy versions, optimizer step counts, RNG state, config digest
 * ```
 *
 * The folder is written under a temporary name and renamed into place, so a `kill -9` at any moment leaves either
 * the complete step-N folder or none. The JSONL logs are appended BEFORE the checkpoint; on resume, records of steps
 * after the checkpoint are truncated away (see {@link truncateJsonl}).
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { loadCheckpoint, loadLoraAdapter, saveCheckpoint, saveLoraAdapter } from '../checkpoint/hf.js';
import { readSafetensors, writeSafetensors, type SafeTensor } from '../checkpoint/safetensors.js';
import { writeFileAtomic } from '../util/atomic.js';
import type { InstanceScheduleState } from './instances.js';
import { optimizerMoments, type PolicyHandle } from './policies.js';

/** A problem with a run folder or its checkpoints that the user can fix (the message says how). */
export class RunFolderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckpointError'; // user-facing: the CLI prints the message without a stack
  }
}

/** trainer-state.json. */
export interface TrainerState {
  /** Format version. */
  readonly format: 1;
  /** Training steps completed (0: after the warm start, before any RL step). */
  readonly step: number;
  /** Policy versions by name. */
  readonly versions: Record<string, number>;
  /** AdamW step counts by policy (absent: no optimizer yet). */
  readonly optimizerSteps: Record<string, number>;
  /** The trainer's RNG state (mini-batch shuffling). */
  readonly rng: number[];
  /** Whether the warm start has run. */
  readonly warmStarted: boolean;
  /**
   * The team spec's name and seed (resume refuses a different run), and the spec file the run was trained from
   * (absolute; absent for a spec without a file, and in checkpoints written before it was recorded): `troupe eval
   * --checkpoint` without a SPEC evaluates the run's own team.
   */
  readonly run: { readonly name: string; readonly seed: number; readonly spec?: string };
  /** The train-instance schedule (fresh index and replay queue); absent in checkpoints written before it existed. */
  readonly instances?: InstanceScheduleState;
}

/** Name of a step's checkpoint folder. */
export function checkpointName(step: number): string {
  return `step-${step}`;
}

/**
 * Writes `dir/checkpoints/step-N` atomically and removes all but the newest `keep` step folders — except step 0 of a
 * warm-started run (`state.warmStarted`), the warm start itself, which stays.
 */
export async function saveTrainerCheckpoint(root: string, handles: readonly PolicyHandle[], state: TrainerState, keep: number): Promise<string> {
  const base = join(root, 'checkpoints');
  await mkdir(base, { recursive: true });
  const target = join(base, checkpointName(state.step));
  const tmp = join(base, `.${checkpointName(state.step)}.tmp-${process.pid}`);
  await rm(tmp, { recursive: true, force: true });
  await mkdir(join(tmp, 'trainer'), { recursive: true });
  try {
    for (const h of handles) {
      const lm = h.trainable;
      if (!lm) continue;
      if (h.lora) await saveLoraAdapter(join(tmp, h.name), lm.model);
      else await saveCheckpoint(join(tmp, h.name), lm.model, { tokenizerDir: lm.tokenizer.dir });
      if (h.optimizer) {
        const { m, v } = optimizerMoments(h.optimizer);
        const tensors = new Map<string, SafeTensor>();
        m.forEach((x, i) => tensors.set(`m.${i}`, { shape: x.shape, data: new Float32Array(x.dataSync() as Float32Array) }));
        v.forEach((x, i) => tensors.set(`v.${i}`, { shape: x.shape, data: new Float32Array(x.dataSync() as Float32Array) }));
        await writeSafetensors(join(tmp, 'trainer', `${h.name}.optimizer.safetensors`), tensors, { step: String(h.optimizer.stepCount) });
      }
    }
    await writeFileAtomic(join(tmp, 'trainer-state.json'), JSON.stringify(state, null, 2) + '\n');
    await rm(target, { recursive: true, force: true });
    await rename(tmp, target);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
  // The step-0 checkpoint of a warm-started run is its warm start: the model RL started from, kept for comparisons.
  const steps = (await listCheckpoints(root)).filter((s) => !(s === 0 && state.warmStarted));
  for (const s of steps.slice(0, Math.max(0, steps.length - keep))) await rm(join(base, checkpointName(s)), { recursive: true, force: true });
  return target;
}

/** Steps of the complete checkpoints under `root/checkpoints`, ascending. */
export async function listCheckpoints(root: string): Promise<number[]> {
  const base = join(root, 'checkpoints');
  if (!existsSync(base)) return [];
  const out: number[] = [];
  for (const e of await readdir(base)) {
    const m = /^step-(\d+)$/.exec(e);
    if (m && existsSync(join(base, e, 'trainer-state.json'))) out.push(Number(m[1]));
  }
  return out.sort((a, b) => a - b);
}

/** Reads a checkpoint's trainer-state.json. */
export async function readTrainerState(dir: string): Promise<TrainerState> {
  const file = join(dir, 'trainer-state.json');
  try {
    return JSON.parse(await readFile(file, 'utf8')) as TrainerState;
  } catch (err) {
    throw new RunFolderError(`${file}: cannot read the trainer state (${(err as Error).message}); delete this checkpoint folder to resume from the previous one.`);
  }
}

/**
 * Loads the weights of every trainable policy from a checkpoint folder (in place: the policies' variables keep their
 * identity, except LoRA adapters, which are replaced — so call this BEFORE creating optimizers).
 */
export async function restoreWeights(dir: string, handles: readonly PolicyHandle[]): Promise<void> {
  for (const h of handles) {
    const lm = h.trainable;
    if (!lm) continue;
    const pdir = join(dir, h.name);
    if (!existsSync(pdir)) throw new RunFolderError(`checkpoint ${dir} has no folder for policy '${h.name}'; it was written by a different team spec.`);
    if (h.lora) {
      await loadLoraAdapter(pdir, lm.model);
      continue;
    }
    const saved = await loadCheckpoint(pdir);
    try {
      for (const [name, v] of lm.model.params) {
        const src = saved.params.get(name);
        if (!src) throw new Error(`${pdir}: tensor '${name}' is missing`);
        v.assign(src);
      }
    } finally {
      saved.dispose();
    }
  }
}

/** Loads each optimizer's moments and step count (optimizers must exist, over the restored variables). */
export async function restoreOptimizers(dir: string, handles: readonly PolicyHandle[], state: TrainerState): Promise<void> {
  for (const h of handles) {
    if (!h.optimizer) continue;
    const file = join(dir, 'trainer', `${h.name}.optimizer.safetensors`);
    const steps = state.optimizerSteps[h.name];
    if (!existsSync(file) || steps === undefined) continue; // saved before its first update
    const st = await readSafetensors(file);
    const { m, v } = optimizerMoments(h.optimizer);
    const put = (vars: tf.Variable[], prefix: string): void => {
      vars.forEach((x, i) => {
        const t = st.tensors.get(`${prefix}.${i}`);
        if (!t || t.data.length !== x.size) throw new Error(`${file}: moment '${prefix}.${i}' is missing or has the wrong size; the checkpoint does not match this team spec.`);
        tf.tidy(() => x.assign(tf.tensor(t.data, x.shape, 'float32')));
      });
    };
    put(m, 'm');
    put(v, 'v');
    h.optimizer.stepCount = steps;
  }
}

/**
 * Keeps only the records of a JSONL file whose `step` is at most `maxStep` and whose `kind` is not in `dropKinds`
 * (and drops a torn last line). Rewrites the file atomically. Records without a numeric `step` are kept.
 */
export async function truncateJsonl(file: string, maxStep: number, dropKinds: readonly string[] = []): Promise<number> {
  if (!existsSync(file)) return 0;
  const text = await readFile(file, 'utf8');
  const kept: string[] = [];
  let dropped = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let rec: { step?: unknown; kind?: unknown };
    try {
      rec = JSON.parse(line) as { step?: unknown; kind?: unknown };
    } catch {
      dropped++;
      continue;
    }
    if ((typeof rec.step === 'number' && rec.step > maxStep) || (typeof rec.kind === 'string' && dropKinds.includes(rec.kind))) {
      dropped++;
      continue;
    }
    kept.push(line);
  }
  if (dropped > 0) await writeFileAtomic(file, kept.map((l) => l + '\n').join(''));
  return dropped;
}
