/** What `troupe view --export` inlines in the page: the overview and, per trace, its groups, outcomes and episodes. */
import type { EpisodeOutcome, GroupSummary, Overview, TraceLine } from './types.js';

/** One trace in a snapshot. */
export interface TraceSnapshot {
  readonly groups: readonly GroupSummary[];
  readonly outcomes: readonly EpisodeOutcome[];
  /** Episode records by {@link episodeKey}; episodes past the export's size budget are left out. */
  readonly episodes: Readonly<Record<string, readonly TraceLine[]>>;
  /** Episodes left out (their groups and outcomes are still in). */
  readonly omittedEpisodes: number;
}

/** A run snapshot. */
export interface Snapshot {
  readonly overview: Overview;
  readonly traces: Readonly<Record<string, TraceSnapshot>>;
}

/** The key of an episode in a snapshot: its step (empty for evaluation traces) and id. */
export const episodeKey = (step: number | null, episodeId: string): string => `${step ?? ''}|${episodeId}`;
