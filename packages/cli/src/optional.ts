/**
 * The packages of the model commands. `@troupe/cli` installs only what playing, validating, scaffolding and testing
 * plugins need; the model code (tfjs, tokenizers, transformers) comes with `@troupe/lm`, `@troupe/trainer`,
 * `@troupe/experiment` and `@troupe/onnx`, which are optional peer dependencies: a command that needs one imports it
 * on first use, and a missing one is a {@link CliError} saying what to install.
 */
import { createRequire } from 'node:module';
import { CliError } from './errors.js';

/** The running CLI's version: its optional packages are released with the same version. */
const VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

/** The optional packages, with what each one brings. */
export const OPTIONAL_PACKAGES = Object.freeze({
  '@troupe/lm': 'the causal LM: tfjs, its backends and the tokenizers',
  '@troupe/trainer': 'the AT-GRPO trainer; it brings @troupe/lm',
  '@troupe/experiment': 'the paper-table runner; it brings @troupe/trainer',
  '@troupe/onnx': 'checkpoints run in ONNX Runtime on the CPU; it brings @troupe/lm',
} as const);

/** An optional package's name. */
export type OptionalPackage = keyof typeof OPTIONAL_PACKAGES;

/** Whether `err` says that `name` itself (not one of its own dependencies) cannot be found. */
export function isMissingPackage(err: unknown, name: string): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return code === 'ERR_MODULE_NOT_FOUND' && typeof message === 'string' && message.includes(`'${name}'`);
}

/**
 * Imports an optional package for `command` (`load` is the `import()` itself, so the module keeps its type). When
 * the package is not installed, throws a {@link CliError} naming the command, the package and the install command.
 */
export async function importOptional<T>(name: OptionalPackage, command: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (!isMissingPackage(err, name)) throw err;
    throw new CliError(
      `${command} needs ${name} (${OPTIONAL_PACKAGES[name]}), which is not installed; ` +
        `install it next to @troupe/cli: npm install ${name}@^${VERSION}`,
    );
  }
}
