/**
 * Constrained decoding for role grammars (`OutputGrammar`): a small regex → NFA compiler (Thompson construction)
 * and a token mask computed by walking a trie of the vocabulary's token texts with the NFA's state set, so each
 * step allows exactly the tokens that keep the completion a feasible prefix of a match. `choices` compile to an
 * alternation of literals. Supported regex syntax: literals, escapes (`\d \w \s \D \W \S \n \t \r` and escaped
 * punctuation), `.`, character classes with ranges and negation, groups `( )` / `(?: )`, `|`, and the quantifiers
 * `* + ? {n} {n,} {n,m}` (lazy `?` suffixes are accepted and ignored); `^`/`$` at the ends are accepted (the match is
 * anchored anyway). Look-arounds and back-references are not supported and throw `GrammarError`.
 */
import type { OutputGrammar } from '@troupe/kernel';

/** A grammar the decoder cannot compile (the message names the pattern and the unsupported feature). */
export class GrammarError extends Error {
  override name = 'GrammarError';
}

type Pred = (c: number) => boolean;
interface CharState {
  kind: 'char';
  pred: Pred;
  out: number;
}
interface SplitState {
  kind: 'split';
  out: number[];
}
interface MatchState {
  kind: 'match';
}
type NState = CharState | SplitState | MatchState;

interface Frag {
  start: number;
  outs: { s: number; slot: number }[];
}

const isDigit: Pred = (c) => c >= 48 && c <= 57;
const isWord: Pred = (c) => isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isSpace: Pred = (c) =>
  c === 32 ||
  (c >= 9 && c <= 13) ||
  c === 0xa0 ||
  c === 0xfeff ||
  c === 0x2028 ||
  c === 0x2029 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x1680 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000;

/** A compiled NFA over UTF-16 code units. */
export class Nfa {
  /** States; index 0.. */
  readonly states: NState[] = [];
  /** Start state. */
  start = 0;
  private readonly stepMemo = new Map<string, Map<number, number[]>>();

  /** Epsilon-closure of `ids`, sorted. */
  closure(ids: readonly number[]): number[] {
    const seen = new Set<number>();
    const stack = [...ids];
    while (stack.length) {
      const s = stack.pop()!;
      if (seen.has(s)) continue;
      seen.add(s);
      const st = this.states[s]!;
      if (st.kind === 'split') for (const o of st.out) stack.push(o);
    }
    return [...seen].sort((a, b) => a - b);
  }

  /** The initial state set. */
  initial(): number[] {
    return this.closure([this.start]);
  }

  /** The state set after reading code unit `c` (empty: dead). Memoised. */
  step(set: readonly number[], c: number): number[] {
    const key = set.join(',');
    let m = this.stepMemo.get(key);
    if (!m) {
      m = new Map();
      this.stepMemo.set(key, m);
    }
    const hit = m.get(c);
    if (hit) return hit;
    const next: number[] = [];
    for (const s of set) {
      const st = this.states[s]!;
      if (st.kind === 'char' && st.pred(c)) next.push(st.out);
    }
    const out = next.length ? this.closure(next) : [];
    m.set(c, out);
    return out;
  }

  /** The state set after reading `text` from `set`. */
  run(set: readonly number[], text: string): number[] {
    let cur = set as number[];
    for (let i = 0; i < text.length && cur.length; i++) cur = this.step(cur, text.charCodeAt(i));
    return cur;
  }

  /** Whether the set contains the match state. */
  accepts(set: readonly number[]): boolean {
    return set.some((s) => this.states[s]!.kind === 'match');
  }
}

class Parser {
  private i = 0;
  constructor(
    private readonly src: string,
    private readonly nfa: Nfa,
  ) {}

  private err(msg: string): never {
    throw new GrammarError(`grammar regex /${this.src}/: ${msg} at position ${this.i}`);
  }

  private add(st: NState): number {
    this.nfa.states.push(st);
    return this.nfa.states.length - 1;
  }

