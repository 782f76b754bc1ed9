/**
 * Loading team specs: YAML with line/column for every node, `extends` chains (files or presets) merged deeply,
 * `seatDefaults` merged under every seat, validation against `schemas/team.schema.json` (defaults filled), and
 * cross-reference checks. Every problem is reported at once, as a {@link SpecError}.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, resolve } from 'node:path';
import type { ValidateFunction } from 'ajv';
import type { JsonSchema } from '../contracts/common.js';
import { createAjv, formatPath, schemaIssues, type SchemaIssue } from '../plugins/ajv.js';
import { KERNEL_ROOT } from '../plugins/kernel-info.js';
import { didYouMean } from '../plugins/suggest.js';
import { SpecError, type SpecIssue } from './errors.js';
import {
  entryOf,
  fromPlain,
  locate,
  mergeLocated,
  parseLocated,
  toPlain,
  withEntry,
  withoutKeys,
  YAML_LIMITS,
  type LNode,
  type Loc,
} from './located.js';
import { BoundedReadError, readRegularFileSync } from '../util/read-bounded.js';
import type { TeamSpec } from './types.js';

/** The file name used for specs parsed from a string without a file. */
export const EMBEDDED = '<embedded>';

/** Folder of the presets shipped with the kernel (`extends: at-grpo` reads `presets/at-grpo.yaml`). */
export const PRESETS_DIR: string = join(KERNEL_ROOT, 'presets');

/** The team spec JSON schema (`schemas/team.schema.json`). */
export const TEAM_SCHEMA: JsonSchema = JSON.parse(
  readFileSync(join(KERNEL_ROOT, 'schemas', 'team.schema.json'), 'utf8'),
) as JsonSchema;

/**
 * The allowed range of a numeric key of the team schema, by dotted path (`seed`, `evaluation.episodes`,
 * `algorithm.steps`), for command-line flags that set the same value. Throws for a path that is not a bounded number.
 */
export function teamNumberRange(path: string): { readonly minimum: number; readonly maximum: number } {
  let node = TEAM_SCHEMA as Record<string, unknown> | undefined;
  for (const key of path.split('.'))
    node = (node?.properties as Record<string, Record<string, unknown>> | undefined)?.[key];
  const { minimum, maximum } = node ?? {};
  if (typeof minimum !== 'number' || typeof maximum !== 'number')
    throw new Error(`team schema: ${path} is not a bounded number`);
  return { minimum, maximum };
}

let teamValidator: ValidateFunction | undefined;
function validator(): ValidateFunction {
  teamValidator ??= createAjv('draft-07').compile(TEAM_SCHEMA);
  return teamValidator;
}

const trees = new WeakMap<object, LNode>();

/** Names of the shipped presets. */
export function listPresets(): string[] {
  if (!existsSync(PRESETS_DIR)) return [];
  return readdirSync(PRESETS_DIR)
    .filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))
    .map((f) => f.replace(/\.ya?ml$/, ''))
    .sort();
}

/** Whether an `extends` value names a preset rather than a file. */
export function isPresetName(ref: string): boolean {
  return !ref.includes('/') && !ref.includes('\\') && !/\.(ya?ml|json)$/.test(ref) && !ref.startsWith('.');
}

/** Reads and resolves a team spec file. Throws {@link SpecError} listing every problem with file:line:col. */
export function loadTeamSpec(file: string): TeamSpec {
  const abs = resolve(file);
  const text = readSpecText(abs);
  if (typeof text !== 'string') {
    const hint = text.reason === 'missing' ? 'check the path (it is relative to the current directory)' : text.hint;
    throw new SpecError(abs, [{ file: abs, line: 0, col: 0, path: '(root)', message: text.message, hint }]);
  }
  return parseTeamSpec(text, abs);
}

/**
 * The text of a spec or preset file: a regular file of at most {@link YAML_LIMITS}.maxBytes (never a device, a FIFO
 * or a folder, which could be read forever or hang), or why it cannot be read.
 */
