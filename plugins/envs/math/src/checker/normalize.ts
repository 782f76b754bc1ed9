/**
 * Normalisation of answer strings (layer (a) of the equivalence check): strips typesetting that never changes the
 * value — `$`, `\left`/`\right`, thin spaces, `\text{...}` units, `^\circ`, trailing periods, thousands separators,
 * a leading `x=` — and rewrites equivalent commands (`\dfrac`/`\tfrac` → `\frac`, `\frac12` → `\frac{1}{2}`).
 */
import { extractLastBoxed, matchBrace } from './extract.js';

/** Unit words removed after a number (lower case, matched whole). */
export const UNIT_WORDS: ReadonlySet<string> = new Set([
  'unit',
  'units',
  'squareunits',
  'sq',
  'squnits',
  'cubicunits',
  'mm',
  'cm',
  'm',
  'km',
  'in',
  'inch',
  'inches',
  'ft',
  'foot',
  'feet',
  'yd',
  'yard',
  'yards',
  'mi',
  'mile',
  'miles',
  'meter',
  'meters',
  'metre',
  'metres',
  'centimeter',
  'centimeters',
  'kilometer',
  'kilometers',
  'millimeter',
  'millimeters',
  'cm^2',
  'cm^3',
  'm^2',
  'm^3',
  'in^2',
  'ft^2',
  'inches^2',
  'feet^2',
  'meters^2',
  'squarefeet',
  'squaremeters',
  'squareinches',
  'squarecentimeters',
  'cubicfeet',
  'cubicinches',
  'cubiccentimeters',
  'cubicmeters',
  'g',
  'gram',
  'grams',
  'kg',
  'kilogram',
  'kilograms',
  'lb',
  'lbs',
  'pound',
  'pounds',
  'oz',
  'ounce',
  'ounces',
  'ton',
  'tons',
  's',
  'sec',
  'second',
  'seconds',
  'min',
  'minute',
  'minutes',
  'h',
  'hr',
  'hrs',
  'hour',
  'hours',
  'day',
  'days',
  'week',
  'weeks',
  'month',
  'months',
  'year',
  'years',
  'degree',
  'degrees',
  'deg',
  'dollar',
  'dollars',
  'cent',
  'cents',
  'euro',
  'euros',
  'mph',
  'kmh',
  'km/h',
  'l',
  'liter',
  'liters',
  'litre',
  'litres',
  'ml',
  'gallon',
  'gallons',
  'people',
  'students',
  'apples',
  'marbles',
  'items',
  'points',
  'times',
  'ways',
  'usd',
  'eur',
  'gbp',
  'rupees',
  'rupee',
  'yen',
  'pesos',
  'pence',
  'm/s',
  'km/hr',
  'cm/s',
  'ft/s',
  'm/s^2',
  'n',
  'j',
  'w',
  'kw',
  'v',
  'pa',
  'hz',
  'k',
  'mol',
  'rad',
  'radians',
  'j/k',
]);

/** Commands whose braced argument is plain text: the wrapper is removed (units inside are dropped). */
const TEXT_COMMANDS = [
  '\\text',
  '\\textbf',
  '\\textit',
  '\\textrm',
  '\\mathrm',
  '\\mathbf',
  '\\mathit',
  '\\mbox',
  '\\operatorname',
];

/** Whether `word` (already without spaces) is a unit word. */
function isUnit(word: string): boolean {
  const w = word.toLowerCase().replace(/\s+/g, '').replace(/\.$/, '');
  return UNIT_WORDS.has(w);
}

/** Unwraps `\text{...}`-like commands: units become '', `percent` becomes `%`, anything else its content. */
function unwrapTextCommands(s: string): string {
  for (const command of TEXT_COMMANDS) {
    let from = 0;
    for (;;) {
      const at = s.indexOf(command, from);
      if (at < 0) break;
      const after = at + command.length;
      if (/[A-Za-z]/.test(s[after] ?? '')) {
        from = after;
        continue;
      }
      let open = after;
      while (s[open] === ' ') open++;
      if (s[open] !== '{') {
        from = after;
        continue;
      }
      const close = matchBrace(s, open);
      if (close < 0) {
        from = after;
        continue;
      }
      const inner = s.slice(open + 1, close).trim();
      let replacement: string;
      let end = close + 1;
      if (isUnit(inner)) {
        replacement = '';
        const power = /^\s*\^\s*(\{\s*[23]\s*\}|[23])/.exec(s.slice(end));
        if (power) end += power[0].length;
      } else if (/^(percent|\\?%)$/i.test(inner)) replacement = '%';
      else replacement = inner;
      s = s.slice(0, at) + replacement + s.slice(end);
      from = at;
    }
  }
  return s;
}

