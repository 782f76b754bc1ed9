/**
 * Finding plugin packages: Docusaurus-style shorthand names (`sokoban` → `@troupe/env-sokoban`), lookup from a
 * list of base folders, and discovery of every installed plugin for `troupe plugins ls`. Reads package.json files
 * only; never imports plugin code.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import type { PluginManifest } from '../contracts/manifest.js';
import { PluginError } from './errors.js';
import { KERNEL_ROOT } from './kernel-info.js';
import { checkCompatibility, readPluginPackage } from './manifest.js';
import { didYouMean } from './suggest.js';

/** Plugin kinds as used in package names (`@troupe/env-x`, `@troupe/role-x`, ...). */
export type PluginKind = 'env' | 'role' | 'reward' | 'policy';

/** Manifest `contributes` key of each plugin kind. */
export const KIND_TO_CONTRIBUTION = {
  env: 'environments',
  role: 'roles',
  reward: 'rewards',
  policy: 'policies',
} as const;

/**
 * Official packages whose contributions are not named after them, by plugin kind: contribution → package.
 * `PluginHost.ensure` loads the package directly when it is installed (no scan of the installed manifests), and the
 * missing-plugin hint names it when it is not.
 */
export const OFFICIAL_PROVIDERS: Readonly<Partial<Record<PluginKind, Readonly<Record<string, string>>>>> = {
  policy: {
    oracle: '@troupe/policy-scripted',
    random: '@troupe/policy-scripted',
    'tfjs-causal-lm': '@troupe/policy-causal-lm',
  },
};

/** Removes a trailing version suffix `-vN` from a contribution id (`plan-path-v0` → `plan-path`). */
export function stripVersion(id: string): string {
  return id.replace(/-v\d+$/, '');
}

/**
 * The contribution name a package shorthand stands for: the last path segment without the kind prefix
 * (`@acme/troupe-role-mover`, `@acme/mover`, `troupe-role-mover` and `@troupe/role-mover` all give `mover`).
 */
export function contributionNameOf(kind: PluginKind, name: string): string {
  const last = name.slice(name.lastIndexOf('/') + 1);
  const prefix = `troupe-${kind}-`;
  if (last.startsWith(prefix)) return last.slice(prefix.length);
  if (name.startsWith('@troupe/') && last.startsWith(`${kind}-`)) return last.slice(kind.length + 1);
  return last;
}

/** Whether a name is a filesystem path rather than a package name. */
export function isPathLike(name: string): boolean {
  return name.startsWith('.') || isAbsolute(name) || name.startsWith('~');
}

/**
 * Package names tried for a shorthand, in order (Docusaurus rules):
 * - `sokoban` → `sokoban`, `@troupe/env-sokoban`, `troupe-env-sokoban`
 * - `@acme/sokoban` → `@acme/sokoban`, `@acme/troupe-env-sokoban`
 * - `@troupe/sokoban` → `@troupe/sokoban`, `@troupe/env-sokoban`
 * - a name that already carries the prefix (`troupe-env-x`, `@troupe/env-x`, `@acme/troupe-env-x`) → itself only.
 */
export function pluginCandidates(kind: PluginKind, name: string): string[] {
  const prefix = `troupe-${kind}-`;
  if (name.startsWith('@')) {
    const slash = name.indexOf('/');
    if (slash < 0) return [name];
    const scope = name.slice(0, slash);
    const rest = name.slice(slash + 1);
    if (rest.startsWith(prefix) || (scope === '@troupe' && rest.startsWith(`${kind}-`))) return [name];
    return scope === '@troupe' ? [name, `@troupe/${kind}-${rest}`] : [name, `${scope}/${prefix}${rest}`];
  }
  if (name.startsWith(prefix)) return [name];
  return [name, `@troupe/${kind}-${name}`, `${prefix}${name}`];
}

/**
 * The folders packages are looked up from, in order: the team spec's folder (when given), the current directory,
 * and the kernel's own location. Duplicates are removed.
 */
export function defaultBaseDirs(specDir?: string, cwd: string = process.cwd()): string[] {
  const dirs = [specDir, cwd, KERNEL_ROOT].filter((d): d is string => typeof d === 'string').map((d) => resolve(d));
  return [...new Set(dirs)];
}

