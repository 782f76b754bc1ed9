import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { defaultBaseDirs, PluginError, readPluginPackage, resolvePlugin, type PluginKind } from '@troupe/kernel';

/**
 * Imports the main module of an installed plugin package (its exported functions, beside the container module the
 * plugin host loads), found the way the host finds plugins: `name` may be a shorthand (`math` → `@troupe/env-math`).
 * A command that uses a plugin's own API (`troupe verify math`) loads it so, never statically: the plugin may not be
 * installed. Throws a {@link PluginError} naming the package to install, or what its module lacks.
 */
export async function importPluginApi<T>(
  kind: PluginKind,
  name: string,
  needs: readonly (keyof T & string)[],
  purpose: string,
): Promise<T> {
  const { dir, packageName } = resolvePlugin(kind, name, defaultBaseDirs());
  const { packageJsonFile, name: declared } = readPluginPackage(dir, { compileSchemas: false });
  let file: string;
  try {
    // the package's own "exports" (under --conditions=troupe:source, its TypeScript entry)
    file = createRequire(packageJsonFile).resolve(declared);
  } catch (cause) {
    throw new PluginError(packageName, `its main module cannot be resolved: ${(cause as Error).message}`, {
      file: join(dir, 'package.json'),
      hint: `reinstall ${declared}`,
    });
  }
  const api = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const missing = needs.filter((key) => typeof api[key] !== 'function');
  if (missing.length) {
    throw new PluginError(declared, `its main module does not export ${missing.join(', ')}, which ${purpose} needs`, {
      file,
      hint: `install a version of ${declared} that provides them`,
    });
  }
  return api as T;
}
