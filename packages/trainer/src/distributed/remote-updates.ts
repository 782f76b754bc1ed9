/**
 * The trainer side of update pools (`execution.updatePools`): a policy with one has each step's RL update run as an
 * update job (update-job.ts) by a `troupe worker --pool <pool>`, all such policies at once, each in its own pool. The
 * trainer writes the version the update starts from when the shared folder does not hold its current state (the first
 * update, after a resume), sends the plan PolicyUpdates built, and loads the version the worker wrote into the
 * policy's main-thread model and optimizer — what rollouts, evaluations and checkpoints read, exactly as the threaded
 * path (update-thread.ts) does. A LoRA policy's versions hold its adapter only: its job names the team, whose base the
 * worker loads once and keeps, and the result's adapter is assigned to the policy's own adapter variables.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { TrainingSettingError, type TeamSpec, type TrainerConfig } from '@troupe/kernel';
import type { DispatchJob } from '@troupe/scale-out';
import { currentBackend, saveCheckpoint, syncReadable } from '@troupe/lm';
import { ensureOptimizer, type PolicyHandle } from '../policies.js';
import type { UpdateJob, UpdateOptimizerOptions } from '../update-thread.js';
import { assignOptimizerState, optimizerState } from '../update-thread.js';
import type { DistributedRollouts } from './engine.js';
import {
  assignAdapterTensors,
  readUpdateVersion,
  updateFolder,
  updateJobKey,
  writeUpdateVersion,
  type UpdateJobPayload,
} from './update-job.js';

/** Runs the updates of the policies with an update pool on workers (see the module comment). */
export class RemoteUpdates {
  /** By policy: the version folder that holds the trainer's current weights and optimizer state. */
  private readonly held = new Map<string, { dir: string; version: number }>();
  /** By policy: its published frozen reference (KL penalty only). */
  private readonly references = new Map<string, string>();

  constructor(
    private readonly engine: Pick<DistributedRollouts, 'runId' | 'runUpdates'>,
    /** The shared folder of policy versions. */
    private readonly root: string,
    /** Update pool of each policy. */
    readonly pools: Readonly<Record<string, string>>,
    /** The team (resolved spec and settings): what a LoRA policy's job sends for its worker to load the base from. */
    private readonly team: { readonly spec: TeamSpec; readonly config: TrainerConfig },
  ) {}

  /**
   * Runs these policies' updates of step `step` on their pools' workers, at once, then loads each result into the
   * policy's model and optimizer. Returns each policy's update statistics. Throws a {@link TrainingSettingError}
   * (user-facing) naming the policy and the pool when a job failed (after its attempts) or its result does not fit
   * the policy.
   */
  async update(
    step: number,
    updates: readonly { readonly handle: PolicyHandle; readonly job: UpdateJob }[],
  ): Promise<Record<string, Record<string, number>>> {
    const jobs: DispatchJob<UpdateJobPayload>[] = [];
    for (const { handle: h, job } of updates) {
      const pool = this.pools[h.name]!;
      jobs.push({
        key: updateJobKey(this.engine.runId, step, h.name),
        payload: await this.payload(h, step, job),
        pool,
      });
    }
    const got = await this.engine.runUpdates(step, jobs);
    const stats: Record<string, Record<string, number>> = {};
    const failures: string[] = [];
    for (const { handle: h } of updates) {
      const key = updateJobKey(this.engine.runId, step, h.name);
      const o = got.get(key);
      const where = `RL update of policy '${h.name}' in update pool '${this.pools[h.name]}'`;
      if (!o?.ok) {
        this.held.delete(h.name);
        failures.push(
          `${where} failed${o ? ` after ${o.attempts} attempt${o.attempts === 1 ? '' : 's'}` : ''}: ${o ? o.error : 'the queue gave no outcome for this job'}`,
        );
        continue;
      }
      try {
        const v = await readUpdateVersion(o.result.dir);
        if (v.adapter !== h.lora)
          throw new Error(v.adapter ? 'it holds a LoRA adapter' : 'it holds a full model, not a LoRA adapter');
        if (v.adapter) assignAdapterTensors(h.trainable!.model, v.tensors, where);
        else h.trainable!.model.assignTensors(v.tensors, where);
        assignOptimizerState(ensureOptimizer(h)!, v.state, where);
      } catch (err) {
        this.held.delete(h.name);
        failures.push(`${where}: its result ${o.result.dir} does not fit the policy: ${(err as Error).message}`);
        continue;
      }
      this.held.set(h.name, { dir: o.result.dir, version: h.trainable!.version + 1 });
      stats[h.name] = { ...o.result.stats, worker_seconds: o.result.seconds };
      await this.prune(h.name, o.result.dir);
    }
    if (failures.length > 0)
      throw new TrainingSettingError(
        `${failures.join('\n')}\nThe pool's workers print why; the checkpoints up to the previous step are intact, so once they are fixed, continue with \`troupe train --resume\`.`,
      );
    return stats;
  }

  /** The job of one policy: its current state's version folder (written now unless held), the plan, the settings. */
  private async payload(h: PolicyHandle, step: number, job: UpdateJob): Promise<UpdateJobPayload> {
    const lm = h.trainable!;
    const optimizer = ensureOptimizer(h)!;
    const folder = updateFolder(this.root, this.engine.runId, h.name);
    let from = this.held.get(h.name);
    if (from?.version !== lm.version) {
      from = { dir: join(folder, `v${lm.version}`), version: lm.version };
      await rm(from.dir, { recursive: true, force: true });
      const { m, v } = optimizer.moments();
      await syncReadable([...lm.model.params.values(), ...m, ...v]); // webgpu: read back before the host copies
      await writeUpdateVersion(from.dir, lm.model, optimizerState(optimizer));
      this.held.set(h.name, from);
    }
    let reference: string | undefined;
    if (job.settings.klCoef > 0 && h.reference && !h.lora) {
      reference = this.references.get(h.name);
      if (reference === undefined) {
        reference = join(folder, 'reference');
        await rm(reference, { recursive: true, force: true });
        await saveCheckpoint(reference, h.reference, { dtype: 'F32' });
        this.references.set(h.name, reference);
      }
    }
    const { lr: _lr, ...options } = h.optimizerOptions;
    return {
      kind: 'update',
      format: 1,
      runId: this.engine.runId,
      step,
      policy: h.name,
      backend: currentBackend()!.backend,
      from,
      out: join(folder, `v${lm.version + 1}`),
      ...(reference !== undefined ? { reference } : {}),
      ...(h.lora ? { team: this.team } : {}),
      optimizer: options as UpdateOptimizerOptions,
      job,
    };
  }

  /**
   * Removes this run's version folders (`<shared>/updates/<run id>`): the checkpoints hold the weights and optimizer
   * state, and a resumed run writes its own.
   */
  async close(): Promise<void> {
    await rm(join(this.root, 'updates', this.engine.runId), { recursive: true, force: true });
  }

  /** Removes a policy's versions other than `keep` (the next update's start) and the one before it. */
  private async prune(policy: string, keep: string): Promise<void> {
    const folder = updateFolder(this.root, this.engine.runId, policy);
    const versions = (await readdir(folder))
      .map((f) => /^v(\d+)$/.exec(f))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => b - a);
    const newest = Number(/v(\d+)$/.exec(keep)![1]);
    for (const v of versions.filter((x) => x < newest).slice(1))
      await rm(join(folder, `v${v}`), { recursive: true, force: true });
  }
}
