import { defer, lastValueFrom, mergeMap, toArray, type Observable, type OperatorFunction } from 'rxjs';
import type { EndEvent, EpisodeEvent, ResetEvent, RewardEvent, SampleEvent, SelectEvent } from '../episode/events.js';

/**
 * One sample joined with its outcome: what the trainer and the trace need about one branch of one (turn, seat).
 * `reward`, `turn`, `seat` and `instanceUid` make it a `GroupableSample` for the advantage functions.
 */
export interface SampleRecord extends Omit<SampleEvent, 'type'>, Omit<RewardEvent, 'type' | keyof SampleEvent> {}

/** The K samples of one (instance, turn, seat) of one episode, complete once the branch was selected. */
export interface SampleGroup {
  /** Episode id. */
  readonly episodeId: string;
  /** Instance uid. */
  readonly instanceUid: string;
  /** Turn. */
  readonly turn: number;
  /** Seat. */
  readonly seat: string;
  /** The K samples, by branch index. */
  readonly samples: readonly SampleRecord[];
  /** The selection event that closed the group. */
  readonly selection: SelectEvent;
}

/** Everything one episode produced. */
export interface EpisodeRecord {
  /** Episode id. */
  readonly episodeId: string;
  /** Instance uid. */
  readonly instanceUid: string;
  /** The reset event. */
  readonly reset: ResetEvent;
  /** Its groups, in play order. */
  readonly groups: readonly SampleGroup[];
  /** All samples, in play order (group by group, branch by branch). */
  readonly samples: readonly SampleRecord[];
  /** The end event. */
  readonly end: EndEvent;
}

/** What one event completed. */
export interface AssembledOutput {
  /** Samples completed by this event (a reward event completes one). */
  readonly samples: readonly SampleRecord[];
  /** The group completed by this event (a select event). */
  readonly group?: SampleGroup;
  /** The episode completed by this event (an end event). */
  readonly episode?: EpisodeRecord;
}

interface OpenEpisode {
  reset?: ResetEvent;
  pending: Map<string, SampleEvent>;
  groupSamples: SampleRecord[];
  groups: SampleGroup[];
  samples: SampleRecord[];
}

/**
 * Joins the event stream of any number of interleaved episodes into samples, groups and episodes. Stateful; one per
 * stream. Throws on an out-of-order stream (a reward without its sample), which would mean a bug in the producer.
 */
export class EpisodeAssembler {
  private readonly open = new Map<string, OpenEpisode>();

  /** Feeds one event; returns what it completed. */
  push(event: EpisodeEvent): AssembledOutput {
    let ep = this.open.get(event.episodeId);
    if (!ep) this.open.set(event.episodeId, (ep = { pending: new Map(), groupSamples: [], groups: [], samples: [] }));
    switch (event.type) {
      case 'reset':
        ep.reset = event;
        return { samples: [] };
      case 'turn':
        return { samples: [] };
      case 'sample':
        ep.pending.set(branchKey(event.turn, event.seat, event.branch), event);
        return { samples: [] };
      case 'reward': {
        const key = branchKey(event.turn, event.seat, event.branch);
        const sample = ep.pending.get(key);
        if (!sample) throw new Error(`EpisodeAssembler: reward event without its sample (episode '${event.episodeId}', turn ${event.turn}, seat '${event.seat}', branch ${event.branch}).`);
        ep.pending.delete(key);
        const { type: _s, ...s } = sample;
        const { type: _r, episodeId: _e, instanceUid: _i, split: _p, turn: _t, seat: _z, branch: _b, ...r } = event;
        const record: SampleRecord = { ...s, ...r };
        ep.groupSamples.push(record);
        ep.samples.push(record);
        return { samples: [record] };
      }
      case 'select': {
        const group: SampleGroup = {
          episodeId: event.episodeId, instanceUid: event.instanceUid, turn: event.turn, seat: event.seat,
          samples: ep.groupSamples, selection: event,
        };
        ep.groupSamples = [];
        ep.groups.push(group);
        return { samples: [], group };
      }
      case 'end': {
        this.open.delete(event.episodeId);
        if (!ep.reset) throw new Error(`EpisodeAssembler: end event without a reset (episode '${event.episodeId}').`);
        return { samples: [], episode: { episodeId: event.episodeId, instanceUid: event.instanceUid, reset: ep.reset, groups: ep.groups, samples: ep.samples, end: event } };
      }
    }
  }
}

function branchKey(turn: number, seat: string, branch: number): string {
  return JSON.stringify([turn, seat, branch]);
}

/** Operator: episode events → sample records (one per branch, emitted when its reward is known). */
export function toSamples(): OperatorFunction<EpisodeEvent, SampleRecord> {
  return (source) => defer(() => {
    const asm = new EpisodeAssembler();
    return source.pipe(mergeMap((e) => asm.push(e).samples));
  });
}

/** Operator: episode events → groups (the K samples of one (instance, turn, seat)), emitted as each completes. */
export function toGroups(): OperatorFunction<EpisodeEvent, SampleGroup> {
  return (source) => defer(() => {
    const asm = new EpisodeAssembler();
    return source.pipe(mergeMap((e) => {
      const g = asm.push(e).group;
      return g ? [g] : [];
    }));
  });
}

/** Operator: episode events → episode records, emitted as each episode ends. */
export function toEpisodes(): OperatorFunction<EpisodeEvent, EpisodeRecord> {
  return (source) => defer(() => {
    const asm = new EpisodeAssembler();
    return source.pipe(mergeMap((e) => {
      const ep = asm.push(e).episode;
      return ep ? [ep] : [];
    }));
  });
}

/** Subscribes to an event stream and resolves with every episode, in the order they ended. */
export function collectEpisodes(events: Observable<EpisodeEvent>): Promise<EpisodeRecord[]> {
  return lastValueFrom(events.pipe(toEpisodes(), toArray()));
}
