/**
 * The trainer's metrics, flattened into the records of metrics.jsonl (`rollout/*`, `loss/*`, `eval/*`, `time/*`,
 * `perf/*`): one function per kind of record or part of one, so the loop only says which record it writes.
 */
import type { AdvantageResult, RolloutSummary, StepRecord } from '@troupe/kernel';
import type { EvaluationResult } from './evaluate.js';
import type { MetricsRecord } from './report.js';
import type { StepTimer } from './timing.js';
import type { WarmStartResult } from './sft.js';

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

/** The record of an evaluation outside the steps: `baseline` (the start of RL) or `final` (the end), with its time. */
export function evalRecord(step: number, kind: 'baseline' | 'final', ev: EvaluationResult): MetricsRecord {
  return { step, kind, ...evalMetrics(`${kind === 'final' ? 'eval' : kind}_${ev.split}`, ev), 'time/eval': ev.seconds };
}

/** The warm start's record (step 0): demonstrations, samples and SFT losses per policy, worker threads, time. */
export function warmStartRecord(demonstrations: number, samples: number, res: WarmStartResult): MetricsRecord {
  const rec: MetricsRecord = {
    step: 0,
    kind: 'warm-start',
    'warmstart/demonstrations': demonstrations,
    'warmstart/samples': samples,
    'warmstart/workers': res.workers,
    'time/warmstart': res.seconds,
  };
  for (const [p, n] of Object.entries(res.samples)) rec[`warmstart/${p}/samples`] = n;
  for (const [p, l] of Object.entries(res.firstEpochLoss)) rec[`warmstart/${p}/first_epoch_loss`] = l;
  for (const [p, l] of Object.entries(res.lastEpochLoss)) rec[`warmstart/${p}/last_epoch_loss`] = l;
  return rec;
}

/** What one step's rollouts were: the instances replayed and still queued, the summary, the records and their groups. */
export interface RolloutFacts {
  readonly replayed: number;
  readonly replayQueue: number;
  readonly summary: RolloutSummary;
  readonly steps: readonly StepRecord[];
  readonly advantages: Pick<AdvantageResult, 'groups' | 'zeroVarianceGroups' | 'zeroVarianceFraction'>;
}

/** `rollout/*` metrics of one step. */
export function rolloutMetrics(f: RolloutFacts): Record<string, number> {
  const r = f.summary;
  const out: Record<string, number> = {
    'rollout/episodes': r.episodes,
    'rollout/replayed': f.replayed,
    'rollout/replay_queue': f.replayQueue,
    'rollout/success_rate': r.successRate,
    'rollout/mean_turns': r.meanTurns,
    'rollout/samples': f.steps.length,
    'rollout/groups': f.advantages.groups.length,
    'rollout/zero_variance_groups': f.advantages.zeroVarianceGroups,
    'rollout/zero_variance_fraction': f.advantages.zeroVarianceFraction,
    'rollout/completion_tokens': f.steps.reduce((a, s) => a + s.tokenIds.length, 0),
  };
  for (const [seat, v] of Object.entries(r.meanReward)) out[`rollout/reward/${seat}`] = v;
  for (const [seat, v] of Object.entries(r.meanSampleReward)) out[`rollout/sample_reward/${seat}`] = v;
  for (const [seat, v] of Object.entries(r.parseFailureRate)) out[`rollout/parse_failure/${seat}`] = v;
  for (const [seat, v] of Object.entries(r.greedyBeaten)) out[`rollout/greedy_beaten/${seat}`] = v;
  return out;
}

/** Wall-clock marks of one step (`performance.now()` milliseconds): its start, rollouts done, update done, end. */
export interface StepMarks {
  readonly start: number;
  readonly rollout: number;
  readonly update: number;
  readonly end: number;
}

/** `time/*` and `perf/*` metrics of one step: wall time per phase, busy time per category, the loop's own overhead. */
export function timeMetrics(marks: StepMarks, timer: StepTimer, completionTokens: number): Record<string, number> {
  const wall = (marks.end - marks.start) / 1000;
  const gen = timer.ms('generate') / 1000;
  const overhead = Math.max(0, wall - timer.busyMs() / 1000);
  return {
    'time/step': wall,
    'time/rollout': (marks.rollout - marks.start) / 1000,
    'time/generate': gen,
    'time/env': timer.ms('env') / 1000,
    'time/update': timer.ms('update') / 1000,
    'time/trace': (marks.end - marks.update) / 1000,
    'time/overhead': overhead,
    'time/overhead_fraction': wall > 0 ? overhead / wall : 0,
    'perf/generated_tokens_per_s': gen > 0 ? completionTokens / gen : 0,
  };
}
