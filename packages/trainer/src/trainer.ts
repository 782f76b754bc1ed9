/**
 * The AT-GRPO trainer (the Stronger-MAS paper), written to be read top to bottom like a CleanRL script:
 *
 * ```
 * per training step n = 1..steps:
 *   B instances of the train split (uids `step-n/train/<index>/<key>`, never reused across steps)
 *   at-grpo:    B episodes, each a tree: K branches per (turn, seat), greedy continuation from the best branch
 *               → groups of K samples keyed (instance, turn, seat)
 *   grpo-naive: B·K independent episodes (K per instance, K = 1 branch each)
 *               → ONE group per instance over its episodes' LAST-turn samples
 *   advantages per group: (r − mean) / (std + 1e-6)   (or biased std, or dr-grpo: no division)
 *   for each trainable policy:
 *     its samples = those of the seats mapped to it (L2: its adapter's seat only), current version only, in groups
 *                   whose advantages are not all 0 (zeroVarianceGroups: skip; none → no update, no new version)
 *     old log-probs recomputed under the current weights (the sampling log-probs may be grammar-masked)
 *     epochs × mini-batches (16 sequences): PPO-clip (ε 0.2/0.2), token-mean, grad clip 1.0, AdamW, LR schedule
 *     version += 1
 *   trace.jsonl ← one record per sample;  metrics.jsonl ← one record per step;  checkpoint step-n (atomic)
 * ```
 *
 * Derived sizes per step (T turns played, N seats): at-grpo trains on ≤ B·T·N·K samples, grpo-naive on
 * ≤ B·K·N (last turn of each of its B·K episodes).
 */
import { appendFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { type Environment, type Rng, computeAdvantages, computeTrajectoryAdvantages, type SeatBinding, planEpisodes, runEpisodes, toEpisodes, type EpisodeRecord, type StepRecord, SummaryAggregator, toTraceRecord, composeTeam, type TeamRuntime, type TeamSpec, writeFileAtomic, lockFolder, type FolderLock, createRng, deriveSeed, hasGreedyBranch, resolveTrainerConfig, TrainingSettingError, type TrainerConfig } from '@troupe/kernel';
import { currentBackend, CausalLM, loadCheckpoint, saveCheckpoint } from '@troupe/lm';
import { BASELINE_FILE, comparisonMetrics, pairedComparison, readBaseline, type BaselineEval, type PairedComparison } from './compare.js';
import { evaluateTeam, type EvaluationResult } from './evaluate.js';
import { recomputeGroupLogprobs, type PromptGroup } from './loss.js';
import {
  describeLrDecaySpan, disposeHandles, ensureOptimizer, lrDecaySpan, mappingLevel, policyHandles, refuseUntrainable, scheduleLr, type MappingLevel, type PolicyHandle,
} from './policies.js';
import { planMiniBatches, ppoUpdate, type PpoUpdatePlan, type PpoUpdateSettings } from './ppo-update.js';
import { InstanceSchedule } from './instances.js';
import { generatedSamples, readMetrics, type MetricsRecord } from './report.js';
import { collectDemonstrations, warmStart, type WarmStartResult } from './sft.js';
import {
  checkpointName, listCheckpoints, RunFolderError, readTrainerState, restoreOptimizers, restoreRng, restoreWeights, saveTrainerCheckpoint, truncateJsonl,
  type BestCheckpoint, type TrainerState,
} from './state.js';
import { StepTimer, timedEnvironment, timedPolicy, timedRole } from './timing.js';
import { UpdateWorker, type UpdateJob, type UpdateOptimizerOptions } from './update-thread.js';

/** What the trainer tells its observer (the CLI's progress display). */
export type TrainerEvent =
  | {
    readonly type: 'start'; readonly firstStep: number; readonly steps: number; readonly level: MappingLevel; readonly resumedFrom?: number; readonly frozen: readonly string[];
    /** What the user should know before the steps run (the CLI prints them even without progress). */
    readonly warnings?: readonly string[];
  }
  | { readonly type: 'warm-start'; readonly phase: 'demonstrations' | 'epoch'; readonly policy?: string; readonly epoch?: number; readonly loss?: number; readonly count?: number }
  | { readonly type: 'step'; readonly step: number; readonly steps: number; readonly metrics: MetricsRecord }
  | { readonly type: 'eval'; readonly step: number; readonly result: EvaluationResult }
  | { readonly type: 'checkpoint'; readonly step: number; readonly dir: string };

/** Options of {@link Trainer.create}. */
export interface TrainerOptions {
  /** Output folder (trace.jsonl, metrics.jsonl, checkpoints/, report.md). */
  readonly outDir: string;
  /** Override `algorithm.steps`. */
  readonly steps?: number;
  /**
   * Stop before the next step once the steps completed (resumed ones included) have generated at least this many
   * rollout samples; `steps` stays the most steps. Episodes vary in length, so steps vary in samples: an equal budget
   * compares methods fairly where equal steps do not. The run ends at most one step's samples above it.
   */
  readonly sampleBudget?: number;
  /** Continue from the newest complete checkpoint in `outDir`. */
  readonly resume?: boolean;
  /** Skip the warm start even when the spec configures one. */
  readonly skipWarmStart?: boolean;
  /** Skip the final evaluation on the held-out split. */
  readonly skipFinalEval?: boolean;
  /** Observer of progress. */
  readonly onEvent?: (event: TrainerEvent) => void;
  /** A composed team to train (tests); default: composed from the spec, its policy plugins resolved by kind. */
  readonly team?: TeamRuntime;
}

/** Summary returned by {@link Trainer.run}. */
export interface TrainingResult {
  /** Steps completed (including earlier runs when resumed). */
  readonly steps: number;
  /** Rollout samples generated by those steps. */
  readonly samplesGenerated: number;
  /** Why the steps ended: `steps` (the last step ran) or `sample-budget` (the budget was reached before it). */
  readonly stoppedBy: 'steps' | 'sample-budget';
  /** Step it resumed from, if any. */
  readonly resumedFrom?: number;
  /** Mapping level. */
  readonly level: MappingLevel;
  /** Warm start results (when it ran in this process). */
  readonly warmStart?: WarmStartResult & { readonly demonstrations: number };
  /** Final held-out evaluation. */
  readonly finalEval?: EvaluationResult;
  /**
   * The same held-out evaluation of the model RL started from (after the warm start; `evaluation.baseline`), and the
   * episode-by-episode comparison of the final model against it.
   */
  readonly baseline?: { readonly eval: BaselineEval; readonly comparison: PairedComparison };
  /**
   * The best periodic validation evaluation (`algorithm.keepBest`): its step, success rate and checkpoint folder
   * (kept; `checkpoints/best.json` names it too).
   */
  readonly best?: BestCheckpoint & { readonly dir: string };
  /** Output folder. */
  readonly outDir: string;
  /** Wall seconds of this process's run. */
  readonly seconds: number;
}

/** One policy's update of one step: its metrics so far and, when it has current samples, the planned job. */
interface PolicyUpdate {
  readonly handle: PolicyHandle;
  /** `loss/<policy>/*` values (without the prefix). */
  readonly out: Record<string, number>;
  readonly job?: UpdateJob;
}

/** The trainer. Create with {@link Trainer.create}, then `run()` (or `step(n)` for a single step), then `dispose()`. */
export class Trainer {
  /** Trainable and frozen policies. */
  readonly handles: PolicyHandle[];
  /** Mapping level. */
  readonly level: MappingLevel;
  /** Time accounting of the current step. */
  readonly timer = new StepTimer();
  /** Seats with timed policies and roles (what rollouts use). */
  readonly seats: readonly SeatBinding[];
  /** {@link seats} as AT-GRPO's tree plays them: each seat's own K (`seatBranches`) and greedy branch (`greedyBranch`, `selection`). */
  private readonly treeSeats: readonly SeatBinding[];
  /** The (timed) environment. */
  readonly environment: Environment;
  /** Mini-batch shuffling stream (checkpointed). */
  rng: Rng;
  /** Training steps completed. */
  stepsDone = 0;
  /** Rollout samples generated by the steps completed (checkpointed). */
  samplesGenerated = 0;
  /** The step of the newest checkpoint written (-1: none yet). */
  private checkpointedStep = -1;
  /** The best periodic validation evaluation so far (`algorithm.keepBest` only; checkpointed, and its folder kept). */
  private best: BestCheckpoint | undefined;
  /** The output folder's lock, from {@link prepare} to {@link dispose}: one writer per run folder. */
  private lock: FolderLock | undefined;
  /** Which train instances each step plays (fresh, and failed ones again with `algorithm.replay`; checkpointed). */
  schedule: InstanceSchedule;
  /** Whether the warm start has run (here or in the run resumed from). */
  warmStarted = false;
  private readonly workerPool = new Map<string, UpdateWorker>();
  /** Warnings of {@link prepare}, told with the 'start' event. */
  private readonly warnings: string[] = [];

  private constructor(readonly spec: TeamSpec, readonly config: TrainerConfig, readonly team: TeamRuntime, readonly options: TrainerOptions) {
    this.environment = timedEnvironment(team.environment, this.timer);
    this.seats = team.seats.map((s) => ({ ...s, policy: timedPolicy(s.policy, this.timer), role: timedRole(s.role, this.timer) }));
    this.treeSeats = this.seats.map((s) => ({
      ...s,
      ...(config.seatBranches?.[s.name] !== undefined ? { branches: config.seatBranches[s.name] } : {}),
      ...(hasGreedyBranch(config, s.name) ? { greedyBranch: true, ...(config.selection === 'greedy' ? { continueFromGreedy: true } : {}) } : {}),
    }));
    this.handles = policyHandles(spec, team.policies, team.seats.map((s) => s.name), config);
    refuseUntrainable(this.handles, config);
    this.level = mappingLevel(this.handles, team.seats.length);
    this.rng = createRng(deriveSeed(spec.seed, 'trainer'));
    this.schedule = new InstanceSchedule(config.replay);
  }

  /** Validates the spec's training settings, composes the team (unless given) and prepares the trainer. */
  static async create(spec: TeamSpec, options: TrainerOptions): Promise<Trainer> {
    const config = resolveTrainerConfig(spec, options.steps !== undefined ? { steps: options.steps } : {});
    const team = options.team ?? (await composeTeam(spec));
    return new Trainer(spec, config, team, options);
  }

  /**
   * The persistent RL update workers by policy name (see {@link Trainer.update}): started at the beginning of the
   * first training step that uses them (after the warm start and any resume), ended by {@link Trainer.dispose} or
   * when an update fails.
   */
  get updateWorkers(): ReadonlyMap<string, UpdateWorker> {
    return this.workerPool;
  }

  private get out(): string {
    return this.options.outDir;
  }

  private emit(e: TrainerEvent): void {
    this.options.onEvent?.(e);
  }

  private appendJsonl(file: string, records: readonly unknown[]): void {
    if (records.length === 0) return;
    appendFileSync(join(this.out, file), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  }

  /**
   * Prepares the output folder: a fresh run refuses a folder that already holds one; `resume` restores the newest
   * complete checkpoint (weights, optimizer moments, RNG, versions, step) and truncates the logs after it.
   * Returns the step resumed from, if any.
   */
  async prepare(): Promise<number | undefined> {
    mkdirSync(this.out, { recursive: true });
    this.lock ??= lockFolder(this.out, 'troupe train');
    const metrics = join(this.out, 'metrics.jsonl');
    const ckpts = await listCheckpoints(this.out);
    if (this.options.resume && ckpts.length > 0) {
      const last = ckpts[ckpts.length - 1]!;
      const dir = join(this.out, 'checkpoints', checkpointName(last));
      const state = await readTrainerState(dir);
      if (state.run.name !== this.spec.name || state.run.seed !== this.spec.seed) {
        throw new RunFolderError(`${dir}: this checkpoint belongs to run '${state.run.name}' (seed ${state.run.seed}), not '${this.spec.name}' (seed ${this.spec.seed}); use another --out.`);
      }
      await restoreWeights(dir, this.handles);
      for (const h of this.handles) if (h.trainable) h.trainable.version = state.versions[h.name] ?? h.trainable.version;
      for (const h of this.handles) if (h.trainable && state.optimizerSteps[h.name] !== undefined) ensureOptimizer(h);
      await restoreOptimizers(dir, this.handles, state);
      await this.loadReference();
      this.rng = restoreRng(dir, state);
      this.stepsDone = state.step;
      this.schedule = new InstanceSchedule(this.config.replay, state.instances ?? { nextIndex: state.step * this.config.batchSize, queue: [] });
      this.warmStarted = state.warmStarted;
      this.checkpointedStep = state.step;
      this.best = this.config.keepBest ? state.best : undefined;
      await truncateJsonl(metrics, state.step, ['final']); // a final eval is redone at the end
      await truncateJsonl(join(this.out, 'trace.jsonl'), state.step);
      this.samplesGenerated = state.samplesGenerated ?? generatedSamples(readMetrics(this.out));
      this.noteLrDecayChange(state);
      return state.step;
    }
    if (!this.options.resume && existsSync(metrics)) {
      throw new RunFolderError(`${this.out} already holds a training run (metrics.jsonl); pass --resume to continue it or choose another --out.`);
    }
    for (const f of ['metrics.jsonl', 'trace.jsonl', BASELINE_FILE]) rmSync(join(this.out, f), { force: true });
    return undefined;
  }

  /**
   * A decaying `lrSchedule` spans the run's steps (or its sample budget): a run resumed with another `--steps` or
   * `--sample-budget` than its steps so far were trained with follows another schedule than any uninterrupted run,
   * and is warned about.
   */
  private noteLrDecayChange(state: TrainerState): void {
    const now = lrDecaySpan(this.config, this.options.sampleBudget);
    if (!state.lrDecay || !now || JSON.stringify(state.lrDecay) === JSON.stringify(now) || state.step === 0) return;
    this.warnings.push(
      `algorithm.lrSchedule (${this.config.lrSchedule.kind}) now decays over ${describeLrDecaySpan(now)}, but the ${state.step} step${state.step === 1 ? '' : 's'} before the ` +
        `resume decayed over ${describeLrDecaySpan(state.lrDecay)}, so the run as a whole follows neither schedule. To continue a run as if uninterrupted, ` +
        'resume it with the --steps and --sample-budget it was started with.',
    );
  }

  /** Runs the warm start, the training steps, periodic and final evaluation, and writes the report. */
  async run(): Promise<TrainingResult> {
    const started = performance.now();
    const resumedFrom = await this.prepare();
    const c = this.config;
    this.emit({
      type: 'start', firstStep: this.stepsDone + 1, steps: c.steps, level: this.level, frozen: c.freeze, ...(resumedFrom !== undefined ? { resumedFrom } : {}),
      ...(this.warnings.length > 0 ? { warnings: this.warnings } : {}),
    });

    let warm: (WarmStartResult & { demonstrations: number }) | undefined;
    if (resumedFrom === undefined) {
      if (c.warmStart && !this.options.skipWarmStart) warm = await this.runWarmStart();
      if (this.wantsBaseline()) await this.evaluateBaseline();
      await this.saveReference();
      await this.checkpoint();
    }

    const budget = this.options.sampleBudget;
    let stoppedBy: TrainingResult['stoppedBy'] = 'steps';
    for (let step = this.stepsDone + 1; step <= c.steps; step++) {
      if (budget !== undefined && this.samplesGenerated >= budget) {
        stoppedBy = 'sample-budget';
        break;
      }
      const metrics = await this.step(step);
      let newBest = false;
      if (c.evalEvery > 0 && (step % c.evalEvery === 0 || step === c.steps)) {
        const ev = await this.evaluate('validation', c.evalEpisodes);
        Object.assign(metrics, evalMetrics('eval', ev));
        metrics['time/eval'] = ev.seconds;
        newBest = this.noteValidation(step, ev, metrics);
        this.emit({ type: 'eval', step, result: ev });
      }
      this.appendJsonl('metrics.jsonl', [metrics]);
      this.emit({ type: 'step', step, steps: c.steps, metrics });
      if (step % c.checkpointEvery === 0 || step === c.steps || newBest) await this.checkpoint();
    }
    if (this.checkpointedStep !== this.stepsDone) await this.checkpoint(); // the budget ended the steps between checkpoints

    let finalEval: EvaluationResult | undefined;
    let baseline: TrainingResult['baseline'];
    if (!this.options.skipFinalEval) {
      finalEval = await this.evaluate(this.spec.evaluation.split, this.spec.evaluation.episodes);
      const rec: MetricsRecord = { step: this.stepsDone, kind: 'final', ...evalMetrics(`eval_${finalEval.split}`, finalEval), 'time/eval': finalEval.seconds };
      const before = readBaseline(this.out, finalEval);
      if (before) {
        baseline = { eval: before, comparison: pairedComparison(before.outcomes, finalEval.outcomes) };
        Object.assign(rec, comparisonMetrics(baseline.comparison));
      }
      this.appendJsonl('metrics.jsonl', [rec]);
      this.emit({ type: 'eval', step: this.stepsDone, result: finalEval });
    }
    return {
      steps: this.stepsDone, samplesGenerated: this.samplesGenerated, stoppedBy, level: this.level, outDir: this.out, seconds: (performance.now() - started) / 1000,
      ...(resumedFrom !== undefined ? { resumedFrom } : {}), ...(warm ? { warmStart: warm } : {}), ...(finalEval ? { finalEval } : {}),
      ...(baseline ? { baseline } : {}),
      ...(this.best ? { best: { ...this.best, dir: join(this.out, 'checkpoints', checkpointName(this.best.step)) } } : {}),
    };
  }

  /**
   * Records a periodic validation evaluation for `algorithm.keepBest`: a success rate above every earlier one makes its
   * step the best (ties keep the earlier step). Adds `eval/best_step` and `eval/best_success_rate` to the step's
   * metrics. Returns whether this step became the best (its checkpoint must then be written).
   */
  private noteValidation(step: number, ev: EvaluationResult, metrics: MetricsRecord): boolean {
    if (!this.config.keepBest) return false;
    const better = this.best === undefined || ev.successRate > this.best.successRate;
    if (better) this.best = { step, successRate: ev.successRate };
    metrics['eval/best_step'] = this.best!.step;
    metrics['eval/best_success_rate'] = this.best!.successRate;
    return better;
  }

  /** Whether to evaluate the start of RL on the final evaluation's episodes: RL steps will run and so will the final evaluation. */
  private wantsBaseline(): boolean {
    return this.spec.evaluation.baseline && this.config.name !== 'none' && this.config.steps > 0 && !this.options.skipFinalEval;
  }

  /**
   * Evaluates the model RL starts from on the final evaluation's split and episodes, and keeps its per-episode
   * outcomes in `baseline-eval.json` (atomically; a resumed run still compares against it).
   */
  private async evaluateBaseline(): Promise<void> {
    const ev = await this.evaluate(this.spec.evaluation.split, this.spec.evaluation.episodes);
    const { instanceKeys: _keys, ...kept } = ev;
    await writeFileAtomic(join(this.out, BASELINE_FILE), JSON.stringify({ format: 1, step: this.stepsDone, ...kept }, null, 1) + '\n');
    this.appendJsonl('metrics.jsonl', [{ step: this.stepsDone, kind: 'baseline', ...evalMetrics(`baseline_${ev.split}`, ev), 'time/eval': ev.seconds }]);
    this.emit({ type: 'eval', step: this.stepsDone, result: ev });
  }

  /** Warm start: oracle demonstrations, SFT of each trainable policy (frozen ones aside) on its seats' demonstrations. */
  async runWarmStart(): Promise<WarmStartResult & { demonstrations: number }> {
    const w = this.config.warmStart!;
    const demos = await collectDemonstrations(this.team.environment, this.team.seats, { count: w.demonstrations, seed: deriveSeed(this.spec.seed, 'demonstrations'), noise: w.noise });
    this.emit({ type: 'warm-start', phase: 'demonstrations', count: demos.length });
    const res = await warmStart(this.handles.filter((h) => !h.frozen), demos, w, {
      seed: this.spec.seed, maxGradNorm: this.config.maxGradNorm,
      onProgress: (policy, epoch, loss) => this.emit({ type: 'warm-start', phase: 'epoch', policy, epoch, loss }),
    });
    this.warmStarted = true;
    const rec: MetricsRecord = { step: 0, kind: 'warm-start', 'warmstart/demonstrations': w.demonstrations, 'warmstart/samples': demos.length, 'warmstart/workers': res.workers, 'time/warmstart': res.seconds };
    for (const [p, n] of Object.entries(res.samples)) rec[`warmstart/${p}/samples`] = n;
    for (const [p, l] of Object.entries(res.firstEpochLoss)) rec[`warmstart/${p}/first_epoch_loss`] = l;
    for (const [p, l] of Object.entries(res.lastEpochLoss)) rec[`warmstart/${p}/last_epoch_loss`] = l;
    if (this.config.evalEvery > 0) {
      const ev = await this.evaluate('validation', this.config.evalEpisodes);
      Object.assign(rec, evalMetrics('eval', ev));
      this.noteValidation(0, ev, rec); // step 0 is checkpointed after the warm start
      this.emit({ type: 'eval', step: 0, result: ev });
    }
    this.appendJsonl('metrics.jsonl', [rec]);
    return { ...res, demonstrations: demos.length };
  }

  /** One training step (1-based): rollouts, advantages, per-policy updates, trace. Returns its metrics (not yet logged). */
  async step(step: number): Promise<MetricsRecord> {
    const c = this.config;
    const B = c.batchSize;
    const K = c.branches;
    const naive = c.name === 'grpo-naive';
    this.timer.reset();
    const t0 = performance.now();
    // The update workers boot (seconds: a fresh isolate, tfjs, the weights) while this step's rollouts run; nothing
    // changes the weights before the update, so they start from what the update would start them with.
    if (c.name !== 'none') for (const h of this.threadedPolicies()) this.updateWorker(h);

    // 1. Rollouts: B train instances (fresh ones, and with algorithm.replay failed ones again); AT-GRPO plays each
    //    once as a K-branch tree, grpo-naive K times, K = 1.
    const planned = this.schedule.next(B);
    const repeats = naive ? K : 1;
    const contexts = planned.flatMap((p) => planEpisodes({
      environment: this.environment, split: 'train', count: 1, startIndex: p.index, instanceSeed: this.spec.seed,
      seed: deriveSeed(this.spec.seed, 'rollout', step), uidPrefix: p.replays > 0 ? `step-${step}/replay-${p.replays}/` : `step-${step}/`,
      repeats, branches: naive ? 1 : K,
      seats: naive ? this.seats : this.treeSeats,
      reward: this.team.reward, grammar: c.constrainedDecoding,
    }));
    const summary = new SummaryAggregator();
    const ended = await lastValueFrom(runEpisodes(contexts, { concurrency: c.concurrency, lockstep: true }).pipe(tap(summary), toEpisodes(), toArray()), { defaultValue: [] as EpisodeRecord[] });
    const order = new Map(contexts.map((ctx, i) => [ctx.episodeId ?? ctx.instanceUid, i]));
    const episodes = [...ended].sort((a, b) => order.get(a.episodeId)! - order.get(b.episodeId)!);
    const samples: StepRecord[] = episodes.flatMap((e) => e.steps);
    // An instance is solved when any of its episodes is (contexts hold `repeats` episodes per planned instance).
    const solved = new Set(episodes.filter((e) => e.end.success).map((e) => e.instanceUid));
    this.schedule.record(planned.map((p, i) => ({ ...p, success: solved.has(contexts[i * repeats]!.instanceUid) })));
    const tRollout = performance.now();

    // 2. Advantages: per (instance, turn, seat) group, or per instance over last-turn samples (grpo-naive).
    const advOptions = { std: c.advantage.std, epsilon: c.advantage.epsilon };
    const adv = naive ? computeTrajectoryAdvantages(samples, advOptions) : computeAdvantages(samples, advOptions);
    const advantages: (number | null)[] = adv.advantages;

    // 3. Updates: each trainable policy on its own seats' samples only.
    const metrics: MetricsRecord = { step, kind: 'train' };
    if (c.name !== 'none') Object.assign(metrics, await this.timer.maybeAsync('update', () => this.update(step, samples, advantages)));
    const tUpdate = performance.now();

    // 4. Trace: one record per sample, with the advantage it was trained with (null: not trained on).
    this.appendJsonl('trace.jsonl', samples.map((s, i) => toTraceRecord(s, { step, advantage: advantages[i] ?? null })));
    this.stepsDone = step;
    const tEnd = performance.now();

    // 5. Metrics.
    const r = summary.result();
    metrics['rollout/episodes'] = r.episodes;
    metrics['rollout/replayed'] = planned.filter((p) => p.replays > 0).length;
    metrics['rollout/replay_queue'] = this.schedule.queued;
    metrics['rollout/success_rate'] = r.successRate;
    metrics['rollout/mean_turns'] = r.meanTurns;
    metrics['rollout/samples'] = samples.length;
    this.samplesGenerated += samples.length;
    metrics['rollout/groups'] = adv.groups.length;
    metrics['rollout/zero_variance_groups'] = adv.zeroVarianceGroups;
    metrics['rollout/zero_variance_fraction'] = adv.zeroVarianceFraction;
    metrics['rollout/completion_tokens'] = samples.reduce((a, s) => a + s.tokenIds.length, 0);
    for (const [seat, v] of Object.entries(r.meanReward)) metrics[`rollout/reward/${seat}`] = v;
    for (const [seat, v] of Object.entries(r.meanSampleReward)) metrics[`rollout/sample_reward/${seat}`] = v;
    for (const [seat, v] of Object.entries(r.parseFailureRate)) metrics[`rollout/parse_failure/${seat}`] = v;
    for (const [seat, v] of Object.entries(r.greedyBeaten)) metrics[`rollout/greedy_beaten/${seat}`] = v;
    const wall = (tEnd - t0) / 1000;
    const gen = this.timer.ms('generate') / 1000, env = this.timer.ms('env') / 1000, upd = this.timer.ms('update') / 1000;
    metrics['time/step'] = wall;
    metrics['time/rollout'] = (tRollout - t0) / 1000;
    metrics['time/generate'] = gen;
    metrics['time/env'] = env;
    metrics['time/update'] = upd;
    metrics['time/trace'] = (tEnd - tUpdate) / 1000;
    metrics['time/overhead'] = Math.max(0, wall - this.timer.busyMs() / 1000);
    metrics['time/overhead_fraction'] = wall > 0 ? Math.max(0, wall - this.timer.busyMs() / 1000) / wall : 0;
    metrics['perf/generated_tokens_per_s'] = gen > 0 ? (metrics['rollout/completion_tokens'] as number) / gen : 0;
    return metrics;
  }

  /**
   * Routes samples to policies and updates each trainable policy (the frozen ones aside) on ITS samples only: those
   * whose `policy` is its name, i.e. those of the seats mapped to it (an L2 adapter sees its own seat's samples and
   * nothing else). Samples with a null advantage (grpo-naive: not in the last turn) are not trained on. Returns
   * `loss/<policy>/*` metrics and `update/workers`.
   *
   * Every policy's mini-batch order is drawn first, in policy order, so the trainer's RNG stream does not depend on
   * where the updates run. With `algorithm.workers` ≥ 2 and at least two full-model policies (wasm / cpu backend),
   * the full models update at the same time, each in its own persistent worker thread (update-thread.ts), while any
   * other policy updates in the main thread; `update/workers` counts the threads used (0: all in the main thread).
   */
  async update(step: number, samples: readonly StepRecord[], advantages: readonly (number | null)[]): Promise<Record<string, number>> {
    const updates: PolicyUpdate[] = [];
    for (const h of this.handles) {
      if (!h.trainable || h.frozen) continue;
      const idx = samples.flatMap((s, i) => (s.policy === h.name && advantages[i] !== null && advantages[i] !== undefined ? [i] : []));
      updates.push(this.planUpdate(h, step, idx.map((i) => samples[i]!), idx.map((i) => advantages[i]!)));
    }
    const threaded = new Set(this.threadedPolicies());
    const inWorker = updates.filter((u) => u.job && threaded.has(u.handle));
    const inThread = updates.filter((u) => !inWorker.includes(u));
    const results = await Promise.allSettled([
      ...inWorker.map((u) => this.runInWorker(u)),
      (async () => { for (const u of inThread) await this.runInThread(u); })(),
    ]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      // A failed threaded update leaves that worker's copy apart from the main thread's weights: end all workers, so
      // that any later update starts them afresh from the main thread's state.
      await this.stopUpdateWorkers();
      throw outOfMemoryHint(failed.reason, this.spec.file, this.config.microBatchSize);
    }
    const metrics: Record<string, number> = {};
    for (const u of updates) for (const [k, v] of Object.entries(u.out)) metrics[`loss/${u.handle.name}/${k}`] = v;
    metrics['update/workers'] = inWorker.length;
    return metrics;
  }

  /**
   * Updates one policy on its samples in the main thread: keeps the current version's samples, recomputes old
   * log-probs (and reference log-probs for the KL), runs epochs × shuffled mini-batches of PPO-clip, bumps the version.
   */
  async updatePolicy(h: PolicyHandle, step: number, samples: readonly StepRecord[], advantages: readonly number[]): Promise<Record<string, number>> {
    const u = this.planUpdate(h, step, samples, advantages);
    await this.runInThread(u);
    return u.out;
  }

  /**
   * What one policy's update of step `step` trains on: its current-version samples grouped by shared prompt, their
   * advantages, the step's learning rate, and the mini-batches of every epoch, drawn from the trainer's RNG here
   * (nothing else of the update uses it). No job when no sample is of the current version.
   */
  private planUpdate(h: PolicyHandle, step: number, samples: readonly StepRecord[], advantages: readonly number[]): PolicyUpdate {
    const lm = h.trainable!;
    const c = this.config;
    const fresh = samples.flatMap((s, i) => (s.policyVersion === lm.version ? [i] : []));
    // Rows grouped by shared prompt (the K branches of one (instance, turn, seat)): each prompt is encoded once. A
    // group's rows index `samples`. With `zeroVarianceGroups: skip`, groups whose advantages are all 0 carry no signal
    // and are left out.
    const all = promptGroups(fresh.map((i) => samples[i]!)).map((g) => ({ ...g, rows: g.rows.map((r) => fresh[r]!) }));
    const groups = c.zeroVarianceGroups === 'skip' ? all.filter((g) => g.rows.some((r) => advantages[r] !== 0)) : all;
    const trained = groups.reduce((n, g) => n + g.rows.length, 0);
    const out: Record<string, number> = { samples: fresh.length, stale_samples: samples.length - fresh.length, trained_samples: trained };
    if (trained === 0) return { handle: h, out };
    ensureOptimizer(h);
    const budget = this.options.sampleBudget;
    const lr = scheduleLr(h, c, step, budget !== undefined ? { generated: this.samplesGenerated, budget } : undefined);
    out.lr = lr;
    // The loss scores each group at its seat's sampling temperature (the distribution its samples came from), or at
    // the model's own (1) with `loss.logprobTemperature: model`; the sampler recorded log-probs at the former.
    const sampled = groups.map((g) => samplingTemperature(samples[g.rows[0]!]!.temperature));
    const scored = c.loss.logprobTemperature === 'sampling' ? sampled : sampled.map(() => 1);
    const plan: PpoUpdatePlan = {
      groups: groups.map((g, i) => ({ promptIds: g.promptIds, completions: g.completions, ...(scored[i] !== 1 ? { temperature: scored[i]! } : {}) })),
      advantages: groups.flatMap((g) => g.rows.map((r) => advantages[r]!)),
      epochs: planMiniBatches(groups, c.miniBatchSize, c.epochs, this.rng),
      // the gap to the sampler's log-probs is a check only where both score one distribution
      ...(scored.every((t, i) => t === sampled[i]) ? { samplerLogprobs: groups.flatMap((g) => g.rows.map((r) => samples[r]!.logprobs)) } : {}),
    };
    const settings: PpoUpdateSettings = {
      clipLow: c.loss.clipLow, clipHigh: c.loss.clipHigh, aggregation: c.loss.aggregation, klCoef: c.loss.klCoef, entropyCoef: c.loss.entropyCoef,
      maxTokens: h.maxTokens, padId: lm.tokenizer.padTokenId ?? 0, microBatchSize: c.microBatchSize,
    };
    return { handle: h, out, job: { lr, plan, settings } };
  }

  /** Runs a planned update in the main thread. */
  private async runInThread(u: PolicyUpdate): Promise<void> {
    if (!u.job) return;
    const h = u.handle;
    const stats = await ppoUpdate(h.trainable!.model, ensureOptimizer(h)!, u.job.plan, u.job.settings,
      u.job.settings.klCoef > 0 ? (groups) => this.referenceLogprobs(h, groups) : undefined);
    this.finishUpdate(u, stats);
  }

  /** Runs a planned update in the policy's worker thread; the result lands in its variables. */
  private async runInWorker(u: PolicyUpdate): Promise<void> {
    this.finishUpdate(u, await this.updateWorker(u.handle).update(u.job!));
  }

  /**
   * The policy's update worker, started now if it has none: with the policy's current weights, its optimizer's
   * moments and step count (a resumed run's restored ones) and its frozen reference (KL only).
   */
  private updateWorker(h: PolicyHandle): UpdateWorker {
    let worker = this.workerPool.get(h.name);
    if (!worker) {
      const { lr: _lr, ...options } = h.optimizerOptions;
      worker = UpdateWorker.start(h.name, h.trainable!.model, ensureOptimizer(h)!, options as UpdateOptimizerOptions, currentBackend()!.backend, h.reference);
      this.workerPool.set(h.name, worker);
    }
    return worker;
  }

  private finishUpdate(u: PolicyUpdate, stats: Record<string, number>): void {
    const lm = u.handle.trainable!;
    lm.version++;
    Object.assign(u.out, stats, { version: lm.version });
  }

  /**
   * The policies whose updates run in worker threads: the full-model (not LoRA) trainable policies with seats, up to
   * `algorithm.workers` of them, when there are at least two and the backend is single-threaded (wasm, cpu).
   */
  private threadedPolicies(): PolicyHandle[] {
    const full = this.handles.filter((h) => h.trainable && !h.frozen && !h.lora && h.trainable.model.lora.size === 0 && h.seats.length > 0);
    const backend = currentBackend()?.backend;
    if (this.config.workers < 2 || full.length < 2 || (backend !== 'wasm' && backend !== 'cpu')) return [];
    return full.slice(0, this.config.workers);
  }

  /** Ends the update workers (the main thread's weights and optimizers hold everything they trained). */
  private async stopUpdateWorkers(): Promise<void> {
    const all = [...this.workerPool.values()];
    this.workerPool.clear();
    await Promise.all(all.map((w) => w.terminate()));
  }

  private async referenceLogprobs(h: PolicyHandle, groups: readonly PromptGroup[]): Promise<number[][]> {
    const lm = h.trainable!;
    const padId = lm.tokenizer.padTokenId ?? 0;
    if (h.lora) {
      // The reference of a LoRA policy is its frozen base: score with the adapters detached.
      const saved = new Map(lm.model.lora);
      lm.model.lora.clear();
      try {
        return await recomputeGroupLogprobs(lm.model, groups, padId, this.config.microBatchSize);
      } finally {
        for (const [k, v] of saved) lm.model.lora.set(k, v);
      }
    }
    if (!h.reference) throw new Error(`policy '${h.name}': no reference model for the KL penalty`);
    return recomputeGroupLogprobs(h.reference, groups, padId, this.config.microBatchSize);
  }

  /** The frozen reference of full models (KL only): the weights at the start of RL, saved next to the checkpoints. */
  private async saveReference(): Promise<void> {
    if (!(this.config.loss.klCoef > 0)) return;
    for (const h of this.handles) {
      if (!h.trainable || h.lora) continue;
      h.reference = CausalLM.fromTensors(h.trainable.model.hfConfig, h.trainable.model.exportTensors(), `reference of '${h.name}'`);
      await saveCheckpoint(join(this.out, 'checkpoints', 'reference', h.name), h.reference);
    }
  }

  private async loadReference(): Promise<void> {
    if (!(this.config.loss.klCoef > 0)) return;
    for (const h of this.handles) {
      if (!h.trainable || h.lora) continue;
      h.reference = await loadCheckpoint(join(this.out, 'checkpoints', 'reference', h.name));
    }
  }

  /** Writes the checkpoint of the steps completed so far. */
  async checkpoint(): Promise<string> {
    const lrDecay = lrDecaySpan(this.config, this.options.sampleBudget);
    const state: TrainerState = {
      format: 1,
      step: this.stepsDone,
      versions: Object.fromEntries(this.handles.filter((h) => h.trainable).map((h) => [h.name, h.trainable!.version])),
      optimizerSteps: Object.fromEntries(this.handles.filter((h) => h.optimizer).map((h) => [h.name, h.optimizer!.stepCount])),
      rng: this.rng.state(),
      warmStarted: this.warmStarted,
      run: { name: this.spec.name, seed: this.spec.seed, ...(isAbsolute(this.spec.file) ? { spec: this.spec.file } : {}) },
      instances: this.schedule.state(),
      samplesGenerated: this.samplesGenerated,
      ...(this.best ? { best: this.best } : {}),
      ...(lrDecay ? { lrDecay } : {}),
    };
    const dir = await saveTrainerCheckpoint(this.out, this.handles, state, this.config.keepCheckpoints);
    this.checkpointedStep = this.stepsDone;
    this.emit({ type: 'checkpoint', step: this.stepsDone, dir });
    return dir;
  }

  /** Independent K = 1 greedy rollouts on a held-out split (the same instances every time). */
  evaluate(split: 'validation' | 'test' | 'train', episodes: number): Promise<EvaluationResult> {
    return evaluateTeam({ environment: this.team.environment, seats: this.team.seats, reward: this.team.reward }, {
      split, episodes, seed: this.spec.seed, concurrency: this.config.concurrency, grammar: this.config.constrainedDecoding,
    });
  }

  /** Ends the update worker threads, frees the trainer's tensors and the team's policies, and unlocks the output folder. */
  async dispose(): Promise<void> {
    try {
      await this.stopUpdateWorkers();
      disposeHandles(this.handles);
      if (!this.options.team) await this.team.dispose();
    } finally {
      this.lock?.release();
    }
  }
}

/** Samples grouped by identical prompt (in first-appearance order); `rows` are indices into the input. */
export function promptGroups(samples: readonly StepRecord[]): (PromptGroup & { rows: number[] })[] {
  const byKey = new Map<string, PromptGroup & { rows: number[]; completions: number[][] }>();
  samples.forEach((s, i) => {
    const key = JSON.stringify([s.episodeId, s.turn, s.seat, s.promptIds.length, s.promptIds.at(-1) ?? null]);
    let g = byKey.get(key);
    if (g && (g.promptIds.length !== s.promptIds.length || g.promptIds.some((x, j) => x !== s.promptIds[j]))) g = undefined;
    if (!g) {
      g = { promptIds: s.promptIds, completions: [], rows: [] };
      byKey.set(byKey.has(key) ? `${key}#${i}` : key, g);
    }
    g.completions.push([...s.tokenIds]);
    g.rows.push(i);
  });
  return [...byKey.values()];
}

/** The temperature of the distribution a seat samples from: its sampling temperature, 1 when greedy (0). */
export const samplingTemperature = (temperature: number): number => (temperature > 0 ? temperature : 1);

/** Flattens an evaluation into `<prefix>/*` metrics. */
export function evalMetrics(prefix: string, ev: EvaluationResult): Record<string, number> {
  const out: Record<string, number> = {
    [`${prefix}/success_rate`]: ev.successRate,
    [`${prefix}/ci95_low`]: ev.ci95[0],
    [`${prefix}/ci95_high`]: ev.ci95[1],
    [`${prefix}/episodes`]: ev.episodes,
    [`${prefix}/mean_turns`]: ev.meanTurns,
  };
  for (const [seat, v] of Object.entries(ev.meanReward)) out[`${prefix}/reward/${seat}`] = v;
  for (const [seat, v] of Object.entries(ev.parseFailureRate)) out[`${prefix}/parse_failure/${seat}`] = v;
  return out;
}

/** How the wasm runtime reports an exhausted heap (in the update's worker thread or the main thread). */
const WASM_OUT_OF_MEMORY = /memory access out of bounds|out of memory|Aborted\(\)|Cannot enlarge memory/i;

/**
 * An RL update that ran out of wasm memory is a setting to change, not a bug: says so with the key to lower (the
 * checkpoints up to the previous step are intact, so `--resume` continues). Any other failure passes through.
 */
export function outOfMemoryHint(reason: unknown, specFile: string, microBatchSize: number): unknown {
  const message = reason instanceof Error ? reason.message : String(reason);
  if (!WASM_OUT_OF_MEMORY.test(message)) return reason;
  return new TrainingSettingError(
    `${message}\nThe RL update ran out of memory. In ${specFile}, lower algorithm.microBatchSize (now ${microBatchSize}: sequences per forward/backward pass; ` +
      'a mini-batch larger than it is accumulated over several passes) or the seats\' sampling.maxTokens, then continue with `troupe train --resume`.',
  );
}
