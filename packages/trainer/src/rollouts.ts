/**
 * One training step's rollouts: which train instances it plays, how (AT-GRPO's K-branch tree, or grpo-naive's K
 * independent episodes), and the step records they give, in a fixed order whatever order the episodes ended in.
 */
import { from, lastValueFrom, mergeMap, tap, toArray, type Observable } from 'rxjs';
import {
  deriveSeed,
  type EpisodeContext,
  type EpisodeEvent,
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
import type { InstanceSchedule, ScheduledInstance } from './instances.js';

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
  /** How lockstep batching merges generation calls (default `instance`). */
  readonly batching?: RolloutBatching;
}

/** One step's rollouts: its step records, in episode-plan order, their summary, and how many instances were replays. */
export interface StepRollouts {
  readonly records: StepRecord[];
  readonly summary: RolloutSummary;
  readonly replayed: number;
}

/** The episodes of one planned instance in step `step`: one K-branch tree (AT-GRPO) or K episodes (grpo-naive). */
export function instanceEpisodes(step: number, p: ScheduledInstance, s: RolloutSetup): EpisodeContext[] {
  const c = s.config;
  const naive = c.name === 'grpo-naive';
  return planEpisodes({
    environment: s.environment,
    split: 'train',
    count: 1,
    startIndex: p.index,
    instanceSeed: s.seed,
    seed: deriveSeed(s.seed, 'rollout', step),
    uidPrefix: p.replays > 0 ? `step-${step}/replay-${p.replays}/` : `step-${step}/`,
    repeats: naive ? c.branches : 1,
    branches: naive ? 1 : c.branches,
    seats: naive ? s.seats : s.treeSeats,
    reward: s.reward,
    grammar: c.constrainedDecoding,
  });
}

/**
 * How lockstep batching merges a step's generation calls: `step` merges every running episode's calls (the fastest in
 * one process), `instance` only those of one planned instance's episodes — what a job of the distributed engine plays
 * alone. A merged call decodes its prompts as one padded batch, so float rounding (rarely a sampled token) depends on
 * which prompts share it: the two give the same tokens but log-probs apart by ~1e-8 on wasm. With `instance`, a step
 * played in one process equals, byte for byte, the same step played by workers.
 */
export type RolloutBatching = 'step' | 'instance';

/**
 * Plays the episodes of one step (`groups`: one list per planned instance) in lockstep, at most `concurrency` at a
 * time, and gives them back in plan order whatever order they ended in; `onEvent` sees every event as it comes.
 */
export async function playEpisodes(
  groups: readonly (readonly EpisodeContext[])[],
  concurrency: number,
  batching: RolloutBatching,
  onEvent: (e: EpisodeEvent) => void,
): Promise<EpisodeRecord[]> {
  const contexts = groups.flat();
  let events: Observable<EpisodeEvent>;
  if (batching === 'step') events = runEpisodes(contexts, { concurrency, lockstep: true });
  else {
    // each instance its own batcher; as many instances at once as `concurrency` holds their episodes
    const per = Math.max(1, ...groups.map((g) => g.length));
    events = from(groups).pipe(
      mergeMap(
        (g) => runEpisodes([...g], { concurrency: Math.min(concurrency, Math.max(1, g.length)), lockstep: true }),
        Math.max(1, Math.floor(concurrency / per)),
      ),
    );
  }
  const ended = await lastValueFrom(events.pipe(tap(onEvent), toEpisodes(), toArray()), {
    defaultValue: [] as EpisodeRecord[],
  });
  const order = new Map(contexts.map((ctx, i) => [ctx.episodeId ?? ctx.instanceUid, i]));
  return [...ended].sort((a, b) => order.get(a.episodeId)! - order.get(b.episodeId)!);
}

/**
 * Where a step's episodes are played: in this process (the default, {@link playStepRollouts} itself), or elsewhere
 * (the distributed engine, distributed/engine.ts), one planned instance at a time.
 */
export interface RolloutEngine {
  /** Plays the planned instances of step `step`; one outcome per instance, in the order of `planned`. */
  playInstances(step: number, planned: readonly ScheduledInstance[]): Promise<InstanceOutcome[]>;
}

