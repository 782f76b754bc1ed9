/**
 * The layered answer-equivalence check:
 * (a) `normalized-string` — the normalised strings are identical (or equal ignoring case, for word answers);
 * (b) `rational` — both are exact numbers (integers, decimals, fractions, mixed numbers, percentages, scientific
 *     notation) and equal as BigInt rationals; two numbers that differ are NOT equivalent, whatever later layers say;
 * (c) `symbolic` — mathjs `simplify(a - b)` (or `rationalize`) is exactly 0;
 * (d) `numeric` — both evaluate to the same values (within a relative tolerance) at seeded random points for their
 *     free variables.
 * Tuples and intervals compare element-wise with their brackets, sets and bare lists as multisets, `±` answers as
 * two-element sets, matrices cell by cell. The result names the strongest layer needed and says why.
 *
 * Every check runs under a time budget (default 1 s) and size guards (see guards.ts) that look at the text and the
 * parsed expression before anything is expanded; structural equality (the same expression up to the order of sums and
 * products) is tried before simplification. What the guards refuse, or what the budget cuts, is `undecided`: counted as
 * not equal. The budget here is cooperative (checked between steps); {@link MathVerifier} adds the hard limit by running
 * the expensive layers in a worker thread that is replaced when it overruns.
 */
import { create, all, type MathNode, type MathJsInstance } from 'mathjs';
import { createHash } from 'node:crypto';
import { normalizeAnswer, splitApproximation } from './normalize.js';
import { parseRational, Rational } from './rational.js';
import { latexToMathjs } from './latex.js';
import { parseStructure, type AnswerStructure } from './structure.js';
import {
  Budget,
  budgetMsOf,
  guardItems,
  guardText,
  longestDigitRun,
  Undecided,
  MAX_EXACT_DIGITS,
  MAX_EXPANDED_EXPONENT,
  MAX_EXPANDED_SUM_EXPONENT,
  MAX_LOG10_MAGNITUDE,
  MAX_SYMBOLIC_CHARS,
} from './guards.js';

/** Which layer decided. `none` when the answers are not equivalent (or could not be compared). */
export type EquivalenceLayer = 'normalized-string' | 'rational' | 'symbolic' | 'numeric' | 'none';

/** `equal`, `not-equal`, or `undecided` (a size guard refused it or the time budget ran out; counted as not equal). */
export type Verdict = 'equal' | 'not-equal' | 'undecided';

/** The verdict of {@link checkEquivalence}. */
export interface EquivalenceResult {
  /** Whether the answer is equivalent to the reference (false when undecided). */
  readonly equivalent: boolean;
  /** The three-way verdict. */
  readonly verdict: Verdict;
  /** The layer that decided (for a structured answer, the strongest layer any element needed). */
  readonly layer: EquivalenceLayer;
  /** A human-readable reason. */
  readonly details: string;
}

/** Options of {@link checkEquivalence}. */
export interface EquivalenceOptions {
  /** Relative tolerance of the numeric layer: |a − b| ≤ tol · max(1, |a|, |b|). Default 1e-9. */
  readonly tolerance?: number;
  /** Random points of the numeric layer. Default 8. */
  readonly samples?: number;
  /** Seed of the numeric layer's points. Default 0. */
  readonly seed?: number;
  /** Compare bare comma-separated lists in order (default false: as multisets, like solution sets). */
  readonly orderedLists?: boolean;
  /** Time budget of one check in milliseconds (default 1000). Past it the verdict is `undecided`. */
  readonly budgetMs?: number;
  /**
   * Called with the numeric layer's `equal` verdict of a single-value pair BEFORE the symbolic layer tries to prove it
   * (simplify can run for minutes on a small input). The verifier keeps it as the answer if the symbolic layer then
   * overruns the budget.
   */
  readonly onProvisional?: (result: EquivalenceResult) => void;
}

/** A verdict without the three-way field (filled in by {@link withVerdict}). */
type Partial3 = Omit<EquivalenceResult, 'verdict'> & { readonly verdict?: Verdict };

/** Adds the three-way verdict to a result. */
function withVerdict(r: Partial3): EquivalenceResult {
  return { ...r, verdict: r.verdict ?? (r.equivalent ? 'equal' : 'not-equal') };
}

/** The verdict for a check a guard or the budget stopped. */
export function undecided(reason: string): EquivalenceResult {
  return { equivalent: false, verdict: 'undecided', layer: 'none', details: `undecided: ${reason}` };
}

/** Thrown when {@link checkExact} meets a pair only the symbolic or numeric layers can decide. */
class NeedsSymbolic extends Error {}

/** The state of one check: its options and its budget. */
interface Run extends EquivalenceOptions {
  readonly budget: Budget;
  /** Stop (with {@link NeedsSymbolic}) instead of running the symbolic and numeric layers. */
  readonly exactOnly?: boolean;
}

/** Order of layers, weakest (cheapest) first. */
const LAYER_RANK: Readonly<Record<EquivalenceLayer, number>> = {
  'normalized-string': 0,
  rational: 1,
  symbolic: 2,
  numeric: 3,
  none: 4,
};

