/**
 * The layered answer-equivalence check:
 * (a) `normalized-string` — the normalised strings are identical (or equal ignoring case, for word answers);
 * (b) `rational` — both are exact numbers (integers, decimals, fractions, mixed numbers, percentages, scientific
 *     notation) and equal as BigInt rationals; two numbers that differ are NOT equivalent, whatever later layers say;
 * (c) `symbolic` — mathjs `simplify(a - b)` (or `rationalize`) is exactly 0;
 * (d) `numeric` — both evaluate to the same values (within a relative tolerance) at seeded random points for their
 *     free variables.
 * Tuples and intervals compare element-wise with their brackets, sets and bare lists as multisets, `±` answers as
 * two-element sets. The result names the strongest layer needed and says why.
 */
import { create, all, type MathNode, type MathJsInstance } from 'mathjs';
import { createRng } from '@troupe/kernel';
import { normalizeAnswer } from './normalize.js';
import { parseRational, Rational } from './rational.js';
import { latexToMathjs } from './latex.js';
import { parseStructure, type AnswerStructure } from './structure.js';

/** Which layer decided. `none` when the answers are not equivalent (or could not be compared). */
export type EquivalenceLayer = 'normalized-string' | 'rational' | 'symbolic' | 'numeric' | 'none';

/** The verdict of {@link checkEquivalence}. */
export interface EquivalenceResult {
  /** Whether the answer is equivalent to the reference. */
  readonly equivalent: boolean;
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
}

/** Order of layers, weakest (cheapest) first. */
const LAYER_RANK: Readonly<Record<EquivalenceLayer, number>> = { 'normalized-string': 0, rational: 1, symbolic: 2, numeric: 3, none: 4 };

let mathInstance: MathJsInstance | undefined;
/** The shared mathjs instance (created on first use). */
function math(): MathJsInstance {
  mathInstance ??= create(all, {});
  return mathInstance;
}

/** Names mathjs treats as constants (never sampled as variables). */
const CONSTANTS = new Set(['pi', 'e', 'i', 'Infinity', 'E', 'PI', 'NaN', 'tau', 'phi', 'LN2', 'LN10', 'SQRT2', 'SQRT1_2']);

/**
 * Whether `answer` is equivalent to `reference`. Never throws: anything it cannot compare is `equivalent: false`
 * with the reason in `details`.
 */
export function checkEquivalence(answer: string, reference: string, options: EquivalenceOptions = {}): EquivalenceResult {
  try {
    return checkUnguarded(String(answer), String(reference), options);
  } catch (err) {
    return { equivalent: false, layer: 'none', details: `could not compare the answers (${err instanceof Error ? err.message : String(err)})` };
  }
}

/** Longest normalised answer given to the symbolic and numeric layers (longer ones compare as strings and rationals only). */
export const MAX_SYMBOLIC_CHARS = 400;

/** {@link checkEquivalence} without the guard. */
function checkUnguarded(answer: string, reference: string, options: EquivalenceOptions): EquivalenceResult {
  const a = normalizeAnswer(answer);
  const b = normalizeAnswer(reference);
  if (a === '') return { equivalent: false, layer: 'none', details: 'the answer is empty after normalisation' };
  if (b === '') return { equivalent: false, layer: 'none', details: 'the reference is empty after normalisation' };
  if (a === b) return { equivalent: true, layer: 'normalized-string', details: `normalised forms are identical: ${a}` };
  return compareStructures(parseStructure(a), parseStructure(b), options);
}

