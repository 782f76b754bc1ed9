import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Root folder of the `@troupe/kernel` package (the folder holding its package.json). Computed from this file's
 * location, which is `<root>/src/plugins/` when running from source and `<root>/dist/plugins/` when built.
 */
export const KERNEL_ROOT: string = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

let cachedVersion: string | undefined;

/** The version of the running `@troupe/kernel`, read from its package.json (works from src and dist). */
export function kernelVersion(): string {
  if (cachedVersion === undefined) {
    const pkg = JSON.parse(readFileSync(join(KERNEL_ROOT, 'package.json'), 'utf8')) as { version?: unknown };
    if (typeof pkg.version !== 'string')
      throw new Error(`@troupe/kernel: no version in ${join(KERNEL_ROOT, 'package.json')}`);
    cachedVersion = pkg.version;
  }
  return cachedVersion;
}