let mathInstance: MathJsInstance | undefined;
/** The shared mathjs instance (created on first use). */
function math(): MathJsInstance {
  mathInstance ??= create(all, {});
  return mathInstance;
}

/** Names mathjs treats as constants (never sampled as variables). */
const CONSTANTS = new Set([
  'pi',
  'e',
  'i',
  'Infinity',
  'E',
  'PI',
  'NaN',
  'tau',
  'phi',
  'LN2',
  'LN10',
  'SQRT2',
  'SQRT1_2',
]);

/**
 * Whether `answer` is equivalent to `reference`. Never throws: anything it cannot compare is `equivalent: false`
 * with the reason in `details`.
 */
export function checkEquivalence(
  answer: string,
  reference: string,
  options: EquivalenceOptions = {},
): EquivalenceResult {
  const run: Run = { ...options, budget: new Budget(budgetMsOf(options.budgetMs)) };
  try {
    return checkUnguarded(String(answer), String(reference), run);
  } catch (err) {
    if (err instanceof Undecided) return undecided(err.message);
    return withVerdict({
      equivalent: false,
      layer: 'none',
      details: `could not compare the answers (${err instanceof Error ? err.message : String(err)})`,
    });
  }
}

/**
 * The cheap part of {@link checkEquivalence}: normalised strings, exact rationals, structures of those, and for
 * expressions the parse, the magnitude guards and structural equality, under the same size guards. Undefined when only the symbolic or numeric layers could decide (the caller then runs the full check,
 * off the main thread). Bounded by the size guards, so it is safe to call on the training thread.
 */
export function checkExact(
  answer: string,
  reference: string,
  options: EquivalenceOptions = {},
): EquivalenceResult | undefined {
  const run: Run = { ...options, budget: new Budget(budgetMsOf(options.budgetMs)), exactOnly: true };
  try {
    return checkUnguarded(String(answer), String(reference), run);
  } catch (err) {
    if (err instanceof NeedsSymbolic) return undefined;
    if (err instanceof Undecided) return undecided(err.message);
    return withVerdict({
      equivalent: false,
      layer: 'none',
      details: `could not compare the answers (${err instanceof Error ? err.message : String(err)})`,
    });
  }
}

/** {@link checkEquivalence} without the guard. */
function checkUnguarded(answer: string, reference: string, run: Run): EquivalenceResult {
  if (answer.trim() === reference.trim() && answer.trim() !== '') {
    return withVerdict({ equivalent: true, layer: 'normalized-string', details: 'identical answers' });
  }
  guardText(answer, 'answer');
  guardText(reference, 'reference');
  const [exact, approximate] = splitApproximation(answer);
  const b = normalizeAnswer(reference);
  const a = normalizeAnswer(dropCountNoun(exact, b));
  if (a === '')
    return withVerdict({ equivalent: false, layer: 'none', details: 'the answer is empty after normalisation' });
  if (b === '')
    return withVerdict({ equivalent: false, layer: 'none', details: 'the reference is empty after normalisation' });
  if (a === b)
    return withVerdict({
      equivalent: true,
      layer: 'normalized-string',
      details: `normalised forms are identical: ${a}`,
    });
  const sa = parseStructure(a);
  const sb = parseStructure(b);
  // A provisional verdict only stands for the whole pair when both are single values.
  const result = compareStructures(
    sa,
    sb,
    sa.kind === 'scalar' && sb.kind === 'scalar' ? run : { ...run, onProvisional: undefined },
  );
  if (result.equivalent || approximate === undefined) return result;
  // `\frac13 \approx 0.33` against a reference written as the decimal: the annotation is the answer's own rounding.
  const approx = normalizeAnswer(approximate);
  const rb = parseRational(b);
  if (rb && rb.value.d !== 1n && approx !== '') {
    const second = compareStructures(parseStructure(approx), parseStructure(b), run);
    if (second.equivalent) return { ...second, details: `the approximation after \\approx: ${second.details}` };
  }
  return result;
}

/**
 * `36 pencils`, `12 girls`: a number followed by one or two plain words, against a reference that is a number, is the
 * number (unit words the normaliser knows are dropped anyway; this covers the nouns of word problems).
 */
function dropCountNoun(answer: string, normalizedReference: string): string {
  const m = /^\s*\$?\s*([+-]?\d[\d,]*(?:\.\d+)?)\s*\$?\s+([A-Za-z]{3,}(?:\s+[A-Za-z]{3,})?)\.?\s*$/.exec(answer);
  return m && !/^per\s*cent/i.test(m[2]!) && parseRational(normalizedReference) ? m[1]! : answer;
}

