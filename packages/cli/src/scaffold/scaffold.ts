/**
 * `troupe new`, as a library: copies a template folder verbatim (create-vite style), edits package.json as JSON,
 * and substitutes names only in an explicit list of marked places. Nothing is string-templated but those markers.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import YAML from 'yaml';
import { isPathLike, kernelVersion, pluginCandidates, stripVersion } from '@troupe/kernel';
import { CliError, UsageError } from '../errors.js';
import {
  CONTRIBUTES_KEY,
  defaultDirName,
  defaultPackageName,
  normalizeScope,
  shorthandOf,
  validateName,
  validatePackageName,
  type PluginTemplateKind,
  type TemplateKind,
} from './names.js';

/** Options of {@link scaffold}. */
export interface ScaffoldOptions {
  /** What to create. */
  readonly kind: TemplateKind;
  /** The NAME (validated with {@link validateName}). */
  readonly name: string;
  /** Target folder (default: `./<package name without scope>`, relative to `cwd`). */
  readonly dir?: string;
  /** npm scope of the package (`@acme` or `acme`). */
  readonly scope?: string;
  /** Package name, overriding the one derived from NAME and scope. */
  readonly packageName?: string;
  /** Semver range of `@troupe/kernel` the plugin supports (default `^<running kernel version>`). */
  readonly kernelRange?: string;
  /** Write into a non-empty folder (template files are overwritten; other files are kept). */
  readonly force?: boolean;
  /** Base folder for a relative `dir` (default: the current directory). */
  readonly cwd?: string;
  /** The folder holding the templates (default: {@link findTemplatesDir}). */
  readonly templatesDir?: string;
  /** Team template only: environment, role and reward names and the seats, written into team.yaml. */
  readonly team?: TeamChoices;
}

/** What a team template is filled with (each optional: the template's defaults stay). */
export interface TeamChoices {
  /** Environment id or shorthand. */
  readonly env?: string;
  /** Role of every seat (id or shorthand). */
  readonly role?: string;
  /** Reward id or shorthand. */
  readonly reward?: string;
  /** Seat names, in turn order (must be the environment's seats). */
  readonly seats?: readonly string[];
}

/** What {@link scaffold} created. */
export interface ScaffoldResult {
  /** The template kind. */
  readonly kind: TemplateKind;
  /** The NAME. */
  readonly name: string;
  /** The package name written into package.json. */
  readonly packageName: string;
  /** The contribution id (`NAME-v0`); undefined for teams. */
  readonly id?: string;
  /** The name a team spec uses for the plugin (`NAME`, `@scope/NAME`, or the package name). */
  readonly shorthand?: string;
  /** The kernel range written into the manifest and peerDependencies; undefined for teams. */
  readonly kernelRange?: string;
  /** Absolute path of the created folder. */
  readonly dir: string;
  /** The files written, relative to `dir`, sorted. */
  readonly files: readonly string[];
  /** Warnings (e.g. a kernel range that excludes the running kernel). */
  readonly warnings: readonly string[];
  /** Commands and hints to print after scaffolding. */
  readonly nextSteps: readonly string[];
}

/** The placeholders a template may contain, and only in the files listed in {@link MARKED_FILES}. */
export const MARKERS = ['__PACKAGE__', '__ID__', '__SHORTHAND__', '__NAME__'] as const;

/**
 * The explicit list of template files in which markers are replaced (README titles, ids in source). Every other
 * file is copied byte for byte; package.json is edited as JSON.
 */
export const MARKED_FILES: Readonly<Record<TemplateKind, readonly string[]>> = {
  env: ['README.md', 'src/environment.ts'],
  role: ['README.md', 'src/role.ts'],
  reward: ['README.md', 'src/reward.ts'],
  team: ['README.md', 'team.yaml'],
};

/** Anything that looks like a marker (`__UPPER_CASE__`): none may be left in a scaffolded package. */
export const LEFTOVER_MARKER = /__[A-Z]+(?:_[A-Z]+)*__/;

/** Template files renamed on copy (npm would drop a `.gitignore` from a published package). */
const RENAMED: Readonly<Record<string, string>> = { _gitignore: '.gitignore' };

/** Never copied from a template folder (left over from building or testing a template in place). */
const SKIPPED = new Set(['node_modules', 'dist', '.DS_Store', 'package-lock.json']);

const require = createRequire(import.meta.url);

