/**
 * The AT-GRPO trainer (the Stronger-MAS paper), written to be read top to bottom like a CleanRL script:
 *
 * ```
 * prepare:     lock the run folder (run-folder.ts); fresh, or resumed from its newest checkpoint
 * warm start:  SFT of each trainable policy on oracle demonstrations (the one turn loop, scripted oracle seats)
 * per training step n = 1..steps:
 *   rollout:    B train instances (uids `step-n/train/<index>/<key>`, never reused across steps) (rollouts.ts)
 *               at-grpo:    B episodes, each a tree: K branches per (turn, seat), continued from the best branch
 *                           → groups of K step records keyed (instance, turn, seat)
 *               grpo-naive: B·K independent episodes (K per instance, K = 1) → ONE group per instance, last turns
 *   advantages: per group, (r − mean) / (std + 1e-6)   (or biased std, or dr-grpo: no division)
 *   update:     each trainable policy on its seats' records (L2: its adapter's seat only) (policy-updates.ts):
 *               current version, groups not all-0 (zeroVarianceGroups: skip; none → no update, no new version),
 *               old log-probs recomputed, epochs × mini-batches of PPO-clip (ε 0.2/0.2), token-mean, grad clip 1.0,
 *               AdamW, LR schedule; version += 1
 *   log:        trace.jsonl ← one line per step record; metrics.jsonl ← one record per step (metrics.ts)
 *   checkpoint: step-n, atomically; every `evalEvery` steps a validation evaluation (`keepBest`)
 * final eval:  the held-out split, compared episode by episode with the model RL started from
 * ```
 *
 * Sizes per step (T turns played, N seats): at-grpo trains on ≤ B·T·N·K records, grpo-naive on ≤ B·K·N.
 */
import {
  composeTeam,
  computeAdvantages,
  computeTrajectoryAdvantages,
  deriveSeed,
  resolveTrainerConfig,
  toTraceRecord,
  type StepRecord,
  type TeamSpec,
} from '@troupe/kernel';
import { comparisonMetrics } from './compare.js';
import { evaluateTeam, type EvaluationResult } from './evaluate.js';
import { evalMetrics, evalRecord, rolloutMetrics, timeMetrics, warmStartRecord } from './metrics.js';
import type { MetricsRecord } from './report.js';
import { PlayProcesses, playProcessesUnavailable } from './play-processes.js';
import { playStepRollouts } from './rollouts.js';
import { collectDemonstrations, warmStart, type WarmStartResult } from './sft.js';
import { TrainerSetup } from './trainer-setup.js';
import type { TrainerOptions, TrainingResult } from './trainer-types.js';

/**
 * The trainer. Create with {@link Trainer.create}, then `run()` (or `step(n)` for a single step), then `dispose()`.
 * Its state, run folder, updates and evaluation are in {@link TrainerSetup} (trainer-setup.ts).
 */
export class Trainer extends TrainerSetup {
  /** Validates the spec's training settings, composes the team (unless given) and prepares the trainer. */
  static async create(spec: TeamSpec, options: TrainerOptions): Promise<Trainer> {
    const config = resolveTrainerConfig(spec, options.steps !== undefined ? { steps: options.steps } : {});
    return new Trainer(spec, config, options.team ?? (await composeTeam(spec)), options);
  }

