/**
 * Evaluation: independent rollouts (no tree, K = 1) with fixed decoding on a held-out split, one per distinct instance
 * (see `DistinctIndices`); the headline metric is the success rate, reported with a 95% Wilson score interval.
 */
import {
  type Split,
  type Environment,
  type EpisodeContext,
  type RewardFunction,
  type SeatBinding,
  planEpisodes,
  SummaryAggregator,
  type EpisodeEvent,
} from '@troupe/kernel';
import { distinctIndices, instanceKeyAt } from './instances.js';
import { playEpisodes } from './rollouts.js';

/** The 95% Wilson score interval of `successes / n` (z = 1.959964). [0, 1] when n = 0. */
export function wilsonInterval(successes: number, n: number, z = 1.959963984540054): [number, number] {
  if (n <= 0) return [0, 1];
  const p = successes / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const center = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return [Math.max(0, center - half), Math.min(1, center + half)];
}

/** Options of {@link evaluateTeam}. */
export interface EvaluateOptions {
  /** Held-out split. */
  readonly split: Split;
  /** Episodes (one per instance; the first `episodes` distinct instances of the split, see `DistinctIndices`). */
  readonly episodes: number;
  /** Seed of the instances and samples (the same seed evaluates the same instances). */
  readonly seed: number;
  /** Episodes at once. Default 4. */
  readonly concurrency?: number;
  /** Decoding: 'greedy' (temperature 0, the default) or 'spec' (each seat's own sampling). */
  readonly decoding?: 'greedy' | 'spec';
  /** Enforce role grammars (constrained decoding). Default false. */
  readonly grammar?: boolean;
  /** Every event (a trace writer, a progress display). */
  readonly onEvent?: (event: EpisodeEvent) => void;
  /** Lockstep batching per instance (`instance`, the default, as workers play them) or across all the episodes (`step`). */
  readonly batching?: 'step' | 'instance';
  /** Plays the episodes elsewhere (the distributed engine), one job per instance. */
  readonly engine?: EvalEngine;
}

/** What {@link evaluateTeam} asks of the distributed engine. */
export interface EvalEngine {
  /**
   * Plays the evaluation episode of each index (K = 1, `options`' decoding) and gives each one's events in order, in
   * the order of `indices`; an episode whose job failed gives its error instead.
   */
  playEval(indices: readonly number[], options: EvalJobOptions): Promise<(EpisodeEvent[] | { error: string })[]>;
}

/** How an evaluation episode is played (what a worker needs besides the team). */
export interface EvalJobOptions {
  readonly split: Split;
  readonly seed: number;
  readonly decoding: 'greedy' | 'spec';
  readonly grammar: boolean;
}

/** The episode context of evaluation instance `index` (the seats at temperature 0 unless `decoding` is `spec`). */
export function evalEpisode(
  team: { environment: Environment; seats: readonly SeatBinding[]; reward: RewardFunction },
  index: number,
  options: EvalJobOptions,
): EpisodeContext {
  const seats =
    options.decoding === 'spec'
      ? team.seats
      : team.seats.map((s) => ({ ...s, sampling: { ...s.sampling, temperature: 0 } }));
  return planEpisodes({
    environment: team.environment,
    split: options.split,
    count: 1,
    startIndex: index,
    seed: options.seed,
    uidPrefix: 'eval/',
    seats,
    reward: team.reward,
    branches: 1,
    grammar: options.grammar,
  })[0]!;
}

/** Result of an evaluation. */
export interface EvaluationResult {
  /** Split evaluated. */
  readonly split: Split;
  /** Episodes played. */
  readonly episodes: number;
  /** Successful episodes. */
  readonly successes: number;
  /** successes / episodes. */
  readonly successRate: number;
  /** 95% Wilson interval of the success rate. */
  readonly ci95: [number, number];
  /** Per seat: mean summed reward of the episode. */
  readonly meanReward: Record<string, number>;
  /** Per seat: share of completions that did not parse. */
  readonly parseFailureRate: Record<string, number>;
  /** Mean turns per episode. */
  readonly meanTurns: number;
  /** Instance content keys evaluated (to prove disjointness from training). */
  readonly instanceKeys: readonly string[];
  /** Success of each episode, in instance order (the same seed gives the same instances: pairs two evaluations). */
  readonly outcomes: readonly boolean[];
  /** Episodes whose job failed on the distributed engine (counted in `episodes`, not solved). */
  readonly failedEpisodes?: number;
  /** Wall seconds. */
  readonly seconds: number;
}

/** Plays `episodes` independent K = 1 episodes on a split with fixed decoding and summarises them. */
export async function evaluateTeam(
  team: { environment: Environment; seats: readonly SeatBinding[]; reward: RewardFunction },
  options: EvaluateOptions,
): Promise<EvaluationResult> {
  const started = performance.now();
  const job: EvalJobOptions = {
    split: options.split,
    seed: options.seed,
    decoding: options.decoding ?? 'greedy',
    grammar: options.grammar ?? false,
  };
  const indices = distinctIndices(instanceKeyAt(team.environment, options.split, options.seed), options.episodes);
  const contexts = indices.map((index) => evalEpisode(team, index, job));
  const keys = contexts.map((c) => team.environment.instanceKey(c.instance));
  const summary = new SummaryAggregator();
  const onEvent = options.onEvent;
  const index = new Map(contexts.map((c, i) => [c.episodeId ?? c.instanceUid, i]));
  const outcomes = contexts.map(() => false);
  const feed = (e: EpisodeEvent): void => {
    summary.next(e);
    if (e.type === 'end' && e.success) outcomes[index.get(e.episodeId)!] = true;
  };
  let failedEpisodes = 0;
  if (options.engine) {
    // each episode's events in instance order; an episode whose job failed counts as played and not solved
    for (const played of await options.engine.playEval(indices, job)) {
      if (Array.isArray(played)) played.forEach((e) => (feed(e), onEvent?.(e)));
      else failedEpisodes++;
    }
  } else {
    // events reach onEvent as they come, the summary episode by episode in instance order (the engine's order), so
    // its float sums do not depend on which episode ended first
    const events: EpisodeEvent[][] = contexts.map(() => []);
    await playEpisodes(
      contexts.map((c) => [c]),
      options.concurrency ?? 4,
      options.batching ?? 'instance',
      (e) => {
        const i = 'episodeId' in e ? index.get(e.episodeId) : undefined;
        if (i !== undefined) events[i]!.push(e);
        else feed(e);
        onEvent?.(e);
      },
    );
    for (const list of events) list.forEach(feed);
  }
  const r = summary.result();
  const successes = Math.round(r.successRate * r.episodes);
  const episodes = r.episodes + failedEpisodes;
  return {
    split: options.split,
    episodes,
    successes,
    successRate: episodes === 0 ? 0 : successes / episodes,
    ci95: wilsonInterval(successes, episodes),
    meanReward: { ...r.meanReward },
    parseFailureRate: { ...r.parseFailureRate },
    meanTurns: r.meanTurns,
    instanceKeys: keys,
    outcomes,
    ...(failedEpisodes > 0 ? { failedEpisodes } : {}),
    seconds: (performance.now() - started) / 1000,
  };
}
