/**
 * Translation of a (normalised) LaTeX math answer into mathjs expression syntax, for the symbolic and numeric layers:
 * `\frac`, `\sqrt`, `\sqrt[n]`, `\binom`, `\cdot`, `\times`, `\div`, `^`, subscripts, `\pi`, `e`, `\infty`, Greek
 * letters, trig and log functions, `|x|`, `n!`, and implicit multiplication (written out as explicit `*`).
 */
import { matchBrace } from './extract.js';

/** Raised when a LaTeX answer uses something the translator does not understand. */
export class LatexTranslationError extends Error {
  override readonly name = 'LatexTranslationError';
}

/** Functions that take one argument. LaTeX name → mathjs name. */
const FUNCTIONS: Readonly<Record<string, string>> = {
  sin: 'sin',
  cos: 'cos',
  tan: 'tan',
  sec: 'sec',
  csc: 'csc',
  cot: 'cot',
  arcsin: 'asin',
  arccos: 'acos',
  arctan: 'atan',
  sinh: 'sinh',
  cosh: 'cosh',
  tanh: 'tanh',
  ln: 'log',
  log: 'log10',
  exp: 'exp',
};

/** Greek letters and other named symbols that are variables. */
const GREEK = new Set([
  'alpha',
  'beta',
  'gamma',
  'delta',
  'epsilon',
  'varepsilon',
  'zeta',
  'eta',
  'theta',
  'vartheta',
  'iota',
  'kappa',
  'lambda',
  'mu',
  'nu',
  'xi',
  'rho',
  'sigma',
  'tau',
  'upsilon',
  'phi',
  'varphi',
  'chi',
  'psi',
  'omega',
  'Gamma',
  'Delta',
  'Theta',
  'Lambda',
  'Xi',
  'Sigma',
  'Phi',
  'Psi',
  'Omega',
]);

/** Token kinds: what may precede or follow an implicit multiplication. */
type Kind = 'operand' | 'open' | 'close' | 'operator' | 'function' | 'postfix';

interface Token {
  readonly text: string;
  readonly kind: Kind;
}

/** Translates a LaTeX answer to a mathjs expression string. Throws {@link LatexTranslationError} when unsupported. */
export function latexToMathjs(latex: string): string {
  const tokens = translate(latex.trim());
  if (tokens.length === 0) throw new LatexTranslationError('empty expression');
  return join(tokens);
}

/** Joins tokens, inserting `*` for implicit multiplication (between an operand end and an operand start). */
function join(tokens: readonly Token[]): string {
  let out = '';
  let prev: Token | undefined;
  for (const t of tokens) {
    const prevEnds = prev && (prev.kind === 'operand' || prev.kind === 'close' || prev.kind === 'postfix');
    const startsOperand = t.kind === 'operand' || t.kind === 'open' || t.kind === 'function';
    if (prevEnds && startsOperand) out += ' * ';
    else if (out.length > 0) out += ' ';
    out += t.text;
    prev = t;
  }
  return out;
}

/** A group translated as one parenthesised operand. */
function group(inner: string): Token {
  return { text: `(${latexToMathjs(inner)})`, kind: 'operand' };
}