  private patch(outs: Frag['outs'], target: number): void {
    for (const { s, slot } of outs) {
      const st = this.nfa.states[s]!;
      if (st.kind === 'char') st.out = target;
      else if (st.kind === 'split') st.out[slot] = target;
    }
  }

  private empty(): Frag {
    const s = this.add({ kind: 'split', out: [-1] });
    return { start: s, outs: [{ s, slot: 0 }] };
  }

  parse(): Frag {
    if (this.src.startsWith('^')) this.i = 1;
    const f = this.alt();
    if (this.i < this.src.length) this.err(`unexpected '${this.src[this.i]}'`);
    return f;
  }

  private alt(): Frag {
    const branches = [this.concat()];
    while (this.src[this.i] === '|') {
      this.i++;
      branches.push(this.concat());
    }
    if (branches.length === 1) return branches[0]!;
    const s = this.add({ kind: 'split', out: branches.map((b) => b.start) });
    return { start: s, outs: branches.flatMap((b) => b.outs) };
  }

  private concat(): Frag {
    let f: Frag | undefined;
    while (this.i < this.src.length && this.src[this.i] !== '|' && this.src[this.i] !== ')') {
      if (this.src[this.i] === '$' && this.i === this.src.length - 1) {
        this.i++;
        break;
      }
      const r = this.repeat();
      if (!f) f = r;
      else {
        this.patch(f.outs, r.start);
        f = { start: f.start, outs: r.outs };
      }
    }
    return f ?? this.empty();
  }

