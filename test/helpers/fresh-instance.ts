/**
 * Every environment with its default config, and, run as a script (`fresh-instance.ts N SEED`), a fresh process that
 * prints instance N of every split of each (canonical JSON) and computes nothing else.
 */
import { fileURLToPath } from 'node:url';
import { SPLITS, canonicalJson, type Environment } from '@troupe/kernel';
import { CodeEnvironment } from '@troupe/env-code';
import { MathEnvironment } from '@troupe/env-math';
import { PlanPathEnvironment } from '@troupe/env-plan-path';
import { SokobanEnvironment } from '@troupe/env-sokoban';
import { SudokuEnvironment } from '@troupe/env-sudoku';

/** Every environment with its default config. */
export const ENVIRONMENTS: Record<string, () => Environment> = {
  'plan-path': () => new PlanPathEnvironment({}),
  sokoban: () => new SokobanEnvironment({}),
  sudoku: () => new SudokuEnvironment({}),
  math: () => new MathEnvironment({}),
  code: () => new CodeEnvironment({}),
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [n, seed] = [Number(process.argv[2]), Number(process.argv[3])];
  const out: Record<string, Record<string, string>> = {};
  for (const [name, make] of Object.entries(ENVIRONMENTS)) {
    const env = make();
    out[name] = Object.fromEntries(SPLITS.map((s) => [s, canonicalJson(env.instance(s, n, seed))]));
  }
  process.stdout.write(JSON.stringify(out));
}
