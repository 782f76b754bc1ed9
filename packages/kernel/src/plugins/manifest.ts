/**
 * Reading and validating plugin manifests (the `troupe` field of a plugin's package.json). Nothing here imports
 * plugin code: `troupe plugins ls` and `troupe validate` use these functions to inspect plugins without running them.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import semver from 'semver';
import type { ValidateFunction } from 'ajv';
import type { JsonSchema } from '../contracts/common.js';
import { PLUGIN_API_VERSION, type ContributionKind, type PluginManifest } from '../contracts/manifest.js';
import { compileSchema, createAjv, formatPath, schemaIssues } from './ajv.js';
import { PluginError } from './errors.js';
import { KERNEL_ROOT, kernelVersion } from './kernel-info.js';

/** The contribution kinds in canonical order. */
export const CONTRIBUTION_KINDS: readonly ContributionKind[] = ['environments', 'roles', 'rewards', 'policies'];

/** The JSON schema of the `troupe` field, as shipped in `schemas/plugin-manifest.schema.json`. */
export const PLUGIN_MANIFEST_SCHEMA: JsonSchema = JSON.parse(
  readFileSync(join(KERNEL_ROOT, 'schemas', 'plugin-manifest.schema.json'), 'utf8'),
) as JsonSchema;

let manifestValidator: ValidateFunction | undefined;
function validator(): ValidateFunction {
  // Compiled once, lazily, by a private strict instance without defaults (a manifest is never modified).
  manifestValidator ??= createAjv('draft-07', { useDefaults: false }).compile(PLUGIN_MANIFEST_SCHEMA);
  return manifestValidator;
}

/** A plugin package whose manifest has been read and checked (its code has NOT been imported). */
export interface PluginPackage {
  /** The package name. */
  readonly name: string;
  /** The package version. */
  readonly version: string;
  /** Absolute path of the package folder. */
  readonly dir: string;
  /** Absolute path of its package.json. */
  readonly packageJsonFile: string;
  /** The validated manifest. */
  readonly manifest: PluginManifest;
  /** Config schemas read from the manifest's `configSchema` files, keyed by `kind:id`. */
  readonly configSchemas: ReadonlyMap<
    string,
    { readonly file: string; readonly schema: JsonSchema; readonly validate: ValidateFunction }
  >;
}

/** Key of a contribution in maps keyed by kind and id. */
export function contributionKey(kind: ContributionKind, id: string): string {
  return `${kind}:${id}`;
}

/**
 * Validates a raw `troupe` field against the manifest schema. Throws a {@link PluginError} listing every problem
 * with its key path (e.g. `troupe.contributes.environments[0].id: must match pattern ...`).
 */
export function validateManifest(raw: unknown, plugin: string, file: string): PluginManifest {
  if (raw === undefined) {
    throw new PluginError(plugin, 'package.json has no `troupe` field, so it is not a Troupe plugin', {
      file,
      hint: 'add a `troupe` manifest ({ apiVersion, kernel, module, contributes }) or check the package name',
    });
  }
  const validate = validator();
  if (!validate(raw)) {
    const lines = schemaIssues(validate.errors).map(
      (i) => `  troupe${i.path.length ? '.' + formatPath(i.path) : ''}: ${i.message}${i.hint ? ` (${i.hint})` : ''}`,
    );
    throw new PluginError(plugin, `invalid \`troupe\` manifest:\n${lines.join('\n')}`, {
      file,
      hint: 'fix the manifest in package.json; see schemas/plugin-manifest.schema.json in @troupe/kernel',
    });
  }
  return raw as PluginManifest;
}

/**
 * Checks the manifest's `apiVersion` against {@link PLUGIN_API_VERSION} and the running kernel's version against
 * the manifest's `kernel` range. Throws a {@link PluginError} saying which versions are involved and what to do.
 */
export function checkCompatibility(
  manifest: PluginManifest,
  plugin: string,
  file: string,
  running: string = kernelVersion(),
): void {
  if (manifest.apiVersion !== PLUGIN_API_VERSION) {
    const newer = manifest.apiVersion > PLUGIN_API_VERSION;
    throw new PluginError(
      plugin,
      `written for plugin API version ${manifest.apiVersion}, but @troupe/kernel ${running} implements version ${PLUGIN_API_VERSION}`,
      {
        file,
        hint: newer
          ? `upgrade @troupe/kernel to a version that implements plugin API ${manifest.apiVersion}, or install an older version of ${plugin}`
          : `upgrade ${plugin} to a version written for plugin API ${PLUGIN_API_VERSION}, or downgrade @troupe/kernel`,
      },
    );
  }
  const range = semver.validRange(manifest.kernel);
  if (range === null) {
    throw new PluginError(plugin, `\`troupe.kernel\` is not a valid semver range: ${JSON.stringify(manifest.kernel)}`, {
      file,
      hint: 'write a range such as "^0.1.0"',
    });
  }
  if (!semver.satisfies(running, range, { includePrerelease: true })) {
    let hint: string;
    if (semver.gtr(running, range)) {
      hint = `upgrade ${plugin} to a version built for @troupe/kernel ${running}, or downgrade @troupe/kernel to a version in ${manifest.kernel} (npm install @troupe/kernel@"${manifest.kernel}")`;
    } else {
      hint = `upgrade @troupe/kernel to a version in ${manifest.kernel} (npm install @troupe/kernel@"${manifest.kernel}"), or install a version of ${plugin} built for ${running}`;
    }
    throw new PluginError(
      plugin,
      `requires @troupe/kernel ${manifest.kernel}, but @troupe/kernel ${running} is running`,
      { file, hint },
    );
  }
}