/** Compares two structured answers. */
function compareStructures(sa: AnswerStructure, sb: AnswerStructure, options: Run): EquivalenceResult {
  options.budget.check();
  if (sa.kind === 'matrix' || sb.kind === 'matrix') return compareMatrices(sa, sb, options);
  // One way only: an answer written with a decimal comma against a decimal reference (a reference list stays a list).
  const comma = decimalComma(sa, sb);
  if (comma) return comma;
  if (sa.kind === 'scalar' && sb.kind === 'scalar') return compareScalars(sa.text, sb.text, options);
  // A one-element set against a scalar: compare the element.
  if (sa.kind === 'set' && sa.items.length === 1 && sb.kind === 'scalar')
    return compareScalars(sa.items[0]!, sb.text, options);
  if (sb.kind === 'set' && sb.items.length === 1 && sa.kind === 'scalar')
    return compareScalars(sa.text, sb.items[0]!, options);
  if (sa.kind === 'tuple' || sb.kind === 'tuple') {
    // A parenthesised tuple against a bare list compares in order (the answer forgot the parentheses).
    const bare = (s: AnswerStructure): boolean => s.kind === 'list';
    if (sa.kind === 'tuple' && sb.kind === 'tuple') {
      if (sa.open !== sb.open || sa.close !== sb.close) {
        return withVerdict({
          equivalent: false,
          layer: 'none',
          details: `brackets differ: ${sa.open}…${sa.close} vs ${sb.open}…${sb.close}`,
        });
      }
      return compareOrdered(sa.items, sb.items, options, 'tuple');
    }
    if ((sa.kind === 'tuple' && sa.open === '(' && bare(sb)) || (sb.kind === 'tuple' && sb.open === '(' && bare(sa))) {
      const itemsOf = (s: AnswerStructure): readonly string[] =>
        s.kind === 'scalar' ? [s.text] : s.kind === 'matrix' ? s.rows.flat() : s.items;
      return compareOrdered(itemsOf(sa), itemsOf(sb), options, 'tuple');
    }
    return withVerdict({
      equivalent: false,
      layer: 'none',
      details: `different structure: ${describeKind(sa)} vs ${describeKind(sb)}`,
    });
  }
  if (sa.kind === 'scalar' || sb.kind === 'scalar') {
    return withVerdict({
      equivalent: false,
      layer: 'none',
      details: `different structure: ${describeKind(sa)} vs ${describeKind(sb)}`,
    });
  }
  if (options.orderedLists && sa.kind === 'list' && sb.kind === 'list')
    return compareOrdered(sa.items, sb.items, options, 'list');
  return compareUnordered(sa.items, sb.items, options);
}

/**
 * A decimal comma: `1000,99` (one number, a comma, 1–2 or 4+ digits: never a thousands group) against a reference
 * that is that decimal. Undefined when the pair is not of that shape.
 */
function decimalComma(list: AnswerStructure, other: AnswerStructure): EquivalenceResult | undefined {
  if (list.kind !== 'list' || list.items.length !== 2 || other.kind !== 'scalar') return undefined;
  const [whole, frac] = list.items as [string, string];
  if (!/^[+-]?\d+$/.test(whole) || !/^\d+$/.test(frac) || frac.length === 3) return undefined;
  const value = parseRational(`${whole}.${frac}`);
  const ref = parseRational(other.text);
  if (!value || !ref || ref.percent || ref.value.d === 1n || !value.value.equals(ref.value)) return undefined;
  return withVerdict({
    equivalent: true,
    layer: 'rational',
    details: `decimal comma: ${whole},${frac} = ${ref.value}`,
  });
}

/** Matrices compare cell by cell (same shape); a matrix never equals a non-matrix. */
function compareMatrices(sa: AnswerStructure, sb: AnswerStructure, options: Run): EquivalenceResult {
  if (sa.kind !== 'matrix' || sb.kind !== 'matrix') {
    return withVerdict({
      equivalent: false,
      layer: 'none',
      details: `different structure: ${describeKind(sa)} vs ${describeKind(sb)}`,
    });
  }
  const shape = (rows: readonly (readonly string[])[]): string => `${rows.length}×${rows[0]?.length ?? 0}`;
  if (shape(sa.rows) !== shape(sb.rows) || sa.rows.some((r, k) => r.length !== sb.rows[k]!.length)) {
    return withVerdict({
      equivalent: false,
      layer: 'none',
      details: `matrix shapes differ: ${shape(sa.rows)} vs ${shape(sb.rows)}`,
    });
  }
  const r = compareOrdered(sa.rows.flat(), sb.rows.flat(), options, 'matrix');
  return r;
}

/** Short name of a structure kind for details. */
function describeKind(s: AnswerStructure): string {
  if (s.kind === 'scalar') return 'a single value';
  if (s.kind === 'matrix') return `a ${s.rows.length}-row matrix`;
  if (s.kind === 'tuple') return `a ${s.items.length}-tuple/interval ${s.open}…${s.close}`;
  if (s.kind === 'set') return `a set of ${s.items.length}`;
  return `a list of ${s.items.length}`;
}

/** Combines element verdicts: equivalent with the strongest layer. */
function strongest(results: readonly EquivalenceResult[]): EquivalenceLayer {
  let layer: EquivalenceLayer = 'normalized-string';
  for (const r of results) if (LAYER_RANK[r.layer] > LAYER_RANK[layer]) layer = r.layer;
  return layer;
}

