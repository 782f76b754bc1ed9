/**
 * A training run's folder: one writer at a time (a lock), a fresh start or a resume from the newest complete
 * checkpoint, the logs (metrics.jsonl, trace.jsonl) appended step by step, the checkpoints, the best validation
 * checkpoint (`algorithm.keepBest`) and the baseline evaluation kept for the final comparison.
 */
import { appendFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import {
  type FolderLock,
  type Rng,
  type TeamSpec,
  type TrainerConfig,
  lockFolder,
  writeFileAtomic,
} from '@troupe/kernel';
import { BASELINE_FILE, pairedComparison, readBaseline, type BaselineEval, type PairedComparison } from './compare.js';
import type { EvaluationResult } from './evaluate.js';
import { describeLrDecaySpan, ensureOptimizer, lrDecaySpan, type PolicyHandle } from './policies.js';
import { generatedSamples, readMetrics, type MetricsRecord } from './report.js';
import {
  checkpointName,
  listCheckpoints,
  readTrainerState,
  restoreOptimizers,
  restoreRng,
  restoreWeights,
  RunFolderError,
  saveTrainerCheckpoint,
  truncateJsonl,
  type BestCheckpoint,
  type TrainerState,
} from './state.js';

/** The log of planned instances a distributed step dropped (their jobs failed). */
export const FAILURES_FILE = 'failures.jsonl';

/** Where a resumed run continues: its checkpoint's state, and the rollout samples its steps generated. */
export interface ResumePoint {
  /** The checkpoint folder. */
  readonly dir: string;
  /** Its trainer-state.json. */
  readonly state: TrainerState;
  /** Rollout samples of the steps completed (from the state, or counted in metrics.jsonl for older checkpoints). */
  readonly samplesGenerated: number;
}

/** What a checkpoint records besides the weights and the optimizers (see {@link TrainerState}). */
export type CheckpointParts = Pick<TrainerState, 'step' | 'rng' | 'warmStarted'> &
  Required<Pick<TrainerState, 'instances' | 'samplesGenerated'>>;

/** The run folder of one training run (see the module comment). */
export class RunFolder {
  private lock: FolderLock | undefined;
  /** The best periodic validation evaluation so far (`algorithm.keepBest` only; checkpointed, and its folder kept). */
  best: BestCheckpoint | undefined;
  /** The step of the newest checkpoint written or resumed from (-1: none yet). */
  checkpointedStep = -1;

  constructor(
    /** The folder. */
    readonly dir: string,
    private readonly spec: Pick<TeamSpec, 'name' | 'seed' | 'file'>,
    private readonly config: TrainerConfig,
    private readonly sampleBudget: number | undefined,
  ) {}

  /**
   * Locks the folder (one writer per run folder) and prepares it. With `resume` and a complete checkpoint: refuses a
   * checkpoint of another run, truncates the logs after it and returns where to continue. Otherwise a fresh start:
   * refuses a folder that already holds a run (unless resuming one that has no checkpoint yet) and clears leftovers.
   */
  async open(resume: boolean): Promise<ResumePoint | undefined> {
    mkdirSync(this.dir, { recursive: true });
    this.lock ??= lockFolder(this.dir, 'troupe train');
    const metrics = this.path('metrics.jsonl');
    const ckpts = await listCheckpoints(this.dir);
    if (resume && ckpts.length > 0) {
      const dir = join(this.dir, 'checkpoints', checkpointName(ckpts[ckpts.length - 1]!));
      const state = await readTrainerState(dir);
      if (state.run.name !== this.spec.name || state.run.seed !== this.spec.seed) {
        throw new RunFolderError(
          `${dir}: this checkpoint belongs to run '${state.run.name}' (seed ${state.run.seed}), not '${this.spec.name}' (seed ${this.spec.seed}); use another --out.`,
        );
      }
      this.checkpointedStep = state.step;
      this.best = this.config.keepBest ? state.best : undefined;
      await truncateJsonl(metrics, state.step, ['final']); // a final eval is redone at the end
      await truncateJsonl(this.path('trace.jsonl'), state.step);
      await truncateJsonl(this.path(FAILURES_FILE), state.step);
      return { dir, state, samplesGenerated: state.samplesGenerated ?? generatedSamples(readMetrics(this.dir)) };
    }
    if (!resume && existsSync(metrics)) {
      throw new RunFolderError(
        `${this.dir} already holds a training run (metrics.jsonl); pass --resume to continue it or choose another --out.`,
      );
    }
    for (const f of ['metrics.jsonl', 'trace.jsonl', FAILURES_FILE, BASELINE_FILE])
      rmSync(this.path(f), { force: true });
    return undefined;
  }

  /** Restores a checkpoint's weights, policy versions and optimizer moments into the handles; returns its RNG stream. */
  async restore(at: ResumePoint, handles: readonly PolicyHandle[]): Promise<Rng> {
    await restoreWeights(at.dir, handles);
    for (const h of handles) if (h.trainable) h.trainable.version = at.state.versions[h.name] ?? h.trainable.version;
    for (const h of handles) if (h.trainable && at.state.optimizerSteps[h.name] !== undefined) ensureOptimizer(h);
    await restoreOptimizers(at.dir, handles, at.state);
    return restoreRng(at.dir, at.state);
  }

  /**
   * What the user should know about resuming from `state`. A decaying `lrSchedule` spans the run's steps (or its
   * sample budget): a run resumed with another `--steps` or `--sample-budget` than its steps so far were trained with
   * follows another schedule than any uninterrupted run.
   */
  resumeWarnings(state: TrainerState): string[] {
    const now = lrDecaySpan(this.config, this.sampleBudget);
    if (!state.lrDecay || !now || JSON.stringify(state.lrDecay) === JSON.stringify(now) || state.step === 0) return [];
    return [
      `algorithm.lrSchedule (${this.config.lrSchedule.kind}) now decays over ${describeLrDecaySpan(now)}, but the ${state.step} step${state.step === 1 ? '' : 's'} before the ` +
        `resume decayed over ${describeLrDecaySpan(state.lrDecay)}, so the run as a whole follows neither schedule. To continue a run as if uninterrupted, ` +
        'resume it with the --steps and --sample-budget it was started with.',
    ];
  }

  /** Appends records to metrics.jsonl. */
  appendMetrics(...records: readonly MetricsRecord[]): void {
    this.appendJsonl('metrics.jsonl', records);
  }

  /** Appends records to trace.jsonl. */
  appendTrace(records: readonly unknown[]): void {
    this.appendJsonl('trace.jsonl', records);
  }

  /**
   * Appends to failures.jsonl the planned instances a distributed step dropped: `{step, index, replays, error,
   * attempts}` each (the step's `rollout/failed_instances` counts them).
   */
  appendFailures(records: readonly { readonly step: number }[]): void {
    if (records.length > 0) this.appendJsonl(FAILURES_FILE, records);
  }

  /**
   * Records a periodic validation evaluation for `algorithm.keepBest`: a success rate above every earlier one makes its
   * step the best (ties keep the earlier step). Adds `eval/best_step` and `eval/best_success_rate` to the step's
   * metrics. Returns whether this step became the best (its checkpoint must then be written).
   */
  noteValidation(step: number, ev: EvaluationResult, metrics: MetricsRecord): boolean {
    if (!this.config.keepBest) return false;
    const better = this.best === undefined || ev.successRate > this.best.successRate;
    if (better) this.best = { step, successRate: ev.successRate };
    metrics['eval/best_step'] = this.best!.step;
    metrics['eval/best_success_rate'] = this.best!.successRate;
    return better;
  }

  /** The best checkpoint's step, success rate and folder, when `algorithm.keepBest` found one. */
  bestCheckpoint(): (BestCheckpoint & { readonly dir: string }) | undefined {
    return this.best ? { ...this.best, dir: join(this.dir, 'checkpoints', checkpointName(this.best.step)) } : undefined;
  }

  /** Writes the checkpoint of the steps completed so far (atomically; older ones pruned, see `saveTrainerCheckpoint`). */
  async checkpoint(handles: readonly PolicyHandle[], parts: CheckpointParts): Promise<string> {
    const lrDecay = lrDecaySpan(this.config, this.sampleBudget);
    const state: TrainerState = {
      format: 1,
      step: parts.step,
      versions: Object.fromEntries(handles.filter((h) => h.trainable).map((h) => [h.name, h.trainable!.version])),
      optimizerSteps: Object.fromEntries(
        handles.filter((h) => h.optimizer).map((h) => [h.name, h.optimizer!.stepCount]),
      ),
      rng: parts.rng,
      warmStarted: parts.warmStarted,
      run: {
        name: this.spec.name,
        seed: this.spec.seed,
        ...(isAbsolute(this.spec.file) ? { spec: this.spec.file } : {}),
      },
      instances: parts.instances,
      samplesGenerated: parts.samplesGenerated,
      ...(this.best ? { best: this.best } : {}),
      ...(lrDecay ? { lrDecay } : {}),
    };
    const dir = await saveTrainerCheckpoint(this.dir, handles, state, this.config.keepCheckpoints);
    this.checkpointedStep = parts.step;
    return dir;
  }

  /** Keeps the evaluation of the model RL starts from in `baseline-eval.json` (atomically; a resumed run still compares against it). */
  async writeBaseline(step: number, ev: EvaluationResult): Promise<void> {
    const { instanceKeys: _keys, ...kept } = ev;
    await writeFileAtomic(this.path(BASELINE_FILE), JSON.stringify({ format: 1, step, ...kept }, null, 1) + '\n');
  }

  /**
   * The final evaluation compared episode by episode with the baseline evaluation, when one played the same split and
   * episodes (none was made, or the spec changed since: undefined).
   */
  compareWithBaseline(
    final: EvaluationResult,
  ): { readonly eval: BaselineEval; readonly comparison: PairedComparison } | undefined {
    const before = readBaseline(this.dir, final);
    return before && { eval: before, comparison: pairedComparison(before.outcomes, final.outcomes) };
  }

  /** Unlocks the folder. */
  release(): void {
    this.lock?.release();
  }

  private path(file: string): string {
    return join(this.dir, file);
  }

  private appendJsonl(file: string, records: readonly unknown[]): void {
    if (records.length === 0) return;
    appendFileSync(this.path(file), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  }
}
