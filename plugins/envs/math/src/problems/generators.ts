/**
 * Procedural problem generators with exact answers. Every generator draws its numbers from a seeded {@link Rng},
 * computes the answer exactly in TypeScript (BigInt rationals where needed) and ALSO emits a Python program that
 * computes the same answer independently from the problem's numbers (the tests run those programs to prove every
 * answer right; the coder oracle prints their result).
 */
import type { Rng } from '@troupe/kernel';
import { Rational } from '../checker/rational.js';
import type { Family, MathProblem } from './types.js';

/** A generator: the numbers come from `rng`; the result is a complete problem. */
export type Generator = (rng: Rng) => MathProblem;

const NAMES = [
  'Ava',
  'Ben',
  'Chloe',
  'Diego',
  'Emma',
  'Farah',
  'Gus',
  'Hana',
  'Ivan',
  'Jia',
  'Kofi',
  'Lena',
  'Mateo',
  'Nora',
  'Omar',
  'Priya',
];
const ITEMS = ['apples', 'stickers', 'marbles', 'pencils', 'cookies', 'stamps', 'shells', 'cards'];
const GOODS = [
  ['notebooks', 'stationery shop'],
  ['sandwiches', 'cafe'],
  ['tickets', 'cinema'],
  ['plants', 'garden centre'],
  ['books', 'bookshop'],
] as const;
const WORDS = [
  'BANANA',
  'LETTER',
  'APPLE',
  'COOKIE',
  'PEPPER',
  'BALLOON',
  'COFFEE',
  'SUCCESS',
  'TOMATO',
  'PUZZLE',
  'ABACUS',
  'LLAMA',
  'RADAR',
  'GAMMA',
  'ASSESS',
];

/** An integer uniformly drawn from [lo, hi]. */
function between(rng: Rng, lo: number, hi: number): number {
  return lo + rng.int(hi - lo + 1);
}
/** One element of a list. */
function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[rng.int(items.length)]!;
}

/** n! as a BigInt. */
function factorial(n: number): bigint {
  let f = 1n;
  for (let k = 2n; k <= BigInt(n); k++) f *= k;
  return f;
}
/** C(n, k) as a BigInt. */
function binomial(n: number, k: number): bigint {
  return factorial(n) / (factorial(k) * factorial(n - k));
}
/** a^b mod m with BigInt. */
function modPow(a: bigint, b: bigint, m: bigint): bigint {
  let r = 1n;
  let base = a % m;
  let e = b;
  while (e > 0n) {
    if (e & 1n) r = (r * base) % m;
    base = (base * base) % m;
    e >>= 1n;
  }
  return r;
}

/** `3x`, `-x`, `x` — a coefficient times a variable. */
function term(coefficient: number, variable: string, leading: boolean): string {
  const sign = coefficient < 0 ? (leading ? '-' : ' - ') : leading ? '' : ' + ';
  const abs = Math.abs(coefficient);
  return `${sign}${abs === 1 && variable ? '' : abs}${variable}`;
}

/** GSM8K-style arithmetic word problems (integer answers). */
export const arithmetic: Generator = (rng) => {
  const name = pick(rng, NAMES);
  const kind = rng.int(5);
  if (kind === 0) {
    const item = pick(rng, ITEMS);
    const a = between(rng, 3, 40);
    const b = between(rng, 2, 9);
    const c = between(rng, 3, 12);
    const d = between(rng, 1, a + b * c - 1);
    return {
      source: 'generated',
      family: 'arithmetic',
      question: `${name} has ${a} ${item}. ${name} buys ${b} packs with ${c} ${item} in each pack, then gives ${d} ${item} to a friend. How many ${item} does ${name} have now?`,
      answer: String(a + b * c - d),
      program: `a = ${a}\nb = ${b}\nc = ${c}\nd = ${d}\nprint(a + b * c - d)\n`,
    };
  }
  if (kind === 1) {
    const [goods, shop] = pick(rng, GOODS);
    const price = between(rng, 2, 15);
    const n = between(rng, 2, 9);
    const bill = [20, 50, 100, 200].find((x) => x >= price * n)!;
    return {
      source: 'generated',
      family: 'arithmetic',
      question: `A ${shop} sells ${goods} for $${price} each. ${name} buys ${n} ${goods} and pays with a $${bill} bill. How much change, in dollars, does ${name} get?`,
      answer: String(bill - price * n),
      program: `price = ${price}\ncount = ${n}\npaid = ${bill}\nprint(paid - price * count)\n`,
    };
  }
  if (kind === 2) {
    const p = between(rng, 5, 40);
    const q = between(rng, 1, 2 * p - 1);
    return {
      source: 'generated',
      family: 'arithmetic',
      question: `${name} reads ${p} pages on Monday and twice as many pages on Tuesday. On Wednesday ${name} reads ${q} fewer pages than on Tuesday. How many pages does ${name} read in the three days?`,
      answer: String(p + 2 * p + (2 * p - q)),
      program: `monday = ${p}\ntuesday = 2 * monday\nwednesday = tuesday - ${q}\nprint(monday + tuesday + wednesday)\n`,
    };
  }
  if (kind === 3) {
    const v = between(rng, 4, 12) * 10;
    const h = between(rng, 1, 5);
    const w = between(rng, 4, 12) * 10;
    const k = between(rng, 1, 4);
    return {
      source: 'generated',
      family: 'arithmetic',
      question: `A train travels at ${v} km per hour for ${h} hours, then at ${w} km per hour for ${k} hours. How many kilometres does it travel in total?`,
      answer: String(v * h + w * k),
      program: `print(${v} * ${h} + ${w} * ${k})\n`,
    };
  }
  const f = pick(rng, [2, 3, 4, 5]);
  const wage = between(rng, 8, 30);
  const hours = between(rng, 2, 8);
  const days = between(rng, 2, 6) * f;
  const total = wage * hours * days;
  return {
    source: 'generated',
    family: 'arithmetic',
    question: `${name} earns $${wage} per hour and works ${hours} hours a day for ${days} days. ${name} spends 1/${f} of the earnings on rent. How many dollars are left?`,
    answer: String(total - total / f),
    program: `earned = ${wage} * ${hours} * ${days}\nprint(earned - earned // ${f})\n`,
  };
};

