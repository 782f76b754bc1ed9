/**
 * Evaluation: independent rollouts (no tree, K = 1) with fixed decoding on a held-out split, one per distinct instance
 * (see `DistinctIndices`); the headline metric is the success rate, reported with a 95% Wilson score interval.
 */
import { lastValueFrom, tap } from 'rxjs';
import {
  type Split,
  type Environment,
  type RewardFunction,
  type SeatBinding,
  planEpisodes,
  runEpisodes,
  SummaryAggregator,
  type EpisodeEvent,
} from '@troupe/kernel';
import { distinctIndices, instanceKeyAt } from './instances.js';

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
  /** Wall seconds. */
  readonly seconds: number;
}

/** Plays `episodes` independent K = 1 episodes on a split with fixed decoding and summarises them. */
export async function evaluateTeam(
  team: { environment: Environment; seats: readonly SeatBinding[]; reward: RewardFunction },
  options: EvaluateOptions,
): Promise<EvaluationResult> {
  const started = performance.now();
  const seats =
    options.decoding === 'spec'
      ? team.seats
      : team.seats.map((s) => ({ ...s, sampling: { ...s.sampling, temperature: 0 } }));
  const indices = distinctIndices(instanceKeyAt(team.environment, options.split, options.seed), options.episodes);
  const contexts = indices.flatMap((index) =>
    planEpisodes({
      environment: team.environment,
      split: options.split,
      count: 1,
      startIndex: index,
      seed: options.seed,
      uidPrefix: 'eval/',
      seats,
      reward: team.reward,
      branches: 1,
      grammar: options.grammar ?? false,
    }),
  );
  const keys = contexts.map((c) => team.environment.instanceKey(c.instance));
  const summary = new SummaryAggregator();
  const onEvent = options.onEvent;
  const index = new Map(contexts.map((c, i) => [c.episodeId ?? c.instanceUid, i]));
  const outcomes = contexts.map(() => false);
  const record = (e: EpisodeEvent): void => {
    if (e.type === 'end' && e.success) outcomes[index.get(e.episodeId)!] = true;
  };
  await lastValueFrom(
    runEpisodes(contexts, { concurrency: options.concurrency ?? 4, lockstep: true }).pipe(
      tap((e) => {
        summary.next(e);
        record(e);
        onEvent?.(e);
      }),
    ),
    { defaultValue: undefined },
  );
  const r = summary.result();
  const successes = Math.round(r.successRate * r.episodes);
  return {
    split: options.split,
    episodes: r.episodes,
    successes,
    successRate: r.successRate,
    ci95: wilsonInterval(successes, r.episodes),
    meanReward: { ...r.meanReward },
    parseFailureRate: { ...r.parseFailureRate },
    meanTurns: r.meanTurns,
    instanceKeys: keys,
    outcomes,
    seconds: (performance.now() - started) / 1000,
  };
}
