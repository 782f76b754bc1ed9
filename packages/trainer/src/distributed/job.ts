/**
 * A rollout job of the distributed engine: one planned instance's whole tree (AT-GRPO) or its K episodes
 * (grpo-naive) for one training step, with everything a worker needs to rebuild the team and play it exactly as the
 * trainer would in its own process, and what the worker sends back.
 */
import {
  planEpisodes,
  type EpisodeContext,
  type EpisodeEvent,
  type Environment,
  type RewardFunction,
  type SeatBinding,
  type Split,
  type StepRecord,
  type TeamSpec,
  type TrainerConfig,
} from '@troupe/kernel';
import type { EvalJobOptions } from '../evaluate.js';
import type { ScheduledInstance } from '../instances.js';

/** The policy weights a job plays with: the folder of a published version (versions.ts) and each policy's version. */
export interface PolicyVersions {
  /** The published folder (`<shared>/step-<n>`), holding one sub-folder per trainable policy; absent: the spec's weights. */
  readonly dir?: string;
  /** The trainer's version counter of each trainable policy (traced as `policyVersion`). */
  readonly versions: Readonly<Record<string, number>>;
}

/** The payload of a rollout job (JSON). */
export interface RolloutJob {
  /** Format of this payload; a worker refuses another. */
  readonly format: 1;
  /** The run (one trainer process): part of the idempotency key. */
  readonly runId: string;
  /** The training step (1-based). */
  readonly step: number;
  /** The planned instance: its index in the train split and its replay count. */
  readonly instance: ScheduledInstance;
  /** The resolved team spec; `file` is where it was read from (relative paths in it resolve from its folder). */
  readonly spec: TeamSpec;
  /** The resolved training settings (K, the tree's seats, grammar, concurrency, ...). */
  readonly config: TrainerConfig;
  /** The weights to play with. */
  readonly policies: PolicyVersions;
  /**
   * An evaluation episode instead of a training instance (`instance` and `step` are then unused): evaluation instance
   * `index` of `split`, K = 1, with `decoding`; the result holds all its events and no records.
   */
  readonly eval?: EvalJobOptions & { readonly index: number };
  /**
   * A `troupe run` episode instead (`instance` and `step` unused): instance `index` of `split`, planned as `troupe run`
   * plans it ({@link runEpisode}); the result holds all its events and no records.
   */
  readonly run?: RunJobOptions & { readonly index: number };
}

/** How a `troupe run` episode is played: the instances of `split` from index 0, with the seats' own sampling. */
export interface RunJobOptions {
  readonly split: Split;
  readonly seed: number;
}

/**
 * The episode context of `troupe run`'s episode `index` (`planEpisodes` of `count` episodes gives the same one at
 * position `index`).
 */
export function runEpisode(
  team: { environment: Environment; seats: readonly SeatBinding[]; reward: RewardFunction },
  index: number,
  options: RunJobOptions,
): EpisodeContext {
  return planEpisodes({
    environment: team.environment,
    split: options.split,
    count: 1,
    startIndex: index,
    seed: options.seed,
    seats: team.seats,
    reward: team.reward,
  })[0]!;
}

/** What a worker sends back for a {@link RolloutJob}. */
export interface RolloutJobResult {
  /** The instance's step records, in the order the trainer would trace them. */
  readonly records: StepRecord[];
  /** Whether any of its episodes succeeded. */
  readonly solved: boolean;
  /** Its episodes' events as the rollout summary reads them (rollouts.ts `summaryEvent`); an evaluation job's, all. */
  readonly events: EpisodeEvent[];
  /** Wall seconds the worker played it. */
  readonly seconds: number;
}

/** The instance uid of a planned instance without its content key: `step-n/[replay-r/]train/<index>`. */
export function plannedUid(step: number, p: ScheduledInstance): string {
  return `step-${step}/${p.replays > 0 ? `replay-${p.replays}/` : ''}train/${p.index}`;
}

/** The idempotency key of an evaluation job: (run id, evaluation number, split, index). */
export function evalJobKey(runId: string, evaluation: number, split: string, index: number): string {
  return `${runId}/eval-${evaluation}/${split}/${index}`;
}

/** The idempotency key of a `troupe run` job: (run id, split, index). */
export function runJobKey(runId: string, split: string, index: number): string {
  return `${runId}/run/${split}/${index}`;
}

/** The idempotency key of a job: (run id, step, instance uid). */
export function jobKey(runId: string, step: number, p: ScheduledInstance): string {
  return `${runId}/${plannedUid(step, p)}`;
}
