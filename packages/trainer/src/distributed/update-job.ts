/**
 * An update job of the distributed engine: one trainable policy's RL (PPO) update of one training step, run by a
 * `troupe worker` of the policy's update pool (`execution.updatePools`). Its state travels through the shared folder
 * of policy versions, one folder per version of the policy, written atomically (a temporary folder renamed):
 *
 * ```
 * <shared>/updates/<run id>/<policy>/v<k>/   config.json + model.safetensors   the weights (HF layout, F32)
 *                                            (a LoRA policy: adapter_config.json + adapter_model.safetensors, PEFT)
 *                                            optimizer.safetensors              AdamW moments m.<i>, v.<i>; step count
 *                                            stats.json                         the update's statistics (results only)
 * <shared>/updates/<run id>/<policy>/reference/                                 the frozen reference (KL penalty only)
 * ```
 *
 * A LoRA policy's version holds its adapter only (and the optimizer state over it): its job carries the team's spec
 * and settings, and the worker composes that team once per run ({@link composeJobTeam}: the base loaded from the
 * spec's model folder or preset and seed, exactly as the trainer's team loads it, once for all the team's adapters)
 * and keeps it; each job loads the adapter onto the policy's model there. Its KL reference is that frozen base (adapters detached,
 * {@link baseGroupLogprobs}), as in the trainer's own process.
 *
 * The trainer writes the version an update starts from (the first time, after a resume); a worker runs the job's
 * {@link UpdateJob} (the plan, settings and learning rate PolicyUpdates built) with {@link ppoUpdate} — the same
 * function the trainer's own process runs — and writes `v<k+1>`, which the trainer loads into its main-thread model and
 * optimizer, and which the next step's job starts from. A worker keeps the models it updated (by run, policy and
 * version), so it reloads nothing while it holds the starting version; another worker, or one restarted, loads the
 * folder instead and computes the same bytes. A job whose result folder is already there (a redelivered job) returns
 * it as it is.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TeamRuntime, TeamSpec, TrainerConfig } from '@troupe/kernel';
import {
  AdamW,
  currentBackend,
  initBackend,
  loadCheckpoint,
  loadLoraAdapter,
  peftTensorName,
  readSafetensors,
  saveCheckpoint,
  saveLoraAdapter,
  syncReadable,
  writeSafetensors,
  type BackendName,
  type CausalLM,
  type SafeTensor,
} from '@troupe/lm/model';
import { baseGroupLogprobs, recomputeGroupLogprobs } from '../loss.js';
import type { PolicyHandle } from '../policies.js';
import { ppoUpdate } from '../ppo-update.js';
import { assignOptimizerState, optimizerState, type OptimizerState, type UpdateJob } from '../update-thread.js';
import type { UpdateOptimizerOptions } from '../update-thread.js';
import { composeJobTeam } from './play-job.js';

/** The payload of an update job (JSON). */
export interface UpdateJobPayload {
  /** Tells an update job from a rollout job. */
  readonly kind: 'update';
  /** Format of this payload; a worker refuses another. */
  readonly format: 1;
  /** The run (one trainer process): part of the idempotency key. */
  readonly runId: string;
  /** The training step (1-based). */
  readonly step: number;
  /** The policy updated. */
  readonly policy: string;
  /** The tfjs backend the trainer updates on: a worker on another one refuses the job (float rounding differs). */
  readonly backend: string;
  /** The version folder the update starts from (weights and optimizer state) and its version. */
  readonly from: { readonly dir: string; readonly version: number };
  /** The version folder to write (`v<version + 1>`). */
  readonly out: string;
  /** The frozen reference's folder (KL penalty of a full model only). */
  readonly reference?: string;
  /**
   * A LoRA policy's team: the resolved spec and training settings the worker composes it from (its base, loaded as the
   * trainer loads it); the version folders then hold the policy's adapter. Absent: a full model.
   */
  readonly team?: { readonly spec: TeamSpec; readonly config: TrainerConfig };
  /** AdamW settings (the learning rate comes with `job`). */
  readonly optimizer: UpdateOptimizerOptions;
  /** The learning rate, plan and loss settings. */
  readonly job: UpdateJob;
}

