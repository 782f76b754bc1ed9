/**
 * Which train instances a training step plays: fresh ones, in index order, skipping an index whose instance the run
 * has already played (see {@link DistinctIndices}), and — with `algorithm.replay` — earlier ones the team failed,
 * again. This is prioritised level replay in its plainest form: a
 * first-in first-out queue of failed instances, each replayed at most `maxReplays` times, taking up to
 * `fraction` × B of a step's B instances. Failures are where the policy still has something to learn; a fresh
 * instance the greedy-leaning policy already solves mostly adds groups whose branches all succeed.
 * The schedule's state is part of every checkpoint, so a resumed run plays the same instances.
 */
import type { Environment, ReplaySettings, Split } from '@troupe/kernel';

/** Most duplicates in a row {@link DistinctIndices} skips; then the split counts as used up and repeats are taken. */
export const MAX_SKIPS = 1000;

/** The content key of instance `index` of `split` for `seed`: what {@link DistinctIndices} compares. */
export function instanceKeyAt(environment: Environment, split: Split, seed: number): (index: number) => string {
  return (index) => environment.instanceKey(environment.instance(split, index, seed));
}

/**
 * Distinct instances of one split: the indices 0, 1, 2, … in order, skipping an index whose instance has the content
 * key of an index taken before (an environment addresses each index on its own, so two indices may hold the same
 * instance). The walk costs one instance per index visited — the indices used, never the whole stream before them —
 * and is deterministic, so the state after visiting indices 0 … n − 1 is rebuilt by visiting them again. After
 * `maxSkips` duplicates in a row the split counts as used up: every later index is taken as it comes.
 */
export class DistinctIndices {
  private readonly seen = new Set<string>();
  private position = 0;
  private run = 0;
  private usedUp = false;

  /** A walk from index 0 over the instances `keyOf` names. */
  constructor(
    private readonly keyOf: (index: number) => string,
    private readonly maxSkips = MAX_SKIPS,
  ) {}

  /** The next index whose instance was not taken before. */
  take(): number {
    for (;;) {
      const index = this.position;
      if (this.visit()) return index;
    }
  }

  /** Visits indices until `position` is the next one (a resumed walk); the decisions are the walk's own. */
  advanceTo(position: number): void {
    while (this.position < position) this.visit();
  }

  /** The next index to visit. */
  get next(): number {
    return this.position;
  }

  /** Whether the split is used up (see the class comment). */
  get exhausted(): boolean {
    return this.usedUp;
  }

  /** Visits the next index; true when it is taken. */
  private visit(): boolean {
    const index = this.position++;
    if (this.usedUp) return true;
    const key = this.keyOf(index);
    if (!this.seen.has(key)) {
      this.seen.add(key);
      this.run = 0;
      return true;
    }
    if (++this.run < this.maxSkips) return false;
    this.usedUp = true;
    return true;
  }
}

/** The first `count` indices of {@link DistinctIndices} over `keyOf` (an evaluation's instances). */
export function distinctIndices(keyOf: (index: number) => string, count: number, maxSkips = MAX_SKIPS): number[] {
  if (!Number.isInteger(count) || count < 0)
    throw new Error(`distinct instances: count must be an integer >= 0, got ${count}`);
  const walk = new DistinctIndices(keyOf, maxSkips);
  return Array.from({ length: count }, () => walk.take());
}

/** An instance a step plays: its index in the train split's stream and how many times it has been replayed. */
export interface ScheduledInstance {
  /** Index in the train split (`environment.instance('train', index, spec seed)`). */
  readonly index: number;
  /** 0 for a fresh instance; n for its n-th replay. */
  readonly replays: number;
}

/** The checkpointed state of an {@link InstanceSchedule}. */
export interface InstanceScheduleState {
  /** Index of the next fresh instance to consider (indices before it were played or skipped as duplicates). */
  readonly nextIndex: number;
  /** Failed instances waiting to be played again, oldest first; `replays` is the replay they are waiting for. */
  readonly queue: readonly ScheduledInstance[];
}

/** Fresh and replayed train instances, step by step (see the module comment). */
export class InstanceSchedule {
  private nextIndex: number;
  private queue: ScheduledInstance[];
  private distinct: DistinctIndices | undefined;

  /**
   * A schedule from a checkpointed state (default: the beginning of training). With `keyOf` (see
   * {@link instanceKeyAt}), fresh instances are distinct ({@link DistinctIndices}; a resumed schedule rebuilds the walk
   * over the indices before `nextIndex` when it is first asked); without it, fresh indices simply count up.
   */
  constructor(
    private readonly settings: ReplaySettings,
    state: InstanceScheduleState = { nextIndex: 0, queue: [] },
    private readonly keyOf?: (index: number) => string,
  ) {
    this.nextIndex = state.nextIndex;
    this.queue = state.queue.map((q) => ({ index: q.index, replays: q.replays }));
  }

  /**
   * The `batchSize` instances of the next step: first the fresh ones, then up to ⌊fraction × batchSize⌋ from the
   * front of the queue (they leave it). With replay off and no duplicates this is instances (step − 1)·B … step·B − 1.
   */
  next(batchSize: number): ScheduledInstance[] {
    const replayed = this.queue.splice(0, Math.min(this.queue.length, Math.floor(this.settings.fraction * batchSize)));
    const fresh = Array.from({ length: batchSize - replayed.length }, () => ({ index: this.take(), replays: 0 }));
    return [...fresh, ...replayed];
  }

  /** Records a step's outcomes (in the order {@link next} gave them): failures join the queue while replays remain. */
  record(outcomes: readonly (ScheduledInstance & { readonly success: boolean })[]): void {
    if (this.settings.fraction <= 0) return;
    for (const o of outcomes) {
      if (!o.success && o.replays < this.settings.maxReplays)
        this.queue.push({ index: o.index, replays: o.replays + 1 });
    }
  }

  /** The next fresh index: the next distinct one with `keyOf`, else `nextIndex` itself. */
  private take(): number {
    if (!this.keyOf) return this.nextIndex++;
    if (!this.distinct) {
      this.distinct = new DistinctIndices(this.keyOf);
      this.distinct.advanceTo(this.nextIndex);
    }
    const index = this.distinct.take();
    this.nextIndex = this.distinct.next;
    return index;
  }

  /** Failed instances waiting in the queue. */
  get queued(): number {
    return this.queue.length;
  }

  /** The state to checkpoint. */
  state(): InstanceScheduleState {
    return { nextIndex: this.nextIndex, queue: this.queue.map((q) => ({ ...q })) };
  }
}
