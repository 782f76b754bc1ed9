/**
 * Constrained decoding for role grammars (`OutputGrammar`): a small regex → NFA compiler (Thompson construction)
 * and token masks. `choices` compile to an alternation of literals. Supported regex syntax: literals, escapes
 * (`\d \w \s \D \W \S \n \t \r` and escaped punctuation), `.`, character classes with ranges and negation, groups
 * `( )` / `(?: )`, `|`, and the quantifiers `* + ? {n} {n,} {n,m}` (lazy `?` suffixes are accepted and ignored);
 * `^`/`$` at the ends are accepted (the match is anchored anyway). Look-arounds and back-references are not supported
 * and throw `GrammarError`.
 *
 * Masks. The NFA's state sets are interned as the states of a lazily built DFA. A state's mask — the tokens whose
 * text keeps the completion a feasible prefix of a match — is found once, by walking a trie of the vocabulary's token
 * texts (only the branches the grammar lets through), and kept per (grammar, token texts, vocabulary size)
 * ({@link GrammarTable}); every later visit is a map lookup, so a step's cost does not grow with the vocabulary
 * (Qwen3's 151,669 texts) once its state has been seen. Grammars visit few distinct states.
 *
 * Budget. With `b` tokens left (the one being chosen included), a token is allowed only when, after it, a complete
 * match is reachable within `b - 1` more tokens. The distance is exact: the fewest vocabulary tokens whose texts take
 * the state to a match, by a breadth-first search over DFA states at token boundaries (memoised; never searched past
 * the budget). The guarantee: when the empty completion can be completed within `maxNewTokens` tokens, every step
 * keeps that true, so a sample that runs out of budget (`length`) ends on a complete match — never on an unfinishable
 * prefix; it may also end earlier on EOS (allowed once the text matches), a stop string, or an abort. When it cannot
 * (the budget is shorter than the shortest completion), the mask is the plain feasibility mask, as without a budget,
 * and the sample ends with `length` on a prefix. Token texts are each token decoded alone (as before: a tokenizer
 * whose texts change in context can still break a match).
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

/**
 * A compiled NFA over UTF-16 code units. The state sets it reaches are interned as the states of a lazily built DFA
 * (id 0 is the dead, empty set), so a walk over many token texts steps by a map lookup per character.
 */
export class Nfa {
  /** States; index 0.. */
  readonly states: NState[] = [];
  /** Start state. */
  start = 0;
  private readonly setIds = new Map<string, number>([['', 0]]);
  private readonly sets: number[][] = [[]];
  private readonly trans: Map<number, number>[] = [new Map()];
  private readonly acc: boolean[] = [false];

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

  /** The DFA id of a (closed, sorted) state set; 0 for the empty set. */
  idOf(set: readonly number[]): number {
    const key = set.join(',');
    let id = this.setIds.get(key);
    if (id === undefined) {
      id = this.sets.length;
      this.setIds.set(key, id);
      this.sets.push([...set]);
      this.trans.push(new Map());
      this.acc.push(set.some((s) => this.states[s]!.kind === 'match'));
    }
    return id;
  }

  /** The state set of DFA id `id`. */
  setOf(id: number): readonly number[] {
    return this.sets[id]!;
  }

  /** The DFA id after reading code unit `c` from DFA id `id` (0: dead). Memoised. */
  next(id: number, c: number): number {
    const m = this.trans[id]!;
    const hit = m.get(c);
    if (hit !== undefined) return hit;
    const out: number[] = [];
    for (const s of this.sets[id]!) {
      const st = this.states[s]!;
      if (st.kind === 'char' && st.pred(c)) out.push(st.out);
    }
    const to = out.length ? this.idOf(this.closure(out)) : 0;
    m.set(c, to);
    return to;
  }

  /** The DFA id after reading `text` from DFA id `id`. */
  nextText(id: number, text: string): number {
    for (let i = 0; i < text.length && id !== 0; i++) id = this.next(id, text.charCodeAt(i));
    return id;
  }

  /** Whether DFA id `id`'s set contains the match state. */
  acceptsId(id: number): boolean {
    return this.acc[id]!;
  }

