/**
 * Generation statistics: `node --conditions=troupe:source --import tsx bench/generation.mts [configJson] [count] [split]`.
 * Generates the first `count` instances of a split (seed 0) and prints clue counts, distinct puzzles and solutions, and
 * the time.
 */
import type { Split } from '@troupe/kernel';
import { contentHash } from '@troupe/kernel';
import { SudokuEnvironment } from '../src/index.js';

const env = new SudokuEnvironment(JSON.parse(process.argv[2] ?? '{}') as Record<string, unknown>);
const count = Number(process.argv[3] ?? 1000);
const split = (process.argv[4] ?? 'test') as Split;
const t0 = performance.now();
const list = Array.from({ length: count }, (_, i) => env.instance(split, i, 0));
const ms = performance.now() - t0;
const clues = list.map((x) => x.clues);
const hist: Record<number, number> = {};
for (const c of clues) hist[c] = (hist[c] ?? 0) + 1;
console.log(
  JSON.stringify({
    size: env.config.size,
    split,
    count,
    ms: Math.round(ms),
    distinctPuzzles: new Set(list.map((x) => env.instanceKey(x))).size,
    distinctSolutions: new Set(list.map((x) => contentHash(x.solution))).size,
    clues: {
      min: Math.min(...clues),
      max: Math.max(...clues),
      mean: Number((clues.reduce((a, b) => a + b, 0) / count).toFixed(2)),
      histogram: hist,
    },
  }),
);