/** What a worker sends back for an {@link UpdateJobPayload}. */
export interface UpdateJobOutcome {
  /** The update's statistics (see `ppoUpdate`). */
  readonly stats: Record<string, number>;
  /** The version folder written. */
  readonly dir: string;
  /** Wall seconds the worker took. */
  readonly seconds: number;
}

/** The idempotency key of an update job: (run id, step, policy). */
export function updateJobKey(runId: string, step: number, policy: string): string {
  return `${runId}/step-${step}/update/${policy}`;
}

/** The folder of a policy's versions in a run (`<shared>/updates/<run id>/<policy>`). */
export function updateFolder(root: string, runId: string, policy: string): string {
  return join(root, 'updates', runId, policy);
}

/** An update job a worker cannot run (bad payload, another backend, an unreadable version): retrying cannot help. */
export class UpdateRefusedError extends Error {
  readonly unrecoverable = true;
  constructor(message: string) {
    super(message);
    this.name = 'UpdateRefusedError';
  }
}

const OPTIMIZER_FILE = 'optimizer.safetensors';
const STATS_FILE = 'stats.json';
const ADAPTER_FILE = 'adapter_model.safetensors';

/**
 * Writes a version folder atomically: `model`'s weights (F32; a model with LoRA adapters: the adapters only, PEFT
 * layout), the optimizer state and, for a result, the stats. A folder already there is kept (a version's content is
 * fixed by its name): returns whether this call wrote it.
 */
export async function writeUpdateVersion(
  dir: string,
  model: CausalLM,
  state: OptimizerState,
  stats?: Record<string, number>,
): Promise<boolean> {
  if (existsSync(dir)) return false;
  const tmp = `${dir}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  await rm(tmp, { recursive: true, force: true });
  try {
    if (model.lora.size > 0) await saveLoraAdapter(tmp, model);
    else await saveCheckpoint(tmp, model, { dtype: 'F32' });
    const tensors = new Map<string, SafeTensor>();
    state.m.forEach((t, i) => tensors.set(`m.${i}`, t));
    state.v.forEach((t, i) => tensors.set(`v.${i}`, t));
    await writeSafetensors(join(tmp, OPTIMIZER_FILE), tensors, {
      step: String(state.stepCount),
      moments: String(state.m.length),
    });
    if (stats) await writeFile(join(tmp, STATS_FILE), JSON.stringify(stats) + '\n');
    await mkdir(join(dir, '..'), { recursive: true });
    try {
      await rename(tmp, dir);
    } catch (err) {
      if (!existsSync(dir)) throw err;
      await rm(tmp, { recursive: true, force: true }); // written meanwhile by another try of the same job
      return false;
    }
    return true;
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}

/**
 * The weights and optimizer state of a version folder: `adapter` tells a LoRA policy's (its adapters, PEFT names) from
 * a full model's (HF layout).
 */
export async function readUpdateVersion(dir: string): Promise<{
  tensors: Map<string, SafeTensor>;
  adapter: boolean;
  state: OptimizerState;
  stats?: Record<string, number>;
}> {
  const adapter = existsSync(join(dir, ADAPTER_FILE));
  const weights = await readSafetensors(join(dir, adapter ? ADAPTER_FILE : 'model.safetensors'));
  return { tensors: weights.tensors, adapter, state: await readOptimizerState(dir), ...(await readStats(dir)) };
}

/**
 * Overwrites the values of a LoRA model's adapters with PEFT tensors (`saveLoraAdapter`'s layout), in place: the same
 * variables, so an optimizer over them stays valid. Throws naming `where` and the tensor for a missing one or a wrong
 * shape.
 */
export function assignAdapterTensors(model: CausalLM, tensors: ReadonlyMap<string, SafeTensor>, where: string): void {
  if (model.lora.size === 0) throw new Error(`${where}: the policy has no LoRA adapters to load`);
  const pairs = [...model.lora.keys()].map((mod) => {
    const [a, b] = (['A', 'B'] as const).map((w) => {
      const t = tensors.get(peftTensorName(mod, w));
      if (!t) throw new Error(`${where}: adapter tensor '${peftTensorName(mod, w)}' is missing`);
      return t;
    });
    return [mod, a!, b!] as const;
  });
  if (tensors.size !== pairs.length * 2)
    throw new Error(
      `${where}: ${tensors.size} adapter tensors for ${pairs.length * 2} (the team's LoRA settings differ)`,
    );
  try {
    for (const [mod, a, b] of pairs) model.setLoraPair(mod, a, b);
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
  }
}

