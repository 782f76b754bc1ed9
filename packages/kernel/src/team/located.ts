/**
 * YAML documents as trees that remember where every node came from (file, line, column), so that a spec merged
 * from several files (`extends`) can still point each error at the right line.
 */
import {
  isAlias,
  isCollection,
  isMap,
  isScalar,
  isSeq,
  Lexer,
  LineCounter,
  parseDocument,
  visit,
  type Document,
  type Node as YamlNode,
} from 'yaml';
import { formatPath } from '../plugins/ajv.js';
import type { SpecIssue } from './errors.js';

/** A source position (1-based line and column). */
export interface Loc {
  /** File the node was read from. */
  readonly file: string;
  /** 1-based line. */
  readonly line: number;
  /** 1-based column. */
  readonly col: number;
}

/** A YAML value with its location; maps also keep the location of each key. */
export type LNode =
  | {
      readonly kind: 'map';
      readonly loc: Loc;
      readonly entries: Map<string, { readonly keyLoc: Loc; readonly value: LNode }>;
    }
  | { readonly kind: 'seq'; readonly loc: Loc; readonly items: readonly LNode[] }
  | { readonly kind: 'scalar'; readonly loc: Loc; readonly value: unknown };

/**
 * Limits that keep a hostile YAML file from exhausting memory or the stack: the text size, the nesting depth, and
 * how far aliases may expand (the YAML library's own `maxAliasCount`, plus a cap on the nodes aliases produce, since a
 * few aliases of one large anchor expand as much as a "billion laughs").
 */
export const YAML_LIMITS = {
  /** Largest YAML text, in bytes (a spec or a preset). */
  maxBytes: 1 << 20,
  /** Deepest nesting of maps and lists. */
  maxDepth: 64,
  /** Most values (scalars, maps and lists) in one file: the YAML parser slows down on very long lists. */
  maxValues: 20_000,
  /** The YAML library's `maxAliasCount`: alias uses, weighted by the aliases inside what they point to. */
  maxAliasCount: 100,
  /** Most nodes produced by expanding aliases, in one file. */
  maxAliasNodes: 10_000,
} as const;

/** A key that would set an object's prototype when the spec becomes a plain object. */
const FORBIDDEN_KEY = '__proto__';

class LimitExceeded extends Error {
  constructor(readonly issue: SpecIssue) {
    super(issue.message);
  }
}

