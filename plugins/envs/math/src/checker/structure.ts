/**
 * Structured answers: tuples and intervals (ordered, with their brackets), sets (`\{...\}`, unordered), bare
 * comma-separated lists, unions of intervals (`\cup`), `±` answers (`1\pm\sqrt{2}` = {1+√2, 1−√2}) and matrices.
 */

/** The structure of a normalised answer. */
export type AnswerStructure =
  | { readonly kind: 'scalar'; /** The answer. */ readonly text: string }
  | {
      readonly kind: 'tuple';
      /** `(` or `[`. */ readonly open: string;
      /** `)` or `]`. */ readonly close: string;
      /** Elements in order. */ readonly items: readonly string[];
    }
  | {
      readonly kind: 'set';
      /** Where the set came from. */ readonly source: 'braces' | 'pm' | 'union' | 'empty';
      /** Elements (order irrelevant). */ readonly items: readonly string[];
    }
  | { readonly kind: 'list'; /** Elements, as written. */ readonly items: readonly string[] }
  | {
      readonly kind: 'matrix';
      /** Cells, row by row (`\begin{pmatrix}` or `bmatrix`). */ readonly rows: readonly (readonly string[])[];
    };

/** Opening and closing delimiters, as tokens (LaTeX escaped braces count). */
const OPENERS = ['\\{', '(', '[', '{'];
const CLOSERS = ['\\}', ')', ']', '}'];

/** Walks `s` and calls `visit(index, depth, token)` for every delimiter token and `,` with the depth before it. */
function scan(s: string, visit: (index: number, depth: number, token: string) => boolean | void): void {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const two = s.slice(i, i + 2);
    let token: string | undefined;
    if (two === '\\{' || two === '\\}') token = two;
    else if (s[i] === '\\') {
      const m = /^\\[A-Za-z]+/.exec(s.slice(i));
      token = m ? m[0] : two;
    } else token = s[i]!;
    if (visit(i, depth, token) === false) return;
    if (OPENERS.includes(token)) depth++;
    else if (CLOSERS.includes(token)) depth--;
    i += token.length - 1;
  }
}

/** Splits `s` at top-level occurrences of `separator` (`,` or a command such as `\cup`). */
export function splitTopLevel(s: string, separator: string): string[] {
  const parts: string[] = [];
  let last = 0;
  scan(s, (index, depth, token) => {
    if (depth === 0 && token === separator) {
      parts.push(s.slice(last, index));
      last = index + token.length;
    }
  });
  parts.push(s.slice(last));
  return parts;
}

/** Whether the delimiter opening at 0 closes exactly at the end of `s`. */
function wrapsWhole(s: string): boolean {
  let closesAt = -1;
  scan(s, (index, depth, token) => {
    if (CLOSERS.includes(token) && depth === 1) {
      closesAt = index + token.length;
      return false;
    }
    return undefined;
  });
  return closesAt === s.length;
}

/** Expands a single `\pm`/`\mp` into its two answers; undefined when there is none (or more than one). */
export function expandPlusMinus(s: string): [string, string] | undefined {
  const matches = s.match(/\\(pm|mp)(?![A-Za-z])/g) ?? [];
  if (matches.length !== 1) return undefined;
  const plus = s.replace(/\\(pm|mp)(?![A-Za-z])/, (m) => (m === '\\pm' ? '+' : '-'));
  const minus = s.replace(/\\(pm|mp)(?![A-Za-z])/, (m) => (m === '\\pm' ? '-' : '+'));
  return [plus.replace(/^\+/, ''), minus];
}

/** Expands `±` items of an unordered collection. */
function expandItems(items: readonly string[]): string[] {
  return items.flatMap((item) => expandPlusMinus(item) ?? [item]);
}

/** The structure of a NORMALISED answer. */
export function parseStructure(s: string): AnswerStructure {
  const matrix = /^\\begin\{pmatrix\}(.*)\\end\{pmatrix\}$/.exec(s);
  if (matrix && !matrix[1]!.includes('\\begin')) {
    return { kind: 'matrix', rows: matrix[1]!.split(';').map((row) => row.split('&')) };
  }
  if (s === '\\emptyset' || s === '\\{\\}') return { kind: 'set', source: 'empty', items: [] };
  const union = splitTopLevel(s, '\\cup');
  if (union.length > 1) return { kind: 'set', source: 'union', items: union };
  if (s.startsWith('\\{') && s.endsWith('\\}') && wrapsWhole(s)) {
    const inner = s.slice(2, -2);
    return { kind: 'set', source: 'braces', items: inner === '' ? [] : expandItems(splitTopLevel(inner, ',')) };
  }
  if ((s.startsWith('(') || s.startsWith('[')) && (s.endsWith(')') || s.endsWith(']')) && wrapsWhole(s)) {
    const items = splitTopLevel(s.slice(1, -1), ',');
    if (items.length > 1) return { kind: 'tuple', open: s[0]!, close: s[s.length - 1]!, items };
  }
  const items = splitTopLevel(s, ',');
  if (items.length > 1) return { kind: 'list', items: expandItems(items) };
  const pm = expandPlusMinus(s);
  if (pm) return { kind: 'set', source: 'pm', items: pm };
  return { kind: 'scalar', text: s };
}