/**
 * Rewrites the shorthand `\frac12`, `\frac1{x}`, `\frac{a}b`, `\sqrt2` into braced form (`\frac{1}{2}`, `\sqrt{2}`).
 */
export function fixShorthandArguments(s: string): string {
  const out: string[] = [];
  let i = 0;
  const takeArg = (): string | undefined => {
    while (s[i] === ' ') i++;
    if (i >= s.length) return undefined;
    if (s[i] === '{') {
      const close = matchBrace(s, i);
      if (close < 0) return undefined;
      const arg = s.slice(i, close + 1);
      i = close + 1;
      return arg;
    }
    if (s[i] === '\\') {
      const m = /^\\[A-Za-z]+/.exec(s.slice(i));
      if (!m) return undefined;
      i += m[0].length;
      return `{${m[0]}}`;
    }
    const ch = s[i]!;
    i++;
    return `{${ch}}`;
  };
  while (i < s.length) {
    const m = /^\\(frac|sqrt)(?![A-Za-z])/.exec(s.slice(i));
    if (!m) {
      out.push(s[i]!);
      i++;
      continue;
    }
    i += m[0].length;
    if (m[1] === 'frac') {
      const a = takeArg();
      const b = a === undefined ? undefined : takeArg();
      out.push('\\frac', a ?? '', b ?? '');
    } else {
      let index = '';
      while (s[i] === ' ') i++;
      if (s[i] === '[') {
        const close = s.indexOf(']', i);
        if (close > 0) {
          index = s.slice(i, close + 1);
          i = close + 1;
        }
      }
      out.push('\\sqrt', index, takeArg() ?? '');
    }
  }
  return out.join('');
}

/**
 * Splits off an approximation annotation: `x = \frac13 \approx 0.33` → [`x = \frac13`, `0.33`]. The exact part is the
 * answer; the approximation is kept for a reference written as a decimal. Without `\approx` (or `≈`): [text, undefined].
 */
export function splitApproximation(text: string): [string, string | undefined] {
  const parts = text.split(/\\approx(?![A-Za-z])|≈|\\simeq(?![A-Za-z])/);
  if (parts.length < 2) return [text, undefined];
  const approximate = parts[parts.length - 1]!.trim().replace(/\$+$/, '');
  const exact = parts[0]!.trim().replace(/^\$+/, '');
  return exact.replace(/[\s$]/g, '') === '' ? [approximate, undefined] : [exact, approximate];
}

/**
 * Normalises an answer string for comparison. Idempotent. Steps, in order:
 * a `\boxed{}` wrapper is unwrapped; `$`, `\left`, `\right`, `\displaystyle`, `\!`, `\,`, `\;`, `\:`, `~` are
 * removed; `\dfrac`/`\tfrac` → `\frac`; `\text{...}` units (cm, degrees, dollars, "units", ...) are dropped and other
 * `\text{}` unwrapped; `^\circ`, `°`, `\$` are dropped; `\%` → `%` and a trailing "percent" → `%`; a unit word after a
 * number is dropped; a mixed number `2 1/2` → `2\frac{1}{2}`; all whitespace is removed; trailing periods are removed;
 * thousands separators (`1,000`, `1{,}000`) are removed; a leading `x=` (one variable, one `=`) is removed; a leading
 * `+` and wrapping braces are removed; `(B)` → `B` for a multiple-choice letter.
 */
