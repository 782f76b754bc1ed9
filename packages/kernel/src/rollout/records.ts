import { defer, lastValueFrom, mergeMap, toArray, type Observable, type OperatorFunction } from 'rxjs';
import type { EndEvent, EpisodeEvent, ResetEvent, SelectEvent, StepRecord } from '../episode/events.js';

/** The K step records of one (instance, turn, seat) of one episode, closed by its selection. */
export interface StepGroup {
  /** Episode id. */
  readonly episodeId: string;
  /** Instance uid. */
  readonly instanceUid: string;
  /** Turn. */
  readonly turn: number;
  /** Seat. */
  readonly seat: string;
  /** The K steps, by branch index. */
  readonly steps: readonly StepRecord[];
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
  readonly groups: readonly StepGroup[];
  /** All steps, in play order (group by group, branch by branch). */
  readonly steps: readonly StepRecord[];
  /** The end event. */
  readonly end: EndEvent;
}

/** What one event completed. */
export interface AssembledOutput {
  /** The group closed by this event (a select event). */
  readonly group?: StepGroup;
  /** The episode completed by this event (an end event). */
  readonly episode?: EpisodeRecord;
}

interface OpenEpisode {
  reset?: ResetEvent;
  groupSteps: StepRecord[];
  groups: StepGroup[];
  steps: StepRecord[];
}

const NOTHING: AssembledOutput = Object.freeze({});

/**
 * Gathers the event stream of any number of interleaved episodes into groups and episodes (each step record is
 * already whole; this only collects them). Stateful; one per stream. Throws on a stream that breaks the episode order
 * (a group closed with steps of another (turn, seat), an end without a reset), which would mean a bug in the producer.
 */
export class EpisodeAssembler {
  private readonly open = new Map<string, OpenEpisode>();

  /** Feeds one event; returns what it completed. */
  push(event: EpisodeEvent): AssembledOutput {
    let ep = this.open.get(event.episodeId);
    if (!ep) this.open.set(event.episodeId, (ep = { groupSteps: [], groups: [], steps: [] }));
    switch (event.type) {
      case 'reset':
        ep.reset = event;
        return NOTHING;
      case 'turn':
        return NOTHING;
      case 'step':
        ep.groupSteps.push(event);
        ep.steps.push(event);
        return NOTHING;
      case 'select': {
        const steps = ep.groupSteps;
        if (
          steps.length !== event.rewards.length ||
          steps.some((s, b) => s.branch !== b || s.turn !== event.turn || s.seat !== event.seat)
        ) {
          throw new Error(
            `EpisodeAssembler: the selection of episode '${event.episodeId}', turn ${event.turn}, seat '${event.seat}' does not follow its ${event.rewards.length} steps.`,
          );
        }
        const group: StepGroup = {
          episodeId: event.episodeId,
          instanceUid: event.instanceUid,
          turn: event.turn,
          seat: event.seat,
          steps,
          selection: event,
        };
        ep.groupSteps = [];
        ep.groups.push(group);
        return { group };
      }
      case 'end': {
        this.open.delete(event.episodeId);
        if (!ep.reset) throw new Error(`EpisodeAssembler: end event without a reset (episode '${event.episodeId}').`);
        return {
          episode: {
            episodeId: event.episodeId,
            instanceUid: event.instanceUid,
            reset: ep.reset,
            groups: ep.groups,
            steps: ep.steps,
            end: event,
          },
        };
      }
    }
  }
}

/** Operator: episode events → groups (the K steps of one (instance, turn, seat)), emitted as each closes. */
export function toGroups(): OperatorFunction<EpisodeEvent, StepGroup> {
  return (source) =>
    defer(() => {
      const asm = new EpisodeAssembler();
      return source.pipe(
        mergeMap((e) => {
          const g = asm.push(e).group;
          return g ? [g] : [];
        }),
      );
    });
}

/** Operator: episode events → episode records, emitted as each episode ends. */
export function toEpisodes(): OperatorFunction<EpisodeEvent, EpisodeRecord> {
  return (source) =>
    defer(() => {
      const asm = new EpisodeAssembler();
      return source.pipe(
        mergeMap((e) => {
          const ep = asm.push(e).episode;
          return ep ? [ep] : [];
        }),
      );
    });
}

/** Subscribes to an event stream and resolves with every episode, in the order they ended. */
export function collectEpisodes(events: Observable<EpisodeEvent>): Promise<EpisodeRecord[]> {
  return lastValueFrom(events.pipe(toEpisodes(), toArray()));
}
