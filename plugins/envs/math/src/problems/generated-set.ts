/**
 * The procedurally generated problem set: candidates come from a seeded stream (candidate j of seed s is generated
 * from `deriveSeed(s, 'math-v0', j)`), and each is kept only in the split its CONTENT hashes into
 * (`splitOfContent`), so the splits are disjoint by construction whatever the seeds. Duplicates (same content)
 * within a split are dropped.
 */
import { contentHash, createRng, deriveSeed, splitOfContent, type Split, type SplitFractions } from '@troupe/kernel';
import { GENERATORS } from './generators.js';
import { FAMILIES, type Family, type MathProblem } from './types.js';

/** The content that identifies a problem (and decides its split): the statement and the answer. */
export function problemKey(problem: MathProblem): string {
  return contentHash({ question: problem.question, answer: problem.answer });
}

/** Per-seed progress of the candidate stream. */
interface SeedCache {
  scanned: number;
  readonly bySplit: Record<Split, MathProblem[]>;
  readonly seen: Set<string>;
}

/** Options of a {@link GeneratedProblemSet}. */
export interface GeneratedSetOptions {
  /** Families to draw from, uniformly (default: all). */
  readonly families?: readonly Family[];
  /** Split fractions of the content-hash space (default 80/10/10). */
  readonly splitFractions?: SplitFractions;
  /** Give up after this many candidates without reaching the requested index (default 200000). */
  readonly maxCandidates?: number;
}

/** Deterministic, split-disjoint access to generated problems. */
export class GeneratedProblemSet {
  private readonly families: readonly Family[];
  private readonly caches = new Map<number, SeedCache>();

  /** Creates the set; throws on an unknown family name. */
  constructor(private readonly options: GeneratedSetOptions = {}) {
    this.families = options.families && options.families.length > 0 ? options.families : FAMILIES;
    for (const f of this.families) {
      if (!(FAMILIES as readonly string[]).includes(f))
        throw new Error(`math-v0: unknown problem family "${f}" (known: ${FAMILIES.join(', ')})`);
    }
  }

  /** The j-th candidate of the stream of `seed` (before split filtering). */
  candidate(seed: number, j: number): MathProblem {
    const rng = createRng(deriveSeed(seed, 'math-v0', j));
    const family = this.families[rng.int(this.families.length)]!;
    return GENERATORS[family](rng);
  }

  /** The `index`-th problem of `split` for `seed`. */
  get(split: Split, index: number, seed: number): MathProblem {
    if (!Number.isInteger(index) || index < 0)
      throw new RangeError(`math-v0: instance index must be a non-negative integer, got ${index}`);
    let cache = this.caches.get(seed);
    if (!cache) {
      cache = { scanned: 0, bySplit: { train: [], validation: [], test: [] }, seen: new Set() };
      this.caches.set(seed, cache);
    }
    const max = this.options.maxCandidates ?? 200_000;
    while (cache.bySplit[split].length <= index) {
      if (cache.scanned >= max) {
        throw new Error(
          `math-v0: could not generate ${index + 1} distinct ${split} problems from ${max} candidates ` +
            `(families: ${this.families.join(', ')}); use more families or fewer instances`,
        );
      }
      const problem = this.candidate(seed, cache.scanned++);
      const key = problemKey(problem);
      if (cache.seen.has(key)) continue;
      cache.seen.add(key);
      cache.bySplit[splitOfContent(key, this.options.splitFractions)].push(problem);
    }
    return cache.bySplit[split][index]!;
  }
}
