/**
 * Output comparison for stdin/stdout problems.
 *
 * Rules (documented in the README):
 * 1. Line endings are normalised (`\r\n` and `\r` become `\n`).
 * 2. Trailing whitespace is removed from every line, and trailing empty lines are dropped. Leading whitespace and
 *    blank lines in the middle are significant.
 * 3. If the normalised texts are equal, the output matches.
 * 4. Otherwise, when a float tolerance is given, both texts are split into whitespace-separated tokens; they match when
 *    the token counts are equal and every pair of tokens is either identical or two finite numbers a (got), b
 *    (expected) with |a − b| <= tol · max(1, |b|) (absolute error for small values, relative for large ones).
 */

/** Normalises an output for comparison: unified line endings, no trailing spaces, no trailing empty lines. */
export function normalizeOutput(text: string): string {
  const lines = text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.replace(/[ \t\f\v]+$/, ''));
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n');
}

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Parses a token as a finite number, or returns undefined (so `inf`, `nan` and hex never count as numbers). */
function numberOf(token: string): number | undefined {
  if (!NUMBER.test(token)) return undefined;
  const value = Number(token);
  return Number.isFinite(value) ? value : undefined;
}

/**
 * Whether `got` matches `expected` under the rules above.
 * @param got the program's stdout
 * @param expected the expected stdout
 * @param tolerance optional float tolerance (absolute for |expected| <= 1, relative above); absent or 0 = exact
 */
export function outputsMatch(got: string, expected: string, tolerance?: number | null): boolean {
  const a = normalizeOutput(got);
  const b = normalizeOutput(expected);
  if (a === b) return true;
  if (!tolerance || !(tolerance > 0)) return false;
  const ta = a.split(/\s+/).filter(Boolean);
  const tb = b.split(/\s+/).filter(Boolean);
  if (ta.length !== tb.length) return false;
  for (let i = 0; i < ta.length; i++) {
    if (ta[i] === tb[i]) continue;
    const x = numberOf(ta[i]!);
    const y = numberOf(tb[i]!);
    if (x === undefined || y === undefined) return false;
    if (!(Math.abs(x - y) <= tolerance * Math.max(1, Math.abs(y)))) return false;
  }
  return true;
}
