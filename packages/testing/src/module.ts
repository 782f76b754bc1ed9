/**
 * The module conformance suite: a plugin package's `troupe` manifest is the one its code states (`troupe manifest`
 * derives it), its module binds exactly what the manifest declares, and every bound contribution's config schema is
 * the schema file the manifest names.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ContributionKind, PluginManifest } from '@troupe/kernel';
import {
  CONTRIBUTION_KINDS,
  PluginHost,
  canonicalJson,
  deriveManifest,
  diffManifest,
  manifestMismatchMessage,
  readPluginPackage,
} from '@troupe/kernel';
import type { ConformanceCheck, ConformanceFailure } from './core.js';
import { check, describeError, guardedChecks, registerChecks, runChecks } from './core.js';

/** Options of the module suite. */
export interface ModuleConformanceOptions {
  /** Import `sourceModule` rather than the built `module` (default: the kernel's detection of `troupe:source`). */
  readonly fromSource?: boolean;
}

function packageName(pkgDir: string): string {
  try {
    const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { name?: unknown };
    return typeof pkg.name === 'string' ? pkg.name : pkgDir;
  } catch {
    return pkgDir;
  }
}

/** The checks of the module suite for the plugin package in `pkgDir`. */
export function moduleChecks(pkgDir: string, options: ModuleConformanceOptions = {}): ConformanceCheck[] {
  const dir = resolve(pkgDir);
  const suite = `plugin module ${packageName(dir)} conformance`;
  const hostOptions = options.fromSource === undefined ? {} : { fromSource: options.fromSource };
  return [
    check(suite, 'the manifest is valid (schema, API version, kernel range, config schema files)', (fail) => {
      let manifest: PluginManifest;
      try {
        manifest = readPluginPackage(dir).manifest;
      } catch (err) {
        fail(describeError(err));
        return;
      }
      const declared = CONTRIBUTION_KINDS.flatMap((k) => manifest.contributes[k] ?? []);
      if (declared.length === 0) fail('the manifest declares no contribution');
      for (const d of declared) {
        if (!d.configSchema) fail(`contribution "${d.id}" declares no configSchema file`);
        if (!d.description) fail(`contribution "${d.id}" has no description`);
      }
    }),
    check(suite, 'the manifest is the one the code states (troupe manifest)', async (fail) => {
      let derived;
      try {
        derived = await deriveManifest(dir, hostOptions);
      } catch (err) {
        fail(describeError(err));
        return;
      }
      const diff = diffManifest(derived);
      if (diff.length > 0) fail(manifestMismatchMessage(derived, diff));
    }),
    check(
      suite,
      'the module binds exactly the declared contributions, with the declared config schemas',
      async (fail) => {
        const host = new PluginHost(hostOptions);
        let loaded;
        try {
          loaded = await host.load(dir);
        } catch (err) {
          fail(describeError(err));
          return;
        }
        const pkg = loaded.package!;
        for (const { kind, id } of loaded.contributions) {
          const entry = host.registry.get(kind as ContributionKind, id);
          const fromFile = pkg.configSchemas.get(`${kind}:${id}`);
          const bound = (entry.contribution as { configSchema?: unknown }).configSchema;
          if (fromFile && canonicalJson(bound) !== canonicalJson(fromFile.schema)) {
            fail(
              `${kind} "${id}": its configSchema differs from ${fromFile.file} (load the file in the contribution so there is one source of truth)`,
            );
          }
          const description = (entry.contribution as { description?: unknown }).description;
          if (typeof description !== 'string' || description.length === 0)
            fail(`${kind} "${id}": the contribution has no description`);
        }
      },
    ),
  ];
}

/** Registers the module suite as mocha tests. */
export function moduleConformance(pkgDir: string, options: ModuleConformanceOptions = {}): void {
  const suite = `plugin module ${packageName(resolve(pkgDir))} conformance`;
  registerChecks(suite, () => guardedChecks(suite, () => moduleChecks(pkgDir, options)));
}

/** Runs the module suite and returns every failure. */
export async function checkModuleConformance(
  pkgDir: string,
  options: ModuleConformanceOptions = {},
): Promise<ConformanceFailure[]> {
  const suite = `plugin module ${packageName(resolve(pkgDir))} conformance`;
  return runChecks(guardedChecks(suite, () => moduleChecks(pkgDir, options)));
}
