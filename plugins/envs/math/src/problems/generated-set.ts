/**
 * The procedurally generated problem set: problem `index` of a split is searched on its own (the game kit's
 * `instanceAt`): candidates come from the seeded streams `deriveSeed(seed, split, index, attempt)`, and the first
 * whose CONTENT hashes into the split (`splitOfContent`) is it. The splits are disjoint by construction whatever the
 * seeds, and problem N costs the same whatever N. Two indices may give the same problem (frequent in a family with few
 * distinct problems); the trainer skips an index whose problem it has already used.
 */
import { instanceAt } from '@troupe/game-kit';
import { DEFAULT_SPLIT_FRACTIONS, contentHash, type Rng, type Split, type SplitFractions } from '@troupe/kernel';
import { GENERATORS } from './generators.js';
import { FAMILIES, type Family, type MathProblem } from './types.js';

/** The content that identifies a problem (and decides its split): the statement and the answer. */
export function problemKey(problem: MathProblem): string {
  return contentHash({ question: problem.question, answer: problem.answer });
}

/** Options of a {@link GeneratedProblemSet}. */
export interface GeneratedSetOptions {
  /** Families to draw from, uniformly (default: all). */
  readonly families?: readonly Family[];
  /** Split fractions of the content-hash space (default 80/10/10). */
  readonly splitFractions?: SplitFractions;
  /** Give up after this many candidates for one problem (default 200000). */
  readonly maxCandidates?: number;
}

/** Deterministic, split-disjoint access to generated problems. */
export class GeneratedProblemSet {
  private readonly families: readonly Family[];
  private readonly splitFractions: SplitFractions;

  /** Creates the set; throws on an unknown family name. */
  constructor(private readonly options: GeneratedSetOptions = {}) {
    this.families = options.families && options.families.length > 0 ? options.families : FAMILIES;
    this.splitFractions = options.splitFractions ?? DEFAULT_SPLIT_FRACTIONS;
    for (const f of this.families) {
      if (!(FAMILIES as readonly string[]).includes(f))
        throw new Error(`math-v0: unknown problem family "${f}" (known: ${FAMILIES.join(', ')})`);
    }
  }

  /** One candidate drawn from `rng` (before split filtering): a family, uniformly, then its generator. */
  candidate(rng: Rng): MathProblem {
    const family = this.families[rng.int(this.families.length)]!;
    return GENERATORS[family](rng);
  }

  /** The `index`-th problem of `split` for `seed`. */
  get(split: Split, index: number, seed: number): MathProblem {
    return instanceAt(
      {
        id: 'math-v0',
        splitFractions: this.splitFractions,
        maxAttempts: this.options.maxCandidates ?? 200_000,
        hint: `raise environment.config.splitFractions.${split} or use more families (families: ${this.families.join(', ')})`,
        draw: (rng) => this.candidate(rng),
        key: problemKey,
      },
      split,
      index,
      seed,
    );
  }
}
