/**
 * One training step's rollouts: which train instances it plays, how (AT-GRPO's K-branch tree, or grpo-naive's K
 * independent episodes), and the step records they give, in a fixed order whatever order the episodes ended in.
 */
import { lastValueFrom, tap, toArray } from 'rxjs';
import {
  deriveSeed,
  hasGreedyBranch,
  planEpisodes,
  runEpisodes,
  SummaryAggregator,
  toEpisodes,
  type Environment,
  type EpisodeRecord,
  type RewardFunction,
  type RolloutSummary,
  type SeatBinding,
  type StepRecord,
  type TrainerConfig,
} from '@troupe/kernel';
import type { InstanceSchedule } from './instances.js';

/** The seats as AT-GRPO's tree plays them: each seat's own K (`seatBranches`) and greedy branch (`greedyBranch`, `selection`). */
export function treeSeats(seats: readonly SeatBinding[], config: TrainerConfig): SeatBinding[] {
  return seats.map((s) => ({
    ...s,
    ...(config.seatBranches?.[s.name] !== undefined ? { branches: config.seatBranches[s.name] } : {}),
    ...(hasGreedyBranch(config, s.name)
      ? { greedyBranch: true, ...(config.selection === 'greedy' ? { continueFromGreedy: true } : {}) }
      : {}),
  }));
}

/** What a step plays with. */
export interface RolloutSetup {
  readonly environment: Environment;
  /** The seats of independent episodes (grpo-naive). */
  readonly seats: readonly SeatBinding[];
  /** The seats of the tree (AT-GRPO), see {@link treeSeats}. */
  readonly treeSeats: readonly SeatBinding[];
  readonly reward: RewardFunction;
  /** The spec's seed: instances and samples derive from it. */
  readonly seed: number;
  readonly config: TrainerConfig;
}

/** One step's rollouts: its step records, in episode-plan order, their summary, and how many instances were replays. */
export interface StepRollouts {
  readonly records: StepRecord[];
  readonly summary: RolloutSummary;
  readonly replayed: number;
}

/**
 * Plays step `step`'s rollouts: B train instances from the schedule (fresh ones, and with `algorithm.replay` failed
 * ones again; uids `step-n/…`, never reused across steps); AT-GRPO plays each once as a K-branch tree, grpo-naive K
 * times with K = 1. Tells the schedule which instances were solved (by any of their episodes).
 */
export async function playStepRollouts(
  step: number,
  schedule: InstanceSchedule,
  s: RolloutSetup,
): Promise<StepRollouts> {
  const c = s.config;
  const naive = c.name === 'grpo-naive';
  const planned = schedule.next(c.batchSize);
  const repeats = naive ? c.branches : 1;
  const contexts = planned.flatMap((p) =>
    planEpisodes({
      environment: s.environment,
      split: 'train',
      count: 1,
      startIndex: p.index,
      instanceSeed: s.seed,
      seed: deriveSeed(s.seed, 'rollout', step),
      uidPrefix: p.replays > 0 ? `step-${step}/replay-${p.replays}/` : `step-${step}/`,
      repeats,
      branches: naive ? 1 : c.branches,
      seats: naive ? s.seats : s.treeSeats,
      reward: s.reward,
      grammar: c.constrainedDecoding,
    }),
  );
  const summary = new SummaryAggregator();
  const ended = await lastValueFrom(
    runEpisodes(contexts, { concurrency: c.concurrency, lockstep: true }).pipe(tap(summary), toEpisodes(), toArray()),
    { defaultValue: [] as EpisodeRecord[] },
  );
  const order = new Map(contexts.map((ctx, i) => [ctx.episodeId ?? ctx.instanceUid, i]));
  const episodes = [...ended].sort((a, b) => order.get(a.episodeId)! - order.get(b.episodeId)!);
  // An instance is solved when any of its episodes is (contexts hold `repeats` episodes per planned instance).
  const solved = new Set(episodes.filter((e) => e.end.success).map((e) => e.instanceUid));
  schedule.record(planned.map((p, i) => ({ ...p, success: solved.has(contexts[i * repeats]!.instanceUid) })));
  return {
    records: episodes.flatMap((e) => e.steps),
    summary: summary.result(),
    replayed: planned.filter((p) => p.replays > 0).length,
  };
}
