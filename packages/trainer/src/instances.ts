/**
 * Which train instances a training step plays: fresh ones, in order, from the split's seeded stream, and — with
 * `algorithm.replay` — earlier ones the team failed, again. This is prioritised level replay in its plainest form: a
 * first-in first-out queue of failed instances, each replayed at most `maxReplays` times, taking up to
 * `fraction` × B of a step's B instances. Failures are where the policy still has something to learn; a fresh
 * instance the greedy-leaning policy already solves mostly adds groups whose branches all succeed.
 * The schedule's state is part of every checkpoint, so a resumed run plays the same instances.
 */
import type { ReplaySettings } from '@troupe/kernel';

/** An instance a step plays: its index in the train split's stream and how many times it has been replayed. */
export interface ScheduledInstance {
  /** Index in the train split (`environment.instance('train', index, spec seed)`). */
  readonly index: number;
  /** 0 for a fresh instance; n for its n-th replay. */
  readonly replays: number;
}

/** The checkpointed state of an {@link InstanceSchedule}. */
export interface InstanceScheduleState {
  /** Index of the next fresh instance. */
  readonly nextIndex: number;
  /** Failed instances waiting to be played again, oldest first; `replays` is the replay they are waiting for. */
  readonly queue: readonly ScheduledInstance[];
}

/** Fresh and replayed train instances, step by step (see the module comment). */
export class InstanceSchedule {
  private nextIndex: number;
  private queue: ScheduledInstance[];

  /** A schedule from a checkpointed state (default: the beginning of training). */
  constructor(
    private readonly settings: ReplaySettings,
    state: InstanceScheduleState = { nextIndex: 0, queue: [] },
  ) {
    this.nextIndex = state.nextIndex;
    this.queue = state.queue.map((q) => ({ index: q.index, replays: q.replays }));
  }

  /**
   * The `batchSize` instances of the next step: first the fresh ones, then up to ⌊fraction × batchSize⌋ from the
   * front of the queue (they leave it). With replay off this is instances (step − 1)·B … step·B − 1, as always.
   */
  next(batchSize: number): ScheduledInstance[] {
    const replayed = this.queue.splice(0, Math.min(this.queue.length, Math.floor(this.settings.fraction * batchSize)));
    const fresh = Array.from({ length: batchSize - replayed.length }, (_, i) => ({
      index: this.nextIndex + i,
      replays: 0,
    }));
    this.nextIndex += fresh.length;
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

  /** Failed instances waiting in the queue. */
  get queued(): number {
    return this.queue.length;
  }

  /** The state to checkpoint. */
  state(): InstanceScheduleState {
    return { nextIndex: this.nextIndex, queue: this.queue.map((q) => ({ ...q })) };
  }
}