/**
 * The templates folder: the repository's `templates/` when the CLI runs inside the Troupe repository, else the copy
 * shipped in the published `@troupe/cli` package (`<package>/templates`, copied there by its `prepack` script).
 */
export function findTemplatesDir(): string {
  const cliRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const bundled = join(cliRoot, 'templates');
  const installed = cliRoot.split(sep).includes('node_modules');
  const candidates = installed ? [bundled] : [resolve(cliRoot, '..', '..', 'templates'), bundled];
  for (const dir of candidates) if (existsSync(join(dir, 'env', 'package.json'))) return dir;
  throw new CliError(`troupe new: no templates found (looked in ${candidates.join(', ')}); reinstall @troupe/cli`);
}

/** Lists a template's files (relative paths, `/`-separated, sorted), skipping build outputs. */
export function templateFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir).sort()) {
      if (SKIPPED.has(entry) || entry.endsWith('.tsbuildinfo') || entry.endsWith('.tgz')) continue;
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(root, path).split(sep).join('/'));
    }
  };
  walk(root);
  return out;
}

/** The version of a package resolvable from the CLI, or undefined. */
function versionOf(name: string): string | undefined {
  try {
    return (require(`${name}/package.json`) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** A name as a YAML plain scalar, quoted when YAML needs it (`@acme/maze` must be quoted). */
function yamlScalar(value: string): string {
  return /^[a-z0-9][a-z0-9._/-]*$/.test(value) ? value : JSON.stringify(value);
}

/** Replaces every marker in `text`. */
function fillMarkers(text: string, values: Readonly<Record<(typeof MARKERS)[number], string>>): string {
  let out = text;
  for (const marker of MARKERS) out = out.split(marker).join(values[marker]);
  return out;
}

/** Whether a folder is missing or empty (a lone `.git` counts as empty). */
function isEmptyDir(dir: string): boolean {
  if (!existsSync(dir)) return true;
  if (!statSync(dir).isDirectory()) throw new UsageError(`--dir ${dir} exists and is not a folder`);
  return readdirSync(dir).filter((e) => e !== '.git').length === 0;
}

type Json = Record<string, unknown>;

/** Edits a plugin template's package.json (parsed) for the new package. */
function editPluginPackageJson(
  pkg: Json,
  kind: PluginTemplateKind,
  packageName: string,
  id: string,
  kernelRange: string,
  testingRange: string,
  cliRange: string,
): Json {
  pkg.name = packageName;
  pkg.version = '0.1.0';
  const manifest = pkg.troupe as { kernel: string; contributes: Record<string, { id: string }[]> };
  manifest.kernel = kernelRange;
  const declared = manifest.contributes[CONTRIBUTES_KEY[kind]];
  if (!declared || declared.length !== 1)
    throw new CliError(
      `troupe new: the ${kind} template must declare exactly one ${CONTRIBUTES_KEY[kind]} contribution`,
    );
  declared[0]!.id = id;
  pkg.peerDependencies = { ...(pkg.peerDependencies as Json | undefined), '@troupe/kernel': kernelRange };
  const dev = (pkg.devDependencies ?? {}) as Json;
  dev['@troupe/kernel'] = kernelRange;
  dev['@troupe/testing'] = testingRange;
  dev['@troupe/cli'] = cliRange; // `npx troupe test .` runs this package's CLI, never a registry package named troupe
  pkg.devDependencies = Object.fromEntries(Object.entries(dev).sort(([a], [b]) => a.localeCompare(b)));
  if (packageName.startsWith('@')) pkg.publishConfig = { ...(pkg.publishConfig as Json | undefined), access: 'public' };
  return pkg;
}

/** Edits the team template's package.json (parsed): its name and the Troupe packages it depends on. */
function editTeamPackageJson(pkg: Json, packageName: string, cliRange: string, choices: TeamChoices): Json {
  pkg.name = packageName;
  const deps = (pkg.dependencies ?? {}) as Record<string, string>;
  // A replaced plugin's package is no longer needed; the user installs the one that provides the new name.
  const replaced = { env: choices.env, role: choices.role, reward: choices.reward };
  for (const [kind, value] of Object.entries(replaced)) {
    if (value === undefined) continue;
    const kept = `@troupe/${kind}-${value.replace(/-v\d+$/, '')}`;
    for (const name of Object.keys(deps)) if (name.startsWith(`@troupe/${kind}-`) && name !== kept) delete deps[name];
  }
  for (const name of Object.keys(deps)) if (name.startsWith('@troupe/')) deps[name] = cliRange;
  pkg.dependencies = deps;
  return pkg;
}

/**
 * Applies the team choices to team.yaml as a YAML document (comments are kept), never by string replacement.
 * A new environment starts from an empty config; a new reward from an empty config; new seats copy the last
 * template seat (its seat entry and its reward mix).
 */
function editTeamYaml(text: string, file: string, choices: TeamChoices, warnings: string[]): string {
  if (!choices.env && !choices.role && !choices.reward && !choices.seats) return text;
  const doc = YAML.parseDocument(text);
  if (doc.errors.length) throw new CliError(`troupe new: the team template ${file} is not valid YAML`);
  const plain = (path: unknown[]): unknown => (doc.getIn(path) as { toJSON?: () => unknown } | undefined)?.toJSON?.();
  if (choices.env) {
    doc.setIn(['environment', 'id'], choices.env);
    doc.setIn(['environment', 'config'], doc.createNode({}));
  }
  if (choices.reward) {
    doc.setIn(['rewards', 'id'], choices.reward);
    doc.setIn(['rewards', 'config'], doc.createNode({}));
    warnings.push(
      `rewards.config in team.yaml was emptied for ${choices.reward}: fill in what its config schema needs`,
    );
  }
  const existing = Object.keys((plain(['seats']) ?? {}) as Json);
  if (choices.seats) {
    const model = existing[existing.length - 1];
    const seatValue = (model === undefined ? {} : plain(['seats', model])) as Json;
    const mixValue = model === undefined ? undefined : (plain(['rewards', 'seats', model]) as Json | undefined);
    for (const seat of existing) {
      doc.deleteIn(['seats', seat]);
      doc.deleteIn(['rewards', 'seats', seat]);
    }
    for (const seat of choices.seats) {
      doc.setIn(['seats', seat], doc.createNode(seatValue));
      if (mixValue !== undefined)
        doc.setIn(
          ['rewards', 'seats', seat],
          doc.createNode(choices.reward ? { alpha: mixValue.alpha ?? 1 } : mixValue),
        );
    }
  } else if (choices.reward) {
    for (const seat of existing)
      if (doc.getIn(['rewards', 'seats', seat, 'config'])) doc.deleteIn(['rewards', 'seats', seat, 'config']);
  }
  if (choices.role) for (const seat of choices.seats ?? existing) doc.setIn(['seats', seat, 'role'], choices.role);
  return doc.toString();
}

/** Creates a package (or team project) from a template. Throws {@link UsageError} / {@link CliError}. */
export async function scaffold(options: ScaffoldOptions): Promise<ScaffoldResult> {
  const { kind } = options;
  const name = validateName(kind, options.name);
  const scope = options.scope === undefined ? undefined : normalizeScope(options.scope);
  const packageName =
    options.packageName === undefined
      ? defaultPackageName(kind, name, scope)
      : validatePackageName(options.packageName);
  const cwd = resolve(options.cwd ?? process.cwd());
  const dir = resolve(cwd, options.dir ?? defaultDirName(packageName));
  const templatesDir = options.templatesDir ?? findTemplatesDir();
  const templateDir = join(templatesDir, kind);
  if (!existsSync(join(templateDir, 'package.json')))
    throw new CliError(`troupe new: no ${kind} template in ${templatesDir}`);
  if (!options.force && !isEmptyDir(dir)) {
    throw new UsageError(
      `${dir} is not empty; choose another --dir, or pass --force to write the template files into it`,
    );
  }
  const warnings: string[] = [];
  const running = kernelVersion();
  const kernelRange = options.kernelRange ?? `^${running}`;
  if (kind !== 'team') {
    if (semver.validRange(kernelRange) === null)
      throw new UsageError(`--kernel-range "${kernelRange}" is not a semver range (e.g. ^${running})`);
    if (!semver.satisfies(running, kernelRange)) {
      warnings.push(
        `the kernel range ${kernelRange} excludes the running @troupe/kernel ${running}: this kernel will refuse to load the plugin`,
      );
    }
  }
  const testingRange = `^${versionOf('@troupe/testing') ?? running}`;
  const cliRange = `^${versionOf('@troupe/cli') ?? running}`;
  const id = kind === 'team' ? undefined : `${name}-v0`;
  const shorthand = kind === 'team' ? undefined : shorthandOf(kind, packageName);
  const values = {
    __PACKAGE__: packageName,
    __ID__: id ?? name,
    __SHORTHAND__: shorthand ?? name,
    __NAME__: name,
  };

  const files = templateFiles(templateDir);
  const marked = new Set(MARKED_FILES[kind]);
  const written: string[] = [];
  let teamDeps: Json = {};
  await mkdir(dir, { recursive: true });
  for (const file of files) {
    const source = join(templateDir, file);
    const base = file.split('/').pop()!;
    const targetRel = base in RENAMED ? [...file.split('/').slice(0, -1), RENAMED[base]!].join('/') : file;
    const target = join(dir, targetRel);
    await mkdir(dirname(target), { recursive: true });
    if (file === 'package.json') {
      const pkg = JSON.parse(await readFile(source, 'utf8')) as Json;
      const edited =
        kind === 'team'
          ? editTeamPackageJson(pkg, packageName, cliRange, options.team ?? {})
          : editPluginPackageJson(pkg, kind, packageName, id!, kernelRange, testingRange, cliRange);
      if (kind === 'team') teamDeps = (edited.dependencies ?? {}) as Json;
      await writeFile(target, `${JSON.stringify(edited, null, 2)}\n`);
    } else if (marked.has(file)) {
      let text = fillMarkers(await readFile(source, 'utf8'), values);
      if (kind === 'team' && file === 'team.yaml' && options.team)
        text = editTeamYaml(text, source, options.team, warnings);
      await writeFile(target, text);
    } else {
      await copyFile(source, target);
    }
    written.push(targetRel);
  }
  for (const file of written) {
    const left = LEFTOVER_MARKER.exec(readFileSync(join(dir, file), 'utf8'))?.[0];
    if (left)
      throw new CliError(
        `troupe new: template bug: ${join(dir, file)} still contains ${left} (add the file to MARKED_FILES.${kind})`,
      );
  }
  const shown = relative(cwd, dir) || '.';
  const nextSteps =
    kind === 'team'
      ? [
          `cd ${shown}`,
          ...(['env', 'role', 'reward'] as const).flatMap((k) => pluginStep(k, options.team?.[k], dir, teamDeps)),
          'npm install',
          'npx troupe validate team.yaml',
          'npx troupe run team.yaml --episodes 5 --policy oracle',
        ]
      : [
          `cd ${shown}`,
          'npm install',
          'npm run build',
          'npm test',
          'npx troupe test .',
          `use it in a team spec: ${kind === 'env' ? `environment: { id: ${yamlScalar(shorthand!)} }` : kind === 'role' ? `seats: { <seat>: { role: ${yamlScalar(shorthand!)} } }` : `rewards: { id: ${yamlScalar(shorthand!)} }`}` +
            ` (resolved as ${shorthand} → ${packageName} → ${id})`,
          'publish: npm publish',
        ];
  return {
    kind,
    name,
    packageName,
    ...(id ? { id, shorthand, kernelRange } : {}),
    dir,
    files: written.sort(),
    warnings,
    nextSteps,
  };
}

/**
 * The next step that makes a team's chosen plugin available, if one is needed: a folder (`./maze`, relative to
 * team.yaml) is created with `troupe new`; a package the team does not depend on yet is installed (a name the
 * resolver expands is shown as its official and community package names).
 */
function pluginStep(kind: 'env' | 'role' | 'reward', value: string | undefined, dir: string, deps: Json): string[] {
  if (value === undefined) return [];
  if (isPathLike(value)) {
    if (existsSync(join(resolve(dir, value), 'package.json'))) return [];
    return [
      `create the ${kind} plugin in ${value} (relative to team.yaml): npx troupe new ${kind} ${basename(value)} --dir ${value}`,
    ];
  }
  const name = stripVersion(value);
  if (Object.keys(deps).includes(`@troupe/${kind}-${name}`)) return [];
  const candidates = pluginCandidates(kind, name).filter(
    (c) => c !== name || name.startsWith('@') || name.startsWith('troupe-'),
  );
  return [
    `npm install the package that provides ${kind} "${value}" (${candidates.length > 1 ? `${candidates.join(' or ')}` : candidates[0]})`,
  ];
}