async function readOptimizerState(dir: string): Promise<OptimizerState> {
  const file = join(dir, OPTIMIZER_FILE);
  const st = await readSafetensors(file);
  const n = Number(st.metadata?.moments);
  const stepCount = Number(st.metadata?.step);
  if (!Number.isInteger(n) || !Number.isInteger(stepCount))
    throw new Error(`${file}: no moment count or step count in its metadata`);
  const moment = (k: string, i: number): SafeTensor => {
    const t = st.tensors.get(`${k}.${i}`);
    if (!t) throw new Error(`${file}: moment '${k}.${i}' is missing`);
    return t;
  };
  return {
    m: Array.from({ length: n }, (_, i) => moment('m', i)),
    v: Array.from({ length: n }, (_, i) => moment('v', i)),
    stepCount,
  };
}

async function readStats(dir: string): Promise<{ stats?: Record<string, number> }> {
  const file = join(dir, STATS_FILE);
  if (!existsSync(file)) return {};
  return { stats: JSON.parse(await readFile(file, 'utf8')) as Record<string, number> };
}

/** A policy a worker holds between jobs: its model and optimizer at the version in `dir`. */
interface KeptPolicy {
  readonly dir: string;
  readonly model: CausalLM;
  /** A LoRA policy's team (which owns `model`): its key. */
  readonly teamKey: string | undefined;
  readonly optimizer: AdamW;
  readonly options: { lr: number } & UpdateOptimizerOptions;
  readonly reference: CausalLM | undefined;
  readonly referenceDir: string | undefined;
}

/** Options of {@link UpdatePlayer}. */
export interface UpdatePlayerOptions {
  /** Policies kept in memory between jobs (default 2, least recently used out). */
  readonly keep?: number;
}

/** Runs update jobs (see the module comment). Call {@link dispose} when done. */
export class UpdatePlayer {
  /** Kept policies by `<run id>/<policy>`, least recently used first. */
  private readonly kept = new Map<string, KeptPolicy>();
  /**
   * The teams of LoRA policies' jobs by run and spec ({@link teamKey}), composed once each (their bases stay loaded)
   * and freed once no kept policy or running job uses them.
   */
  private readonly teams = new Map<string, Promise<{ team: TeamRuntime; handles: PolicyHandle[] }>>();
  /** Jobs running now, by team key. */
  private readonly running = new Map<string, number>();
  private readonly keep: number;
  /** Updates run, and how many of them reloaded their starting version from the shared folder. */
  updates = 0;
  loads = 0;
  /** Teams composed for LoRA policies' jobs (each loads its base once). */
  teamsComposed = 0;

  /** Teams held now (for LoRA policies' jobs). */
  get teamsHeld(): number {
    return this.teams.size;
  }

  constructor(options: UpdatePlayerOptions = {}) {
    this.keep = Math.max(1, options.keep ?? 2);
  }

