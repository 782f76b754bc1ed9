#!/usr/bin/env node
// Builds data/problems.jsonl, the problem set the project writes itself.
//
// Every problem has a statement, a Python reference solution and golden tests. The EXPECTED outputs are computed
// here by an independent JavaScript implementation (`solve`), never by the Python reference, so the data-integrity
// test (every reference passes every golden test in the sandbox) checks two independent implementations against
// each other. Test inputs are hand-written edge cases plus a few drawn from a fixed-seed generator, so the file is
// byte-for-byte reproducible: `node scripts/build-problems.mjs` (add `--check` to verify the committed file).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** sfc32, seeded: deterministic test inputs. */
function rng(seed) {
  let a = 0x9e3779b9,
    b = 0x243f6a88,
    c = 0xb7e15162,
    d = seed >>> 0;
  const next = () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    const r = (t + d) | 0;
    c = (c + r) | 0;
    return (r >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  return { int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)), pick: (xs) => xs[Math.floor(next() * xs.length)] };
}
const R = rng(20261130);
const ints = (n, lo, hi) => Array.from({ length: n }, () => R.int(lo, hi));
const word = (lo, hi, alphabet = 'abcdefghijklmnopqrstuvwxyz') =>
  Array.from({ length: R.int(lo, hi) }, () => R.pick([...alphabet])).join('');
const lines = (text) => text.split('\n');
const toks = (text) => text.split(/\s+/).filter(Boolean);
const fmt6 = (x) => (Math.abs(x) < 5e-7 ? 0 : x).toFixed(6);