/** Tokenises and translates one LaTeX string. */
function translate(s: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  let absOpen = false;
  /** Reads a braced argument or a single character/command; returns its raw LaTeX. */
  const readArg = (what: string): string => {
    while (s[i] === ' ') i++;
    if (s[i] === '{') {
      const close = matchBrace(s, i);
      if (close < 0) throw new LatexTranslationError(`unbalanced braces after ${what}`);
      const inner = s.slice(i + 1, close);
      i = close + 1;
      return inner;
    }
    const cmd = /^\\[A-Za-z]+/.exec(s.slice(i));
    if (cmd) {
      i += cmd[0].length;
      return cmd[0];
    }
    const num = /^\d/.exec(s.slice(i));
    if (num) {
      i += 1;
      return num[0];
    }
    if (i < s.length && /[A-Za-z]/.test(s[i]!)) {
      i += 1;
      return s[i - 1]!;
    }
    throw new LatexTranslationError(`missing argument after ${what}`);
  };
  while (i < s.length) {
    const ch = s[i]!;
    if (ch === ' ') {
      i++;
      continue;
    }
    if (/[\d.]/.test(ch)) {
      // Scientific notation is one number: `1e309` is 10^309 (out of range), never 1·e·309.
      const m = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/.exec(s.slice(i))!;
      out.push({ text: m[0], kind: 'operand' });
      i += m[0].length;
      continue;
    }
    if (/[A-Za-z]/.test(ch)) {
      out.push({ text: ch, kind: 'operand' });
      i++;
      continue;
    }
    if (ch === '_') {
      i++;
      const sub = readArg('_').replace(/[{}\s]/g, '');
      if (!/^[A-Za-z0-9]+$/.test(sub)) throw new LatexTranslationError(`unsupported subscript _${sub}`);
      const last = out[out.length - 1];
      if (!last || last.kind !== 'operand' || !/^[A-Za-z]/.test(last.text))
        throw new LatexTranslationError('subscript without a variable');
      out[out.length - 1] = { text: `${last.text}_${sub}`, kind: 'operand' };
      continue;
    }
    if (ch === '^') {
      i++;
      const arg = readArg('^');
      out.push({ text: '^', kind: 'operator' }, group(arg));
      continue;
    }
    if (ch === '{') {
      const close = matchBrace(s, i);
      if (close < 0) throw new LatexTranslationError('unbalanced braces');
      out.push(group(s.slice(i + 1, close)));
      i = close + 1;
      continue;
    }
    if (ch === '(' || ch === '[') {
      out.push({ text: '(', kind: 'open' });
      i++;
      continue;
    }
    if (ch === ')' || ch === ']') {
      out.push({ text: ')', kind: 'close' });
      i++;
      continue;
    }
    if (ch === '|') {
      if (!absOpen) {
        out.push({ text: 'abs(', kind: 'function' });
        absOpen = true;
      } else {
        out.push({ text: ')', kind: 'close' });
        absOpen = false;
      }
      i++;
      continue;
    }
    if (ch === '!') {
      out.push({ text: '!', kind: 'postfix' });
      i++;
      continue;
    }
    if (ch === '%') {
      out.push({ text: '/ 100', kind: 'postfix' });
      i++;
      continue;
    }
    if ('+-*/'.includes(ch)) {
      out.push({ text: ch, kind: 'operator' });
      i++;
      continue;
    }
    if (ch === '\\') {
      const m = /^\\([A-Za-z]+)/.exec(s.slice(i));
      if (!m) throw new LatexTranslationError(`unsupported symbol ${s.slice(i, i + 2)}`);
      const name = m[1]!;
      i += m[0].length;
      if (name === 'frac') {
        const a = readArg('\\frac');
        const b = readArg('\\frac');
        out.push({ text: `((${latexToMathjs(a)}) / (${latexToMathjs(b)}))`, kind: 'operand' });
      } else if (name === 'sqrt') {
        while (s[i] === ' ') i++;
        let index: string | undefined;
        if (s[i] === '[') {
          const close = s.indexOf(']', i);
          if (close < 0) throw new LatexTranslationError('unclosed [ in \\sqrt[n]');
          index = s.slice(i + 1, close);
          i = close + 1;
        }
        const arg = latexToMathjs(readArg('\\sqrt'));
        out.push({
          text: index === undefined ? `sqrt(${arg})` : `nthRoot(${arg}, ${latexToMathjs(index)})`,
          kind: 'operand',
        });
      } else if (name === 'binom' || name === 'dbinom' || name === 'tbinom' || name === 'choose') {
        const a = latexToMathjs(readArg('\\binom'));
        const b = latexToMathjs(readArg('\\binom'));
        // Through gamma, not mathjs `combinations` (which loops k times: a huge \binom would hang the checker).
        out.push({ text: `(gamma((${a}) + 1) / (gamma((${b}) + 1) * gamma((${a}) - (${b}) + 1)))`, kind: 'operand' });
      } else if (name === 'cdot' || name === 'times' || name === 'ast') {
        out.push({ text: '*', kind: 'operator' });
      } else if (name === 'div') {
        out.push({ text: '/', kind: 'operator' });
      } else if (name === 'pi') {
        out.push({ text: 'pi', kind: 'operand' });
      } else if (name === 'infty') {
        out.push({ text: 'Infinity', kind: 'operand' });
      } else if (name === 'lvert' || name === 'rvert' || name === 'vert') {
        if (!absOpen) {
          out.push({ text: 'abs(', kind: 'function' });
          absOpen = true;
        } else {
          out.push({ text: ')', kind: 'close' });
          absOpen = false;
        }
      } else if (name === 'log' && s[i] === '_') {
        i++;
        const base = latexToMathjs(readArg('\\log_'));
        const arg = latexToMathjs(readArg('\\log_b'));
        out.push({ text: `log(${arg}, ${base})`, kind: 'operand' });
      } else if (FUNCTIONS[name]) {
        const fn = FUNCTIONS[name]!;
        while (s[i] === ' ') i++;
        if (s[i] === '^') {
          // `\sin^2 x` = (sin x)^2
          i++;
          const power = latexToMathjs(readArg(`\\${name}^`));
          while (s[i] === ' ') i++;
          let arg: string;
          if (s[i] === '(') {
            let depth = 0;
            let j = i;
            for (; j < s.length; j++) {
              if (s[j] === '(') depth++;
              else if (s[j] === ')' && --depth === 0) break;
            }
            if (j >= s.length) throw new LatexTranslationError(`unclosed ( after \\${name}`);
            arg = s.slice(i + 1, j);
            i = j + 1;
          } else arg = readArg(`\\${name}`);
          out.push({ text: `(${fn}(${latexToMathjs(arg)}))^(${power})`, kind: 'operand' });
        } else if (s[i] === '(') {
          out.push({ text: fn, kind: 'function' });
        } else {
          out.push({ text: `${fn}(${latexToMathjs(readArg(`\\${name}`))})`, kind: 'operand' });
        }
      } else if (GREEK.has(name)) {
        out.push({ text: `g_${name}`, kind: 'operand' });
      } else {
        throw new LatexTranslationError(`unsupported command \\${name}`);
      }
      continue;
    }
    throw new LatexTranslationError(`unsupported character '${ch}'`);
  }
  if (absOpen) throw new LatexTranslationError('unclosed |');
  return out;
}