/** What one planned instance gave: its step records and summary events, or why it failed (dropped from the step). */
export type InstanceOutcome =
  | {
      readonly ok: true;
      readonly records: StepRecord[];
      readonly solved: boolean;
      /** The events a {@link SummaryAggregator} reads, in the order they came (see {@link summaryEvent}). */
      readonly events: EpisodeEvent[];
    }
  | { readonly ok: false; readonly error: string; readonly attempts: number };

/** An event cut down to what {@link SummaryAggregator} reads (null: it reads nothing of it), to send it cheaply. */
export function summaryEvent(e: EpisodeEvent): EpisodeEvent | null {
  switch (e.type) {
    case 'reset':
    case 'select':
    case 'end':
      return e;
    case 'step':
      return {
        type: 'step',
        episodeId: e.episodeId,
        seat: e.seat,
        reward: e.reward,
        ...(e.parseError !== undefined ? { parseError: e.parseError } : {}),
        ...(e.greedy !== undefined ? { greedy: e.greedy } : {}),
      } as EpisodeEvent;
    default:
      return null;
  }
}

/** One step's rollouts plus the instances that failed on a distributed engine (dropped from the step). */
export interface EngineStepRollouts extends StepRollouts {
  /** Planned instances whose job failed: their uid prefix and index, the error and the attempts made. */
  readonly failed: readonly {
    readonly index: number;
    readonly replays: number;
    readonly error: string;
    readonly attempts: number;
  }[];
}

/**
 * Plays step `step`'s rollouts: B train instances from the schedule (fresh ones, and with `algorithm.replay` failed
 * ones again; uids `step-n/…`, never reused across steps); AT-GRPO plays each once as a K-branch tree, grpo-naive K
 * times with K = 1. Tells the schedule which instances were solved (by any of their episodes). With an `engine`, each
 * planned instance is played where the engine plays it; an instance whose play failed is dropped from the step (none
 * of its records, counted in `failed`) and counts as not solved.
 */
export async function playStepRollouts(
  step: number,
  schedule: InstanceSchedule,
  s: RolloutSetup,
  engine?: RolloutEngine,
): Promise<EngineStepRollouts> {
  const c = s.config;
  const planned = schedule.next(c.batchSize);
  const replayed = planned.filter((p) => p.replays > 0).length;
  const events: EpisodeEvent[] = [];
  if (engine) {
    const outcomes = await engine.playInstances(step, planned);
    const records: StepRecord[] = [];
    const failed: EngineStepRollouts['failed'][number][] = [];
    outcomes.forEach((o, i) => {
      if (o.ok) {
        records.push(...o.records);
        events.push(...o.events);
      } else failed.push({ ...planned[i]!, error: o.error, attempts: o.attempts });
    });
    schedule.record(
      planned.map((p, i) => ({ ...p, success: outcomes[i]!.ok && (outcomes[i] as { solved: boolean }).solved })),
    );
    return { records, summary: summaryOf(events), replayed, failed };
  }
  const perInstance = planned.map((p) => instanceEpisodes(step, p, s));
  const episodes = await playEpisodes(perInstance, c.concurrency, s.batching ?? 'instance', (e) => {
    const kept = summaryEvent(e);
    if (kept) events.push(kept);
  });
  // An instance is solved when any of its episodes is (grpo-naive plays each planned instance K times).
  const solved = new Set(episodes.filter((e) => e.end.success).map((e) => e.instanceUid));
  schedule.record(planned.map((p, i) => ({ ...p, success: solved.has(perInstance[i]![0]!.instanceUid) })));
  return { records: episodes.flatMap((e) => e.steps), summary: summaryOf(events), replayed, failed: [] };
}

/**
 * The summary of a step's events, fed episode by episode in the order of their ids (each episode's events in the order
 * they came): its float sums do not depend on which episode ended first, or on where the episodes were played.
 */
function summaryOf(events: readonly EpisodeEvent[]): RolloutSummary {
  const id = (e: EpisodeEvent): string => ('episodeId' in e ? e.episodeId : '');
  const summary = new SummaryAggregator();
  for (const e of [...events].sort((a, b) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0))) summary.next(e);
  return summary.result();
}
