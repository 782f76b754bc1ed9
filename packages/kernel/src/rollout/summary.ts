import { defer, last, map, tap, type OperatorFunction } from 'rxjs';
import type { EpisodeEvent } from '../episode/events.js';

/** Aggregate numbers of a set of episodes (names follow the `rollout/*` metrics). */
export interface RolloutSummary {
  /** Episodes that ended. */
  readonly episodes: number;
  /** Fraction of ended episodes that succeeded (0 when none ended). */
  readonly successRate: number;
  /** Mean number of turns played per ended episode. */
  readonly meanTurns: number;
  /** Fraction of ended episodes cut by the turn limit. */
  readonly truncatedRate: number;
  /** Per seat: mean over ended episodes of the seat's summed selected rewards. */
  readonly meanReward: Readonly<Record<string, number>>;
  /** Per seat: mean reward over all samples (all branches, selected or not). */
  readonly meanSampleReward: Readonly<Record<string, number>>;
  /** Per seat: fraction of samples whose completion did not parse. */
  readonly parseFailureRate: Readonly<Record<string, number>>;
  /** Samples seen (all branches). */
  readonly samples: number;
  /**
   * Per seat with a greedy branch (`algorithm.greedyBranch`): the fraction of its groups where a sampled branch got a
   * higher reward than the greedy one — how often sampling finds something better than what evaluation plays. Seats
   * without greedy branches are absent.
   */
  readonly greedyBeaten: Readonly<Record<string, number>>;
}

/**
 * A subscriber that aggregates episode events into a {@link RolloutSummary}. Feed it with `tap(aggregator)` (or call
 * `next`) and read `result()` at any time.
 */
export class SummaryAggregator {
  private episodes = 0;
  private successes = 0;
  private truncated = 0;
  private turns = 0;
  private readonly rewardSums = new Map<string, number>();
  private readonly sampleRewardSums = new Map<string, { sum: number; n: number }>();
  private readonly parse = new Map<string, { failed: number; n: number }>();
  /** Episodes whose open group (its steps seen, its selection not yet) has a greedy branch. */
  private readonly openGreedy = new Set<string>();
  private readonly greedy = new Map<string, { beaten: number; n: number }>();

  /** Feeds one event. */
  next(event: EpisodeEvent): void {
    switch (event.type) {
      case 'reset':
        for (const seat of event.seats) {
          if (!this.parse.has(seat)) this.parse.set(seat, { failed: 0, n: 0 });
          if (!this.sampleRewardSums.has(seat)) this.sampleRewardSums.set(seat, { sum: 0, n: 0 });
          if (!this.rewardSums.has(seat)) this.rewardSums.set(seat, 0);
        }
        return;
      case 'step': {
        const p = this.parse.get(event.seat) ?? { failed: 0, n: 0 };
        p.n++;
        if (event.parseError !== undefined) p.failed++;
        this.parse.set(event.seat, p);
        const s = this.sampleRewardSums.get(event.seat) ?? { sum: 0, n: 0 };
        s.sum += event.reward;
        s.n++;
        this.sampleRewardSums.set(event.seat, s);
        if (event.greedy === true) this.openGreedy.add(event.episodeId);
        return;
      }
      case 'select': {
        // the greedy branch is branch 0; a group's steps come just before its selection, in the same episode
        if (!this.openGreedy.delete(event.episodeId)) return;
        const g = this.greedy.get(event.seat) ?? { beaten: 0, n: 0 };
        g.n++;
        if (event.rewards.slice(1).some((r) => r > event.rewards[0]!)) g.beaten++;
        this.greedy.set(event.seat, g);
        return;
      }
      case 'end':
        this.episodes++;
        if (event.success) this.successes++;
        if (event.termination.truncated) this.truncated++;
        this.turns += event.turns;
        for (const [seat, r] of Object.entries(event.rewards))
          this.rewardSums.set(seat, (this.rewardSums.get(seat) ?? 0) + r);
        return;
      default:
        return;
    }
  }

  /** The summary of everything fed so far. */
  result(): RolloutSummary {
    const e = this.episodes;
    const perEpisode = (x: number): number => (e === 0 ? 0 : x / e);
    let samples = 0;
    for (const p of this.parse.values()) samples += p.n;
    return {
      episodes: e,
      successRate: perEpisode(this.successes),
      meanTurns: perEpisode(this.turns),
      truncatedRate: perEpisode(this.truncated),
      meanReward: Object.fromEntries([...this.rewardSums].map(([seat, sum]) => [seat, perEpisode(sum)])),
      meanSampleReward: Object.fromEntries(
        [...this.sampleRewardSums].map(([seat, s]) => [seat, s.n === 0 ? 0 : s.sum / s.n]),
      ),
      parseFailureRate: Object.fromEntries([...this.parse].map(([seat, p]) => [seat, p.n === 0 ? 0 : p.failed / p.n])),
      samples,
      greedyBeaten: Object.fromEntries([...this.greedy].map(([seat, g]) => [seat, g.beaten / g.n])),
    };
  }
}

/** Operator: episode events → one {@link RolloutSummary} when the stream completes (an empty stream gives zeros). */
export function summarize(): OperatorFunction<EpisodeEvent, RolloutSummary> {
  return (source) =>
    defer(() => {
      const agg = new SummaryAggregator();
      return source.pipe(
        tap((e) => agg.next(e)),
        last(null, null),
        map(() => agg.result()),
      );
    });
}