/** Parses YAML text into a located tree. Syntax errors become issues; the tree is undefined when the text is unusable. */
export function parseLocated(text: string, file: string): { root?: LNode; issues: SpecIssue[] } {
  const lineCounter = new LineCounter();
  const limitIssue = (line: number, col: number, message: string, hint: string): SpecIssue => ({
    file,
    line,
    col,
    path: '(root)',
    message,
    hint,
  });
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > YAML_LIMITS.maxBytes) {
    return {
      issues: [
        limitIssue(
          0,
          0,
          `is ${bytes} bytes, over the limit of ${YAML_LIMITS.maxBytes / (1 << 20)} MB for a spec`,
          'a team spec is a short file: move data sets and prompts to files the plugins read',
        ),
      ],
    };
  }
  const shape = shapeProblem(text);
  if (shape) {
    const before = text.slice(0, shape.offset);
    const line = before.split('\n').length;
    const col = shape.offset - before.lastIndexOf('\n');
    return { issues: [limitIssue(line, col, shape.message, shape.hint)] };
  }
  let doc: Document;
  try {
    doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: true });
  } catch (err) {
    // The YAML library recurses per level of nesting; deep block nesting that the flow check cannot see lands here.
    if (!(err instanceof RangeError)) throw err;
    return { issues: [limitIssue(0, 0, 'nesting is too deep to parse', 'flatten the structure')] };
  }
  const at = (offset: number | undefined): Loc => {
    if (offset === undefined) return { file, line: 0, col: 0 };
    const { line, col } = lineCounter.linePos(offset);
    return { file, line, col };
  };
  // One mistake often yields several errors at the same place (`a: b: c` is both a nested compact mapping and a
  // multi-line implicit key): the first error on a line says it; the others repeat it.
  const lines = new Set<number>();
  const errors = doc.errors.filter((e) => {
    const line = e.linePos?.[0]?.line ?? 0;
    return lines.has(line) ? false : (lines.add(line), true);
  });
  const issues: SpecIssue[] = errors.map((e) => {
    const pos = e.linePos?.[0];
    return {
      file,
      line: pos?.line ?? 0,
      col: pos?.col ?? 0,
      path: '(root)',
      message: `YAML syntax error: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?\s*$/, '')}`,
      hint: 'fix the YAML syntax (indentation, quotes, colons)',
    };
  });
  if (issues.length) return { issues };
  if (doc.contents === null) {
    return { root: { kind: 'map', loc: at(0), entries: new Map() }, issues };
  }
  const bomb = aliasBomb(doc);
  if (bomb) {
    const { line, col } = at(bomb.range?.[0]);
    return {
      issues: [
        limitIssue(
          line,
          col,
          `aliases expand too much: more than the ${YAML_LIMITS.maxAliasCount} alias uses the YAML reader allows`,
          'write the values out, or use fewer aliases of aliases',
        ),
      ],
    };
  }
  try {
    const state: ConvertState = { aliasNodes: 0, issues };
    const root = convert(doc, doc.contents as YamlNode, at, new Set(), state, []);
    return issues.length ? { issues } : { root, issues };
  } catch (err) {
    if (err instanceof LimitExceeded) return { issues: [err.issue] };
    throw err;
  }
}

/**
 * Where the text nests deeper than the limit or holds too many values, if it does, found by the YAML lexer (which
 * does not recurse, unlike the parser and the composer: deep nesting there overflows the stack or, for compact block
 * sequences such as `- - - - a`, exhausts memory beyond recovery; and the parser takes seconds on a list of a few
 * hundred thousand items). Flow collections are counted bracket by bracket. Block collections are bounded by
 * indentation: each nested one starts at a greater column than the one holding it (a list under a key may share the
 * key's column, so this allows up to twice the limit; the conversion reports the exact place).
 */
function shapeProblem(text: string): { offset: number; message: string; hint: string } | undefined {
  const tooDeep = (offset: number) => ({
    offset,
    message: `nesting is deeper than ${YAML_LIMITS.maxDepth} levels`,
    hint: 'flatten the structure',
  });
  let values = 0;
  let flow = 0;
  let offset = 0;
  let lineStart = 0;
  let atLineStart = true;
  const columns: number[] = [];
  const open = (col: number): boolean => {
    while (columns.length > 0 && columns[columns.length - 1]! >= col) columns.pop();
    columns.push(col);
    return columns.length > YAML_LIMITS.maxDepth;
  };
  for (const token of new Lexer().lex(text)) {
    // Every scalar is announced by the scalar marker; every collection by a bracket or a block indicator.
    if (token === '\x1f' || token === '[' || token === '{' || token === '-' || token === '?') {
      if (++values > YAML_LIMITS.maxValues) {
        return {
          offset,
          message: `holds more than ${YAML_LIMITS.maxValues} values`,
          hint: 'a team spec is a short file: move data sets and prompts to files the plugins read',
        };
      }
    }
    // Control tokens (document start, flow end, scalar marker) are single characters that are not in the source.
    if (token.length === 1 && (token === '\x02' || token === '\x18' || token === '\x1f')) continue;
    if (token === '[' || token === '{') {
      if (++flow > YAML_LIMITS.maxDepth) return tooDeep(offset);
    } else if (token === ']' || token === '}') {
      flow = Math.max(0, flow - 1);
    }
    if (token[0] === '\n' || token[0] === '\r') {
      atLineStart = true;
      lineStart = offset + token.length;
    } else if (flow === 0 && token.trim() !== '' && token[0] !== '#') {
      if ((atLineStart || token === '-' || token === '?') && open(offset - lineStart)) return tooDeep(offset);
      atLineStart = false;
    }
    offset += token.length;
  }
  return undefined;
}