function readSpecText(file: string): string | { reason: BoundedReadError['reason']; message: string; hint: string } {
  try {
    return readRegularFileSync(file, YAML_LIMITS.maxBytes).toString('utf8');
  } catch (error) {
    if (!(error instanceof BoundedReadError)) throw error;
    const hint = {
      missing: 'check the path',
      'not-regular': 'name a YAML file',
      'too-large': 'a team spec is a short file: move data sets and prompts to files the plugins read',
      unreadable: 'check its permissions',
    }[error.reason];
    return { reason: error.reason, message: error.message, hint };
  }
}

/**
 * Parses and resolves a team spec from YAML text. `file` is where it came from (relative `extends` paths are
 * resolved from its folder; `<embedded>` resolves them from the current directory).
 */
export function parseTeamSpec(text: string, file: string = EMBEDDED): TeamSpec {
  const abs = file === EMBEDDED ? EMBEDDED : resolve(file);
  const issues: SpecIssue[] = [];
  let tree = loadLayers(text, abs, [abs], issues, { files: 1 });
  if (!tree || issues.length)
    throw new SpecError(
      abs,
      issues.length ? issues : [{ file: abs, line: 0, col: 0, path: '(root)', message: 'is not usable' }],
    );

  // `name` defaults to the file name.
  if (!entryOf(tree, 'name')) {
    const name = abs === EMBEDDED ? 'team' : basename(abs, extname(abs));
    tree = withEntry(tree, 'name', { keyLoc: tree.loc, value: fromPlain(name, tree.loc) });
  }
  // `seatDefaults` is merged under every seat (the seat's keys win), keeping each value's own location.
  const defaults = entryOf(tree, 'seatDefaults');
  const seats = entryOf(tree, 'seats');
  if (defaults?.value.kind === 'map' && seats?.value.kind === 'map') {
    const merged = new Map(seats.value.entries);
    for (const [seat, entry] of seats.value.entries) {
      if (entry.value.kind === 'map')
        merged.set(seat, { keyLoc: entry.keyLoc, value: mergeLocated(defaults.value, entry.value) });
      else if (entry.value.kind === 'scalar' && entry.value.value === null)
        merged.set(seat, { keyLoc: entry.keyLoc, value: defaults.value });
    }
    tree = withEntry(tree, 'seats', {
      keyLoc: seats.keyLoc,
      value: { kind: 'map', loc: seats.value.loc, entries: merged },
    });
  }

  const plain = toPlain(tree) as Record<string, unknown>;
  const validate = validator();
  if (!validate(plain)) {
    for (const issue of schemaIssues(validate.errors)) issues.push(toSpecIssue(tree, issue));
  }
  issues.push(...crossReferenceIssues(tree, plain));
  if (issues.length) throw new SpecError(abs, sortIssues(issues, abs));

  // Canonical key order (base files may have contributed keys first); `seatDefaults` and `extends` are gone.
  const ordered: Record<string, unknown> = { name: plain.name, file: abs };
  for (const key of ['seed', 'environment', 'seats', 'policies', 'rewards', 'algorithm', 'evaluation'])
    ordered[key] = plain[key];
  if (plain.execution !== undefined) ordered.execution = plain.execution;
  const spec = ordered as unknown as TeamSpec;
  trees.set(spec, tree);
  return spec;
}

/**
 * A copy of a loaded spec with some of its keys replaced (an override from a command-line flag), that still knows
 * where every other key came from: its errors keep their file:line:col.
 */
export function withSpecChanges(spec: TeamSpec, changes: Partial<Omit<TeamSpec, 'file' | 'name'>>): TeamSpec {
  const changed = { ...spec, ...changes };
  const tree = trees.get(spec);
  if (tree) trees.set(changed, tree);
  return changed;
}

/** The location of a key path of a loaded spec (the key itself with `key: true`), or undefined for foreign objects. */
export function specLocation(
  spec: TeamSpec,
  path: readonly (string | number)[],
  options: { key?: boolean } = {},
): Loc | undefined {
  const tree = trees.get(spec);
  if (!tree) return undefined;
  const found = locate(tree, path);
  return options.key && found.found && found.keyLoc ? found.keyLoc : found.loc;
}