/** Options of {@link readPluginPackage}. */
export interface ReadPluginOptions {
  /** Check apiVersion and the kernel range (default true). `troupe plugins ls` turns it off to list everything. */
  readonly checkCompatibility?: boolean;
  /** Pretend this kernel version is running (tests). */
  readonly kernelVersion?: string;
  /**
   * Compile the config schemas (default true). Listings turn it off: the files are still read and parsed, but
   * compiling is what costs time, and `validate` is then a function that always throws.
   */
  readonly compileSchemas?: boolean;
  /**
   * Read the manifest as if it declared no contributions (default false): `troupe manifest` derives them from the
   * code, so a stale `contributes` (an id or a schema file that is gone) must not stop it.
   */
  readonly ignoreContributes?: boolean;
}

const notCompiled = Object.assign(
  (): boolean => {
    throw new Error('config schema was read with compileSchemas: false');
  },
  { errors: null },
) as unknown as ValidateFunction;

/**
 * Reads a plugin package's package.json, validates its `troupe` manifest, checks compatibility, and reads and
 * compiles every declared config schema file. Imports no plugin code. Throws {@link PluginError}.
 */
export function readPluginPackage(dir: string, options: ReadPluginOptions = {}): PluginPackage {
  const packageJsonFile = join(resolve(dir), 'package.json');
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(readFileSync(packageJsonFile, 'utf8')) as Record<string, unknown>;
  } catch (cause) {
    const missing = (cause as NodeJS.ErrnoException).code === 'ENOENT';
    throw new PluginError(
      dir,
      missing ? 'no package.json in this folder' : `package.json is not valid JSON: ${(cause as Error).message}`,
      {
        file: packageJsonFile,
        hint: missing ? 'pass the folder of a plugin package, or its package name' : 'fix the JSON syntax',
        cause,
      },
    );
  }
  const name = typeof pkg.name === 'string' ? pkg.name : dir;
  const version = typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  const declared = validateManifest(pkg.troupe, name, packageJsonFile);
  const manifest: PluginManifest = options.ignoreContributes ? { ...declared, contributes: {} } : declared;
  if (options.checkCompatibility !== false) checkCompatibility(manifest, name, packageJsonFile, options.kernelVersion);
  const root = resolve(dir);
  const configSchemas = new Map<string, { file: string; schema: JsonSchema; validate: ValidateFunction }>();
  const seen = new Map<string, string>();
  for (const kind of CONTRIBUTION_KINDS) {
    for (const decl of manifest.contributes[kind] ?? []) {
      const key = contributionKey(kind, decl.id);
      if (seen.has(key)) {
        throw new PluginError(name, `declares ${kind} id "${decl.id}" twice`, {
          file: packageJsonFile,
          hint: 'remove the duplicate declaration',
        });
      }
      seen.set(key, decl.id);
      if (decl.configSchema === undefined) continue;
      const file = resolvePackageFile(
        root,
        decl.configSchema,
        name,
        packageJsonFile,
        `config schema of ${kind} "${decl.id}"`,
      );
      let schema: JsonSchema;
      try {
        schema = JSON.parse(readFileSync(file, 'utf8')) as JsonSchema;
      } catch (cause) {
        const missing = (cause as NodeJS.ErrnoException).code === 'ENOENT';
        throw new PluginError(
          name,
          missing
            ? `config schema file of ${kind} "${decl.id}" does not exist`
            : `config schema of ${kind} "${decl.id}" is not valid JSON: ${(cause as Error).message}`,
          {
            file,
            hint: missing
              ? `create ${decl.configSchema} or fix \`configSchema\` in the manifest (paths are relative to the package root)`
              : 'fix the JSON syntax',
            cause,
          },
        );
      }
      let validate: ValidateFunction = notCompiled;
      if (options.compileSchemas !== false) {
        try {
          validate = compileSchema(schema);
        } catch (cause) {
          throw new PluginError(
            name,
            `config schema of ${kind} "${decl.id}" is not a valid JSON schema: ${(cause as Error).message}`,
            {
              file,
              hint: 'fix the schema (draft-07, or draft 2020-12 with "$schema" set)',
              cause,
            },
          );
        }
      }
      configSchemas.set(key, { file, schema, validate });
    }
  }
  return { name, version, dir: root, packageJsonFile, manifest, configSchemas };
}

/** Resolves a manifest path inside the package, refusing paths that leave it. */
export function resolvePackageFile(
  root: string,
  path: string,
  plugin: string,
  manifestFile: string,
  what: string,
): string {
  const file = resolve(root, path);
  const rel = relative(root, file);
  if (rel.startsWith('..') || isAbsolute(rel)) {
    throw new PluginError(plugin, `${what} points outside the package: ${path}`, {
      file: manifestFile,
      hint: 'use a path relative to the package root, such as "./schemas/config.json"',
    });
  }
  return file;
}