/** A plugin package found on disk. */
export interface ResolvedPlugin {
  /** The package name that matched. */
  readonly packageName: string;
  /** Absolute path of the package folder (symlinks resolved). */
  readonly dir: string;
  /** Every candidate that was considered, in order. */
  readonly candidates: readonly string[];
}

/** Finds `<name>/package.json` from `baseDir` like `require.resolve` does, ignoring `exports` restrictions. */
export function findPackageJson(name: string, baseDir: string): string | undefined {
  const require = createRequire(join(baseDir, '__troupe_resolve__.js'));
  try {
    return require.resolve(`${name}/package.json`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED' && code !== 'MODULE_NOT_FOUND') return undefined;
  }
  for (const dir of require.resolve.paths(name) ?? []) {
    const file = join(dir, name, 'package.json');
    if (existsSync(file)) return file;
  }
  return undefined;
}

function hasTroupeField(packageJsonFile: string): boolean {
  try {
    return (JSON.parse(readFileSync(packageJsonFile, 'utf8')) as { troupe?: unknown }).troupe !== undefined;
  } catch {
    return false;
  }
}

/**
 * Resolves a plugin name (shorthand, package name, or a path to a package folder) to a package folder. A found
 * package without a `troupe` field is skipped (an unrelated npm package of the same name). A miss throws a
 * {@link PluginError} listing every candidate tried and every folder searched.
 */
export function resolvePlugin(
  kind: PluginKind,
  name: string,
  baseDirs: readonly string[] = defaultBaseDirs(),
): ResolvedPlugin {
  if (isPathLike(name)) {
    const dir = resolve(baseDirs[0] ?? process.cwd(), name);
    if (!existsSync(join(dir, 'package.json'))) {
      throw new PluginError(name, `no package.json in ${dir}`, {
        hint: 'pass the folder of a plugin package (relative to the team spec) or a package name',
      });
    }
    return { packageName: name, dir: realpathSync(dir), candidates: [dir] };
  }
  const candidates = pluginCandidates(kind, name);
  const withoutManifest: string[] = [];
  for (const candidate of candidates) {
    for (const base of baseDirs) {
      const file = findPackageJson(candidate, base);
      if (file === undefined) continue;
      if (!hasTroupeField(file)) {
        withoutManifest.push(`${candidate} (${dirname(file)})`);
        continue;
      }
      return { packageName: candidate, dir: realpathSync(dirname(file)), candidates };
    }
  }
  const lines = [
    `no ${kind} plugin named "${name}" is installed`,
    `  tried packages: ${candidates.join(', ')}`,
    `  searched from: ${baseDirs.join(', ')}`,
  ];
  if (withoutManifest.length)
    lines.push(`  found but not Troupe plugins (no \`troupe\` field): ${withoutManifest.join(', ')}`);
  throw new PluginError(name, lines.join('\n'), { hint: missingPluginHint(kind, name, candidates, baseDirs) });
}

/**
 * What to do about a plugin name that resolves to nothing: the closest installed contribution of that kind when the
 * name looks like a typo of it, and which package to install: the official provider, or for a plain name both the
 * official (`@troupe/env-x`) and the community (`troupe-env-x`) naming.
 */
function missingPluginHint(
  kind: PluginKind,
  name: string,
  candidates: readonly string[],
  baseDirs: readonly string[],
): string {
  const installed = new Set<string>();
  for (const plugin of discoverPlugins(baseDirs)) {
    for (const c of plugin.manifest?.contributes[KIND_TO_CONTRIBUTION[kind]] ?? []) installed.add(stripVersion(c.id));
  }
  const typo = didYouMean(stripVersion(name), installed);
  const provider = OFFICIAL_PROVIDERS[kind]?.[name];
  const official = candidates.find((c) => c.startsWith('@troupe/'));
  const community = candidates.find((c) => !c.startsWith('@troupe/') && c !== name);
  const install = provider
    ? `npm install ${provider}`
    : official && community
      ? `npm install ${official} (official) or ${community} (community)`
      : `npm install ${official ?? community ?? candidates[candidates.length - 1]!}`;
  return `${typo ? `${typo} ` : 'fix the name, '}or install it: ${install}`;
}

/** A plugin found by {@link discoverPlugins}. */
export interface DiscoveredPlugin {
  /** Package name. */
  readonly name: string;
  /** Package version. */
  readonly version: string;
  /** Absolute, symlink-resolved package folder. */
  readonly dir: string;
  /** The node_modules folder it was found in. */
  readonly foundIn: string;
  /** `official` for `@troupe/*` packages, `community` otherwise. */
  readonly origin: 'official' | 'community';
  /** True when the package lives in a workspace (its real folder is outside any node_modules). */
  readonly workspace: boolean;
  /** True when a package of the same name was found earlier (closer) and takes precedence. */
  readonly shadowed: boolean;
  /** The manifest, when it is valid. */
  readonly manifest?: PluginManifest;
  /** Why the plugin cannot be used (invalid manifest, incompatible kernel), when it cannot. */
  readonly problem?: PluginError;
}

/** Every node_modules folder visible from `baseDir` (nearest first). */
export function nodeModulesDirs(baseDir: string): string[] {
  const require = createRequire(join(resolve(baseDir), '__troupe_resolve__.js'));
  return (require.resolve.paths('x') ?? []).filter((d) => d.endsWith(`${sep}node_modules`) && existsSync(d));
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Lists every installed package with a `troupe` field, scanning the node_modules folders visible from each base
 * folder (nearest first), `@scope` folders included. Only package.json files are read; broken or incompatible
 * plugins are listed with their `problem` instead of throwing.
 */
export function discoverPlugins(
  baseDirs: readonly string[] = defaultBaseDirs(),
  options: { kernelVersion?: string } = {},
): DiscoveredPlugin[] {
  const out: DiscoveredPlugin[] = [];
  const seenDirs = new Set<string>();
  const seenNames = new Set<string>();
  const scannedModules = new Set<string>();
  for (const base of baseDirs) {
    for (const modules of nodeModulesDirs(base)) {
      if (scannedModules.has(modules)) continue;
      scannedModules.add(modules);
      const packageDirs: string[] = [];
      for (const entry of readdirSync(modules).sort()) {
        if (entry.startsWith('.')) continue;
        const path = join(modules, entry);
        if (entry.startsWith('@')) {
          if (!isDir(path)) continue;
          for (const inner of readdirSync(path).sort()) if (!inner.startsWith('.')) packageDirs.push(join(path, inner));
        } else {
          packageDirs.push(path);
        }
      }
      for (const pkgDir of packageDirs) {
        const file = join(pkgDir, 'package.json');
        let pkg: { name?: unknown; version?: unknown; troupe?: unknown };
        try {
          pkg = JSON.parse(readFileSync(file, 'utf8')) as typeof pkg;
        } catch {
          continue;
        }
        if (pkg.troupe === undefined) continue;
        let real: string;
        try {
          real = realpathSync(pkgDir);
        } catch {
          continue;
        }
        if (seenDirs.has(real)) continue;
        seenDirs.add(real);
        const name = typeof pkg.name === 'string' ? pkg.name : pkgDir;
        const version = typeof pkg.version === 'string' ? pkg.version : '0.0.0';
        let manifest: PluginManifest | undefined;
        let problem: PluginError | undefined;
        try {
          manifest = readPluginPackage(real, { checkCompatibility: false, compileSchemas: false }).manifest;
          checkCompatibility(manifest, name, join(real, 'package.json'), options.kernelVersion);
        } catch (error) {
          problem =
            error instanceof PluginError
              ? error
              : new PluginError(name, String(error), { file: join(real, 'package.json') });
        }
        out.push({
          name,
          version,
          dir: real,
          foundIn: modules,
          origin: name.startsWith('@troupe/') ? 'official' : 'community',
          workspace: !real.split(sep).includes('node_modules'),
          shadowed: seenNames.has(name),
          ...(manifest ? { manifest } : {}),
          ...(problem ? { problem } : {}),
        });
        seenNames.add(name);
      }
    }
  }
  return out;
}