/** Compares two structured answers. */
function compareStructures(sa: AnswerStructure, sb: AnswerStructure, options: EquivalenceOptions): EquivalenceResult {
  if (sa.kind === 'scalar' && sb.kind === 'scalar') return compareScalars(sa.text, sb.text, options);
  // A one-element set against a scalar: compare the element.
  if (sa.kind === 'set' && sa.items.length === 1 && sb.kind === 'scalar') return compareScalars(sa.items[0]!, sb.text, options);
  if (sb.kind === 'set' && sb.items.length === 1 && sa.kind === 'scalar') return compareScalars(sa.text, sb.items[0]!, options);
  if (sa.kind === 'tuple' || sb.kind === 'tuple') {
    // A parenthesised tuple against a bare list compares in order (the answer forgot the parentheses).
    const bare = (s: AnswerStructure): boolean => s.kind === 'list';
    if (sa.kind === 'tuple' && sb.kind === 'tuple') {
      if (sa.open !== sb.open || sa.close !== sb.close) {
        return { equivalent: false, layer: 'none', details: `brackets differ: ${sa.open}…${sa.close} vs ${sb.open}…${sb.close}` };
      }
      return compareOrdered(sa.items, sb.items, options, 'tuple');
    }
    if ((sa.kind === 'tuple' && sa.open === '(' && bare(sb)) || (sb.kind === 'tuple' && sb.open === '(' && bare(sa))) {
      const itemsOf = (s: AnswerStructure): readonly string[] => (s.kind === 'scalar' ? [s.text] : s.items);
      return compareOrdered(itemsOf(sa), itemsOf(sb), options, 'tuple');
    }
    return { equivalent: false, layer: 'none', details: `different structure: ${describeKind(sa)} vs ${describeKind(sb)}` };
  }
  if (sa.kind === 'scalar' || sb.kind === 'scalar') {
    return { equivalent: false, layer: 'none', details: `different structure: ${describeKind(sa)} vs ${describeKind(sb)}` };
  }
  if (options.orderedLists && sa.kind === 'list' && sb.kind === 'list') return compareOrdered(sa.items, sb.items, options, 'list');
  return compareUnordered(sa.items, sb.items, options);
}