/**
 * Runs the YAML library's alias-count check (`maxAliasCount`); when it refuses the document, returns the alias to
 * point at: the first one that points at something that itself holds aliases (where the expansion multiplies), or
 * else the first alias.
 */
function aliasBomb(doc: Document): YamlNode | undefined {
  try {
    doc.toJS({ maxAliasCount: YAML_LIMITS.maxAliasCount });
    return undefined;
  } catch (err) {
    // Anything else toJS might object to is left to the conversion below, which reports it in place.
    if (!(err instanceof ReferenceError && /alias count/i.test(err.message))) return undefined;
  }
  let first: YamlNode | undefined;
  let nested: YamlNode | undefined;
  visit(doc, {
    Alias(_key, alias) {
      first ??= alias;
      const target = alias.resolve(doc);
      let holdsAliases = false;
      if (isCollection(target))
        visit(target, {
          Alias: () => {
            holdsAliases = true;
            return visit.BREAK;
          },
        });
      if (holdsAliases) {
        nested = alias;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return nested ?? first ?? (doc.contents as YamlNode);
}

interface ConvertState {
  /** Nodes produced so far by expanding aliases. */
  aliasNodes: number;
  /** The alias being expanded (the outermost one), when the node being converted lies inside an expansion. */
  alias?: Loc;
  /** Problems that do not stop the conversion (forbidden keys). */
  readonly issues: SpecIssue[];
}

function convert(
  doc: Document,
  node: YamlNode | null,
  at: (offset: number | undefined) => Loc,
  seen: Set<YamlNode>,
  state: ConvertState,
  path: readonly (string | number)[],
  fallback?: Loc,
): LNode {
  const here = (): Loc => (node?.range ? at(node.range[0]) : (fallback ?? at(undefined)));
  if (path.length > YAML_LIMITS.maxDepth) {
    throw new LimitExceeded({
      ...here(),
      path: `${formatPath(path.slice(0, 4))}…`,
      message: `nesting is deeper than ${YAML_LIMITS.maxDepth} levels`,
      hint: 'flatten the structure',
    });
  }
  if (state.alias && ++state.aliasNodes > YAML_LIMITS.maxAliasNodes) {
    throw new LimitExceeded({
      ...state.alias,
      path: formatPath(path),
      message: `aliases expand to more than ${YAML_LIMITS.maxAliasNodes} values`,
      hint: 'write the values out, or alias smaller parts',
    });
  }
  if (node === null || node === undefined) return { kind: 'scalar', loc: fallback ?? at(undefined), value: null };
  if (isAlias(node)) {
    const target = node.resolve(doc) as YamlNode | undefined;
    if (!target || seen.has(target)) return { kind: 'scalar', loc: at(node.range?.[0]), value: null };
    const outer = state.alias;
    state.alias ??= at(node.range?.[0]);
    try {
      return convert(doc, target, at, new Set([...seen, target]), state, path, at(node.range?.[0]));
    } finally {
      state.alias = outer;
    }
  }
  const loc = at(node.range?.[0]);
  if (isMap(node)) {
    const entries = new Map<string, { keyLoc: Loc; value: LNode }>();
    for (const pair of node.items) {
      const keyNode = pair.key as YamlNode | null;
      const key = isScalar(keyNode) ? String(keyNode.value) : String(keyNode);
      const keyLoc = at(keyNode?.range?.[0]);
      if (key === FORBIDDEN_KEY) {
        state.issues.push({
          ...keyLoc,
          path: formatPath([...path, key]),
          message: `the key ${FORBIDDEN_KEY} is not allowed`,
          hint: 'remove it: no spec key has this name',
        });
        continue;
      }
      const valueFallback = at(keyNode?.range?.[1] ?? undefined);
      entries.set(key, {
        keyLoc,
        value: convert(doc, pair.value as YamlNode | null, at, seen, state, [...path, key], valueFallback),
      });
    }
    return { kind: 'map', loc, entries };
  }
  if (isSeq(node)) {
    return {
      kind: 'seq',
      loc,
      items: node.items.map((item, i) => convert(doc, item as YamlNode | null, at, seen, state, [...path, i], loc)),
    };
  }
  return { kind: 'scalar', loc, value: isScalar(node) ? node.value : null };
}

/** Builds a located tree from a plain value (every node at `loc`), for defaults injected by code. */
export function fromPlain(value: unknown, loc: Loc): LNode {
  if (Array.isArray(value)) return { kind: 'seq', loc, items: value.map((v) => fromPlain(v, loc)) };
  if (typeof value === 'object' && value !== null) {
    return {
      kind: 'map',
      loc,
      entries: new Map(Object.entries(value).map(([k, v]) => [k, { keyLoc: loc, value: fromPlain(v, loc) }])),
    };
  }
  return { kind: 'scalar', loc, value };
}

/** Deep merge: maps merge key by key (overlay wins); sequences and scalars from `overlay` replace. */
export function mergeLocated(base: LNode, overlay: LNode): LNode {
  if (base.kind !== 'map' || overlay.kind !== 'map') return overlay;
  const entries = new Map(base.entries);
  for (const [key, entry] of overlay.entries) {
    const prev = entries.get(key);
    entries.set(key, prev ? { keyLoc: entry.keyLoc, value: mergeLocated(prev.value, entry.value) } : entry);
  }
  return { kind: 'map', loc: overlay.loc, entries };
}

/** The plain JavaScript value of a located tree. */
export function toPlain(node: LNode): unknown {
  switch (node.kind) {
    case 'map': {
      const out: Record<string, unknown> = {};
      // defineProperty: an own key even for names like __proto__, never a prototype change.
      for (const [key, { value }] of node.entries)
        Object.defineProperty(out, key, {
          value: toPlain(value),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      return out;
    }
    case 'seq':
      return node.items.map(toPlain);
    default:
      return node.value;
  }
}

/**
 * Where a key path points: the value node's location, the key's location (for map entries), and whether the
 * whole path exists (when it does not, the deepest existing node is returned).
 */
export function locate(root: LNode, path: readonly (string | number)[]): { loc: Loc; keyLoc?: Loc; found: boolean } {
  let node = root;
  let keyLoc: Loc | undefined;
  for (const seg of path) {
    if (node.kind === 'map') {
      const entry = node.entries.get(String(seg));
      if (!entry) return { loc: node.loc, ...(keyLoc ? { keyLoc } : {}), found: false };
      keyLoc = entry.keyLoc;
      node = entry.value;
    } else if (node.kind === 'seq' && typeof seg === 'number' && seg < node.items.length) {
      node = node.items[seg]!;
      keyLoc = undefined;
    } else {
      return { loc: node.loc, ...(keyLoc ? { keyLoc } : {}), found: false };
    }
  }
  return { loc: node.loc, ...(keyLoc ? { keyLoc } : {}), found: true };
}

/** The entry of a map node, if the node is a map with that key. */
export function entryOf(node: LNode | undefined, key: string): { keyLoc: Loc; value: LNode } | undefined {
  return node?.kind === 'map' ? node.entries.get(key) : undefined;
}

/** A copy of a map node without some keys. */
export function withoutKeys(node: LNode, keys: readonly string[]): LNode {
  if (node.kind !== 'map') return node;
  const entries = new Map(node.entries);
  for (const k of keys) entries.delete(k);
  return { kind: 'map', loc: node.loc, entries };
}

/** A copy of a map node with one entry set. */
export function withEntry(node: LNode, key: string, entry: { keyLoc: Loc; value: LNode }): LNode {
  if (node.kind !== 'map') return node;
  const entries = new Map(node.entries);
  entries.set(key, entry);
  return { kind: 'map', loc: node.loc, entries };
}