/** Element-wise comparison in order. */
function compareOrdered(xs: readonly string[], ys: readonly string[], options: Run, what: string): EquivalenceResult {
  if (xs.length !== ys.length)
    return withVerdict({
      equivalent: false,
      layer: 'none',
      details: `${what} lengths differ: ${xs.length} vs ${ys.length}`,
    });
  if (xs.every((x, k) => x === ys[k]))
    return withVerdict({
      equivalent: true,
      layer: 'normalized-string',
      details: `all ${xs.length} ${what} elements are identical`,
    });
  guardItems(xs.length, what);
  const results: EquivalenceResult[] = [];
  for (let k = 0; k < xs.length; k++) {
    const r = compareElement(xs[k]!, ys[k]!, options);
    if (!r.equivalent) return { ...r, details: `${what} element ${k + 1} differs: ${r.details}` };
    results.push(r);
  }
  return withVerdict({
    equivalent: true,
    layer: strongest(results),
    details: `all ${xs.length} ${what} elements are equivalent`,
  });
}

/** Multiset comparison: every element of one matches a distinct element of the other. */
function compareUnordered(xs: readonly string[], ys: readonly string[], options: Run): EquivalenceResult {
  if (xs.length !== ys.length)
    return withVerdict({ equivalent: false, layer: 'none', details: `set sizes differ: ${xs.length} vs ${ys.length}` });
  const sorted = (list: readonly string[]): string => JSON.stringify([...list].sort());
  if (sorted(xs) === sorted(ys))
    return withVerdict({
      equivalent: true,
      layer: 'normalized-string',
      details: `the same ${xs.length} elements (order ignored)`,
    });
  guardItems(xs.length, 'set or list');
  const used = new Array<boolean>(ys.length).fill(false);
  const results: EquivalenceResult[] = [];
  for (const x of xs) {
    let found = false;
    for (let k = 0; k < ys.length && !found; k++) {
      if (used[k]) continue;
      const r = compareElement(x, ys[k]!, options);
      if (r.equivalent) {
        used[k] = true;
        results.push(r);
        found = true;
      }
    }
    if (!found)
      return withVerdict({
        equivalent: false,
        layer: 'none',
        details: `element ${x} has no equivalent in the reference`,
      });
  }
  return withVerdict({
    equivalent: true,
    layer: strongest(results),
    details: `all ${xs.length} elements match (order ignored)`,
  });
}

/** Compares two elements of a structure (each may itself be structured). */
function compareElement(x: string, y: string, options: Run): EquivalenceResult {
  if (x === y) return withVerdict({ equivalent: true, layer: 'normalized-string', details: `identical: ${x}` });
  return compareStructures(parseStructure(x), parseStructure(y), options);
}

/** A word answer: letters (and spaces removed) only, at least three in a row, no digits or commands. */
function isText(s: string): boolean {
  return /[A-Za-z]{3,}/.test(s) && !/[\d\\^_]/.test(s);
}

/** Relation operators of normalised answers (see normalizeAnswer: `!=` → `\neq`, `<=` → `\le`, ...). */
const RELATION = /(\\(?:neq|le|ge|lt|gt)(?![A-Za-z])|=|<|>)/;

/** `x`, `x_1`, `AB`, `f(x)`, `f(2)`, `\theta`: what may stand on the left of `x = value`. */
const SIMPLE_LHS = /^(?:[A-Za-z]{1,3}(?:_\{?[A-Za-z0-9]+\}?)?(?:\([A-Za-z0-9]+\))?|\\[A-Za-z]+)$/;

/** Splits a relation (chain) into its parts and operators; `ops` is empty for a plain value. */
function splitRelation(s: string): { parts: string[]; ops: string[] } {
  const pieces = s.split(new RegExp(RELATION.source, 'g'));
  const parts: string[] = [];
  const ops: string[] = [];
  pieces.forEach((p, k) => (k % 2 === 0 ? parts.push(p) : ops.push(p)));
  return { parts, ops };
}

/** Compares two scalar answers through the relation, rational, symbolic and numeric layers. */
function compareScalars(a: string, b: string, options: Run): EquivalenceResult {
  options.budget.check();
  if (a === b)
    return withVerdict({
      equivalent: true,
      layer: 'normalized-string',
      details: `normalised forms are identical: ${a}`,
    });
  if (isText(a) && isText(b)) {
    return a.toLowerCase() === b.toLowerCase()
      ? withVerdict({ equivalent: true, layer: 'normalized-string', details: `equal text ignoring case: ${a}` })
      : withVerdict({ equivalent: false, layer: 'none', details: `different text answers: ${a} vs ${b}` });
  }
  const ra = splitRelation(a);
  const rb = splitRelation(b);
  if (ra.ops.length > 0 || rb.ops.length > 0) return compareRelations(ra, rb, options);
  if (Math.max(longestDigitRun(a), longestDigitRun(b)) > MAX_EXACT_DIGITS) {
    throw new Undecided(`a number has more than ${MAX_EXACT_DIGITS} digits`);
  }
  // (b) exact rationals
  const qa = parseRational(a);
  const qb = parseRational(b);
  if (qa && qb) {
    if (qa.value.equals(qb.value))
      return withVerdict({ equivalent: true, layer: 'rational', details: `equal as rationals: ${qa.value}` });
    if (qa.percent !== qb.percent) {
      const [pct, plain] = qa.percent ? [qa, qb] : [qb, qa];
      const scaled = pct.value.mul(new Rational(1n, 100n));
      if (scaled.equals(plain.value))
        return withVerdict({
          equivalent: true,
          layer: 'rational',
          details: `percentage ${pct.value}% equals ${plain.value}`,
        });
    }
    return withVerdict({
      equivalent: false,
      layer: 'none',
      details: `different numbers: ${qa.value}${qa.percent ? '%' : ''} vs ${qb.value}${qb.percent ? '%' : ''}`,
    });
  }
  return compareExpressions(a, b, options);
}