  /** Runs the warm start, the training steps, periodic and final evaluation. */
  async run(): Promise<TrainingResult> {
    const started = performance.now();
    const resumedFrom = await this.prepare();
    void this.playProcesses()?.ready(); // the play processes compose their teams while the warm start runs
    const c = this.config;
    this.emit({
      type: 'start',
      firstStep: this.stepsDone + 1,
      steps: c.steps,
      level: this.level,
      frozen: c.freeze,
      ...(resumedFrom !== undefined ? { resumedFrom } : {}),
      ...(this.warnings.length > 0 ? { warnings: this.warnings } : {}),
    });

    let warm: (WarmStartResult & { demonstrations: number }) | undefined;
    if (resumedFrom === undefined) {
      if (c.warmStart && !this.options.skipWarmStart) warm = await this.runWarmStart();
      if (this.spec.evaluation.baseline && c.name !== 'none' && c.steps > 0 && !this.options.skipFinalEval) {
        // RL and the final eval will run
        const ev = await this.evaluate(this.spec.evaluation.split, this.spec.evaluation.episodes);
        await this.folder.writeBaseline(this.stepsDone, ev);
        this.folder.appendMetrics(evalRecord(this.stepsDone, 'baseline', ev));
        this.emit({ type: 'eval', step: this.stepsDone, result: ev });
      }
      await this.updates.saveReference(this.folder.dir);
      await this.checkpoint();
    }

    let stoppedBy: TrainingResult['stoppedBy'] = 'steps';
    for (let step = this.stepsDone + 1; step <= c.steps; step++) {
      if (this.options.sampleBudget !== undefined && this.samplesGenerated >= this.options.sampleBudget) {
        stoppedBy = 'sample-budget';
        break;
      }
      const metrics = await this.step(step);
      let newBest = false;
      if (c.evalEvery > 0 && (step % c.evalEvery === 0 || step === c.steps)) {
        const ev = await this.evaluate('validation', c.evalEpisodes);
        Object.assign(metrics, evalMetrics('eval', ev), { 'time/eval': ev.seconds });
        newBest = this.folder.noteValidation(step, ev, metrics);
        this.emit({ type: 'eval', step, result: ev });
      }
      this.folder.appendMetrics(metrics);
      this.emit({ type: 'step', step, steps: c.steps, metrics });
      if (step % c.checkpointEvery === 0 || step === c.steps || newBest) await this.checkpoint();
    }
    if (this.folder.checkpointedStep !== this.stepsDone) await this.checkpoint(); // the budget ended the steps between checkpoints

    let finalEval: EvaluationResult | undefined;
    let baseline: TrainingResult['baseline'];
    if (!this.options.skipFinalEval) {
      finalEval = await this.evaluate(this.spec.evaluation.split, this.spec.evaluation.episodes);
      baseline = this.folder.compareWithBaseline(finalEval);
      this.folder.appendMetrics({
        ...evalRecord(this.stepsDone, 'final', finalEval),
        ...(baseline ? comparisonMetrics(baseline.comparison) : {}),
      });
      this.emit({ type: 'eval', step: this.stepsDone, result: finalEval });
    }
    const best = this.folder.bestCheckpoint();
    return {
      steps: this.stepsDone,
      samplesGenerated: this.samplesGenerated,
      stoppedBy,
      level: this.level,
      outDir: this.folder.dir,
      seconds: (performance.now() - started) / 1000,
      ...(resumedFrom !== undefined ? { resumedFrom } : {}),
      ...(warm ? { warmStart: warm } : {}),
      ...(finalEval ? { finalEval } : {}),
      ...(baseline ? { baseline } : {}),
      ...(best ? { best } : {}),
    };
  }

  /** Warm start: oracle demonstrations, SFT of each trainable policy (frozen ones aside) on its seats' demonstrations. */
  async runWarmStart(): Promise<WarmStartResult & { demonstrations: number }> {
    const w = this.config.warmStart!;
    const demos = await collectDemonstrations(this.team.environment, this.team.seats, {
      count: w.demonstrations,
      seed: deriveSeed(this.spec.seed, 'demonstrations'),
      noise: w.noise,
    });
    this.emit({ type: 'warm-start', phase: 'demonstrations', count: demos.length });
    const res = await warmStart(
      this.handles.filter((h) => !h.frozen),
      demos,
      w,
      {
        seed: this.spec.seed,
        maxGradNorm: this.config.maxGradNorm,
        onProgress: (policy, epoch, loss) => this.emit({ type: 'warm-start', phase: 'epoch', policy, epoch, loss }),
      },
    );
    this.warmStarted = true;
    const rec = warmStartRecord(w.demonstrations, demos.length, res);
    if (this.config.evalEvery > 0) {
      const ev = await this.evaluate('validation', this.config.evalEpisodes);
      Object.assign(rec, evalMetrics('eval', ev));
      this.folder.noteValidation(0, ev, rec); // step 0 is checkpointed after the warm start
      this.emit({ type: 'eval', step: 0, result: ev });
    }
    this.folder.appendMetrics(rec);
    return { ...res, demonstrations: demos.length };
  }