/** @type {{id: string, question: string, reference: string, inputs: string[], solve: (input: string) => string, tolerance?: number}[]} */
const problems = [
  {
    id: 'sum-of-two',
    question: `Read two integers a and b (|a|, |b| <= 10^18) separated by a space and print their sum.

Input: one line "a b".
Output: one line with a + b.

Example
Input:
2 3
Output:
5`,
    reference: `a, b = map(int, input().split())
print(a + b)
`,
    inputs: [
      '2 3',
      '-5 5',
      '0 0',
      '1000000000000000000 1000000000000000000',
      '-7 -8',
      `${R.int(-1e6, 1e6)} ${R.int(-1e6, 1e6)}`,
    ],
    solve: (s) => {
      const [a, b] = toks(s).map(BigInt);
      return `${a + b}`;
    },
  },
  {
    id: 'reverse-string',
    question: `Read one line containing a string s (1 <= |s| <= 1000, no spaces) and print it reversed.

Example
Input:
hello
Output:
olleh`,
    reference: `s = input().strip()
print(s[::-1])
`,
    inputs: ['hello', 'a', 'racecar', 'ab', 'Troupe2026', word(20, 40)],
    solve: (s) => [...s.trim()].reverse().join(''),
  },
  {
    id: 'count-vowels',
    question: `Read one line of text (letters, digits and spaces, at most 1000 characters) and print how many vowels it contains.
The vowels are a, e, i, o, u in either case.

Example
Input:
Hello World
Output:
3`,
    reference: `s = input()
print(sum(1 for ch in s if ch.lower() in 'aeiou'))
`,
    inputs: [
      'Hello World',
      'rhythm',
      'AEIOU aeiou',
      'x',
      'Programming Is Fun 123',
      `${word(5, 10)} ${word(5, 10)} ${word(5, 10)}`,
    ],
    solve: (s) => String([...s].filter((c) => 'aeiouAEIOU'.includes(c)).length),
  },
  {
    id: 'palindrome-check',
    question: `Read a string s (1 <= |s| <= 1000) consisting of lowercase letters. Print YES if it reads the same forwards and
backwards, otherwise NO.

Example
Input:
level
Output:
YES`,
    reference: `s = input().strip()
print("YES" if s == s[::-1] else "NO")
`,
    inputs: ['level', 'abca', 'a', 'ab', 'abba', 'abcdedcba', 'abcdedcbb'],
    solve: (s) => {
      const t = s.trim();
      return [...t].reverse().join('') === t ? 'YES' : 'NO';
    },
  },
  {
    id: 'max-subarray-sum',
    question: `Given an array of n integers (1 <= n <= 10^5, |a_i| <= 10^9), print the largest sum of a non-empty contiguous
subarray.

Input: the first line holds n, the second line the n integers.
Output: the maximum subarray sum.

Example
Input:
5
-2 1 -3 4 -1
Output:
4`,
    reference: `import sys
data = sys.stdin.read().split()
n = int(data[0])
a = list(map(int, data[1:1 + n]))
best = cur = a[0]
for x in a[1:]:
    cur = max(x, cur + x)
    best = max(best, cur)
print(best)
`,
    inputs: [
      '5\n-2 1 -3 4 -1',
      '1\n-7',
      '3\n-1 -2 -3',
      '4\n1 2 3 4',
      '8\n2 -1 2 -1 2 -10 3 3',
      (() => {
        const a = ints(30, -50, 50);
        return `30\n${a.join(' ')}`;
      })(),
    ],
    solve: (s) => {
      const a = toks(s).slice(1).map(Number);
      let best = -Infinity;
      for (let i = 0; i < a.length; i++) {
        let sum = 0;
        for (let j = i; j < a.length; j++) {
          sum += a[j];
          best = Math.max(best, sum);
        }
      }
      return String(best);
    },
  },
  {
    id: 'fizzbuzz',
    question: `Read an integer n (1 <= n <= 1000). For each i from 1 to n print, on its own line, "FizzBuzz" if i is divisible
by 15, "Fizz" if divisible by 3, "Buzz" if divisible by 5, and i itself otherwise.

Example
Input:
5
Output:
1
2
Fizz
4
Buzz`,
    reference: `n = int(input())
for i in range(1, n + 1):
    if i % 15 == 0:
        print("FizzBuzz")
    elif i % 3 == 0:
        print("Fizz")
    elif i % 5 == 0:
        print("Buzz")
    else:
        print(i)
`,
    inputs: ['5', '1', '15', '16', '30', String(R.int(40, 60))],
    solve: (s) => {
      const n = Number(s.trim());
      const out = [];
      for (let i = 1; i <= n; i++)
        out.push(i % 3 === 0 && i % 5 === 0 ? 'FizzBuzz' : i % 3 === 0 ? 'Fizz' : i % 5 === 0 ? 'Buzz' : String(i));
      return out.join('\n');
    },
  },
  {
    id: 'gcd-lcm',
    question: `Read two positive integers a and b (1 <= a, b <= 10^9). Print their greatest common divisor and their least
common multiple, separated by a space.

Example
Input:
12 18
Output:
6 36`,
    reference: `import math
a, b = map(int, input().split())
g = math.gcd(a, b)
print(g, a // g * b)
`,
    inputs: ['12 18', '1 1', '7 13', '1000000000 999999999', '100 10', `${R.int(1, 1e5)} ${R.int(1, 1e5)}`],
    solve: (s) => {
      const [a, b] = toks(s).map(BigInt);
      let x = a,
        y = b;
      while (y) [x, y] = [y, x % y];
      return `${x} ${(a / x) * b}`;
    },
  },
  {
    id: 'prime-check',
    question: `Read an integer n (1 <= n <= 10^12). Print YES if n is prime and NO otherwise.

Example
Input:
7
Output:
YES`,
    reference: `n = int(input())
def is_prime(n):
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    i = 3
    while i * i <= n:
        if n % i == 0:
            return False
        i += 2
    return True
print("YES" if is_prime(n) else "NO")
`,
    inputs: ['7', '1', '2', '9', '999983', '1000000000039', '1000000000000', '25'],
    solve: (s) => {
      const n = Number(s.trim());
      if (n < 2) return 'NO';
      for (let d = 2; d * d <= n; d++) if (n % d === 0) return 'NO';
      return 'YES';
    },
  },
  {
    id: 'count-primes',
    question: `Read an integer n (0 <= n <= 10^6) and print how many prime numbers are less than or equal to n.

Example
Input:
10
Output:
4`,
    reference: `n = int(input())
if n < 2:
    print(0)
else:
    sieve = bytearray([1]) * (n + 1)
    sieve[0] = sieve[1] = 0
    i = 2
    while i * i <= n:
        if sieve[i]:
            sieve[i * i::i] = bytearray(len(range(i * i, n + 1, i)))
        i += 1
    print(sum(sieve))
`,
    inputs: ['10', '0', '1', '2', '100', '1000000', String(R.int(1000, 5000))],
    solve: (s) => {
      const n = Number(s.trim());
      if (n < 2) return '0';
      const comp = new Uint8Array(n + 1);
      let count = 0;
      for (let i = 2; i <= n; i++) {
        if (!comp[i]) {
          count++;
          for (let j = i * i; j <= n; j += i) comp[j] = 1;
        }
      }
      return String(count);
    },
  },
  {
    id: 'fibonacci-mod',
    question: `The Fibonacci numbers are F(0) = 0, F(1) = 1 and F(k) = F(k-1) + F(k-2). Read n (0 <= n <= 10^5) and print
F(n) modulo 1000000007.

Example
Input:
10
Output:
55`,
    reference: `n = int(input())
a, b = 0, 1
for _ in range(n):
    a, b = b, (a + b) % 1000000007
print(a)
`,
    inputs: ['10', '0', '1', '2', '50', '100000', String(R.int(200, 900))],
    solve: (s) => {
      const n = Number(s.trim());
      const M = 1000000007n;
      let a = 0n,
        b = 1n;
      for (let i = 0; i < n; i++) [a, b] = [b, (a + b) % M];
      return String(a);
    },
  },
  {
    id: 'most-frequent-word',
    question: `Read one line of lowercase words separated by single spaces (at most 1000 words). Print the word that occurs most
often and its count, separated by a space. If several words tie, print the lexicographically smallest one.

Example
Input:
the cat and the hat
Output:
the 2`,
    reference: `from collections import Counter
words = input().split()
c = Counter(words)
best = min(c.items(), key=lambda kv: (-kv[1], kv[0]))
print(best[0], best[1])
`,
    inputs: [
      'the cat and the hat',
      'a',
      'b a',
      'x y x y z',
      'one two three two three three',
      Array.from({ length: 40 }, () => R.pick(['red', 'green', 'blue', 'cyan', 'teal'])).join(' '),
    ],
    solve: (s) => {
      const m = new Map();
      for (const w of toks(s)) m.set(w, (m.get(w) ?? 0) + 1);
      let bw = null,
        bc = 0;
      for (const [w, c] of m)
        if (c > bc || (c === bc && w < bw)) {
          bw = w;
          bc = c;
        }
      return `${bw} ${bc}`;
    },
  },
  {
    id: 'anagram-check',
    question: `Read two lowercase words, one per line (each 1..1000 letters). Print YES if they are anagrams of each other
(the same letters with the same multiplicities), otherwise NO.

Example
Input:
listen
silent
Output:
YES`,
    reference: `a = input().strip()
b = input().strip()
print("YES" if sorted(a) == sorted(b) else "NO")
`,
    inputs: ['listen\nsilent', 'abc\nabd', 'a\na', 'aab\nabb', 'dusty\nstudy', 'ab\nabc'],
    solve: (s) => {
      const [a, b] = lines(s).map((x) => [...x.trim()].sort().join(''));
      return a === b ? 'YES' : 'NO';
    },
  },
  {
    id: 'sort-numbers',
    question: `Read n (1 <= n <= 10^5) and then n integers. Print them in non-decreasing order, separated by spaces.

Example
Input:
4
3 1 2 1
Output:
1 1 2 3`,
    reference: `import sys
data = sys.stdin.read().split()
n = int(data[0])
a = sorted(map(int, data[1:1 + n]))
print(" ".join(map(str, a)))
`,
    inputs: [
      '4\n3 1 2 1',
      '1\n5',
      '5\n-1 -5 3 0 -5',
      '3\n1000000000 -1000000000 0',
      (() => {
        const a = ints(25, -100, 100);
        return `25\n${a.join(' ')}`;
      })(),
    ],
    solve: (s) =>
      toks(s)
        .slice(1)
        .map(Number)
        .sort((x, y) => x - y)
        .join(' '),
  },
  {
    id: 'second-largest',
    question: `Read n (1 <= n <= 10^5) and n integers. Print the second largest DISTINCT value, or -1 if there are fewer than
two distinct values. (Values are between 0 and 10^9.)

Example
Input:
5
4 1 4 3 2
Output:
3`,
    reference: `import sys
data = sys.stdin.read().split()
n = int(data[0])
vals = sorted(set(map(int, data[1:1 + n])), reverse=True)
print(vals[1] if len(vals) >= 2 else -1)
`,
    inputs: [
      '5\n4 1 4 3 2',
      '1\n7',
      '3\n5 5 5',
      '2\n1 2',
      '6\n0 1000000000 999999999 0 1000000000 5',
      (() => {
        const a = ints(20, 0, 30);
        return `20\n${a.join(' ')}`;
      })(),
    ],
    solve: (s) => {
      const v = [...new Set(toks(s).slice(1).map(Number))].sort((x, y) => y - x);
      return String(v.length >= 2 ? v[1] : -1);
    },
  },
  {
    id: 'matrix-transpose',
    question: `Read r and c (1 <= r, c <= 100) and then an r x c matrix of integers, one row per line. Print its transpose
(c rows of r integers each), one row per line with values separated by single spaces.

Example
Input:
2 3
1 2 3
4 5 6
Output:
1 4
2 5
3 6`,
    reference: `r, c = map(int, input().split())
m = [input().split() for _ in range(r)]
for j in range(c):
    print(" ".join(m[i][j] for i in range(r)))
`,
    inputs: [
      '2 3\n1 2 3\n4 5 6',
      '1 1\n9',
      '1 4\n1 2 3 4',
      '3 1\n7\n8\n9',
      (() => {
        const rows = Array.from({ length: 4 }, () => ints(5, -9, 9).join(' '));
        return `4 5\n${rows.join('\n')}`;
      })(),
    ],
    solve: (s) => {
      const ls = lines(s);
      const [r, c] = toks(ls[0]).map(Number);
      const m = ls.slice(1, 1 + r).map(toks);
      const out = [];
      for (let j = 0; j < c; j++) out.push(m.map((row) => row[j]).join(' '));
      return out.join('\n');
    },
  },
  {
    id: 'balanced-brackets',
    question: `Read a string of brackets ()[]{} (1 <= length <= 10^5). Print YES if the brackets are balanced and properly
nested, otherwise NO.

Example
Input:
{[()]}
Output:
YES`,
    reference: `s = input().strip()
pairs = {')': '(', ']': '[', '}': '{'}
stack = []
ok = True
for ch in s:
    if ch in '([{':
        stack.append(ch)
    else:
        if not stack or stack[-1] != pairs[ch]:
            ok = False
            break
        stack.pop()
print("YES" if ok and not stack else "NO")
`,
    inputs: ['{[()]}', '([)]', '(', ')', '()[]{}', '((((()))))', '{[}'],
    solve: (s) => {
      let t = s.trim();
      let prev = null;
      while (t !== prev) {
        prev = t;
        t = t.replaceAll('()', '').replaceAll('[]', '').replaceAll('{}', '');
      }
      return t === '' ? 'YES' : 'NO';
    },
  },
  {
    id: 'run-length-encoding',
    question: `Read a string of lowercase letters (1 <= length <= 10^5). Replace every maximal run of equal letters by the letter
followed by the run length, and print the result.

Example
Input:
aaabcc
Output:
a3b1c2`,
    reference: `s = input().strip()
out = []
i = 0
while i < len(s):
    j = i
    while j < len(s) and s[j] == s[i]:
        j += 1
    out.append(s[i] + str(j - i))
    i = j
print("".join(out))
`,
    inputs: ['aaabcc', 'a', 'abc', 'zzzzzzzzzzzz', 'aabbaa', word(20, 30, 'ab')],
    solve: (s) => s.trim().replace(/(.)\1*/g, (run) => `${run[0]}${run.length}`),
  },
  {
    id: 'to-binary',
    question: `Read a non-negative integer n (0 <= n <= 10^18) and print its binary representation without leading zeros
(print 0 for n = 0).

Example
Input:
10
Output:
1010`,
    reference: `n = int(input())
print(bin(n)[2:])
`,
    inputs: ['10', '0', '1', '255', '1000000000000000000', String(R.int(1e5, 1e9))],
    solve: (s) => BigInt(s.trim()).toString(2),
  },
  {
    id: 'digital-root',
    question: `Read a non-negative integer n given as a decimal string of at most 1000 digits. Repeatedly replace it by the sum of
its digits until a single digit remains, and print that digit.

Example
Input:
9875
Output:
2`,
    reference: `s = input().strip()
while len(s) > 1:
    s = str(sum(int(c) for c in s))
print(s)
`,
    inputs: [
      '9875',
      '0',
      '5',
      '99999999999999999999',
      '123456789',
      Array.from({ length: 60 }, () => R.int(0, 9))
        .join('')
        .replace(/^0+/, '1'),
    ],
    solve: (s) => {
      let t = s.trim();
      while (t.length > 1) t = String([...t].reduce((x, c) => x + Number(c), 0));
      return t;
    },
  },
  {
    id: 'longest-common-prefix',
    question: `Read n (1 <= n <= 1000) and then n lowercase words, one per line. Print their longest common prefix, or the
single character - if it is empty.

Example
Input:
3
flower
flow
flight
Output:
fl`,
    reference: `n = int(input())
words = [input().strip() for _ in range(n)]
prefix = words[0]
for w in words[1:]:
    while not w.startswith(prefix):
        prefix = prefix[:-1]
print(prefix if prefix else "-")
`,
    inputs: [
      '3\nflower\nflow\nflight',
      '1\nalone',
      '2\ndog\ncat',
      '3\nabc\nabc\nabc',
      '4\ninterview\ninternet\ninterval\ninternal',
      '2\na\nab',
    ],
    solve: (s) => {
      const ls = lines(s);
      const n = Number(ls[0]);
      const w = ls.slice(1, 1 + n).map((x) => x.trim());
      let k = 0;
      while (k < w[0].length && w.every((x) => x[k] === w[0][k])) k++;
      return k ? w[0].slice(0, k) : '-';
    },
  },
  {
    id: 'pair-sum-count',
    question: `Read n and k (1 <= n <= 10^5, |k| <= 10^9) and then n integers a_1..a_n (|a_i| <= 10^9). Print the number of
pairs (i, j) with i < j and a_i + a_j = k.

Example
Input:
4 5
1 4 2 3
Output:
2`,
    reference: `import sys
from collections import Counter
data = sys.stdin.read().split()
n, k = int(data[0]), int(data[1])
seen = Counter()
count = 0
for x in map(int, data[2:2 + n]):
    count += seen[k - x]
    seen[x] += 1
print(count)
`,
    inputs: [
      '4 5\n1 4 2 3',
      '1 2\n1',
      '4 2\n1 1 1 1',
      '5 0\n-1 1 -1 1 0',
      '3 10\n1 2 3',
      (() => {
        const a = ints(30, 0, 10);
        return `30 10\n${a.join(' ')}`;
      })(),
    ],
    solve: (s) => {
      const t = toks(s).map(Number);
      const [n, k] = t;
      const a = t.slice(2, 2 + n);
      let c = 0;
      for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) if (a[i] + a[j] === k) c++;
      return String(c);
    },
  },
  {
    id: 'mean-value',
    question: `Read n (1 <= n <= 10^5) and then n real numbers. Print their arithmetic mean. Answers within an absolute or
relative error of 1e-6 are accepted.

Example
Input:
3
1 2 4
Output:
2.333333`,
    reference: `import sys
data = sys.stdin.read().split()
n = int(data[0])
xs = list(map(float, data[1:1 + n]))
print("%.6f" % (sum(xs) / n))
`,
    inputs: [
      '3\n1 2 4',
      '1\n-5',
      '2\n0.5 0.25',
      '4\n1000000 -1000000 3 4',
      (() => {
        const a = ints(12, -1000, 1000);
        return `12\n${a.join(' ')}`;
      })(),
    ],
    solve: (s) => {
      const x = toks(s).slice(1).map(Number);
      return fmt6(x.reduce((p, q) => p + q, 0) / x.length);
    },
    tolerance: 1e-6,
  },
  {
    id: 'circle-area',
    question: `Read the radius r of a circle (0 <= r <= 10^4, a real number) and print its area pi * r^2. Answers within an
absolute or relative error of 1e-6 are accepted.

Example
Input:
1
Output:
3.141593`,
    reference: `import math
r = float(input())
print("%.6f" % (math.pi * r * r))
`,
    inputs: ['1', '0', '2.5', '10000', '0.1', String(R.int(1, 500))],
    solve: (s) => {
      const r = Number(s.trim());
      return fmt6(Math.PI * r * r);
    },
    tolerance: 1e-6,
  },
  {
    id: 'caesar-cipher',
    question: `Read an integer k (0 <= k <= 1000) on the first line and a line of text on the second line. Shift every letter
k places forward in the alphabet (wrapping around, keeping case) and leave every other character unchanged. Print the result.

Example
Input:
3
Hello, World!
Output:
Khoor, Zruog!`,
    reference: `k = int(input()) % 26
s = input()
out = []
for ch in s:
    if 'a' <= ch <= 'z':
        out.append(chr((ord(ch) - 97 + k) % 26 + 97))
    elif 'A' <= ch <= 'Z':
        out.append(chr((ord(ch) - 65 + k) % 26 + 65))
    else:
        out.append(ch)
print("".join(out))
`,
    inputs: [
      '3\nHello, World!',
      '0\nabc',
      '26\nxyz',
      '1\nzZ',
      '1000\nThe quick brown fox.',
      `${R.int(1, 25)}\n${word(10, 20)}`,
    ],
    solve: (s) => {
      const ls = lines(s);
      const k = Number(ls[0]) % 26;
      return [...ls[1]]
        .map((c) => {
          const code = c.charCodeAt(0);
          if (code >= 97 && code <= 122) return String.fromCharCode(((code - 97 + k) % 26) + 97);
          if (code >= 65 && code <= 90) return String.fromCharCode(((code - 65 + k) % 26) + 65);
          return c;
        })
        .join('');
    },
  },
  {
    id: 'count-inversions',
    question: `Read n (1 <= n <= 10^5) and then n integers. Print the number of inversions: pairs (i, j) with i < j and
a_i > a_j.

Example
Input:
5
2 4 1 3 5
Output:
3`,
    reference: `import sys
sys.setrecursionlimit(10000)
data = sys.stdin.read().split()
n = int(data[0])
a = list(map(int, data[1:1 + n]))
def sort_count(xs):
    if len(xs) <= 1:
        return xs, 0
    mid = len(xs) // 2
    left, cl = sort_count(xs[:mid])
    right, cr = sort_count(xs[mid:])
    merged = []
    i = j = 0
    count = cl + cr
    while i < len(left) and j < len(right):
        if left[i] <= right[j]:
            merged.append(left[i]); i += 1
        else:
            merged.append(right[j]); j += 1
            count += len(left) - i
    merged.extend(left[i:]); merged.extend(right[j:])
    return merged, count
print(sort_count(a)[1])
`,
    inputs: [
      '5\n2 4 1 3 5',
      '1\n1',
      '3\n3 2 1',
      '4\n1 1 1 1',
      '6\n1 2 3 4 5 6',
      (() => {
        const a = ints(40, 0, 50);
        return `40\n${a.join(' ')}`;
      })(),
    ],
    solve: (s) => {
      const a = toks(s).slice(1).map(Number);
      let c = 0;
      for (let i = 0; i < a.length; i++) for (let j = i + 1; j < a.length; j++) if (a[i] > a[j]) c++;
      return String(c);
    },
  },
  {
    id: 'longest-increasing-subsequence',
    question: `Read n (1 <= n <= 10^5) and then n integers. Print the length of the longest STRICTLY increasing subsequence.

Example
Input:
6
10 9 2 5 3 7
Output:
3`,
    reference: `import sys
from bisect import bisect_left
data = sys.stdin.read().split()
n = int(data[0])
tails = []
for x in map(int, data[1:1 + n]):
    i = bisect_left(tails, x)
    if i == len(tails):
        tails.append(x)
    else:
        tails[i] = x
print(len(tails))
`,
    inputs: [
      '6\n10 9 2 5 3 7',
      '1\n4',
      '4\n2 2 2 2',
      '5\n1 2 3 4 5',
      '5\n5 4 3 2 1',
      (() => {
        const a = ints(30, 0, 40);
        return `30\n${a.join(' ')}`;
      })(),
    ],
    solve: (s) => {
      const a = toks(s).slice(1).map(Number);
      const best = a.map(() => 1);
      for (let i = 0; i < a.length; i++)
        for (let j = 0; j < i; j++) if (a[j] < a[i]) best[i] = Math.max(best[i], best[j] + 1);
      return String(Math.max(...best));
    },
  },
  {
    id: 'grid-paths',
    question: `A grid has r rows and c columns (1 <= r, c <= 100); '.' is free and '#' is blocked. Starting at the top-left cell
you may move only right or down. Print the number of paths to the bottom-right cell modulo 1000000007 (0 if either
corner is blocked).

Input: "r c" then r lines of c characters.

Example
Input:
3 3
...
.#.
...
Output:
2`,
    reference: `MOD = 1000000007
r, c = map(int, input().split())
g = [input().strip() for _ in range(r)]
dp = [[0] * c for _ in range(r)]
for i in range(r):
    for j in range(c):
        if g[i][j] == '#':
            continue
        if i == 0 and j == 0:
            dp[i][j] = 1
            continue
        v = 0
        if i > 0:
            v += dp[i - 1][j]
        if j > 0:
            v += dp[i][j - 1]
        dp[i][j] = v % MOD
print(dp[r - 1][c - 1])
`,
    inputs: [
      '3 3\n...\n.#.\n...',
      '1 1\n.',
      '1 1\n#',
      '2 2\n.#\n#.',
      '3 4\n....\n....\n....',
      (() => {
        const g = Array.from({ length: 6 }, () =>
          Array.from({ length: 7 }, () => (R.int(0, 5) === 0 ? '#' : '.')).join(''),
        );
        g[0] = `.${g[0].slice(1)}`;
        g[5] = `${g[5].slice(0, 6)}.`;
        return `6 7\n${g.join('\n')}`;
      })(),
      `40 40\n${Array.from({ length: 40 }, () => '.'.repeat(40)).join('\n')}`,
    ],
    solve: (s) => {
      const ls = lines(s);
      const [r, c] = toks(ls[0]).map(Number);
      const g = ls.slice(1, 1 + r);
      const M = 1000000007n;
      const dp = Array.from({ length: r }, () => Array(c).fill(0n));
      for (let i = 0; i < r; i++)
        for (let j = 0; j < c; j++) {
          if (g[i][j] === '#') continue;
          dp[i][j] = i === 0 && j === 0 ? 1n : ((i > 0 ? dp[i - 1][j] : 0n) + (j > 0 ? dp[i][j - 1] : 0n)) % M;
        }
      return String(dp[r - 1][c - 1]);
    },
  },
  {
    id: 'coin-change',
    question: `Read n and amount (1 <= n <= 50, 0 <= amount <= 10^4) and then n positive coin values (at most 10^4 each).
Print the minimum number of coins (each value usable any number of times) that add up to exactly amount, or -1 if it
is impossible.

Example
Input:
3 11
1 2 5
Output:
3`,
    reference: `import sys
data = sys.stdin.read().split()
n, amount = int(data[0]), int(data[1])
coins = list(map(int, data[2:2 + n]))
INF = float('inf')
dp = [0] + [INF] * amount
for x in range(1, amount + 1):
    for c in coins:
        if c <= x and dp[x - c] + 1 < dp[x]:
            dp[x] = dp[x - c] + 1
print(dp[amount] if dp[amount] != INF else -1)
`,
    inputs: [
      '3 11\n1 2 5',
      '1 3\n2',
      '1 0\n7',
      '3 6\n1 3 4',
      '2 10000\n7 3',
      `4 ${R.int(50, 300)}\n${ints(4, 2, 30).join(' ')}`,
    ],
    solve: (s) => {
      const t = toks(s).map(Number);
      const [n, amount] = t;
      const coins = t.slice(2, 2 + n);
      // BFS over amounts: an independent formulation of the same minimum.
      const dist = new Map([[0, 0]]);
      let frontier = [0];
      while (frontier.length && !dist.has(amount)) {
        const next = [];
        for (const v of frontier)
          for (const c of coins) {
            const w = v + c;
            if (w <= amount && !dist.has(w)) {
              dist.set(w, dist.get(v) + 1);
              next.push(w);
            }
          }
        frontier = next;
      }
      return String(dist.has(amount) ? dist.get(amount) : -1);
    },
  },
  {
    id: 'roman-to-integer',
    question: `Read a Roman numeral (I, V, X, L, C, D, M; value between 1 and 3999, in standard subtractive form) and print its
value.

Example
Input:
MCMXCIV
Output:
1994`,
    reference: `s = input().strip()
v = {'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100, 'D': 500, 'M': 1000}
total = 0
for i, ch in enumerate(s):
    if i + 1 < len(s) and v[ch] < v[s[i + 1]]:
        total -= v[ch]
    else:
        total += v[ch]
print(total)
`,
    inputs: ['MCMXCIV', 'I', 'IV', 'LVIII', 'MMMCMXCIX', 'XLII', 'CDXLIV'],
    solve: (s) => {
      // Greedy match of the standard symbols, longest first: independent of the reference's look-ahead rule.
      const table = [
        ['M', 1000],
        ['CM', 900],
        ['D', 500],
        ['CD', 400],
        ['C', 100],
        ['XC', 90],
        ['L', 50],
        ['XL', 40],
        ['X', 10],
        ['IX', 9],
        ['V', 5],
        ['IV', 4],
        ['I', 1],
      ];
      let t = s.trim();
      let total = 0;
      for (const [sym, val] of table)
        while (t.startsWith(sym)) {
          total += val;
          t = t.slice(sym.length);
        }
      return String(total);
    },
  },
  {
    id: 'unique-in-order',
    question: `Read n (1 <= n <= 10^5) and then n integers. Print the distinct values in the order of their first appearance,
separated by spaces.

Example
Input:
6
3 1 3 2 1 5
Output:
3 1 2 5`,
    reference: `import sys
data = sys.stdin.read().split()
n = int(data[0])
seen = set()
out = []
for x in data[1:1 + n]:
    if x not in seen:
        seen.add(x)
        out.append(x)
print(" ".join(out))
`,
    inputs: [
      '6\n3 1 3 2 1 5',
      '1\n9',
      '4\n7 7 7 7',
      '5\n1 2 3 4 5',
      (() => {
        const a = ints(25, 0, 9);
        return `25\n${a.join(' ')}`;
      })(),
    ],
    solve: (s) => [...new Set(toks(s).slice(1).map(Number))].join(' '),
  },
  {
    id: 'point-distance',
    question: `Read four real numbers x1 y1 x2 y2 (absolute values at most 10^4) and print the Euclidean distance between the
points (x1, y1) and (x2, y2). Answers within an absolute or relative error of 1e-6 are accepted.

Example
Input:
0 0 3 4
Output:
5.000000`,
    reference: `import math
x1, y1, x2, y2 = map(float, input().split())
print("%.6f" % math.hypot(x2 - x1, y2 - y1))
`,
    inputs: [
      '0 0 3 4',
      '1 1 1 1',
      '-1 -1 1 1',
      '10000 10000 -10000 -10000',
      '0.5 0.5 1.5 2.5',
      ints(4, -100, 100).join(' '),
    ],
    solve: (s) => {
      const [a, b, c, d] = toks(s).map(Number);
      return fmt6(Math.sqrt((c - a) ** 2 + (d - b) ** 2));
    },
    tolerance: 1e-6,
  },
  {
    id: 'triangle-type',
    question: `Read three positive integers a b c (at most 10^9), the side lengths of a would-be triangle. Print INVALID if they do
not form a triangle with positive area, otherwise EQUILATERAL, ISOSCELES or SCALENE.

Example
Input:
3 4 5
Output:
SCALENE`,
    reference: `a, b, c = sorted(map(int, input().split()))
if a + b <= c:
    print("INVALID")
elif a == c:
    print("EQUILATERAL")
elif a == b or b == c:
    print("ISOSCELES")
else:
    print("SCALENE")
`,
    inputs: ['3 4 5', '2 2 2', '2 2 3', '1 2 3', '1 1 100', '1000000000 1000000000 1', '5 3 3'],
    solve: (s) => {
      const [a, b, c] = toks(s).map(Number);
      if (a + b <= c || a + c <= b || b + c <= a) return 'INVALID';
      const distinct = new Set([a, b, c]).size;
      return distinct === 1 ? 'EQUILATERAL' : distinct === 2 ? 'ISOSCELES' : 'SCALENE';
    },
  },
  {
    id: 'word-capitalize',
    question: `Read one line of words separated by single spaces. Print the line with the first letter of every word in upper
case and every other letter in lower case.

Example
Input:
hello wORLD from troupe
Output:
Hello World From Troupe`,
    reference: `words = input().split(" ")
print(" ".join(w[:1].upper() + w[1:].lower() for w in words))
`,
    inputs: ['hello wORLD from troupe', 'a', 'ALL CAPS HERE', 'x1y 2abc', `${word(3, 8)} ${word(3, 8)}`],
    solve: (s) =>
      s
        .split(' ')
        .map((w) => w.slice(0, 1).toUpperCase() + w.slice(1).toLowerCase())
        .join(' '),
  },
  {
    id: 'staircase-ways',
    question: `You climb a staircase of n steps (1 <= n <= 10^4), taking 1, 2 or 3 steps at a time. Print the number of distinct
ways to reach the top modulo 1000000007.

Example
Input:
4
Output:
7`,
    reference: `n = int(input())
MOD = 1000000007
ways = [0] * (n + 1)
ways[0] = 1
for i in range(1, n + 1):
    ways[i] = sum(ways[i - k] for k in (1, 2, 3) if i - k >= 0) % MOD
print(ways[n])
`,
    inputs: ['4', '1', '2', '3', '10', '10000', String(R.int(20, 60))],
    solve: (s) => {
      const n = Number(s.trim());
      const M = 1000000007n;
      let a = 0n,
        b = 0n,
        c = 1n; // ways[i-3], ways[i-2], ways[i-1] at i = 1
      for (let i = 1; i <= n; i++) [a, b, c] = [b, c, (a + b + c) % M];
      return String(c);
    },
  },
];

function build() {
  const out = [];
  const ids = new Set();
  for (const p of problems) {
    if (ids.has(p.id)) throw new Error(`duplicate problem id ${p.id}`);
    ids.add(p.id);
    if (p.inputs.length < 5) throw new Error(`${p.id}: needs at least 5 tests`);
    const tests = p.inputs.map((input) => ({ input: `${input}\n`, output: `${p.solve(input)}\n` }));
    out.push(
      JSON.stringify({
        id: p.id,
        question: p.question,
        tests,
        reference: p.reference,
        ...(p.tolerance ? { tolerance: p.tolerance } : {}),
      }),
    );
  }
  return `${out.join('\n')}\n`;
}

const target = fileURLToPath(new URL('../data/problems.jsonl', import.meta.url));
const text = build();
if (process.argv.includes('--check')) {
  const current = readFileSync(target, 'utf8');
  if (current !== text) {
    console.error(`${target} is out of date: run node scripts/build-problems.mjs`);
    process.exit(1);
  }
  console.log(`${target} is up to date (${problems.length} problems)`);
} else {
  writeFileSync(target, text);
  console.log(`wrote ${problems.length} problems to ${target}`);
}
