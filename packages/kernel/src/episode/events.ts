/**
 * The events of one episode, as a discriminated union on `type`. Every event is plain JSON-serialisable data (no
 * states, no functions), so it can be logged, sent to a worker thread or written to a trace as it is.
 *
 * Order within one episode:
 *
 * ```
 * reset
 * turn(t=0)
 *   step × K     (seat 0: K completions of ONE prompt, each parsed, stepped on the same state, rewarded, and
 *                 flagged `selected` or not: one record per branch)
 *   select       (seat 0: which branch the episode continues from, and why)
 *   step × K, select   (seat 1, prompted from the state of seat 0's selected branch)
 *   ...
 * turn(t=1) ...
 * end
 * ```
 */
import type { ChatMessage, Split } from '../contracts/common.js';
import type { Termination } from '../contracts/environment.js';

/** Fields every event carries. */
export interface EpisodeEventBase {
  /** Unique id of this episode (several episodes may play one instance, e.g. the K rollouts of grpo-naive). */
  readonly episodeId: string;
  /** Unique id of the task instance (the AT-GRPO group key uses it). */
  readonly instanceUid: string;
  /** Split the instance was drawn from. */
  readonly split: Split;
}

/** The episode started: the instance was reset. */
export interface ResetEvent extends EpisodeEventBase {
  readonly type: 'reset';
  /** Environment id (e.g. `plan-path-v0`). */
  readonly environment: string;
  /** Seat names in turn order. */
  readonly seats: readonly string[];
  /** Branches K sampled per (turn, seat). */
  readonly branches: number;
  /** Turn limit of this episode. */
  readonly maxTurns: number;
  /** Seed of the episode (samples and tie-breaks derive from it). */
  readonly seed: number;
}

/** A turn starts: every seat will act once, in order. */
export interface TurnEvent extends EpisodeEventBase {
  readonly type: 'turn';
  /** Turn index (0-based). */
  readonly turn: number;
}

/** Fields shared by the per-seat events. */
export interface SeatEventBase extends EpisodeEventBase {
  /** Turn index (0-based). */
  readonly turn: number;
  /** Seat that acts. */
  readonly seat: string;
}

/**
 * One branch of one (turn, seat), sample and outcome together: what the policy wrote, how the role parsed it, what
 * stepping it on the seat's state gave, and whether the episode continues from it. This event IS the step record:
 * the trainer, the trace writer and the viewers read this one type, emitted once per (turn, seat, branch) when the
 * group's selection is known. `reward`, `turn`, `seat` and `instanceUid` make it a `GroupableSample` for the advantage
 * functions.
 */
export interface StepRecord extends SeatEventBase {
  readonly type: 'step';
  /** Role id of the seat. */
  readonly role: string;
  /** Policy name (team spec `policies.<name>`). */
  readonly policy: string;
  /** Policy version at sampling time. */
  readonly policyVersion: number;
  /** Branch index in [0, K). */
  readonly branch: number;
  /** The prompt: identical for all K branches of a (turn, seat). */
  readonly prompt: readonly ChatMessage[];
  /** The completion text. */
  readonly completion: string;
  /** Token ids of the prompt (empty for policies without a tokenizer). */
  readonly promptIds: readonly number[];
  /** Token ids of the completion. */
  readonly tokenIds: readonly number[];
  /** Log-probabilities of the completion tokens under the sampling policy (see `Completion.logprobs`). */
  readonly logprobs: readonly number[];
  /**
   * The seat's sampling temperature (0: greedy); the trainer scores the completion at this temperature. A greedy
   * branch (`greedy`) records its seat's temperature too: it was decoded at 0 but is trained with its group.
   */
  readonly temperature: number;
  /** Set on the tree's greedy branch (branch 0 with `algorithm.greedyBranch`): decoded at temperature 0. */
  readonly greedy?: boolean;
  /** Why generation stopped. */
  readonly finishReason: 'stop' | 'length' | 'abort';
  /** The typed action, when the text parsed (otherwise absent). */
  readonly action?: unknown;
  /** Why the text did not parse (absent when it parsed). */
  readonly parseError?: string;
  /**
   * Extra details of the move, when any: what the role produced while parsing (a coder's program and its output), or
   * what a scripted policy noted with a move it gave (see `Completion.move`).
   */
  readonly details?: Readonly<Record<string, unknown>>;
  /** Every reward term, separately (e.g. `{ team: 0.4, local: 0.4 }`). */
  readonly terms: Readonly<Record<string, number>>;
  /** The mixed reward r = α·team + Σ weights·other terms. */
  readonly reward: number;
  /** Whether the episode continues from this branch. */
  readonly selected: boolean;
  /** Termination flags of this branch's step. */
  readonly done: Termination;
  /** Whether the task is solved in this branch's state. */
  readonly success: boolean;
  /** The environment's raw signals for this step. */
  readonly signals: Readonly<Record<string, number>>;
  /** The environment's free-form facts for this step, when it gave any. */
  readonly info?: Readonly<Record<string, unknown>>;
}

/** Why a branch was selected. */
export type SelectionReason =
  /** It had the unique maximum reward. */
  | 'max'
  /** Several branches tied at the maximum; exactly one of them ended the episode with success. */
  | 'tie-success'
  /** Several branches tied (after preferring successes); a seeded random choice decided. */
  | 'tie-random'
  /** The seat continues from its greedy branch whatever the rewards (`algorithm.selection: greedy`). */
  | 'greedy';

/** The branch the episode continues from, for one (turn, seat). Closes that group: its K steps came just before. */
export interface SelectEvent extends SeatEventBase {
  readonly type: 'select';
  /** The selected branch. */
  readonly branch: number;
  /** The K mixed rewards, by branch. */
  readonly rewards: readonly number[];
  /** How the choice was made. */
  readonly reason: SelectionReason;
}

/** The episode ended. */
export interface EndEvent extends EpisodeEventBase {
  readonly type: 'end';
  /** Whether the task was solved in the final (selected) state. */
  readonly success: boolean;
  /** Number of turns played (a turn counts once any seat acted in it). */
  readonly turns: number;
  /** Per seat, the sum of the rewards of its selected branches. */
  readonly rewards: Readonly<Record<string, number>>;
  /** How it ended: `terminated` (natural end) or `truncated` (turn limit). */
  readonly termination: Termination;
}

/** Every event of an episode. */
export type EpisodeEvent = ResetEvent | TurnEvent | StepRecord | SelectEvent | EndEvent;

/** The `type` tags of {@link EpisodeEvent}. */
export type EpisodeEventType = EpisodeEvent['type'];

/** Narrows an event to one type: `events.filter(isEvent('step'))`. */
export function isEvent<T extends EpisodeEventType>(
  type: T,
): (event: EpisodeEvent) => event is Extract<EpisodeEvent, { type: T }> {
  return (event): event is Extract<EpisodeEvent, { type: T }> => event.type === type;
}
