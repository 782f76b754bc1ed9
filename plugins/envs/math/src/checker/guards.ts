/**
 * Size guards and the time budget of the answer checker. Every check runs under a {@link Budget}; the guards look at
 * the TEXT (lengths, digits, nesting, list sizes) and at the parsed expression (exponents, magnitudes) BEFORE anything
 * is expanded, simplified or evaluated, so hostile answers (`9^{9^{9}}`, a 31k-digit fraction, ten thousand nested
 * braces) are refused in microseconds instead of stalling a training. What a guard refuses is UNDECIDED: counted as not
 * equal, and reported as such.
 */

/** Default time budget of one verification, in milliseconds. */
export const DEFAULT_BUDGET_MS = 1000;

/** Longest answer (after extraction, before normalisation) the checker reads; longer ones are undecided unless identical. */
export const MAX_ANSWER_CHARS = 4000;
/** Longest normalised answer given to the symbolic and numeric layers (longer ones compare as strings and rationals only). */
export const MAX_SYMBOLIC_CHARS = 400;
/** Most digits in one number of the exact rational layer (a BigInt gcd on more is slow). */
export const MAX_EXACT_DIGITS = 1000;
/** Deepest nesting of brackets and braces. */
export const MAX_NESTING = 48;
/** Most elements of a list, set, tuple or matrix compared element by element. */
export const MAX_ITEMS = 64;
/** Largest literal exponent that simplify/rationalize may expand (larger ones are left to numeric sampling). */
export const MAX_EXPANDED_EXPONENT = 10;
/** Largest literal exponent of a sum of one variable (`(x+1)^n`) that simplify/rationalize may expand (of several: 1). */
export const MAX_EXPANDED_SUM_EXPONENT = 4;
/** Largest decimal magnitude (|log10 v|) the numeric layer trusts: beyond it doubles overflow or underflow to ∞ or 0. */
export const MAX_LOG10_MAGNITUDE = 300;

/** Why a check could not be decided. Thrown inside the checker, turned into an `undecided` verdict at its boundary. */
export class Undecided extends Error {
  override readonly name = 'Undecided';
}

/** A deadline. `check()` throws {@link Undecided} once it has passed. */
export class Budget {
  /** The deadline (performance.now() clock). */
  readonly deadline: number;

  /** @param ms milliseconds from now (Infinity: no deadline). */
  constructor(readonly ms: number) {
    this.deadline = performance.now() + ms;
  }

  /** Whether the budget is spent. */
  spent(): boolean {
    return performance.now() > this.deadline;
  }

  /** Throws {@link Undecided} when the budget is spent. */
  check(): void {
    if (this.spent()) throw new Undecided(`the ${this.ms} ms budget ran out`);
  }
}

/** A budget option as a number of milliseconds: a positive finite number, or the default. */
export function budgetMsOf(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : DEFAULT_BUDGET_MS;
}

/**
 * Guards on the raw text of one side, before normalisation: its length and the depth of its brackets and braces.
 * Throws {@link Undecided} naming the side and the limit.
 */
export function guardText(text: string, side: string): void {
  if (text.length > MAX_ANSWER_CHARS)
    throw new Undecided(`the ${side} has ${text.length} characters (more than ${MAX_ANSWER_CHARS})`);
  const depth = nestingDepth(text);
  if (depth > MAX_NESTING) throw new Undecided(`the ${side} nests brackets ${depth} deep (more than ${MAX_NESTING})`);
}

/** The deepest nesting of `(`, `[`, `{` in `text` (unbalanced closers are ignored). Linear. */
export function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 40 || c === 91 || c === 123) {
      depth++;
      if (depth > max) max = depth;
    } else if ((c === 41 || c === 93 || c === 125) && depth > 0) depth--;
  }
  return max;
}

/** The longest run of digits in `text`. */
export function longestDigitRun(text: string): number {
  let best = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      run++;
      if (run > best) best = run;
    } else run = 0;
  }
  return best;
}

/** Throws {@link Undecided} when a collection has more elements than {@link MAX_ITEMS}. */
export function guardItems(count: number, what: string): void {
  if (count > MAX_ITEMS)
    throw new Undecided(`the ${what} has ${count} elements (more than ${MAX_ITEMS} are not compared one by one)`);
}