/** Relations: equations as equations, `x = v` against a value, `x \neq 5` against `k \neq 5`, chains `a = b = 0`. */
function compareRelations(
  ra: { parts: string[]; ops: string[] },
  rb: { parts: string[]; ops: string[] },
  options: Run,
): EquivalenceResult {
  const last = (r: { parts: string[] }): string => r.parts[r.parts.length - 1]!;
  const assigns = (r: { parts: string[]; ops: string[] }): boolean =>
    r.ops.length > 0 &&
    r.ops.every((op) => op === '=') &&
    r.parts.slice(0, -1).every((p) => SIMPLE_LHS.test(p)) &&
    last(r) !== '';
  // A value against `x = v` or a chain `a = b = v`: compare the value.
  if (ra.ops.length === 0 && assigns(rb)) return compareScalars(ra.parts[0]!, last(rb), options);
  if (rb.ops.length === 0 && assigns(ra)) return compareScalars(last(ra), rb.parts[0]!, options);
  if (ra.ops.length === 0 || rb.ops.length === 0) {
    return withVerdict({
      equivalent: false,
      layer: 'none',
      details: 'one answer is an equation or inequality and the other is not',
    });
  }
  if (ra.ops.length !== 1 || rb.ops.length !== 1 || ra.parts.some((p) => p === '') || rb.parts.some((p) => p === '')) {
    return withVerdict({ equivalent: false, layer: 'none', details: 'relations of different shapes' });
  }
  const [opA, opB] = [ra.ops[0]!, rb.ops[0]!];
  const [la, xa] = ra.parts as [string, string];
  const [lb, xb] = rb.parts as [string, string];
  if (opA === '=' && opB === '=') return compareEquations(la, xa, lb, xb, options);
  if (opA !== opB)
    return withVerdict({ equivalent: false, layer: 'none', details: `different relations: ${opA} vs ${opB}` });
  // `x \neq 5` vs `k \neq 5`, `x < 3` vs `y < 3`: one variable on the left of each, the same relation: compare the right.
  if (SIMPLE_LHS.test(la) && SIMPLE_LHS.test(lb)) {
    const right = compareScalars(xa, xb, options);
    return right.equivalent ? { ...right, details: `the same relation ${opA}: ${right.details}` } : right;
  }
  const left = compareScalars(la, lb, options);
  if (!left.equivalent) return left;
  const right = compareScalars(xa, xb, options);
  return right.equivalent
    ? withVerdict({ equivalent: true, layer: strongest([left, right]), details: `both sides of ${opA} are equivalent` })
    : right;
}

/** Equations `La = Ra` and `Lb = Rb`: the same when La − Ra is a non-zero constant multiple of Lb − Rb. */
function compareEquations(la: string, xa: string, lb: string, xb: string, options: Run): EquivalenceResult {
  const da = `(${la})-(${xa})`;
  const same = compareScalars(da, `(${lb})-(${xb})`, options);
  if (same.equivalent) return { ...same, details: `equations: ${same.details}` };
  const flipped = compareScalars(da, `(${xb})-(${lb})`, options);
  if (flipped.equivalent) return { ...flipped, details: `equations (sides swapped): ${flipped.details}` };
  if (same.verdict === 'undecided') return same;
  if (options.exactOnly) throw new NeedsSymbolic();
  const ratio = compareProportional(da, `(${lb})-(${xb})`, options);
  return ratio ?? withVerdict({ equivalent: false, layer: 'none', details: `different equations: ${same.details}` });
}

/** Parses a normalised LaTeX expression for the symbolic layers, guarding magnitudes; a verdict when it cannot. */
function parseGuarded(text: string, side: string): MathNode | EquivalenceResult {
  if (text.length > MAX_SYMBOLIC_CHARS)
    throw new Undecided(`the ${side} is too long (over ${MAX_SYMBOLIC_CHARS} characters) to compare symbolically`);
  let node: MathNode;
  try {
    node = math().parse(latexToMathjs(text));
  } catch (err) {
    return unparsable(side, text, err);
  }
  guardMagnitudes(node, side);
  return node;
}

