/**
 * Paired comparison of two evaluations of the SAME episodes (same split, seed and count: the same instances in the
 * same order), e.g. the model RL starts from against the model RL ends with. Counting the episodes each one solves
 * alone is far more sensitive than comparing two success rates with their separate intervals: an exact McNemar test
 * on the discordant pairs says whether the change could be chance. The trainer keeps the baseline's outcomes in the
 * run folder ({@link BASELINE_FILE}) and adds the comparison to the final evaluation's metrics.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EvaluationResult } from './evaluate.js';

/** The paired comparison of a `before` and an `after` evaluation. */
export interface PairedComparison {
  /** Episodes compared (both evaluations played them). */
  readonly episodes: number;
  /** Success rate before. */
  readonly before: number;
  /** Success rate after. */
  readonly after: number;
  /** after − before. */
  readonly delta: number;
  /** Episodes solved after but not before. */
  readonly gained: number;
  /** Episodes solved before but not after. */
  readonly lost: number;
  /**
   * Two-sided exact McNemar p-value: the probability, were both models equally good, of a split of the
   * `gained + lost` discordant episodes at least this uneven (binomial, p = 1/2). 1 when none differ.
   */
  readonly pValue: number;
}

/** ln C(n, k). */
function logChoose(n: number, k: number): number {
  let s = 0;
  for (let i = 1; i <= k; i++) s += Math.log(n - k + i) - Math.log(i);
  return s;
}

/** Two-sided exact binomial test of `k` successes in `n` trials at p = 1/2 (doubling the smaller tail, capped at 1). */
export function exactMcNemar(gained: number, lost: number): number {
  const n = gained + lost;
  if (n === 0) return 1;
  const k = Math.min(gained, lost);
  let tail = 0;
  for (let i = 0; i <= k; i++) tail += Math.exp(logChoose(n, i) - n * Math.LN2);
  return Math.min(1, 2 * tail);
}

/** Compares two evaluations episode by episode; they must have played the same number of episodes. */
export function pairedComparison(before: readonly boolean[], after: readonly boolean[]): PairedComparison {
  if (before.length !== after.length) {
    throw new Error(
      `pairedComparison: the evaluations played ${before.length} and ${after.length} episodes; pair only evaluations of the same split, seed and episode count`,
    );
  }
  const n = before.length;
  let gained = 0,
    lost = 0,
    b = 0,
    a = 0;
  for (let i = 0; i < n; i++) {
    if (before[i]) b++;
    if (after[i]) a++;
    if (after[i] && !before[i]) gained++;
    if (before[i] && !after[i]) lost++;
  }
  const rate = (x: number): number => (n === 0 ? 0 : x / n);
  return {
    episodes: n,
    before: rate(b),
    after: rate(a),
    delta: rate(a) - rate(b),
    gained,
    lost,
    pValue: exactMcNemar(gained, lost),
  };
}

/** One line for a person: `48 → 86 of 300 (+67 / −29), exact McNemar p = 0.00013` (counts from the rates). */
export function formatPairedComparison(c: PairedComparison): string {
  const count = (rate: number): number => Math.round(rate * c.episodes);
  return `${count(c.before)} → ${count(c.after)} of ${c.episodes} (+${c.gained} / −${c.lost}), exact McNemar p = ${c.pValue.toPrecision(2)}`;
}

/** The file of a run folder that keeps the baseline evaluation (the model RL started from). */
export const BASELINE_FILE = 'baseline-eval.json';

/** The baseline evaluation as kept in {@link BASELINE_FILE}. */
export type BaselineEval = Omit<EvaluationResult, 'instanceKeys'> & { readonly step: number };

/**
 * The run folder's baseline evaluation, when there is one that played the same split and number of episodes as
 * `final` (the same seed: the spec's); undefined otherwise (none was made, or the spec changed since).
 */
export function readBaseline(outDir: string, final: EvaluationResult): BaselineEval | undefined {
  const file = join(outDir, BASELINE_FILE);
  if (!existsSync(file)) return undefined;
  let doc: BaselineEval;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8')) as BaselineEval;
  } catch {
    return undefined; // unreadable: the comparison is skipped, the run is not lost
  }
  if (doc.split !== final.split || !Array.isArray(doc.outcomes) || doc.outcomes.length !== final.outcomes.length)
    return undefined;
  return doc;
}

/** `compare/*` metrics of a paired comparison. */
export function comparisonMetrics(c: PairedComparison): Record<string, number> {
  return {
    'compare/baseline_success_rate': c.before,
    'compare/delta': c.delta,
    'compare/gained': c.gained,
    'compare/lost': c.lost,
    'compare/p_value': c.pValue,
  };
}
