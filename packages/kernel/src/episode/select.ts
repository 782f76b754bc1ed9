import { createRng, deriveSeed } from '../util/rng.js';
import type { SelectionReason } from './events.js';

/** What branch selection looks at for one branch. */
export interface BranchOutcome {
  /** The mixed reward. */
  readonly reward: number;
  /** Whether the branch's state is solved. */
  readonly success: boolean;
  /** Whether the branch's step ended the episode (terminated or truncated). */
  readonly done: boolean;
}

/** The result of {@link selectBranch}. */
export interface BranchSelection {
  /** Index of the selected branch. */
  readonly branch: number;
  /** Why it was selected. */
  readonly reason: SelectionReason;
}

/** What the seeded tie-break derives from: the same parts always pick the same branch. */
export interface TieBreakKey {
  /** The episode seed. */
  readonly seed: number;
  /** The episode id. */
  readonly episodeId: string;
  /** The turn. */
  readonly turn: number;
  /** The seat. */
  readonly seat: string;
}

/**
 * Picks the branch the episode continues from: the maximum reward; among tied maxima, a branch whose step ended the
 * episode with success; among what is still tied, a seeded random choice (deterministic from seed, episode, turn and
 * seat). Never "always branch 0" (defect 6 of the official code).
 */
export function selectBranch(outcomes: readonly BranchOutcome[], key: TieBreakKey): BranchSelection {
  if (outcomes.length === 0) throw new Error('selectBranch: no branches to select from');
  let max = -Infinity;
  for (const o of outcomes) if (o.reward > max) max = o.reward;
  const best = outcomes.flatMap((o, i) => (o.reward === max ? [i] : []));
  if (best.length === 1) return { branch: best[0]!, reason: 'max' };
  const winners = best.filter((i) => outcomes[i]!.success && outcomes[i]!.done);
  if (winners.length === 1) return { branch: winners[0]!, reason: 'tie-success' };
  const pool = winners.length > 0 ? winners : best;
  const rng = createRng(deriveSeed(key.seed, 'tie-break', key.episodeId, key.turn, key.seat));
  return { branch: pool[rng.int(pool.length)]!, reason: 'tie-random' };
}