/** Layers (c) and (d) on two scalar expressions. */
function compareExpressions(a: string, b: string, options: Run): EquivalenceResult {
  // Parsing, the magnitude guards and structural equality are bounded by the size guards: they run even in the cheap
  // check on the calling thread. Sampling and simplification come after.
  const na = parseGuarded(a, 'answer');
  if (!isNode(na)) return na;
  const nb = parseGuarded(b, 'reference');
  if (!isNode(nb)) return nb;
  // Structural equality first: the same expression up to the order of sums and products (never expands).
  if (canonical(na) === canonical(nb))
    return withVerdict({ equivalent: true, layer: 'symbolic', details: `the same expression up to order: ${na}` });
  if (options.exactOnly) throw new NeedsSymbolic();
  const vars = [...new Set([...freeSymbols(na), ...freeSymbols(nb)])].sort();
  // Values that differ numerically at some point are not equivalent: no simplification needed (the expensive part).
  const quick = compareNumerically(na, nb, vars, options);
  if (!quick.equivalent && quick.details.startsWith('differ')) return quick;
  const diff = new (math().OperatorNode)('-', 'subtract', [na, nb]);
  if (expandable(diff)) {
    if (quick.equivalent) options.onProvisional?.(quick);
    if (quick.equivalent && options.budget.spent()) return quick;
    options.budget.check();
    try {
      const simplified = math().simplify(diff);
      if (isZero(simplified))
        return withVerdict({ equivalent: true, layer: 'symbolic', details: `simplify(${na} - (${nb})) = 0` });
    } catch {
      /* fall through to the next method */
    }
    if (quick.equivalent && options.budget.spent()) return quick;
    options.budget.check();
    try {
      const rationalized = math().rationalize(diff);
      if (isZero(rationalized))
        return withVerdict({ equivalent: true, layer: 'symbolic', details: `rationalize(${na} - (${nb})) = 0` });
    } catch {
      /* not a rational function; fall through */
    }
  }
  // (d) numeric sampling
  return quick;
}

/** Whether a parse result is a node (not a verdict). */
function isNode(x: MathNode | EquivalenceResult): x is MathNode {
  return typeof (x as MathNode).traverse === 'function';
}

/** Whether simplify/rationalize may run on `node`: small, and no exponent that would expand into a huge polynomial. */
function expandable(node: MathNode): boolean {
  if (node.toString().length > MAX_SYMBOLIC_CHARS) return false;
  let ok = true;
  node.traverse((n) => {
    if (!ok || n.type !== 'OperatorNode' || (n as unknown as { fn: string }).fn !== 'pow') return;
    const [base, exponent] = (n as unknown as { args: MathNode[] }).args as [MathNode, MathNode];
    const value = constantValue(exponent);
    // A sum with variables raised to a power expands into many terms: mathjs simplify ran for minutes on `(x+y)^4` and
    // `(x+y+z)^3`. Powers of sums of several variables are left to numeric sampling; of one variable, up to the 4th.
    const sumVariables = variablesOfSum(base);
    const limit = sumVariables > 1 ? 1 : sumVariables === 1 ? MAX_EXPANDED_SUM_EXPONENT : MAX_EXPANDED_EXPONENT;
    if (value === undefined || !Number.isFinite(value) || Math.abs(value) > limit || !Number.isInteger(value))
      ok = false;
  });
  return ok;
}

/** The number of free variables of `node` when it is (parentheses aside) a sum or difference; 0 otherwise. */
function variablesOfSum(node: MathNode): number {
  let inner = node;
  while (inner.type === 'ParenthesisNode') inner = (inner as unknown as { content: MathNode }).content;
  if (inner.type !== 'OperatorNode') return 0;
  const fn = (inner as unknown as { fn: string }).fn;
  return fn === 'add' || fn === 'subtract' ? freeSymbols(inner).length : 0;
}

/** The value of a subtree without free variables, as a real number; undefined when it has variables or is not real. */
function constantValue(node: MathNode): number | undefined {
  if (freeSymbols(node).length > 0) return undefined;
  try {
    const v = asComplex(node.compile().evaluate({}));
    if (!v || v.im !== 0) return v ? Math.hypot(v.re, v.im) : undefined;
    return v.re;
  } catch {
    return undefined;
  }
}

/** Largest magnitude of a sampled variable (see compareNumerically). */
const SAMPLE_MAGNITUDE = 3;

/**
 * Refuses (as undecided) expressions whose values leave the range of doubles, where sampling would read overflow as ∞
 * and underflow as 0 (`10^{-10^{10}}` is not 0): powers with |exponent · log10 |base|| over {@link MAX_LOG10_MAGNITUDE},
 * `exp` of more than that, factorials and gammas of more than 170. Children are checked before their parents, so no
 * subtree is evaluated before its own parts passed.
 */
function guardMagnitudes(node: MathNode, side: string): void {
  node.forEach((child) => guardMagnitudes(child, side));
  const tooLarge = (what: string): never => {
    throw new Undecided(`the ${side} has ${what}, beyond the range of exact comparison`);
  };
  if (node.type === 'OperatorNode') {
    const op = node as unknown as { fn: string; args: MathNode[] };
    if (op.fn === 'pow') {
      const exponent = constantValue(op.args[1]!);
      if (exponent === undefined) return;
      if (!Number.isFinite(exponent)) tooLarge('an infinite exponent');
      const base = constantValue(op.args[0]!);
      const log10Base =
        base === undefined
          ? Math.log10(SAMPLE_MAGNITUDE)
          : Math.abs(base) === 0 || Math.abs(base) === 1
            ? 0
            : Math.abs(Math.log10(Math.abs(base)));
      if (!Number.isFinite(log10Base) || Math.abs(exponent) * log10Base > MAX_LOG10_MAGNITUDE)
        tooLarge(`a power ${node.toString().slice(0, 40)}`);
    } else if (op.fn === 'factorial') {
      const n = constantValue(op.args[0]!);
      if (n !== undefined && !(Math.abs(n) <= 170)) tooLarge('a factorial over 170!');
    }
  } else if (node.type === 'FunctionNode') {
    const fn = node as unknown as { fn: { name?: string }; args: MathNode[] };
    const arg = fn.args[0] ? constantValue(fn.args[0]) : undefined;
    if (arg === undefined) return;
    if (fn.fn.name === 'exp' && !(Math.abs(arg) <= MAX_LOG10_MAGNITUDE * Math.LN10))
      tooLarge('an exponential beyond 10^300');
    if (fn.fn.name === 'gamma' && !(Math.abs(arg) <= 171)) tooLarge('a gamma function over 171');
  } else if (node.type === 'ConstantNode') {
    const v = Number((node as unknown as { value: unknown }).value);
    if (!Number.isFinite(v))
      tooLarge(`the number ${String((node as unknown as { value: unknown }).value).slice(0, 20)}`);
  }
}