  /** Runs one update job. Throws {@link UpdateRefusedError} for what no retry can fix; other errors may be retried. */
  async run(p: UpdateJobPayload): Promise<UpdateJobOutcome> {
    const started = performance.now();
    if (p?.kind !== 'update' || p.format !== 1 || typeof p.policy !== 'string' || !p.from || !p.job || !p.out)
      throw new UpdateRefusedError(
        'not an update job of this Troupe version (format 1): run the same Troupe version on the trainer and the workers',
      );
    const done = await this.finished(p);
    if (done) return { stats: done, dir: p.out, seconds: (performance.now() - started) / 1000 };
    const team = teamKey(p);
    if (team === undefined) return this.update(p, started);
    this.running.set(team, (this.running.get(team) ?? 0) + 1);
    try {
      return await this.update(p, started);
    } finally {
      const n = this.running.get(team)! - 1;
      if (n > 0) this.running.set(team, n);
      else this.running.delete(team);
    }
  }

  private async update(p: UpdateJobPayload, started: number): Promise<UpdateJobOutcome> {
    await this.backend(p);
    const key = `${p.runId}/${p.policy}`;
    let s = this.kept.get(key);
    this.kept.delete(key); // a failed update leaves its model apart from every folder: it is not kept
    if (s?.dir !== p.from.dir || s.referenceDir !== p.reference || s.teamKey !== teamKey(p)) {
      if (s) free(s);
      s = await this.load(p);
    }
    s.options.lr = p.job.lr;
    const { reference, model } = s;
    const { settings } = p.job;
    let stats: Record<string, number>;
    try {
      stats = await ppoUpdate(
        s.model,
        s.optimizer,
        p.job.plan,
        settings,
        reference
          ? (groups) => recomputeGroupLogprobs(reference, groups, settings.padId, settings.microBatchSize)
          : s.teamKey !== undefined && settings.klCoef > 0
            ? (groups) => baseGroupLogprobs(model, groups, settings.padId, settings.microBatchSize)
            : undefined,
      );
      const { m, v } = s.optimizer.moments();
      await syncReadable([...m, ...v]); // webgpu: read back before the host copy
      await writeUpdateVersion(p.out, s.model, optimizerState(s.optimizer), stats);
    } catch (err) {
      free(s);
      throw err;
    }
    this.updates++;
    this.hold(key, { ...s, dir: p.out });
    // a folder written meanwhile by another try of this job holds the same bytes; its stats are what it sends
    return { stats: (await this.finished(p)) ?? stats, dir: p.out, seconds: (performance.now() - started) / 1000 };
  }

  /** The stats of a job whose result folder is already there (a redelivered job). */
  private async finished(p: UpdateJobPayload): Promise<Record<string, number> | undefined> {
    if (!existsSync(join(p.out, STATS_FILE))) return undefined;
    return (await readStats(p.out)).stats;
  }

  /** Activates the job's backend, or refuses the job when this process already runs another. */
  private async backend(p: UpdateJobPayload): Promise<void> {
    const now = currentBackend()?.backend;
    if (now === undefined) await initBackend({ backend: p.backend as BackendName });
    else if (now !== p.backend)
      throw new UpdateRefusedError(
        `the trainer updates policy '${p.policy}' on the ${p.backend} backend and this worker runs ${now}: start the update pool's workers with TROUPE_BACKEND=${p.backend}`,
      );
  }

  /** The starting version from the shared folder. */
  private async load(p: UpdateJobPayload): Promise<KeptPolicy> {
    if (!existsSync(p.from.dir))
      throw new UpdateRefusedError(
        `policy version ${p.from.dir} is not there: the worker must see the trainer's shared folder at the same path (execution.checkpoints / --shared)`,
      );
    if (p.team) return this.loadAdapter(p, p.team);
    let model: CausalLM | undefined;
    try {
      model = await loadCheckpoint(p.from.dir);
      const options = { lr: p.job.lr, ...p.optimizer };
      const optimizer = new AdamW(model.trainableVariables(), options);
      assignOptimizerState(optimizer, await readOptimizerState(p.from.dir), `${p.from.dir} (optimizer state)`);
      const reference = p.reference !== undefined ? await loadCheckpoint(p.reference) : undefined;
      this.loads++;
      return { dir: p.from.dir, model, teamKey: undefined, optimizer, options, reference, referenceDir: p.reference };
    } catch (err) {
      model?.dispose();
      throw new UpdateRefusedError(`policy version ${p.from.dir} cannot be loaded: ${(err as Error).message}`);
    }
  }