/** Fraction arithmetic, answers in lowest terms. */
export const fractions: Generator = (rng) => {
  const a = between(rng, 1, 9);
  const b = between(rng, 2, 12);
  const c = between(rng, 1, 9);
  const d = between(rng, 2, 12);
  const op = pick(rng, ['+', '-', '\\times', '\\div'] as const);
  const x = new Rational(BigInt(a), BigInt(b));
  const y = new Rational(BigInt(c), BigInt(d));
  const value =
    op === '+' ? x.add(y) : op === '-' ? x.add(y.neg()) : op === '\\times' ? x.mul(y) : x.mul(new Rational(y.d, y.n));
  const py = op === '+' ? '+' : op === '-' ? '-' : op === '\\times' ? '*' : '/';
  return {
    source: 'generated',
    family: 'fractions',
    question: `Compute $\\frac{${a}}{${b}} ${op} \\frac{${c}}{${d}}$. Give the answer as a fraction in lowest terms (or an integer).`,
    answer: value.toString(),
    program: `from fractions import Fraction\nprint(Fraction(${a}, ${b}) ${py} Fraction(${c}, ${d}))\n`,
  };
};

/** Linear equations ax + b = cx + d (rational solutions). */
export const linear: Generator = (rng) => {
  let a = 0;
  let c = 0;
  while (a === c) {
    a = between(rng, -9, 9) || 1;
    c = between(rng, -9, 9);
  }
  const b = between(rng, -20, 20);
  const d = between(rng, -20, 20);
  const left = term(a, 'x', true) + (b === 0 ? '' : term(b, '', false));
  const right = (c === 0 ? '' : term(c, 'x', true)) + (d === 0 ? (c === 0 ? '0' : '') : term(d, '', c === 0));
  return {
    source: 'generated',
    family: 'linear',
    question: `Solve for $x$: $${left} = ${right}$. Give $x$ as an integer or a fraction in lowest terms.`,
    answer: new Rational(BigInt(d - b), BigInt(a - c)).toString(),
    program: `from fractions import Fraction\na, b, c, d = ${a}, ${b}, ${c}, ${d}\nprint(Fraction(d - b, a - c))\n`,
  };
};

/** Monic quadratics with distinct integer roots; asks for the larger or smaller root, or the sum of squares. */
export const quadratic: Generator = (rng) => {
  let r1 = 0;
  let r2 = 0;
  while (r1 === r2) {
    r1 = between(rng, -12, 12);
    r2 = between(rng, -12, 12);
  }
  const p = -(r1 + r2);
  const q = r1 * r2;
  const poly = `x^2${p === 0 ? '' : term(p, 'x', false)}${q === 0 ? '' : term(q, '', false)}`;
  const ask = rng.int(3);
  const what = ask === 0 ? 'the larger root' : ask === 1 ? 'the smaller root' : 'the sum of the squares of the roots';
  const answer = ask === 0 ? Math.max(r1, r2) : ask === 1 ? Math.min(r1, r2) : r1 * r1 + r2 * r2;
  const reduce = ask === 0 ? 'max(roots)' : ask === 1 ? 'min(roots)' : 'sum(r * r for r in roots)';
  return {
    source: 'generated',
    family: 'quadratic',
    question: `The equation $${poly} = 0$ has two integer roots. What is ${what}?`,
    answer: String(answer),
    program: `p, q = ${p}, ${q}\nroots = [x for x in range(-200, 201) if x * x + p * x + q == 0]\nprint(${reduce})\n`,
  };
};

