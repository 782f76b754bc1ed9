/**
 * Policy versions for the distributed engine. Before each step's jobs the trainer publishes the weights they play
 * with — every trainable policy's, as a checkpoint (the same writer and layout as the run's checkpoints: `<policy>/`
 * in the HF layout, or the PEFT adapter of a LoRA policy) — into `<shared>/step-<n>/`, atomically (a temporary
 * folder renamed), and prunes older versions. Workers load a version once per team they keep (see play-job.ts).
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { saveCheckpoint, saveLoraAdapter } from '@troupe/lm';
import type { PolicyHandle } from '../policies.js';
import { restoreWeights } from '../state.js';
import type { PolicyVersions } from './job.js';

/** A version a worker cannot read: the job fails at once (no retry), and the trainer records why. */
export class VersionUnreadableError extends Error {
  readonly unrecoverable = true;
  constructor(message: string) {
    super(message);
    this.name = 'VersionUnreadableError';
  }
}

/** Publishes and prunes the versions of one run's policies under `root` (see the module comment). */
export class VersionPublisher {
  private published: { step: number; versions: PolicyVersions } | undefined;

  constructor(
    /** The shared folder (default `<run>/policies`). */
    readonly root: string,
    private readonly handles: readonly PolicyHandle[],
    /** Versions kept (the newest ones). */
    private readonly keep = 2,
  ) {}

  /** The weights as they are now, published as `step-<step>` (once per step); returns what jobs name. */
  async publish(step: number): Promise<PolicyVersions> {
    if (this.published?.step === step) return this.published.versions;
    const trainable = this.handles.filter((h) => h.trainable);
    const versions = Object.fromEntries(trainable.map((h) => [h.name, h.trainable!.version]));
    if (trainable.length === 0) return (this.published = { step, versions: { versions } }).versions;
    await mkdir(this.root, { recursive: true });
    const target = join(this.root, `step-${step}`);
    const tmp = join(this.root, `.step-${step}.tmp-${process.pid}`);
    await rm(tmp, { recursive: true, force: true });
    try {
      for (const h of trainable) {
        const lm = h.trainable!;
        if (h.lora) await saveLoraAdapter(join(tmp, h.name), lm.model);
        else await saveCheckpoint(join(tmp, h.name), lm.model, { tokenizerDir: lm.tokenizer.dir, dtype: 'F32' });
      }
      await rm(target, { recursive: true, force: true });
      await rename(tmp, target);
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      throw err;
    }
    await this.prune(step);
    this.published = { step, versions: { dir: target, versions } };
    return this.published.versions;
  }

  private async prune(newest: number): Promise<void> {
    const steps = (await readdir(this.root))
      .map((f) => /^step-(\d+)$/.exec(f))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .filter((s) => s <= newest)
      .sort((a, b) => b - a);
    for (const s of steps.slice(this.keep)) await rm(join(this.root, `step-${s}`), { recursive: true, force: true });
  }
}

/**
 * Loads a published version into a team's policy handles and sets their version counters; a version that is missing
 * or does not fit the team is a {@link VersionUnreadableError}.
 */
export async function loadVersion(handles: readonly PolicyHandle[], v: PolicyVersions): Promise<void> {
  if (v.dir !== undefined) {
    if (!existsSync(v.dir))
      throw new VersionUnreadableError(
        `policy version ${v.dir} is not there: the worker must see the trainer's shared folder at the same path (execution.checkpoints / --shared), and the version may have been pruned`,
      );
    try {
      await restoreWeights(v.dir, handles);
    } catch (err) {
      throw new VersionUnreadableError(`policy version ${v.dir} cannot be loaded: ${(err as Error).message}`);
    }
  }
  for (const h of handles) {
    const n = v.versions[h.name];
    if (h.trainable && n !== undefined) h.trainable.version = n;
  }
}