  private repeat(): Frag {
    const atomStart = this.i;
    let f = this.atom();
    const atomEnd = this.i;
    for (;;) {
      const c = this.src[this.i];
      let min: number, max: number;
      if (c === '*') {
        min = 0;
        max = Infinity;
        this.i++;
      } else if (c === '+') {
        min = 1;
        max = Infinity;
        this.i++;
      } else if (c === '?') {
        min = 0;
        max = 1;
        this.i++;
      } else if (c === '{' && /^\{\d+(,\d*)?\}/.test(this.src.slice(this.i))) {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i))!;
        min = Number(m[1]);
        max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
        if (max < min) this.err(`quantifier {${min},${max}} has max < min`);
        if (min > 1000 || (max !== Infinity && max > 1000)) this.err('quantifier bound above 1000');
        this.i += m[0].length;
      } else return f;
      if (this.src[this.i] === '?') this.i++; // lazy: same language
      f = this.quantify(f, min, max, atomStart, atomEnd);
    }
  }

  /** Re-parses the atom text to get fresh copies for counted repetition. */
  private copyAtom(start: number, end: number): Frag {
    const save = this.i;
    this.i = start;
    const f = this.atom();
    if (this.i !== end) this.err('internal: atom copy mismatch');
    this.i = save;
    return f;
  }

  private star(f: Frag): Frag {
    const s = this.add({ kind: 'split', out: [f.start, -1] });
    this.patch(f.outs, s);
    return { start: s, outs: [{ s, slot: 1 }] };
  }

  private opt(f: Frag): Frag {
    const s = this.add({ kind: 'split', out: [f.start, -1] });
    return { start: s, outs: [...f.outs, { s, slot: 1 }] };
  }

  private quantify(first: Frag, min: number, max: number, aStart: number, aEnd: number): Frag {
    const parts: Frag[] = [];
    let used = false;
    const next = (): Frag => {
      if (!used) {
        used = true;
        return first;
      }
      return this.copyAtom(aStart, aEnd);
    };
    for (let k = 0; k < min; k++) parts.push(next());
    if (max === Infinity) parts.push(this.star(next()));
    else for (let k = min; k < max; k++) parts.push(this.opt(next()));
    if (parts.length === 0) return this.empty();
    let f = parts[0]!;
    for (let k = 1; k < parts.length; k++) {
      this.patch(f.outs, parts[k]!.start);
      f = { start: f.start, outs: parts[k]!.outs };
    }
    return f;
  }

  private char(pred: Pred): Frag {
    const s = this.add({ kind: 'char', pred, out: -1 });
    return { start: s, outs: [{ s, slot: 0 }] };
  }

  private escapePred(): Pred {
    const c = this.src[this.i++];
    if (c === undefined) this.err('trailing backslash');
    switch (c) {
      case 'd':
        return isDigit;
      case 'D':
        return (x) => !isDigit(x);
      case 'w':
        return isWord;
      case 'W':
        return (x) => !isWord(x);
      case 's':
        return isSpace;
      case 'S':
        return (x) => !isSpace(x);
      case 'n':
        return (x) => x === 10;
      case 't':
        return (x) => x === 9;
      case 'r':
        return (x) => x === 13;
      case 'f':
        return (x) => x === 12;
      case 'v':
        return (x) => x === 11;
      case '0':
        return (x) => x === 0;
      case 'u': {
        const m = /^[0-9a-fA-F]{4}/.exec(this.src.slice(this.i));
        if (!m) this.err('bad \\u escape');
        this.i += 4;
        const code = parseInt(m[0], 16);
        return (x) => x === code;
      }
      case 'x': {
        const m = /^[0-9a-fA-F]{2}/.exec(this.src.slice(this.i));
        if (!m) this.err('bad \\x escape');
        this.i += 2;
        const code = parseInt(m[0], 16);
        return (x) => x === code;
      }
      case 'b':
      case 'B':
        this.err('word boundaries (\\b) are not supported');
      // falls through (unreachable)
      default:
        if (/[1-9]/.test(c)) this.err('back-references are not supported');
        if (/[a-zA-Z]/.test(c)) this.err(`unsupported escape \\${c}`);
        {
          const code = c.charCodeAt(0);
          return (x) => x === code;
        }
    }
  }

  private classAtom(): { pred: Pred; code?: number } {
    const c = this.src[this.i];
    if (c === '\\') {
      this.i++;
      const save = this.i;
      const e = this.src[this.i];
      const pred = this.escapePred();
      if (e && !/[dDwWsS]/.test(e)) {
        const single = this.src.slice(save, this.i);
        const code =
          single === 'n'
            ? 10
            : single === 't'
              ? 9
              : single === 'r'
                ? 13
                : single.length === 1
                  ? single.charCodeAt(0)
                  : single.startsWith('u') || single.startsWith('x')
                    ? parseInt(single.slice(1), 16)
                    : undefined;
        return code === undefined ? { pred } : { pred, code };
      }
      return { pred };
    }
    if (c === undefined) this.err('unterminated character class');
    this.i++;
    const code = c.charCodeAt(0);
    return { pred: (x) => x === code, code };
  }

  private klass(): Pred {
    // after '['
    let negate = false;
    if (this.src[this.i] === '^') {
      negate = true;
      this.i++;
    }
    const preds: Pred[] = [];
    while (this.src[this.i] !== ']') {
      if (this.i >= this.src.length) this.err('unterminated character class');
      const a = this.classAtom();
      if (
        this.src[this.i] === '-' &&
        this.src[this.i + 1] !== ']' &&
        this.i + 1 < this.src.length &&
        a.code !== undefined
      ) {
        this.i++;
        const b = this.classAtom();
        if (b.code === undefined) this.err('bad range in character class');
        const lo = a.code,
          hi = b.code;
        if (hi < lo) this.err('range out of order in character class');
        preds.push((x) => x >= lo && x <= hi);
      } else preds.push(a.pred);
    }
    this.i++; // ']'
    return negate ? (x) => !preds.some((p) => p(x)) : (x) => preds.some((p) => p(x));
  }

  private atom(): Frag {
    const c = this.src[this.i];
    if (c === '(') {
      this.i++;
      if (this.src[this.i] === '?') {
        if (this.src[this.i + 1] === ':') this.i += 2;
        else if (this.src[this.i + 1] === '<' && /^\?<[A-Za-z_]\w*>/.test(this.src.slice(this.i)))
          this.i = this.src.indexOf('>', this.i) + 1;
        else this.err('look-around groups are not supported');
      }
      const f = this.alt();
      if (this.src[this.i] !== ')') this.err("missing ')'");
      this.i++;
      return f;
    }
    if (c === '[') {
      this.i++;
      return this.char(this.klass());
    }
    if (c === '.') {
      this.i++;
      return this.char((x) => x !== 10 && x !== 13 && x !== 0x2028 && x !== 0x2029);
    }
    if (c === '\\') {
      this.i++;
      return this.char(this.escapePred());
    }
    if (c === '*' || c === '+' || c === '?' || (c === '{' && /^\{\d/.test(this.src.slice(this.i))))
      this.err(`nothing to repeat before '${c}'`);
    if (c === '^' || c === '$') this.err(`anchor '${c}' is only supported at the ends of the pattern`);
    this.i++;
    const code = c!.charCodeAt(0);
    return this.char((x) => x === code);
  }
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** Compiles a grammar to an NFA. Throws `GrammarError` for unsupported patterns or an empty choice list. */
export function compileGrammar(g: OutputGrammar): Nfa {
  let pattern: string;
  if (g.kind === 'choices') {
    if (g.choices.length === 0) throw new GrammarError('grammar choices: the list is empty');
    pattern = g.choices.map(escapeRegex).join('|');
  } else if (g.kind === 'regex') {
    pattern = g.pattern;
  } else {
    throw new GrammarError(`unknown grammar kind ${JSON.stringify((g as { kind: unknown }).kind)}`);
  }
  const nfa = new Nfa();
  const p = new Parser(pattern, nfa);
  const f = p.parse();
  const match = nfa.states.length;
  nfa.states.push({ kind: 'match' });
  for (const { s, slot } of f.outs) {
    const st = nfa.states[s]!;
    if (st.kind === 'char') st.out = match;
    else if (st.kind === 'split') st.out[slot] = match;
  }
  nfa.start = f.start;
  return nfa;
}

interface TrieNode {
  children: Map<number, TrieNode>;
  ids: number[];
}

const tries = new WeakMap<readonly string[], TrieNode>();

/** A trie of token texts (tokens with empty text or U+FFFD are left out). Cached per token-text array. */
export function tokenTrie(texts: readonly string[]): TrieNode {
  let root = tries.get(texts);
  if (root) return root;
  root = { children: new Map(), ids: [] };
  for (let id = 0; id < texts.length; id++) {
    const t = texts[id]!;
    if (!t || t.includes('\ufffd')) continue;
    let n = root;
    for (let i = 0; i < t.length; i++) {
      const c = t.charCodeAt(i);
      let ch = n.children.get(c);
      if (!ch) {
        ch = { children: new Map(), ids: [] };
        n.children.set(c, ch);
      }
      n = ch;
    }
    n.ids.push(id);
  }
  tries.set(texts, root);
  return root;
}

/**
 * The constrained decoder's state for one sample: the NFA state set after the text so far. `allowed()` lists the
 * tokens whose text keeps it feasible, and whether the text so far is a complete match (then EOS is allowed).
 */
export class GrammarCursor {
  private set: number[];
  /** The grammar's NFA. */
  readonly nfa: Nfa;
  private readonly trie: TrieNode;
  private readonly texts: readonly string[];

  /** A cursor at the empty completion. */
  constructor(nfa: Nfa, texts: readonly string[]) {
    this.nfa = nfa;
    this.texts = texts;
    this.trie = tokenTrie(texts);
    this.set = nfa.initial();
  }

  /** Whether the text so far matches the whole grammar. */
  get complete(): boolean {
    return this.nfa.accepts(this.set);
  }

  /** Token ids that keep the completion a feasible prefix. */
  allowed(): number[] {
    const out: number[] = [];
    const walk = (node: TrieNode, set: number[]): void => {
      for (const [c, child] of node.children) {
        const next = this.nfa.step(set, c);
        if (next.length === 0) continue;
        for (const id of child.ids) out.push(id);
        if (child.children.size) walk(child, next);
      }
    };
    walk(this.trie, this.set);
    return out;
  }

  /** Advances over token `id`'s text. */
  advance(id: number): void {
    this.set = this.nfa.run(this.set, this.texts[id] ?? '');
  }
}
