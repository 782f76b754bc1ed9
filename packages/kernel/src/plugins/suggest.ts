/**
 * Edit distance between two strings: Levenshtein (insertions, deletions, substitutions) plus adjacent
 * transpositions (`gird` → `grid` is 1), i.e. the optimal-string-alignment distance. Each edit costs 1.
 */
export function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    const prev = rows[i - 1]!;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      cur[j] = d;
    }
    rows.push(cur);
  }
  return rows[a.length]![b.length]!;
}

/**
 * The candidate closest to `word`, if it is close enough to be a plausible typo: distance at most
 * max(1, ⌊len/3⌋) (case-insensitive), or one string contains the other. Ties go to the first candidate.
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const c = candidate.toLowerCase();
    const d = levenshtein(w, c);
    const limit = Math.max(1, Math.floor(Math.max(w.length, c.length) / 3));
    const plausible = d <= limit || (w.length >= 3 && c.length >= 3 && (c.includes(w) || w.includes(c)));
    if (plausible && d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** `did you mean "x"?` for the closest candidate, or undefined when none is close. */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  const best = closest(word, candidates);
  return best === undefined ? undefined : `did you mean "${best}"?`;
}
