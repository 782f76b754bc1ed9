/**
 * The manifest stated once: a plugin's contribution classes state their ids, descriptions and config schemas, and
 * the `troupe.contributes` field of its package.json is DERIVED from them (`troupe manifest [DIR] --write`). The
 * manifest still exists because listings, discovery and config validation read it without running plugin code;
 * `troupe test` checks that it is the one the code states ({@link diffManifest}).
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import type { JsonSchema } from '../contracts/common.js';
import type { ContributionDeclaration, ContributionKind, PluginManifest } from '../contracts/manifest.js';
import { canonicalJson } from '../util/hash.js';
import { configSchemaFile } from './config-schema.js';
import { PluginError } from './errors.js';
import { PluginHost, type PluginHostOptions } from './loader.js';
import { CONTRIBUTION_KINDS, readPluginPackage } from './manifest.js';
import { KIND_NOUN } from './registry.js';

/** `troupe.contributes`, as written in package.json. */
export type Contributes = PluginManifest['contributes'];

/** The manifest a plugin's code states, and the schema files it needs that do not exist as stated. */
export interface DerivedManifest {
  /** The package name. */
  readonly plugin: string;
  /** Its package.json. */
  readonly packageJsonFile: string;
  /** `troupe.contributes` as package.json declares it now. */
  readonly declared: Contributes;
  /** `troupe.contributes` as the code states it. */
  readonly derived: Contributes;
  /**
   * Schema files to write: contributions whose schema is built in code get `schemas/<id>.config.json`; listed when
   * the file is missing or holds another schema.
   */
  readonly schemaFiles: readonly { readonly file: string; readonly schema: JsonSchema }[];
}

/** The POSIX `./`-relative path of `file` inside `root`, or undefined when it is outside. */
function packagePath(root: string, file: string): string | undefined {
  const rel = relative(root, file);
  if (rel.startsWith('..') || isAbsolute(rel)) return undefined;
  return `./${rel.split(sep).join('/')}`;
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Imports the plugin in `dir` (its declared contributions are ignored), creates its contributions and returns the
 * manifest they state: for each, in binding order, `{ id, configSchema, description }`. Throws {@link PluginError}.
 */
export async function deriveManifest(
  dir: string,
  options: Pick<PluginHostOptions, 'fromSource' | 'services'> = {},
): Promise<DerivedManifest> {
  const pkg = readPluginPackage(dir, { ignoreContributes: true, compileSchemas: false });
  const declared = (readJson(pkg.packageJsonFile) as { troupe: PluginManifest }).troupe.contributes;
  const host = new PluginHost({ baseDirs: [pkg.dir], ...options });
  const { file, contributions } = await host.inspect(pkg);
  const derived: Record<string, ContributionDeclaration[]> = {};
  const schemaFiles: { file: string; schema: JsonSchema }[] = [];
  for (const c of contributions) {
    const value = c.value as { description?: unknown; configSchema?: unknown };
    const noun = `${KIND_NOUN[c.kind]} "${c.id}"`;
    if (typeof value.description !== 'string' || value.description === '') {
      throw new PluginError(pkg.name, `its ${noun} has no description`, {
        file,
        hint: 'give the contribution class a one-line `description`',
      });
    }
    if (typeof value.configSchema !== 'object' || value.configSchema === null || Array.isArray(value.configSchema)) {
      throw new PluginError(pkg.name, `its ${noun} has no configSchema object`, {
        file,
        hint: "state the schema: `readonly configSchema = readConfigSchema(new URL('../schemas/x.config.json', import.meta.url))`",
      });
    }
    const schema = value.configSchema as JsonSchema;
    const source = configSchemaFile(schema);
    let path: string;
    if (source !== undefined) {
      const inside = packagePath(pkg.dir, source);
      if (inside === undefined) {
        throw new PluginError(
          pkg.name,
          `the config schema of its ${noun} is read from ${source}, outside the package`,
          {
            file,
            hint: 'copy the schema file into the package (e.g. schemas/) and read it from there',
          },
        );
      }
      path = inside;
    } else {
      // A schema built in code (or read without readConfigSchema): the file package.json names when it holds the
      // same schema, else schemas/<id>.config.json, written by --write.
      const named = (declared[c.kind] ?? []).find((d) => d.id === c.id)?.configSchema;
      const inside = named === undefined ? undefined : packagePath(pkg.dir, join(pkg.dir, named));
      const same = inside !== undefined && canonicalJson(readJson(join(pkg.dir, inside))) === canonicalJson(schema);
      path = same ? inside : `./schemas/${c.id}.config.json`;
      const target = join(pkg.dir, path);
      if (!same && canonicalJson(readJson(target)) !== canonicalJson(schema))
        schemaFiles.push({ file: target, schema });
    }
    (derived[c.kind] ??= []).push({ id: c.id, configSchema: path, description: value.description });
  }
  return {
    plugin: pkg.name,
    packageJsonFile: pkg.packageJsonFile,
    declared,
    derived: derived as Contributes,
    schemaFiles,
  };
}

/** Appends `- path: declared` / `+ path: derived` lines for every leaf where two JSON values differ. */
function diffValues(a: unknown, b: unknown, path: string, out: string[]): void {
  if (canonicalJson(a) === canonicalJson(b)) return;
  const bothObjects =
    typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && Array.isArray(a) === Array.isArray(b);
  if (!bothObjects) {
    if (a !== undefined) out.push(`- ${path}: ${JSON.stringify(a)}`);
    if (b !== undefined) out.push(`+ ${path}: ${JSON.stringify(b)}`);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) diffValues(a[i], b[i], `${path}[${i}]`, out);
    return;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  for (const key of [...new Set([...Object.keys(ao), ...Object.keys(bo)])])
    diffValues(ao[key], bo[key], `${path}.${key}`, out);
}

/**
 * Where package.json's `troupe.contributes` disagrees with the code, as diff lines (`-` package.json, `+` the code),
 * plus a line per schema file that must be written; empty when they agree.
 */
export function diffManifest(manifest: DerivedManifest): string[] {
  const out: string[] = [];
  for (const kind of CONTRIBUTION_KINDS) {
    diffValues(
      manifest.declared[kind as ContributionKind] ?? [],
      manifest.derived[kind as ContributionKind] ?? [],
      `troupe.contributes.${kind}`,
      out,
    );
  }
  for (const { file } of manifest.schemaFiles)
    out.push(
      `+ ${packagePath(dirname(manifest.packageJsonFile), file) ?? file}: the config schema the code builds (missing or different)`,
    );
  return out;
}

/** The message of a manifest that disagrees with the code: the diff and how to regenerate it. */
export function manifestMismatchMessage(
  manifest: DerivedManifest,
  diff: readonly string[] = diffManifest(manifest),
): string {
  return (
    `package.json \`troupe.contributes\` does not match what the code states (- package.json, + code):\n` +
    `${diff.map((l) => `  ${l}`).join('\n')}\n` +
    `regenerate it: troupe manifest ${dirname(manifest.packageJsonFile)} --write`
  );
}

/** Writes the derived `troupe.contributes` into package.json (other keys keep their order) and the schema files. */
export function writeManifest(manifest: DerivedManifest): void {
  for (const { file, schema } of manifest.schemaFiles) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify(schema, null, 2)}\n`);
  }
  const pkg = JSON.parse(readFileSync(manifest.packageJsonFile, 'utf8')) as { troupe: Record<string, unknown> };
  pkg.troupe.contributes = manifest.derived;
  writeFileSync(manifest.packageJsonFile, `${JSON.stringify(pkg, null, 2)}\n`);
}
