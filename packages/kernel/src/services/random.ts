/** The kernel's {@link RandomStreams}: `deriveSeed` and `createRng`, so streams are the ones contributions derived before. */
import type { Rng } from '../contracts/common.js';
import type { RandomStreams } from '../contracts/services.js';
import { createRng, deriveSeed } from '../util/rng.js';

/** Named streams over `deriveSeed`: `stream(...parts)` is `createRng(deriveSeed(...parts))`. */
export class DerivedRandomStreams implements RandomStreams {
  seed(...parts: readonly (string | number)[]): number {
    if (parts.length === 0)
      throw new RangeError('RandomStreams: name a stream (a seed and names, e.g. seed, "code-v0", split)');
    return deriveSeed(...parts);
  }

  stream(...parts: readonly (string | number)[]): Rng {
    return createRng(this.seed(...parts));
  }
}