/**
 * Builds an issue pointing at a key path of a loaded spec (its value node, or its key with `key: true`). For specs
 * not loaded by {@link parseTeamSpec} the issue carries the spec's file without a position.
 */
export function specIssue(
  spec: TeamSpec,
  path: readonly (string | number)[],
  message: string,
  hint?: string,
  options: { key?: boolean } = {},
): SpecIssue {
  const loc = specLocation(spec, path, options) ?? { file: spec.file, line: 0, col: 0 };
  return { file: loc.file, line: loc.line, col: loc.col, path: formatPath(path), message, ...(hint ? { hint } : {}) };
}

function toSpecIssue(tree: LNode, issue: SchemaIssue): SpecIssue {
  const found = locate(tree, issue.path);
  const loc = issue.unknownKey && found.keyLoc ? found.keyLoc : found.loc;
  let hint = issue.hint;
  const p = issue.path;
  if (
    issue.unknownKey &&
    p[0] === 'rewards' &&
    p[1] === 'seats' &&
    p.length === 4 &&
    !hint?.startsWith('did you mean')
  ) {
    hint = `term-specific settings go under config: rewards.seats.${String(p[2])}.config.${String(p[3])}`;
  }
  if (issue.message === 'is required' && p[0] === 'seats' && p[2] === 'sampling' && p.length === 3) {
    hint =
      'every seat states its sampling explicitly: add it to the seat, or to seatDefaults.sampling, or extend a preset (extends: at-grpo)';
  } else if (issue.message === 'is required' && p[0] === 'seats' && p[2] === 'sampling') {
    hint = `add sampling.${String(p[3])} to the seat or to seatDefaults.sampling`;
  }
  return {
    file: loc.file,
    line: loc.line,
    col: loc.col,
    path: formatPath(p),
    message: issue.message,
    ...(hint ? { hint } : {}),
  };
}

function crossReferenceIssues(tree: LNode, plain: Record<string, unknown>): SpecIssue[] {
  const issues: SpecIssue[] = [];
  const at = (path: (string | number)[], message: string, hint: string | undefined, key = false): SpecIssue => {
    const found = locate(tree, path);
    const loc = key && found.keyLoc ? found.keyLoc : found.loc;
    return { file: loc.file, line: loc.line, col: loc.col, path: formatPath(path), message, ...(hint ? { hint } : {}) };
  };
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const seats = isObj(plain.seats) ? plain.seats : {};
  const policies = isObj(plain.policies) ? Object.keys(plain.policies) : [];
  for (const [seat, entry] of Object.entries(seats)) {
    if (!isObj(entry) || typeof entry.policy !== 'string') continue;
    if (!policies.includes(entry.policy)) {
      issues.push(
        at(
          ['seats', seat, 'policy'],
          `unknown policy "${entry.policy}"`,
          didYouMean(entry.policy, policies) ??
            (policies.length ? `defined policies: ${policies.join(', ')}` : 'define it under policies'),
        ),
      );
    }
  }
  const rewards = isObj(plain.rewards) ? plain.rewards : {};
  if (isObj(rewards.seats)) {
    const names = Object.keys(seats);
    for (const seat of Object.keys(rewards.seats)) {
      if (!names.includes(seat)) {
        issues.push(
          at(
            ['rewards', 'seats', seat],
            `unknown seat "${seat}"`,
            didYouMean(seat, names) ?? `the seats are: ${names.join(', ')}`,
            true,
          ),
        );
      }
    }
  }
  const execution = isObj(plain.execution) ? plain.execution : {};
  for (const key of ['pools', 'updatePools']) {
    const pools = execution[key];
    if (!isObj(pools)) continue;
    for (const policy of Object.keys(pools)) {
      if (!policies.includes(policy)) {
        issues.push(
          at(
            ['execution', key, policy],
            `unknown policy "${policy}"`,
            didYouMean(policy, policies) ?? `the policies are: ${policies.join(', ')}`,
            true,
          ),
        );
      }
    }
  }
  return issues;
}

function sortIssues(issues: SpecIssue[], main: string): SpecIssue[] {
  return [...issues].sort(
    (a, b) =>
      (a.file === main ? 0 : 1) - (b.file === main ? 0 : 1) ||
      a.file.localeCompare(b.file) ||
      a.line - b.line ||
      a.col - b.col,
  );
}