/** A canonical text of an expression: parentheses dropped, sums and products flattened and sorted. Never expands. */
function canonical(node: MathNode): string {
  if (node.type === 'ParenthesisNode') return canonical((node as unknown as { content: MathNode }).content);
  if (node.type === 'OperatorNode') {
    const op = node as unknown as { fn: string; args: MathNode[] };
    if (op.fn === 'add' || op.fn === 'multiply') {
      const flat: string[] = [];
      const collect = (n: MathNode): void => {
        const inner = n.type === 'ParenthesisNode' ? (n as unknown as { content: MathNode }).content : n;
        if (inner.type === 'OperatorNode' && (inner as unknown as { fn: string }).fn === op.fn)
          (inner as unknown as { args: MathNode[] }).args.forEach(collect);
        else flat.push(canonical(inner));
      };
      op.args.forEach(collect);
      return `${op.fn}(${flat.sort().join(',')})`;
    }
    return `${op.fn}(${op.args.map(canonical).join(',')})`;
  }
  if (node.type === 'FunctionNode') {
    const fn = node as unknown as { fn: MathNode; args: MathNode[] };
    return `${fn.fn.toString()}(${fn.args.map(canonical).join(',')})`;
  }
  return node.toString();
}

/** The verdict for an answer that is neither equal text nor a math expression. */
function unparsable(side: string, text: string, err: unknown): EquivalenceResult {
  const reason = err instanceof Error ? err.message : String(err);
  return withVerdict({
    equivalent: false,
    layer: 'none',
    details: `not equal as text, and the ${side} ${text} is not a math expression (${reason})`,
  });
}

/** Whether a node is the constant 0. */
function isZero(node: MathNode): boolean {
  if (node.type !== 'ConstantNode') return false;
  const value = (node as unknown as { value: unknown }).value;
  return Number(value) === 0;
}

/** Free variables of an expression (symbols that are neither constants nor function names). */
function freeSymbols(node: MathNode): string[] {
  const names = new Set<string>();
  node.traverse((n, _path, parent) => {
    if (n.type !== 'SymbolNode') return;
    const name = (n as unknown as { name: string }).name;
    if (parent && parent.type === 'FunctionNode' && (parent as unknown as { fn: MathNode }).fn === n) return;
    if (!CONSTANTS.has(name)) names.add(name);
  });
  return [...names];
}

/** A value as a complex pair, or undefined when it is not a number. */
function asComplex(v: unknown): { re: number; im: number } | undefined {
  if (typeof v === 'number') return { re: v, im: 0 };
  if (typeof v === 'boolean') return undefined;
  if (v && typeof v === 'object') {
    const o = v as { re?: unknown; im?: unknown; toNumber?: () => number; valueOf?: () => unknown };
    if (typeof o.re === 'number' && typeof o.im === 'number') return { re: o.re, im: o.im };
    const n = Number(v as unknown as number);
    if (!Number.isNaN(n)) return { re: n, im: 0 };
  }
  return undefined;
}

/** Tolerance test on one real component. */
function close(x: number, y: number, tol: number): boolean {
  if (x === y) return true;
  return Math.abs(x - y) <= tol * Math.max(1, Math.abs(x), Math.abs(y));
}

/** A finite complex value (NaN and ±∞ are not comparable: overflow must never read as agreement). */
function finite(v: { re: number; im: number } | undefined): v is { re: number; im: number } {
  return v !== undefined && Number.isFinite(v.re) && Number.isFinite(v.im);
}

/** One sample: the point and both values, or undefined when either side could not be evaluated to a finite number. */
interface Sample {
  readonly scope: Record<string, number>;
  readonly va: { re: number; im: number };
  readonly vb: { re: number; im: number };
}

/**
 * The seeded generator of sample points (mulberry32 seeded from SHA-256 of the seed). The checker keeps its own, so
 * that the verifier's worker threads load the checker and mathjs only, not the whole kernel.
 */