  /** One training step (1-based): rollouts, advantages, per-policy updates, trace. Returns its metrics (not yet logged). */
  async step(step: number): Promise<MetricsRecord> {
    const c = this.config;
    this.timer.reset();
    const start = performance.now();
    this.updates.boot(); // the update workers (if any) boot while the rollouts run

    // 1. Rollouts: B train instances, AT-GRPO's K-branch trees (or grpo-naive's K episodes each), as step records.
    const players = this.engine ? null : this.playProcesses();
    const { records, summary, replayed, failed } = await playStepRollouts(
      step,
      this.schedule,
      this.rollouts,
      this.engine ?? players ?? undefined,
    );
    const rollout = performance.now();

    // 2. Advantages: per (instance, turn, seat) group, or per instance over last-turn records (grpo-naive).
    const advOptions = { std: c.advantage.std, epsilon: c.advantage.epsilon };
    const adv =
      c.name === 'grpo-naive'
        ? computeTrajectoryAdvantages(records, advOptions)
        : computeAdvantages(records, advOptions);

    // 3. Updates: each trainable policy on its own seats' records only.
    const metrics: MetricsRecord = { step, kind: 'train' };
    if (c.name !== 'none')
      Object.assign(metrics, await this.timer.maybeAsync('update', () => this.update(step, records, adv.advantages)));
    const update = performance.now();

    // 4. Trace: one line per step record, with the advantage it was trained with (null: not trained on).
    this.folder.appendTrace(records.map((s, i) => toTraceRecord(s, { step, advantage: adv.advantages[i] ?? null })));
    this.stepsDone = step;
    const end = performance.now();

    // 5. Metrics (and the instances whose jobs failed on the distributed engine: dropped from the step, logged).
    this.samplesGenerated += records.length;
    if (this.engine) {
      this.folder.appendFailures(failed.map((f) => ({ step, ...f })));
      Object.assign(metrics, { 'rollout/failed_instances': failed.length }, await this.engine.metrics());
    }
    const rolloutPart = rolloutMetrics({
      replayed,
      replayQueue: this.schedule.queued,
      summary,
      steps: records,
      advantages: adv,
    });
    Object.assign(
      metrics,
      rolloutPart,
      timeMetrics({ start, rollout, update, end }, this.timer, rolloutPart['rollout/completion_tokens']!),
    );
    // distributed or play processes: others generate too, so the rate is over the rollouts' wall time, all together
    if ((this.engine || players) && rollout > start)
      metrics['perf/generated_tokens_per_s'] = rolloutPart['rollout/completion_tokens']! / ((rollout - start) / 1000);
    return metrics;
  }

  /** Episodes over play processes (play-processes.ts): null when not (see {@link playProcesses}), undefined until first asked. */
  protected players: PlayProcesses | null | undefined;

  /**
   * Where evaluation episodes and step rollouts are shared between this process and play processes (play-processes.ts):
   * in this process (no distributed engine), with lockstep batching per instance, more than one worker allowed
   * (`algorithm.workers`) and full tfjs models on wasm/cpu. The same episodes and step records as one process plays,
   * in about half the time on two cores. Null where they are not.
   */
  protected playProcesses(): PlayProcesses | null {
    if (this.players !== undefined) return this.players;
    const workers = Math.min(this.config.workers, this.config.concurrency);
    const threaded =
      !this.engine &&
      this.execution.batching === 'instance' &&
      workers > 1 &&
      playProcessesUnavailable(this, !this.options.team) === undefined;
    return (this.players = threaded ? new PlayProcesses(this, this.rollouts, workers) : null);
  }

  /** Independent K = 1 greedy rollouts on a held-out split (the same instances every time), over play processes when possible. */
  override evaluate(split: 'validation' | 'test' | 'train', episodes: number): Promise<EvaluationResult> {
    const engine = this.playProcesses();
    if (!engine) return super.evaluate(split, episodes);
    return evaluateTeam(this.team, {
      split,
      episodes,
      seed: this.spec.seed,
      grammar: this.config.constrainedDecoding,
      engine,
    });
  }

  /** Ends the play processes, then what {@link TrainerSetup.dispose} ends. */
  override async dispose(): Promise<void> {
    try {
      await this.players?.close();
    } finally {
      await super.dispose();
    }
  }

  /** The RL update of one step's records (see {@link PolicyUpdates.update}): `loss/<policy>/*` and `update/workers`. */
  update(
    step: number,
    records: readonly StepRecord[],
    advantages: readonly (number | null)[],
  ): Promise<Record<string, number>> {
    return this.updates.update(step, records, advantages, { rng: this.rng, samplesGenerated: this.samplesGenerated });
  }
}
