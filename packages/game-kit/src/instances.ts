/**
 * Seeded instance generation with content-hash splits: {@link instanceAt} searches instance `index` on its own, from
 * the streams `deriveSeed(seed, split, index, attempt)` for attempt = 0, 1, …; the first valid candidate whose content
 * hashes into the split is it. So instance N costs the same in a fresh process whatever N, instances are
 * deterministic in (seed, split, index), and splits are disjoint by content. Two indices may give the same content
 * (rare on a large space, frequent on a tiny one); whoever needs distinct instances skips an index whose content key
 * it has already used (the trainer does, for its train instances and for an evaluation's instances).
 */
import type { Rng, Split, SplitFractions } from '@troupe/kernel';
import { createRng, deriveSeed, splitOfContent } from '@troupe/kernel';
import { deepFreeze } from './values.js';

/** Throws when `split` has fraction 0 (it holds no instances). */
export function checkSplitHolds(id: string, split: Split, fractions: SplitFractions): void {
  if (fractions[split] <= 0) {
    throw new Error(
      `${id}: split "${split}" has fraction 0 in environment.config.splitFractions; it holds no instances`,
    );
  }
}

/** How to draw one instance of a game. */
export interface InstanceSource<I> {
  /** The environment id, for errors. */
  readonly id: string;
  /** The split fractions of the config. */
  readonly splitFractions: SplitFractions;
  /** One candidate from `rng` that belongs to `split`, or `null` when rejected (invalid, or of another split). */
  draw(rng: Rng, split: Split): I | null;
  /**
   * The candidate's content key, when the split is decided by it: a candidate is then kept only when the key hashes
   * into the split (`splitOfContent`), and `draw` need not check the split itself.
   */
  readonly key?: (candidate: I) => string;
  /** Most candidates tried for one instance before giving up. */
  readonly maxAttempts: number;
  /** What to change in the config when generation gives up (ends the error message). */
  readonly hint: string;
}

/** The `index`-th instance of `split` for `seed`, searched on its own (see the module comment). */
export function instanceAt<I>(source: InstanceSource<I>, split: Split, index: number, seed: number): I {
  checkSplitHolds(source.id, split, source.splitFractions);
  if (!Number.isSafeInteger(index) || index < 0)
    throw new Error(`${source.id}: instance index must be a non-negative integer, got ${index}`);
  for (let attempt = 0; attempt < source.maxAttempts; attempt++) {
    const candidate = source.draw(createRng(deriveSeed(seed, split, index, attempt)), split);
    if (candidate && (!source.key || splitOfContent(source.key(candidate), source.splitFractions) === split))
      return deepFreeze(candidate);
  }
  throw new Error(
    `${source.id}: no ${split} instance found after ${source.maxAttempts} candidates (seed ${seed}, index ${index}); ${source.hint}`,
  );
}