/** Short name of a structure kind for details. */
function describeKind(s: AnswerStructure): string {
  if (s.kind === 'scalar') return 'a single value';
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
function compareOrdered(xs: readonly string[], ys: readonly string[], options: EquivalenceOptions, what: string): EquivalenceResult {
  if (xs.length !== ys.length) return { equivalent: false, layer: 'none', details: `${what} lengths differ: ${xs.length} vs ${ys.length}` };
  const results: EquivalenceResult[] = [];
  for (let k = 0; k < xs.length; k++) {
    const r = compareElement(xs[k]!, ys[k]!, options);
    if (!r.equivalent) return { equivalent: false, layer: 'none', details: `${what} element ${k + 1} differs: ${r.details}` };
    results.push(r);
  }
  return { equivalent: true, layer: strongest(results), details: `all ${xs.length} ${what} elements are equivalent` };
}

/** Multiset comparison: every element of one matches a distinct element of the other. */
function compareUnordered(xs: readonly string[], ys: readonly string[], options: EquivalenceOptions): EquivalenceResult {
  if (xs.length !== ys.length) return { equivalent: false, layer: 'none', details: `set sizes differ: ${xs.length} vs ${ys.length}` };
  const used = new Array<boolean>(ys.length).fill(false);
  const results: EquivalenceResult[] = [];
  for (const x of xs) {
    let found = false;
    for (let k = 0; k < ys.length && !found; k++) {
      if (used[k]) continue;
      const r = compareElement(x, ys[k]!, options);
      if (r.equivalent) { used[k] = true; results.push(r); found = true; }
    }
    if (!found) return { equivalent: false, layer: 'none', details: `element ${x} has no equivalent in the reference` };
  }
  return { equivalent: true, layer: strongest(results), details: `all ${xs.length} elements match (order ignored)` };
}

/** Compares two elements of a structure (each may itself be structured). */
function compareElement(x: string, y: string, options: EquivalenceOptions): EquivalenceResult {
  if (x === y) return { equivalent: true, layer: 'normalized-string', details: `identical: ${x}` };
  return compareStructures(parseStructure(x), parseStructure(y), options);
}

/** A word answer: letters (and spaces removed) only, at least three in a row, no digits or commands. */
function isText(s: string): boolean {
  return /[A-Za-z]{3,}/.test(s) && !/[\d\\^_]/.test(s);
}

/** Compares two scalar answers through the rational, symbolic and numeric layers. */
function compareScalars(a: string, b: string, options: EquivalenceOptions): EquivalenceResult {
  if (a === b) return { equivalent: true, layer: 'normalized-string', details: `normalised forms are identical: ${a}` };
  if (isText(a) && isText(b)) {
    return a.toLowerCase() === b.toLowerCase()
      ? { equivalent: true, layer: 'normalized-string', details: `equal text ignoring case: ${a}` }
      : { equivalent: false, layer: 'none', details: `different text answers: ${a} vs ${b}` };
  }
  // Equations `L = R` (after a leading `x =` was stripped): compare L − R up to sign.
  const eqA = a.split('=');
  const eqB = b.split('=');
  if (eqA.length === 2 && eqB.length === 2 && eqA.every(Boolean) && eqB.every(Boolean)) {
    const da = `(${eqA[0]})-(${eqA[1]})`;
    const same = compareScalars(da, `(${eqB[0]})-(${eqB[1]})`, options);
    if (same.equivalent) return { ...same, details: `equations: ${same.details}` };
    const flipped = compareScalars(da, `(${eqB[1]})-(${eqB[0]})`, options);
    if (flipped.equivalent) return { ...flipped, details: `equations (sides swapped): ${flipped.details}` };
    return { equivalent: false, layer: 'none', details: `different equations: ${same.details}` };
  }
  if (eqA.length !== eqB.length && (eqA.length > 1 || eqB.length > 1)) {
    return { equivalent: false, layer: 'none', details: 'one answer is an equation and the other is not' };
  }
  // (b) exact rationals
  const ra = parseRational(a);
  const rb = parseRational(b);
  if (ra && rb) {
    if (ra.value.equals(rb.value)) return { equivalent: true, layer: 'rational', details: `equal as rationals: ${ra.value}` };
    if (ra.percent !== rb.percent) {
      const [pct, plain] = ra.percent ? [ra, rb] : [rb, ra];
      const scaled = pct.value.mul(new Rational(1n, 100n));
      if (scaled.equals(plain.value)) return { equivalent: true, layer: 'rational', details: `percentage ${pct.value}% equals ${plain.value}` };
    }
    return { equivalent: false, layer: 'none', details: `different numbers: ${ra.value}${ra.percent ? '%' : ''} vs ${rb.value}${rb.percent ? '%' : ''}` };
  }
  // (c) symbolic
  if (a.length > MAX_SYMBOLIC_CHARS || b.length > MAX_SYMBOLIC_CHARS) {
    return { equivalent: false, layer: 'none', details: `not equal as text or numbers, and too long (over ${MAX_SYMBOLIC_CHARS} characters) to compare symbolically` };
  }
  let na: MathNode;
  let nb: MathNode;
  try { na = math().parse(latexToMathjs(a)); } catch (err) { return unparsable('answer', a, err); }
  try { nb = math().parse(latexToMathjs(b)); } catch (err) { return unparsable('reference', b, err); }
  const vars = [...new Set([...freeSymbols(na), ...freeSymbols(nb)])].sort();
  const numeric = (): EquivalenceResult => compareNumerically(na, nb, vars, options);
  // Values that differ numerically at some point are not equivalent: no simplification needed (the expensive part).
  const quick = numeric();
  if (!quick.equivalent && quick.details.startsWith('differ')) return quick;
  const diff = new (math().OperatorNode)('-', 'subtract', [na, nb]);
  if (diff.toString().length <= 400) {
    try {
      const simplified = math().simplify(diff);
      if (isZero(simplified)) return { equivalent: true, layer: 'symbolic', details: `simplify(${na} - (${nb})) = 0` };
    } catch { /* fall through to the next method */ }
    try {
      const rationalized = math().rationalize(diff);
      if (isZero(rationalized)) return { equivalent: true, layer: 'symbolic', details: `rationalize(${na} - (${nb})) = 0` };
    } catch { /* not a rational function; fall through */ }
  }
  // (d) numeric sampling
  return quick;
}

/** The verdict for an answer that is neither equal text nor a math expression. */
function unparsable(side: string, text: string, err: unknown): EquivalenceResult {
  const reason = err instanceof Error ? err.message : String(err);
  return { equivalent: false, layer: 'none', details: `not equal as text, and the ${side} ${text} is not a math expression (${reason})` };
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
  if (!Number.isFinite(x) || !Number.isFinite(y)) return false;
  return Math.abs(x - y) <= tol * Math.max(1, Math.abs(x), Math.abs(y));
}

/** Layer (d): evaluates both expressions at seeded random points. */
function compareNumerically(na: MathNode, nb: MathNode, vars: readonly string[], options: EquivalenceOptions): EquivalenceResult {
  const tol = options.tolerance ?? 1e-9;
  const samples = vars.length === 0 ? 1 : Math.max(1, options.samples ?? 8);
  const rng = createRng(`math-checker\u241f${options.seed ?? 0}`);
  let fa: { evaluate(scope?: object): unknown };
  let fb: { evaluate(scope?: object): unknown };
  try { fa = na.compile(); fb = nb.compile(); } catch (err) {
    return { equivalent: false, layer: 'none', details: `could not compile for evaluation: ${err instanceof Error ? err.message : String(err)}` };
  }
  let compared = 0;
  let maxError = 0;
  for (let k = 0; k < samples; k++) {
    const scope: Record<string, number> = {};
    for (const v of vars) {
      const magnitude = 0.5 + 2.5 * rng.next();
      scope[v] = k % 2 === 0 ? magnitude : -magnitude;
    }
    let va: { re: number; im: number } | undefined;
    let vb: { re: number; im: number } | undefined;
    try { va = asComplex(fa.evaluate({ ...scope })); vb = asComplex(fb.evaluate({ ...scope })); } catch { continue; }
    if (!va || !vb) continue;
    if (Number.isNaN(va.re) || Number.isNaN(vb.re) || Number.isNaN(va.im) || Number.isNaN(vb.im)) continue;
    if (!close(va.re, vb.re, tol) || !close(va.im, vb.im, tol)) {
      const at = vars.length === 0 ? '' : ` at ${vars.map((v) => `${v}=${scope[v]!.toPrecision(4)}`).join(', ')}`;
      return { equivalent: false, layer: 'none', details: `differ numerically${at}: ${fmt(va)} vs ${fmt(vb)}` };
    }
    if (Number.isFinite(va.re) && Number.isFinite(vb.re)) {
      maxError = Math.max(maxError, Math.abs(va.re - vb.re) / Math.max(1, Math.abs(va.re)), Math.abs(va.im - vb.im) / Math.max(1, Math.abs(va.im)));
    }
    compared++;
  }
  const needed = vars.length === 0 ? 1 : Math.min(3, samples);
  if (compared < needed) {
    return { equivalent: false, layer: 'none', details: `could not evaluate both at enough points (${compared} of ${samples})` };
  }
  const where = vars.length === 0 ? 'as numbers' : `at ${compared} random points for ${vars.join(', ')}`;
  return { equivalent: true, layer: 'numeric', details: `equal ${where} (max relative error ${maxError.toExponential(1)}, tolerance ${tol})` };
}

/** Formats a complex value for details. */
function fmt(v: { re: number; im: number }): string {
  return v.im === 0 ? String(v.re) : `${v.re}${v.im >= 0 ? '+' : ''}${v.im}i`;
}
