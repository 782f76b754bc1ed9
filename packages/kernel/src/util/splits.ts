import type { Split } from '../contracts/common.js';
import { contentHash } from './hash.js';

/** Fractions of the content-hash space that belong to each split. */
export interface SplitFractions {
  readonly train: number;
  readonly validation: number;
  readonly test: number;
}

/** Default split fractions: 80 / 10 / 10. */
export const DEFAULT_SPLIT_FRACTIONS: SplitFractions = { train: 0.8, validation: 0.1, test: 0.1 };

/**
 * The split an instance belongs to, decided by its CONTENT (not its seed): a hash of the content mapped to [0, 1).
 * Generators draw candidates from a seeded stream and keep those whose content falls in the requested split, so two
 * splits can never hold the same instance, whatever seeds are used.
 */
export function splitOfContent(content: unknown, fractions: SplitFractions = DEFAULT_SPLIT_FRACTIONS): Split {
  const key = typeof content === 'string' ? content : contentHash(content);
  const hex = /^[0-9a-f]{8,}$/.test(key) ? key : contentHash(key);
  const u = parseInt(hex.slice(0, 8), 16) / 4294967296;
  if (u < fractions.train) return 'train';
  if (u < fractions.train + fractions.validation) return 'validation';
  return 'test';
}
