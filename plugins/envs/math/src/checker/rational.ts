/**
 * Exact rational numbers on BigInt, and a parser for the numeric answer forms of (normalised) answers: integers,
 * decimals, fractions (`\frac{a}{b}`, `a/b`), mixed numbers (`2\frac{1}{2}`), percentages and scientific notation.
 */

/** An exact rational number n/d with d > 0 and gcd(|n|, d) = 1. Immutable. */
export class Rational {
  /** Numerator (carries the sign). */
  readonly n: bigint;
  /** Denominator, always positive. */
  readonly d: bigint;

  /** Builds n/d in lowest terms. Throws a RangeError when d is 0. */
  constructor(n: bigint, d: bigint = 1n) {
    if (d === 0n) throw new RangeError('Rational: zero denominator');
    if (d < 0n) {
      n = -n;
      d = -d;
    }
    const g = gcd(n < 0n ? -n : n, d);
    this.n = g > 1n ? n / g : n;
    this.d = g > 1n ? d / g : d;
  }

  /** Exact equality. */
  equals(other: Rational): boolean {
    return this.n === other.n && this.d === other.d;
  }
  /** this · other. */
  mul(other: Rational): Rational {
    return new Rational(this.n * other.n, this.d * other.d);
  }
  /** this + other. */
  add(other: Rational): Rational {
    return new Rational(this.n * other.d + other.n * this.d, this.d * other.d);
  }
  /** −this. */
  neg(): Rational {
    return new Rational(-this.n, this.d);
  }
  /** A JavaScript number (possibly rounded). */
  toNumber(): number {
    return Number(this.n) / Number(this.d);
  }
  /** `n` or `n/d`. */
  toString(): string {
    return this.d === 1n ? this.n.toString() : `${this.n}/${this.d}`;
  }
}

/** Greatest common divisor of two non-negative BigInts. */
export function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/** 10^k as a BigInt. */
function pow10(k: number): bigint {
  return 10n ** BigInt(k);
}

/** Parses an unsigned decimal such as `12`, `12.5`, `.5`, `12.` exactly; undefined otherwise. */
export function parseDecimal(text: string): Rational | undefined {
  const m = /^(\d*)(?:\.(\d*))?$/.exec(text);
  if (!m || (m[1] === '' && (m[2] ?? '') === '')) return undefined;
  const whole = m[1] === '' ? '0' : m[1]!;
  const frac = m[2] ?? '';
  return new Rational(BigInt(whole + frac), pow10(frac.length));
}

/** A signed decimal: optional `+`/`-` then {@link parseDecimal}. */
function parseSignedDecimal(text: string): Rational | undefined {
  const m = /^([+-]?)(.*)$/.exec(text)!;
  const v = parseDecimal(m[2]!);
  return v && m[1] === '-' ? v.neg() : v;
}

/** What {@link parseRational} found. */
export interface ParsedRational {
  /** The exact value (for a percentage, the number before the `%`). */
  readonly value: Rational;
  /** Whether the answer was written as a percentage (`50%`). */
  readonly percent: boolean;
  /** Which form it was written in, for details. */
  readonly form: 'integer' | 'decimal' | 'fraction' | 'mixed' | 'scientific';
}

/** Numbers inside fractions: signed decimals. */
const NUM = String.raw`[+-]?(?:\d+(?:\.\d*)?|\.\d+)`;

/**
 * Parses a NORMALISED answer (no spaces, no `$`) as an exact rational. Accepts integers, decimals, `\frac{a}{b}`,
 * `a/b`, mixed numbers `2\frac{1}{2}` (= 5/2), scientific notation (`1.5e3`, `1.5\times10^{3}`, `10^{-2}`) and a
 * trailing `%`. Undefined when the text is not such a number (or has a zero denominator).
 */
export function parseRational(text: string): ParsedRational | undefined {
  let s = text;
  let percent = false;
  if (s.endsWith('%')) {
    percent = true;
    s = s.slice(0, -1);
  }
  let sign = 1n;
  if (s.startsWith('-')) {
    sign = -1n;
    s = s.slice(1);
  } else if (s.startsWith('+')) s = s.slice(1);
  const signed = (v: Rational): Rational => (sign < 0n ? v.neg() : v);
  try {
    if (/^\d+$/.test(s)) return { value: signed(new Rational(BigInt(s))), percent, form: 'integer' };
    const dec = parseDecimal(s);
    if (dec) return { value: signed(dec), percent, form: 'decimal' };
    let m =
      new RegExp(String.raw`^\\frac\{(${NUM})\}\{(${NUM})\}$`).exec(s) ??
      new RegExp(String.raw`^(${NUM})/(${NUM})$`).exec(s);
    if (m) {
      const a = parseSignedDecimal(m[1]!);
      const b = parseSignedDecimal(m[2]!);
      if (!a || !b || b.n === 0n) return undefined;
      return { value: signed(a.mul(new Rational(b.d, b.n))), percent, form: 'fraction' };
    }
    m = /^(\d+)\\frac\{(\d+)\}\{(\d+)\}$/.exec(s);
    if (m) {
      const whole = BigInt(m[1]!);
      const den = BigInt(m[3]!);
      if (den === 0n) return undefined;
      return { value: signed(new Rational(whole * den + BigInt(m[2]!), den)), percent, form: 'mixed' };
    }
    m =
      /^(\d+(?:\.\d*)?|\.\d+)[eE]([+-]?\d+)$/.exec(s) ??
      /^(\d+(?:\.\d*)?|\.\d+)(?:\\times|\\cdot|\*|x)10\^(?:\{([+-]?\d+)\}|([+-]?\d))$/.exec(s) ??
      /^()10\^(?:\{([+-]?\d+)\}|([+-]?\d))$/.exec(s);
    if (m) {
      const mant = m[1] === '' ? new Rational(1n) : parseDecimal(m[1]!);
      const exp = Number(m[2] ?? m[3]);
      if (!mant || !Number.isFinite(exp) || Math.abs(exp) > 400) return undefined;
      const scale = exp >= 0 ? new Rational(pow10(exp)) : new Rational(1n, pow10(-exp));
      return { value: signed(mant.mul(scale)), percent, form: 'scientific' };
    }
  } catch {
    return undefined;
  }
  return undefined;
}