/** Counting: committees, word arrangements, inclusion–exclusion, line-ups with a constraint. */
export const counting: Generator = (rng) => {
  const kind = rng.int(4);
  if (kind === 0) {
    const n = between(rng, 5, 15);
    const k = between(rng, 2, Math.min(6, n - 1));
    return {
      source: 'generated',
      family: 'counting',
      question: `In how many ways can a committee of ${k} people be chosen from a group of ${n} people?`,
      answer: binomial(n, k).toString(),
      program: `import itertools\nprint(sum(1 for _ in itertools.combinations(range(${n}), ${k})))\n`,
    };
  }
  if (kind === 1) {
    const word = pick(rng, WORDS);
    const counts = new Map<string, number>();
    for (const ch of word) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    let value = factorial(word.length);
    for (const c of counts.values()) value /= factorial(c);
    return {
      source: 'generated',
      family: 'counting',
      question: `How many distinct arrangements of the letters of the word ${word} are there?`,
      answer: value.toString(),
      program: `import itertools\nprint(len(set(itertools.permutations('${word}'))))\n`,
    };
  }
  if (kind === 2) {
    const n = between(rng, 30, 300);
    const a = between(rng, 2, 9);
    let b = between(rng, 2, 9);
    if (b === a) b = a + 1;
    const lcm = (a * b) / gcdNumber(a, b);
    const value = Math.floor(n / a) + Math.floor(n / b) - Math.floor(n / lcm);
    return {
      source: 'generated',
      family: 'counting',
      question: `How many positive integers less than or equal to ${n} are divisible by ${a} or by ${b}?`,
      answer: String(value),
      program: `print(sum(1 for k in range(1, ${n} + 1) if k % ${a} == 0 or k % ${b} == 0))\n`,
    };
  }
  const n = between(rng, 4, 7);
  return {
    source: 'generated',
    family: 'counting',
    question: `${n} friends stand in a line for a photo. Two of them, ${NAMES[0]} and ${NAMES[1]}, insist on standing next to each other. How many different line-ups are possible?`,
    answer: (2n * factorial(n - 1)).toString(),
    program: `import itertools\nprint(sum(1 for p in itertools.permutations(range(${n})) if abs(p.index(0) - p.index(1)) == 1))\n`,
  };
};

/** gcd of two positive numbers. */
function gcdNumber(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** Modular arithmetic: remainders of powers and of sums. */
export const modular: Generator = (rng) => {
  if (rng.int(2) === 0) {
    const a = between(rng, 2, 20);
    const b = between(rng, 10, 200);
    const m = between(rng, 3, 13);
    return {
      source: 'generated',
      family: 'modular',
      question: `What is the remainder when $${a}^{${b}}$ is divided by ${m}?`,
      answer: modPow(BigInt(a), BigInt(b), BigInt(m)).toString(),
      program: `print((${a} ** ${b}) % ${m})\n`,
    };
  }
  const n = between(rng, 20, 500);
  const m = between(rng, 3, 17);
  return {
    source: 'generated',
    family: 'modular',
    question: `What is the remainder when $1 + 2 + 3 + \\cdots + ${n}$ is divided by ${m}?`,
    answer: String(((n * (n + 1)) / 2) % m),
    program: `total = 0\nfor k in range(1, ${n} + 1):\n    total += k\nprint(total % ${m})\n`,
  };
};

/** Sums of arithmetic and geometric sequences and of squares. */
export const sequences: Generator = (rng) => {
  const kind = rng.int(3);
  if (kind === 0) {
    const a = between(rng, -10, 20);
    const d = between(rng, 1, 9) * (rng.int(4) === 0 ? -1 : 1);
    const n = between(rng, 5, 40);
    return {
      source: 'generated',
      family: 'sequences',
      question: `What is the sum of the first ${n} terms of the arithmetic sequence ${a}, ${a + d}, ${a + 2 * d}, ...?`,
      answer: String((n * (2 * a + (n - 1) * d)) / 2),
      program: `a, d, n = ${a}, ${d}, ${n}\nprint(sum(a + k * d for k in range(n)))\n`,
    };
  }
  if (kind === 1) {
    const a = between(rng, 1, 5);
    const r = between(rng, 2, 4);
    const n = between(rng, 3, 10);
    let sum = 0n;
    let t = BigInt(a);
    for (let k = 0; k < n; k++) {
      sum += t;
      t *= BigInt(r);
    }
    return {
      source: 'generated',
      family: 'sequences',
      question: `What is the sum of the first ${n} terms of the geometric sequence ${a}, ${a * r}, ${a * r * r}, ...?`,
      answer: sum.toString(),
      program: `a, r, n = ${a}, ${r}, ${n}\nprint(sum(a * r ** k for k in range(n)))\n`,
    };
  }
  const n = between(rng, 5, 60);
  return {
    source: 'generated',
    family: 'sequences',
    question: `Compute $1^2 + 2^2 + 3^2 + \\cdots + ${n}^2$.`,
    answer: String((n * (n + 1) * (2 * n + 1)) / 6),
    program: `print(sum(k * k for k in range(1, ${n} + 1)))\n`,
  };
};

/** The generator of each family. */
export const GENERATORS: Readonly<Record<Family, Generator>> = {
  arithmetic,
  fractions,
  linear,
  quadratic,
  counting,
  modular,
  sequences,
};