  /**
   * A LoRA policy's starting version: its adapter loaded onto the policy's model in the job's team (composed once per
   * run and spec and kept: its base loads once), with an optimizer over that adapter.
   */
  private async loadAdapter(p: UpdateJobPayload, job: NonNullable<UpdateJobPayload['team']>): Promise<KeptPolicy> {
    const key = teamKey(p)!;
    if (!this.teams.has(key)) await this.freeTeams(key);
    let team = this.teams.get(key); // looked up after the wait: another job may have composed it meanwhile
    if (!team) {
      team = composeJobTeam(job.spec, job.config);
      this.teams.set(key, team);
      this.teamsComposed++;
      team.catch(() => this.teams.delete(key));
    }
    const { handles } = await team;
    const model = handles.find((h) => h.name === p.policy && h.lora)?.trainable?.model;
    if (!model)
      throw new UpdateRefusedError(
        `team '${job.spec.name}' has no LoRA policy '${p.policy}': run the same Troupe version and team spec on the trainer and the workers`,
      );
    try {
      await loadLoraAdapter(p.from.dir, model);
      const options = { lr: p.job.lr, ...p.optimizer };
      const optimizer = new AdamW(model.trainableVariables(), options);
      assignOptimizerState(optimizer, await readOptimizerState(p.from.dir), `${p.from.dir} (optimizer state)`);
      this.loads++;
      return {
        dir: p.from.dir,
        model,
        teamKey: key,
        optimizer,
        options,
        reference: undefined,
        referenceDir: undefined,
      };
    } catch (err) {
      throw new UpdateRefusedError(`policy version ${p.from.dir} cannot be loaded: ${(err as Error).message}`);
    }
  }

  private hold(key: string, s: KeptPolicy): void {
    this.kept.set(key, s);
    for (const [k, old] of this.kept) {
      if (this.kept.size <= this.keep) break;
      this.kept.delete(k);
      free(old);
    }
  }

  /** Frees the teams (but `keep`) that no kept policy and no running job uses. */
  private async freeTeams(keep: string): Promise<void> {
    const used = new Set([keep, ...this.running.keys(), ...[...this.kept.values()].map((s) => s.teamKey)]);
    for (const [k, t] of [...this.teams]) {
      if (used.has(k)) continue;
      this.teams.delete(k);
      const got = await t.catch(() => undefined);
      await got?.team.dispose();
    }
  }

  /** Frees the kept models and teams. */
  async dispose(): Promise<void> {
    for (const s of this.kept.values()) free(s);
    this.kept.clear();
    const teams = [...this.teams.values()];
    this.teams.clear();
    for (const t of await Promise.allSettled(teams)) if (t.status === 'fulfilled') await t.value.team.dispose();
  }
}

/**
 * The key of a LoRA policy's team: its run (one model per policy and run: a kept policy's adapter is nobody else's),
 * spec and settings; undefined for a full model.
 */
function teamKey(p: UpdateJobPayload): string | undefined {
  return (
    p.team &&
    createHash('sha256')
      .update(JSON.stringify([p.runId, p.team.spec, p.team.config]))
      .digest('hex')
  );
}

/** Frees a kept policy's tensors (moments; weights and reference unless its team owns the model). */
function free(s: KeptPolicy): void {
  const { m, v } = s.optimizer.moments();
  for (const x of [...m, ...v]) x.dispose();
  if (s.teamKey === undefined) s.model.dispose();
  s.reference?.dispose();
}