function sampleRng(seed: number): { next(): number } {
  let state = createHash('sha256').update(`math-checker\u241f${seed}`).digest().readUInt32LE(0);
  return {
    next(): number {
      state = (state + 0x6d2b79f5) | 0;
      let t = Math.imul(state ^ (state >>> 15), 1 | state);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}

/** Evaluates both expressions at `samples` seeded random points for `vars` (see the comment inside). */
function* samplePairs(
  na: MathNode,
  nb: MathNode,
  vars: readonly string[],
  samples: number,
  options: Run,
): Generator<Sample | undefined> {
  const rng = sampleRng(options.seed ?? 0);
  const fa = na.compile();
  const fb = nb.compile();
  for (let k = 0; k < samples; k++) {
    options.budget.check();
    const scope: Record<string, number> = {};
    for (const v of vars) {
      // Magnitudes 0.1–3; the first point all positive, the second all negative, then a random sign per variable
      // (mixed signs bring sums such as x + y near 0, where `(x+y)^{60}` and `(x+y)^{60} + 1` differ in doubles).
      const magnitude = 0.1 + (SAMPLE_MAGNITUDE - 0.1) * rng.next();
      const negative = k === 0 ? false : k === 1 ? true : rng.next() < 0.5;
      scope[v] = negative ? -magnitude : magnitude;
    }
    let va: { re: number; im: number } | undefined;
    let vb: { re: number; im: number } | undefined;
    try {
      va = asComplex(fa.evaluate({ ...scope }));
      vb = asComplex(fb.evaluate({ ...scope }));
    } catch {
      yield undefined;
      continue;
    }
    yield finite(va) && finite(vb) ? { scope, va, vb } : undefined;
  }
}

/** Layer (d): evaluates both expressions at seeded random points. */
function compareNumerically(na: MathNode, nb: MathNode, vars: readonly string[], options: Run): EquivalenceResult {
  const tol = options.tolerance ?? 1e-9;
  const samples = vars.length === 0 ? 1 : Math.max(1, options.samples ?? 8);
  let compared = 0;
  let maxError = 0;
  try {
    for (const sample of samplePairs(na, nb, vars, samples, options)) {
      if (!sample) continue;
      const { va, vb, scope } = sample;
      if (!close(va.re, vb.re, tol) || !close(va.im, vb.im, tol)) {
        const at = vars.length === 0 ? '' : ` at ${vars.map((v) => `${v}=${scope[v]!.toPrecision(4)}`).join(', ')}`;
        return withVerdict({
          equivalent: false,
          layer: 'none',
          details: `differ numerically${at}: ${fmt(va)} vs ${fmt(vb)}`,
        });
      }
      maxError = Math.max(
        maxError,
        Math.abs(va.re - vb.re) / Math.max(1, Math.abs(va.re)),
        Math.abs(va.im - vb.im) / Math.max(1, Math.abs(va.im)),
      );
      compared++;
    }
  } catch (err) {
    if (err instanceof Undecided) throw err;
    return withVerdict({
      equivalent: false,
      layer: 'none',
      details: `could not compile for evaluation: ${err instanceof Error ? err.message : String(err)}`,
    });
  }
  const needed = vars.length === 0 ? 1 : Math.min(3, samples);
  if (compared < needed) {
    return withVerdict({
      equivalent: false,
      layer: 'none',
      details: `could not evaluate both to finite numbers at enough points (${compared} of ${samples})`,
    });
  }
  const where = vars.length === 0 ? 'as numbers' : `at ${compared} random points for ${vars.join(', ')}`;
  return withVerdict({
    equivalent: true,
    layer: 'numeric',
    details: `equal ${where} (max relative error ${maxError.toExponential(1)}, tolerance ${tol})`,
  });
}

/**
 * Whether two expressions with variables are constant non-zero multiples of each other (`2x+z-1` and `4x+2z-2`: the
 * same equation). A verdict when they are; undefined when they are not (or cannot be compared).
 */
function compareProportional(a: string, b: string, options: Run): EquivalenceResult | undefined {
  const na = parseGuarded(a, 'answer');
  const nb = parseGuarded(b, 'reference');
  if (!isNode(na) || !isNode(nb)) return undefined;
  const vars = [...new Set([...freeSymbols(na), ...freeSymbols(nb)])].sort();
  if (vars.length === 0) return undefined;
  const tol = options.tolerance ?? 1e-9;
  const samples = Math.max(3, options.samples ?? 8);
  let ratio: { re: number; im: number } | undefined;
  let compared = 0;
  for (const sample of samplePairs(na, nb, vars, samples, options)) {
    if (!sample) continue;
    const { va, vb } = sample;
    const den = vb.re * vb.re + vb.im * vb.im;
    if (den === 0 || (va.re === 0 && va.im === 0)) return undefined;
    const r = { re: (va.re * vb.re + va.im * vb.im) / den, im: (va.im * vb.re - va.re * vb.im) / den };
    if (ratio && (!close(r.re, ratio.re, tol) || !close(r.im, ratio.im, tol))) return undefined;
    ratio ??= r;
    compared++;
  }
  if (!ratio || compared < 3) return undefined;
  return withVerdict({
    equivalent: true,
    layer: 'numeric',
    details: `equations: one side difference is ${fmt(ratio)} times the other at ${compared} random points`,
  });
}

/** Formats a complex value for details. */
function fmt(v: { re: number; im: number }): string {
  return v.im === 0 ? String(v.re) : `${v.re}${v.im >= 0 ? '+' : ''}${v.im}i`;
}
