/**
 * The data the viewer's server sends and its web app shows (and a `--export` snapshot inlines): plain JSON shapes
 * derived from a run folder's trace files, metrics.jsonl and checkpoints.
 */
import type { ChatMessage, TraceRecord } from '@troupe/kernel';

/** One line of a rollout trace: the kernel's TraceRecord, as JSON. */
export type TraceLine = TraceRecord;

/** One chat message of a prompt. */
export type { ChatMessage };

/** One group: the K branches of one (step, episode, turn, seat). */
export interface GroupSummary {
  /** Index of the group in its trace (file order). */
  readonly id: number;
  readonly step: number | null;
  readonly episodeId: string;
  readonly instanceUid: string;
  readonly turn: number;
  readonly seat: string;
  /** Rewards by branch. */
  readonly rewards: readonly number[];
  /** Advantages by branch (null where the trace has none, e.g. evaluation traces). */
  readonly advantages: readonly (number | null)[];
  /** Mean of each reward term over the branches. */
  readonly termMeans: Readonly<Record<string, number>>;
  /** The branch the episode continued from (-1: none). */
  readonly selected: number;
  /** The greedy branch (-1: none). */
  readonly greedy: number;
  /** Branches whose completion did not parse. */
  readonly malformed: number;
  /** max − min of the rewards. */
  readonly spread: number;
  /** All branches have the same reward (no learning signal from this group). */
  readonly zeroVariance: boolean;
  /** Whether the group's episode ended solved. */
  episodeSuccess: boolean;
}

/** Per-step figures of one trace. */
export interface StepSummary {
  readonly step: number | null;
  readonly records: number;
  readonly groups: number;
  readonly episodes: number;
  /** Share of the step's episodes that ended solved. */
  readonly successRate: number;
  readonly zeroVarianceShare: number;
  /** Share of the step's samples whose completion did not parse. */
  readonly malformedShare: number;
}

/** Credit diagnostics of one (seat, turn). */
export interface CreditCell {
  readonly seat: string;
  readonly turn: number;
  readonly groups: number;
  readonly zeroVarianceShare: number;
  /** Mean |advantage| over the samples that have one (null: none has). */
  readonly meanAbsAdvantage: number | null;
  readonly meanReward: number;
  readonly termMeans: Readonly<Record<string, number>>;
}

/** One episode's outcome, for pairing two evaluation traces. */
export interface EpisodeOutcome {
  readonly episodeId: string;
  readonly instanceUid: string;
  readonly step: number | null;
  readonly success: boolean;
  readonly turns: number;
  /** The selected path: (turn, seat) and a hash of the completion played there, in order. */
  readonly path: readonly { readonly turn: number; readonly seat: string; readonly hash: number }[];
}

/** One instance paired across two traces. */
export interface PairedEpisode {
  readonly instanceUid: string;
  readonly a: { readonly episodeId: string; readonly success: boolean } | null;
  readonly b: { readonly episodeId: string; readonly success: boolean } | null;
  /** gained: solved only in b; lost: only in a; both; neither; unpaired: in one trace only. */
  readonly status: 'gained' | 'lost' | 'both' | 'neither' | 'unpaired';
  /** The first (turn, seat) where the two selected paths play different completions (null: identical, or unpaired). */
  readonly parts: { readonly turn: number; readonly seat: string } | null;
}

/** The paired comparison of two traces. */
export interface Comparison {
  readonly a: string;
  readonly b: string;
  readonly paired: number;
  readonly successA: number;
  readonly successB: number;
  readonly gained: number;
  readonly lost: number;
  /** Exact two-sided McNemar p over the discordant pairs. */
  readonly pValue: number;
  readonly rows: readonly PairedEpisode[];
}

/** Filters and order of the steps → groups table. */
export interface GroupQuery {
  readonly step?: number | null;
  readonly seat?: string;
  readonly turn?: number;
  /** Only groups of episodes that ended unsolved. */
  readonly failed?: boolean;
  /** Only groups with at least one unparsable completion. */
  readonly malformed?: boolean;
  /** Only zero-variance groups (true) or only groups with a signal (false). */
  readonly zeroVariance?: boolean;
  readonly sort?: 'id' | 'spread' | 'meanReward' | 'maxAbsAdvantage' | 'turn' | 'seat';
  readonly desc?: boolean;
  readonly offset?: number;
  readonly limit?: number;
}

/** A page of groups. */
export interface GroupPage {
  readonly total: number;
  readonly offset: number;
  readonly rows: readonly GroupSummary[];
}

/** One checkpoint folder. */
export interface CheckpointInfo {
  readonly step: number;
  readonly samplesGenerated: number | null;
  readonly best: boolean;
}

/** One trace file of the run. */
export interface TraceInfo {
  /** Path relative to the run folder (the id the API takes). */
  readonly name: string;
  readonly size: number;
  readonly indexedBytes: number;
  readonly records: number;
  readonly groups: number;
  readonly episodes: number;
  /** Training trace (records carry steps) or evaluation trace (step null). */
  readonly kind: 'train' | 'eval';
}

/** The run overview. */
export interface Overview {
  readonly name: string;
  readonly folder: string;
  /** The team spec as run (YAML text) and where it was read (null: not found). */
  readonly spec: { readonly file: string; readonly text: string } | null;
  /**
   * Each seat's reward mix from the resolved spec (r = alpha·team + Σ weights[term]·term; a term not listed weighs 1);
   * null when the spec is missing or does not load.
   */
  readonly mix: Readonly<
    Record<string, { readonly alpha: number; readonly weights: Readonly<Record<string, number>> }>
  > | null;
  /** metrics.jsonl records. */
  readonly metrics: readonly Record<string, unknown>[];
  readonly checkpoints: readonly CheckpointInfo[];
  /** baseline-eval.json (the model RL started from, on the held-out split), when present. */
  readonly baseline: Record<string, unknown> | null;
  readonly report: string | null;
  readonly traces: readonly TraceInfo[];
}
