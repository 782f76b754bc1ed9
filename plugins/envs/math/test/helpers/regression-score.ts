/** Agreement of verdicts with a regression table, overall and per kind (shared by the regression test and the bench). */
import type { RegressionCase } from '../fixtures/regression-cases.js';

/** Counts of one kind (or of all). */
export interface KindScore {
  cases: number;
  agree: number;
  /** "equal" to a wrong answer: the worst error. */
  falseEqual: number;
  /** "not equal" or undecided to a right answer. */
  falseNotEqual: number;
  /** Undecided verdicts (counted as not equal). */
  undecided: number;
}

/** Scores of a table. */
export interface Scores {
  readonly total: KindScore;
  readonly byKind: Map<string, KindScore>;
}

/** Scores `cases` given each case's verdict (`equal`, `not-equal` or `undecided`). */
export function scoreCases(cases: readonly RegressionCase[], verdictOf: (c: RegressionCase) => string): Scores {
  const fresh = (): KindScore => ({ cases: 0, agree: 0, falseEqual: 0, falseNotEqual: 0, undecided: 0 });
  const total = fresh();
  const byKind = new Map<string, KindScore>();
  for (const c of cases) {
    const verdict = verdictOf(c);
    const kind = byKind.get(c.kind) ?? fresh();
    byKind.set(c.kind, kind);
    for (const s of [total, kind]) {
      s.cases++;
      if (verdict === 'undecided') s.undecided++;
      const saidEqual = verdict === 'equal';
      if (saidEqual === (c.expected === 'equal')) s.agree++;
      else if (saidEqual) s.falseEqual++;
      else s.falseNotEqual++;
    }
  }
  return { total, byKind };
}

/** A plain-text table of the scores. */
export function formatScores(scores: Scores): string {
  const pct = (s: KindScore): string => `${((100 * s.agree) / s.cases).toFixed(1)}%`;
  const row = (name: string, s: KindScore): string =>
    `  ${name.padEnd(16)} ${String(s.cases).padStart(5)} ${String(s.agree).padStart(6)} ${pct(s).padStart(7)} ${String(s.falseEqual).padStart(7)} ${String(s.falseNotEqual).padStart(7)} ${String(s.undecided).padStart(6)}`;
  const lines = [`  ${'kind'.padEnd(16)} cases  agree       %  false= false≠  undec`];
  for (const [kind, s] of [...scores.byKind].sort(([a], [b]) => a.localeCompare(b))) lines.push(row(kind, s));
  lines.push(row('all', scores.total));
  return lines.join('\n');
}
