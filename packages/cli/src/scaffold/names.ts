/**
 * Names of scaffolded packages: validation of the NAME a user types, the package name derived from it, the
 * contribution id, and the shorthand a team spec uses (the inverse of the kernel's shorthand resolution).
 */
import { UsageError } from '../errors.js';

/** What `troupe new` can create. */
export type TemplateKind = 'env' | 'role' | 'reward' | 'team';

/** Every template kind, in the order `troupe new --help` lists them. */
export const TEMPLATE_KINDS: readonly TemplateKind[] = ['env', 'role', 'reward', 'team'];

/** The manifest `contributes` key of each plugin kind. */
export const CONTRIBUTES_KEY = { env: 'environments', role: 'roles', reward: 'rewards' } as const;

/** Plugin kinds (every template kind but `team`). */
export type PluginTemplateKind = keyof typeof CONTRIBUTES_KEY;

const NAME = /^[a-z0-9][a-z0-9-]*$/;
const PACKAGE_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
const SCOPE = /^@?[a-z0-9][a-z0-9._~-]*$/;

/**
 * Checks a NAME typed for `troupe new KIND NAME` and returns it. A plugin name becomes the contribution id
 * `NAME-v0` and the package name `troupe-KIND-NAME`, so it must be lowercase letters, digits and dashes, must not end
 * in a version suffix, and must not repeat the `troupe-KIND-` prefix. Throws a {@link UsageError} saying what to type.
 */
export function validateName(kind: TemplateKind, name: string): string {
  const what = kind === 'team' ? 'team name' : `${kind} name`;
  if (name.length === 0) throw new UsageError(`the ${what} is empty`);
  if (name.length > 60) throw new UsageError(`the ${what} "${name}" is longer than 60 characters`);
  if (!NAME.test(name)) {
    const suggestion = name
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '');
    throw new UsageError(
      `the ${what} "${name}" must be lowercase letters, digits and dashes, starting with a letter or digit` +
        (suggestion && NAME.test(suggestion) ? ` (e.g. "${suggestion}")` : ''),
    );
  }
  if (name.endsWith('-')) throw new UsageError(`the ${what} "${name}" must not end with a dash`);
  if (kind === 'team') return name;
  if (/-v\d+$/.test(name)) {
    throw new UsageError(
      `the ${what} "${name}" ends with a version suffix; pass "${name.replace(/-v\d+$/, '')}" (its id becomes "${name.replace(/-v\d+$/, '')}-v0")`,
    );
  }
  for (const prefix of [`troupe-${kind}-`, 'troupe-', `${kind}-`]) {
    if (name.startsWith(prefix) && name.length > prefix.length) {
      const bare = name.slice(prefix.length);
      throw new UsageError(
        `the ${what} "${name}" repeats the prefix "${prefix}"; pass "${bare}" (the package becomes ${defaultPackageName(kind, bare)})`,
      );
    }
  }
  return name;
}

/** Normalises a `--scope` value (`acme` or `@acme`) to `@acme`, or throws a {@link UsageError}. */
export function normalizeScope(scope: string): string {
  if (!SCOPE.test(scope)) throw new UsageError(`--scope "${scope}" is not an npm scope (e.g. @acme)`);
  return scope.startsWith('@') ? scope : `@${scope}`;
}

/** Checks a `--package-name` value, or throws a {@link UsageError}. */
export function validatePackageName(name: string): string {
  if (name.length > 214 || !PACKAGE_NAME.test(name)) {
    throw new UsageError(
      `--package-name "${name}" is not a valid npm package name (lowercase, e.g. troupe-env-maze or @acme/troupe-env-maze)`,
    );
  }
  return name;
}

/**
 * The package name of a new plugin: `troupe-env-NAME`, `@scope/troupe-env-NAME` with a scope, and `@troupe/env-NAME`
 * for the official scope (the names the kernel's shorthand resolution tries). A team is a private project named NAME.
 */
export function defaultPackageName(kind: TemplateKind, name: string, scope?: string): string {
  if (kind === 'team') return scope ? `${scope}/${name}` : name;
  if (scope === '@troupe') return `@troupe/${kind}-${name}`;
  return scope ? `${scope}/troupe-${kind}-${name}` : `troupe-${kind}-${name}`;
}

/**
 * The shortest name a team spec can use for a plugin package, found by inverting the kernel's shorthand rules:
 * `troupe-env-x` and `@troupe/env-x` → `x`, `@acme/troupe-env-x` → `@acme/x`; any other package name is written
 * in full.
 */
export function shorthandOf(kind: PluginTemplateKind, packageName: string): string {
  const prefix = `troupe-${kind}-`;
  if (packageName.startsWith(prefix)) return packageName.slice(prefix.length);
  if (packageName.startsWith(`@troupe/${kind}-`)) return packageName.slice(`@troupe/${kind}-`.length);
  const m = /^(@[^/]+)\/(.*)$/.exec(packageName);
  if (m && m[2]!.startsWith(prefix)) return `${m[1]}/${m[2]!.slice(prefix.length)}`;
  return packageName;
}

/** The folder name a package is created in by default: its name without the scope. */
export function defaultDirName(packageName: string): string {
  return packageName.replace(/^@[^/]+\//, '');
}
