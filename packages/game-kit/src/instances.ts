/**
 * Seeded instance generation with content-hash splits. Two shapes, both deterministic in (split, index, seed) and
 * disjoint across splits by content:
 * - {@link instanceAt}: instance `index` is searched on its own, from the streams `deriveSeed(seed, split, index,
 *   attempt)`; the first valid candidate whose content hashes into the split is it (duplicates within a split are
 *   possible, and rare on a large space).
 * - {@link InstanceStreams}: candidates come from one stream per (split, seed), `deriveSeed(seed, split, attempt)`;
 *   a candidate is kept when it is valid for the split and its key was not kept before, and instance `index` is the
 *   `index`-th kept one (memoised). Instances are unique within a split.
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
  /** Most candidates tried (for {@link InstanceStreams}: consecutive misses) before giving up. */
  readonly maxAttempts: number;
  /** What to change in the config when generation gives up (ends the error message). */
  readonly hint: string;
}

/** The `index`-th instance of `split` for `seed`, searched on its own (see the module comment). */
export function instanceAt<I>(source: InstanceSource<I>, split: Split, index: number, seed: number): I {
  checkSplitHolds(source.id, split, source.splitFractions);
  for (let attempt = 0; attempt < source.maxAttempts; attempt++) {
    const candidate = source.draw(createRng(deriveSeed(seed, split, index, attempt)), split);
    if (candidate && (!source.key || splitOfContent(source.key(candidate), source.splitFractions) === split))
      return deepFreeze(candidate);
  }
  throw new Error(
    `${source.id}: no ${split} instance found after ${source.maxAttempts} candidates (seed ${seed}, index ${index}); ${source.hint}`,
  );
}

/** The memoised instance streams of one environment, one per (split, seed), unique by `key` (see the module comment). */
export class InstanceStreams<I> {
  private readonly streams = new Map<string, { kept: I[]; keys: Set<string>; attempt: number }>();

  /** Streams drawing from `source`, de-duplicated by `key`. */
  constructor(
    private readonly source: InstanceSource<I>,
    private readonly key: (instance: I) => string,
  ) {}

  /** The `index`-th instance of `split` for `seed`. */
  get(split: Split, index: number, seed: number): I {
    const { id, maxAttempts } = this.source;
    const name = `${split}\u241f${seed}`;
    let stream = this.streams.get(name);
    if (!stream) {
      checkSplitHolds(id, split, this.source.splitFractions);
      this.streams.set(name, (stream = { kept: [], keys: new Set(), attempt: 0 }));
    }
    if (!Number.isInteger(index) || index < 0)
      throw new Error(`${id}: instance index must be a non-negative integer, got ${index}`);
    while (stream.kept.length <= index) {
      for (let misses = 1; ; misses++) {
        const drawn = this.source.draw(createRng(deriveSeed(seed, split, stream.attempt++)), split);
        const candidate =
          drawn && (!this.source.key || splitOfContent(this.source.key(drawn), this.source.splitFractions) === split)
            ? drawn
            : null;
        const key = candidate && this.key(candidate);
        if (candidate && !stream.keys.has(key!)) {
          stream.keys.add(key!);
          stream.kept.push(candidate);
          break;
        }
        if (misses >= maxAttempts) {
          throw new Error(
            `${id}: no new ${split} instance after ${maxAttempts} candidates (seed ${seed}, index ${stream.kept.length}); ${this.source.hint}`,
          );
        }
      }
    }
    return stream.kept[index]!;
  }
}
