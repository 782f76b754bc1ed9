import { defer, finalize, from, mergeMap, type Observable, type ObservableInput } from 'rxjs';
import type { Split } from '../contracts/common.js';
import type { Environment } from '../contracts/environment.js';
import type { RewardFunction } from '../contracts/reward.js';
import type { EpisodeContext, SeatBinding } from '../episode/context.js';
import type { EpisodeEvent } from '../episode/events.js';
import { runEpisode } from '../episode/run-episode.js';
import { LockstepBatcher, type LockstepOptions } from './lockstep.js';

/** Options of {@link runEpisodes}. */
export interface RunEpisodesOptions {
  /** At most this many episodes run at once (an integer >= 1). */
  readonly concurrency: number;
  /**
   * Lockstep batching (rollout/lockstep.ts): the running episodes' generations are merged into one call per policy
   * whenever all of them wait on a policy, in episode order, so a model decodes them as one batch and the merged
   * calls do not depend on timing. Needs the contexts as an array. `true` takes the default options.
   */
  readonly lockstep?: boolean | LockstepOptions;
}

/**
 * Runs many episodes with bounded concurrency (`mergeMap(runEpisode, concurrency)`) and merges their events. Cold:
 * nothing runs until subscribed; unsubscribing aborts every running episode. Events of one episode keep their order;
 * events of different episodes interleave (every event carries its `episodeId`).
 */
export function runEpisodes(
  contexts: Iterable<EpisodeContext> | ObservableInput<EpisodeContext>,
  options: RunEpisodesOptions,
): Observable<EpisodeEvent> {
  const n = options.concurrency;
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`runEpisodes: concurrency must be an integer >= 1, got ${String(n)}.`);
  if (options.lockstep) {
    if (!Array.isArray(contexts))
      throw new Error('runEpisodes: lockstep batching needs the episode contexts as an array.');
    const list = contexts as readonly EpisodeContext[];
    const lockstepOptions = options.lockstep === true ? {} : options.lockstep;
    return defer(() => {
      // one batcher per subscription: each subscription plays the episodes afresh
      const batcher = new LockstepBatcher(list.length, n, lockstepOptions);
      return from(list.map((ctx, i) => ({ ctx, i }))).pipe(
        mergeMap(({ ctx, i }) => {
          const seats = ctx.seats.map((s) => ({ ...s, policy: batcher.wrap(i, s.policy) }));
          return runEpisode({ ...ctx, seats }).pipe(finalize(() => batcher.leave(i)));
        }, n),
      );
    });
  }
  return defer(() => from(contexts as ObservableInput<EpisodeContext>)).pipe(mergeMap((ctx) => runEpisode(ctx), n));
}

/** Options of {@link planEpisodes}: which instances to draw and how every episode is played. */
export interface PlanEpisodesOptions<I = unknown> {
  /** The environment. */
  readonly environment: Environment<I>;
  /** Split to draw instances from. */
  readonly split: Split;
  /** Number of instances. */
  readonly count: number;
  /** Index of the first instance (instances are `environment.instance(split, startIndex + i, instanceSeed)`). Default 0. */
  readonly startIndex?: number;
  /** Seed of the instance stream. Default `seed`. */
  readonly instanceSeed?: number;
  /** Seed of the episodes (samples, tie-breaks). */
  readonly seed: number;
  /** Prefix of every instance uid, e.g. `step-12/`, so that uids are unique across training steps. Default ''. */
  readonly uidPrefix?: string;
  /** Episodes per instance (grpo-naive plays each instance K times; AT-GRPO once). Default 1. */
  readonly repeats?: number;
  /** Seats, in the environment's turn order. */
  readonly seats: readonly SeatBinding[];
  /** The reward function. */
  readonly reward: RewardFunction;
  /** Branches per (turn, seat). Default 1. */
  readonly branches?: number;
  /** Pass role grammars to the policies. Default false. */
  readonly grammar?: boolean;
  /** Turn limit (default the environment's). */
  readonly maxTurns?: number;
  /** Deep-freeze states (tests, debugging). Default false. */
  readonly freezeStates?: boolean;
}

/**
 * The episode contexts for `count` instances of a split. Instance uids are `<uidPrefix><split>/<index>/<key12>` (key12:
 * the first 12 characters of the instance's content key); with `repeats` > 1, episode ids are `<uid>#<r>`.
 */
export function planEpisodes<I>(options: PlanEpisodesOptions<I>): EpisodeContext<I>[] {
  const env = options.environment;
  const start = options.startIndex ?? 0;
  const repeats = options.repeats ?? 1;
  if (!Number.isInteger(options.count) || options.count < 0)
    throw new Error(`planEpisodes: count must be an integer >= 0, got ${options.count}.`);
  if (!Number.isInteger(repeats) || repeats < 1)
    throw new Error(`planEpisodes: repeats must be an integer >= 1, got ${repeats}.`);
  const out: EpisodeContext<I>[] = [];
  for (let i = 0; i < options.count; i++) {
    const index = start + i;
    const instance = env.instance(options.split, index, options.instanceSeed ?? options.seed);
    const instanceUid = `${options.uidPrefix ?? ''}${options.split}/${index}/${env.instanceKey(instance).slice(0, 12)}`;
    for (let r = 0; r < repeats; r++) {
      out.push({
        environment: env,
        instance,
        instanceUid,
        split: options.split,
        episodeId: repeats === 1 ? instanceUid : `${instanceUid}#${r}`,
        seats: options.seats,
        reward: options.reward,
        seed: options.seed,
        ...(options.branches !== undefined ? { branches: options.branches } : {}),
        ...(options.grammar !== undefined ? { grammar: options.grammar } : {}),
        ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
        ...(options.freezeStates !== undefined ? { freezeStates: options.freezeStates } : {}),
      });
    }
  }
  return out;
}
