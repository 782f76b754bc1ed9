/**
 * YAML documents as trees that remember where every node came from (file, line, column), so that a spec merged
 * from several files (`extends`) can still point each error at the right line.
 */
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node as YamlNode } from 'yaml';
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
  | { readonly kind: 'map'; readonly loc: Loc; readonly entries: Map<string, { readonly keyLoc: Loc; readonly value: LNode }> }
  | { readonly kind: 'seq'; readonly loc: Loc; readonly items: readonly LNode[] }
  | { readonly kind: 'scalar'; readonly loc: Loc; readonly value: unknown };

/** Parses YAML text into a located tree. Syntax errors become issues; the tree is undefined when the text is unusable. */
export function parseLocated(text: string, file: string): { root?: LNode; issues: SpecIssue[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: true });
  const at = (offset: number | undefined): Loc => {
    if (offset === undefined) return { file, line: 0, col: 0 };
    const { line, col } = lineCounter.linePos(offset);
    return { file, line, col };
  };
  const issues: SpecIssue[] = doc.errors.map((e) => {
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
  return { root: convert(doc, doc.contents as YamlNode, at, new Set()), issues };
}

function convert(doc: Document, node: YamlNode | null, at: (offset: number | undefined) => Loc, seen: Set<YamlNode>, fallback?: Loc): LNode {
  if (node === null || node === undefined) return { kind: 'scalar', loc: fallback ?? at(undefined), value: null };
  if (isAlias(node)) {
    const target = node.resolve(doc) as YamlNode | undefined;
    if (!target || seen.has(target)) return { kind: 'scalar', loc: at(node.range?.[0]), value: null };
    return convert(doc, target, at, new Set([...seen, target]));
  }
  const loc = at(node.range?.[0]);
  if (isMap(node)) {
    const entries = new Map<string, { keyLoc: Loc; value: LNode }>();
    for (const pair of node.items) {
      const keyNode = pair.key as YamlNode | null;
      const key = isScalar(keyNode) ? String(keyNode.value) : String(keyNode);
      const keyLoc = at(keyNode?.range?.[0]);
      const valueFallback = at((keyNode?.range?.[1]) ?? undefined);
      entries.set(key, { keyLoc, value: convert(doc, pair.value as YamlNode | null, at, seen, valueFallback) });
    }
    return { kind: 'map', loc, entries };
  }
  if (isSeq(node)) {
    return { kind: 'seq', loc, items: node.items.map((item) => convert(doc, item as YamlNode | null, at, seen, loc)) };
  }
  return { kind: 'scalar', loc, value: isScalar(node) ? node.value : null };
}

/** Builds a located tree from a plain value (every node at `loc`), for defaults injected by code. */
export function fromPlain(value: unknown, loc: Loc): LNode {
  if (Array.isArray(value)) return { kind: 'seq', loc, items: value.map((v) => fromPlain(v, loc)) };
  if (typeof value === 'object' && value !== null) {
    return { kind: 'map', loc, entries: new Map(Object.entries(value).map(([k, v]) => [k, { keyLoc: loc, value: fromPlain(v, loc) }])) };
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
      for (const [key, { value }] of node.entries) out[key] = toPlain(value);
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