  /** The state set after reading code unit `c` (empty: dead). */
  step(set: readonly number[], c: number): number[] {
    return [...this.sets[this.next(this.idOf(set), c)]!];
  }

  /** The state set after reading `text` from `set`. */
  run(set: readonly number[], text: string): number[] {
    return [...this.sets[this.nextText(this.idOf(set), text)]!];
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

const compiled = new Map<string, Nfa>();
const COMPILED_MAX = 64;

/**
 * {@link compileGrammar}, cached by the grammar's content (the last {@link COMPILED_MAX} grammars), so repeated
 * generations with one grammar share its NFA and, through it, its token masks.
 */
export function cachedGrammar(g: OutputGrammar): Nfa {
  const key = JSON.stringify(
    g.kind === 'choices' ? ['choices', g.choices] : [g.kind, (g as { pattern?: unknown }).pattern],
  );
  let nfa = compiled.get(key);
  if (nfa) {
    compiled.delete(key);
    compiled.set(key, nfa);
    return nfa;
  }
  nfa = compileGrammar(g);
  compiled.set(key, nfa);
  if (compiled.size > COMPILED_MAX) compiled.delete(compiled.keys().next().value!);
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

/** The tokens allowed from one DFA state, as the trie walk lists them, and where each leads. */
interface Expansion {
  /** Allowed token ids (below the table's limit), in trie-walk order. */
  readonly ids: readonly number[];
  /** The DFA id after each of `ids`. */
  readonly succ: Int32Array;
  /** The distinct values of `succ`. */
  readonly next: readonly number[];
  /** Masks under a binding budget, by the largest distance-to-finish they allow. */
  readonly masks: Map<number, readonly number[]>;
}

/**
 * The token masks of one grammar over one vocabulary (token texts, ids below `limit`), built lazily per DFA state
 * and kept: a state's first visit walks the vocabulary trie once; later visits are a map lookup. Also the distance
 * to finish of each state: the fewest tokens whose texts take it to a complete match.
 */
export class GrammarTable {
  private readonly trie: TrieNode;
  private readonly expansions = new Map<number, Expansion>();
  /** Exact distances (`Infinity`: no sequence of tokens finishes). */
  private readonly exact = new Map<number, number>();
  /** Lower bounds of distances not known exactly. */
  private readonly atLeast = new Map<number, number>();

  constructor(
    /** The grammar's NFA. */
    readonly nfa: Nfa,
    /** Token texts by id. */
    readonly texts: readonly string[],
    /** Ids at or above this are never allowed (the model's vocabulary size). */
    readonly limit: number,
  ) {
    this.trie = tokenTrie(texts);
  }

  /** The tokens allowed from DFA state `id` (walks the trie on the first visit). */
  expand(id: number): Expansion {
    let e = this.expansions.get(id);
    if (e) return e;
    const ids: number[] = [];
    const succ: number[] = [];
    const nfa = this.nfa,
      limit = this.limit;
    const walk = (node: TrieNode, from: number): void => {
      for (const [c, child] of node.children) {
        const to = nfa.next(from, c);
        if (to === 0) continue;
        for (const t of child.ids)
          if (t < limit) {
            ids.push(t);
            succ.push(to);
          }
        if (child.children.size) walk(child, to);
      }
    };
    if (id !== 0) walk(this.trie, id);
    e = { ids, succ: Int32Array.from(succ), next: [...new Set(succ)], masks: new Map() };
    this.expansions.set(id, e);
    return e;
  }

  /**
   * The fewest tokens that take DFA state `id` to a complete match, when that is at most `cap`; `Infinity`
   * otherwise. A breadth-first search over token steps (states that already match, or whose distance is known, are
   * not searched past), memoised.
   */
  distance(id: number, cap: number): number {
    if (this.nfa.acceptsId(id)) return 0;
    if (id === 0) return Infinity;
    const known = this.exact.get(id);
    if (known !== undefined) return known <= cap ? known : Infinity;
    if ((this.atLeast.get(id) ?? 0) > cap) return Infinity;
    let frontier = [id];
    const seen = new Set(frontier);
    let level = 0,
      best = Infinity;
    while (frontier.length && level + 1 < best && level < cap) {
      level++;
      const next: number[] = [];
      for (const x of frontier)
        for (const z of this.expand(x).next) {
          if (seen.has(z)) continue;
          seen.add(z);
          if (this.nfa.acceptsId(z)) best = Math.min(best, level);
          else {
            const e = this.exact.get(z);
            if (e !== undefined) best = Math.min(best, level + e);
            else next.push(z);
          }
        }
      frontier = next;
    }
    if (frontier.length && level + 1 < best) {
      // stopped at the cap: every path within it was searched
      this.atLeast.set(id, cap + 1);
      return Infinity;
    }
    this.exact.set(id, best);
    return best <= cap ? best : Infinity;
  }

  /**
   * The tokens allowed from DFA state `id` with `budget` tokens left (this one included): those after which a
   * complete match is still reachable within `budget - 1` more tokens — unless no token (and no end of sequence
   * when `id` already matches) keeps that possible, then every token that keeps a match reachable at all.
   */
  allowed(id: number, budget: number = Infinity): readonly number[] {
    const e = this.expand(id);
    if (!(budget < Infinity) || e.next.length === 0) return e.ids;
    const k = budget - 1;
    let key = -1;
    let all = true;
    const dist = new Map<number, number>();
    for (const z of e.next) {
      const d = this.distance(z, k);
      dist.set(z, d);
      if (d <= k) key = Math.max(key, d);
      else all = false;
    }
    if (all) return e.ids;
    if (key < 0) return this.nfa.acceptsId(id) ? [] : e.ids;
    let mask = e.masks.get(key);
    if (!mask) {
      const m: number[] = [];
      for (let i = 0; i < e.ids.length; i++) if (dist.get(e.succ[i]!)! <= key) m.push(e.ids[i]!);
      mask = m;
      e.masks.set(key, mask);
    }
    return mask;
  }
}

const tables = new WeakMap<Nfa, WeakMap<readonly string[], Map<number, GrammarTable>>>();

/** The {@link GrammarTable} of `nfa` over `texts` below `limit`, shared by every cursor that asks for the same. */
export function grammarTable(nfa: Nfa, texts: readonly string[], limit: number = texts.length): GrammarTable {
  let byTexts = tables.get(nfa);
  if (!byTexts) tables.set(nfa, (byTexts = new WeakMap()));
  let byLimit = byTexts.get(texts);
  if (!byLimit) byTexts.set(texts, (byLimit = new Map()));
  let t = byLimit.get(limit);
  if (!t) byLimit.set(limit, (t = new GrammarTable(nfa, texts, limit)));
  return t;
}

/**
 * The constrained decoder's state for one sample: the grammar's DFA state after the text so far. `allowed(budget)`
 * lists the tokens that keep it feasible (within the budget when it can), and `complete` says whether the text so
 * far is a complete match (then EOS is allowed).
 */
export class GrammarCursor {
  private state: number;
  /** The grammar's NFA. */
  readonly nfa: Nfa;
  private readonly table: GrammarTable;

  /** A cursor at the empty completion; token ids at or above `limit` (default: all texts) are never allowed. */
  constructor(nfa: Nfa, texts: readonly string[], limit: number = texts.length) {
    this.nfa = nfa;
    this.table = grammarTable(nfa, texts, limit);
    this.state = nfa.idOf(nfa.initial());
  }

  /** Whether the text so far matches the whole grammar. */
  get complete(): boolean {
    return this.nfa.acceptsId(this.state);
  }

  /** The fewest tokens that complete the match from here (`Infinity` when none do). */
  get distance(): number {
    return this.table.distance(this.state, Infinity);
  }

  /**
   * Token ids that keep the completion a feasible prefix, in the vocabulary trie's order; with `budget` (tokens
   * left, this one included) only those that still let it complete within the budget, when any do (see the module
   * comment). The array is shared: do not change it.
   */
  allowed(budget: number = Infinity): readonly number[] {
    return this.table.allowed(this.state, budget);
  }

  /** Advances over token `id`'s text. */
  advance(id: number): void {
    this.state = this.nfa.nextText(this.state, this.table.texts[id] ?? '');
  }
}