function issueAt(loc: Loc, path: string, message: string, hint?: string): SpecIssue {
  return { file: loc.file, line: loc.line, col: loc.col, path, message, ...(hint ? { hint } : {}) };
}

/** Parses one file and merges its `extends` chain under it (recursively, with cycle detection). */
/** Most files one spec may read through `extends` (itself included), so that `extends: [b, b, b, ...]` stays bounded. */
export const MAX_EXTENDS_FILES = 32;

function loadLayers(
  text: string,
  file: string,
  chain: readonly string[],
  issues: SpecIssue[],
  read: { files: number },
): LNode | undefined {
  const parsed = parseLocated(text, file);
  issues.push(...parsed.issues);
  const root = parsed.root;
  if (!root) return undefined;
  if (root.kind !== 'map') {
    issues.push(
      issueAt(
        root.loc,
        '(root)',
        'must be a mapping of keys (name, environment, seats, ...)',
        'see schemas/team.schema.json',
      ),
    );
    return undefined;
  }
  const ext = entryOf(root, 'extends');
  let base: LNode | undefined;
  if (ext) {
    const refs: { ref: string; loc: Loc; path: string }[] = [];
    if (ext.value.kind === 'scalar' && typeof ext.value.value === 'string')
      refs.push({ ref: ext.value.value, loc: ext.value.loc, path: 'extends' });
    else if (
      ext.value.kind === 'seq' &&
      ext.value.items.every((i) => i.kind === 'scalar' && typeof i.value === 'string')
    ) {
      ext.value.items.forEach((i, n) =>
        refs.push({ ref: (i as { value: string }).value, loc: i.loc, path: `extends[${n}]` }),
      );
    } else {
      issues.push(
        issueAt(
          ext.value.loc,
          'extends',
          'must be a string or a list of strings',
          'name a preset (e.g. at-grpo) or a file relative to this one',
        ),
      );
    }
    for (const { ref, loc, path } of refs) {
      const target = resolveExtends(ref, file);
      if ('problem' in target) {
        issues.push(issueAt(loc, path, target.problem, target.hint));
        continue;
      }
      if (chain.includes(target.file)) {
        const cycle = [...chain.slice(chain.indexOf(target.file)), target.file].map((f) => basename(f)).join(' → ');
        issues.push(issueAt(loc, path, `extends cycle: ${cycle}`, 'remove one of the extends'));
        continue;
      }
      if (++read.files > MAX_EXTENDS_FILES) {
        issues.push(
          issueAt(
            loc,
            path,
            `extends reads more than ${MAX_EXTENDS_FILES} files in all`,
            'extend fewer files, or each file once',
          ),
        );
        break;
      }
      const childText = readSpecText(target.file);
      if (typeof childText !== 'string') {
        issues.push(issueAt(loc, path, `${target.file} ${childText.message}`, childText.hint));
        continue;
      }
      const child = loadLayers(childText, target.file, [...chain, target.file], issues, read);
      if (child) base = base ? mergeLocated(base, child) : child;
    }
  }
  const own = withoutKeys(root, ['extends']);
  return base ? mergeLocated(base, own) : own;
}

function resolveExtends(ref: string, fromFile: string): { file: string } | { problem: string; hint: string } {
  if (isPresetName(ref)) {
    const presets = listPresets();
    for (const ext of ['.yaml', '.yml']) {
      const file = join(PRESETS_DIR, ref + ext);
      if (existsSync(file)) return { file };
    }
    return {
      problem: `unknown preset "${ref}"`,
      hint: didYouMean(ref, presets) ?? `presets: ${presets.join(', ')}; or give a file path such as ./base.yaml`,
    };
  }
  const base = fromFile === EMBEDDED ? process.cwd() : dirname(fromFile);
  const file = isAbsolute(ref) ? ref : resolve(base, ref);
  if (!existsSync(file))
    return {
      problem: `no such file: ${ref} (looked for ${file})`,
      hint: 'paths in extends are relative to the file that names them',
    };
  return { file };
}