export function normalizeAnswer(raw: string): string {
  let s = raw.trim();
  const boxed = extractLastBoxed(s);
  if (boxed !== undefined && /^\$*\s*\\(boxed|fbox)/.test(s)) s = boxed;
  // Math delimiters and markdown emphasis around the answer.
  s = s.replace(/\\[()[\]]/g, ' ').replace(/\*\*|__/g, '');
  // Currency: `\$`, `€`, `£`, `¥`, `\euro`, `\pounds`, `\textdollar`, and codes before or after a number.
  s = s.replace(/\\\$|\\(?:euro|pounds|textdollar|textsterling|yen)(?![A-Za-z])|[€£¥₹]/g, '');
  s = s.replace(/^\s*(?:USD|EUR|GBP|Rs\.?|INR)\s*(?=[\d.+-])|(?<=\d)\s*(?:USD|EUR|GBP)\s*$/g, '');
  s = s.replace(/\$/g, '');
  s = s.replace(/\\begin\{[bB]matrix\}/g, '\\begin{pmatrix}').replace(/\\end\{[bB]matrix\}/g, '\\end{pmatrix}');
  s = s.replace(/\\\\\s*\\end\{pmatrix\}/g, '\\end{pmatrix}');
  // Matrix rows: `\\` becomes `;` (before `\ ` and `\;` turn into spaces below).
  if (s.includes('\\begin{pmatrix}')) s = s.replace(/\\\\/g, ';');
  s = s.replace(/\\(left|right|bigl|bigr|Bigl|Bigr|big|Big)(?![A-Za-z])/g, '');
  s = s.replace(/\\displaystyle|\\textstyle/g, '');
  s = s.replace(/\\[!,;:> ]/g, ' ').replace(/~/g, ' ');
  s = s.replace(/\\[dtc]frac(?![A-Za-z])/g, '\\frac');
  // Thousands separated by spaces: `1 000`, `12 345 678.5` (after `\,` and `\ ` became spaces).
  s = s.replace(
    /^([+-]?\d{1,3})((?:[ \u00a0\u202f]\d{3})+)(?![\d/])/,
    (_m, head: string, groups: string) => head + groups.replace(/\D/g, ''),
  );
  s = s.replace(/\\%/g, '%');
  s = unwrapTextCommands(s);
  s = s.replace(/\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|°|\\degree(?![A-Za-z])/g, '');
  s = s.replace(/(\d)\s*(?:percent|per cent)\.?$/i, '$1%');
  s = s.replace(/\\emptyset|\\varnothing/g, '\\emptyset');
  s = s
    .replace(/\\(?:le|leq|leqslant)(?![A-Za-z])|<=|≤/g, '\\le ')
    .replace(/\\(?:ge|geq|geqslant)(?![A-Za-z])|>=|≥/g, '\\ge ');
  s = s
    .replace(/\\(?:ne|neq)(?![A-Za-z])|!=|≠/g, '\\neq ')
    .replace(/\\lt(?![A-Za-z])/g, '<')
    .replace(/\\gt(?![A-Za-z])/g, '>');
  // A unit word (or two) after a number: `5 cm`, `12 square units`, `30 degrees`, `5cm` (not `2x`, `5m`).
  for (;;) {
    const m = /^(.*?\d[}%)]?)(\s*)([A-Za-z][A-Za-z/]*(?:\^\{?[23]\}?)?(?:\s+[A-Za-z]+)?)\.?$/.exec(s);
    if (!m || !isUnit(m[3]!.replace(/\^\{?([23])\}?/, '^$1'))) break;
    if (m[2]!.length === 0 && m[3]!.length < 2) break;
    s = m[1]!;
  }
  // Mixed numbers written with a space: `2 1/2` → `2\frac{1}{2}`.
  s = s.replace(/(^|[^\d.])(\d+)\s+(\d+)\s*\/\s*(\d+)(?![\d.])/g, '$1$2\\frac{$3}{$4}');
  s = fixShorthandArguments(s);
  // Remove whitespace, except one space that ends a command before a letter (`\cdot e` must not become `\cdote`).
  s = s
    .replace(/(\\[A-Za-z]+)\s+(?=[A-Za-z])/g, '$1\u0000')
    .replace(/\s+/g, '')
    // eslint-disable-next-line no-control-regex -- U+0000 marks the kept spaces: it cannot occur in an answer's text
    .replace(/\u0000/g, ' ');
  s = s.replace(/\.+$/, '');
  s = s.replace(/\{,\}/g, ',');
  if (/^[+-]?\d{1,3}(,\d{3})+(\.\d+)?%?$/.test(s)) s = s.replace(/,/g, '');
  // A leading `x=` / `\theta=` when the answer has exactly one `=`.
  if ((s.match(/=/g) ?? []).length === 1) {
    const m = /^(?:[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?|\\[A-Za-z]+)=(.+)$/.exec(s);
    if (m && !/^\\(le|ge|lt|gt|ne|neq|approx)$/.test(s.split('=')[0]!)) s = m[1]!;
  }
  // A leading `x\in` before a set or an interval: `x\in[2,5)` → `[2,5)`.
  s = s.replace(/^(?:[A-Za-z]|\\[A-Za-z]+)\\in(?![A-Za-z])/, '');
  s = s.replace(/^\+(?=[\d.\\(])/, '');
  s = s.replace(/(^|[^\d])\.(\d)/g, '$10.$2');
  while (s.startsWith('{') && matchBrace(s, 0) === s.length - 1) s = s.slice(1, -1);
  const choice = /^\(([A-Ea-e])\)$/.exec(s);
  if (choice) s = choice[1]!.toUpperCase();
  return s;
}
